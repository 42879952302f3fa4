//! Running a specification: the sweep, its steps and trials, and the workers.
//!
//! - [`runner`]: the sweep. Builds the record, runs every step (`repeat` trials each), saves
//!   the record after every step, analyzes the sweep at the end.
//! - [`levels`]: SPECpower's graduated load levels: calibration, levels, active idle.
//! - [`search`]: SPECmail's search for the largest user count that passes at 80/100/120%.
//! - [`trial`]: one trial: starts the workers, moves them through warmup and measure, merges
//!   their recordings.
//! - [`worker`]: one worker thread's loop (the hot path).
//! - [`pacer`]: closed loop with think time, or open loop at a target rate.
//! - [`recorder`]: what one worker keeps while it runs (one histogram per interval, counters).
//! - [`series`]: merges the workers' interval reports into the per-second series of a step.
//! - [`observer`]: live events for progress displays.
//! - [`interrupt`]: what Ctrl-C does to a run.

pub mod interrupt;
pub mod levels;
pub mod observer;
pub mod pacer;
pub mod recorder;
pub mod runner;
pub mod search;
pub mod series;
pub mod trial;
pub mod worker;

pub use observer::{Observer, Silent};
pub use runner::{NO_POWER, RunError, RunOptions, run};
