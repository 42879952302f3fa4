//! A comparison's charts: the runs' headline curves on one chart, and the candidate's ratios
//! to the baseline per step with their intervals and the noise band; and what a legend calls
//! each run.

use super::axes::{plain, x_axis, y_axis};
use super::{Planned, by_index, chart, step_label};
use crate::analysis::curve::{self, param_f64};
use crate::compare::PairComparison;
use crate::present::Figure;
use crate::present::svg::{Axis, LineChart, Point, Rule, Scale, Series, Style};
use crate::record::RunRecord;
use crate::view::compare::{figure_name, interval, ratio};
use crate::view::names::header;
use crate::vocab::numbers::{metric, sig3};

/// What a legend calls each run: the name the user gave it (its tags), else what sets it
/// apart from the others (the first setting whose value differs: `bs 64 KiB`), else its id.
pub fn run_labels(
    runs: &[&RunRecord],
    names: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let differing: Vec<&str> = runs
        .first()
        .map(|first| {
            first
                .settings
                .iter()
                .filter(|s| {
                    runs.iter()
                        .all(|r| r.settings.iter().any(|t| t.name == s.name))
                        && runs.iter().any(|r| {
                            r.settings
                                .iter()
                                .any(|t| t.name == s.name && t.value != s.value)
                        })
                })
                .map(|s| s.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    runs.iter()
        .map(|r| {
            if let Some(n) = names.get(&r.id) {
                return n.clone();
            }
            let what: Vec<String> = differing
                .iter()
                .take(2)
                .filter_map(|d| r.settings.iter().find(|s| s.name == *d))
                .map(|s| format!("{} {}", s.name, s.value))
                .collect();
            match what.is_empty() {
                true => r.id.clone(),
                false => what.join(", "),
            }
        })
        .collect()
}

/// Several runs' headline curves on one chart (a comparison's picture); `name` is the
/// figure's unique name. None when the runs have no numeric swept option in common.
pub fn overlay(runs: &[&RunRecord], labels: &[String], name: &str) -> Option<Figure> {
    overlay_chart(runs, labels, name).map(Planned::figure)
}

fn overlay_chart(runs: &[&RunRecord], labels: &[String], name: &str) -> Option<Planned<LineChart>> {
    let first = runs.first()?;
    let h = &first.headline;
    let x_name = curve::x_axis(&first.steps)?;
    let mut series = Vec::new();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for (r, run_label) in runs.iter().zip(labels) {
        if r.headline.metric != h.metric || curve::x_axis(&r.steps).as_deref() != Some(&x_name) {
            continue;
        }
        for c in curve::curves(&r.steps).iter().take(4) {
            let label = c.label();
            let points = c
                .steps
                .iter()
                .map(|&i| &r.steps[i])
                .filter_map(|s| {
                    let x = param_f64(s, &x_name)?;
                    let e = &s.summary.headline;
                    xs.push(x);
                    ys.push(e.mean);
                    Some(Point {
                        x,
                        y: e.mean,
                        y_low: e.ci95_low,
                        y_high: e.ci95_high,
                        tip: format!("{} {}: {}", r.id, step_label(s), metric(&h.metric, e.mean)),
                    })
                })
                .collect();
            series.push(Series {
                name: if label.is_empty() {
                    run_label.clone()
                } else {
                    format!("{run_label} {label}")
                },
                points,
                style: Style::LineWithPoints,
            });
        }
    }
    if series.len() < 2 {
        return None;
    }
    let title = format!("{} against {x_name}", header(&h.metric, &h.op_name));
    let chart = chart(
        title.clone(),
        x_axis(&x_name, &xs),
        y_axis(header(&h.metric, &h.op_name), &h.metric, &ys, 30.0),
        series,
    );
    Some(Planned {
        name: name.to_string(),
        caption: format!(
            "{title}: the runs' curves on one chart; whiskers are 95% intervals over repeats."
        ),
        chart,
    })
}

/// A comparison's ratios (candidate / baseline) per step, one line per figure, with their
/// 95% intervals as whiskers and the noise band around 1: what the verdicts are made of.
pub fn ratios(p: &PairComparison, baseline: &RunRecord, name: &str) -> Option<Figure> {
    ratios_chart(p, baseline, name).map(Planned::figure)
}

fn ratios_chart(
    p: &PairComparison,
    baseline: &RunRecord,
    name: &str,
) -> Option<Planned<LineChart>> {
    let x_name = curve::x_axis(&baseline.steps);
    let x_of = |step: usize, row: usize| -> f64 {
        x_name
            .as_deref()
            .and_then(|x| by_index(baseline, step).and_then(|s| param_f64(s, x)))
            .unwrap_or(row as f64 + 1.0)
    };
    let mut figures: Vec<&str> = Vec::new();
    for r in &p.rows {
        if !figures.contains(&r.figure.as_str()) {
            figures.push(&r.figure);
        }
    }
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let series: Vec<Series> = figures
        .iter()
        .map(|f| {
            let points = p
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.figure == *f && r.result.ratio > 0.0)
                .map(|(i, r)| {
                    let x = x_of(r.baseline_step, i / figures.len().max(1));
                    xs.push(x);
                    ys.push(r.result.ratio);
                    let [lo, hi] = r.result.ci95.unwrap_or([r.result.ratio; 2]);
                    ys.extend([lo, hi]);
                    Point {
                        x,
                        y: r.result.ratio,
                        y_low: r.result.ci95.map(|c| c[0]),
                        y_high: r.result.ci95.map(|c| c[1]),
                        tip: format!(
                            "{} {}: {} ({}), {}",
                            r.step,
                            figure_name(f, &p.op_name),
                            ratio(r.result.ratio),
                            interval(r),
                            r.result.verdict.as_str()
                        ),
                    }
                })
                .collect();
            Series {
                name: figure_name(f, &p.op_name),
                points,
                style: Style::LineWithPoints,
            }
        })
        .collect();
    if xs.is_empty() {
        return None;
    }
    ys.extend([1.0 / (1.0 + p.noise), 1.0 + p.noise]);
    let lo = ys
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let y = Axis::new(
        "candidate / baseline",
        if hi / lo > 4.0 {
            Scale::Log10
        } else {
            Scale::Linear
        },
    )
    .with_format(|v| format!("{}x", sig3(v)));
    let x = match &x_name {
        Some(n) => x_axis(n, &xs),
        None => Axis::new("step", Scale::Linear).with_format(plain),
    };
    let noise = (p.noise * 100.0 * 1000.0).round() / 1000.0;
    // On a log axis spanning decades the band is a hair around 1: one line, named.
    let hlines = if y.scale == Scale::Log10 {
        vec![Rule {
            value: 1.0,
            label: format!("no change (±{noise}% noise band)"),
        }]
    } else {
        vec![
            Rule {
                value: 1.0,
                label: "no change".into(),
            },
            Rule {
                value: 1.0 + p.noise,
                label: format!("+{noise}%"),
            },
            Rule {
                value: 1.0 / (1.0 + p.noise),
                label: format!("−{noise}%"),
            },
        ]
    };
    let c = LineChart {
        hlines,
        ..chart("Ratios with their 95% intervals", x, y, series)
    };
    Some(Planned {
        name: name.to_string(),
        caption: "Each figure's ratio, candidate over baseline, per step, with its 95% interval. A verdict of faster or slower needs the difference beyond the noise band (dashed) after Holm's correction; equivalent needs the whole interval inside it. For response times, below 1 is better.".into(),
        chart: c,
    })
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use crate::compare::{Row, RunRef, Tally};
    use crate::record::Setting;
    use crate::stats::compare::{Comparison, Verdict};
    use std::collections::BTreeMap;

    fn named(id: &str, mut r: RunRecord, bs: &str) -> RunRecord {
        r.id = id.into();
        r.settings = vec![Setting {
            name: "bs".into(),
            value: bs.into(),
        }];
        r
    }

    /// Two runs' curves along the same option on one chart, a line each named by its label.
    #[test]
    fn runs_overlaid() {
        let a = named("a", sample::threads_run(&[100.0, 190.0]), "4 KiB");
        let b = named("b", sample::threads_run(&[120.0, 230.0]), "4 KiB");
        let c = overlay_chart(&[&a, &b], &["base".into(), "cand".into()], "compare-b")
            .expect("an overlay");
        assert_eq!(c.name, "compare-b");
        assert_eq!(c.chart.title, "op/s against threads");
        let names = sample::names(&c.chart);
        assert_eq!(names, ["base", "cand"]);
        let ys = sample::ys(&c.chart.series[1]);
        assert_eq!(ys, [120.0, 230.0]);
        // One run, or runs with nothing swept, make no overlay.
        assert!(overlay_chart(&[&a], &["base".into()], "x").is_none());
        let flat = sample::run(vec![sample::step(0, &[], 1.0, 1000)]);
        assert!(overlay_chart(&[&flat, &flat], &["p".into(), "q".into()], "x").is_none());
    }

    /// A legend says the name the user gave a run, else the setting that tells it apart,
    /// else its id.
    #[test]
    fn runs_are_named_by_what_sets_them_apart() {
        let a = named("a", sample::threads_run(&[1.0]), "4 KiB");
        let b = named("b", sample::threads_run(&[1.0]), "64 KiB");
        let none = BTreeMap::new();
        assert_eq!(run_labels(&[&a, &b], &none), ["bs 4 KiB", "bs 64 KiB"]);
        assert_eq!(run_labels(&[&a, &a], &none), ["a", "a"]);
        let tags = BTreeMap::from([("b".to_string(), "new disk".to_string())]);
        assert_eq!(run_labels(&[&a, &b], &tags), ["bs 4 KiB", "new disk"]);
    }

    fn row(step: usize, ratio: f64, ci95: [f64; 2]) -> Row {
        Row {
            step: format!("threads={}", 1 << step),
            baseline_step: step,
            candidate_step: step,
            figure: "ops_per_sec".into(),
            higher_is_better: true,
            result: Comparison {
                ratio,
                ci95: Some(ci95),
                verdict: Verdict::Faster,
                ..Default::default()
            },
        }
    }

    fn pair(rows: Vec<Row>) -> PairComparison {
        let run = |id: &str| RunRef {
            id: id.into(),
            workload: "null".into(),
            target: "null".into(),
            started_at: String::new(),
            status: "complete".into(),
        };
        PairComparison {
            baseline: run("a"),
            candidate: run("b"),
            op_name: "op".into(),
            noise: 0.02,
            alpha: 0.05,
            correction: "Holm".into(),
            differences: Vec::new(),
            rows,
            unmatched: Vec::new(),
            tally: Tally::default(),
            headline_speedup: None,
            expectation: None,
            warnings: Vec::new(),
        }
    }

    /// Each figure's ratios at the baseline's swept values, with their intervals, and the
    /// noise band around 1.
    #[test]
    fn ratios_with_their_intervals_and_the_noise_band() {
        let base = sample::threads_run(&[100.0, 190.0]);
        let p = pair(vec![row(0, 1.1, [1.05, 1.15]), row(1, 0.95, [0.9, 1.0])]);
        let c = ratios_chart(&p, &base, "ratios-b").expect("ratios");
        assert_eq!(c.name, "ratios-b");
        assert_eq!(c.chart.y.label, "candidate / baseline");
        assert_eq!(c.chart.series.len(), 1);
        assert_eq!(c.chart.series[0].name, "op/s");
        let points: Vec<(f64, f64, Option<f64>)> = c.chart.series[0]
            .points
            .iter()
            .map(|p| (p.x, p.y, p.y_high))
            .collect();
        assert_eq!(points, [(1.0, 1.1, Some(1.15)), (2.0, 0.95, Some(1.0))]);
        let rules: Vec<&str> = c.chart.hlines.iter().map(|h| h.label.as_str()).collect();
        assert_eq!(rules, ["no change", "+2%", "−2%"]);
        assert!(ratios_chart(&pair(Vec::new()), &base, "x").is_none());
    }
}
