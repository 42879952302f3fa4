//! The balance sheet: one line per capability, the way the lab reports ended with rules of
//! thumb ("2.6 GB/s sequential read, 4.6K random 8 KB reads/s ...").

use super::format::sig3;
use crate::env::Environment;
use crate::record::RunRecord;
use crate::spec::units::format_bytes;

pub fn render(suite: &str, env: &Environment, records: &[RunRecord]) -> String {
    let mut out = format!("\nbalance sheet ({suite}) of {}\n", machine(env));
    for line in lines(records) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("runs: ");
    out.push_str(
        &records
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    );
    out.push_str("  ('perflab show ID' for the curves)\n");
    out
}

/// One line per run, as the sheet and the suite's report print them; each kind says its own
/// (a scan of an engine also says what share of the suite's native ceiling it reached).
pub fn lines(records: &[RunRecord]) -> Vec<String> {
    records.iter().map(|r| line(r, records)).collect()
}

fn machine(env: &Environment) -> String {
    let cpu = env
        .cpu
        .model
        .clone()
        .unwrap_or_else(|| "unknown CPU".into());
    let n = env.cpu.logical_cpus.unwrap_or(0);
    let mem = env.memory.total_bytes.map(format_bytes).unwrap_or_default();
    format!("{cpu}, {n} CPUs, {mem}")
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
    let text = crate::workload::kind::of(r)
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
