//! Pure functions over numbers. Nothing here does I/O; everything is unit-tested on samples
//! with known truth.
//!
//! - [`estimate`]: mean and 95% confidence interval of repeats.
//! - [`usl`]: the Universal Scalability Law, fitted by bounded least squares.
//! - [`knee`]: knee rules (Kneedle, Kleinrock's power, a response-time objective).
//! - [`compare`]: ratios of two runs' figures with intervals, verdicts, Holm's correction.
//! - [`steady`]: steady state and stragglers of storage runs.

pub mod compare;
pub mod estimate;
pub mod knee;
pub mod steady;
pub mod usl;

pub use estimate::{Estimate, estimate};
