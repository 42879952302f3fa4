//! Live events of a run, for progress displays. Every method has an empty default, so an
//! observer implements only what it shows.

use crate::env::resources::ResourcePoint;
use crate::record::histogram::LatencyHistogram;
use crate::record::{IntervalPoint, RunRecord, StepResult, Trial, Warning};
use crate::run::recorder::Counts;
use std::time::Duration;

pub trait Observer {
    /// A run begins; `steps` points of the sweep, each `repeat` times.
    fn run_started(&self, _record: &RunRecord, _steps: usize, _repeat: u32) {}
    /// A trial of step `index` begins; `swept` holds the values of its swept parameters
    /// (`threads` = `2`), and `label` names them (`threads=2 kernel=triad`).
    fn trial_started(
        &self,
        _index: usize,
        _repeat: u32,
        _label: &str,
        _swept: &[(String, String)],
    ) {
    }
    /// The trial entered a phase (`warmup`, `measure`) that lasts about `length` (None: until
    /// an op count is reached).
    fn phase(&self, _name: &str, _length: Option<Duration>) {}
    /// About ten times a second while measuring: elapsed time, ops so far, and the latest
    /// interval's index and counts (for a live rate).
    fn progress(&self, _elapsed: Duration, _ops: u64, _latest: Option<(u64, Counts)>) {}
    /// An interval of the measure phase closed (every worker is past it; the last ones when
    /// the phase ends): its point of the series and its response times. Ops a late worker
    /// adds to a closed interval are in the trial, not here. Under MPI it is not called:
    /// rank 0 holds only its own share until the trial's end, when `trial_finished` has the
    /// merged series.
    fn interval(&self, _point: &IntervalPoint, _histogram: &LatencyHistogram) {}
    /// The machine over one interval of the measure phase (sampler on).
    fn resources(&self, _point: &ResourcePoint) {}
    fn trial_finished(&self, _trial: &Trial) {}
    fn step_finished(&self, _step: &StepResult, _record: &RunRecord) {}
    fn warning(&self, _warning: &Warning) {}
    /// A line about work outside the steps (creating and filling files, cleaning up).
    fn note(&self, _text: &str) {}
    /// The run ended, however it ended: its record's status says how.
    fn run_finished(&self, _record: &RunRecord) {}
}

/// Shows nothing.
pub struct Silent;
impl Observer for Silent {}
