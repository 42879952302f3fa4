//! Hockey sticks: response time against throughput along a load curve, where queueing shows
//! as the lines turning up.

use super::axes::{formatter, y_axis};
use super::{Options, Planned, by_index, chart, planned, step_label};
use crate::analysis::curve::Curve;
use crate::present::svg::{Axis, LineChart, Marker, Point, Rule, Scale, Series, Style};
use crate::record::{Analysis, LatencySummary, RunRecord, StepResult};
use crate::view::names::header;
use crate::vocab::numbers::{metric, ns};
use crate::workload::kind;

/// Response time (p50, p99, p99.9) against throughput, one chart per curve (the first four),
/// when the curve is along a load; the peak, the sweet spot, the knee and `--slo` marked.
pub(super) fn hockey_sticks(
    r: &RunRecord,
    a: &Analysis,
    curves: &[Curve],
    options: &Options,
) -> Vec<Planned<LineChart>> {
    let h = &r.headline;
    if !h.higher_is_better || r.steps.len() < 2 {
        return Vec::new();
    }
    // Without a numeric option, the steps in order make the one curve.
    let fallback;
    // Along an option that is not a load (block size, spin time), response time against
    // throughput is no hockey stick.
    let axes = kind::axes_of(r);
    if curves.first().is_some_and(|c| !axes.is_load(&c.x)) {
        return Vec::new();
    }
    // Steps of different work (a job file's groups) are no load curve at all.
    if axes.varied_apart(&r.steps) {
        return Vec::new();
    }
    let curves: &[Curve] = if curves.is_empty() {
        fallback = [Curve {
            x: String::new(),
            fixed: Vec::new(),
            steps: (0..r.steps.len()).collect(),
        }];
        &fallback
    } else {
        curves
    };
    let percentiles: [(&str, LatencyOf); 3] = [
        ("p50", |l| l.p50_ns as f64),
        ("p99", |l| l.p99_ns as f64),
        ("p99.9", |l| l.p999_ns as f64),
    ];
    curves
        .iter()
        .take(4)
        .enumerate()
        .filter(|(_, c)| c.steps.len() >= 2)
        .map(|(ci, c)| {
            let steps: Vec<&StepResult> = c.steps.iter().map(|&i| &r.steps[i]).collect();
            let mut all = Vec::new();
            let series: Vec<Series> = percentiles
                .iter()
                .map(|(name, f)| Series {
                    name: (*name).into(),
                    points: steps
                        .iter()
                        .map(|s| {
                            let y = latency(s, *f);
                            all.push(y);
                            Point {
                                x: s.summary.headline.mean,
                                y,
                                y_low: None,
                                y_high: None,
                                tip: format!(
                                    "{}: {} at {name} {}",
                                    step_label(s),
                                    metric(&h.metric, s.summary.headline.mean),
                                    ns(y)
                                ),
                            }
                        })
                        .collect(),
                    style: Style::LineWithPoints,
                })
                .collect();
            let on_curve = |i: Option<usize>| i.filter(|i| steps.iter().any(|s| s.index == *i));
            let mut markers = Vec::new();
            for (i, label) in [
                (on_curve(a.peak_step), "peak"),
                (on_curve(a.sweet_spot_step), "sweet spot"),
            ] {
                if let Some(s) = i.and_then(|i| by_index(r, i)) {
                    markers.push(Marker {
                        x: s.summary.headline.mean,
                        y: latency(s, |l| l.p99_ns as f64),
                        label: label.into(),
                    });
                }
            }
            let analysis = a.curves.iter().find(|x| x.steps.first() == steps.first().map(|s| &s.index));
            if let Some(k) = analysis.and_then(|x| x.knee_kneedle_step)
                && let Some(s) = by_index(r, k)
                && Some(k) != a.peak_step
                && Some(k) != a.sweet_spot_step
            {
                markers.push(Marker {
                    x: s.summary.headline.mean,
                    y: latency(s, |l| l.p99_ns as f64),
                    label: "knee".into(),
                });
            }
            let mut hlines = Vec::new();
            if let Some(slo) = &options.slo {
                hlines.push(Rule {
                    value: slo.limit_ns,
                    label: slo.label(),
                });
                all.push(slo.limit_ns);
                if let Some(k) = analysis.and_then(|x| x.slo.as_ref()) {
                    markers.push(Marker {
                        x: k.throughput,
                        y: k.latency_ns,
                        label: "SLO".into(),
                    });
                }
            }
            let label = c.label();
            let title = format!(
                "Response time against {}{}",
                header(&h.metric, &h.op_name),
                if label.is_empty() { String::new() } else { format!(" ({label})") }
            );
            let x = Axis::new(header(&h.metric, &h.op_name), Scale::Linear)
                .with_format(formatter(&h.metric))
                .with_zero();
            let y = y_axis("response time".into(), "latency_ns", &all, 50.0);
            let chart = LineChart {
                markers,
                hlines,
                ..chart(title.clone(), x, y, series)
            };
            planned(
                r,
                &format!("hockey-{ci}"),
                format!(
                    "{title}: each point one step (mean over repeats), in the order of the sweep. Where the lines turn up, queueing has begun."
                ),
                chart,
            )
        })
        .collect()
}

/// Reads one figure of a latency summary.
type LatencyOf = fn(&LatencySummary) -> f64;

/// Mean over the step's repeats of a latency figure.
fn latency(s: &StepResult, f: LatencyOf) -> f64 {
    let n = s.trials.len().max(1) as f64;
    s.trials.iter().map(|t| f(&t.latency)).sum::<f64>() / n
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use crate::analysis::curve;
    use crate::vocab::Slo;

    fn peaked() -> Analysis {
        Analysis {
            peak_step: Some(3),
            sweet_spot_step: Some(2),
            ..Default::default()
        }
    }

    /// Along threads: p50, p99 and p99.9 of each step against its throughput, the peak and
    /// the sweet spot marked on p99.
    #[test]
    fn response_time_against_throughput() {
        let r = sample::threads_run(&[100.0, 190.0, 360.0, 400.0]);
        let charts = hockey_sticks(&r, &peaked(), &curve::curves(&r.steps), &Options::default());
        assert_eq!(charts.len(), 1);
        let c = &charts[0];
        assert_eq!(c.name, "run-hockey-0");
        assert_eq!(c.chart.title, "Response time against op/s");
        assert_eq!(
            (c.chart.x.label.as_str(), c.chart.y.label.as_str()),
            ("op/s", "response time")
        );
        let names = sample::names(&c.chart);
        assert_eq!(names, ["p50", "p99", "p99.9"]);
        let p99 = sample::xy(&c.chart.series[1]);
        assert_eq!(
            p99,
            [(100.0, 4e3), (190.0, 8e3), (360.0, 16e3), (400.0, 32e3)]
        );
        let marks: Vec<(&str, f64, f64)> = c
            .chart
            .markers
            .iter()
            .map(|m| (m.label.as_str(), m.x, m.y))
            .collect();
        assert_eq!(marks, [("peak", 400.0, 32e3), ("sweet spot", 360.0, 16e3)]);
        assert!(c.chart.hlines.is_empty());
    }

    /// `--slo` draws its limit across the chart.
    #[test]
    fn the_objective_is_a_rule() {
        let r = sample::threads_run(&[100.0, 190.0]);
        let options = Options {
            slo: Some(Slo::parse("slo", "p99<10us").expect("an objective")),
            ..Default::default()
        };
        let charts = hockey_sticks(&r, &Analysis::default(), &curve::curves(&r.steps), &options);
        let rules: Vec<f64> = charts[0].chart.hlines.iter().map(|h| h.value).collect();
        assert_eq!(rules, [10_000.0]);
    }

    /// No hockey stick along an option that is not a load, for a figure where lower is
    /// better, or from one step.
    #[test]
    fn only_along_a_load() {
        let spin = sample::run(
            (0..3)
                .map(|i| sample::step(i, &[("spin_ns", 1000.0 * i as f64)], 100.0, 1000))
                .collect(),
        );
        let none = |r: &RunRecord| {
            hockey_sticks(
                r,
                &Analysis::default(),
                &curve::curves(&r.steps),
                &Options::default(),
            )
            .is_empty()
        };
        assert!(none(&spin));
        let mut lower = sample::threads_run(&[100.0, 190.0]);
        lower.headline.higher_is_better = false;
        assert!(none(&lower));
        assert!(none(&sample::threads_run(&[100.0])));
        assert!(none(&sample::run(Vec::new())));
    }
}
