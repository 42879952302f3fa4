//! memory's line in the balance sheet `perflab run` ends with.

use crate::present::{param_str, param_u64, threads};
use crate::record::RunRecord;
use crate::vocab::numbers::{bytes_per_sec, count, ns};
use crate::vocab::units::format_bytes;

/// Bandwidth per kernel and threads, latency per working set, or the lotto's searches.
pub fn line(r: &RunRecord) -> String {
    match r.headline.metric.as_str() {
        "bytes_per_sec" => {
            let mut kernels: Vec<&str> = r
                .steps
                .iter()
                .filter_map(|s| param_str(s, "kernel"))
                .collect();
            kernels.dedup();
            let parts: Vec<String> = kernels
                .iter()
                .map(|k| {
                    let per: Vec<String> = r
                        .steps
                        .iter()
                        .filter(|s| param_str(s, "kernel") == Some(k))
                        .map(|s| {
                            format!(
                                "{} ({})",
                                bytes_per_sec(s.summary.headline.mean),
                                threads(param_u64(s, "threads").unwrap_or(1))
                            )
                        })
                        .collect();
                    format!("{k} {}", per.join(", "))
                })
                .collect();
            format!("memory bandwidth: {}", parts.join("; "))
        }
        "ns_per_load" => {
            let points: Vec<String> = r
                .steps
                .iter()
                .map(|s| {
                    format!(
                        "{} at {}",
                        ns(s.summary.headline.mean),
                        format_bytes(param_u64(s, "size_bytes").unwrap_or(0))
                    )
                })
                .collect();
            format!(
                "memory latency: {} (the last is DRAM when the set exceeds the caches)",
                points.join(", ")
            )
        }
        _ => {
            let per: Vec<String> = r
                .steps
                .iter()
                .map(|s| {
                    format!(
                        "{} searches/s ({})",
                        count(s.summary.headline.mean),
                        threads(param_u64(s, "threads").unwrap_or(1))
                    )
                })
                .collect();
            let alloc = r.steps[0]
                .trials
                .first()
                .and_then(|t| t.figures.get("alloc_ns"))
                .copied();
            let size = param_u64(&r.steps[0], "size_bytes").unwrap_or(0);
            format!(
                "memory lotto: {}{}",
                per.join(", "),
                alloc
                    .map(|a| format!(
                        "; {} to allocate and fill {} per thread",
                        ns(a),
                        format_bytes(size)
                    ))
                    .unwrap_or_default()
            )
        }
    }
}
