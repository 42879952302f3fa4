//! pgbench's scripts (`-f FILE[@W]`, `-b NAME[@W]`, `-D`), in the language of PostgreSQL
//! 15's pgbench, run on any of perflab's SQL engines: the meta-commands are perflab's, the
//! SQL is the server's.
//!
//! - [`scan`]: a script's text cut into SQL and backslash commands (quotes, comments,
//!   `\;`, continuation lines).
//! - [`parse`]: the commands checked and linked as pgbench checks them (`\if` blocks,
//!   `\gset`, `\sleep` units), variables in SQL found.
//! - [`expr`], [`value`], [`prng`]: `\set`'s expression language, its values, and
//!   pgbench's random generator.
//! - [`vars`]: a client's variables.
//! - [`builtin`]: tpcb-like, simple-update and select-only, as scripts.
//! - [`client`]: the interpreter, one [`client::ScriptClient`] per user; [`shell`] runs
//!   `\shell` and `\setshell`.

pub mod builtin;
pub mod client;
pub mod expr;
pub mod parse;
pub mod prng;
pub mod scan;
pub mod setup;
pub mod shell;
pub mod value;
pub mod vars;
