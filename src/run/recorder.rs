//! What one worker records while it runs.
//!
//! The hot path is [`Recorder::record`]: one histogram update and four additions. Every
//! interval the worker hands its histogram and counters to the coordinator (one channel send
//! per second, not per op) and starts afresh, so a run of any length keeps the same memory.
//!
//! Each report also says the lowest interval the worker can still report on (`floor`): a
//! report announces the worker when it starts recording, every report after an interval ends
//! moves its floor on, and the last one says it is done. The coordinator merges an interval
//! into its series for good (and frees its histogram) once every worker is past it; an op that
//! takes many intervals holds its interval open until it ends.

use crate::record::ErrorKind;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// Ops later than this behind their intended start count as late starts (open loop).
pub const LATE_THRESHOLD: Duration = Duration::from_millis(1);
/// How many distinct error messages a worker keeps.
const ERROR_SAMPLES: usize = 5;

/// Sums over a stretch of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub ops: u64,
    pub items: u64,
    pub bytes: u64,
    pub errors: u64,
    /// Open loop: ops that fell due inside the measure phase but had not started when it
    /// ended.
    pub missed: u64,
    /// Open loop: ops not started because they were already later than the session's
    /// limit when their worker was ready ([`crate::workload::Session::skip_late`]).
    pub skipped: u64,
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.ops += other.ops;
        self.items += other.items;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.missed += other.missed;
        self.skipped += other.skipped;
    }
}

/// One worker's figures for one interval, sent to the coordinator.
pub struct IntervalReport {
    /// Which recorder sent it (unique in the process).
    pub worker: u64,
    pub index: u64,
    pub counts: Counts,
    pub response: LatencyHistogram,
    pub service: Option<LatencyHistogram>,
    /// The lowest interval this worker may still report on; `None`: it will send no more.
    pub floor: Option<u64>,
}

impl IntervalReport {
    /// Whether the report carries figures (announcements and farewells do not).
    pub fn is_empty(&self) -> bool {
        self.counts == Counts::default()
            && self.response.is_empty()
            && self.service.as_ref().is_none_or(|s| s.is_empty())
    }
}

/// Schedule lag of an open-loop worker.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lag {
    pub late: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
    pub count: u64,
}

/// What a worker returns at the end of a step, beyond its interval reports.
#[derive(Debug, Default)]
pub struct WorkerTotals {
    pub counts: Counts,
    /// From the start of the worker's first measured op to the end of its last.
    pub window: Duration,
    pub lag: Lag,
    pub error_samples: Vec<String>,
    /// The failed ops by kind, indexed by `ErrorKind::index`.
    pub errors_by_kind: ErrorCounts,
    /// How long the failed ops took (from the intended start), if any failed: a timeout
    /// after 5 s and an instant refusal are both errors, and only this tells them apart.
    pub error_latency: Option<LatencyHistogram>,
}

/// Per-worker measurement state for the measure phase of one step.
pub struct Recorder {
    tx: Sender<IntervalReport>,
    worker: u64,
    open_loop: bool,
    response: LatencyHistogram,
    service: Option<LatencyHistogram>,
    interval_counts: Counts,
    total: Counts,
    measure_start: Instant,
    interval: Duration,
    index: u64,
    next_tick: Instant,
    window_start: Instant,
    last_end: Instant,
    lag: Lag,
    error_samples: Vec<String>,
    errors_by_kind: ErrorCounts,
    error_latency: Option<LatencyHistogram>,
}

/// Failed ops by kind, indexed by `ErrorKind::index` (an array: no allocation per error).
pub type ErrorCounts = [u64; ErrorKind::ALL.len()];

impl Recorder {
    /// Starts recording. `measure_start` is shared by all workers so their intervals line up;
    /// `now` is when this worker's first measured op starts.
    pub fn new(
        tx: Sender<IntervalReport>,
        open_loop: bool,
        measure_start: Instant,
        interval: Duration,
        now: Instant,
    ) -> Self {
        static NEXT_WORKER: AtomicU64 = AtomicU64::new(0);
        let worker = NEXT_WORKER.fetch_add(1, Ordering::Relaxed);
        // A worker that sees the measure phase late starts in a later interval.
        let behind = now.saturating_duration_since(measure_start);
        let index = (behind.as_nanos() / interval.as_nanos().max(1)) as u64;
        // Announce this worker before it can report, so the coordinator keeps its intervals
        // open for it.
        let _ = tx.send(IntervalReport {
            worker,
            index,
            counts: Counts::default(),
            response: empty_histogram(),
            service: None,
            floor: Some(index),
        });
        Recorder {
            tx,
            worker,
            open_loop,
            response: new_histogram(),
            service: open_loop.then(new_histogram),
            interval_counts: Counts::default(),
            total: Counts::default(),
            measure_start,
            interval,
            index,
            next_tick: measure_start + interval * (index as u32 + 1),
            window_start: now,
            last_end: now,
            lag: Lag::default(),
            error_samples: Vec::new(),
            errors_by_kind: [0; ErrorKind::ALL.len()],
            error_latency: None,
        }
    }

    /// Records a successful op. `intended` equals `start` in a closed loop.
    ///
    /// Always inlined into the worker's loop: it runs once per op, and when an unrelated
    /// change elsewhere in the crate tipped LLVM's heuristics against inlining it (December
    /// 2026), the null target's ops cost ~46 more instructions each (callgrind).
    #[inline(always)]
    pub fn record(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        items: u64,
        bytes: u64,
    ) {
        let response = end.saturating_duration_since(intended).as_nanos() as u64;
        self.response.saturating_record(response);
        if self.open_loop {
            self.record_schedule(intended, start, end);
        }
        self.interval_counts.ops += 1;
        self.interval_counts.items += items;
        self.interval_counts.bytes += bytes;
        self.last_end = end;
        if end >= self.next_tick {
            self.tick(end);
        }
    }

    /// Records a successful op that was not timed (its session keeps no per-op latency):
    /// counted in the interval `at` falls in, with no response time. Ops recorded so have
    /// no share in the histograms, so a step of them alone has no latency figures (count 0),
    /// rather than made-up ones.
    #[inline(always)]
    pub fn record_untimed(&mut self, at: Instant, items: u64, bytes: u64) {
        self.interval_counts.ops += 1;
        self.interval_counts.items += items;
        self.interval_counts.bytes += bytes;
        self.last_end = at;
        if at >= self.next_tick {
            self.tick(at);
        }
    }

    /// Records a failed op: counted, its message sampled, its time in the errors' own
    /// histogram (not the response-time one, which is for ops that did their work).
    pub fn record_error(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        kind: ErrorKind,
        message: &str,
    ) {
        if self.open_loop {
            self.record_schedule(intended, start, end);
        }
        self.error_latency
            .get_or_insert_with(new_histogram)
            .saturating_record(end.saturating_duration_since(intended).as_nanos() as u64);
        self.interval_counts.errors += 1;
        self.errors_by_kind[kind.index()] += 1;
        if self.error_samples.len() < ERROR_SAMPLES
            && !self.error_samples.iter().any(|m| m == message)
        {
            self.error_samples.push(message.to_string());
        }
        self.last_end = end;
        if end >= self.next_tick {
            self.tick(end);
        }
    }

    /// Records an op of the open-loop schedule that fell due at `intended` but had not
    /// started when the measure phase ended at `end`: counted as missed, and its delay so far
    /// goes into the response-time histogram, since its response time is at least that.
    /// Leaving it out would hide a stall at the end of the window.
    pub fn record_missed(&mut self, intended: Instant, end: Instant) {
        let delay = end.saturating_duration_since(intended).as_nanos() as u64;
        self.response.saturating_record(delay);
        self.interval_counts.missed += 1;
    }

    /// Records an op of the open-loop schedule skipped at `at`: already later than the
    /// session's limit when its worker was ready (pgbench's `-L` with `-R`). Counted apart,
    /// with no time: it was never started.
    pub fn record_skipped(&mut self, at: Instant) {
        self.interval_counts.skipped += 1;
        if at >= self.next_tick {
            self.tick(at);
        }
    }

    /// Records a failure found outside any op (a verify pass after the measure phase): an
    /// error with its message, in the last interval, leaving the op window as it is.
    pub fn record_failure(&mut self, kind: ErrorKind, message: &str) {
        self.interval_counts.errors += 1;
        self.errors_by_kind[kind.index()] += 1;
        if self.error_samples.len() < ERROR_SAMPLES
            && !self.error_samples.iter().any(|m| m == message)
        {
            self.error_samples.push(message.to_string());
        }
    }

    fn record_schedule(&mut self, intended: Instant, start: Instant, end: Instant) {
        if let Some(service) = &mut self.service {
            service.saturating_record(end.saturating_duration_since(start).as_nanos() as u64);
        }
        let lag = start.saturating_duration_since(intended);
        let lag_ns = lag.as_nanos() as u64;
        self.lag.count += 1;
        self.lag.sum_ns += lag_ns as u128;
        self.lag.max_ns = self.lag.max_ns.max(lag_ns);
        if lag > LATE_THRESHOLD {
            self.lag.late += 1;
        }
    }

    /// Hands the finished interval to the coordinator and starts the next one (skipping any
    /// intervals in which this worker completed nothing).
    fn tick(&mut self, now: Instant) {
        let since = now.saturating_duration_since(self.measure_start);
        let next = (since.as_nanos() / self.interval.as_nanos().max(1)) as u64;
        self.flush(Some(next));
        self.index = next;
        self.next_tick = self.measure_start + self.interval * (self.index as u32 + 1);
    }

    /// Sends the interval's figures; `floor` is the interval the worker goes on to, if any.
    fn flush(&mut self, floor: Option<u64>) {
        let fresh = self.open_loop.then(new_histogram);
        let report = IntervalReport {
            worker: self.worker,
            index: self.index,
            counts: self.interval_counts,
            response: std::mem::replace(&mut self.response, new_histogram()),
            service: std::mem::replace(&mut self.service, fresh),
            floor,
        };
        self.total.add(&self.interval_counts);
        self.interval_counts = Counts::default();
        // The coordinator outlives its workers; a send can only fail if it gave up, and then
        // there is nobody left to tell.
        let _ = self.tx.send(report);
    }

    /// Ends recording: flushes the last, partial interval (or just says it is done) and
    /// returns the totals.
    pub fn finish(mut self) -> WorkerTotals {
        if self.interval_counts != Counts::default() {
            self.flush(None);
        } else {
            let _ = self.tx.send(IntervalReport {
                worker: self.worker,
                index: self.index,
                counts: Counts::default(),
                response: empty_histogram(),
                service: None,
                floor: None,
            });
        }
        WorkerTotals {
            counts: self.total,
            window: self.last_end.saturating_duration_since(self.window_start),
            lag: self.lag,
            error_samples: std::mem::take(&mut self.error_samples),
            errors_by_kind: self.errors_by_kind,
            error_latency: self.error_latency.take(),
        }
    }
}

/// A histogram for reports without figures: empty, and small (the coordinator never adds it).
fn empty_histogram() -> LatencyHistogram {
    LatencyHistogram::new(1).expect("a histogram of one significant digit")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn intervals_are_flushed_and_totals_kept() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(tx, false, t0, ms(100), t0);
        r.record(t0, t0, t0 + ms(10), 1, 8);
        r.record(t0 + ms(10), t0 + ms(10), t0 + ms(20), 1, 8);
        r.record(t0 + ms(20), t0 + ms(20), t0 + ms(150), 1, 8); // crosses into interval 1
        r.record_error(t0, t0 + ms(150), t0 + ms(160), ErrorKind::Timeout, "boom");
        r.record_error(t0, t0 + ms(160), t0 + ms(170), ErrorKind::Timeout, "boom");
        let totals = r.finish();
        let all: Vec<_> = rx.try_iter().collect();
        // First the announcement: starting at interval 0, no figures.
        assert!(all[0].is_empty());
        assert_eq!((all[0].index, all[0].floor), (0, Some(0)));
        let reports = &all[1..];
        assert_eq!(reports.len(), 2);
        assert_eq!((reports[0].index, reports[0].counts.ops), (0, 3));
        assert_eq!(reports[0].floor, Some(1), "moved on to interval 1");
        assert_eq!((reports[1].index, reports[1].counts.errors), (1, 2));
        assert_eq!(
            reports[1].floor, None,
            "the last report says it is the last"
        );
        assert!(all.iter().all(|r| r.worker == all[0].worker));
        assert_eq!(totals.counts.ops, 3);
        assert_eq!(totals.counts.bytes, 24);
        assert_eq!(totals.counts.errors, 2);
        assert_eq!(totals.error_samples, vec!["boom".to_string()]);
        assert_eq!(totals.window, ms(170));
    }

    #[test]
    fn untimed_ops_are_counted_without_a_response_time() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(tx, false, t0, ms(100), t0);
        r.record(t0, t0, t0 + ms(10), 1, 8);
        r.record_untimed(t0 + ms(20), 1, 8);
        r.record_untimed(t0 + ms(150), 1, 8); // ends interval 0, as a timed op would
        r.record_untimed(t0 + ms(160), 1, 8);
        let totals = r.finish();
        let reports: Vec<_> = rx.try_iter().filter(|r| !r.is_empty()).collect();
        assert_eq!((reports[0].counts.ops, reports[0].response.len()), (3, 1));
        assert_eq!((reports[1].index, reports[1].counts.ops), (1, 1));
        assert!(reports[1].response.is_empty(), "no response time made up");
        assert_eq!(totals.counts.ops, 4);
        assert_eq!(totals.window, ms(160));
    }

    #[test]
    fn missed_ops_count_apart_with_their_delay_and_errors_keep_their_time() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(tx, true, t0, ms(1000), t0);
        r.record(t0, t0, t0 + ms(1), 1, 0);
        r.record_error(
            t0 + ms(1),
            t0 + ms(1),
            t0 + ms(6),
            ErrorKind::Refused,
            "refused",
        );
        r.record_missed(t0 + ms(700), t0 + ms(1000));
        let totals = r.finish();
        let report = rx.try_iter().find(|r| !r.is_empty()).unwrap();
        assert_eq!((report.counts.ops, report.counts.missed), (1, 1));
        assert_eq!(totals.counts.missed, 1);
        // The missed op waited 300 ms so far: in the response times, not in the ops.
        assert_eq!(report.response.len(), 2);
        assert_eq!(
            report.response.max(),
            report.response.highest_equivalent(300_000_000)
        );
        let errors = totals.error_latency.unwrap();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors.max(), errors.highest_equivalent(5_000_000));
    }

    #[test]
    fn open_loop_counts_late_starts_from_the_schedule() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(tx, true, t0, ms(1000), t0);
        r.record(t0, t0, t0 + ms(1), 1, 0); // on time
        r.record(t0 + ms(2), t0 + ms(7), t0 + ms(8), 1, 0); // 5 ms late
        let totals = r.finish();
        assert_eq!(totals.lag.late, 1);
        assert_eq!(totals.lag.max_ns, 5_000_000);
        let report = rx.try_iter().find(|r| !r.is_empty()).unwrap();
        // Response time counts from the intended start, service time from the actual start.
        let h = &report.response;
        assert_eq!(h.max(), h.highest_equivalent(6_000_000));
        let service = report.service.as_ref().unwrap();
        assert_eq!(service.max(), service.highest_equivalent(1_000_000));
    }

    #[test]
    fn a_worker_with_nothing_left_to_flush_still_says_it_is_done() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(tx, false, t0, ms(100), t0 + ms(250));
        r.record(t0 + ms(250), t0 + ms(250), t0 + ms(310), 1, 0); // ends interval 2
        r.finish();
        let all: Vec<_> = rx.try_iter().collect();
        let seen: Vec<_> = all
            .iter()
            .map(|r| (r.index, r.floor, r.is_empty()))
            .collect();
        assert_eq!(
            seen,
            [(2, Some(2), true), (2, Some(3), false), (3, None, true)],
            "announced at its late start, moved on, then done"
        );
        // Two recorders are told apart.
        let (tx, rx) = channel();
        let a = Recorder::new(tx.clone(), false, t0, ms(100), t0);
        let b = Recorder::new(tx, false, t0, ms(100), t0);
        drop((a, b));
        let ids: Vec<u64> = rx.try_iter().map(|r| r.worker).collect();
        assert_ne!(ids[0], ids[1]);
    }
}
