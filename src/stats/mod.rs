//! Pure functions over results. Nothing here does I/O; everything is unit-tested on samples
//! with known truth.
//!
//! - [`estimate`]: mean and 95% confidence interval of repeats.
//! - [`sweep`]: what a sweep shows: peak, sweet spot, scaling, and its curves' analysis.
//! - [`curve`]: which steps form a curve, and each curve's knees and scalability fit.
//! - [`usl`]: the Universal Scalability Law, fitted by bounded least squares.
//! - [`knee`]: knee rules (Kneedle, Kleinrock's power, a response-time objective).
//! - [`compare`]: ratios of two runs' figures with intervals, verdicts, Holm's correction.
//! - [`steady`]: steady state and stragglers of storage runs.

pub mod compare;
pub mod curve;
pub mod estimate;
pub mod knee;
pub mod steady;
pub mod sweep;
pub mod usl;

pub use estimate::estimate;
pub use sweep::analyze;
