//! The steps table: one row per step with the swept options, the headline (and its interval
//! over repeats), the kind's own figures, response times, the open loop's schedule and the
//! errors. `perflab show` prints it and a report's run section holds it.

use super::names::header;
use crate::present::mean_figure;
use crate::present::table::Table;
use crate::record::{RunRecord, ScheduleSummary, StepResult, Trial};
use crate::vocab::numbers::{metric, ns, param, rate, sig3};
use crate::workload::kind;

/// One row per step: swept options, the headline (with its interval over repeats), the
/// workload's own figures, response times and errors.
pub fn steps_table(r: &RunRecord) -> Table {
    let first = &r.steps[0];
    // Swept options first, each followed by the options zipped to it (`--zip`), then any the
    // user would want to see beside them.
    let zip: Vec<Vec<String>> = r
        .spec
        .get("zip")
        .and_then(|z| serde_json::from_value(z.clone()).ok())
        .unwrap_or_default();
    let mut cols: Vec<String> = Vec::new();
    for name in &first.swept {
        cols.push(name.clone());
        if let Some(group) = zip.iter().find(|g| g.first() == Some(name)) {
            cols.extend(group.iter().skip(1).cloned());
        }
    }
    if cols.is_empty() {
        cols.push("threads".into());
    }
    let h = &r.headline;
    let extra: Vec<String> = first
        .trials
        .first()
        .map(|t| {
            t.figures
                .keys()
                // Sizes already show as parameters; the kind says what else stays out.
                .filter(|k| **k != h.metric && !k.ends_with("_bytes"))
                .filter(|k| !kind::hidden_in_steps(r, k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let open = first.trials.first().is_some_and(|t| t.schedule.is_some());
    // Skipped ops (pgbench's -L with -R) get a column only where there are any.
    let skipping = r
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .any(|t| t.schedule.is_some_and(|x| x.skipped_ops > 0));
    let repeats = first.trials.len() > 1;

    let mut head: Vec<String> = cols
        .iter()
        .map(|c| {
            // The workers as the kind counts them (a jobs run's copies).
            if c == "threads" {
                return kind::workers_of(r).to_string();
            }
            c.trim_end_matches("_bytes")
                .trim_end_matches("_ns")
                .to_string()
        })
        .collect();
    head.push(header(&h.metric, &h.op_name));
    if repeats {
        head.push("±95%".into());
    }
    if h.metric != "ops_per_sec" {
        head.push(format!("{}/s", h.op_name));
    }
    head.extend(extra.iter().map(|e| header(e, &h.op_name)));
    head.extend(["mean", "p50", "p90", "p99", "p99.9", "max"].map(String::from));
    if open {
        head.extend(["target/s", "late", "missed"].map(String::from));
        if skipping {
            head.push("skipped".into());
        }
        head.push("service p99".into());
    }
    head.push("errors".into());
    let failing = r
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .any(|t| t.error_latency.is_some());
    if failing {
        head.push("err p99".into());
    }

    let mut t = Table::new(head);
    for s in &r.steps {
        let mut row: Vec<String> = cols
            .iter()
            .map(|c| s.params.get(c).map(|v| param(c, v)).unwrap_or_default())
            .collect();
        let est = &s.summary.headline;
        row.push(metric(&h.metric, est.mean));
        if repeats {
            row.push(match (est.ci95_low, est.ci95_high) {
                (Some(lo), Some(hi)) if est.mean != 0.0 => {
                    format!("{:.1}%", (hi - lo) / 2.0 / est.mean.abs() * 100.0)
                }
                _ => "-".into(),
            });
        }
        if h.metric != "ops_per_sec" {
            row.push(rate(s.summary.ops_per_sec.mean));
        }
        for e in &extra {
            row.push(
                mean_figure(s, e)
                    .map(|v| metric(e, v))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        let lat = merged_latency(s);
        row.extend([lat.0, lat.1, lat.2, lat.3, lat.4, lat.5]);
        if open {
            let t0 = s.trials.first();
            let sched = t0.and_then(|t| t.schedule);
            row.push(
                sched
                    .map(|x| sig3(x.target_ops_per_sec))
                    .unwrap_or_default(),
            );
            // Late starts and missed ops count over every repeat.
            let total = |count: fn(&ScheduleSummary) -> u64| {
                s.trials
                    .iter()
                    .filter_map(|t| t.schedule.as_ref())
                    .fold(0u64, |a, x| a.saturating_add(count(x)))
                    .to_string()
            };
            row.push(total(|x| x.late_starts));
            row.push(total(|x| x.missed_ops));
            if skipping {
                row.push(total(|x| x.skipped_ops));
            }
            row.push(
                t0.and_then(|t| t.service_latency)
                    .map(|l| ns(l.p99_ns as f64))
                    .unwrap_or_default(),
            );
        }
        row.push(s.summary.errors.to_string());
        if failing {
            // The slowest failure's p99 over the repeats: how long failing took.
            let p99 = s
                .trials
                .iter()
                .filter_map(|t| t.error_latency)
                .map(|l| l.p99_ns)
                .max();
            row.push(p99.map(|v| ns(v as f64)).unwrap_or_else(|| "-".into()));
        }
        t.row(row);
    }
    t
}

/// Latency columns of a step: from its single trial, or the mean over repeats.
fn merged_latency(s: &StepResult) -> (String, String, String, String, String, String) {
    // A step whose ops were not timed one by one (fio's gtod_reduce) has no latency: `-`.
    if s.trials.iter().all(|t| t.latency.count == 0) && s.trials.iter().any(|t| t.ops > 0) {
        let none = || "-".to_string();
        return (none(), none(), none(), none(), none(), none());
    }
    let mean_of = |f: &dyn Fn(&Trial) -> f64| {
        let n = s.trials.len().max(1) as f64;
        ns(s.trials.iter().map(f).sum::<f64>() / n)
    };
    (
        mean_of(&|t| t.latency.mean_ns),
        mean_of(&|t| t.latency.p50_ns as f64),
        mean_of(&|t| t.latency.p90_ns as f64),
        mean_of(&|t| t.latency.p99_ns as f64),
        mean_of(&|t| t.latency.p999_ns as f64),
        ns(s.trials.iter().map(|t| t.latency.max_ns).max().unwrap_or(0) as f64),
    )
}
