//! `perflab compare` for people: what differed, then one row per step and figure with the
//! ratio, its 95% interval and the verdict (coloured on terminals), then the tally. The rows
//! and lines are `crate::view::compare`'s, which reports show too.

use super::style;
use crate::compare::{PairComparison, Report, Row};
use crate::stats::compare::Verdict;
use crate::view::compare::{headline_line, ratio, rows_table, summary_line, verdict_text};

/// Differences beyond this many are counted, not listed (`--json` has them all).
const MAX_DIFFERENCES: usize = 20;

pub fn render(report: &Report) -> String {
    report
        .pairs
        .iter()
        .map(render_pair)
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_pair(p: &PairComparison) -> String {
    let mut out = format!(
        "baseline  {}  {}  {}  {}\ncandidate {}  {}  {}  {}\n",
        p.baseline.id,
        p.baseline.workload,
        p.baseline.target,
        p.baseline.status,
        p.candidate.id,
        p.candidate.workload,
        p.candidate.target,
        p.candidate.status
    );
    if p.differences.is_empty() {
        out.push_str("\nno difference in the disclosure (machine, settings, options)\n");
    } else {
        out.push_str(&format!("\nwhat else differs ({}):\n", p.differences.len()));
        for d in p.differences.iter().take(MAX_DIFFERENCES) {
            out.push_str(&format!(
                "  {}: {} -> {}\n",
                d.field,
                d.baseline.as_deref().unwrap_or("(absent)"),
                d.candidate.as_deref().unwrap_or("(absent)")
            ));
        }
        if p.differences.len() > MAX_DIFFERENCES {
            out.push_str(&format!(
                "  ... and {} more ('--json' lists them all)\n",
                p.differences.len() - MAX_DIFFERENCES
            ));
        }
    }
    if !p.rows.is_empty() {
        out.push('\n');
        out.push_str(&rows_table(p, painted).render());
    }
    if !p.unmatched.is_empty() {
        out.push_str(&format!(
            "\nsteps with no partner: {}\n",
            p.unmatched.join(", ")
        ));
    }
    out.push('\n');
    out.push_str(&summary_line(p));
    out.push('\n');
    if let Some(line) = headline_line(p) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(e) = &p.expectation {
        out.push_str(&format!(
            "expected {} ({}), measured {}: {} the expectation\n",
            ratio(e.expected),
            e.basis,
            ratio(e.measured),
            ratio(e.relative)
        ));
    }
    for w in &p.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// The verdict as the table says it, green or red on terminals when it is one.
fn painted(r: &Row) -> String {
    let text = verdict_text(r);
    match r.result.verdict {
        Verdict::Faster => style::good(&text),
        Verdict::Slower => style::bad(&text),
        _ => text,
    }
}
