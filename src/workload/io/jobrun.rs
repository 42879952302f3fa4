//! A job file's run: fio's jobs as perflab runs them.
//!
//! fio runs the jobs of a group at once and the groups one after another (a `stonewall`
//! starts a new group). Here each group is one step of the run, named on the `group` axis by
//! its jobs; each copy of a job (`numjobs`) is a worker of its own with the job's own pattern,
//! block sizes, depth and files; and each job is a group of the step's figures (`job`, and
//! `job_direction` per direction, keyed `NAME/read`) beside the step's total, with its own
//! latency histogram.
//!
//! A group whose jobs run their size (fio's default: `size` or `io_size`, times `loops`) is a
//! step of fixed work: each copy ends when it has moved its bytes or reached its `runtime`,
//! and each job's rates are over its own running time. A group of `time_based` jobs is a
//! timed step of their `runtime` after their `ramp_time`. A group with both kinds is a step
//! of fixed work in which the time_based copies end after their own `runtime`, as fio runs
//! them. The job file's reader ([`super::jobplan`]) builds this from the file.

use super::IoSpec;
use super::flow::{FlowSpec, flows_of};
use super::jobcontrol::{Control, RunEnd, StepControl, StepJob};
use super::joblog::LogPlan;
use super::jobverify::JobVerify;
use super::layout::Layout;
use super::pattern::Rw;
use super::session::{JobPart, StepPlan};
use super::walk::WalkRules;
use super::writes::WriteSide;
use crate::record::{Headline, Setting, StepResult, Trial, Warning};
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::{
    Context, OpError, Prepared, Session, SessionFactory, StepShape, StopSpec, Workload,
};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One job of a job file, ready to run.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub name: String,
    /// Where its section starts, `FILE:LINE`.
    pub at: String,
    /// fio's reporting group (groupid, from 0).
    pub group: usize,
    /// The step it runs in (from 0): the jobs between two stonewalls run at once.
    pub step: usize,
    /// Copies that run at once (fio's `numjobs`).
    pub copies: u32,
    pub rw: Rw,
    /// Reads out of 100 in a mixed pattern.
    pub read_pct: u64,
    /// Reads' block sizes with weights (writes' too unless `write_sizes`).
    pub sizes: Vec<(u64, u32)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_sizes: Option<Vec<(u64, u32)>>,
    pub iodepth: u32,
    /// The layout's files each copy drives (`[copy]`).
    pub files: Vec<Vec<usize>>,
    /// Bytes of each file its I/O keeps to.
    pub region_bytes: u64,
    /// Where each copy's region starts in its files (fio's `offset`, plus
    /// `offset_increment` per copy).
    pub starts: Vec<u64>,
    /// fio's order of offsets: `rw=X:N`, `rw_sequencer`, `percentage_random`.
    pub walk: WalkRules,
    /// A job of fixed size without `io_size` also ends when it has made this many passes
    /// over its files (fio's `loops`): a skip that leaves holes ends it early, as in fio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_limit: Option<u32>,
    /// Each copy's files' lengths as fio sees them (`[copy][file]`).
    #[serde(skip)]
    pub file_lens: Vec<Vec<u64>>,
    /// Bytes each copy moves (a job of fixed size), else None.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_bytes: Option<u64>,
    /// `runtime`: the copy's limit (fixed size) or the step's length (`time_based`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "secs")]
    pub runtime: Option<Duration>,
    pub time_based: bool,
    #[serde(serialize_with = "secs_always")]
    pub ramp_time: Duration,
    /// Buffered with `invalidate`: each copy starts each pass with its files out of the page
    /// cache.
    pub invalidate: bool,
    /// fio's random map (not `norandommap`): a uniform random job touches each block once per
    /// pass.
    pub random_map: super::randommap::MapRule,
    /// Its floors (`rate_min`, `rate_iops_min`): a copy below them ends in error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<super::jobminrate::MinRate>,
    /// fio's engine as the job names it (`ioengine`, psync unless it says), and perflab's
    /// that runs it (`psync` runs on `sync`, buffered `libaio` too).
    pub ioengine: &'static str,
    pub engine: crate::engine::EngineKind,
    /// The pattern's writes are trims (fio's rw=trim or randtrim: the falloc engine's
    /// punched holes), reported as the direction `trim`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trims: bool,
    /// Each copy's own pace (fio's `rate_iops`, or `rate` over the block size), in I/Os a
    /// second, and how its starts are spaced (`rate_process`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    #[serde(skip)]
    pub arrival: crate::workload::Arrival,
    /// What its writes carry and how they are made durable (fio's buffer and sync options).
    #[serde(flatten)]
    pub writes: WriteSide,
    /// Its share of a flow (fio's `flow`, `flow_id`, `flow_sleep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSpec>,
    /// The fio logs its copies write (`write_bw_log`, `write_lat_log`, `write_iops_log`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<LogPlan>,
    /// Its `verify`, as perflab checks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<JobVerify>,
    /// It keeps no per-I/O latency, as the option named says (fio's `gtod_reduce`, or
    /// `disable_lat` with `disable_clat`): its I/Os are counted, not timed one by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_latency: Option<&'static str>,
    /// fio's latencies the job turns off (`lat`, `clat`: its `disable_lat`, `disable_clat`),
    /// which fio's JSON then writes as fio does (N 0).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fio_disabled: Vec<&'static str>,
    /// The job's options as written in its section, for the record and fio's JSON.
    pub options: Vec<(String, String)>,
    /// When its copies start, pause and end beyond their size and runtime (startdelay,
    /// wait_for, thinktime, number_ios, exit_what, the directions' own rates, steady state).
    #[serde(skip)]
    pub control: Control,
    /// The job's engine, O_DIRECT, distribution and syncs, over the run's layout.
    #[serde(skip)]
    pub spec: Arc<IoSpec>,
}

impl Job {
    /// The pattern as fio names it: a trim job's writes are trims (`trim`, `randtrim`).
    pub fn rw_name(&self) -> &'static str {
        match (self.trims, self.rw.random()) {
            (true, false) => "trim",
            (true, true) => "randtrim",
            (false, _) => self.rw.name(),
        }
    }
}

fn secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn secs_always<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// A job file's run, as the runner drives it and the record shows it.
#[derive(Debug, Clone, Serialize)]
pub struct JobRun {
    /// The job files, as given.
    pub job_files: Vec<String>,
    /// The groups, by the names of their jobs: the steps.
    pub group: Sweep<String>,
    pub jobs: Vec<Job>,
    /// fio's `[global]` options as written (the first section), for fio's JSON.
    pub global_options: Vec<(String, String)>,
    /// What the reader noted: fio's defaults that differ from perflab's, options that do
    /// not change what is measured.
    #[serde(skip)]
    pub notes: Vec<(&'static str, String)>,
    /// Every file of every job, made before the first step and removed after the last.
    #[serde(skip)]
    pub layout: Arc<Layout>,
    /// What the layout's preparation needs: whether anything reads (the files are filled)
    /// or writes, and `--keep`.
    #[serde(skip)]
    pub base: Arc<IoSpec>,
    /// Some job sets `exitall`: fio makes it the whole run's.
    #[serde(skip)]
    pub exitall: bool,
    /// The run's start (fio's genesis, from which `startdelay` counts): the first step's
    /// (each of its repeats starts it again).
    #[serde(skip)]
    pub genesis: Arc<Mutex<Option<Instant>>>,
    /// `exit_what=all` ended the run in a step.
    #[serde(skip)]
    pub run_end: Arc<RunEnd>,
    /// The latest trial's shared control, for its steady states once it is done.
    #[serde(skip)]
    pub latest: Arc<Mutex<Option<Arc<StepControl>>>>,
}

impl JobRun {
    /// The jobs of the step at `point`.
    fn jobs_at(&self, point: &StepPoint) -> impl Iterator<Item = &Job> {
        let g = point.index_of("group").unwrap_or(0);
        self.jobs.iter().filter(move |j| j.step == g)
    }

    /// The step's warmup: the shortest `ramp_time` of its jobs. A copy whose ramp reaches
    /// past it (a longer one, or one that starts late) ramps on its own ([`Self::own_ramp`]).
    fn shared_ramp(&self, point: &StepPoint) -> Duration {
        self.jobs_at(point)
            .map(|j| j.ramp_time)
            .min()
            .unwrap_or_default()
    }

    /// The ramp a job's copies count from their own start, where the step's warmup does not
    /// cover it.
    fn own_ramp(&self, point: &StepPoint, job: &Job) -> Option<Duration> {
        let late = !job.control.start_delay.1.is_zero();
        let longer = job.ramp_time > self.shared_ramp(point);
        (!job.ramp_time.is_zero() && (late || longer)).then_some(job.ramp_time)
    }

    /// When the last copy's measurement may begin, after the step's warmup: its latest
    /// start and its own ramp.
    fn latest_measure(&self, point: &StepPoint) -> Duration {
        let shared = self.shared_ramp(point);
        self.jobs_at(point)
            .map(|j| match self.own_ramp(point, j) {
                Some(r) => (j.control.start_delay.1 + r).saturating_sub(shared),
                None => j.control.start_delay.1,
            })
            .max()
            .unwrap_or_default()
    }

    /// The latest start among the step's copies (`startdelay`'s high end): a timed step
    /// lasts that much longer, each copy its own `runtime` from its start, as fio's.
    fn latest_start(&self, point: &StepPoint) -> Duration {
        self.jobs_at(point)
            .map(|j| j.control.start_delay.1)
            .max()
            .unwrap_or_default()
    }

    /// Whether the step's jobs run for different times.
    fn runtimes_differ(&self, point: &StepPoint) -> bool {
        let mut runtimes = self.jobs_at(point).map(|j| j.runtime);
        let first = runtimes.next().flatten();
        runtimes.any(|r| r != first)
    }

    fn copies_at(&self, point: &StepPoint) -> usize {
        self.jobs_at(point).map(|j| j.copies as usize).sum()
    }

    /// Whether the step's jobs run for a time rather than for their size.
    /// A step of jobs of which some run their size and some a time is one of fixed work too:
    /// each copy ends on its own, the sized ones with their bytes, the time_based ones after
    /// their own `runtime`, and the step when the last has.
    fn timed(&self, point: &StepPoint) -> bool {
        self.jobs_at(point).all(|j| j.time_based)
    }
}

/// How long each group of a job file's record runs, as its jobs say: `1s ramp + 2s` for
/// time_based jobs, `32 MiB a copy` for jobs of a size (the runner's own step length does
/// not apply). None for a record that is not a job file's.
pub fn describe(spec: &serde_json::Value) -> Option<String> {
    let jobs = spec.get("jobs")?.as_array()?;
    let secs = |j: &serde_json::Value, k: &str| j.get(k).and_then(|v| v.as_f64());
    // Each group's jobs' ends: one where they agree, each named where they differ.
    let mut groups: Vec<(u64, Vec<(String, String)>)> = Vec::new();
    for j in jobs {
        let g = j.get("group").and_then(|v| v.as_u64()).unwrap_or(0);
        let name = j
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string();
        let timed = j.get("time_based").and_then(|v| v.as_bool()) == Some(true);
        let run = secs(j, "runtime").map(|s| crate::vocab::numbers::ns(s * 1e9));
        let what = match (timed, run.clone()) {
            (true, Some(run)) => match secs(j, "ramp_time").filter(|r| *r > 0.0) {
                Some(ramp) => format!("{} ramp + {run}", crate::vocab::numbers::ns(ramp * 1e9)),
                None => run,
            },
            _ => {
                let budget = j.get("budget_bytes").and_then(|v| v.as_u64());
                let size =
                    budget.map_or("its size".into(), |b| format!("{} a copy", binary_bytes(b)));
                match run {
                    Some(run) => format!("{size}, at most {run}"),
                    None => size,
                }
            }
        };
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, whats)) => whats.push((name, what)),
            None => groups.push((g, vec![(name, what)])),
        }
    }
    let all: Vec<String> = groups
        .into_iter()
        .map(
            |(_, whats)| match whats.iter().all(|(_, w)| *w == whats[0].1) {
                true => whats[0].1.clone(),
                false => whats
                    .iter()
                    .map(|(n, w)| format!("{n} {w}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            },
        )
        .collect();
    Some(format!("each group as its jobs say ({})", all.join("; ")))
}

/// `32 MiB`, `1.5 GiB`, `4 KiB`: bytes as job files give them.
fn binary_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", units[u])
    } else {
        format!("{v:.1} {}", units[u])
    }
}

impl Workload for JobRun {
    fn name(&self) -> &'static str {
        "io"
    }

    fn target(&self) -> String {
        match self.layout.describe() {
            // Jobs on the null engine alone: fio makes no file for them, nor does perflab.
            none if none.is_empty() => "no file (ioengine=null)".into(),
            on_disk => on_disk,
        }
    }

    fn settings(&self) -> Vec<Setting> {
        vec![
            Setting::new("job files", self.job_files.join(" ")),
            Setting::new(
                "jobs",
                self.jobs
                    .iter()
                    .map(|j| format!("{} x{}", j.name, j.copies))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ]
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.group]
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "I/Os".into(),
            higher_is_better: true,
        }
    }

    fn fixed_work(&self, point: &StepPoint) -> Option<usize> {
        (!self.timed(point)).then(|| self.copies_at(point))
    }

    fn step_shape(&self, point: &StepPoint) -> Option<StepShape> {
        self.jobs_at(point).next()?;
        let warmup = self.shared_ramp(point);
        // A step of jobs that run their size has a warmup only for fio's ramp_time (their
        // I/O goes on through it, its figures thrown away, as fio's).
        if !self.timed(point) && warmup.is_zero() {
            return None;
        }
        // Jobs of one group may run for different times, each its own (`own_runtime`): the
        // step lasts as long as the longest.
        let runtime = self
            .jobs_at(point)
            .filter_map(|j| j.runtime)
            .max()
            .unwrap_or(Duration::from_secs(5));
        Some(StepShape {
            workers: self.copies_at(point),
            warmup,
            stop: StopSpec::Duration(runtime + self.latest_measure(point)),
        })
    }

    fn worker_pace(
        &self,
        point: &StepPoint,
        worker: usize,
    ) -> Option<(f64, crate::workload::Arrival)> {
        let mut first = 0;
        for job in self.jobs_at(point) {
            let end = first + job.copies as usize;
            if (first..end).contains(&worker) {
                return job.rate_iops.map(|r| (r, job.arrival));
            }
            first = end;
        }
        None
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let timed = self.timed(point);
        let flows = flows_of(
            self.jobs_at(point)
                .filter_map(|j| j.flow.as_ref().map(|f| (f, j.copies))),
        );
        // Copies that start late in a timed step, whose jobs run for different times or ramp
        // on their own, each run their own runtime after their ramp.
        let own_runtime = !timed
            || !self.latest_start(point).is_zero()
            || self.runtimes_differ(point)
            || self
                .jobs_at(point)
                .any(|j| self.own_ramp(point, j).is_some());
        let step = point.index_of("group").unwrap_or(0);
        let genesis = match self.genesis.lock() {
            Ok(mut g) if step == 0 || g.is_none() => *g.insert(Instant::now()),
            Ok(g) => g.unwrap_or_else(Instant::now),
            Err(_) => Instant::now(),
        };
        let listed: Vec<StepJob> = self
            .jobs_at(point)
            .map(|j| StepJob {
                name: &j.name,
                group: j.group as u32,
                copies: j.copies,
                control: &j.control,
            })
            .collect();
        let control = Arc::new(StepControl::new(
            genesis,
            self.exitall,
            step,
            Arc::clone(&self.run_end),
            &listed,
        ));
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(Arc::clone(&control));
        }
        // Worker k is copy k - first of the job whose copies span it.
        let mut plans: Vec<(usize, Arc<StepPlan>)> = Vec::new();
        let mut first = 0;
        for (i, job) in self.jobs.iter().enumerate() {
            if job.step != step {
                continue;
            }
            let part = JobPart {
                name: job.name.clone(),
                per_copy: job.copies > 1 && !job.control.group_reporting,
                min_rate: job.min_rate,
                write_sizes: job.write_sizes.clone(),
                budget: job.budget_bytes.filter(|_| !timed),
                // Counted from the copy's first measured I/O: after the ramp, as fio's.
                runtime: job.runtime.filter(|_| own_runtime),
                own_ramp: self.own_ramp(point, job),
                files: job.files.clone(),
                invalidate: job.invalidate,
                random_map: job.random_map,
                starts: job.starts.clone(),
                walk: job.walk,
                pass_limit: job.pass_limit.filter(|_| !timed),
                file_lens: job.file_lens.clone(),
                trims: job.trims,
                writes: job.writes.clone(),
                step_seed: seed,
                flow: job
                    .flow
                    .and_then(|f| Some((Arc::clone(flows.get(&f.id)?), f))),
                control: Some((Arc::clone(&control), plans.len())),
                logs: job.logs.clone(),
                read_back: job.verify.as_ref().is_none_or(|v| v.read_back),
                verify_fatal: job.verify.as_ref().is_some_and(|v| v.fatal),
                latency: job.no_latency.is_none(),
            };
            let job_seed = seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
            let plan = StepPlan::for_job(
                Arc::clone(&job.spec),
                job.rw,
                job.read_pct,
                job.sizes.clone(),
                job.iodepth,
                job.region_bytes,
                job_seed,
                part,
            );
            plans.push((first, Arc::new(plan)));
            first += job.copies as usize;
        }
        Ok(Arc::new(move |worker, _workers| {
            let (start, plan) = plans
                .iter()
                .rev()
                .find(|(start, _)| *start <= worker)
                .ok_or_else(|| OpError::other("a worker beyond the group's jobs"))?;
            super::session::open_job(plan, worker - start).map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        if let Some(ns) = trial.resources.process_cpu_ns_per_op {
            trial.figures.insert("cpu_ns_per_io".into(), ns);
        }
        // Each job's steady state, on its group.
        let latest = self.latest.lock().ok().and_then(|mut l| l.take());
        for (name, state) in latest.iter().flat_map(|c| c.steady_states()) {
            if let Some(g) = trial
                .groups
                .iter_mut()
                .find(|g| g.by == "job" && g.key == name)
            {
                g.steady_state = Some(state);
            }
        }
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        let prepared = super::layout::prepare(&self.base, &ctx.stop, note)
            .map_err(|e| OpError::other(e.to_string()))?;
        Ok(Box::new(prepared))
    }

    fn run_warnings(&self, _cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        super::warnings_of(self.notes.iter().chain(&self.layout.notes))
    }

    fn devices(&self) -> Vec<String> {
        self.layout.devices()
    }

    fn disk_bytes(&self) -> u64 {
        self.layout.creates_bytes
    }

    fn finish_step(&self, _step: &mut StepResult, _ctx: &Context) {}
}
