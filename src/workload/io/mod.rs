//! The storage workload: fio-class I/O against files, directories or block devices.
//!
//! - this file: [`IoSpec`] (the options, named as fio names them) and its [`Workload`] impl;
//! - [`pattern`]: what each I/O is (direction, block size, offset), from `--rw`, `--bs`,
//!   `--bssplit` and the random distribution, with fio's [`randommap`] for a job file's
//!   uniform random jobs (each block once a pass, I/Os shortened at used blocks);
//! - which block a random I/O touches (uniform, zipf, pareto, hot set) is
//!   [`crate::workload::distribution`]'s, which kv's keys draw from too;
//! - [`layout`]: where the I/O goes (volumes and files), the safety checks before anything is
//!   written, creating, filling and removing the files;
//! - [`session`]: one worker's queues over the engine ([`crate::engine`]), timing every I/O
//!   from submission to completion;
//! - [`verify`]: self-describing checksummed blocks for `--verify`;
//! - [`analysis`]: per-step checks that need the whole step (stragglers, the device's own
//!   counters against perflab's);
//! - [`surface`]: IOzone's file size x record size surface (`--mode surface`);
//! - a job file's jobs: [`fio`] reads them, [`jobplan`] turns them into a [`jobrun`];
//!   beside their pattern, [`writes`] says what their writes carry ([`contents`], made by
//!   [`fill`]) and how they are made durable (`sync=`, [`end_sync`]), and [`flow`] keeps
//!   the shares of jobs that share a `flow_id`.
//!
//! Job files (`perflab io JOB.fio`): [`fio`] reads them, [`jobplan`] turns their jobs into a
//! [`jobrun::JobRun`]; [`jobcontrol`] is when each copy starts, pauses and ends (startdelay,
//! wait_for, thinktime, number_ios, exitall), with [`jobpace`] (the reads' and writes' own
//! rates), [`jobminrate`] (their floors: `rate_min`) and [`jobsteady`] (fio's steady state);
//! [`joblog`] writes fio's log files (`write_bw_log` ...) from each copy's I/O; [`jobverify`]
//! maps `verify` onto perflab's own check; [`fio_json`] writes fio's JSON from the record.
//!
//! Queues: every file (volume) a worker drives has its own queue of `--iodepth` I/Os, as in
//! the SqlIO ramps where each volume had its own outstanding I/Os. With more workers than
//! files, workers share files; with more files than workers, each worker drives several.

pub mod analysis;
pub mod args;
pub mod balance;
pub mod bsrange;
pub mod cmd;
pub mod contents;
pub mod end_sync;
pub mod fill;
pub mod fio;
pub mod fio_json;
pub mod fio_line;
pub mod flow;
pub mod jobcontrol;
mod jobengine;
pub mod joblog;
pub mod jobminrate;
pub mod jobpace;
pub mod jobplan;
pub mod jobrun;
pub mod jobs_cmd;
pub mod jobsteady;
pub mod jobverify;
pub mod kind;
pub mod layout;
pub mod pattern;
pub mod peer;
pub mod randommap;
pub mod regions;
pub mod session;
pub mod surface;
pub mod verify;
pub mod walk;
pub mod writes;

pub use kind::KIND;

use super::{OpError, Prepared, SessionFactory, Workload};
use crate::engine::EngineKind;
use crate::record::{Headline, StepResult, Trial, Warning};
use crate::stats::steady::SteadyCriteria;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use crate::workload::distribution::Distribution;
use layout::Layout;
use pattern::Rw;
use serde::Serialize;
use std::sync::Arc;

/// The storage test, as the user asked for it and as the record shows it.
#[derive(Debug, Clone, Serialize)]
pub struct IoSpec {
    pub rw: Sweep<Rw>,
    /// Block size, when `bssplit` is not given.
    pub bs_bytes: Sweep<u64>,
    /// Weighted block sizes (fio --bssplit): (bytes, weight).
    pub bssplit: Vec<(u64, u32)>,
    /// Percent of I/Os that read in mixed patterns (fio --rwmixread).
    pub rwmix: Sweep<u64>,
    /// I/Os in flight per file.
    pub iodepth: Sweep<u64>,
    /// Files (volumes) used at a step; files are spread over the paths.
    pub files: Sweep<u64>,
    /// `--each-volume`: the path a step's one file is on, or `all` for the ramp; zipped with
    /// `files` (each volume alone at one file, then the files ramp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<Sweep<String>>,
    /// Bytes of each file (or device region) that I/O touches.
    pub size_bytes: u64,
    /// The part of each file a step's I/O keeps to, from its start: `--size` swept in test
    /// mode (one value, `size_bytes`, otherwise).
    pub region_bytes: Sweep<u64>,
    /// Where that region starts in each file or device.
    pub offset_bytes: u64,
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
    /// Buffered, `--cold`: each file's pages are dropped from the page cache as a worker
    /// opens it and after each pass over it (fio's `invalidate`), so its reads come from the
    /// device with the kernel's read-ahead, as those of a file larger than memory do.
    pub cold: bool,
    /// An fsync after every N writes per file (0: never).
    pub fsync: u64,
    /// An fdatasync after every N writes per file (0: never).
    pub fdatasync: u64,
    pub distribution: Distribution,
    pub engine: EngineKind,
    /// Why the engine is not the one asked for or the default, if it is not.
    pub engine_note: Option<String>,
    pub prefill: bool,
    pub verify: bool,
    /// Seeds the content of verify blocks: the run's `--seed`, the same for every step.
    pub verify_seed: u64,
    pub keep: bool,
    /// Steady-state detection over each step's series, when asked for.
    pub steady_state: Option<SteadyCriteria>,
    /// A file this many times slower than the median of its siblings is a straggler.
    pub straggler_fraction: f64,
    pub layout: Arc<Layout>,
}

impl IoSpec {
    /// Whether any step writes (so the safety checks apply).
    pub fn writes(&self) -> bool {
        self.prefill || self.rw.values().iter().any(|r| r.writes())
    }

    /// Whether any step reads.
    pub fn reads(&self) -> bool {
        self.rw.values().iter().any(|r| r.reads())
    }

    /// The largest block size of any step.
    pub fn max_bs(&self) -> u64 {
        self.bssplit
            .iter()
            .map(|&(b, _)| b)
            .chain(self.bs_bytes.values().iter().copied())
            .max()
            .unwrap_or(4096)
    }

    /// The block sizes of a step, with weights.
    pub fn sizes_at(&self, point: &StepPoint) -> Vec<(u64, u32)> {
        if self.bssplit.is_empty() {
            vec![(self.bs_bytes.at(point), 1)]
        } else {
            self.bssplit.clone()
        }
    }
}

impl Workload for IoSpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "io"
    }

    fn target(&self) -> String {
        self.layout.describe()
    }

    fn settings(&self) -> Vec<crate::record::Setting> {
        use crate::record::Setting;
        use crate::vocab::units::format_bytes;
        let mut s = vec![Setting::new("rw", self.rw.text(|r| r.name().to_string()))];
        if self.bssplit.is_empty() {
            s.push(Setting::new("bs", self.bs_bytes.text(|b| format_bytes(*b))));
        } else {
            let split: Vec<String> = self
                .bssplit
                .iter()
                .map(|(b, w)| format!("{}/{w}", format_bytes(*b)))
                .collect();
            s.push(Setting::new("bssplit", split.join(":")));
        }
        if self.rw.values().iter().any(|r| r.reads() && r.writes()) {
            s.push(Setting::new(
                "rwmix",
                self.rwmix.text(|p| format!("{p}% reads")),
            ));
        }
        s.push(Setting::new("iodepth", self.iodepth.text(u64::to_string)));
        s.push(Setting::new("files", self.files.text(u64::to_string)));
        s.push(Setting::new(
            "size",
            match self.region_bytes.is_swept() {
                true => self.region_bytes.text(|b| format_bytes(*b)),
                false => format_bytes(self.size_bytes),
            },
        ));
        s.push(Setting::new("direct", if self.direct { "1" } else { "0" }));
        s.push(Setting::new("engine", self.engine.name()));
        if !matches!(self.distribution, Distribution::Uniform) {
            s.push(Setting::new("distribution", self.distribution.to_string()));
        }
        for (name, n) in [("fsync", self.fsync), ("fdatasync", self.fdatasync)] {
            if n > 0 {
                s.push(Setting::new(name, n.to_string()));
            }
        }
        if self.verify {
            s.push(Setting::new("verify", "on"));
        }
        s
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        let mut axes: Vec<&dyn Axis> = vec![
            &self.rw,
            &self.bs_bytes,
            &self.rwmix,
            &self.iodepth,
            &self.files,
        ];
        // Only a swept size is a parameter of the steps (records of one size stay as they were).
        if self.region_bytes.is_swept() {
            axes.push(&self.region_bytes);
        }
        if let Some(v) = &self.volume {
            axes.push(v);
        }
        axes
    }

    fn headline(&self) -> Headline {
        // Large sequential transfers are judged by bandwidth, everything else by IOPS.
        let sequential_large = self.bssplit.is_empty()
            && self.bs_bytes.values().iter().all(|&b| b >= 128 << 10)
            && self.rw.values().iter().all(|r| !r.random());
        Headline {
            metric: if sequential_large {
                "bytes_per_sec"
            } else {
                "ops_per_sec"
            }
            .into(),
            op_name: "I/Os".into(),
            higher_is_better: true,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        session::factory(self, point, seed)
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        if let Some(ns) = trial.resources.process_cpu_ns_per_op {
            trial.figures.insert("cpu_ns_per_io".into(), ns);
        }
        // Little's law: the I/Os in flight on average are the rate times the mean time each
        // took. Set beside the queue depth the workers keep, it says whether the queue was
        // kept full (Gray's ramps: "8 deep" should mean 8 in flight).
        if trial.ops_per_sec > 0.0 && trial.latency.mean_ns > 0.0 {
            let in_flight = trial.ops_per_sec * trial.latency.mean_ns / 1e9;
            trial.figures.insert("ios_in_flight".into(), in_flight);
        }
        if let Some(c) = &self.steady_state {
            analysis::steady_state(trial, c);
        }
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        let prepared =
            layout::prepare(self, &ctx.stop, note).map_err(|e| OpError::other(e.to_string()))?;
        Ok(Box::new(prepared))
    }

    fn run_warnings(&self, _cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        warnings_of(&self.layout.notes)
    }

    fn devices(&self) -> Vec<String> {
        self.layout.devices()
    }

    fn disk_bytes(&self) -> u64 {
        // Files perflab creates: as many as the largest step uses, each of --size (a
        // device given as a path is the user's and takes no space).
        let files = self.files.values().iter().copied().max().unwrap_or(1);
        files.saturating_mul(self.size_bytes.saturating_add(self.offset_bytes))
    }

    fn finish_step(&self, step: &mut StepResult, _ctx: &Context) {
        analysis::mark_stragglers(step, self.straggler_fraction);
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        analysis::warnings(self, step)
    }
}

/// What the planning noted, as the run's warnings (before any step).
pub(crate) fn warnings_of<'n>(
    notes: impl IntoIterator<Item = &'n (&'static str, String)>,
) -> Vec<Warning> {
    notes
        .into_iter()
        .map(|(code, message)| Warning {
            code: code.to_string(),
            message: message.clone(),
            step: None,
        })
        .collect()
}
