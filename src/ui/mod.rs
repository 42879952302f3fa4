//! What people see: progress on stderr, tables and the balance sheet on stdout, warnings that
//! say what to do. Renderers work from records only, so archived runs re-render unchanged.
//!
//! - [`format`]: numbers with units (`14.1 GB/s`, `92 ns`).
//! - [`table`]: aligned text tables.
//! - [`show`]: a record as tables (`perflab show`); the run list; the target list. (`report`
//!   at the top level writes HTML and Markdown.)
//! - [`io_report`]: a storage record's figures per direction, block size, file and device.
//! - [`jobs_report`]: a jobs record's copies (CPUs, elapsed, CPU time) and its findings.
//! - [`levels`]: the load-level table of a `--load-levels` run (SPECpower's method).
//! - [`mail_report`]: mail's quality of service by step, and the users supported.
//! - [`resources`]: the machine over each step (the sampler's summary) and what limited it.
//! - [`compare`]: a comparison of runs: differences, ratios, verdicts.
//! - [`balance`]: the one-line-per-capability balance sheet of a suite.
//! - [`progress`]: the live progress display (an [`crate::run::Observer`]).
//! - [`sysinfo`]: the machine's disclosure.
//! - [`style`]: colour, only on terminals and never with NO_COLOR.

pub mod balance;
pub mod compare;
pub mod format;
pub mod io_report;
pub mod jobs_report;
pub mod levels;
pub mod mail_report;
pub mod progress;
pub mod resources;
pub mod show;
pub mod style;
pub mod sysinfo;
pub mod table;

pub use progress::Progress;
