//! The headline figure against the swept option: the run's curves, with their scalability
//! fits and the steps the analysis found (peak, sweet spot, knee).

use super::axes::{axis_label, x_axis, y_axis};
use super::{MAX_SERIES, Planned, by_index, chart, planned, step_label};
use crate::analysis::curve::{Curve, param_f64};
use crate::present::svg::{LineChart, Marker, Point, Series, Style};
use crate::record::{Analysis, RunRecord};
use crate::view::names::header;
use crate::vocab::numbers::metric;

/// The headline against the swept option, one line per curve (the first [`MAX_SERIES`]),
/// with 95% whiskers over repeats, each USL fit dashed, and the peak, the sweet spot and the
/// knee marked.
pub(super) fn throughput(
    r: &RunRecord,
    a: &Analysis,
    curves: &[Curve],
) -> Option<Planned<LineChart>> {
    let first = curves.first()?;
    let h = &r.headline;
    let x_name = first.x.clone();
    let all_x: Vec<f64> = r
        .steps
        .iter()
        .filter_map(|s| param_f64(s, &x_name))
        .collect();
    let mut series = Vec::new();
    let mut ys = Vec::new();
    for c in curves.iter().take(MAX_SERIES) {
        let points: Vec<Point> = c
            .steps
            .iter()
            .map(|&i| &r.steps[i])
            .filter_map(|s| {
                let e = &s.summary.headline;
                let x = param_f64(s, &c.x)?;
                ys.push(e.mean);
                let ci = match (e.ci95_low, e.ci95_high) {
                    (Some(lo), Some(hi)) if e.mean != 0.0 => {
                        format!(
                            " ± {:.1}% (95%, n={})",
                            (hi - lo) / 2.0 / e.mean.abs() * 100.0,
                            e.n
                        )
                    }
                    _ => String::new(),
                };
                Some(Point {
                    x,
                    y: e.mean,
                    y_low: e.ci95_low,
                    y_high: e.ci95_high,
                    tip: format!("{}: {}{ci}", step_label(s), metric(&h.metric, e.mean)),
                })
            })
            .collect();
        series.push(Series {
            name: if c.fixed.is_empty() {
                header(&h.metric, &h.op_name)
            } else {
                c.label()
            },
            points,
            style: Style::LineWithPoints,
        });
    }
    // The USL fits, dashed, over the measured range (and on to the peak when it lies not far
    // beyond).
    for ca in &a.curves {
        let Some(u) = &ca.usl else { continue };
        let lo = all_x.iter().copied().fold(f64::INFINITY, f64::min);
        let mut hi = all_x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if let Some(n) = u.peak_n.filter(|n| *n > hi && *n <= 4.0 * hi) {
            hi = n;
        }
        let points = (0..=48)
            .map(|k| {
                let x = if lo > 0.0 && hi / lo >= 8.0 {
                    lo * (hi / lo).powf(k as f64 / 48.0)
                } else {
                    lo + (hi - lo) * k as f64 / 48.0
                };
                Point {
                    x,
                    y: crate::stats::usl::predict(u, x),
                    y_low: None,
                    y_high: None,
                    tip: String::new(),
                }
            })
            .collect();
        series.push(Series {
            name: if ca.label.is_empty() {
                "USL fit".into()
            } else {
                format!("USL fit ({})", ca.label)
            },
            points,
            style: Style::Dashed,
        });
    }
    let mut markers = Vec::new();
    let mark = |i: Option<usize>, label: &str, markers: &mut Vec<Marker>| {
        if let Some(s) = i.and_then(|i| by_index(r, i))
            && let Some(x) = param_f64(s, &x_name)
        {
            markers.push(Marker {
                x,
                y: s.summary.headline.mean,
                label: label.into(),
            });
        }
    };
    mark(
        a.peak_step,
        if h.higher_is_better { "peak" } else { "lowest" },
        &mut markers,
    );
    if a.sweet_spot_step != a.peak_step {
        mark(a.sweet_spot_step, "sweet spot", &mut markers);
    }
    if a.curves.len() == 1 {
        let c = &a.curves[0];
        if c.knee_kneedle_step != a.peak_step && c.knee_kneedle_step != a.sweet_spot_step {
            mark(c.knee_kneedle_step, "knee", &mut markers);
        }
    }
    let repeats = r.steps.iter().any(|s| s.trials.len() > 1);
    let title = format!(
        "{} against {}",
        header(&h.metric, &h.op_name),
        axis_label(&x_name)
    );
    let x = x_axis(&x_name, &all_x);
    let y = y_axis(header(&h.metric, &h.op_name), &h.metric, &ys, 30.0);
    let chart = LineChart {
        markers,
        ..chart(title, x, y, series)
    };
    let mut caption = format!(
        "{} against {}{}.",
        header(&h.metric, &h.op_name),
        axis_label(&x_name),
        if curves.len() > 1 {
            ", one line per curve"
        } else {
            ""
        }
    );
    if repeats {
        caption.push_str(" Whiskers: 95% confidence interval over repeats.");
    }
    if a.curves.iter().any(|c| c.usl.is_some()) {
        caption.push_str(" Dashed: the Universal Scalability Law fitted to the points.");
    }
    if curves.len() > MAX_SERIES {
        caption.push_str(&format!(
            " The first {MAX_SERIES} of {} curves.",
            curves.len()
        ));
    }
    Some(planned(r, "throughput", caption, chart))
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use crate::analysis::curve;
    use serde_json::json;

    /// One curve along threads: a point per step at its headline, the peak and the sweet
    /// spot marked where the analysis found them.
    #[test]
    fn one_curve_with_its_peak_and_sweet_spot() {
        let r = sample::threads_run(&[100.0, 190.0, 360.0, 400.0]);
        let a = Analysis {
            peak_step: Some(3),
            sweet_spot_step: Some(2),
            ..Default::default()
        };
        let c = throughput(&r, &a, &curve::curves(&r.steps)).expect("a curve");
        assert_eq!(c.name, "run-throughput");
        assert_eq!(c.chart.title, "op/s against threads");
        assert_eq!(
            (c.chart.x.label.as_str(), c.chart.y.label.as_str()),
            ("threads", "op/s")
        );
        assert_eq!(c.chart.series.len(), 1);
        let points = sample::xy(&c.chart.series[0]);
        assert_eq!(
            points,
            [(1.0, 100.0), (2.0, 190.0), (4.0, 360.0), (8.0, 400.0)]
        );
        let marks: Vec<(&str, f64)> = c
            .chart
            .markers
            .iter()
            .map(|m| (m.label.as_str(), m.x))
            .collect();
        assert_eq!(marks, [("peak", 8.0), ("sweet spot", 4.0)]);
        assert_eq!(c.caption, "op/s against threads.");
    }

    /// A second swept option makes one line per value, named by it.
    #[test]
    fn one_line_per_curve() {
        let mut steps = Vec::new();
        for (kernel, base) in [("copy", 100.0), ("triad", 80.0)] {
            for threads in [1u64, 2] {
                let mut s = sample::step(
                    steps.len(),
                    &[("threads", threads as f64)],
                    base * threads as f64,
                    1000,
                );
                s.params.insert("kernel".into(), json!(kernel));
                s.swept.insert(0, "kernel".into());
                steps.push(s);
            }
        }
        let r = sample::run(steps);
        let c = throughput(&r, &Analysis::default(), &curve::curves(&r.steps)).expect("curves");
        let names = sample::names(&c.chart);
        assert_eq!(names, ["kernel=copy", "kernel=triad"]);
        let ys = sample::ys(&c.chart.series[1]);
        assert_eq!(ys, [80.0, 160.0]);
        assert!(c.caption.contains("one line per curve"));
    }

    /// No swept number, no curve.
    #[test]
    fn nothing_swept_gives_no_chart() {
        let r = sample::run(vec![sample::step(0, &[], 100.0, 1000)]);
        assert!(throughput(&r, &Analysis::default(), &curve::curves(&r.steps)).is_none());
        let empty = sample::run(Vec::new());
        assert!(throughput(&empty, &Analysis::default(), &[]).is_none());
    }
}
