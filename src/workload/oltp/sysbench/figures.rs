//! sysbench's figures in a step's record, and its report as tables after the steps.
//!
//! Per trial (`derive`): the queries as sysbench counts them, over all clients, a second
//! and per transaction (`sb_reads_per_sec`, `sb_writes_per_txn`...), the errors it ignored
//! and re-ran, the reconnects, and the response time at `--percentile`
//! (`sb_latency_pct_ns`) from the trial's histogram. They stay out of the steps table
//! (prefix `sb_`) and make "sysbench's statistics": per step the lines of sysbench's own
//! report (transactions, queries read/write/other, ignored errors, reconnects, latency min,
//! avg, max and the percentile). `--histogram` adds the latency histogram of each step in
//! milliseconds, the buckets that hold anything, as sysbench prints its own.

use crate::present::mean_figure;
use crate::present::table::Table;
use crate::record::histogram::decode;
use crate::record::{RunRecord, StepResult, Trial, step_number};
use crate::vocab::numbers::{count, rate};

/// The figures' prefix, which the steps table leaves out.
pub const PREFIX: &str = "sb_";

/// The per-client counts the clients report ([`super::client::Sysbench`]'s figures) into
/// the run's totals.
pub fn derive(percentile: u32, trial: &mut Trial) {
    let seconds = trial.elapsed_ns as f64 / 1e9;
    let workers = trial.workers as f64;
    let ops = trial.ops as f64;
    let mut total = |name: &str| trial.figures.remove(name).unwrap_or(0.0) * workers;
    let reads = total("sb_reads_per_client");
    let writes = total("sb_writes_per_client");
    let other = total("sb_other_per_client");
    let ignored = total("sb_ignored_errors_per_client");
    let reconnects = trial
        .figures
        .get("reconnects_per_client")
        .copied()
        .unwrap_or(0.0)
        * workers;
    let queries = reads + writes + other;
    let mut add = |name: &str, v: f64| {
        trial.figures.insert(format!("{PREFIX}{name}"), v);
    };
    add("reads", reads);
    add("writes", writes);
    add("other", other);
    add("queries", queries);
    add("ignored_errors", ignored);
    add("reconnects", reconnects);
    if seconds > 0.0 {
        add("queries_per_sec", queries / seconds);
        add("ignored_errors_per_sec", ignored / seconds);
    }
    if ops > 0.0 {
        add("reads_per_txn", reads / ops);
        add("writes_per_txn", writes / ops);
        add("other_per_txn", other / ops);
    }
    if percentile > 0
        && let Ok(h) = decode(&trial.latency_hdr)
        && !h.is_empty()
    {
        add(
            "latency_pct_ns",
            h.value_at_quantile(f64::from(percentile) / 100.0) as f64,
        );
    }
}

/// The run's `--percentile`, or None for a record that is not sysbench's.
fn percentile(r: &RunRecord) -> Option<u64> {
    r.spec
        .pointer("/sysbench/percentile")
        .and_then(|v| v.as_u64())
}

fn ms(ns: f64) -> String {
    format!("{:.2}", ns / 1e6)
}

/// sysbench's report per step, and its histograms with `--histogram`; nothing for a record
/// that is not a sysbench test's.
pub fn tables(r: &RunRecord) -> Vec<(String, Table)> {
    let Some(pct) = percentile(r) else {
        return Vec::new();
    };
    let pct_head = match pct {
        0 => "pct".to_string(),
        p => format!("{p}th ms"),
    };
    let mut t = Table::new(
        [
            "step",
            "clients",
            "transactions",
            "tps",
            "reads",
            "writes",
            "other",
            "queries",
            "qps",
            "ignored errors",
            "reconnects",
            "min ms",
            "avg ms",
            "max ms",
            &pct_head,
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &r.steps {
        let f = |name: &str| mean_figure(s, &format!("{PREFIX}{name}"));
        let lat = &s.trials.first().map(|t| t.latency).unwrap_or_default();
        let ops: u64 = s.trials.iter().map(|t| t.ops).sum::<u64>() / s.trials.len().max(1) as u64;
        t.row(vec![
            step_number(s.index).to_string(),
            s.trials.first().map_or(0, |t| t.workers).to_string(),
            ops.to_string(),
            rate(s.summary.ops_per_sec.mean),
            f("reads").map_or("-".into(), count),
            f("writes").map_or("-".into(), count),
            f("other").map_or("-".into(), count),
            f("queries").map_or("-".into(), count),
            f("queries_per_sec").map_or("-".into(), rate),
            f("ignored_errors").map_or("-".into(), count),
            f("reconnects").map_or("-".into(), count),
            ms(lat.min_ns as f64),
            ms(lat.mean_ns),
            ms(lat.max_ns as f64),
            f("latency_pct_ns").map_or("-".into(), ms),
        ]);
    }
    let mut out = vec![("sysbench's statistics".to_string(), t)];
    let wanted = r
        .spec
        .pointer("/sysbench/histogram")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if wanted {
        for s in &r.steps {
            if let Some(h) = histogram(s) {
                out.push((
                    format!(
                        "latency histogram of step {} (values are in milliseconds)",
                        step_number(s.index)
                    ),
                    h,
                ));
            }
        }
    }
    out
}

/// Buckets a quarter of a binary order wide (each 19% above the last), as sysbench's
/// logarithmic buckets show a run: the value at a bucket's top, a bar and the count.
fn histogram(s: &StepResult) -> Option<Table> {
    let trial = s.trials.first()?;
    let h = decode(&trial.latency_hdr).ok()?;
    if h.is_empty() {
        return None;
    }
    let mut buckets: Vec<(f64, u64)> = Vec::new();
    let step = 2f64.powf(0.25);
    let mut top = 1_000.0_f64; // 1 µs
    let mut below = 0u64;
    while below < h.len() {
        let upto = h.count_between(0, top as u64);
        if upto > below {
            buckets.push((top, upto - below));
            below = upto;
        }
        top *= step;
        if top > 3.6e12 {
            break;
        }
    }
    let most = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let mut t = Table::new(
        ["value", "distribution", "count"]
            .map(String::from)
            .to_vec(),
    );
    for (top, n) in buckets {
        let bar = "*".repeat(((n * 40).div_ceil(most)) as usize);
        t.row(vec![
            format!("{:.3}", top / 1e6),
            format!("|{bar:<40}"),
            n.to_string(),
        ]);
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::histogram::{encode, new_histogram};

    #[test]
    fn counts_become_totals_rates_and_shares_of_a_transaction() {
        let mut h = new_histogram();
        for v in 1..=100u64 {
            h.record(v * 1_000_000).unwrap();
        }
        let mut t = Trial {
            workers: 2,
            ops: 100,
            elapsed_ns: 2_000_000_000,
            latency_hdr: encode(&h),
            ..Default::default()
        };
        for (name, v) in [
            ("sb_reads_per_client", 700.0),
            ("sb_writes_per_client", 200.0),
            ("sb_other_per_client", 100.0),
            ("sb_ignored_errors_per_client", 1.0),
            ("reconnects_per_client", 0.5),
        ] {
            t.figures.insert(name.into(), v);
        }
        derive(95, &mut t);
        let f = |n: &str| t.figures[n];
        assert_eq!(f("sb_reads"), 1400.0);
        assert_eq!(f("sb_reads_per_txn"), 14.0);
        assert_eq!(f("sb_writes_per_txn"), 4.0);
        assert_eq!(f("sb_other_per_txn"), 2.0);
        assert_eq!(f("sb_queries_per_sec"), 1000.0);
        assert_eq!(f("sb_ignored_errors"), 2.0);
        assert_eq!(f("sb_reconnects"), 1.0);
        let p95 = f("sb_latency_pct_ns");
        assert!((94.0e6..96.1e6).contains(&p95), "{p95}");
        assert!(!t.figures.contains_key("sb_reads_per_client"));
    }
}
