//! The charts of one run, built from its record:
//!
//! - throughput (the headline figure) against the swept option, one line per curve, with 95%
//!   whiskers over repeats, the USL fit dashed, the peak, the sweet spot and the knee marked;
//! - a heatmap of the headline for grids (two numeric options swept, e.g. bs × iodepth);
//! - response time (p50, p99, p99.9) against throughput, the hockey stick, per curve;
//! - the run as a timeline: throughput and p99 per interval, steps back to back, downsampled
//!   with min/max kept so stalls stay visible however long the run;
//! - the latency spectrum from the HDR histograms, x in "nines", per step, and per group
//!   (transaction type, direction, file, shard) at the peak step.
//!
//! Each chart is left out when the record has nothing for it (one step has no curve).

use super::Figure;
use super::Options;
use super::downsample::downsample;
use crate::analysis::curve::{self, Curve, param_f64};
use crate::present::svg::{Axis, Heatmap, LineChart, Marker, Point, Rule, Scale, Series, Style};
use crate::record::histogram::{LatencyHistogram, decode, new_histogram};
use crate::record::{Analysis, RunRecord, StepResult};
use crate::spec::numbers::{bytes_per_sec, count, metric, ns, param, rate, sig3};
use crate::view::names::{header, step_params};
use crate::workload::kind;

/// Series with more curves than this are cut to this many (a legend past it is unreadable).
const MAX_SERIES: usize = 10;
/// Ops a step needs before its latency spectrum is drawn.
const MIN_SPECTRUM_OPS: u64 = 20;
/// Points of a time series chart after downsampling.
const TIMELINE_POINTS: usize = 600;

pub fn for_run(r: &RunRecord, a: &Analysis, options: &Options) -> Vec<Figure> {
    let curves = curve::curves(&r.steps);
    let mut out = Vec::new();
    if r.load_levels.is_some() {
        // Calibrations and shares of a maximum, not a curve against one option.
        out.extend(load_levels(r));
    } else if r.search.is_some() {
        // A search's probes, at several shares of each candidate's load: its own charts.
    } else {
        out.extend(throughput(r, a, &curves));
        out.extend(heatmaps(r));
        out.extend(hockey_sticks(r, a, &curves, options));
    }
    out.extend(kind::of(r).map(|k| k.figures(r)).unwrap_or_default());
    out.extend(timeline(r));
    out.extend(spectrum(r, a));
    out.extend(group_spectrum(r, a));
    out
}

/// SPECpower's figures: achieved against target load per level (the diagonal is a level run
/// exactly at its target), and, where the run has watts, power and operations per watt.
fn load_levels(r: &RunRecord) -> Vec<Figure> {
    let Some(l) = &r.load_levels else {
        return Vec::new();
    };
    let levels: Vec<_> = l
        .levels
        .iter()
        .filter(|x| x.kind != "calibration")
        .collect();
    if levels.len() < 2 {
        return Vec::new();
    }
    let point = |x: f64, y: f64, tip: String| Point {
        x,
        y,
        y_low: None,
        y_high: None,
        tip,
    };
    let pct = |v: f64| format!("{v:.0}%");
    let x = || {
        Axis::new("target load (% of the calibrated maximum)", Scale::Linear)
            .with_format(|v| format!("{v:.0}%"))
            .with_zero()
    };
    let achieved = Series {
        name: "achieved".into(),
        points: levels
            .iter()
            .map(|l| {
                point(
                    l.target_pct,
                    l.achieved_pct,
                    format!(
                        "{} asked, {:.1}% achieved",
                        pct(l.target_pct),
                        l.achieved_pct
                    ),
                )
            })
            .collect(),
        style: Style::Points,
    };
    let ideal = Series {
        name: "target".into(),
        points: vec![
            point(0.0, 0.0, String::new()),
            point(100.0, 100.0, String::new()),
        ],
        style: Style::Dashed,
    };
    let y = Axis::new("achieved load", Scale::Linear)
        .with_format(|v| format!("{v:.0}%"))
        .with_zero();
    let mut out = vec![figure(
        r,
        "levels-load",
        format!(
            "Achieved against target load per level, in percent of the calibrated maximum of {}; a level more than 2 points off the diagonal is flagged.",
            rate(l.calibrated_max_ops_per_sec)
        ),
        chart("Load levels", x(), y, vec![achieved, ideal]).render(),
    )];
    let with_watts: Vec<_> = levels.iter().filter(|l| l.watts.is_some()).collect();
    if with_watts.len() >= 2 {
        let watts = Series {
            name: "watts".into(),
            points: with_watts
                .iter()
                .map(|l| {
                    let w = l.watts.unwrap_or(0.0);
                    point(l.target_pct, w, format!("{}: {w:.1} W", pct(l.target_pct)))
                })
                .collect(),
            style: Style::LineWithPoints,
        };
        let efficiency = Series {
            name: "ops per watt".into(),
            points: with_watts
                .iter()
                .filter_map(|l| {
                    let v = l.ops_per_watt?;
                    Some(point(
                        l.target_pct,
                        v,
                        format!("{}: {} ops/W", pct(l.target_pct), sig3(v)),
                    ))
                })
                .collect(),
            style: Style::LineWithPoints,
        };
        out.push(figure(
            r,
            "levels-power",
            "Mean power per level, active idle at 0%.".into(),
            chart(
                "Power per load level",
                x(),
                Axis::new("watts", Scale::Linear).with_zero(),
                vec![watts],
            )
            .render(),
        ));
        out.push(figure(
            r,
            "levels-efficiency",
            format!(
                "Operations per watt per level{}.",
                l.overall_ops_per_watt
                    .map(|v| format!("; overall {} ops/W", sig3(v)))
                    .unwrap_or_default()
            ),
            chart(
                "Efficiency per load level",
                x(),
                Axis::new("ops per watt", Scale::Linear).with_zero(),
                vec![efficiency],
            )
            .render(),
        ));
    }
    out
}

/// A chart of the reports' usual size with these series.
fn chart(title: impl Into<String>, x: Axis, y: Axis, series: Vec<Series>) -> LineChart {
    LineChart {
        series,
        height: 400,
        ..LineChart::new(title, x, y)
    }
}

/// A tick formatter for a figure, by its unit-suffixed name.
fn formatter(name: &str) -> fn(f64) -> String {
    if name.starts_with("bytes_per_sec") {
        bytes_per_sec
    } else if name.starts_with("ns_per_") || name.ends_with("_ns") {
        ns
    } else if name.contains("per_sec") {
        rate
    } else if name.ends_with("_bytes") {
        |v| crate::spec::units::format_bytes(v.max(0.0) as u64)
    } else {
        plain
    }
}

/// `8`, `0.25`, `1.5k`: whole numbers without decimals.
fn plain(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e4 {
        format!("{v:.0}")
    } else {
        count(v)
    }
}

/// The x axis of a sweep: its scale, its format, and whole-number ticks where every value
/// is whole (threads, clients, files).
fn x_axis(name: &str, xs: &[f64]) -> Axis {
    let axis = Axis::new(axis_label(name), x_scale(xs)).with_format(formatter(name));
    match !xs.is_empty() && xs.iter().all(|x| x.fract() == 0.0) {
        true => axis.with_integers(),
        false => axis,
    }
}

/// Log 2 for sweeps spanning 8x or more (1 ... 64 threads; 4k ... 1m), linear otherwise
/// (1, 2, 4 threads sit better on a linear axis, where a straight line is linear scaling);
/// docs/reading-reports.md says the same.
fn x_scale(xs: &[f64]) -> Scale {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo > 0.0 && hi / lo >= 8.0 {
        Scale::Log2
    } else {
        Scale::Linear
    }
}

/// Log 10 when values span more than `ratio`, else linear from zero.
fn y_axis(label: String, name: &str, values: &[f64], ratio: f64) -> Axis {
    let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let axis = Axis::new(
        label,
        if lo > 0.0 && hi / lo > ratio {
            Scale::Log10
        } else {
            Scale::Linear
        },
    )
    .with_format(formatter(name));
    if axis.scale == Scale::Linear {
        axis.with_zero()
    } else {
        axis
    }
}

fn step_label(s: &StepResult) -> String {
    let label = step_params(s);
    if label.is_empty() {
        "the step".into()
    } else {
        label
    }
}

fn by_index(r: &RunRecord, i: usize) -> Option<&StepResult> {
    r.steps.iter().find(|s| s.index == i)
}

fn figure(r: &RunRecord, name: &str, caption: String, svg: String) -> Figure {
    Figure {
        name: format!("{}-{name}", r.id),
        caption,
        svg,
    }
}

/// Reads one figure of a latency summary.
type LatencyOf = fn(&crate::record::LatencySummary) -> f64;

/// Mean over the step's repeats of a latency figure.
fn latency(s: &StepResult, f: fn(&crate::record::LatencySummary) -> f64) -> f64 {
    let n = s.trials.len().max(1) as f64;
    s.trials.iter().map(|t| f(&t.latency)).sum::<f64>() / n
}

fn throughput(r: &RunRecord, a: &Analysis, curves: &[Curve]) -> Option<Figure> {
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
    Some(figure(r, "throughput", caption, chart.render()))
}

/// `threads`, `block size` (for `bs_bytes`), `size` ...
fn axis_label(param: &str) -> String {
    match param {
        "bs_bytes" => "block size".into(),
        "size_bytes" => "size".into(),
        other => other
            .trim_end_matches("_bytes")
            .trim_end_matches("_ns")
            .replace('_', " "),
    }
}

/// One heatmap per combination of the other options when two numeric options sweep.
fn heatmaps(r: &RunRecord) -> Vec<Figure> {
    let Some(first) = r.steps.first() else {
        return Vec::new();
    };
    let numeric: Vec<&String> = first
        .swept
        .iter()
        .filter(|k| {
            r.steps
                .iter()
                .all(|s| s.params.get(*k).is_some_and(|v| v.is_number()))
        })
        .collect();
    if numeric.len() < 2 {
        return Vec::new();
    }
    let (row_name, col_name) = (numeric[numeric.len() - 2], numeric[numeric.len() - 1]);
    let others: Vec<&String> = first
        .swept
        .iter()
        .filter(|k| *k != row_name && *k != col_name)
        .collect();
    let mut groups: Vec<(String, Vec<&StepResult>)> = Vec::new();
    for s in &r.steps {
        let key = others
            .iter()
            .map(|k| {
                format!(
                    "{k}={}",
                    s.params.get(*k).map(|v| param(k, v)).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    let h = &r.headline;
    groups
        .into_iter()
        .take(4)
        .enumerate()
        .map(|(gi, (key, steps))| {
            let mut rows: Vec<f64> = steps
                .iter()
                .filter_map(|s| param_f64(s, row_name))
                .collect();
            let mut cols: Vec<f64> = steps
                .iter()
                .filter_map(|s| param_f64(s, col_name))
                .collect();
            for v in [&mut rows, &mut cols] {
                v.sort_by(f64::total_cmp);
                v.dedup();
            }
            let cells = rows
                .iter()
                .map(|rv| {
                    cols.iter()
                        .map(|cv| {
                            steps
                                .iter()
                                .find(|s| {
                                    param_f64(s, row_name) == Some(*rv)
                                        && param_f64(s, col_name) == Some(*cv)
                                })
                                .map(|s| s.summary.headline.mean)
                        })
                        .collect()
                })
                .collect();
            let (rf, cf) = (formatter(row_name), formatter(col_name));
            let title = format!(
                "{} by {} × {}{}",
                header(&h.metric, &h.op_name),
                axis_label(row_name),
                axis_label(col_name),
                if key.is_empty() {
                    String::new()
                } else {
                    format!(" ({key})")
                }
            );
            let map = Heatmap {
                title: title.clone(),
                x_label: axis_label(col_name),
                y_label: axis_label(row_name),
                columns: cols.iter().map(|v| cf(*v)).collect(),
                rows: rows.iter().map(|v| rf(*v)).collect(),
                cells,
                format: formatter(&h.metric),
                higher_is_better: h.higher_is_better,
                width: 640,
            };
            figure(
                r,
                &format!("grid-{gi}"),
                format!("{title}: each cell one step; brighter is better."),
                map.render(),
            )
        })
        .collect()
}

fn hockey_sticks(r: &RunRecord, a: &Analysis, curves: &[Curve], options: &Options) -> Vec<Figure> {
    let h = &r.headline;
    if !h.higher_is_better || r.steps.len() < 2 {
        return Vec::new();
    }
    // Without a numeric option, the steps in order make the one curve.
    let fallback;
    // Along an option that is not a load (block size, spin time), response time against
    // throughput is no hockey stick.
    let axes = crate::workload::kind::axes_of(r);
    if curves.first().is_some_and(|c| !axes.is_load(&c.x)) {
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
            figure(
                r,
                &format!("hockey-{ci}"),
                format!(
                    "{title}: each point one step (mean over repeats), in the order of the sweep. Where the lines turn up, queueing has begun."
                ),
                chart.render(),
            )
        })
        .collect()
}

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
                    if p.ops > 0 {
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
fn timeline(r: &RunRecord) -> Vec<Figure> {
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
    let chart = |title: &str, fig: &str, lines: &[(&str, &[(f64, f64)])], y: Axis| -> Figure {
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
        figure(
            r,
            fig,
            format!(
                "{title} per interval over the whole run; vertical lines separate the steps. Warm-up and the short last interval of each phase are not shown; drift and stalls are."
            ),
            c.render(),
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

/// The merged response-time histogram of a step's repeats.
fn step_histogram(s: &StepResult) -> Option<LatencyHistogram> {
    let mut merged = new_histogram();
    for t in &s.trials {
        let h = decode(&t.latency_hdr).ok()?;
        merged.add(&h).ok()?;
    }
    (!merged.is_empty()).then_some(merged)
}

/// Quantiles 0, then 1 - 10^(-k/8): eight points per "nine", up to the last one the count
/// supports; the maximum sits at 1 - 1/count.
fn spectrum_points(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    let n = h.len() as f64;
    let top = 1.0 - 1.0 / n.max(2.0);
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let q = 1.0 - 10f64.powf(-(k as f64) / 8.0);
        if q >= top || k > 8 * 7 {
            break;
        }
        out.push((q, h.value_at_quantile(q) as f64));
        k += 1;
    }
    out.push((top, h.max() as f64));
    out
}

/// Which steps get a line in the spectrum: all up to 8, else first, last, peak, sweet spot and
/// evenly spaced others.
fn chosen_steps(r: &RunRecord, a: &Analysis) -> Vec<usize> {
    let n = r.steps.len();
    if n <= 8 {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = vec![0, n - 1];
    for i in [a.peak_step, a.sweet_spot_step].into_iter().flatten() {
        if let Some(pos) = r.steps.iter().position(|s| s.index == i) {
            v.push(pos);
        }
    }
    let mut k = 1;
    while v.len() < 8 && k < 8 {
        v.push(k * (n - 1) / 7);
        k += 1;
    }
    v.sort_unstable();
    v.dedup();
    v.truncate(8);
    v
}

fn spectrum(r: &RunRecord, a: &Analysis) -> Option<Figure> {
    let mut series = Vec::new();
    for pos in chosen_steps(r, a) {
        let s = &r.steps[pos];
        // A handful of ops (IOzone's surface times one pass) has no spectrum to speak of.
        let Some(h) = step_histogram(s).filter(|h| h.len() >= MIN_SPECTRUM_OPS) else {
            continue;
        };
        let label = step_label(s);
        series.push(Series {
            name: label.clone(),
            points: spectrum_points(&h)
                .into_iter()
                .map(|(q, v)| Point {
                    x: q,
                    y: v,
                    y_low: None,
                    y_high: None,
                    tip: format!(
                        "{label}: {} at {}",
                        ns(v),
                        crate::present::svg::nines_label(q)
                    ),
                })
                .collect(),
            style: Style::Line,
        });
    }
    if series.is_empty() {
        return None;
    }
    let values: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    let chart = chart(
        "Latency spectrum",
        Axis::new("percentile", Scale::Nines),
        y_axis("response time".into(), "latency_ns", &values, 20.0),
        series,
    );
    Some(figure(
        r,
        "spectrum",
        "Response time at every percentile, from the step's HDR histogram (all repeats merged); each nine is one division, so the tail is as wide as the body. The last point is the maximum.".into(),
        chart.render(),
    ))
}

/// Per group (transaction type, direction, block size, file, shard) at the peak step, from
/// the groups' percentiles.
fn group_spectrum(r: &RunRecord, a: &Analysis) -> Option<Figure> {
    let step = a
        .peak_step
        .and_then(|i| by_index(r, i))
        .or(r.steps.first())?;
    let t = step.trials.first()?;
    let groups: Vec<_> = t.groups.iter().filter(|g| g.latency.count > 0).collect();
    if groups.len() < 2 {
        return None;
    }
    let series: Vec<Series> = groups
        .iter()
        .take(MAX_SERIES)
        .map(|g| {
            let l = &g.latency;
            // A rank's label already says what it is (`rank 0 on host`).
            let name = match g.by.as_str() {
                "rank" => g.label.clone(),
                by => format!("{} {}", by.replace('_', " "), g.label),
            };
            let top = 1.0 - 1.0 / (l.count as f64).max(2.0);
            let points = [
                (0.5, l.p50_ns),
                (0.9, l.p90_ns),
                (0.99, l.p99_ns),
                (0.999, l.p999_ns),
                (top, l.max_ns),
            ]
            .into_iter()
            .filter(|(q, _)| *q <= top)
            .map(|(q, v)| Point {
                x: q,
                y: v as f64,
                y_low: None,
                y_high: None,
                tip: format!(
                    "{name}: {} at {}",
                    ns(v as f64),
                    crate::present::svg::nines_label(q)
                ),
            })
            .collect();
            Series {
                name,
                points,
                style: Style::LineWithPoints,
            }
        })
        .collect();
    let values: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    let chart = LineChart {
        note: (groups.len() > MAX_SERIES)
            .then(|| format!("the first {MAX_SERIES} of {} groups", groups.len())),
        ..chart(
            format!("Latency by group at {}", step_label(step)),
            Axis::new("percentile", Scale::Nines),
            y_axis("response time".into(), "latency_ns", &values, 20.0),
            series,
        )
    };
    Some(figure(
        r,
        "groups",
        format!(
            "Response time percentiles (p50, p90, p99, p99.9, max) per group at {}, the peak step.",
            step_label(step)
        ),
        chart.render(),
    ))
}

/// Several runs' headline curves on one chart (a comparison's picture); `name` is the
/// figure's unique name. None when the runs have no numeric swept option in common.
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

pub fn overlay(runs: &[&RunRecord], labels: &[String], name: &str) -> Option<Figure> {
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
    Some(Figure {
        name: name.to_string(),
        caption: format!(
            "{title}: the runs' curves on one chart; whiskers are 95% intervals over repeats."
        ),
        svg: chart.render(),
    })
}

/// A comparison's ratios (candidate / baseline) per step, one line per figure, with their
/// 95% intervals as whiskers and the noise band around 1: what the verdicts are made of.
pub fn ratios(
    p: &crate::compare::PairComparison,
    baseline: &RunRecord,
    name: &str,
) -> Option<Figure> {
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
                            crate::view::compare::figure_name(f, &p.op_name),
                            crate::view::compare::ratio(r.result.ratio),
                            crate::view::compare::interval(r),
                            r.result.verdict.as_str()
                        ),
                    }
                })
                .collect();
            Series {
                name: crate::view::compare::figure_name(f, &p.op_name),
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
    Some(Figure {
        name: name.to_string(),
        caption: "Each figure's ratio, candidate over baseline, per step, with its 95% interval. A verdict of faster or slower needs the difference beyond the noise band (dashed) after Holm's correction; equivalent needs the whole interval inside it. For response times, below 1 is better.".into(),
        svg: c.render(),
    })
}
