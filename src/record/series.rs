//! Merges the workers' interval reports into a step's histograms and time series.

use super::histogram::{LatencyHistogram, new_histogram};
use super::recorder::{Counts, IntervalReport};
use super::types::IntervalPoint;
use std::collections::BTreeMap;
use std::time::Duration;

/// Collects interval reports from all workers of one step.
pub struct SeriesBuilder {
    interval: Duration,
    /// Per interval index: merged counts and histogram (only p50/p99/max survive the step).
    pending: BTreeMap<u64, (Counts, LatencyHistogram)>,
    pub response: LatencyHistogram,
    pub service: Option<LatencyHistogram>,
    pub total: Counts,
}

impl SeriesBuilder {
    pub fn new(interval: Duration, open_loop: bool) -> Self {
        SeriesBuilder {
            interval,
            pending: BTreeMap::new(),
            response: new_histogram(),
            service: open_loop.then(new_histogram),
            total: Counts::default(),
        }
    }

    pub fn add(&mut self, report: IntervalReport) {
        // Adding histograms of equal bounds cannot fail.
        let _ = self.response.add(&report.response);
        if let (Some(all), Some(part)) = (&mut self.service, &report.service) {
            let _ = all.add(part);
        }
        self.total.add(&report.counts);
        let entry = self
            .pending
            .entry(report.index)
            .or_insert_with(|| (Counts::default(), new_histogram()));
        entry.0.add(&report.counts);
        let _ = entry.1.add(&report.response);
    }

    /// Ops completed in the most recent interval that has any, with its index; for live progress.
    pub fn latest(&self) -> Option<(u64, Counts)> {
        self.pending.iter().next_back().map(|(&i, (c, _))| (i, *c))
    }

    /// The series, given how long the measure phase lasted (the last interval may be partial).
    pub fn points(&self, measured: Duration) -> Vec<IntervalPoint> {
        let interval_ns = self.interval.as_nanos() as u64;
        let measured_ns = measured.as_nanos() as u64;
        let last = self.pending.keys().next_back().copied().unwrap_or(0);
        (0..=last)
            .filter(|&i| i * interval_ns < measured_ns.max(1) || self.pending.contains_key(&i))
            .map(|i| {
                let start_ns = i * interval_ns;
                let duration_ns = interval_ns.min(measured_ns.saturating_sub(start_ns)).max(1);
                let secs = duration_ns as f64 / 1e9;
                match self.pending.get(&i) {
                    Some((c, h)) => IntervalPoint {
                        start_ns,
                        duration_ns,
                        ops: c.ops,
                        errors: c.errors,
                        ops_per_sec: c.ops as f64 / secs,
                        bytes_per_sec: c.bytes as f64 / secs,
                        p50_ns: if h.is_empty() {
                            0
                        } else {
                            h.value_at_quantile(0.5)
                        },
                        p99_ns: if h.is_empty() {
                            0
                        } else {
                            h.value_at_quantile(0.99)
                        },
                        max_ns: if h.is_empty() { 0 } else { h.max() },
                        missed: c.missed,
                    },
                    // A stall: no worker finished anything in this interval. Keep the zero.
                    None => IntervalPoint {
                        start_ns,
                        duration_ns,
                        ..Default::default()
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(index: u64, ops: u64, latency: u64) -> IntervalReport {
        let mut response = new_histogram();
        for _ in 0..ops {
            response.saturating_record(latency);
        }
        IntervalReport {
            index,
            counts: Counts {
                ops,
                items: ops,
                bytes: ops * 10,
                errors: 0,
                missed: 0,
            },
            response,
            service: None,
        }
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
