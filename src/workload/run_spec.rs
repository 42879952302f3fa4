//! The run specification: the workload's spec and the options every workload shares
//! (workers, phases, stop condition, load model, repeats). Each kind builds one from its
//! arguments and the runner (`crate::run`) runs it; it lives with the kinds, since it holds a
//! [`WorkloadSpec`]. `crate::vocab` below keeps only the vocabulary (units, sweeps, axes).

use super::WorkloadSpec;
use crate::vocab::{Axis, Sweep};
use serde::Serialize;
use std::time::Duration;

/// Everything that decides what a run does. Serialized into the record as given.
#[derive(Debug, Clone, Serialize)]
pub struct RunSpec {
    #[serde(flatten)]
    pub workload: WorkloadSpec,
    /// Worker threads (fio `numjobs`, pgbench `--jobs`).
    pub threads: Sweep<u64>,
    /// Phase before measuring, not recorded in the figures.
    #[serde(rename = "warmup_ns", serialize_with = "as_ns")]
    pub warmup: Duration,
    pub stop: StopSpec,
    pub load: LoadSpec,
    /// Each step is run this many times in a row; the step reports mean and 95% CI.
    pub repeat: u32,
    /// Seed of every random choice of the workload (keys, offsets, arrivals).
    pub seed: u64,
    /// Length of one point of the per-step time series.
    #[serde(rename = "interval_ns", serialize_with = "as_ns")]
    pub interval: Duration,
    /// The system sampler every interval (CPU, memory, network, disks, power); off only to
    /// measure the sampler's own cost.
    pub resources: bool,
    /// A command printing watts, sampled every interval (`--power-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_cmd: Option<String>,
    /// Graduated load levels instead of a sweep (`--load-levels`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels: Option<crate::vocab::LevelsSpec>,
    /// A search for the largest value of an option that passes (`--search-users`) instead
    /// of a sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::vocab::SearchSpec>,
    /// Under MPI: how many ranks drive the load at each step (`--active-ranks`; sweeps).
    /// Absent with one rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_ranks: Option<Sweep<u64>>,
    /// Under MPI: each active rank runs `threads`, `--ops` and `--rate` whole
    /// (`--rate-scope rank`) instead of its share of them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_rank: bool,
    /// Options that step together instead of crossing (`--zip threads,files`), each group
    /// led by its first: the leader is the swept axis the steps name, the others follow it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub zip: Vec<Vec<String>>,
}

/// When the measure phase of a step ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopSpec {
    /// After this long (fio `runtime`, pgbench `--time`).
    #[serde(rename = "duration_ns")]
    Duration(#[serde(serialize_with = "as_ns")] Duration),
    /// After this many ops in total over all workers (fio `number_ios`, pgbench `--transactions` x clients).
    Ops(u64),
}

/// How ops are started.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LoadSpec {
    /// Each worker starts its next op when the last one ends, after an optional think time.
    Closed {
        #[serde(rename = "think_ns", serialize_with = "as_ns")]
        think: Duration,
    },
    /// Ops start on a schedule at a target rate, whether or not earlier ones have finished
    /// on time; response time counts from the intended start (no coordinated omission).
    Open {
        rate: Sweep<f64>,
        scope: RateScope,
        arrival: Arrival,
    },
    /// Ops start on a schedule at the rate the workload's own options imply (mail: its
    /// users' sessions in the peak hour), timed from the intended start as in `Open`.
    Offered {
        arrival: Arrival,
        /// The share of that rate offered, in percent (a search qualifies a user count at
        /// 80% and 120% of its load); 100 otherwise.
        load_pct: f64,
    },
}

/// Whether `--rate` is for all workers together or for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum RateScope {
    /// The whole run's rate (under MPI, divided over the active ranks).
    Total,
    /// Each worker's rate.
    Worker,
    /// Under MPI, each active rank's rate; each active rank also runs `--threads` and
    /// `--ops` whole.
    Rank,
}

/// How intended start times are spaced in an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced (fio `rate_process=linear`).
    Uniform,
    /// Exponential gaps, as independent users arrive (fio `rate_process=poisson`, pgbench `--rate`).
    Poisson,
}

impl RunSpec {
    /// Every option that may sweep, workload options first (they usually are the outer loop
    /// the user thinks of), then threads and rate.
    pub fn axes(&self) -> Vec<&dyn Axis> {
        let mut axes = self.workload.axes();
        axes.push(&self.threads);
        if let LoadSpec::Open { rate, .. } = &self.load {
            axes.push(rate);
        }
        if let Some(ranks) = &self.active_ranks {
            axes.push(ranks);
        }
        axes
    }

    /// The steps of the run's grid, zipped options stepping together.
    pub fn points(&self) -> Vec<crate::vocab::StepPoint> {
        crate::vocab::sweep::grid_zipped(&self.axes(), &self.zip)
    }

    /// The options that sweep as the steps name them: zipped followers left out (their
    /// values are in each step's parameters, beside their leader's).
    pub fn swept(&self) -> Vec<&'static str> {
        let follows = |name: &str| self.zip.iter().any(|g| g.iter().skip(1).any(|n| n == name));
        self.axes()
            .iter()
            .filter(|a| a.count() > 1 && !follows(a.axis_name()))
            .map(|a| a.axis_name())
            .collect()
    }

    /// A short description of the load model for output headers.
    pub fn load_label(&self) -> String {
        match &self.load {
            LoadSpec::Closed { think } if think.is_zero() => "closed loop".to_string(),
            LoadSpec::Closed { think } => {
                format!(
                    "closed loop, think {}",
                    crate::vocab::units::format_duration(*think)
                )
            }
            LoadSpec::Offered { arrival, .. } => format!(
                "open loop, {} arrivals at the workload's rate",
                match arrival {
                    Arrival::Uniform => "uniform",
                    Arrival::Poisson => "Poisson",
                }
            ),
            LoadSpec::Open { scope, arrival, .. } => format!(
                "open loop, {} arrivals, rate per {}",
                match arrival {
                    Arrival::Uniform => "uniform",
                    Arrival::Poisson => "Poisson",
                },
                match scope {
                    RateScope::Total => "run",
                    RateScope::Worker => "worker",
                    RateScope::Rank => "rank",
                }
            ),
        }
    }
}

fn as_ns<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
