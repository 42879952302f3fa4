//! One worker thread: open its session, then issue ops through the phases of a step.
//!
//! The phase is one shared atomic the coordinator moves forward (setup, warmup, measure,
//! stop); a worker reads it once per op. The measure loop is the hot path: one clock read
//! per op in a closed loop (the end of one op is the start of the next), one histogram update.

use super::pacer::{Pacer, wait_until};
use crate::record::ErrorKind;
use crate::record::histogram::new_histogram;
use crate::run::recorder::{IntervalReport, Recorder, WorkerTotals};
use crate::workload::{
    Figures, GroupTotals, OpError, OpResult, Pump, QueuedSession, Session, SessionFactory,
};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub const SETUP: u8 = 0;
pub const WARMUP: u8 = 1;
/// The warmup is over: workers finish the op in hand (thrown away) and start none, so the
/// measure phase begins with no warmup op still running into it.
pub const SETTLE: u8 = 2;
pub const MEASURE: u8 = 3;
pub const STOP: u8 = 4;

/// State the coordinator shares with its workers for one trial.
#[derive(Default)]
pub struct Shared {
    pub phase: AtomicU8,
    /// Set by the coordinator once every session is open, before it moves the phase to
    /// WARMUP: where an open-loop schedule starts.
    pub origin: OnceLock<Instant>,
    /// Set by the coordinator just before it moves the phase to MEASURE.
    pub measure_start: OnceLock<Instant>,
    /// Set by the coordinator just before it moves the phase to STOP: ops of the schedule
    /// due before it that never started are missed.
    pub measure_end: OnceLock<Instant>,
    /// Workers whose session is open or failed to open. They wait in SETUP until the
    /// coordinator, which polls this (a barrier could not be left on Ctrl-C), moves on.
    pub opened: AtomicUsize,
    /// Workers whose warmup ops have all completed (or who had no warmup): the coordinator
    /// starts the measure phase when all have.
    pub warmed: AtomicUsize,
    /// Workers that have finished their measure phase (ops quota reached or stopped).
    pub done: AtomicUsize,
    /// When the latest of them finished, in ns after `measure_start` (0: none yet).
    pub last_done_ns: AtomicU64,
    /// Set by a worker whose session did not open, before the workers meet.
    pub setup_failed: AtomicBool,
    /// Workers whose last measured op has completed (work after the measure phase, such as
    /// a verify pass, may still be running): the coordinator reads its clocks and counters
    /// when all have.
    pub measured: AtomicUsize,
}

impl Shared {
    #[inline]
    fn phase(&self) -> u8 {
        self.phase.load(Ordering::Relaxed)
    }

    /// A worker has finished its measure phase.
    fn finished(&self) {
        if let Some(start) = self.measure_start.get() {
            let ns = start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
            self.last_done_ns.fetch_max(ns.max(1), Ordering::SeqCst);
        }
        self.done.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a worker is asked to do.
pub struct WorkerPlan {
    pub index: usize,
    pub workers: usize,
    pub factory: SessionFactory,
    pub pacer: Pacer,
    /// This worker's share of `--ops`, if the step stops by op count.
    pub quota: Option<u64>,
    /// A step of fixed work: the session says when it has done its part
    /// ([`Session::exhausted`]).
    pub fixed: bool,
    pub interval: Duration,
}

/// What a worker hands back at the end of a step.
pub struct WorkerOutput {
    pub totals: WorkerTotals,
    pub figures: Figures,
    pub groups: Vec<GroupTotals>,
}

/// The worker's output, or why its session did not open or its step could not go on.
pub type WorkerResult = Result<WorkerOutput, OpError>;

/// Runs one worker to the end of the step. The thread is the worker's own (not scoped to the
/// trial), so a coordinator interrupted while this worker is stuck in an op can abandon it.
pub fn run(mut plan: WorkerPlan, shared: Arc<Shared>, tx: Sender<IntervalReport>) -> WorkerResult {
    let shared = &*shared;
    let opened = (plan.factory)(plan.index, plan.workers);
    if opened.is_err() {
        shared.setup_failed.store(true, Ordering::SeqCst);
    }
    shared.opened.fetch_add(1, Ordering::SeqCst);
    while shared.phase() == SETUP {
        std::thread::sleep(Duration::from_micros(100));
    }
    let mut session = opened?;
    if let Some(&origin) = shared.origin.get() {
        plan.pacer.start_at(origin);
    }
    if session.as_queued().is_some() {
        let mut kinds = Breakdown::default();
        let outcome = run_queued(&mut *session, &mut plan, shared, tx, &mut kinds);
        shared.finished();
        let totals = outcome?;
        let mut groups = kinds.groups;
        groups.extend(session.groups());
        return Ok(WorkerOutput {
            totals,
            figures: session.finish(),
            groups,
        });
    }

    // A session that sets its own pace (a terminal's keying and think times) waits before
    // each op in a closed loop; an open-loop schedule overrides it.
    let paced = session.paces() && !plan.pacer.is_open();
    // Warmup: ops run and are thrown away.
    while shared.phase() == WARMUP && !session.aborted() {
        // Peeked, not taken: a start the warmup's end interrupts belongs to the measure
        // phase (taking it here lost one start per worker at the edge).
        let intended = match plan.pacer.peek_intended() {
            None if paced => Some(Instant::now() + session.pace()),
            at => at,
        };
        if let Some(at) = intended
            && !wait_until(at, || shared.phase() == WARMUP)
        {
            break;
        }
        plan.pacer.next_intended();
        session.scheduled(intended.unwrap_or_else(Instant::now));
        let _ = session.execute();
        if session.wants_between() {
            session.between();
        }
        think(&plan.pacer, shared, WARMUP);
    }
    shared.warmed.fetch_add(1, Ordering::SeqCst);
    while shared.phase() < MEASURE {
        std::thread::sleep(Duration::from_micros(200));
    }
    let mut kinds = Breakdown::new(session.group());
    session.measuring();
    let totals = if shared.phase() == MEASURE {
        let start = *shared.measure_start.get().unwrap_or(&Instant::now());
        measure(
            &mut *session,
            &mut plan,
            shared,
            tx,
            start,
            &mut kinds,
            paced,
        )
    } else {
        WorkerTotals::default()
    };
    shared.measured.fetch_add(1, Ordering::SeqCst);
    shared.finished();
    let mut groups = kinds.groups;
    groups.extend(session.groups());
    Ok(WorkerOutput {
        totals,
        figures: session.finish(),
        groups,
    })
}

fn think(pacer: &Pacer, shared: &Shared, phase: u8) {
    let think = pacer.think();
    if !think.is_zero() {
        wait_until(Instant::now() + think, || shared.phase() == phase);
    }
}

/// One worker's measured ops by kind (`OpOutcome::kind`), for workloads with several:
/// response times per transaction type; and, when the session belongs to a group of its own
/// (`Session::group`: the shard its user routes to), all its ops in that group. Kinds are
/// few, so a short list searched by name.
#[derive(Default)]
struct Breakdown {
    groups: Vec<GroupTotals>,
    /// The session's own group: its index in `groups`.
    own: Option<usize>,
}

impl Breakdown {
    fn new(own: Option<(&'static str, String)>) -> Self {
        let mut b = Breakdown::default();
        if let Some((by, key)) = own {
            b.groups.push(group(by, key));
            b.own = Some(0);
        }
        b
    }

    /// The group of a kind, made on first sight.
    fn kind(&mut self, kind: &'static str) -> &mut GroupTotals {
        let at = match self
            .groups
            .iter()
            .position(|g| g.by == "kind" && g.key == kind)
        {
            Some(i) => i,
            None => {
                self.groups.push(group("kind", kind.to_string()));
                self.groups.len() - 1
            }
        };
        &mut self.groups[at]
    }

    /// Once per op, like `Recorder::record`: always inlined, whatever the heuristics say.
    #[inline(always)]
    fn record(&mut self, kind: &'static str, response: Duration, bytes: u64) {
        let ns = response.as_nanos() as u64;
        if let Some(i) = self.own {
            self.groups[i].ops += 1;
            self.groups[i].bytes += bytes;
            self.groups[i].latency.saturating_record(ns);
        }
        if !kind.is_empty() {
            let g = self.kind(kind);
            g.ops += 1;
            g.bytes += bytes;
            g.latency.saturating_record(ns);
        }
    }

    /// A failed op, of the kind the session says it was.
    #[inline]
    fn record_error(&mut self, kind: &'static str) {
        if let Some(i) = self.own {
            self.groups[i].errors += 1;
        }
        if !kind.is_empty() {
            self.kind(kind).errors += 1;
        }
    }
}

fn group(by: &'static str, key: String) -> GroupTotals {
    GroupTotals {
        by,
        label: key.clone(),
        key,
        ops: 0,
        bytes: 0,
        errors: 0,
        latency: new_histogram(),
        active: None,
    }
}

fn measure(
    session: &mut dyn Session,
    plan: &mut WorkerPlan,
    shared: &Shared,
    tx: Sender<IntervalReport>,
    measure_start: Instant,
    kinds: &mut Breakdown,
    paced: bool,
) -> WorkerTotals {
    let quota = plan.quota.unwrap_or(u64::MAX);
    let mut now = Instant::now();
    // A paced session keeps a schedule of its own: record how late each op started.
    let mut rec = Recorder::new(
        tx,
        plan.pacer.is_open() || paced,
        measure_start,
        plan.interval,
        now,
    );
    let mut done = 0u64;
    let has_think = !plan.pacer.think().is_zero();
    let between = session.wants_between();
    // pgbench's -L with -R: an op already this late when its turn comes is skipped.
    let skip_late = session.skip_late().filter(|_| plan.pacer.is_open());
    while done < quota
        && shared.phase() == MEASURE
        && !(plan.fixed && session.exhausted())
        && !session.aborted()
    {
        let due = match plan.pacer.next_intended() {
            None if paced => Some(now + session.pace()),
            at => at,
        };
        let intended = match due {
            Some(at) => {
                if !wait_until(at, || shared.phase() == MEASURE) {
                    break;
                }
                now = Instant::now();
                at
            }
            None => now,
        };
        if let Some(limit) = skip_late
            && now.saturating_duration_since(intended) > limit
        {
            // Counted toward --ops, as pgbench counts it toward -t.
            rec.record_skipped(now);
            session.skipped(intended);
            done += 1;
            continue;
        }
        let start = now;
        session.scheduled(intended);
        let outcome = session.execute();
        now = Instant::now();
        match outcome {
            Ok(o) => {
                rec.record(intended, start, now, o.items, o.bytes);
                kinds.record(o.kind, now.saturating_duration_since(intended), o.bytes);
            }
            Err(e) => {
                rec.record_error(intended, start, now, e.kind, &e.message);
                kinds.record_error(session.last_kind());
            }
        }
        done += 1;
        if between && done < quota && shared.phase() == MEASURE {
            session.between();
            now = Instant::now();
        }
        if has_think {
            wait_until(now + plan.pacer.think(), || shared.phase() == MEASURE);
            now = Instant::now();
        }
    }
    if done < quota && !session.aborted() {
        count_missed(&mut plan.pacer, shared, &mut rec);
    }
    rec.finish()
}

/// Open loop, once the measure phase has ended: the ops the schedule had due before its end
/// that never started (the worker was stuck in an op, or fell behind) are missed, each
/// recorded with its delay so far.
fn count_missed(pacer: &mut Pacer, shared: &Shared, rec: &mut Recorder) {
    let Some(&end) = shared.measure_end.get() else {
        return;
    };
    while let Some(at) = pacer.peek_intended()
        && at < end
    {
        pacer.next_intended();
        rec.record_missed(at, end);
    }
}

/// Runs a session that keeps several ops in flight through warmup and measure.
fn run_queued(
    session: &mut dyn Session,
    plan: &mut WorkerPlan,
    shared: &Shared,
    tx: Sender<IntervalReport>,
    kinds: &mut Breakdown,
) -> Result<WorkerTotals, OpError> {
    let Some(queue) = session.as_queued() else {
        return Ok(WorkerTotals::default());
    };
    let open = plan.pacer.is_open();
    let mut warm = WarmPump {
        shared,
        pacer: &mut plan.pacer,
    };
    let warmed = warmup_queued(queue, &mut warm, shared);
    shared.warmed.fetch_add(1, Ordering::SeqCst);
    if warmed.is_err() {
        shared.measured.fetch_add(1, Ordering::SeqCst);
    }
    warmed?;
    while shared.phase() < MEASURE {
        std::thread::sleep(Duration::from_micros(200));
    }
    if shared.phase() != MEASURE {
        shared.measured.fetch_add(1, Ordering::SeqCst);
        return Ok(WorkerTotals::default());
    }
    let start = *shared.measure_start.get().unwrap_or(&Instant::now());
    let now = Instant::now();
    let mut pump = MeasurePump {
        shared,
        pacer: &mut plan.pacer,
        rec: Recorder::new(tx, open, start, plan.interval, now),
        open,
        left: plan.quota.unwrap_or(u64::MAX),
        stamp: now,
        kinds,
    };
    while shared.phase() == MEASURE && (pump.left > 0 || queue.in_flight() > 0) {
        // A session that has done its part admits nothing more; it ends once what it has
        // in flight completes (in a timed step too: it ends before the time is up).
        if queue.exhausted() && queue.in_flight() == 0 {
            break;
        }
        if let Err(e) = queue.pump(&mut pump) {
            shared.measured.fetch_add(1, Ordering::SeqCst);
            return Err(e);
        }
        if queue.in_flight() == 0 {
            let due = pump.pacer.peek_intended();
            hold(&*queue, shared, MEASURE, due);
        }
    }
    // Ops still in flight when the phase ends complete and count: each was timed in full.
    let drained = drain(queue, &mut pump);
    if pump.left > 0 {
        count_missed(pump.pacer, shared, &mut pump.rec);
    }
    shared.measured.fetch_add(1, Ordering::SeqCst);
    drained?;
    queue.after(&mut pump)?;
    Ok(pump.rec.finish())
}

/// Runs the warmup of a queued session and waits for its ops to complete.
fn warmup_queued(
    queue: &mut dyn QueuedSession,
    warm: &mut WarmPump<'_>,
    shared: &Shared,
) -> Result<(), OpError> {
    while shared.phase() == WARMUP && !(queue.exhausted() && queue.in_flight() == 0) {
        queue.pump(warm)?;
        if queue.in_flight() == 0 {
            let due = warm.pacer.peek_intended();
            hold(&*queue, shared, WARMUP, due);
        }
    }
    drain(queue, warm)
}

/// Nothing in flight: sleeps until the next op may start, the later of the open-loop
/// schedule's next start (`due`) and the session's own ([`QueuedSession::resumes_at`]);
/// wakes early when the phase leaves `phase` or the session is done.
fn hold(queue: &dyn QueuedSession, shared: &Shared, phase: u8, due: Option<Instant>) {
    let at = match (due, queue.resumes_at()) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    if let Some(at) = at {
        wait_until(at, || shared.phase() == phase && !queue.exhausted());
    }
}

/// Waits for every op in flight, admitting none.
fn drain(queue: &mut dyn QueuedSession, inner: &mut dyn Pump) -> Result<(), OpError> {
    let mut closed = Closed { inner };
    while queue.in_flight() > 0 {
        queue.pump(&mut closed)?;
    }
    Ok(())
}

/// Admits nothing and blocks for completions; records through the pump it wraps.
struct Closed<'a> {
    inner: &'a mut dyn Pump,
}

impl Pump for Closed<'_> {
    fn admit(&mut self) -> Option<Instant> {
        None
    }
    fn may_block(&self) -> bool {
        true
    }
    fn done(&mut self, intended: Instant, start: Instant, end: Instant, outcome: OpResult<'_>) {
        self.inner.done(intended, start, end, outcome);
    }
    fn done_untimed(&mut self, at: Instant, outcome: OpResult<'_>) {
        self.inner.done_untimed(at, outcome);
    }
    fn fail(&mut self, cause: ErrorKind, message: &str) {
        self.inner.fail(cause, message);
    }
    fn measuring(&self) -> bool {
        self.inner.measuring()
    }
    fn open_loop(&self) -> bool {
        self.inner.open_loop()
    }
}

/// Warmup: ops run and are thrown away.
struct WarmPump<'a> {
    shared: &'a Shared,
    pacer: &'a mut Pacer,
}

impl Pump for WarmPump<'_> {
    fn next_due(&self) -> Option<Instant> {
        self.pacer.peek_intended()
    }

    fn admit(&mut self) -> Option<Instant> {
        if self.shared.phase() != WARMUP {
            return None;
        }
        match self.pacer.peek_intended() {
            Some(at) if at > Instant::now() => None,
            _ => Some(self.pacer.next_intended().unwrap_or_else(Instant::now)),
        }
    }
    fn may_block(&self) -> bool {
        !self.pacer.is_open()
    }
    fn open_loop(&self) -> bool {
        self.pacer.is_open()
    }
    fn done(&mut self, _: Instant, _: Instant, _: Instant, _: OpResult<'_>) {}
    fn done_untimed(&mut self, _: Instant, _: OpResult<'_>) {}
    fn fail(&mut self, _: ErrorKind, _: &str) {}
    fn measuring(&self) -> bool {
        false
    }
}

/// Measure: admission by phase, quota and schedule; every completion recorded.
struct MeasurePump<'a> {
    shared: &'a Shared,
    pacer: &'a mut Pacer,
    rec: Recorder,
    open: bool,
    /// Ops the `--ops` quota still allows.
    left: u64,
    /// The time of the latest completion, standing in for "now" in a closed loop, where the
    /// intended start is not used.
    stamp: Instant,
    /// Response times by kind of op, for sessions whose ops name one.
    kinds: &'a mut Breakdown,
}

impl Pump for MeasurePump<'_> {
    fn next_due(&self) -> Option<Instant> {
        self.pacer.peek_intended()
    }

    #[inline]
    fn admit(&mut self) -> Option<Instant> {
        if self.left == 0 || self.shared.phase() != MEASURE {
            return None;
        }
        let intended = if self.open {
            match self.pacer.peek_intended() {
                Some(at) if at > Instant::now() => return None,
                _ => self.pacer.next_intended()?,
            }
        } else {
            self.stamp
        };
        self.left -= 1;
        Some(intended)
    }

    fn may_block(&self) -> bool {
        !self.open
    }

    fn open_loop(&self) -> bool {
        self.open
    }

    #[inline]
    fn done(&mut self, intended: Instant, start: Instant, end: Instant, outcome: OpResult<'_>) {
        let intended = if self.open { intended } else { start };
        self.stamp = end;
        match outcome {
            Ok(o) => {
                self.rec.record(intended, start, end, o.items, o.bytes);
                if !o.kind.is_empty() {
                    self.kinds
                        .record(o.kind, end.saturating_duration_since(intended), o.bytes);
                }
            }
            Err(f) => {
                self.rec
                    .record_error(intended, start, end, f.cause, f.message);
                self.kinds.record_error(f.kind);
            }
        }
    }

    #[inline]
    fn done_untimed(&mut self, at: Instant, outcome: OpResult<'_>) {
        self.stamp = at;
        match outcome {
            Ok(o) => self.rec.record_untimed(at, o.items, o.bytes),
            Err(f) => {
                self.rec.record_failure(f.cause, f.message);
                self.kinds.record_error(f.kind);
            }
        }
    }

    fn fail(&mut self, cause: ErrorKind, message: &str) {
        self.rec.record_failure(cause, message);
    }
}
