//! The per-worker side of a workload: a [`Session`] issues one op at a time.
//!
//! The runner creates one session per worker, inside that worker's thread (so memory a
//! session allocates is first touched by the thread that uses it), calls [`Session::execute`]
//! in its timed loop, and asks [`Session::finish`] for per-worker figures at the end of a step.
//! Sessions never time themselves: the runner does, around `execute`, so every workload is
//! measured the same way.

use std::collections::BTreeMap;

/// What one op did, beyond taking time. The runner sums these over a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpOutcome {
    /// Bytes the op moved, counted as the workload's docs say (STREAM counting for memory).
    pub bytes: u64,
    /// Work items the op completed (loads of a pointer chase, tickets checked, pixels ...).
    pub items: u64,
}

/// A failed op. Counted as an error in the step; the message of the first few is kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OpError(pub String);

/// Per-worker figures a session reports at the end of a step, by name with a unit suffix
/// (`alloc_ns`, `checksum`); the runner averages them over workers.
pub type Figures = BTreeMap<String, f64>;

/// One worker's handle on the work of one step.
pub trait Session: Send {
    /// Issue one op and return what it did.
    fn execute(&mut self) -> Result<OpOutcome, OpError>;

    /// Figures this worker measured outside the timed ops (e.g. setup time), reported once
    /// when the step ends.
    fn finish(&mut self) -> Figures {
        Figures::new()
    }
}
