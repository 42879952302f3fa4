//! pgbench's scripts (`-f FILE[@W]`, `-b NAME[@W]`, `-D`), in the language of PostgreSQL
//! 15's pgbench, run on any of perflab's SQL engines: the meta-commands are perflab's, the
//! SQL is the server's. The same values, the same random draws under `--random-seed`, and
//! the same errors as pgbench.
//!
//! Reading a script:
//! - [`scan`]: a script's text cut into SQL and backslash commands (quotes, comments,
//!   `\;`, continuation lines).
//! - [`parse`]: the commands checked and linked as pgbench checks them (`\if` blocks,
//!   `\gset`, `\sleep` units), variables in SQL found.
//! - [`builtin`]: tpcb-like, simple-update and select-only, as scripts.
//! - [`setup`]: `--script`, `--builtin`, `--define` and `--max-tries` into a run's scripts.
//!
//! Running it:
//! - [`client`]: the interpreter, one [`client::ScriptClient`] per user (an OLTP
//!   `Client`); [`vars`]: its variables; [`shell`] runs `\shell` and `\setshell`.
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

pub mod builtin;
pub mod cfmt;
pub mod client;
pub mod cnum;
pub mod eval;
pub mod expr;
pub mod functions;
pub mod hash;
pub mod lex;
pub mod parse;
pub mod prng;
pub mod random;
pub mod scan;
pub mod setup;
pub mod shell;
pub mod value;
pub mod vars;

/// End to end against pgbench 15's own outputs, hostile inputs, and a property.
#[cfg(test)]
mod tests;
