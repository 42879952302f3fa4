//! One worker thread: open its session, then issue ops through the phases of a step.
//!
//! The phase is one shared atomic the coordinator moves forward (setup, warmup, measure,
//! stop); a worker reads it once per op. The measure loop is the hot path: one clock read
//! per op in a closed loop (the end of one op is the start of the next), one histogram update.

use super::pacer::{Pacer, wait_until};
use crate::record::recorder::{IntervalReport, Recorder, WorkerTotals};
use crate::workload::{Figures, OpError, Session, SessionFactory};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

pub const SETUP: u8 = 0;
pub const WARMUP: u8 = 1;
pub const MEASURE: u8 = 2;
pub const STOP: u8 = 3;

/// State the coordinator shares with its workers for one trial.
pub struct Shared {
    pub phase: AtomicU8,
    /// Set by the coordinator just before it moves the phase to MEASURE.
    pub measure_start: OnceLock<Instant>,
    /// All workers and the coordinator meet here once every session is open.
    pub ready: Barrier,
    /// Workers that have finished their measure phase (ops quota reached or stopped).
    pub done: AtomicUsize,
    /// Set by a worker whose session did not open, before the workers meet.
    pub setup_failed: AtomicBool,
}

impl Shared {
    pub fn new(workers: usize) -> Self {
        Shared {
            phase: AtomicU8::new(SETUP),
            measure_start: OnceLock::new(),
            ready: Barrier::new(workers + 1),
            done: AtomicUsize::new(0),
            setup_failed: AtomicBool::new(false),
        }
    }

    #[inline]
    fn phase(&self) -> u8 {
        self.phase.load(Ordering::Relaxed)
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
    pub interval: Duration,
}

/// The worker's result: its totals and session figures, or why its session did not open.
pub type WorkerResult = Result<(WorkerTotals, Figures), OpError>;

/// Runs one worker to the end of the step.
pub fn run(mut plan: WorkerPlan, shared: &Shared, tx: Sender<IntervalReport>) -> WorkerResult {
    let opened = (plan.factory)(plan.index, plan.workers);
    if opened.is_err() {
        shared.setup_failed.store(true, Ordering::SeqCst);
    }
    shared.ready.wait();
    let mut session = opened?;

    // Warmup: ops run and are thrown away.
    while shared.phase() == WARMUP {
        let intended = plan.pacer.next_intended();
        if let Some(at) = intended
            && !wait_until(at, || shared.phase() == WARMUP)
        {
            break;
        }
        let _ = session.execute();
        think(&plan.pacer, shared, WARMUP);
    }
    while shared.phase() < MEASURE {
        std::thread::sleep(Duration::from_micros(200));
    }
    let totals = if shared.phase() == MEASURE {
        let start = *shared.measure_start.get().unwrap_or(&Instant::now());
        measure(&mut *session, &mut plan, shared, tx, start)
    } else {
        WorkerTotals::default()
    };
    shared.done.fetch_add(1, Ordering::SeqCst);
    Ok((totals, session.finish()))
}

fn think(pacer: &Pacer, shared: &Shared, phase: u8) {
    let think = pacer.think();
    if !think.is_zero() {
        wait_until(Instant::now() + think, || shared.phase() == phase);
    }
}

fn measure(
    session: &mut dyn Session,
    plan: &mut WorkerPlan,
    shared: &Shared,
    tx: Sender<IntervalReport>,
    measure_start: Instant,
) -> WorkerTotals {
    let quota = plan.quota.unwrap_or(u64::MAX);
    let mut now = Instant::now();
    let mut rec = Recorder::new(tx, plan.pacer.is_open(), measure_start, plan.interval, now);
    let mut done = 0u64;
    let has_think = !plan.pacer.think().is_zero();
    while done < quota && shared.phase() == MEASURE {
        let intended = match plan.pacer.next_intended() {
            Some(at) => {
                if !wait_until(at, || shared.phase() == MEASURE) {
                    break;
                }
                now = Instant::now();
                at
            }
            None => now,
        };
        let start = now;
        let outcome = session.execute();
        now = Instant::now();
        match outcome {
            Ok(o) => rec.record(intended, start, now, o.items, o.bytes),
            Err(e) => rec.record_error(intended, start, now, &e.0),
        }
        done += 1;
        if has_think {
            wait_until(now + plan.pacer.think(), || shared.phase() == MEASURE);
            now = Instant::now();
        }
    }
    rec.finish()
}
