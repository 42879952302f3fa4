//! scan's line in the balance sheet `perflab run` ends with.

use crate::present::{param_str, param_u64, threads};
use crate::record::{RunRecord, StepResult};
use crate::vocab::numbers::{bytes_per_sec, count};

/// The scan's line; an engine's also says what share of the suite's native ceiling it
/// reached, when the suite ran the ceiling.
pub fn line(r: &RunRecord, suite: &[RunRecord]) -> String {
    let mut text = scan_line(r);
    let ceiling = suite
        .iter()
        .find(|c| c.workload == r.workload && c.target == "native");
    if let Some(c) = ceiling.filter(|_| r.target != "native") {
        text.push_str(&share_of_ceiling(r, c));
    }
    text
}

/// Scans, as Gray's table put them: rows/s and MB/s per predicate and row size, and the
/// engine's share of the native ceiling where its run carries it.
fn scan_line(r: &RunRecord) -> String {
    // In order of first appearance: the predicate is not the outer loop of the steps.
    let mut predicates: Vec<&str> = Vec::new();
    for p in r.steps.iter().filter_map(|s| param_str(s, "predicate")) {
        if !predicates.contains(&p) {
            predicates.push(p);
        }
    }
    let parts: Vec<String> = predicates
        .iter()
        .map(|p| {
            let per: Vec<String> = r
                .steps
                .iter()
                .filter(|s| param_str(s, "predicate") == Some(p))
                .map(|s| {
                    let t = s.trials.first();
                    let native = t
                        .and_then(|t| t.figures.get("native_pct"))
                        .map(|v| format!(", {v:.0}% of native"))
                        .unwrap_or_default();
                    format!(
                        "{} rows/s {} ({}{}{native})",
                        count(s.summary.headline.mean),
                        bytes_per_sec(s.summary.bytes_per_sec.mean),
                        param_str(s, "table").unwrap_or("?"),
                        param_str(s, "cache")
                            .filter(|c| *c == "cold")
                            .map(|_| ", cold")
                            .unwrap_or_default(),
                    )
                })
                .collect();
            format!("{p} {}", per.join(", "))
        })
        .collect();
    let n = r
        .steps
        .first()
        .and_then(|s| param_u64(s, "threads"))
        .unwrap_or(1);
    if r.target == "native" {
        format!(
            "scan ceiling (perflab from memory, {}): {}",
            threads(n),
            parts.join("; ")
        )
    } else {
        format!("scan ({}, {}): {}", r.target, threads(n), parts.join("; "))
    }
}

/// `; of the native ceiling: trivial ten 21%, ...`: each engine step against the ceiling's
/// step of the same table, predicate and threads (the suite runs the two apart).
fn share_of_ceiling(r: &RunRecord, ceiling: &RunRecord) -> String {
    let key = |s: &StepResult| {
        (
            param_str(s, "table").map(str::to_string),
            param_str(s, "predicate").map(str::to_string),
            param_u64(s, "threads"),
        )
    };
    let parts: Vec<String> = r
        .steps
        .iter()
        .filter_map(|s| {
            let c = ceiling.steps.iter().find(|c| key(c) == key(s))?;
            (c.summary.headline.mean > 0.0).then(|| {
                format!(
                    "{} {} {:.0}%",
                    param_str(s, "predicate").unwrap_or("?"),
                    param_str(s, "table").unwrap_or("?"),
                    s.summary.headline.mean / c.summary.headline.mean * 100.0
                )
            })
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; of the native ceiling: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scan_record(target: &str, rows_per_sec: &[f64]) -> RunRecord {
        let mut r = RunRecord {
            workload: "scan".into(),
            target: target.into(),
            ..Default::default()
        };
        let mut i = 0;
        for table in ["ten", "thousand"] {
            for predicate in ["trivial", "complex"] {
                let mut s = StepResult {
                    index: i,
                    params: [
                        ("table".to_string(), json!(table)),
                        ("predicate".to_string(), json!(predicate)),
                        ("cache".to_string(), json!("warm")),
                        ("threads".to_string(), json!(1)),
                    ]
                    .into(),
                    ..Default::default()
                };
                s.summary.headline.mean = rows_per_sec[i];
                r.steps.push(s);
                i += 1;
            }
        }
        r.status = crate::record::Status::Complete;
        r
    }

    #[test]
    fn scan_lines_name_each_predicate_once_and_the_share_of_the_ceiling() {
        let native = scan_record("native", &[1e9, 1e8, 4e7, 2e7]);
        let engine = scan_record("sqlite:///x.db", &[5e7, 5e6, 8e6, 2e6]);
        let line = scan_line(&engine);
        assert_eq!(line.matches("trivial").count(), 1, "{line}");
        assert_eq!(line.matches("complex").count(), 1, "{line}");
        assert!(
            line.starts_with("scan (sqlite:///x.db, 1 thread): trivial 50.0M rows/s"),
            "{line}"
        );
        assert_eq!(
            share_of_ceiling(&engine, &native),
            "; of the native ceiling: trivial ten 5%, complex ten 5%, trivial thousand 20%, complex thousand 10%"
        );
        let suite = [native.clone(), engine.clone()];
        let ceiling = super::line(&native, &suite);
        assert!(
            ceiling.starts_with("scan ceiling (perflab from memory, 1 thread)"),
            "{ceiling}"
        );
        let sheet = super::line(&engine, &suite);
        assert!(
            sheet.contains("of the native ceiling: trivial ten 5%"),
            "{sheet}"
        );
    }
}
