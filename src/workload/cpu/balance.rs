//! cpu's line in the balance sheet `perflab run` ends with.

use crate::present::{param_u64, threads};
use crate::record::RunRecord;
use crate::vocab::numbers::sig3;

/// Fractals per second per thread, and the speedup at the peak.
pub fn line(r: &RunRecord) -> String {
    let first = &r.steps[0];
    let base = first.summary.headline.mean / param_u64(first, "threads").unwrap_or(1) as f64;
    let best = r
        .analysis
        .as_ref()
        .and_then(|a| a.peak_step)
        .and_then(|i| r.steps.iter().find(|s| s.index == i));
    let scaling = best
        .filter(|b| b.index != first.index)
        .map(|b| {
            let speedup = b.summary.headline.mean / first.summary.headline.mean;
            format!(
                ", {:.2}x at {}",
                speedup,
                threads(param_u64(b, "threads").unwrap_or(1))
            )
        })
        .unwrap_or_default();
    format!("cpu: {} fractals/s per thread{scaling}", sig3(base))
}
