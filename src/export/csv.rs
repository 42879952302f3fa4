//! CSV: one row per trial (a step run once has one row), for spreadsheets and plotting.
//! Columns: run and step identity, every parameter, the figures with their units in the name.

use crate::record::RunRecord;
use std::collections::BTreeSet;
use std::io::Write;

const FIXED: [&str; 21] = [
    "run_id",
    "workload",
    "step",
    "repeat",
    "workers",
    "elapsed_ns",
    "ops",
    "items",
    "bytes",
    "errors",
    "ops_per_sec",
    "items_per_sec",
    "bytes_per_sec",
    "latency_mean_ns",
    "latency_p50_ns",
    "latency_p90_ns",
    "latency_p99_ns",
    "latency_p999_ns",
    "latency_max_ns",
    "cpu_busy_pct",
    "cpu_steal_pct",
];

pub fn write(r: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let params: BTreeSet<&String> = r.steps.iter().flat_map(|s| s.params.keys()).collect();
    let figures: BTreeSet<&String> = r
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .flat_map(|t| t.figures.keys())
        .collect();
    let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    header.extend(params.iter().map(|p| format!("param_{p}")));
    header.extend(figures.iter().map(|f| f.to_string()));
    header.push("process_cpu_ns_per_op".into());
    line(out, &header)?;
    for s in &r.steps {
        for t in &s.trials {
            let mut row = vec![
                r.id.clone(),
                r.workload.clone(),
                s.index.to_string(),
                t.repeat.to_string(),
                t.workers.to_string(),
                t.elapsed_ns.to_string(),
                t.ops.to_string(),
                t.items.to_string(),
                t.bytes.to_string(),
                t.errors.to_string(),
                t.ops_per_sec.to_string(),
                t.items_per_sec.to_string(),
                t.bytes_per_sec.to_string(),
                t.latency.mean_ns.to_string(),
                t.latency.p50_ns.to_string(),
                t.latency.p90_ns.to_string(),
                t.latency.p99_ns.to_string(),
                t.latency.p999_ns.to_string(),
                t.latency.max_ns.to_string(),
                t.resources.cpu.busy_pct.to_string(),
                t.resources.cpu.steal_pct.to_string(),
            ];
            row.extend(params.iter().map(|p| param_text(s.params.get(*p))));
            row.extend(
                figures
                    .iter()
                    .map(|f| t.figures.get(*f).map(|v| v.to_string()).unwrap_or_default()),
            );
            row.push(
                t.resources
                    .process_cpu_ns_per_op
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            );
            line(out, &row)?;
        }
    }
    Ok(())
}

/// A parameter's value as a cell: text as it is, anything else as JSON writes it.
pub(super) fn param_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(v)) => v.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

pub(super) fn line(out: &mut dyn Write, cells: &[String]) -> std::io::Result<()> {
    let text: Vec<String> = cells.iter().map(|c| quote(c)).collect();
    writeln!(out, "{}", text.join(","))
}

/// Quotes a cell if it holds a comma, a quote or a line break (RFC 4180).
fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{StepResult, Trial};

    #[test]
    fn one_row_per_trial_with_params_and_figures() {
        let mut t = Trial {
            ops: 10,
            ..Default::default()
        };
        t.figures.insert("ns_per_load".into(), 1.5);
        let r = RunRecord {
            id: "x".into(),
            workload: "memory".into(),
            steps: vec![StepResult {
                params: [("kernel".to_string(), serde_json::json!("a,b"))].into(),
                trials: vec![t.clone(), t],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut out = Vec::new();
        write(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].ends_with("param_kernel,ns_per_load,process_cpu_ns_per_op"));
        assert!(lines[1].contains(",\"a,b\",1.5,"), "{}", lines[1]);
    }
}
