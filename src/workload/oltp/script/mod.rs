//! pgbench's script language, as pgbench 15 reads and runs it: so a `-f` script gives the
//! same values, the same random draws under `--random-seed`, and the same errors.
//!
//! The expression language (`\set`, `\if`):
//! - [`expr`]: [`expr::Expr`]: an expression parsed once (pgbench's grammar and precedence,
//!   function names resolved, errors with pgbench's message and caret column) and evaluated
//!   by every client; [`lex`]: its tokens.
//! - [`eval`]: the evaluation: a stack machine over the parser's postfix code, the
//!   [`eval::Env`] a client provides (variables, its generator, `debug()`), the run-time
//!   errors.
//! - [`functions`]: what each operator and function computes: coercions, integer
//!   overflow checks, NULL rules; [`hash`]: murmur2 and FNV-1a.
//! - [`value`]: [`value::Value`] (NULL, boolean, integer, double), its text for `:name`
//!   and for `debug()`, and the lazy typing of `-D` and `\gset` text.
//! - [`cfmt`] and [`cnum`]: numbers written (`%.15g`, `%f`) and read (`strtoll`, `strtod`)
//!   as pgbench's C does.
//!
//! Randomness:
//! - [`prng`]: PostgreSQL's xoroshiro128** generator and pgbench's seeding of every
//!   client's and thread's generator from `--random-seed` ([`prng::Seeds`]).
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

#[cfg(test)]
mod tests;
