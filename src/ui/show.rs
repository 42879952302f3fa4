//! A record as tables for people: a header, one row per step, the sweep's analysis, warnings.

use super::format::{self, header, metric, ns};
use crate::archive::RunSummary;
use crate::present::mean_figure;
use crate::present::table::Table;
use crate::record::{Analysis, RunRecord, StepResult, Trial, step_number};
use crate::workload::kind;

/// Under MPI: the ranks, their hosts, the library, how the load was divided and how closely
/// the ranks started (`MPI: 4 ranks on 2 hosts (a, b) · Open MPI v4.1.4 · ...`).
pub fn cluster_line(r: &RunRecord) -> Option<String> {
    let c = r.cluster.as_ref()?;
    let mut hosts: Vec<&str> = Vec::new();
    for m in &c.members {
        if !hosts.contains(&m.host.as_str()) {
            hosts.push(&m.host);
        }
    }
    let hosts_text = match hosts.len() {
        1 => format!("1 host ({})", hosts[0]),
        n => format!("{n} hosts ({})", hosts.join(", ")),
    };
    let library = c.library.split(',').next().unwrap_or_default();
    let scope = match c.scope.as_str() {
        "rank" => "each active rank runs the threads, ops and rate given",
        _ => "threads, ops and rate divided over the active ranks",
    };
    let skew = r
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .filter_map(|t| t.ranks)
        .map(|k| k.start_skew_ns)
        .max()
        .map(|n| format!(" · start skew up to {}", ns(n as f64)))
        .unwrap_or_default();
    Some(format!(
        "MPI: {} ranks on {hosts_text} · {library} · {scope}{skew}",
        c.ranks
    ))
}

/// The whole record.
pub fn render(r: &RunRecord) -> String {
    render_tagged(r, &[])
}

/// The whole record, with the tags that name it: what ran (the command as given, the
/// settings that define it), then its figures.
pub fn render_tagged(r: &RunRecord, tags: &[&str]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "run {}  {}  {}  started {}{}\n",
        r.id,
        r.workload,
        r.status.as_str(),
        r.started_at,
        match tags {
            [] => String::new(),
            t => format!("  tags {}", t.join(", ")),
        }
    ));
    if !r.command.is_empty() {
        out.push_str(&format!("command {}\n", r.command.join(" ")));
    }
    out.push_str(&format!(
        "target {}  ·  {}\n",
        r.target,
        describe_spec(&r.spec)
    ));
    if !r.settings.is_empty() {
        out.push_str(&format!(
            "settings {}\n",
            crate::record::settings_line(&r.settings)
        ));
    }
    if let Some(line) = cluster_line(r) {
        out.push_str(&format!("{line}\n"));
    }
    if r.steps.is_empty() {
        out.push_str("\nno step finished\n");
    } else {
        out.push('\n');
        out.push_str(&steps_table(r).render());
        // The kind's own tables (breakdowns, copies, quality of service) and findings.
        for (title, t) in kind::tables_of(r) {
            out.push_str(&format!("\n{title}:\n"));
            out.push_str(&t.render());
        }
        let own = kind::of(r).map(|k| k.findings(r)).unwrap_or_default();
        if !own.is_empty() {
            out.push('\n');
        }
        for line in own {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&super::resources::render(r));
        out.push_str(&super::levels::render(r));
        out.push_str(&analysis_lines(r));
        let checks = check_lines(r);
        if !checks.is_empty() {
            out.push('\n');
            for l in checks {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    if let Some(c) = &r.cut_short {
        out.push_str(&format!("{}\n", cut_short_line(c)));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {}\n", w.message));
    }
    out
}

/// `cut short: step 3 (clients=8), repeat 1, during measure: interrupted (Ctrl-C); 2 of 8
/// workers were stuck in an op and abandoned`.
pub fn cut_short_line(c: &crate::record::CutShort) -> String {
    let label = if c.label.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.label)
    };
    let stuck = if c.stuck_workers > 0 {
        format!(
            "; {} of {} workers were stuck in an op and abandoned",
            c.stuck_workers, c.workers
        )
    } else {
        String::new()
    };
    if c.phase == "prepare" {
        return format!("cut short before the first step: {}", c.reason);
    }
    format!(
        "cut short: step {}{label}, repeat {}, during {}: {}{stuck}",
        step_number(c.step),
        c.repeat + 1,
        c.phase,
        c.reason
    )
}

/// The consistency checks after the steps: how many passed, what the last step's found, and
/// every failure. Empty when the workload checks nothing.
pub fn check_lines(r: &RunRecord) -> Vec<String> {
    let all: Vec<(usize, &crate::record::Check)> = r
        .steps
        .iter()
        .flat_map(|s| s.checks.iter().map(move |c| (s.index, c)))
        .collect();
    if all.is_empty() {
        return Vec::new();
    }
    let passed = all.iter().filter(|(_, c)| c.passed).count();
    let mut out = vec![format!(
        "checks after each step: {passed} of {} passed",
        all.len()
    )];
    let last = all.last().map(|(i, _)| *i);
    for (step, c) in &all {
        if !c.passed || Some(*step) == last {
            let shard = c.shard.map(|s| format!(" shard {s}")).unwrap_or_default();
            let mark = if c.passed { "ok" } else { "FAILED" };
            out.push(format!(
                "  step {}{shard}: {mark}: {}",
                step_number(*step),
                c.summary
            ));
        }
    }
    out
}

/// `closed loop · 1s warmup + 5s per step · repeat 3`, from the record's spec.
pub fn describe_spec(spec: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    match spec.pointer("/load/model").and_then(|m| m.as_str()) {
        Some("offered") => parts.push(format!(
            "open loop ({} arrivals at the workload's rate)",
            spec.pointer("/load/arrival")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
        )),
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
        // Steps of fixed work (jobs): no time limit; the kind says what the work is.
        _ if let Some(work) = work_of(spec) => work,
        (Some(d), _) => format!("{} per step", ns(d.as_f64().unwrap_or(0.0))),
        (_, Some(o)) => format!("{} ops per step", o),
        _ => String::new(),
    };
    parts.push(if warmup > 0.0 {
        format!("{} warmup + {stop}", ns(warmup))
    } else {
        format!("no warmup, {stop}")
    });
    if let Some(n) = spec
        .get("repeat")
        .and_then(|v| v.as_u64())
        .filter(|&n| n > 1)
    {
        parts.push(format!("repeat {n}"));
    }
    parts.join("  ·  ")
}

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
                .filter(|k| !crate::workload::kind::hidden_in_steps(r, k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let open = first.trials.first().is_some_and(|t| t.schedule.is_some());
    let repeats = first.trials.len() > 1;

    let mut head: Vec<String> = cols
        .iter()
        .map(|c| {
            // The workers as the kind counts them (a jobs run's copies).
            if c == "threads" {
                return crate::workload::kind::workers_of(r).to_string();
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
        head.extend(["target/s", "late", "missed", "service p99"].map(String::from));
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
            .map(|c| {
                s.params
                    .get(c)
                    .map(|v| format::param(c, v))
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
                    .fold(0u64, |a, x| a.saturating_add(x.late_starts))
                    .to_string(),
            );
            row.push(
                s.trials
                    .iter()
                    .filter_map(|t| t.schedule)
                    .fold(0u64, |a, x| a.saturating_add(x.missed_ops))
                    .to_string(),
            );
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

/// What the sweep shows, in words, below the table.
fn analysis_lines(r: &RunRecord) -> String {
    let Some(a) = &r.analysis else {
        return String::new();
    };
    let lines = findings(r, a);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n");
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// `threads=4 kernel=triad` for a step (by its index), and its headline figure.
fn step_label(r: &RunRecord, i: usize) -> (String, f64) {
    r.steps
        .iter()
        .find(|s| s.index == i)
        .map(|s| {
            // The workers as the kind counts them (copies=4, analysts=2).
            let label = crate::workload::kind::label_in_kind(r, &format::step_params(s));
            (label, s.summary.headline.mean)
        })
        .unwrap_or_default()
}

/// What an analysis shows, one finding per line: the peak, the sweet spot, scaling, and per
/// curve its knees and scalability fit. Shared by `perflab show` and reports.
pub fn findings(r: &RunRecord, a: &Analysis) -> Vec<String> {
    // Calibrations and shares of a maximum are not a curve: their findings are the levels'.
    if let Some(l) = &r.load_levels {
        return super::levels::findings(r, l);
    }
    // A search's probes are not a curve either: its findings are mail's users supported.
    if r.search.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if r.steps.len() < 2 {
        return out;
    }
    let label = |i: usize| step_label(r, i);
    let m = |v: f64| metric(&r.headline.metric, v);
    if let Some(p) = a.peak_step {
        let (l, v) = label(p);
        let word = if r.headline.higher_is_better {
            "peak"
        } else {
            "lowest"
        };
        out.push(format!("{word}: {} at {l}", m(v)));
    }
    if let Some(p) = a.sweet_spot_step {
        let (l, v) = label(p);
        out.push(format!(
            "sweet spot: {} at {l} (best throughput per unit of response time)",
            m(v)
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
    if let Some(own) = kind::of(r).and_then(|k| k.scaling(r)) {
        // The same scaling, in the kind's words (jobs: copies and batches).
        out.extend(own);
    } else if !scaling.is_empty() {
        out.push(format!("scaling: {}", scaling.join(", ")));
    }
    let workers = crate::workload::kind::workers_of(r);
    for c in &a.curves {
        // The curve's axis in the kind's words (`analysts`, `copies`).
        let x = if c.x == "threads" {
            workers
        } else {
            c.x.as_str()
        };
        let curve = if c.label.is_empty() {
            x.to_string()
        } else {
            format!("{x}, {}", c.label)
        };
        let mut knees = Vec::new();
        if let Some(k) = c.knee_kneedle_step {
            knees.push(format!("Kneedle at {}", label(k).0));
        }
        if let Some(k) = c.knee_power_step {
            knees.push(format!("Kleinrock's power at {}", label(k).0));
        }
        if let Some(s) = &c.slo {
            knees.push(format!(
                "{} holds up to {}{}",
                s.objective,
                m(s.throughput),
                if s.interpolated {
                    format!(" (interpolated past {})", label(s.last_step).0)
                } else {
                    format!(" at {}", label(s.last_step).0)
                }
            ));
        }
        if !knees.is_empty() {
            out.push(format!("knee ({curve}): {}", knees.join("; ")));
        }
        if let Some(u) = &c.usl {
            out.push(format!(
                "USL ({curve}): {}",
                usl_text(u, &r.headline.metric, &c.x)
            ));
        }
    }
    out
}

/// `σ 0.031 [0.020, 0.042], κ 0.0012 [...], γ 1.02k/s; R² 0.998; peak at 28 threads, 12.3k/s
/// (extrapolated)`.
pub fn usl_text(u: &crate::stats::usl::UslFit, figure: &str, x: &str) -> String {
    let ci = |c: Option<[f64; 2]>, f: &dyn Fn(f64) -> String| {
        c.map(|[lo, hi]| format!(" [{}, {}]", f(lo), f(hi)))
            .unwrap_or_default()
    };
    let g = |v: f64| format!("{v:.3}");
    let k = |v: f64| format!("{v:.2e}");
    let t = |v: f64| metric(figure, v);
    let mut text = format!(
        "σ {}{}, κ {}{}, γ {}{}; R² {:.3}",
        g(u.sigma),
        ci(u.sigma_ci95, &g),
        k(u.kappa),
        ci(u.kappa_ci95, &k),
        t(u.gamma),
        ci(u.gamma_ci95, &t),
        u.r_squared
    );
    match (u.peak_n, u.peak_throughput) {
        (Some(n), Some(xn)) => text.push_str(&format!(
            "; peak at {x}={n:.1}, {}{}",
            t(xn),
            if u.peak_extrapolated {
                " (extrapolated beyond the measured range)"
            } else {
                ""
            }
        )),
        _ => text.push_str("; no peak (no coherency cost)"),
    }
    if let Some(l) = u.amdahl_limit {
        text.push_str(&format!("; Amdahl ceiling {}", t(l)));
    }
    for w in &u.warnings {
        text.push_str(&format!("; {w}"));
    }
    text
}

/// `perflab runs`, with each run's tags.
pub fn render_runs(runs: &[RunSummary], tags: &crate::archive::tags::Tags) -> String {
    // A host column once the archive holds runs of more than one machine (imported ones);
    // a host name two machines share gets the machine's digest beside it.
    let machines: std::collections::BTreeSet<(&str, Option<&str>)> = runs
        .iter()
        .map(|r| (r.host.as_str(), r.machine.as_deref()))
        .collect();
    let shared = |host: &str| machines.iter().filter(|(h, _)| *h == host).count() > 1;
    let hosts = machines.len() > 1;
    let mut head = vec![
        "id", "started", "workload", "status", "steps", "peak", "suite", "tags",
    ];
    if hosts {
        head.push("host");
    }
    // Last, as it is the widest: what each run ran, so that runs of one kind tell apart.
    head.push("settings");
    let mut t = Table::new(head.into_iter().map(String::from).collect());
    for r in runs {
        let host = match (&r.machine, shared(&r.host)) {
            (Some(m), true) => format!("{} ({})", r.host, m.get(..6).unwrap_or(m)),
            _ => r.host.clone(),
        };
        let mut row = vec![
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
            tags.iter()
                .filter(|(_, id)| **id == r.id)
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ];
        if hosts {
            row.push(host);
        }
        row.push(r.settings.clone());
        t.row(row);
    }
    t.render()
}

/// `perflab targets`.
/// One line of `perflab targets`: a target and the commands that measure it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TargetRow {
    /// How it is named on the command line (`memory`, `postgres://...`).
    pub name: &'static str,
    /// The commands that measure it.
    pub workloads: Vec<&'static str>,
    pub description: &'static str,
    /// Whether this build can use it now.
    pub available: bool,
}

pub fn render_targets(targets: &[TargetRow]) -> String {
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
/// How much work a step of the spec's kind is, when its kind says (jobs' batches).
fn work_of(spec: &serde_json::Value) -> Option<String> {
    let name = spec.get("workload")?.as_str()?;
    kind::by_name(name)?.describe_work(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Check, CutShort};

    /// People read steps from 1: the record's index 0 is "step 1" (`record::step_number`).
    #[test]
    fn steps_read_from_one() {
        let cut = CutShort {
            step: 0,
            repeat: 0,
            phase: "measure".into(),
            reason: "interrupted (Ctrl-C)".into(),
            ..Default::default()
        };
        assert_eq!(
            cut_short_line(&cut),
            "cut short: step 1, repeat 1, during measure: interrupted (Ctrl-C)"
        );
        let check = |passed| Check {
            name: "books_balance".into(),
            passed,
            summary: "the books balance".into(),
            ..Default::default()
        };
        let mut r = RunRecord::default();
        for (index, passed) in [(0, false), (1, true)] {
            r.steps.push(StepResult {
                index,
                checks: vec![check(passed)],
                ..Default::default()
            });
        }
        assert_eq!(
            check_lines(&r),
            [
                "checks after each step: 1 of 2 passed",
                "  step 1: FAILED: the books balance",
                "  step 2: ok: the books balance",
            ]
        );
    }
}
