//! What a record's steps show: the sweep's peak, sweet spot and scaling, which steps form a
//! curve, and each curve's knees and scalability fit.
//!
//! This is `stats` applied to the record's steps. It sits above `record` (it reads steps and
//! writes the record's `Analysis`), so `stats` below stays pure functions over numbers.
//!
//! - [`sweep`]: what a sweep shows: peak, sweet spot, scaling, and its curves' analysis.
//! - [`curve`]: which steps form a curve, and each curve's knees and scalability fit.

pub mod curve;
pub mod sweep;

pub use sweep::analyze;
