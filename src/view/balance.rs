//! The balance sheet's lines: one per run of a suite, the way the lab reports ended with
//! rules of thumb ("2.6 GB/s sequential read, 4.6K random 8 KB reads/s ..."). The terminal's
//! sheet and a suite's report cover both list them.

use crate::record::RunRecord;
use crate::vocab::numbers::sig3;
use crate::workload::kind;

/// One line per run, as the sheet and the suite's report print them; each kind says its own
/// (a scan of an engine also says what share of the suite's native ceiling it reached).
pub fn lines(records: &[RunRecord]) -> Vec<String> {
    records.iter().map(|r| line(r, records)).collect()
}

/// One line for one run of a suite, by what it measured: its kind's line, or its best
/// headline figure.
pub fn line(r: &RunRecord, suite: &[RunRecord]) -> String {
    if r.steps.is_empty() {
        return format!(
            "{}: no finished step (run {} {})",
            r.workload,
            r.id,
            r.status.as_str()
        );
    }
    let status = if r.status.as_str() == "complete" {
        String::new()
    } else {
        format!(" [{}]", r.status.as_str())
    };
    let text = kind::of(r)
        .and_then(|k| k.balance_line(r, suite))
        .unwrap_or_else(|| {
            format!(
                "{}: {} {} at best",
                r.workload,
                sig3(
                    r.steps
                        .iter()
                        .map(|s| s.summary.headline.mean)
                        .fold(f64::NAN, f64::max)
                ),
                r.headline.metric
            )
        });
    format!("{text}{status}")
}
