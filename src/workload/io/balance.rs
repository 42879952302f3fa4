//! io's line in the balance sheet `perflab run` ends with.

use crate::present::{param_str, param_u64};
use crate::record::RunRecord;
use crate::vocab::numbers::{bytes_per_sec, count, ns};
use crate::vocab::units::format_bytes;

/// Each step as the reports put it, or the best of IOzone's surface.
pub fn line(r: &RunRecord) -> String {
    if r.workload == "io_surface" {
        return format!(
            "storage surface ({}): {} at best over all file and record sizes",
            r.target,
            bytes_per_sec(
                r.steps
                    .iter()
                    .map(|s| s.summary.headline.mean)
                    .fold(0.0, f64::max)
            )
        );
    }
    io_line(r)
}

/// Storage: each step as the reports put it, e.g. "randread 8 KiB QD32 4.6K IO/s 6.9 ms".
fn io_line(r: &RunRecord) -> String {
    let parts: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let rw = param_str(s, "rw").unwrap_or("?");
            let bs = param_u64(s, "bs_bytes")
                .map(format_bytes)
                .unwrap_or_default();
            let depth = param_u64(s, "iodepth").unwrap_or(1);
            // The outstanding I/Os: a queue (io_uring), or threads of one I/O each (sync).
            let load = match param_u64(s, "threads").unwrap_or(1) {
                1 => format!("QD{depth}"),
                t if depth == 1 => format!("{t} threads"),
                t => format!("{t}x QD{depth}"),
            };
            let rate = if rw.starts_with("rand") {
                format!("{} IO/s", count(s.summary.ops_per_sec.mean))
            } else {
                bytes_per_sec(s.summary.bytes_per_sec.mean)
            };
            format!(
                "{rw} {bs} {load} {rate} {}",
                ns(s.summary.latency_mean_ns.mean)
            )
        })
        .collect();
    format!("storage ({}): {}", r.target, parts.join("; "))
}
