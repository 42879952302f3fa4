//! What people see: progress on stderr, tables and the balance sheet on stdout, warnings that
//! say what to do. Renderers work from records only, so archived runs re-render unchanged.
//!
//! - [`format`]: numbers with units (`14.1 GB/s`, `92 ns`).
//! - aligned text tables, charts and the breakdowns by group are in `crate::present`, shared
//!   with the reports and the kinds; a kind's own tables come from the registry.
//! - [`show`]: a record as tables (`perflab show`); the run list; the target list. (`report`
//!   at the top level writes HTML and Markdown.)
//! - [`levels`]: the load-level table of a `--load-levels` run (SPECpower's method).
//! - [`resources`]: the machine over each step (the sampler's summary) and what limited it.
//! - [`compare`]: a comparison of runs: differences, ratios, verdicts.
//! - [`balance`]: the one-line-per-capability balance sheet of a suite.
//! - [`progress`]: the live progress display (an [`crate::run::Observer`]).
//! - [`sysinfo`]: the machine's disclosure.
//! - [`style`]: colour, only on terminals and never with NO_COLOR.
//! - [`output`]: stdout, and the new files `-o` names (never one that exists).

pub mod balance;
pub mod compare;
pub mod format;
pub mod levels;
pub mod output;
pub mod progress;
pub mod resources;
pub mod show;
pub mod style;
pub mod sysinfo;

pub use progress::Progress;
