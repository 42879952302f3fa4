//! fio's steady state for a job file's jobs (`steadystate`, `ss_dur`, `ss_ramp`,
//! `ss_interval`), with fio's meaning (steadystate.c):
//!
//! - every `ss_interval` the job's I/Os a second, bytes a second and mean completion
//!   latency over the interval just ended make one sample; samples start once `ss_ramp` has
//!   passed (the first counted interval is the one that ends `ss_ramp + ss_interval` after
//!   the job's start);
//! - the last `ss_dur / ss_interval` samples are the rolling window; once it is full, each
//!   new sample computes the criterion over it: `iops`, `bw`, `lat` the largest distance of a
//!   sample from the window's mean, `iops_slope`, `bw_slope`, `lat_slope` the least-squares
//!   slope of the samples (per interval); with `%` either is a percent of the window's mean;
//! - steady state is attained when the criterion (the slope's size) is below the limit; the
//!   job then ends, or, with `group_reporting`, its whole reporting group, whose jobs are
//!   sampled together (fio sums the group's copies into one sample).
//!
//! Where it differs from fio: a sample's rates are over the time since the previous sample
//! as measured (fio scales the count by that time over the interval squared, the same when
//! its helper thread wakes on time); samples are taken by whichever copy first sees an
//! interval end (fio has a helper thread), so one may come up to one I/O (or 20 ms of an
//! idle copy) late; the latency limit is taken as the time it says (fio's newest versions
//! compare its microseconds with nanoseconds).
//!
//! [`SteadyMonitor`] is what the copies share; [`Window`] is the arithmetic, on its own.

use super::fio::job::{SsCriterion, SteadyState};
use crate::record::SteadyStateResult;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// One sample: the interval's I/Os a second, bytes a second and mean completion latency (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    pub iops: u64,
    pub bw: u64,
    pub lat_ns: u64,
}

/// The rolling window and the criterion over it.
#[derive(Debug, Clone)]
pub struct Window {
    criterion: SsCriterion,
    /// The limit in the samples' unit (latency in ns), or a percent.
    limit: f64,
    percent: bool,
    /// Samples the window holds when full.
    n: usize,
    samples: VecDeque<Sample>,
    /// The criterion's value at the last evaluation, and what it was computed from.
    pub value: f64,
    pub max_deviation: f64,
    pub slope: f64,
}

impl Window {
    pub fn new(ss: &SteadyState) -> Window {
        let n = (ss.dur.as_micros() / ss.interval.as_micros().max(1)).max(2) as usize;
        let lat = matches!(ss.criterion, SsCriterion::Lat | SsCriterion::LatSlope);
        Window {
            criterion: ss.criterion,
            // The reader keeps a latency limit in microseconds; samples are in ns.
            limit: if lat && !ss.percent {
                ss.limit * 1000.0
            } else {
                ss.limit
            },
            percent: ss.percent,
            n,
            samples: VecDeque::with_capacity(n + 1),
            value: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
        }
    }

    fn slope_kind(&self) -> bool {
        matches!(
            self.criterion,
            SsCriterion::IopsSlope | SsCriterion::BwSlope | SsCriterion::LatSlope
        )
    }

    fn y(&self, s: &Sample) -> f64 {
        match self.criterion {
            SsCriterion::Iops | SsCriterion::IopsSlope => s.iops as f64,
            SsCriterion::Bw | SsCriterion::BwSlope => s.bw as f64,
            SsCriterion::Lat | SsCriterion::LatSlope => s.lat_ns as f64,
        }
    }

    /// Adds a sample; true when the window is full and the criterion is below the limit.
    pub fn push(&mut self, s: Sample) -> bool {
        self.samples.push_back(s);
        if self.samples.len() > self.n {
            self.samples.pop_front();
        }
        if self.samples.len() < self.n {
            return false;
        }
        let n = self.n as f64;
        let ys: Vec<f64> = self.samples.iter().map(|s| self.y(s)).collect();
        let sum_y: f64 = ys.iter().sum();
        let mean = sum_y / n;
        let of_mean = |v: f64| if self.percent { 100.0 * v / mean } else { v };
        if self.slope_kind() {
            // Least squares over x = 0, 1, ..., n-1 (oldest first), as fio assumes the
            // samples equally spaced.
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_xy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
            self.slope = (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n);
            self.value = of_mean(self.slope);
        } else {
            self.max_deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.value = of_mean(self.max_deviation);
        }
        // A window of nothing (mean 0) has no percent: never steady.
        if !self.value.is_finite() {
            self.value = 0.0;
            return false;
        }
        self.value.abs() < self.limit
    }

    /// The window, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }
}

/// The counters at the previous sample, and the window.
struct Sampling {
    at_ns: u64,
    ios: u64,
    bytes: u64,
    lat_sum: u64,
    window: Window,
    attained_after_ns: Option<u64>,
}

/// One copy's measured totals so far, which only that copy writes: a cache line of its
/// own, so copies on different CPUs do not contend for it.
#[derive(Default)]
#[repr(align(128))]
struct Totals {
    ios: AtomicU64,
    bytes: AtomicU64,
    lat_sum: AtomicU64,
}

/// What one job's copies (or one reporting group's) share: each copy's totals, and the
/// window one of them updates at each interval's end.
pub struct SteadyMonitor {
    ss: SteadyState,
    /// When the measure phase began for the first copy: samples are timed from it.
    epoch: OnceLock<Instant>,
    /// One per copy feeding it.
    totals: Box<[Totals]>,
    /// When the next sample is due, in ns after the epoch.
    next_ns: AtomicU64,
    attained: AtomicBool,
    sampling: Mutex<Sampling>,
}

impl SteadyMonitor {
    /// A monitor of `ss` fed by `copies` copies (slots `0..copies`).
    pub fn new(ss: SteadyState, copies: usize) -> SteadyMonitor {
        SteadyMonitor {
            epoch: OnceLock::new(),
            totals: (0..copies.max(1)).map(|_| Totals::default()).collect(),
            next_ns: AtomicU64::new(ss.interval.as_nanos() as u64),
            attained: AtomicBool::new(false),
            sampling: Mutex::new(Sampling {
                at_ns: 0,
                ios: 0,
                bytes: 0,
                lat_sum: 0,
                window: Window::new(&ss),
                attained_after_ns: None,
            }),
            ss,
        }
    }

    /// The measure phase begins for a copy (the first one sets the epoch).
    pub fn begin(&self, now: Instant) {
        let _ = self.epoch.set(now);
    }

    /// Copy `slot`'s measured totals so far: its I/Os, their bytes and latencies (ns).
    #[inline]
    pub fn publish(&self, slot: usize, ios: u64, bytes: u64, lat_sum: u64) {
        if let Some(t) = self.totals.get(slot) {
            t.ios.store(ios, Ordering::Relaxed);
            t.bytes.store(bytes, Ordering::Relaxed);
            t.lat_sum.store(lat_sum, Ordering::Relaxed);
        }
    }

    /// When the next sample is due (None before the epoch, or once attained).
    pub fn next_sample(&self) -> Option<Instant> {
        if self.attained() {
            return None;
        }
        let epoch = self.epoch.get()?;
        Some(*epoch + std::time::Duration::from_nanos(self.next_ns.load(Ordering::Relaxed)))
    }

    pub fn attained(&self) -> bool {
        self.attained.load(Ordering::Relaxed)
    }

    /// Takes the sample of every interval that has ended by `now` (one sample over the
    /// time since the last, if several did), unless another copy is taking it.
    pub fn poll(&self, now: Instant) {
        if self.attained() {
            return;
        }
        let Some(&epoch) = self.epoch.get() else {
            return;
        };
        let elapsed = now.saturating_duration_since(epoch).as_nanos() as u64;
        if elapsed < self.next_ns.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut s) = self.sampling.try_lock() else {
            return;
        };
        if elapsed < self.next_ns.load(Ordering::Relaxed) {
            return;
        }
        let every = self.ss.interval.as_nanos().max(1) as u64;
        let sum = |f: fn(&Totals) -> &AtomicU64| -> u64 {
            self.totals
                .iter()
                .map(|t| f(t).load(Ordering::Relaxed))
                .sum()
        };
        let (ios, bytes, lat_sum) = (sum(|t| &t.ios), sum(|t| &t.bytes), sum(|t| &t.lat_sum));
        let span = elapsed.saturating_sub(s.at_ns).max(1) as f64;
        let per_second = |d: u64| (d as f64 * 1e9 / span) as u64;
        let sample = Sample {
            iops: per_second(ios.saturating_sub(s.ios)),
            bw: per_second(bytes.saturating_sub(s.bytes)),
            lat_ns: lat_sum
                .saturating_sub(s.lat_sum)
                .checked_div(ios.saturating_sub(s.ios))
                .unwrap_or(0),
        };
        (s.at_ns, s.ios, s.bytes, s.lat_sum) = (elapsed, ios, bytes, lat_sum);
        // fio counts a sample once the ramp and one more interval have passed.
        let ramp = self.ss.ramp.as_nanos() as u64;
        if (ramp == 0 || elapsed >= ramp + every) && s.window.push(sample) {
            s.attained_after_ns = Some(elapsed);
            self.attained.store(true, Ordering::Relaxed);
        }
        self.next_ns
            .store((elapsed / every + 1) * every, Ordering::Relaxed);
    }

    /// What the record says of it.
    pub fn result(&self) -> SteadyStateResult {
        let s = self
            .sampling
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let w = &s.window;
        let lat = matches!(self.ss.criterion, SsCriterion::Lat | SsCriterion::LatSlope);
        SteadyStateResult {
            criterion: criterion_text(&self.ss),
            limit: w.limit,
            percent: self.ss.percent,
            duration_ns: self.ss.dur.as_nanos() as u64,
            ramp_ns: self.ss.ramp.as_nanos() as u64,
            interval_ns: self.ss.interval.as_nanos() as u64,
            attained: s.attained_after_ns.is_some(),
            attained_after_ns: s.attained_after_ns,
            value: w.value,
            max_deviation: w.max_deviation,
            slope: w.slope,
            iops: w.samples().map(|x| x.iops).collect(),
            bw_bytes: w.samples().map(|x| x.bw).collect(),
            lat_ns: match lat {
                true => w.samples().map(|x| x.lat_ns).collect(),
                false => Vec::new(),
            },
        }
    }
}

/// `iops:10%`, `bw_slope:1048576`: the criterion as written, its limit in the reader's units.
pub fn criterion_text(ss: &SteadyState) -> String {
    let name = match ss.criterion {
        SsCriterion::Iops => "iops",
        SsCriterion::IopsSlope => "iops_slope",
        SsCriterion::Bw => "bw",
        SsCriterion::BwSlope => "bw_slope",
        SsCriterion::Lat => "lat",
        SsCriterion::LatSlope => "lat_slope",
    };
    let unit = match (ss.percent, ss.criterion) {
        (true, _) => "%",
        (false, SsCriterion::Lat | SsCriterion::LatSlope) => "us",
        _ => "",
    };
    format!("{name}:{}{unit}", ss.limit)
}

/// One line per job with fio's steady state, in the first trial of each step: whether and
/// when it reached it, and how far the window stood from the limit.
pub fn findings(record: &crate::record::RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    for step in &record.steps {
        let Some(t) = step.trials.first() else {
            continue;
        };
        for g in t.groups.iter().filter(|g| g.by == "job") {
            let Some(ss) = &g.steady_state else { continue };
            let unit = if ss.percent { "%" } else { "" };
            let what = match (ss.attained, ss.attained_after_ns) {
                (true, Some(ns)) => format!("reached after {:.1} s", ns as f64 / 1e9),
                _ => "not reached".to_string(),
            };
            let window = match ss.iops.is_empty() {
                true => "before its window filled".to_string(),
                false => format!("last at {:.3}{unit}", ss.value),
            };
            out.push(format!(
                "step {}: {} steady state {} {what} ({window})",
                crate::record::step_number(step.index),
                g.key,
                ss.criterion
            ));
        }
    }
    out
}

/// One job's steady state over its copies, each with its own monitor (without
/// `group_reporting`): attained when every copy's was, at the latest of their times; the
/// window shown is the last copy's to attain it, or the first that did not.
pub fn combine(results: Vec<SteadyStateResult>) -> Option<SteadyStateResult> {
    let all = results.iter().all(|r| r.attained);
    let pick = match all {
        true => results.iter().max_by_key(|r| r.attained_after_ns),
        false => results.iter().find(|r| !r.attained),
    };
    pick.cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ss(criterion: SsCriterion, limit: f64, percent: bool) -> SteadyState {
        SteadyState {
            criterion,
            limit,
            percent,
            dur: Duration::from_secs(4),
            ramp: Duration::ZERO,
            interval: Duration::from_secs(1),
        }
    }

    fn iops(v: u64) -> Sample {
        Sample {
            iops: v,
            bw: v * 4096,
            lat_ns: 1000,
        }
    }

    #[test]
    fn deviation_waits_for_a_full_window_then_compares_the_farthest_sample() {
        // iops:10%: every sample within 10% of the window's mean.
        let mut w = Window::new(&ss(SsCriterion::Iops, 10.0, true));
        for v in [100, 200, 100] {
            assert!(!w.push(iops(v)), "not full yet");
        }
        // 100 200 100 100: mean 125, farthest 75 away = 60%.
        assert!(!w.push(iops(100)));
        assert!((w.value - 60.0).abs() < 1e-9, "{}", w.value);
        for v in [100, 105, 95] {
            w.push(iops(v));
        }
        // 100 100 105 95: mean 100, farthest 5 = 5% < 10%.
        assert!((w.value - 5.0).abs() < 1e-9, "{}", w.value);
        assert!((w.max_deviation - 5.0).abs() < 1e-9);
        assert_eq!(w.slope, 0.0, "fio computes only the criterion's own figure");
        let window: Vec<u64> = w.samples().map(|s| s.iops).collect();
        assert_eq!(window, [100, 100, 105, 95]);
    }

    #[test]
    fn slope_is_least_squares_per_interval_and_its_size_is_compared() {
        // bw_slope in bytes a second per interval, absolute: 10 KiB/s.
        let mut w = Window::new(&ss(SsCriterion::BwSlope, 10240.0, false));
        for v in [400, 300, 200] {
            w.push(iops(v));
        }
        // 400 300 200 100 (x 4096 bytes): slope -100 x 4096 per interval.
        assert!(!w.push(iops(100)));
        assert!((w.slope + 409_600.0).abs() < 1e-6, "{}", w.slope);
        let mut w = Window::new(&ss(SsCriterion::IopsSlope, 1.0, true));
        for v in [1000, 1001, 999, 1000] {
            w.push(iops(v));
        }
        // A flat window: slope -0.1 per interval, 0.01% of the mean.
        assert!(w.value.abs() < 1.0, "{}", w.value);
        assert!(w.push(iops(1000)));
    }

    #[test]
    fn latency_limits_are_times_and_an_empty_window_is_never_steady() {
        // lat:2 (reader: microseconds) against samples in ns.
        let mut w = Window::new(&ss(SsCriterion::Lat, 2.0, false));
        for lat in [10_000, 11_000, 10_500] {
            w.push(Sample {
                lat_ns: lat,
                ..Default::default()
            });
        }
        assert!(
            w.push(Sample {
                lat_ns: 10_400,
                ..Default::default()
            }) == (w.max_deviation < 2000.0)
        );
        let mut w = Window::new(&ss(SsCriterion::Iops, 10.0, true));
        for _ in 0..5 {
            assert!(!w.push(iops(0)));
        }
    }

    #[test]
    fn the_monitor_samples_each_interval_after_the_ramp_and_ends_when_attained() {
        let mut s = ss(SsCriterion::Iops, 50.0, true);
        s.dur = Duration::from_secs(2);
        s.ramp = Duration::from_secs(1);
        let m = SteadyMonitor::new(s, 2);
        let t0 = Instant::now();
        m.poll(t0 + Duration::from_secs(5));
        assert!(!m.attained(), "no epoch, no samples");
        m.begin(t0);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        for k in 1..=4u64 {
            // Two copies, 50 I/Os each an interval.
            for slot in 0..2 {
                m.publish(slot, 50 * k, 50 * k * 4096, 50 * k * 1000);
            }
            m.poll(at(k * 1000));
            // Interval 1 is in the ramp; 2 and 3 fill the window of two.
            assert_eq!(m.attained(), k >= 3, "after interval {k}");
        }
        let r = m.result();
        assert!(r.attained);
        assert_eq!(r.attained_after_ns, Some(3_000_000_000));
        assert_eq!(r.iops, [100, 100]);
        assert_eq!(r.bw_bytes, [409_600, 409_600]);
        assert_eq!(r.criterion, "iops:50%");
        // What `perflab show` says of it.
        let mut record = crate::record::RunRecord::default();
        let group = crate::record::GroupResult {
            by: "job".into(),
            key: "ss-write".into(),
            steady_state: Some(r.clone()),
            ..Default::default()
        };
        let trial = crate::record::Trial {
            groups: vec![group],
            ..Default::default()
        };
        record.steps.push(crate::record::StepResult {
            trials: vec![trial],
            ..Default::default()
        });
        assert_eq!(
            findings(&record),
            ["step 1: ss-write steady state iops:50% reached after 3.0 s (last at 0.000%)"]
        );
        // Copies with monitors of their own: attained when all are.
        let mut other = r.clone();
        other.attained = false;
        other.attained_after_ns = None;
        assert!(!combine(vec![r.clone(), other]).unwrap().attained);
        assert!(combine(vec![r.clone(), r]).unwrap().attained);
    }
}
