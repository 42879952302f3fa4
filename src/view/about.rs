//! What ran and how it ended, in one line each: the spec in words (load model, phases,
//! repeats), the ranks under MPI, and why a run was cut short. `perflab show` heads a record
//! with them and a report's run section says the same.

use crate::record::{CutShort, RunRecord, step_number};
use crate::vocab::numbers::ns;
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
    // Steps the kind shapes itself (a job file's groups, batch jobs): the kind says what each
    // is, its ramps included, and the run's own warmup does not apply.
    let stop = match (spec.pointer("/stop/duration_ns"), spec.pointer("/stop/ops")) {
        _ if let Some(work) = work_of(spec) => Some(work),
        (Some(d), _) => Some(format!("{} per step", ns(d.as_f64().unwrap_or(0.0)))),
        (_, Some(o)) => Some(format!("{} ops per step", o)),
        _ => None,
    };
    parts.push(match stop {
        Some(stop) if work_of(spec).is_some() => stop,
        Some(stop) if warmup > 0.0 => format!("{} warmup + {stop}", ns(warmup)),
        Some(stop) => format!("no warmup, {stop}"),
        None => "no warmup, ".into(),
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

/// How much work a step of the spec's kind is, when its kind says (jobs' batches).
fn work_of(spec: &serde_json::Value) -> Option<String> {
    let name = spec.get("workload")?.as_str()?;
    kind::by_name(name)?.describe_work(spec)
}

/// `cut short: step 3 (clients=8), repeat 1, during measure: interrupted (Ctrl-C); 2 of 8
/// workers were stuck in an op and abandoned`.
pub fn cut_short_line(c: &CutShort) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// People read steps and repeats from 1: the record's index 0 is "step 1"
    /// (`record::step_number`).
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
    }
}
