//! A trend's table, for the terminal and the report alike: each point with its value and
//! interval, its ratio to the point before with that ratio's interval, and the verdict.

use crate::compare::trend::Trend;
use crate::present::table::Table;
use crate::vocab::numbers::metric;

pub fn table(t: &Trend) -> Table {
    let mut table = Table::new(
        [
            "point",
            "started",
            "runs",
            &t.figure,
            "95% interval",
            "vs before",
            "verdict",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    for r in &t.rows {
        let interval = match (r.low, r.high) {
            (Some(lo), Some(hi)) => {
                format!("{} .. {}", metric(&t.figure, lo), metric(&t.figure, hi))
            }
            _ => "-".into(),
        };
        let ratio = match (r.ratio, r.ratio_ci95) {
            (Some(x), Some([lo, hi])) => format!("{x:.3}x [{lo:.3}, {hi:.3}]"),
            (Some(x), None) => format!("{x:.3}x"),
            _ => "-".into(),
        };
        table.row(vec![
            r.key.clone(),
            r.started_at
                .get(..19)
                .unwrap_or(&r.started_at)
                .replace('T', " "),
            r.runs.len().to_string(),
            metric(&t.figure, r.mean),
            interval,
            ratio,
            r.verdict.map_or("-", |v| v.as_str()).to_string(),
        ]);
    }
    table
}
