//! Pure functions over results: estimates with confidence intervals, and what a sweep shows
//! (peak, sweet spot, scaling). Nothing here does I/O; everything is unit-tested.

pub mod estimate;
pub mod steady;
pub mod sweep;

pub use estimate::estimate;
pub use sweep::analyze;
