//! The record of a run and the measurements that fill it.
//!
//! - [`types`]: `RunRecord` and everything in `run.json` (versioned; every figure carries its
//!   unit in its name). Old records must keep loading: every struct defaults missing fields.
//! - [`histogram`]: latency histograms (HDR), their summaries and their base64 encoding.
//! - [`recorder`]: what one worker keeps while it runs (one histogram per interval, counters).
//! - [`series`]: merges the workers' interval reports into the per-second series of a step.

pub mod histogram;
pub mod recorder;
pub mod series;
pub mod timestamp;
pub mod types;

pub use types::*;
