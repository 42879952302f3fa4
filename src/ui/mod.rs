//! What people see on a terminal: progress on stderr, tables and the balance sheet on stdout,
//! warnings that say what to do. Renderers work from records only, so archived runs re-render
//! unchanged.
//!
//! - a record's tables and lines (the steps table, findings, resources, load levels, a
//!   comparison's rows, the disclosure) are built in `crate::view`, shared with the reports;
//!   aligned text tables, charts and the breakdowns by group are in `crate::present`; a
//!   kind's own tables come from the registry. This module lays them out for a terminal.
//! - [`show`]: a record as text (`perflab show`); the run list; the target list. (`report`
//!   at the top level writes HTML and Markdown.)
//! - [`compare`]: a comparison of runs: differences, ratios, verdicts in colour.
//! - [`balance`]: the one-line-per-capability balance sheet of a suite.
//! - [`progress`]: the live progress display (an [`crate::run::Observer`]).
//! - [`sysinfo`]: the machine's disclosure.
//! - [`style`]: colour, only on terminals and never with NO_COLOR.
//! - [`output`]: stdout, and the new files `-o` names (never one that exists).

pub mod balance;
pub mod compare;
pub mod output;
pub mod progress;
pub mod show;
pub mod style;
pub mod sysinfo;

pub use progress::Progress;
