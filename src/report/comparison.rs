//! A comparison in a report: the verdicts and ratios as `perflab compare` prints them, what
//! else differed, and the runs' curves drawn on one chart (the seed reports' headline: one
//! system's curve against another's).

use super::{Block, Section, Table, figures};
use crate::compare::{PairComparison, Report};
use crate::record::RunRecord;
use crate::view::compare as text;

/// One section per candidate.
pub fn sections(
    report: &Report,
    records: &[RunRecord],
    names: &std::collections::BTreeMap<String, String>,
) -> Vec<Section> {
    report
        .pairs
        .iter()
        .map(|p| {
            let runs: Vec<&RunRecord> = records
                .iter()
                .filter(|r| r.id == p.baseline.id || r.id == p.candidate.id)
                .collect();
            pair_section(p, &runs, names)
        })
        .collect()
}

/// A run as the user named it: `cand (20261128-...)`, or its id.
pub fn named(id: &str, names: &std::collections::BTreeMap<String, String>) -> String {
    match names.get(id) {
        Some(n) => format!("{n} ({id})"),
        None => id.to_string(),
    }
}

fn pair_section(
    p: &PairComparison,
    runs: &[&RunRecord],
    names: &std::collections::BTreeMap<String, String>,
) -> Section {
    let mut blocks = Vec::new();
    let mut found = vec![text::summary_line(p)];
    if let Some(line) = text::headline_line(p) {
        found.push(line);
    }
    if let Some(e) = &p.expectation {
        found.push(format!(
            "expected {} ({}), measured {}: {} the expectation",
            text::ratio(e.expected),
            e.basis,
            text::ratio(e.measured),
            text::ratio(e.relative)
        ));
    }
    blocks.push(Block::Findings(found));
    if !p.warnings.is_empty() {
        blocks.push(Block::Warnings(p.warnings.clone()));
    }
    let labels = figures::run_labels(runs, names);
    if let Some(f) = figures::overlay(runs, &labels, &format!("compare-{}", p.candidate.id)) {
        blocks.push(Block::Figure(f));
    }
    if let Some(base) = runs.iter().find(|r| r.id == p.baseline.id)
        && let Some(f) = figures::ratios(p, base, &format!("ratios-{}", p.candidate.id))
    {
        blocks.push(Block::Figure(f));
    }
    let t = Table::from_ui(
        Some("step by step: candidate / baseline".into()),
        &text::rows_table(p, text::verdict_text),
    );
    blocks.push(Block::Table(t));
    if !p.unmatched.is_empty() {
        blocks.push(Block::Paragraph(format!(
            "Steps with no partner: {}.",
            p.unmatched.join(", ")
        )));
    }
    blocks.push(Block::Table(Table {
        caption: Some(format!("what else differs ({})", p.differences.len())),
        head: ["field", "baseline", "candidate"]
            .map(String::from)
            .to_vec(),
        rows: p
            .differences
            .iter()
            .map(|d| {
                vec![
                    d.field.clone(),
                    d.baseline.clone().unwrap_or_else(|| "(absent)".into()),
                    d.candidate.clone().unwrap_or_else(|| "(absent)".into()),
                ]
            })
            .collect(),
    }));
    if p.differences.is_empty() {
        blocks.push(Block::Paragraph(
            "No difference in the disclosure (machine, settings, options).".into(),
        ));
    }
    Section {
        id: format!("compare-{}", p.candidate.id),
        title: format!(
            "{} against {}",
            named(&p.candidate.id, names),
            named(&p.baseline.id, names)
        ),
        blocks,
    }
}
