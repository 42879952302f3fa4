//! The record of a run: its shape, and nothing of how it was made (the per-worker recorder and
//! the series merge are `run`'s). Types the record holds that other layers make live below it
//! (`env`'s machine, resources and devices; `stats`' estimates and fits).
//!
//! - [`types`]: `RunRecord` and everything in `run.json` (versioned; every figure carries its
//!   unit in its name). Old records must keep loading: every struct defaults missing fields.
//! - [`histogram`]: latency histograms (HDR), their summaries and their base64 encoding.
//! - [`levels`]: the load-level summary of a `--load-levels` run (SPECpower's method).
//! - [`search`]: the summary of a `--search-users` run (SPECmail's users supported).
//! - [`cluster`]: the ranks of a scale-out run.
//! - [`errors`]: the kinds of failure an op can meet, as the record counts them.
//! - [`timestamp`]: the record's times (RFC 3339).

pub mod cluster;
pub mod errors;
pub mod histogram;
pub mod levels;
pub mod search;
pub mod timestamp;
pub mod types;

pub use cluster::{ClusterInfo, RankInfo};
pub use errors::{ErrorKind, ErrorsByKind};
pub use types::*;
