//! The jobs kind's own tables and findings (terminal and reports): each copy's jobs, CPUs, elapsed time and CPU
//! time (the record's `copy` groups and `copy_<n>_*` figures), and the findings a batch
//! reader looks for: throughput relative to one copy alone, and the time to finish a batch.

use crate::present::table::Table;
use crate::record::{RunRecord, step_number};
use crate::vocab::numbers::{metric, ns, rate};

/// The per-command and per-copy tables that have rows, each with its title.
pub fn tables(r: &RunRecord) -> Vec<(String, Table)> {
    [by_command(r), by_copy(r)].into_iter().flatten().collect()
}

/// A mixed batch's jobs by command (the `kind` groups): elapsed time per job of each.
fn by_command(r: &RunRecord) -> Option<(String, Table)> {
    let mut t = Table::new(
        [
            "step", "command", "jobs", "jobs/s", "mean", "p50", "p99", "max", "errors",
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &r.steps {
        let Some(trial) = s.trials.first() else {
            continue;
        };
        let mut kinds: Vec<_> = trial.groups.iter().filter(|g| g.by == "kind").collect();
        if kinds.len() < 2 {
            continue;
        }
        kinds.sort_by(|a, b| a.key.cmp(&b.key));
        for g in kinds {
            let l = &g.latency;
            t.row(vec![
                step_number(s.index).to_string(),
                g.label.clone(),
                g.ops.to_string(),
                rate(g.ops_per_sec),
                ns(l.mean_ns),
                ns(l.p50_ns as f64),
                ns(l.p99_ns as f64),
                ns(l.max_ns as f64),
                g.errors.to_string(),
            ]);
        }
    }
    (!t.is_empty()).then(|| ("by command (elapsed per job)".to_string(), t))
}

/// Each copy's jobs, CPU, elapsed time and largest RSS.
fn by_copy(r: &RunRecord) -> Option<(String, Table)> {
    let mut t = Table::new(
        [
            "step", "copies", "copy", "pinned", "jobs", "elapsed", "CPU", "max RSS", "errors",
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &r.steps {
        // The first trial stands for the step; repeats have the same copies.
        let Some(trial) = s.trials.first() else {
            continue;
        };
        let mut copies: Vec<_> = trial.groups.iter().filter(|g| g.by == "copy").collect();
        copies.sort_by_key(|g| g.key.parse::<u64>().unwrap_or(0));
        for g in copies {
            let figure = |what: &str| trial.figures.get(&format!("copy_{}_{what}", g.key));
            t.row(vec![
                step_number(s.index).to_string(),
                trial.workers.to_string(),
                g.key.clone(),
                g.label.clone(),
                g.ops.to_string(),
                figure("elapsed_ns").map_or("-".into(), |v| ns(*v)),
                figure("cpu_ns").map_or("-".into(), |v| ns(*v)),
                figure("max_rss_bytes").map_or("-".into(), |v| metric("max_rss_bytes", *v)),
                g.errors.to_string(),
            ]);
        }
    }
    (!t.is_empty()).then(|| {
        (
            "each copy (elapsed and CPU: its jobs together; CPU: user + system, from wait4)"
                .to_string(),
            t,
        )
    })
}

/// "throughput relative to 1 copy: 2 copies 1.96x (98% per copy), ..." from the analysis'
/// scaling, and with `--jobs` the time each step took to finish the batch.
pub fn findings(r: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    let copies_of = |i: usize| {
        r.steps
            .iter()
            .find(|s| s.index == i)
            .and_then(|s| s.params.get("threads"))
            .and_then(|v| v.as_u64())
    };
    let plural = |n: u64| {
        if n == 1 {
            "1 copy".to_string()
        } else {
            format!("{n} copies")
        }
    };
    // Per placement (or any other swept option): each copy count against that group's first.
    let group_of = |st: &crate::record::StepResult| -> Vec<(String, String)> {
        st.swept
            .iter()
            .filter(|k| *k != "threads")
            .filter_map(|k| Some((k.clone(), st.params.get(k)?.to_string())))
            .collect()
    };
    type Group<'r> = (Vec<(String, String)>, Vec<&'r crate::record::StepResult>);
    let mut groups: Vec<Group> = Vec::new();
    for st in r.steps.iter().filter(|s| !s.trials.is_empty()) {
        let g = group_of(st);
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(st),
            None => groups.push((g, vec![st])),
        }
    }
    for (key, steps) in &groups {
        let Some(first) = steps.first() else { continue };
        let (Some(base), rate0) = (copies_of(first.index), first.summary.ops_per_sec.mean) else {
            continue;
        };
        let parts: Vec<String> = steps[1..]
            .iter()
            .filter_map(|st| {
                let n = copies_of(st.index)?;
                let speedup = st.summary.ops_per_sec.mean / rate0;
                if !speedup.is_finite() {
                    return None;
                }
                let per = speedup / (n as f64 / base as f64);
                Some(format!(
                    "{} {speedup:.2}x ({:.0}% per copy)",
                    plural(n),
                    per * 100.0
                ))
            })
            .collect();
        let of = match key.is_empty() {
            true => String::new(),
            false => format!(
                " ({})",
                key.iter()
                    .map(|(k, v)| format!("{k}={}", v.trim_matches('"')))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if !parts.is_empty() {
            out.push(format!(
                "throughput relative to {}{of}: {}",
                plural(base),
                parts.join(", ")
            ));
        }
    }
    let batch = r.spec.get("jobs").and_then(|v| v.as_u64());
    if let Some(n) = batch {
        let parts: Vec<String> = r
            .steps
            .iter()
            .filter_map(|s| {
                let secs: Vec<f64> = s
                    .trials
                    .iter()
                    .filter_map(|t| t.figures.get("seconds").copied())
                    .collect();
                let n_copies = s.params.get("threads")?.as_u64()?;
                (!secs.is_empty()).then(|| {
                    format!(
                        "{} {}",
                        plural(n_copies),
                        ns(secs.iter().sum::<f64>() / secs.len() as f64 * 1e9)
                    )
                })
            })
            .collect();
        if !parts.is_empty() {
            out.push(format!("time to finish {n} jobs: {}", parts.join(", ")));
        }
    }
    out
}

/// The run's shape in the header: "2 copies, one job each" or "a batch of 400 jobs", and
/// the placement.
pub fn describe(spec: &serde_json::Value) -> String {
    let work = match spec.get("jobs").and_then(|v| v.as_u64()) {
        Some(n) => format!("a batch of {n} jobs per step"),
        None => "one job per copy".to_string(),
    };
    let one = |p: &str| match p {
        "compact" => "pinned compact",
        "spread" => "pinned spread",
        _ => "not pinned",
    };
    let placement = match spec.get("placement") {
        Some(serde_json::Value::String(p)) => one(p).to_string(),
        // Swept: each copy count every way in turn.
        Some(serde_json::Value::Array(ps)) => ps
            .iter()
            .filter_map(|p| p.as_str())
            .map(one)
            .collect::<Vec<_>>()
            .join(", then "),
        _ => one("none").to_string(),
    };
    format!("{work}, {placement}")
}
