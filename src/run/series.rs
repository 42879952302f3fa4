//! Merges the workers' interval reports into a step's histograms and time series.
//!
//! An interval's histogram is needed only until every worker has reported on it: then its
//! p50, p99 and max are taken and the histogram (264 KiB at perflab's bounds) is freed, so a
//! step of any length holds a few histograms, not one per interval. Workers say how far they
//! are in each report (`IntervalReport::floor`, see `recorder`).

use super::recorder::{Counts, IntervalReport};
use crate::record::IntervalPoint;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// What survives of an interval: the point of the series, before it is scaled to a rate.
#[derive(Debug, Clone, Copy, Default)]
struct Closed {
    counts: Counts,
    /// Latencies in the interval's histogram.
    timed: u64,
    p50_ns: u64,
    p99_ns: u64,
    max_ns: u64,
}

impl Closed {
    fn point(&self, start_ns: u64, duration_ns: u64) -> IntervalPoint {
        let secs = duration_ns as f64 / 1e9;
        IntervalPoint {
            start_ns,
            duration_ns,
            ops: self.counts.ops,
            errors: self.counts.errors,
            ops_per_sec: self.counts.ops as f64 / secs,
            bytes_per_sec: self.counts.bytes as f64 / secs,
            p50_ns: self.p50_ns,
            p99_ns: self.p99_ns,
            max_ns: self.max_ns,
            latency_count: Some(self.timed),
            missed: self.counts.missed,
        }
    }

    fn of(counts: Counts, h: &LatencyHistogram) -> Closed {
        if h.is_empty() {
            return Closed {
                counts,
                ..Default::default()
            };
        }
        Closed {
            counts,
            timed: h.len(),
            p50_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
            max_ns: h.max(),
        }
    }
}

/// Collects interval reports from all workers of one step.
pub struct SeriesBuilder {
    interval: Duration,
    /// Intervals a worker may still report on: merged counts and histogram.
    open: BTreeMap<u64, (Counts, LatencyHistogram)>,
    /// Intervals every worker is past.
    closed: BTreeMap<u64, Closed>,
    /// For each worker still recording, the lowest interval it may still report on.
    floors: HashMap<u64, u64>,
    pub response: LatencyHistogram,
    pub service: Option<LatencyHistogram>,
    pub total: Counts,
    /// Intervals closed since [`SeriesBuilder::take_closed`] last ran, with their histograms,
    /// for live outputs; None when nobody watches (the histograms are dropped at once).
    fresh: Option<Vec<ClosedInterval>>,
}

/// An interval every worker is past, as live outputs see it: its counts and its histogram
/// of response times. Ops a late worker adds afterwards are in the trial's totals, not here.
pub struct ClosedInterval {
    pub index: u64,
    pub counts: Counts,
    pub histogram: LatencyHistogram,
}

impl SeriesBuilder {
    pub fn new(interval: Duration, open_loop: bool) -> Self {
        SeriesBuilder {
            interval,
            open: BTreeMap::new(),
            closed: BTreeMap::new(),
            floors: HashMap::new(),
            response: new_histogram(),
            service: open_loop.then(new_histogram),
            total: Counts::default(),
            fresh: None,
        }
    }

    /// Keeps each interval's histogram when it closes, until [`SeriesBuilder::take_closed`].
    pub fn watch(&mut self) {
        self.fresh.get_or_insert_with(Vec::new);
    }

    /// The intervals closed since the last call, oldest first.
    pub fn take_closed(&mut self) -> Vec<ClosedInterval> {
        self.fresh.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The phase is over and every worker has reported: closes what is still open.
    pub fn close_all(&mut self) {
        while let Some((index, (counts, h))) = self.open.pop_first() {
            self.retire(index, counts, h);
        }
    }

    /// Keeps what survives of an interval; hands its histogram to a watcher, if any.
    fn retire(&mut self, index: u64, counts: Counts, h: LatencyHistogram) {
        self.closed.insert(index, Closed::of(counts, &h));
        if let Some(fresh) = &mut self.fresh {
            fresh.push(ClosedInterval {
                index,
                counts,
                histogram: h,
            });
        }
    }

    /// Interval `index` as a point of the series, given how long the measure phase lasted
    /// (None: still going, so the interval is whole).
    pub fn point(&self, index: u64, measured: Option<Duration>) -> IntervalPoint {
        let interval_ns = self.interval.as_nanos() as u64;
        let start_ns = index * interval_ns;
        let duration_ns = match measured {
            Some(m) => interval_ns.min((m.as_nanos() as u64).saturating_sub(start_ns)),
            None => interval_ns,
        }
        .max(1);
        let c = self.closed.get(&index).copied().unwrap_or_default();
        c.point(start_ns, duration_ns)
    }

    pub fn add(&mut self, report: IntervalReport) {
        if !report.is_empty() {
            self.merge(&report);
        }
        match report.floor {
            Some(floor) => self.floors.insert(report.worker, floor),
            None => self.floors.remove(&report.worker),
        };
        self.close();
    }

    fn merge(&mut self, report: &IntervalReport) {
        // Adding histograms of equal bounds cannot fail.
        let _ = self.response.add(&report.response);
        if let (Some(all), Some(part)) = (&mut self.service, &report.service) {
            let _ = all.add(part);
        }
        self.total.add(&report.counts);
        if let Some(closed) = self.closed.get_mut(&report.index) {
            // Only a worker that announced itself more than an interval after reading the
            // clock can get here (see `close`): its counts and max still count exactly, its
            // latencies are in the step's histogram but not in this point's p50 and p99.
            closed.counts.add(&report.counts);
            if !report.response.is_empty() {
                closed.max_ns = closed.max_ns.max(report.response.max());
            }
            return;
        }
        let entry = self
            .open
            .entry(report.index)
            .or_insert_with(|| (Counts::default(), new_histogram()));
        entry.0.add(&report.counts);
        let _ = entry.1.add(&report.response);
    }

    /// Closes the intervals every worker still recording is past, less one: a worker reads
    /// the clock before it announces itself, so one that starts just before an interval ends
    /// may be heard of just after. With nobody recording, the step is ending: `points` reads
    /// what is left.
    fn close(&mut self) {
        let Some(&lowest) = self.floors.values().min() else {
            return;
        };
        while let Some(entry) = self.open.first_entry() {
            if *entry.key() + 1 >= lowest {
                break;
            }
            let (index, (counts, h)) = entry.remove_entry();
            self.retire(index, counts, h);
        }
    }

    /// Ops completed in the most recent interval that has any, with its index; for live progress.
    pub fn latest(&self) -> Option<(u64, Counts)> {
        let open = self.open.iter().next_back().map(|(&i, (c, _))| (i, *c));
        let closed = self.closed.iter().next_back().map(|(&i, c)| (i, c.counts));
        open.into_iter().chain(closed).max_by_key(|&(i, _)| i)
    }

    /// The series, given how long the measure phase lasted (the last interval may be partial).
    pub fn points(&self, measured: Duration) -> Vec<IntervalPoint> {
        let interval_ns = self.interval.as_nanos() as u64;
        let measured_ns = measured.as_nanos() as u64;
        let last = self
            .open
            .keys()
            .next_back()
            .into_iter()
            .chain(self.closed.keys().next_back())
            .copied()
            .max()
            .unwrap_or(0)
            // A stall to the end (or a step with no op at all, as active idle) still covers
            // the measured time with zero intervals.
            .max(measured_ns.saturating_sub(1) / interval_ns.max(1));
        let at = |i: u64| -> Option<Closed> {
            self.closed
                .get(&i)
                .copied()
                .or_else(|| self.open.get(&i).map(|(c, h)| Closed::of(*c, h)))
        };
        (0..=last)
            .filter_map(|i| {
                let found = at(i);
                if i * interval_ns >= measured_ns.max(1) && found.is_none() {
                    return None;
                }
                let start_ns = i * interval_ns;
                let duration_ns = interval_ns.min(measured_ns.saturating_sub(start_ns)).max(1);
                // A stall (no worker finished anything in this interval) keeps its zero.
                Some(found.unwrap_or_default().point(start_ns, duration_ns))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(index: u64, ops: u64, latency: u64) -> IntervalReport {
        from(0, index, ops, latency, Some(index + 1))
    }

    /// A report of worker `worker` on interval `index`, after which it is at `floor`.
    fn from(worker: u64, index: u64, ops: u64, latency: u64, floor: Option<u64>) -> IntervalReport {
        let mut response = new_histogram();
        for _ in 0..ops {
            response.saturating_record(latency);
        }
        IntervalReport {
            worker,
            index,
            counts: Counts {
                ops,
                items: ops,
                bytes: ops * 10,
                errors: 0,
                missed: 0,
                skipped: 0,
            },
            response,
            service: None,
            floor,
        }
    }

    /// Two workers over 1000 intervals: the series is the same as if every histogram had
    /// been kept, but only the intervals a worker may still report on keep one.
    #[test]
    fn closed_intervals_keep_their_points_and_free_their_histograms() {
        let mut s = SeriesBuilder::new(Duration::from_secs(1), false);
        s.add(from(0, 0, 0, 0, Some(0)));
        s.add(from(1, 0, 0, 0, Some(0)));
        for i in 0..1000 {
            s.add(from(0, i, 100, 1000 + i, Some(i + 1)));
            s.add(from(1, i, 50, 5000 + i, Some(i + 1)));
            assert!(s.open.len() <= 2, "interval {i}: {} open", s.open.len());
        }
        // Worker 1 is stuck in a long op from interval 1000 on: its interval stays open.
        for i in 1000..1010 {
            s.add(from(0, i, 100, 1000, Some(i + 1)));
        }
        assert!(s.open.contains_key(&1000) && s.open.len() >= 10);
        s.add(from(1, 1000, 1, 9_000_000, None));
        s.add(from(0, 1010, 100, 1000, None));
        let points = s.points(Duration::from_secs(1011));
        assert_eq!(points.len(), 1011);
        let p = &points[500];
        assert_eq!(p.ops, 150);
        assert_eq!(p.p50_ns, s.response.highest_equivalent(1500));
        assert_eq!(p.p99_ns, s.response.highest_equivalent(5500));
        assert_eq!(p.max_ns, s.response.highest_equivalent(5500));
        // The stuck worker's op is in its interval, as before.
        assert_eq!(
            points[1000].max_ns,
            s.response.highest_equivalent(9_000_000)
        );
        assert_eq!(points[1000].ops, 101);
        assert_eq!(s.total.ops, 1000 * 150 + 10 * 100 + 1 + 100);
        assert_eq!(s.latest().map(|(i, _)| i), Some(1010));
    }

    /// A worker that starts late is announced before it reports, and holds its intervals open.
    #[test]
    fn a_late_worker_holds_its_intervals_open() {
        let mut s = SeriesBuilder::new(Duration::from_secs(1), false);
        s.add(from(0, 0, 0, 0, Some(0)));
        for i in 0..5 {
            s.add(from(0, i, 10, 1000, Some(i + 1)));
        }
        s.add(from(1, 5, 0, 0, Some(5))); // starts in interval 5
        for i in 5..8 {
            s.add(from(0, i, 10, 1000, Some(i + 1)));
        }
        assert!(s.open.contains_key(&5), "worker 1 may still report on 5");
        s.add(from(1, 5, 3, 7000, Some(8)));
        let points = s.points(Duration::from_secs(8));
        assert_eq!(points[5].ops, 13);
        assert_eq!(points[5].max_ns, s.response.highest_equivalent(7000));
    }

    #[test]
    fn a_step_without_ops_covers_its_time() {
        let s = SeriesBuilder::new(Duration::from_secs(1), true);
        let points = s.points(Duration::from_millis(3500));
        assert_eq!(points.len(), 4);
        assert!(points.iter().all(|p| p.ops == 0));
        assert_eq!(points[3].duration_ns, 500_000_000);
    }

    #[test]
    fn merges_workers_and_shows_stalls() {
        let mut s = SeriesBuilder::new(Duration::from_secs(1), false);
        s.add(report(0, 100, 1000));
        s.add(report(0, 50, 3000));
        s.add(report(2, 10, 1000));
        let points = s.points(Duration::from_millis(2500));
        assert_eq!(points.len(), 3);
        assert_eq!(points[0].ops, 150);
        assert_eq!(points[1].ops, 0, "a stall shows as an empty interval");
        assert_eq!(points[2].duration_ns, 500_000_000);
        assert!((points[2].ops_per_sec - 20.0).abs() < 1e-9);
        assert_eq!(s.total.ops, 160);
        assert_eq!(s.response.len(), 160);
        assert_eq!(points[0].max_ns, s.response.highest_equivalent(3000));
    }
}
