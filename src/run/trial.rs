//! One trial of one step, phase by phase, each a function that hands the next a named
//! result:
//!
//! ```text
//! TrialPlan::new  workers, seed, sessions, quotas, the open-loop rate
//! Crew::start     one thread per worker; each opens its session, then waits
//! Crew::open      every session open (or one failed): the schedule's origin is now
//! warmup          ops run and are thrown away
//! measure         ops are recorded; interval reports feed the live progress   -> Measured
//! Crew::drain     the phase ends; workers finish the ops in flight and count the
//!                 ops they missed                                              -> elapsed
//! Sampler         the machine's counters at the start, every interval and the end
//!                 of the measure phase (CPU, memory, network, disks, perflab's CPU,
//!                 power)                                                       -> Sampled
//! Before/after    the server's counters
//! Crew::collect   the workers return what they recorded                       -> Vec<WorkerOutput>
//! assemble        everything merged into a Trial
//! ```
//!
//! The coordinator never waits without checking for Ctrl-C (every wait wakes at least
//! every [`TICK`]). On an interrupt it moves the workers to STOP, gives them [`GRACE`] to
//! return, and abandons the ones still inside an op (a stopped server, a locked table, a dead
//! mount): their threads are detached, and their connections close when the process exits.
//! The trial then ends with [`TrialError::Interrupted`], saying where.

use super::observer::Observer;
use super::pacer::Pacer;
use super::worker::{
    self, MEASURE, SETTLE, STOP, Shared, WARMUP, WorkerOutput, WorkerPlan, WorkerResult,
};
use crate::cluster::{
    self,
    gate::{Gate, Halt},
    merge::merge,
};
use crate::env::power::PowerMeter;
use crate::env::sampler::{Sampled, Sampler};
use crate::record::histogram::{LatencyHistogram, encode, new_histogram, summarize};
use crate::record::timestamp::now_rfc3339;
use crate::record::{GroupResult, Resources, ScheduleSummary, Trial};
use crate::run::recorder::{Counts, IntervalReport, LATE_THRESHOLD, Lag, WorkerTotals};
use crate::run::series::SeriesBuilder;
use crate::stop::Stop;
use crate::vocab::StepPoint;
use crate::vocab::share::Share;
use crate::workload::{Context, Figures, GroupTotals, SessionFactory, Workload};
use crate::workload::{LoadSpec, RateScope, RunSpec, StopSpec};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a trial produced no result.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("interrupted during {}", .0.phase)]
    Interrupted(Cut),
    /// A session did not open, or the step could not go on (a full disk, a broken engine).
    #[error("{message}")]
    Failed {
        phase: &'static str,
        message: String,
    },
    /// A session did not open because the target refuses how the command line asked it to
    /// work ([`crate::workload::OpError::refusal`]): the message names the option to change.
    #[error("{0}")]
    Refused(String),
}

impl TrialError {
    fn failed(phase: &'static str, message: String) -> Self {
        TrialError::Failed { phase, message }
    }

    /// Sessions that did not open: a refusal, or a failure of the open phase.
    fn not_opened(e: crate::workload::OpError) -> Self {
        match e.refusal {
            true => TrialError::Refused(e.message),
            false => TrialError::failed("open", e.message),
        }
    }
}

/// Where an interrupted trial was, for the record's `cut_short`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub phase: &'static str,
    /// Workers that had not returned [`GRACE`] after being told to stop: abandoned.
    pub stuck: usize,
    pub workers: usize,
}

/// How often the coordinator wakes to update progress, check for the end of a phase and for
/// Ctrl-C.
const TICK: Duration = Duration::from_millis(100);
/// How long workers told to stop on Ctrl-C may take to return before they are abandoned;
/// with the rest of the shutdown it keeps the exit within 2 s.
const GRACE: Duration = Duration::from_millis(500);
/// How often the coordinator checks whether the ops in flight have completed: short, since
/// the measured time runs until they have.
const DRAIN_POLL: Duration = Duration::from_micros(200);

/// What a trial needs before any thread starts.
struct TrialPlan {
    /// This rank's workers (all of them with one rank; 0 on a rank that sits the step out).
    workers: usize,
    /// Their place among the run's workers (see `vocab::share`).
    share: Share,
    seed: u64,
    repeat: u32,
    /// The run's stop token (every wait of the trial watches it) and ranks.
    ctx: Context,
    factory: SessionFactory,
    quotas: Vec<Option<u64>>,
    /// Ops/s over all workers (open loop); 0 in a closed loop.
    target_rate: f64,
    open: bool,
    /// A closed loop that waits between ops.
    think: bool,
    /// A step of fixed work ([`Workload::fixed_work`]): no time limit, and no warmup unless
    /// the workload's [`Workload::step_shape`] gives one.
    fixed: bool,
    /// The step's warmup and end: the run's, or the workload's own
    /// ([`Workload::step_shape`]).
    warmup: Duration,
    stop: StopSpec,
    /// Workers the workload paces itself ([`Workload::worker_pace`]), by index.
    paces: Vec<Option<(f64, crate::workload::Arrival)>>,
}

impl TrialPlan {
    fn new(
        spec: &RunSpec,
        workload: &dyn Workload,
        ctx: &Context,
        point: &StepPoint,
        repeat: u32,
    ) -> Result<Self, TrialError> {
        let fixed = workload.fixed_work(point);
        let shape = workload.step_shape(point);
        let requested = fixed
            .or(shape.map(|s| s.workers))
            .unwrap_or(spec.threads.at(point) as usize)
            .max(1);
        // A step of fixed work has no warmup unless its workload gives it one (a job file's
        // `ramp_time`: the work goes on through it, its ops thrown away).
        let (warmup, stop) = match (shape, fixed) {
            (Some(s), _) => (s.warmup, s.stop),
            (None, Some(_)) => (Duration::ZERO, spec.stop),
            (None, None) => (spec.warmup, spec.stop),
        };
        let share = match &spec.active_ranks {
            Some(active) => Share::of(
                requested,
                active.at(point) as usize,
                cluster::rank(),
                spec.per_rank,
            ),
            None => Share::whole(requested),
        };
        let workers = share.workers;
        // The same seed on every rank: workers are numbered over the run, so N ranks of one
        // worker issue the ops one process of N workers would.
        let seed = spec
            .seed
            .wrapping_add(u64::from(repeat).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let factory = workload
            .sessions(point, seed, ctx)
            .map_err(TrialError::not_opened)?;
        let (target_rate, open) = match (workload.offered_rate(point), &spec.load) {
            // The workload's own load (mail's users): the whole run's, shared as --rate is.
            (Some(r), load) => {
                let pct = match load {
                    LoadSpec::Offered { load_pct, .. } => *load_pct,
                    _ => 100.0,
                };
                (r * share.fraction() * pct / 100.0, true)
            }
            (None, LoadSpec::Open { rate, scope, .. }) => {
                let r = rate.at(point);
                let total = match scope {
                    RateScope::Worker => r * workers as f64,
                    RateScope::Total => r * share.fraction(),
                    RateScope::Rank => r,
                };
                (total, true)
            }
            (None, LoadSpec::Closed { .. } | LoadSpec::Offered { .. }) => (0.0, false),
        };
        Ok(TrialPlan {
            workers,
            share,
            seed,
            repeat,
            ctx: ctx.clone(),
            factory,
            quotas: match fixed {
                Some(_) => vec![None; workers],
                None if spec.per_rank => quotas(stop, workers),
                // The run's `--ops` over the run's workers; this rank takes its workers' part.
                None => quotas(stop, share.total)
                    .into_iter()
                    .skip(share.first)
                    .take(workers)
                    .collect(),
            },
            target_rate,
            open,
            think: matches!(&spec.load, LoadSpec::Closed { think } if !think.is_zero()),
            fixed: fixed.is_some(),
            warmup,
            stop,
            paces: (0..workers)
                .map(|i| workload.worker_pace(point, share.first + i))
                .collect(),
        })
    }

    fn pacer(&self, spec: &RunSpec, index: usize) -> Pacer {
        if let Some(&Some((rate, arrival))) = self.paces.get(index) {
            return Pacer::open(
                rate,
                arrival,
                self.seed,
                Instant::now(),
                self.share.first + index,
                self.share.total,
            );
        }
        match &spec.load {
            LoadSpec::Closed { think } => Pacer::closed(*think),
            // The origin is a placeholder: each worker moves it to the moment every session
            // is open (`Shared::origin`).
            LoadSpec::Open { arrival, .. } | LoadSpec::Offered { arrival, .. } => Pacer::open(
                self.target_rate / self.workers.max(1) as f64,
                *arrival,
                self.seed,
                Instant::now(),
                self.share.first + index,
                self.share.total,
            ),
        }
    }
}

/// The workers of one trial and the coordinator's handles on them.
struct Crew {
    /// The run's stop token.
    stop: Stop,
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<WorkerResult>>,
    reports: Receiver<IntervalReport>,
}

impl Crew {
    /// Starts one thread per worker; each opens its own session.
    fn start(spec: &RunSpec, plan: &TrialPlan) -> Result<Crew, TrialError> {
        let shared = Arc::new(Shared::default());
        let (tx, reports) = channel();
        let mut crew = Crew {
            stop: plan.ctx.stop.clone(),
            shared,
            handles: Vec::with_capacity(plan.workers),
            reports,
        };
        for index in 0..plan.workers {
            let worker_plan = WorkerPlan {
                index: plan.share.first + index,
                workers: plan.share.total,
                factory: plan.factory.clone(),
                pacer: plan.pacer(spec, index),
                quota: plan.quotas[index],
                fixed: plan.fixed,
                interval: spec.interval,
            };
            let (tx, shared) = (tx.clone(), crew.shared.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("perflab-worker-{index}"))
                .spawn(move || worker::run(worker_plan, shared, tx));
            match spawned {
                Ok(h) => crew.handles.push(h),
                Err(e) => {
                    // Release the ones started; they see STOP and return.
                    crew.shared.phase.store(STOP, Ordering::SeqCst);
                    return Err(TrialError::failed(
                        "open",
                        format!(
                            "the OS refused to start worker thread {index} of {}: {e}; lower --threads",
                            plan.workers
                        ),
                    ));
                }
            }
        }
        Ok(crew)
    }

    fn workers(&self) -> usize {
        self.handles.len()
    }

    fn all_returned(&self) -> bool {
        self.handles.iter().all(|h| h.is_finished())
    }

    /// Polls `until` every `poll` (at most [`TICK`]) until it holds; on Ctrl-C, stops the
    /// crew instead and says where it was.
    fn wait(
        &self,
        phase: &'static str,
        poll: Duration,
        until: impl Fn(&Crew) -> bool,
    ) -> Result<(), Cut> {
        loop {
            if until(self) {
                return Ok(());
            }
            if self.stop.is_set() {
                return Err(self.abandon(phase));
            }
            std::thread::sleep(poll.min(TICK));
        }
    }

    /// Tells every worker to stop, waits up to [`GRACE`] for them, and abandons the rest.
    fn abandon(&self, phase: &'static str) -> Cut {
        self.shared.phase.store(STOP, Ordering::SeqCst);
        let deadline = Instant::now() + GRACE;
        while !self.all_returned() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Cut {
            phase,
            stuck: self.handles.iter().filter(|h| !h.is_finished()).count(),
            workers: self.workers(),
        }
    }

    /// Waits until every session is open; `Ok(false)` when one failed to open (the workers
    /// are then stopped before any op). Sets the schedule's origin.
    fn open(&self) -> Result<bool, Cut> {
        let n = self.workers();
        // A worker that returned in SETUP panicked opening its session: it will never
        // count itself as opened, so it counts as having failed.
        let returned = |c: &Crew| c.handles.iter().filter(|h| h.is_finished()).count();
        self.wait("open", TICK, |c| {
            c.shared.opened.load(Ordering::SeqCst) + returned(c) >= n
        })?;
        let ok = !self.shared.setup_failed.load(Ordering::SeqCst) && returned(self) == 0;
        let _ = self.shared.origin.set(Instant::now());
        Ok(ok)
    }

    /// Ends the measure phase and waits until every worker has completed its ops in flight
    /// (not for work after them, such as a verify pass), so the clocks and counters read
    /// next account for exactly the measured ops. Returns the measured time.
    fn drain(&self, measure_start: Instant) -> Result<Duration, Cut> {
        let _ = self.shared.measure_end.set(Instant::now());
        self.shared.phase.store(STOP, Ordering::SeqCst);
        let n = self.workers();
        self.wait("drain", DRAIN_POLL, |c| {
            c.shared.measured.load(Ordering::SeqCst) >= n || c.all_returned()
        })?;
        let elapsed = measure_start.elapsed();
        // Every worker finished on its own (its `--ops` share, its fixed work): the phase
        // ended with the last of them, not when the coordinator next looked (up to a TICK
        // later).
        if self.shared.done.load(Ordering::SeqCst) >= n {
            let last = Duration::from_nanos(self.shared.last_done_ns.load(Ordering::SeqCst));
            if !last.is_zero() {
                return Ok(elapsed.min(last));
            }
        }
        Ok(elapsed)
    }

    /// A meeting point with the other ranks (nothing with one rank). When a rank failed or
    /// Ctrl-C came, this rank's workers are stopped and the trial ends here.
    fn meet(&self, gate: &mut Gate, phase: &'static str) -> Result<(), TrialError> {
        gate.meet(Ok(())).map_err(|stop| {
            let cut = self.abandon(phase);
            match stop {
                Halt::Interrupted => TrialError::Interrupted(cut),
                Halt::Failed(message) => TrialError::failed(phase, message),
            }
        })
    }

    /// Waits for every worker to return and takes what it recorded.
    fn collect(self, series: &mut SeriesBuilder) -> Result<Vec<WorkerResult>, Cut> {
        self.wait("collect", TICK, Crew::all_returned)?;
        for report in self.reports.try_iter() {
            series.add(report);
        }
        Ok(self
            .handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(crate::workload::OpError::other(
                        "a worker panicked (a bug in perflab; see the line above)",
                    ))
                })
            })
            .collect())
    }
}

/// What the measure phase saw.
struct Measured<'m> {
    start: Instant,
    /// The wall clock at `start`, the one clock ranks on different hosts share.
    start_wall_ns: u64,
    series: SeriesBuilder,
    sampler: Sampler<'m>,
    /// The system under test's counters just before the phase began, and just after.
    server_before: Vec<(String, f64)>,
    server_started: Vec<(String, f64)>,
    /// The sampler's points live outputs have seen.
    resources_shown: usize,
}

/// What happened during the measure phase, beside the workers' own figures.
struct Activity {
    sampled: Sampled,
    /// The system under test's counters as rates, named `<counter>_per_sec`.
    server_rates: Vec<(String, f64)>,
    /// What each counter rose by between the two readings around the phase's start.
    server_start_window: BTreeMap<String, f64>,
}

/// The system under test's counters: just before the phase, just after it started, and
/// after it ended.
struct ServerReadings {
    before: Vec<(String, f64)>,
    started: Vec<(String, f64)>,
    after: Vec<(String, f64)>,
}

impl Activity {
    fn new(sampled: Sampled, server: ServerReadings, measured: Duration) -> Self {
        let secs = measured.as_secs_f64().max(1e-9);
        let rise = |from: &[(String, f64)], name: &str, value: f64| {
            from.iter()
                .find(|(n, _)| n == name)
                .map(|(_, was)| (value - was).max(0.0))
        };
        let server_rates = server
            .after
            .iter()
            .filter_map(|(name, value)| {
                Some((
                    format!("{name}_per_sec"),
                    rise(&server.before, name, *value)? / secs,
                ))
            })
            .collect();
        let server_start_window = server
            .started
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), rise(&server.before, name, *value)?)))
            .collect();
        Activity {
            sampled,
            server_rates,
            server_start_window,
        }
    }
}

/// Runs one trial: this rank's workers, then (under MPI) every rank's figures merged on
/// rank 0. On the other ranks the trial returned is a placeholder: rank 0 records the run.
pub fn run_trial(
    spec: &RunSpec,
    workload: &dyn Workload,
    ctx: &Context,
    point: &StepPoint,
    repeat: u32,
    observer: &dyn Observer,
    meter: Option<&mut PowerMeter>,
) -> Result<Trial, TrialError> {
    let mut gate = Gate::new();
    let local = TrialPlan::new(spec, workload, ctx, point, repeat)
        .and_then(|plan| local_trial(spec, workload, &plan, observer, meter, &mut gate));
    if cluster::size() == 1 {
        let mut trial = local?;
        workload.derive(point, &mut trial);
        return Ok(trial);
    }
    let (local, phase) = match local {
        // No exchange after an interrupt: the other ranks are stopping too, or gone.
        Err(TrialError::Interrupted(cut)) => return Err(TrialError::Interrupted(cut)),
        Err(TrialError::Failed { phase, message }) => (Err(Halt::Failed(message)), phase),
        // The ranks agree on a failure, not on its kind: over MPI a refusal fails the run.
        Err(TrialError::Refused(message)) => (Err(Halt::Failed(message)), "open"),
        Ok(trial) => (Ok(trial), "merge"),
    };
    let fixed = workload.fixed_work(point).is_some();
    match gate.finish(local, &cluster::host()) {
        Ok(Some(parts)) => {
            let mut trial = merge(parts, fixed);
            workload.derive(point, &mut trial);
            Ok(trial)
        }
        Ok(None) => Ok(Trial {
            repeat,
            ..Default::default()
        }),
        Err(Halt::Interrupted) => Err(TrialError::Interrupted(Cut {
            phase,
            stuck: 0,
            workers: 0,
        })),
        Err(Halt::Failed(message)) => Err(TrialError::failed(phase, message)),
    }
}

/// This rank's part of a trial, up to its merged figures (before the workload derives its
/// own from them).
fn local_trial(
    spec: &RunSpec,
    workload: &dyn Workload,
    plan: &TrialPlan,
    observer: &dyn Observer,
    meter: Option<&mut PowerMeter>,
    gate: &mut Gate,
) -> Result<Trial, TrialError> {
    let started_at = now_rfc3339();
    if plan.workers == 0 {
        return idle_trial(plan.repeat, started_at, gate);
    }
    let devices = workload.devices();
    let crew = Crew::start(spec, plan)?;
    let stopped = TrialError::Interrupted;

    if !crew.open().map_err(stopped)? {
        // A session that did not open ends the trial before any op runs.
        crew.shared.phase.store(STOP, Ordering::SeqCst);
        let results = crew
            .collect(&mut SeriesBuilder::new(spec.interval, plan.open))
            .map_err(stopped)?;
        return Err(setup_error(results));
    }
    crew.meet(gate, "open")?;
    warmup(&crew, plan.warmup, observer).map_err(stopped)?;
    crew.meet(gate, "warmup")?;
    let probe = (spec.resources, devices.as_slice(), meter);
    let mut measured = measure(&crew, spec, plan, observer, workload, probe).map_err(stopped)?;
    gate.measure_wall_ns = measured.start_wall_ns;
    let before = std::mem::take(&mut measured.server_before);
    let started = std::mem::take(&mut measured.server_started);
    let elapsed = crew.drain(measured.start).map_err(stopped)?;
    // The server's counters first: they are the ones a check compares op for op.
    let after = workload.server_counters(&plan.ctx);
    let sampled = measured.sampler.finish();
    if cluster::size() == 1 {
        for p in sampled.points.iter().skip(measured.resources_shown) {
            observer.resources(p);
        }
    }
    let server = ServerReadings {
        before,
        started,
        after,
    };
    let activity = Activity::new(sampled, server, elapsed);
    let results = crew.collect(&mut measured.series).map_err(stopped)?;
    measured.series.close_all();
    for closed in measured.series.take_closed() {
        let point = measured.series.point(closed.index, Some(elapsed));
        observer.interval(&point, &closed.histogram);
    }
    if plan.ctx.stop.is_set() {
        return Err(stopped(Cut {
            phase: "measure",
            stuck: 0,
            workers: plan.workers,
        }));
    }
    let outputs = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TrialError::failed("measure", e.message))?;
    Ok(assemble(
        plan,
        plan.repeat,
        started_at,
        outputs,
        measured.series,
        elapsed,
        activity,
    ))
}

/// A rank that sits the step out (`--active-ranks`, or fewer workers than ranks): it meets
/// the others at every point and reports nothing.
fn idle_trial(repeat: u32, started_at: String, gate: &mut Gate) -> Result<Trial, TrialError> {
    for phase in ["open", "warmup"] {
        gate.meet(Ok(()))
            .map_err(|stop| stop_error(stop, phase, 0))?;
    }
    Ok(Trial {
        repeat,
        started_at,
        ..Default::default()
    })
}

/// The trial error for a stop agreed between ranks.
fn stop_error(stop: Halt, phase: &'static str, workers: usize) -> TrialError {
    match stop {
        Halt::Interrupted => TrialError::Interrupted(Cut {
            phase,
            stuck: 0,
            workers,
        }),
        Halt::Failed(message) => TrialError::failed(phase, message),
    }
}

/// The first worker's reason its session did not open (a refusal first: it names the fix,
/// where another worker's error may be a consequence of it).
fn setup_error(results: Vec<WorkerResult>) -> TrialError {
    let mut errors: Vec<_> = results.into_iter().filter_map(Result::err).collect();
    match errors.iter().position(|e| e.refusal) {
        Some(i) => TrialError::not_opened(errors.swap_remove(i)),
        None if errors.is_empty() => TrialError::failed("open", "a session did not open".into()),
        None => TrialError::not_opened(errors.swap_remove(0)),
    }
}

/// Ops run and are thrown away until the warmup is over.
fn warmup(crew: &Crew, length: Duration, observer: &dyn Observer) -> Result<(), Cut> {
    // No warmup is no warmup phase: a worker that saw the phase for an instant would start an
    // op that runs on into the measure phase (a whole scan, for the scan workload), its time
    // and CPU charged to the step.
    if length.is_zero() {
        return Ok(());
    }
    observer.phase("warmup", Some(length));
    crew.shared.phase.store(WARMUP, Ordering::SeqCst);
    let n = crew.workers();
    // A warmup too long for the clock ends never; the parser keeps durations far below that.
    let end = Instant::now().checked_add(length);
    crew.wait("warmup", TICK, |c| {
        end.is_some_and(|e| Instant::now() >= e) || c.shared.done.load(Ordering::SeqCst) >= n
    })?;
    // The ops in hand finish (each bounded by the op timeout) and are thrown away; none
    // starts. A warmup shorter than one op would otherwise run that op on into the measure
    // phase, its time and CPU charged to the step.
    crew.shared.phase.store(SETTLE, Ordering::SeqCst);
    crew.wait("warmup", TICK, |c| {
        c.shared.warmed.load(Ordering::SeqCst) >= n
    })
}

/// The measure phase: until the duration is up or every worker reached its `--ops` share
/// (a step of fixed work: until every worker has done its part, however long it takes).
/// `probe`: whether the sampler reads everything, the workload's devices, the power meter.
fn measure<'m>(
    crew: &Crew,
    spec: &RunSpec,
    plan: &TrialPlan,
    observer: &dyn Observer,
    workload: &dyn Workload,
    probe: (bool, &[String], Option<&'m mut PowerMeter>),
) -> Result<Measured<'m>, Cut> {
    let mut series = SeriesBuilder::new(spec.interval, plan.open);
    // Live outputs see each interval as it closes; under MPI rank 0 has only its share, and
    // the merged series comes with the trial.
    let live = cluster::size() == 1;
    if live {
        series.watch();
    }
    let mut shown = 0;
    let limit = match plan.fixed {
        true => None,
        false => stop_duration(plan.stop),
    };
    let mut sampler = Sampler::start(probe.0, spec.interval, probe.1, probe.2);
    // The server's counters last, right before the phase flips: warmup ops in between would
    // be counted by the server and not by perflab.
    let server_before = workload.server_counters(&plan.ctx);
    // The sampler's boundaries are the workers' interval boundaries.
    let start = Instant::now();
    let start_wall_ns = crate::cluster::gate::wall_ns();
    sampler.set_origin(start);
    let _ = crew.shared.measure_start.set(start);
    crew.shared.phase.store(MEASURE, Ordering::SeqCst);
    // And again just after: however long the coordinator was held up between the first read
    // and the flip (a loaded machine deschedules it for milliseconds), what the server counted
    // in between is known, and a check that compares counts op for op allows for it.
    let server_started = workload.server_counters(&plan.ctx);
    observer.phase("measure", limit);
    let n = crew.workers();
    loop {
        let elapsed = start.elapsed();
        let finished = crew.shared.done.load(Ordering::SeqCst) >= n;
        let time_up = limit.is_some_and(|d| elapsed >= d);
        if finished || time_up {
            return Ok(Measured {
                start,
                start_wall_ns,
                series,
                sampler,
                server_before,
                server_started,
                resources_shown: shown,
            });
        }
        if crew.stop.is_set() {
            return Err(crew.abandon("measure"));
        }
        sampler.poll(Instant::now());
        if live {
            for p in &sampler.points()[shown..] {
                observer.resources(p);
            }
            shown = sampler.points().len();
        }
        let wait = match limit {
            Some(d) => TICK.min(d.saturating_sub(elapsed)),
            None => TICK,
        }
        .min(sampler.due().saturating_duration_since(Instant::now()));
        match crew.reports.recv_timeout(wait) {
            Ok(report) => series.add(report),
            Err(RecvTimeoutError::Timeout) => {}
            // Every worker has returned (each failed, or the quota was met).
            Err(RecvTimeoutError::Disconnected) => {
                return Ok(Measured {
                    start,
                    start_wall_ns,
                    series,
                    sampler,
                    server_before,
                    server_started,
                    resources_shown: shown,
                });
            }
        }
        for closed in series.take_closed() {
            observer.interval(&series.point(closed.index, None), &closed.histogram);
        }
        observer.progress(elapsed, series.total.ops, series.latest());
    }
}

/// Merges the workers' outputs and the phase's readings into the trial's figures.
fn assemble(
    plan: &TrialPlan,
    repeat: u32,
    started_at: String,
    outputs: Vec<WorkerOutput>,
    series: SeriesBuilder,
    measured: Duration,
    activity: Activity,
) -> Trial {
    let mut totals = Vec::with_capacity(outputs.len());
    let mut figures = Vec::with_capacity(outputs.len());
    let mut groups = Vec::new();
    for out in outputs {
        totals.push(out.totals);
        figures.push(out.figures);
        groups.extend(out.groups);
    }
    let counts = series.total;
    // A closed loop without think time has every worker busy from its first op to its last,
    // so each worker's own window measures its rate exactly, to op boundaries. Otherwise the
    // gaps belong to the measurement and the phase length is the divisor; so does a step of
    // fixed work, whose workers finish at different times (its rate is the work over the time
    // until the last finished).
    let per_window =
        !plan.open && !plan.think && !plan.fixed && totals.iter().all(|t| !t.window.is_zero());
    let rate = |f: fn(&WorkerTotals) -> u64, total: u64| -> f64 {
        if per_window {
            totals
                .iter()
                .map(|t| f(t) as f64 / t.window.as_secs_f64())
                .sum()
        } else {
            total as f64 / measured.as_secs_f64().max(1e-9)
        }
    };
    let ops_per_sec = rate(|t| t.counts.ops, counts.ops);
    let items_per_sec = rate(|t| t.counts.items, counts.items);
    let bytes_per_sec = rate(|t| t.counts.bytes, counts.bytes);

    let mut error_samples: Vec<String> = Vec::new();
    for m in totals.iter().flat_map(|t| &t.error_samples) {
        if error_samples.len() < 5 && !error_samples.contains(m) {
            error_samples.push(m.clone());
        }
    }
    let mut errors_by_kind = [0u64; crate::record::ErrorKind::ALL.len()];
    for t in &totals {
        for (sum, n) in errors_by_kind.iter_mut().zip(t.errors_by_kind) {
            *sum += n;
        }
    }
    let mut error_latency: Option<LatencyHistogram> = None;
    for h in totals.iter().filter_map(|t| t.error_latency.as_ref()) {
        // Same bounds and precision everywhere, so adding cannot fail.
        let _ = error_latency.get_or_insert_with(new_histogram).add(h);
    }
    // An open loop keeps the runner's schedule; sessions that pace themselves (terminals
    // with keying and think times) keep their own, with no target rate.
    let paced = totals.iter().any(|t| t.lag.count > 0);
    let schedule =
        (plan.open || paced).then(|| schedule_summary(&totals, plan.target_rate, &counts));
    let all_ops = counts.ops + counts.errors;
    let Activity {
        sampled,
        server_rates,
        server_start_window,
    } = activity;
    Trial {
        repeat,
        started_at,
        workers: plan.workers as u64,
        elapsed_ns: measured.as_nanos() as u64,
        ops: counts.ops,
        items: counts.items,
        bytes: counts.bytes,
        errors: counts.errors,
        ops_per_sec,
        items_per_sec,
        bytes_per_sec,
        latency: summarize(&series.response),
        service_latency: series.service.as_ref().map(summarize),
        schedule,
        figures: mean_figures(&figures)
            .into_iter()
            .chain(server_rates)
            .collect(),
        resources: Resources {
            cpu: sampled.usage,
            process_cpu_ns_per_op: Some(sampled.process_cpu)
                .filter(|_| all_ops > 0)
                .map(|d| d.as_nanos() as f64 / all_ops as f64),
            summary: sampled.summary.map(|mut s| {
                let achieved = all_ops as f64 / measured.as_secs_f64().max(1e-9);
                s.limit = s.judge_over(measured, plan.open.then_some((plan.target_rate, achieved)));
                s
            }),
            series: sampled.points,
        },
        errors_by_kind: crate::record::errors::by_kind(&errors_by_kind),
        error_samples,
        error_latency: error_latency.as_ref().map(summarize),
        error_latency_hdr: error_latency.as_ref().map(encode),
        latency_hdr: encode(&series.response),
        service_latency_hdr: series.service.as_ref().map(encode),
        series: series.points(measured),
        groups: merge_groups(groups, measured),
        devices: sampled.devices,
        server_start_window,
        ranks: None,
    }
}

/// How well the open loop kept its schedule, over all workers.
fn schedule_summary(totals: &[WorkerTotals], target_rate: f64, counts: &Counts) -> ScheduleSummary {
    let lag = totals.iter().fold(Lag::default(), |mut a, t| {
        a.late += t.lag.late;
        a.sum_ns += t.lag.sum_ns;
        a.max_ns = a.max_ns.max(t.lag.max_ns);
        a.count += t.lag.count;
        a
    });
    ScheduleSummary {
        target_ops_per_sec: target_rate,
        late_starts: lag.late,
        late_threshold_ns: LATE_THRESHOLD.as_nanos() as u64,
        mean_lag_ns: if lag.count == 0 {
            0.0
        } else {
            lag.sum_ns as f64 / lag.count as f64
        },
        max_lag_ns: lag.max_ns,
        missed_ops: counts.missed,
        skipped_ops: counts.skipped,
    }
}

/// Adds up the workers' groups with the same `by` and `key`, in the order first seen.
fn merge_groups(groups: Vec<GroupTotals>, measured: Duration) -> Vec<GroupResult> {
    let mut merged: Vec<(GroupTotals, LatencyHistogram)> = Vec::new();
    for g in groups {
        match merged
            .iter_mut()
            .find(|(m, _)| m.by == g.by && m.key == g.key)
        {
            Some((m, h)) => {
                m.active = m.active.max(g.active);
                m.ops += g.ops;
                m.bytes += g.bytes;
                m.errors += g.errors;
                // Same bounds and precision everywhere, so adding cannot fail.
                let _ = h.add(&g.latency);
            }
            None => {
                let mut h = new_histogram();
                let _ = h.add(&g.latency);
                merged.push((g, h));
            }
        }
    }
    merged
        .into_iter()
        .map(|(g, h)| {
            let secs = g.active.unwrap_or(measured).as_secs_f64().max(1e-9);
            GroupResult {
                by: g.by.to_string(),
                key: g.key,
                label: g.label,
                ops: g.ops,
                bytes: g.bytes,
                errors: g.errors,
                ops_per_sec: g.ops as f64 / secs,
                bytes_per_sec: g.bytes as f64 / secs,
                latency: summarize(&h),
                straggler: false,
                // Only ranks need it: theirs are added on rank 0 (`cluster::merge`).
                // Jobs keep theirs in the record: fio's percentiles per job are drawn from it.
                latency_hdr: (crate::cluster::size() > 1 || g.by.starts_with("job"))
                    .then(|| encode(&h)),
                elapsed_ns: g.active.map(|d| d.as_nanos() as u64),
                steady_state: None,
            }
        })
        .collect()
}

/// Splits `--ops` over workers; the first workers take the remainder.
fn quotas(stop: StopSpec, workers: usize) -> Vec<Option<u64>> {
    (0..workers)
        .map(|i| match stop {
            StopSpec::Ops(n) => {
                Some(n / workers as u64 + u64::from((i as u64) < n % workers as u64))
            }
            StopSpec::Duration(_) => None,
        })
        .collect()
}

fn stop_duration(stop: StopSpec) -> Option<Duration> {
    match stop {
        StopSpec::Duration(d) => Some(d),
        StopSpec::Ops(_) => None,
    }
}

/// Each figure's mean over the workers that reported it.
fn mean_figures(per_worker: &[Figures]) -> Figures {
    let mut sums: Figures = Figures::new();
    let mut counts = std::collections::BTreeMap::<String, f64>::new();
    for f in per_worker {
        for (k, v) in f {
            *sums.entry(k.clone()).or_default() += v;
            *counts.entry(k.clone()).or_default() += 1.0;
        }
    }
    for (k, v) in sums.iter_mut() {
        *v /= counts[k];
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_quotas_add_up() {
        let q = quotas(StopSpec::Ops(10), 3);
        assert_eq!(q, vec![Some(4), Some(3), Some(3)]);
        assert_eq!(
            quotas(StopSpec::Duration(Duration::from_secs(1)), 2),
            vec![None, None]
        );
    }

    #[test]
    fn figures_average_over_workers() {
        let a = Figures::from([("alloc_ns".to_string(), 10.0)]);
        let b = Figures::from([("alloc_ns".to_string(), 30.0), ("x".to_string(), 1.0)]);
        let m = mean_figures(&[a, b]);
        assert_eq!(m["alloc_ns"], 20.0);
        assert_eq!(m["x"], 1.0);
    }
}
