//! scan's own findings, for `perflab show` and reports.

use crate::present::mean_figure;
use crate::record::{RunRecord, StepResult};

/// Scans: how much of the machine the engine uses, "of the native ceiling (1 thread, warm):
/// trivial ten 4%, thousand 23%; complex ten 7%", from the steps' `native_pct` at the fewest
/// threads, warm where there are warm steps.
pub fn ceiling_finding(r: &RunRecord) -> Option<String> {
    let param = |s: &StepResult, k: &str| s.params.get(k).cloned().unwrap_or_default();
    let with: Vec<&StepResult> = r
        .steps
        .iter()
        .filter(|s| mean_figure(s, "native_pct").is_some())
        .collect();
    let threads = with
        .iter()
        .filter_map(|s| param(s, "threads").as_u64())
        .min()?;
    let warm = with.iter().any(|s| param(s, "cache") == "warm");
    let chosen: Vec<&&StepResult> = with
        .iter()
        .filter(|s| param(s, "threads").as_u64() == Some(threads))
        .filter(|s| !warm || param(s, "cache") == "warm")
        .collect();
    let mut predicates: Vec<String> = Vec::new();
    for s in &chosen {
        let p = param(s, "predicate")
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !predicates.contains(&p) {
            predicates.push(p);
        }
    }
    let parts: Vec<String> = predicates
        .iter()
        .map(|p| {
            let per: Vec<String> = chosen
                .iter()
                .filter(|s| param(s, "predicate").as_str() == Some(p.as_str()))
                .map(|s| {
                    format!(
                        "{} {:.0}%",
                        param(s, "table").as_str().unwrap_or("?"),
                        mean_figure(s, "native_pct").unwrap_or(0.0)
                    )
                })
                .collect();
            format!("{p} {}", per.join(", "))
        })
        .collect();
    Some(format!(
        "of the native ceiling (perflab's scan of the same rows from memory; {}{}): {}",
        if threads == 1 {
            "1 thread".to_string()
        } else {
            format!("{threads} threads")
        },
        if warm { ", warm" } else { "" },
        parts.join("; ")
    ))
}
