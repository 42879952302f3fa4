//! Which part of a kind's work a run does, for the kinds that load a system under test before
//! they measure it (oltp's and scan's tables, kv's keys): the whole of it, or the measurement
//! alone against what an earlier `prepare` loaded. The spec records it, so a record says
//! whether its run loaded what it measured.

use serde::Serialize;

/// What a command does with the data it measures (tables, keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phases {
    /// Load, run, remove (the default): a self-contained measurement.
    All,
    /// Run against what `prepare` loaded earlier.
    Run,
}
