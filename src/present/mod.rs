//! What a record looks like to people, in parts every renderer and every kind shares: text
//! tables ([`table`]), hand-written SVG charts ([`svg`]), the breakdowns of a step by group,
//! rank and device ([`breakdown`]), and [`Figure`], a chart with its caption.
//!
//! It sits below the workload kinds so that each kind can make its own tables and charts
//! (`crate::workload::kind::Kind::tables`, `figures`); the terminal (`crate::ui`) and the
//! reports (`crate::report`) lay them out and never build a kind's parts themselves.

pub mod breakdown;
pub mod svg;
pub mod table;

use crate::record::StepResult;

/// A chart: its SVG and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// A file-name stem, unique in the document (Markdown writes `<name>.svg`).
    pub name: String,
    pub caption: String,
    /// One `<svg>` element.
    pub svg: String,
}

/// The mean of a figure over a step's trials, if any trial has it.
pub fn mean_figure(s: &StepResult, name: &str) -> Option<f64> {
    let v: Vec<f64> = s
        .trials
        .iter()
        .filter_map(|t| t.figures.get(name).copied())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// A step's parameter as a whole number.
pub fn param_u64(s: &StepResult, name: &str) -> Option<u64> {
    s.params.get(name).and_then(|v| v.as_u64())
}

/// A step's parameter as text.
pub fn param_str<'a>(s: &'a StepResult, name: &str) -> Option<&'a str> {
    s.params.get(name).and_then(|v| v.as_str())
}

/// `1 thread`, `4 threads`.
pub fn threads(n: u64) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}
