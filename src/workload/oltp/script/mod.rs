//! pgbench's script language, as pgbench 15 reads and runs it: so a `-f` script gives the
//! same values, the same random draws under `--random-seed`, and the same errors.
//!
//! The expression language (`\set`, `\if`):
//! - [`expr`]: [`expr::Expr`]: an expression parsed once (pgbench's grammar and precedence,
//!   function names resolved, errors with pgbench's message and caret column) and evaluated
//!   by every client, with bounds on nesting and length and no recursion anywhere; [`lex`]:
//!   its tokens.
//! - [`eval`]: the evaluation: a stack machine over the parser's postfix code, the
//!   [`eval::Env`] a client provides (variables, its generator, `debug()`), the run-time
//!   errors ([`eval::EvalError`], a message). `expr` re-exports both.
//! - [`functions`]: what each operator and function computes: coercions, integer
//!   overflow checks, NULL rules; [`hash`]: murmur2 and FNV-1a.
//! - [`value`]: [`value::Value`] (NULL, boolean, integer, double), its text for `:name`
//!   and for `debug()`, and the lazy typing of `-D` and `\gset` text.
//! - [`cfmt`] and [`cnum`]: numbers written (`%.15g`, `%f`) and read (`strtoll`, `strtod`)
//!   as pgbench's C does.
//!
//! Randomness:
//! - [`prng`]: PostgreSQL's xoroshiro128** generator and pgbench's seeding of every
//!   client's and thread's generator from `--random-seed` ([`prng::Seeds`]: a run builds
//!   one, gives client `i` `clients[i]` as its generator, presets `:default_seed` from it,
//!   and lets each thread choose scripts with `threads[t].choose`).
//! - [`random`]: the uniform, exponential, Gaussian, Zipfian and Poisson draws and
//!   `permute`.

pub mod cfmt;
pub mod cnum;
pub mod eval;
pub mod expr;
pub mod functions;
pub mod hash;
pub mod lex;
pub mod prng;
pub mod random;
pub mod value;

/// End to end against pgbench 15's own outputs, hostile inputs, and a property.
#[cfg(test)]
mod tests;
