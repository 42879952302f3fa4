//! The record of a run and the measurements that fill it.
//!
//! - [`types`]: `RunRecord` and everything in `run.json` (versioned; every figure carries its
//!   unit in its name). Old records must keep loading: every struct defaults missing fields.
//! - [`histogram`]: latency histograms (HDR), their summaries and their base64 encoding.
//! - [`levels`]: the load-level summary of a `--load-levels` run (SPECpower's method).
//! - [`search`]: the summary of a `--search-users` run (SPECmail's users supported).
//! - [`recorder`]: what one worker keeps while it runs (one histogram per interval, counters).
//! - [`series`]: merges the workers' interval reports into the per-second series of a step.

pub mod cluster;
pub mod histogram;
pub mod levels;
pub mod recorder;
pub mod search;
pub mod series;
pub mod timestamp;
pub mod types;

pub use cluster::{ClusterInfo, RankInfo};
pub use types::*;
