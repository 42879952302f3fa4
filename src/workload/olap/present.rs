//! olap's own findings, for `perflab show` and reports.

use crate::present::mean_figure;
use crate::record::RunRecord;
use crate::vocab::numbers::{bytes_per_sec, count};

/// Steps of fixed work (OLAP's load and aggregate phases), which are not points of a curve:
/// how long each took, "load 0.42 s (2.39M rows/s, 2 workers, 58.6 MB/s of files); aggregate
/// 2.65 s (1.13M rows/s, 2 workers)".
pub fn fixed_work_finding(r: &RunRecord) -> Option<String> {
    let parts: Vec<String> = r
        .steps
        .iter()
        .filter_map(|s| {
            let seconds = mean_figure(s, "seconds")?;
            let name = s.params.get("phase")?.as_str()?;
            let n = s.trials.len().max(1) as f64;
            let workers = s.trials.first().map_or(0, |t| t.workers);
            let rows = mean_figure(s, "rows_per_sec").unwrap_or(0.0);
            let bytes = s.trials.iter().map(|t| t.bytes_per_sec).sum::<f64>() / n;
            let files = if bytes > 0.0 {
                format!(", {} of files", bytes_per_sec(bytes))
            } else {
                String::new()
            };
            Some(format!(
                "{name} {seconds:.2} s ({} rows/s, {workers} worker{}{files})",
                count(rows),
                if workers == 1 { "" } else { "s" }
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("time to finish: {}", parts.join("; ")))
}
