//! The balance sheet on the terminal: the machine, one line per capability
//! (`crate::view::balance`), and the runs to look at.

use crate::env::Environment;
use crate::record::RunRecord;
use crate::view::balance::lines;
use crate::vocab::units::format_bytes;

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
