//! CSV of the time series: one row per interval of every trial, for plotting a run over time
//! (`perflab export RUN --format csv-intervals`). The per-trial CSV (`csv`) keeps its columns;
//! this is its companion. Columns: run and step identity, every parameter, the interval's
//! throughput and response-time figures as in the record's `series`, and the sampler's CPU
//! and perflab's own CPU over the same interval where the sampler ran (the reading whose
//! start is nearest the interval's).

use super::csv::{line, param_text};
use crate::record::RunRecord;
use std::collections::BTreeSet;
use std::io::Write;

const FIXED: [&str; 15] = [
    "run_id",
    "workload",
    "step",
    "repeat",
    "start_ns",
    "duration_ns",
    "ops",
    "errors",
    "ops_per_sec",
    "bytes_per_sec",
    "p50_ns",
    "p99_ns",
    "max_ns",
    "missed",
    "cpu_busy_pct",
];

pub fn write(r: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let params: BTreeSet<&String> = r.steps.iter().flat_map(|s| s.params.keys()).collect();
    let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    header.push("perflab_cpu_pct".into());
    header.push("latency_count".into());
    header.extend(params.iter().map(|p| format!("param_{p}")));
    line(out, &header)?;
    for s in &r.steps {
        for t in &s.trials {
            for p in &t.series {
                let reading = t
                    .resources
                    .series
                    .iter()
                    .min_by_key(|q| q.start_ns.abs_diff(p.start_ns))
                    .filter(|q| q.start_ns.abs_diff(p.start_ns) < p.duration_ns.max(1));
                let mut row = vec![
                    r.id.clone(),
                    r.workload.clone(),
                    s.index.to_string(),
                    t.repeat.to_string(),
                    p.start_ns.to_string(),
                    p.duration_ns.to_string(),
                    p.ops.to_string(),
                    p.errors.to_string(),
                    p.ops_per_sec.to_string(),
                    p.bytes_per_sec.to_string(),
                    p.p50_ns.to_string(),
                    p.p99_ns.to_string(),
                    p.max_ns.to_string(),
                    p.missed.to_string(),
                    reading
                        .map(|q| q.cpu.busy().to_string())
                        .unwrap_or_default(),
                    reading
                        .map(|q| q.process_cpu_pct.to_string())
                        .unwrap_or_default(),
                    p.latency_count.map(|n| n.to_string()).unwrap_or_default(),
                ];
                row.extend(params.iter().map(|k| param_text(s.params.get(*k))));
                line(out, &row)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{IntervalPoint, StepResult, Trial};

    #[test]
    fn one_row_per_interval_with_the_steps_parameters() {
        let t = Trial {
            series: (0..3)
                .map(|i| IntervalPoint {
                    start_ns: i * 1_000_000_000,
                    duration_ns: 1_000_000_000,
                    ops: 10 + i,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let r = RunRecord {
            id: "x".into(),
            workload: "null".into(),
            steps: vec![StepResult {
                params: [("threads".to_string(), serde_json::json!(2))].into(),
                trials: vec![t],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut out = Vec::new();
        write(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("run_id,workload,step,repeat,start_ns"));
        assert!(lines[0].ends_with("perflab_cpu_pct,latency_count,param_threads"));
        assert!(
            lines[3].starts_with("x,null,0,0,2000000000,1000000000,12,"),
            "{}",
            lines[3]
        );
        assert!(lines[3].ends_with(",2"));
    }
}
