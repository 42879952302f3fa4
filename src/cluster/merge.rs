//! Every rank's trial into the run's one, on rank 0.
//!
//! Counts add. Response-time histograms add count for count (HDR, same bounds everywhere),
//! so the merged percentiles are exactly those of one histogram fed every op of every rank,
//! never an average of percentiles. Rates add: each rank's rate is over its own measure phase,
//! and the phases started together (the start skew says how closely); a step of fixed work is
//! the whole work over the time until the last rank finished. Workload figures are means
//! over workers, as within one process. The machine's own figures (CPU, disks, power) are
//! rank 0's host's; perflab's CPU per op is over all ranks.
//!
//! Per interval of the time series, counts and rates add and the maximum is the maximum; an
//! interval's p50 and p99 are the highest of the ranks' (an upper bound: ranks free their
//! interval histograms as they go).

#[cfg(test)]
use crate::record::LatencySummary;
use crate::record::histogram::{LatencyHistogram, decode, encode, new_histogram, summarize};
use crate::record::{GroupResult, IntervalPoint, RankSync, ScheduleSummary, Trial};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A rank below this share of the median rank's throughput is flagged as a straggler.
pub const STRAGGLER_SHARE: f64 = 0.75;

/// What one rank sends rank 0 at the end of a trial.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct RankPart {
    pub rank: usize,
    pub host: String,
    /// Wall-clock ns when this rank was released into the measure phase.
    pub measure_wall_ns: u64,
    pub trial: Trial,
}

impl RankPart {
    pub fn new(rank: usize, host: &str, trial: Trial, measure_wall_ns: u64) -> RankPart {
        RankPart {
            rank,
            host: host.to_string(),
            measure_wall_ns,
            trial,
        }
    }
}

/// The run's trial from every rank's part. `fixed`: a step of fixed work.
pub fn merge(mut parts: Vec<RankPart>, fixed: bool) -> Trial {
    parts.sort_by_key(|p| p.rank);
    let Some(first) = parts.first() else {
        return Trial::default();
    };
    let mut out = first.trial.clone();
    if parts.len() == 1 && first.trial.ranks.is_none() {
        strip_group_histograms(&mut out);
        return out;
    }
    let active: Vec<&RankPart> = parts.iter().filter(|p| p.trial.workers > 0).collect();
    let trials: Vec<&Trial> = active.iter().map(|p| &p.trial).collect();
    let sum = |f: fn(&Trial) -> u64| trials.iter().map(|t| f(t)).sum::<u64>();
    out.workers = sum(|t| t.workers);
    out.ops = sum(|t| t.ops);
    out.items = sum(|t| t.items);
    out.bytes = sum(|t| t.bytes);
    out.errors = sum(|t| t.errors);
    out.elapsed_ns = trials.iter().map(|t| t.elapsed_ns).max().unwrap_or(0);
    let rate = |f: fn(&Trial) -> f64, total: u64| -> f64 {
        if fixed {
            total as f64 / (out.elapsed_ns as f64 / 1e9).max(1e-9)
        } else {
            trials.iter().map(|t| f(t)).sum()
        }
    };
    out.ops_per_sec = rate(|t| t.ops_per_sec, out.ops);
    out.items_per_sec = rate(|t| t.items_per_sec, out.items);
    out.bytes_per_sec = rate(|t| t.bytes_per_sec, out.bytes);

    let latency = add_all(trials.iter().map(|t| Some(t.latency_hdr.as_str())));
    out.latency = latency.as_ref().map(summarize).unwrap_or_default();
    out.latency_hdr = latency.as_ref().map(encode).unwrap_or_default();
    let service = add_all(trials.iter().map(|t| t.service_latency_hdr.as_deref()));
    out.service_latency = service.as_ref().map(summarize);
    out.service_latency_hdr = service.as_ref().map(encode);
    let errors = add_all(trials.iter().map(|t| t.error_latency_hdr.as_deref()));
    out.error_latency = errors.as_ref().map(summarize);
    out.error_latency_hdr = errors.as_ref().map(encode);

    out.schedule = merge_schedules(&trials);
    out.figures = mean_figures(&trials);
    out.error_samples = error_samples(&active);
    out.errors_by_kind = trials.iter().fold(Default::default(), |mut all, t| {
        crate::record::errors::add(&mut all, &t.errors_by_kind);
        all
    });
    out.series = merge_series(&trials);
    let all_ops: u64 = trials.iter().map(|t| t.ops + t.errors).sum();
    let cpu_ns: f64 = trials
        .iter()
        .filter_map(|t| Some(t.resources.process_cpu_ns_per_op? * (t.ops + t.errors) as f64))
        .sum();
    out.resources.process_cpu_ns_per_op = (all_ops > 0).then(|| cpu_ns / all_ops as f64);
    out.groups = merge_groups(&trials, out.elapsed_ns);
    out.groups.extend(rank_groups(&active));
    // Idle ranks start nothing: the skew that matters is between the ranks driving load.
    let starts: Vec<u64> = active.iter().map(|p| p.measure_wall_ns).collect();
    let ends: Vec<u64> = active
        .iter()
        .map(|p| p.measure_wall_ns + p.trial.elapsed_ns)
        .collect();
    out.ranks = Some(RankSync {
        ranks: parts.len() as u64,
        active: active.len() as u64,
        start_skew_ns: spread(&starts),
        end_skew_ns: spread(&ends),
    });
    out
}

fn spread(values: &[u64]) -> u64 {
    let (lo, hi) = values
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    hi.saturating_sub(lo)
}

/// The sum of the histograms given (absent ones skipped); `None` when none is given.
fn add_all<'a>(encoded: impl Iterator<Item = Option<&'a str>>) -> Option<LatencyHistogram> {
    let mut sum: Option<LatencyHistogram> = None;
    for text in encoded.flatten().filter(|t| !t.is_empty()) {
        if let Ok(h) = decode(text) {
            // Same bounds everywhere, so adding cannot fail.
            let _ = sum.get_or_insert_with(new_histogram).add(&h);
        }
    }
    sum
}

fn merge_schedules(trials: &[&Trial]) -> Option<ScheduleSummary> {
    let with: Vec<(&ScheduleSummary, u64)> = trials
        .iter()
        .filter_map(|t| Some((t.schedule.as_ref()?, t.ops + t.errors)))
        .collect();
    let (&(first, _), _) = with.split_first()?;
    let weight: u64 = with.iter().map(|(_, n)| n).sum();
    Some(ScheduleSummary {
        target_ops_per_sec: with.iter().map(|(s, _)| s.target_ops_per_sec).sum(),
        late_starts: with.iter().map(|(s, _)| s.late_starts).sum(),
        late_threshold_ns: first.late_threshold_ns,
        mean_lag_ns: if weight == 0 {
            0.0
        } else {
            with.iter()
                .map(|(s, n)| s.mean_lag_ns * *n as f64)
                .sum::<f64>()
                / weight as f64
        },
        max_lag_ns: with.iter().map(|(s, _)| s.max_lag_ns).max().unwrap_or(0),
        missed_ops: with.iter().map(|(s, _)| s.missed_ops).sum(),
        skipped_ops: with.iter().map(|(s, _)| s.skipped_ops).sum(),
    })
}

/// Each figure's mean over all workers that reported it (a rank's figure is already the
/// mean over its workers, so it weighs as many).
fn mean_figures(trials: &[&Trial]) -> BTreeMap<String, f64> {
    let mut sums = BTreeMap::<String, (f64, f64)>::new();
    for t in trials {
        let w = t.workers.max(1) as f64;
        for (k, v) in &t.figures {
            let e = sums.entry(k.clone()).or_default();
            e.0 += v * w;
            e.1 += w;
        }
    }
    sums.into_iter().map(|(k, (s, w))| (k, s / w)).collect()
}

fn error_samples(parts: &[&RankPart]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        for m in &p.trial.error_samples {
            let m = format!("rank {}: {m}", p.rank);
            if out.len() < 5 && !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

fn merge_series(trials: &[&Trial]) -> Vec<IntervalPoint> {
    let longest = trials.iter().map(|t| t.series.len()).max().unwrap_or(0);
    (0..longest)
        .map(|i| {
            let points: Vec<&IntervalPoint> =
                trials.iter().filter_map(|t| t.series.get(i)).collect();
            let mut p = *points[0];
            p.duration_ns = points.iter().map(|q| q.duration_ns).max().unwrap_or(0);
            p.ops = points.iter().map(|q| q.ops).sum();
            p.errors = points.iter().map(|q| q.errors).sum();
            p.missed = points.iter().map(|q| q.missed).sum();
            p.ops_per_sec = points.iter().map(|q| q.ops_per_sec).sum();
            p.bytes_per_sec = points.iter().map(|q| q.bytes_per_sec).sum();
            p.p50_ns = points.iter().map(|q| q.p50_ns).max().unwrap_or(0);
            p.p99_ns = points.iter().map(|q| q.p99_ns).max().unwrap_or(0);
            p.max_ns = points.iter().map(|q| q.max_ns).max().unwrap_or(0);
            p.latency_count = points.iter().map(|q| q.latency_count).sum();
            p
        })
        .collect()
}

/// The workload's groups (kinds, directions, files) added over ranks, their histograms
/// exactly; the histograms travel only between ranks and are not kept in the record.
fn merge_groups(trials: &[&Trial], elapsed_ns: u64) -> Vec<GroupResult> {
    let mut merged: Vec<(GroupResult, Option<LatencyHistogram>)> = Vec::new();
    for g in trials.iter().flat_map(|t| &t.groups) {
        let h = g.latency_hdr.as_deref().and_then(|t| decode(t).ok());
        match merged
            .iter_mut()
            .find(|(m, _)| m.by == g.by && m.key == g.key)
        {
            Some((m, sum)) => {
                m.ops += g.ops;
                m.bytes += g.bytes;
                m.errors += g.errors;
                m.straggler |= g.straggler;
                m.elapsed_ns = m.elapsed_ns.max(g.elapsed_ns);
                match (sum.as_mut(), h) {
                    (Some(s), Some(h)) => {
                        let _ = s.add(&h);
                    }
                    (None, Some(h)) => *sum = Some(h),
                    _ => {}
                }
            }
            None => merged.push((g.clone(), h)),
        }
    }
    merged
        .into_iter()
        .map(|(mut g, h)| {
            let secs = (g.elapsed_ns.unwrap_or(elapsed_ns) as f64 / 1e9).max(1e-9);
            g.ops_per_sec = g.ops as f64 / secs;
            g.bytes_per_sec = g.bytes as f64 / secs;
            if let Some(h) = &h {
                g.latency = summarize(h);
            }
            // Jobs keep theirs, as on one rank (`run::trial`).
            g.latency_hdr = h.filter(|_| g.by.starts_with("job")).map(|h| encode(&h));
            g
        })
        .collect()
}

/// One group per active rank (`by: rank`): what it drove, where, and whether it lagged.
fn rank_groups(parts: &[&RankPart]) -> Vec<GroupResult> {
    let rates: Vec<f64> = parts.iter().map(|p| p.trial.ops_per_sec).collect();
    let slow = crate::stats::steady::stragglers(&rates, STRAGGLER_SHARE);
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| GroupResult {
            by: "rank".into(),
            key: p.rank.to_string(),
            label: format!("rank {} on {}", p.rank, p.host),
            ops: p.trial.ops,
            bytes: p.trial.bytes,
            errors: p.trial.errors,
            ops_per_sec: p.trial.ops_per_sec,
            bytes_per_sec: p.trial.bytes_per_sec,
            latency: p.trial.latency,
            straggler: slow.contains(&i),
            latency_hdr: None,
            elapsed_ns: None,
            steady_state: None,
        })
        .collect()
}

fn strip_group_histograms(t: &mut Trial) {
    for g in &mut t.groups {
        g.latency_hdr = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary of one histogram fed `values`.
    fn summary_of(values: &[u64]) -> LatencySummary {
        let mut h = new_histogram();
        for &v in values {
            h.saturating_record(v);
        }
        summarize(&h)
    }

    fn trial_with(values: &[u64], workers: u64, secs: f64) -> Trial {
        let mut h = new_histogram();
        for &v in values {
            h.saturating_record(v);
        }
        Trial {
            workers,
            ops: values.len() as u64,
            elapsed_ns: (secs * 1e9) as u64,
            ops_per_sec: values.len() as f64 / secs,
            latency: summarize(&h),
            latency_hdr: encode(&h),
            figures: BTreeMap::from([("alloc_ns".to_string(), workers as f64 * 10.0)]),
            ..Default::default()
        }
    }

    /// The merged percentiles are those of one histogram fed every sample: exact, not an
    /// average of the ranks' percentiles.
    #[test]
    fn merged_percentiles_equal_one_histogram_of_every_sample() {
        let a: Vec<u64> = (1..=10_000).map(|i| i * 1_000).collect();
        // A slow rank: its tail dominates the run's p99, which averaging would halve.
        let b: Vec<u64> = (1..=2_000).map(|i| 50_000_000 + i * 7_919).collect();
        let c: Vec<u64> = (1..=500).map(|i| i * i * 13).collect();
        let parts = vec![
            RankPart::new(1, "b", trial_with(&b, 1, 1.0), 2),
            RankPart::new(0, "a", trial_with(&a, 2, 1.0), 1),
            RankPart::new(2, "c", trial_with(&c, 1, 1.0), 3),
        ];
        let merged = merge(parts, false);
        let every: Vec<u64> = a.iter().chain(&b).chain(&c).copied().collect();
        assert_eq!(merged.latency, summary_of(&every));
        assert_eq!(merged.ops, every.len() as u64);
        assert_eq!(merged.workers, 4);
        assert!((merged.ops_per_sec - every.len() as f64).abs() < 1e-6);
        // Workers weigh: (2x20 + 1x10 + 1x10) / 4.
        assert!((merged.figures["alloc_ns"] - 15.0).abs() < 1e-9);
        let sync = merged.ranks.unwrap();
        assert_eq!((sync.ranks, sync.active, sync.start_skew_ns), (3, 3, 2));
        assert_eq!(sync.end_skew_ns, 2);
        let ranks: Vec<&GroupResult> = merged.groups.iter().filter(|g| g.by == "rank").collect();
        assert_eq!(ranks.len(), 3);
        // Rank 2 ran 500 ops/s against a median of 2,000: a straggler.
        assert!(ranks[2].straggler && !ranks[0].straggler);
        assert_eq!(
            decode(&merged.latency_hdr).unwrap().len(),
            every.len() as u64
        );
    }

    #[test]
    fn idle_ranks_add_nothing_and_fixed_work_takes_the_longest() {
        let parts = vec![
            RankPart::new(0, "a", trial_with(&[5, 6, 7, 8], 1, 2.0), 0),
            RankPart::new(1, "a", Trial::default(), 0),
            RankPart::new(2, "a", trial_with(&[9, 9], 1, 4.0), 0),
        ];
        let merged = merge(parts, true);
        assert_eq!(merged.workers, 2);
        assert!((merged.ops_per_sec - 6.0 / 4.0).abs() < 1e-9);
        assert_eq!(merged.ranks.unwrap().active, 2);
    }
}
