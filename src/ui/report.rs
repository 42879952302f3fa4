//! A record as tables for people: a header, one row per step, the sweep's analysis, warnings.

use super::format::{self, header, metric, ns};
use super::table::Table;
use crate::archive::RunSummary;
use crate::record::{RunRecord, StepResult, Trial};
use crate::target::TargetInfo;

/// The whole record.
pub fn render(r: &RunRecord) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "run {}  {}  {}  started {}\n",
        r.id,
        r.workload,
        r.status.as_str(),
        r.started_at
    ));
    out.push_str(&format!(
        "target {}  ·  {}\n",
        r.target,
        describe_spec(&r.spec)
    ));
    if r.steps.is_empty() {
        out.push_str("\nno step finished\n");
    } else {
        out.push('\n');
        out.push_str(&steps_table(r).render());
        out.push_str(&super::io_report::render(r));
        out.push_str(&analysis_lines(r));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {}\n", w.message));
    }
    out
}

/// `closed loop · 1s warmup + 5s per step · repeat 3`, from the record's spec.
fn describe_spec(spec: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    match spec.pointer("/load/model").and_then(|m| m.as_str()) {
        Some("open") => parts.push(format!(
            "open loop ({} arrivals)",
            spec.pointer("/load/arrival")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
        )),
        Some(_) => {
            let think = spec
                .pointer("/load/think_ns")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            parts.push(if think > 0.0 {
                format!("closed loop, think {}", ns(think))
            } else {
                "closed loop".into()
            });
        }
        None => {}
    }
    let warmup = spec
        .get("warmup_ns")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    let stop = match (spec.pointer("/stop/duration_ns"), spec.pointer("/stop/ops")) {
        (Some(d), _) => format!("{} per step", ns(d.as_f64().unwrap_or(0.0))),
        (_, Some(o)) => format!("{} ops per step", o),
        _ => String::new(),
    };
    parts.push(format!("{} warmup + {stop}", ns(warmup)));
    if let Some(n) = spec
        .get("repeat")
        .and_then(|v| v.as_u64())
        .filter(|&n| n > 1)
    {
        parts.push(format!("repeat {n}"));
    }
    parts.join("  ·  ")
}

/// The value of a step parameter as text (`triad`, `2`, `64 MiB` for sizes).
fn param_text(name: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if name.ends_with("_bytes") => {
            crate::spec::units::format_bytes(n.as_u64().unwrap_or(0))
        }
        serde_json::Value::Number(n) if name.ends_with("_ns") => ns(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}

fn steps_table(r: &RunRecord) -> Table {
    let first = &r.steps[0];
    // Swept options first, then any the user would want to see beside them.
    let mut cols: Vec<String> = first.swept.clone();
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
                // Sizes already show as parameters.
                .filter(|k| **k != h.metric && !k.ends_with("_bytes"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let open = first.trials.first().is_some_and(|t| t.schedule.is_some());
    let repeats = first.trials.len() > 1;

    let mut head: Vec<String> = cols
        .iter()
        .map(|c| {
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
        head.extend(["target/s", "late", "service p99"].map(String::from));
    }
    head.push("errors".into());

    let mut t = Table::new(head);
    for s in &r.steps {
        let mut row: Vec<String> = cols
            .iter()
            .map(|c| {
                s.params
                    .get(c)
                    .map(|v| param_text(c, v))
                    .unwrap_or_default()
            })
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
            row.push(format::rate(s.summary.ops_per_sec.mean));
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
                    .map(|x| format::sig3(x.target_ops_per_sec))
                    .unwrap_or_default(),
            );
            row.push(
                s.trials
                    .iter()
                    .filter_map(|t| t.schedule)
                    .map(|x| x.late_starts)
                    .sum::<u64>()
                    .to_string(),
            );
            row.push(
                t0.and_then(|t| t.service_latency)
                    .map(|l| ns(l.p99_ns as f64))
                    .unwrap_or_default(),
            );
        }
        row.push(s.summary.errors.to_string());
        t.row(row);
    }
    t
}

fn mean_figure(s: &StepResult, name: &str) -> Option<f64> {
    let v: Vec<f64> = s
        .trials
        .iter()
        .filter_map(|t| t.figures.get(name).copied())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Latency columns of a step: from its single trial, or the mean over repeats.
fn merged_latency(s: &StepResult) -> (String, String, String, String, String, String) {
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

/// What the sweep shows, in words.
fn analysis_lines(r: &RunRecord) -> String {
    let Some(a) = &r.analysis else {
        return String::new();
    };
    if r.steps.len() < 2 {
        return String::new();
    }
    let mut out = String::from("\n");
    let label = |i: usize| {
        r.steps
            .iter()
            .find(|s| s.index == i)
            .map(|s| {
                let parts: Vec<String> = s
                    .swept
                    .iter()
                    .map(|k| {
                        format!(
                            "{k}={}",
                            s.params
                                .get(k)
                                .map(|v| param_text(k, v))
                                .unwrap_or_default()
                        )
                    })
                    .collect();
                (parts.join(" "), s.summary.headline.mean)
            })
            .unwrap_or_default()
    };
    if let Some(p) = a.peak_step {
        let (l, v) = label(p);
        let word = if r.headline.higher_is_better {
            "peak"
        } else {
            "lowest"
        };
        out.push_str(&format!(
            "{word}: {} at {l}\n",
            metric(&r.headline.metric, v)
        ));
    }
    if let Some(p) = a.sweet_spot_step {
        let (l, v) = label(p);
        out.push_str(&format!(
            "sweet spot: {} at {l} (best throughput per unit of response time)\n",
            metric(&r.headline.metric, v)
        ));
    }
    let scaling: Vec<String> = a
        .scaling
        .iter()
        .filter(|s| s.efficiency.is_some() && (s.speedup - 1.0).abs() > 1e-9)
        .map(|s| {
            format!(
                "{} {:.2}x ({:.0}% efficient)",
                label(s.step).0,
                s.speedup,
                s.efficiency.unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    if !scaling.is_empty() {
        out.push_str(&format!("scaling: {}\n", scaling.join(", ")));
    }
    out
}

/// `perflab runs`.
pub fn render_runs(runs: &[RunSummary]) -> String {
    let mut t = Table::new(
        [
            "id", "started", "workload", "status", "steps", "peak", "suite",
        ]
        .map(String::from)
        .to_vec(),
    );
    for r in runs {
        t.row(vec![
            r.id.clone(),
            r.started_at
                .get(..19)
                .unwrap_or(&r.started_at)
                .replace('T', " "),
            r.workload.clone(),
            r.status.clone(),
            r.steps.to_string(),
            r.peak_value
                .map(|v| metric(&r.peak_metric, v))
                .unwrap_or_else(|| "-".into()),
            r.suite.clone().unwrap_or_default(),
        ]);
    }
    t.render()
}

/// `perflab targets`.
pub fn render_targets(targets: &[TargetInfo]) -> String {
    let mut t = Table::new(
        ["target", "commands", "available", "what"]
            .map(String::from)
            .to_vec(),
    );
    for x in targets {
        t.row(vec![
            x.name.to_string(),
            x.workloads.join(", "),
            if x.available { "yes" } else { "no" }.to_string(),
            x.description.to_string(),
        ]);
    }
    t.render()
}
