//! `perflab trend -o FILE.html`: one figure across runs as a chart (each point with its 95%
//! interval as whiskers, a slower or faster point marked) above the trend's table, drawn
//! with the report's own chart code (`present::svg`) and rendered as every report is.

use super::{Block, Document, Section, Table};
use crate::compare::trend::Trend;
use crate::present::Figure;
use crate::present::svg::{Axis, LineChart, Marker, Point, Scale, Series, Style, si};
use crate::stats::compare::Verdict;

/// The trend as a document: its chart, then its table.
pub fn document(t: &Trend, subtitle: &str) -> Document {
    let mut chart = LineChart::new(
        format!("{} across runs", t.figure),
        Axis::new("point (oldest first)", Scale::Linear).with_integers(),
        Axis::new(t.figure.clone(), Scale::Linear)
            .with_format(si)
            .with_zero(),
    );
    let points: Vec<Point> = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let tip = format!("{}: {}", r.key, si(r.mean));
            let p = Point::new(i as f64 + 1.0, r.mean, tip);
            match (r.low, r.high) {
                (Some(lo), Some(hi)) => p.with_range(lo, hi),
                _ => p,
            }
        })
        .collect();
    chart
        .series
        .push(Series::new(t.figure.clone(), Style::LineWithPoints, points));
    for (i, r) in t.rows.iter().enumerate() {
        if let Some(v @ (Verdict::Slower | Verdict::Faster)) = r.verdict {
            chart.markers.push(Marker {
                x: i as f64 + 1.0,
                y: r.mean,
                label: format!("{} {}", v.as_str(), r.key),
            });
        }
    }
    let mut blocks = vec![Block::Figure(Figure {
        name: "trend".into(),
        caption: format!(
            "{} per point with its 95% interval; marked: a verdict beyond the noise against the point before",
            t.figure
        ),
        svg: chart.render(),
    })];
    blocks.push(Block::Table(Table::from_ui(
        None,
        &crate::view::trend::table(t),
    )));
    if !t.notes.is_empty() {
        blocks.push(Block::Findings(t.notes.clone()));
    }
    Document {
        title: format!("Trend of {}", t.figure),
        subtitle: subtitle.to_string(),
        sections: vec![Section {
            id: "trend".into(),
            title: "Across runs".into(),
            blocks,
        }],
    }
}
