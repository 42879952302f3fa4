//! The run as a timeline: throughput and p99 per interval, and the sampler's CPU and power,
//! steps back to back on one time axis, downsampled with min and max kept so that stalls
//! stay visible however long the run.

use super::axes::{plain, y_axis};
use super::{Planned, chart, planned, step_label};
use crate::analysis::curve;
use crate::present::svg::{Axis, LineChart, Point, Rule, Scale, Series, Style};
use crate::record::RunRecord;
use crate::report::downsample::downsample;
use crate::view::names::header;
use crate::vocab::numbers::param;

/// Points of a time series chart after downsampling.
const TIMELINE_POINTS: usize = 600;

/// A run's intervals on one time axis, steps back to back: what [`timeline`] draws.
#[derive(Default)]
struct Timeline {
    tput: Vec<(f64, f64)>,
    p99: Vec<(f64, f64)>,
    /// The sampler's series: all CPUs busy, the busiest CPU, perflab's CPU, watts.
    busy: Vec<(f64, f64)>,
    busiest: Vec<(f64, f64)>,
    own: Vec<(f64, f64)>,
    watts: Vec<(f64, f64)>,
    /// Where each step begins, and its label.
    bounds: Vec<(f64, String)>,
}

impl Timeline {
    fn of(r: &RunRecord, bytes: bool) -> Timeline {
        let mut l = Timeline::default();
        let mut offset = 0.0f64;
        let x_name = curve::x_axis(&r.steps);
        for s in &r.steps {
            // A boundary is labelled with the option that changes along x, if there is one.
            let label = match &x_name {
                Some(x) => format!(
                    "{x}={}",
                    s.params.get(x).map(|v| param(x, v)).unwrap_or_default()
                ),
                None => step_label(s),
            };
            l.bounds.push((offset, label));
            for t in &s.trials {
                // The last interval of a phase is often a sliver whose rate is noise: left out.
                let full = t.series.iter().map(|p| p.duration_ns).max().unwrap_or(0) / 2;
                for p in t.series.iter().filter(|p| p.duration_ns >= full) {
                    let x = offset + p.start_ns as f64 / 1e9;
                    l.tput.push((
                        x,
                        if bytes {
                            p.bytes_per_sec
                        } else {
                            p.ops_per_sec
                        },
                    ));
                    // Nothing timed (fio's gtod_reduce): no latency, not a zero.
                    if p.ops > 0 && p.latency_count != Some(0) {
                        l.p99.push((x, p.p99_ns as f64));
                    }
                }
                let cpus = t.resources.summary.as_ref().map_or(1, |s| s.cpus.max(1)) as f64;
                let full = t
                    .resources
                    .series
                    .iter()
                    .map(|p| p.duration_ns)
                    .max()
                    .unwrap_or(0)
                    / 2;
                for p in t.resources.series.iter().filter(|p| p.duration_ns >= full) {
                    // At the interval's middle: the readings are its two ends.
                    let x = offset + p.start_ns.saturating_add(p.duration_ns / 2) as f64 / 1e9;
                    l.busy.push((x, p.cpu.busy()));
                    let top = p.per_cpu.iter().map(|c| c.0.busy()).fold(0.0, f64::max);
                    l.busiest.push((x, top));
                    l.own.push((x, p.process_cpu_pct / cpus));
                    if let Some(w) = p.watts {
                        l.watts.push((x, w));
                    }
                }
                let end = t
                    .series
                    .last()
                    .map_or(0, |p| p.start_ns.saturating_add(p.duration_ns));
                offset += (t.elapsed_ns.max(end)) as f64 / 1e9;
            }
        }
        l
    }
}

/// Throughput and p99 per interval, steps back to back on one time axis.
pub(super) fn timeline(r: &RunRecord) -> Vec<Planned<LineChart>> {
    let bytes = r.headline.metric.starts_with("bytes_per_sec");
    let Timeline {
        tput,
        p99,
        busy,
        busiest,
        own,
        watts,
        bounds,
    } = Timeline::of(r, bytes);
    if tput.len() < 2 {
        return Vec::new();
    }
    let vlines: Vec<Rule> = if bounds.len() > 1 && bounds.len() <= 24 {
        bounds
            .iter()
            .skip(1)
            .map(|(x, l)| Rule {
                value: *x,
                label: if bounds.len() <= 8 {
                    l.clone()
                } else {
                    String::new()
                },
            })
            .collect()
    } else {
        Vec::new()
    };
    let name = if bytes {
        "bytes_per_sec"
    } else {
        "ops_per_sec"
    };
    let chart = |title: &str,
                 fig: &str,
                 lines: &[(&str, &[(f64, f64)])],
                 y: Axis|
     -> Planned<LineChart> {
        let step_of = |x: f64| {
            bounds
                .iter()
                .rev()
                .find(|(b, _)| *b <= x)
                .map(|(_, l)| l.as_str())
                .unwrap_or("")
        };
        let fmt = y.format;
        let mut reduced = false;
        let mut drawn = 0;
        let series = lines
            .iter()
            .map(|(name, points)| {
                let buckets = downsample(points, TIMELINE_POINTS);
                let many = buckets.iter().any(|b| b.count > 1);
                reduced |= many;
                drawn = drawn.max(buckets.len());
                let points = buckets
                    .iter()
                    .map(|b| Point {
                        x: b.x,
                        y: b.mean,
                        y_low: many.then_some(b.min),
                        y_high: many.then_some(b.max),
                        tip: format!("{}, {:.0} s: {name} {}", step_of(b.x), b.x, fmt(b.mean)),
                    })
                    .collect();
                Series {
                    name: (*name).into(),
                    points,
                    style: if many { Style::Band } else { Style::Line },
                }
            })
            .collect();
        let intervals = lines.first().map_or(0, |l| l.1.len());
        let x = Axis::new("measured time (s), steps back to back", Scale::Linear)
            .with_format(plain)
            .with_zero();
        let c = LineChart {
            vlines: vlines.clone(),
            height: 300,
            note: reduced.then(|| {
                format!(
                    "{} intervals drawn as {drawn} buckets: line the mean, band the min and max",
                    plain(intervals as f64),
                )
            }),
            ..chart(title, x, y, series)
        };
        planned(
            r,
            fig,
            format!(
                "{title} per interval over the whole run; vertical lines separate the steps. Warm-up and the short last interval of each phase are not shown; drift and stalls are."
            ),
            c,
        )
    };
    let tp_values: Vec<f64> = tput.iter().map(|p| p.1).collect();
    let p99_values: Vec<f64> = p99.iter().map(|p| p.1).collect();
    let title = if bytes { "Bandwidth" } else { "Throughput" };
    let mut out = vec![chart(
        title,
        "timeline-throughput",
        &[(title, &tput)],
        y_axis(header(name, &r.headline.op_name), name, &tp_values, 1e9),
    )];
    if p99.len() >= 2 {
        out.push(chart(
            "p99 response time",
            "timeline-p99",
            &[("p99 response time", &p99)],
            y_axis("p99".into(), "latency_ns", &p99_values, 50.0),
        ));
    }
    if busy.len() >= 2 {
        out.push(chart(
            "CPU busy",
            "timeline-cpu",
            &[
                ("all CPUs", &busy),
                ("busiest CPU", &busiest),
                ("perflab", &own),
            ],
            Axis::new("% busy (perflab: % of all CPUs)", Scale::Linear)
                .with_format(|v| format!("{v:.0}%"))
                .with_zero(),
        ));
    }
    if watts.len() >= 2 {
        let values: Vec<f64> = watts.iter().map(|p| p.1).collect();
        out.push(chart(
            "Power",
            "timeline-power",
            &[("watts", &watts)],
            y_axis("watts".into(), "watts", &values, 1e9),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    /// Two steps' intervals back to back: one point a second, the second step from where the
    /// first ended, a rule between them named by the swept value.
    #[test]
    fn intervals_back_to_back() {
        let steps = vec![
            sample::with_intervals(
                sample::step(0, &[("threads", 1.0)], 105.0, 1000),
                &[(100.0, 1000), (110.0, 1200), (105.0, 1100)],
            ),
            sample::with_intervals(
                sample::step(1, &[("threads", 2.0)], 205.0, 2000),
                &[(200.0, 2000), (210.0, 2100), (205.0, 2050)],
            ),
        ];
        let charts = timeline(&sample::run(steps));
        let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["run-timeline-throughput", "run-timeline-p99"]);
        let tput = &charts[0].chart;
        assert_eq!(tput.title, "Throughput");
        assert_eq!(tput.y.label, "op/s");
        assert_eq!(tput.series.len(), 1);
        let points = sample::xy(&tput.series[0]);
        assert_eq!(
            points,
            [
                (0.0, 100.0),
                (1.0, 110.0),
                (2.0, 105.0),
                (3.0, 200.0),
                (4.0, 210.0),
                (5.0, 205.0)
            ]
        );
        let rules: Vec<(f64, &str)> = tput
            .vlines
            .iter()
            .map(|v| (v.value, v.label.as_str()))
            .collect();
        assert_eq!(rules, [(3.0, "threads=2")]);
        let p99 = sample::ys(&charts[1].chart.series[0]);
        assert_eq!(p99, [1000.0, 1200.0, 1100.0, 2000.0, 2100.0, 2050.0]);
    }

    /// Fewer than two intervals are no timeline.
    #[test]
    fn one_interval_is_no_timeline() {
        let one = sample::with_intervals(sample::step(0, &[], 100.0, 1000), &[(100.0, 1000)]);
        assert!(timeline(&sample::run(vec![one])).is_empty());
        assert!(timeline(&sample::run(Vec::new())).is_empty());
    }
}
