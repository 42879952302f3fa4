//! Latency spectra: response time at every percentile, from each chosen step's HDR histogram
//! (each nine one division, so the tail is as wide as the body), and per group (transaction
//! type, direction, file, shard, rank) at the peak step, from the groups' percentiles (at
//! every step when the steps are different work, a job file's groups).

use super::axes::y_axis;
use super::{MAX_SERIES, Planned, by_index, chart, planned, step_label};
use crate::present::svg::{Axis, LineChart, Point, Scale, Series, Style, nines_label};
use crate::record::histogram::{LatencyHistogram, decode, new_histogram};
use crate::record::{Analysis, GroupResult, RunRecord, StepResult};
use crate::vocab::numbers::ns;
use crate::workload::kind;

/// Ops a step needs before its latency spectrum is drawn.
const MIN_SPECTRUM_OPS: u64 = 20;

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

/// The latency spectrum of the chosen steps, from their HDR histograms, x in "nines".
pub(super) fn spectrum(r: &RunRecord, a: &Analysis) -> Option<Planned<LineChart>> {
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
                    tip: format!("{label}: {} at {}", ns(v), nines_label(q)),
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
    Some(planned(
        r,
        "spectrum",
        "Response time at every percentile, from the step's HDR histogram (all repeats merged); each nine is one division, so the tail is as wide as the body. The last point is the maximum.".into(),
        chart,
    ))
}

/// Per group (transaction type, direction, block size, file, shard) at the peak step, from
/// the groups' percentiles; for steps of different work (a job file's groups), at each step.
pub(super) fn group_spectra(r: &RunRecord, a: &Analysis) -> Vec<Planned<LineChart>> {
    if kind::axes_of(r).varied_apart(&r.steps) {
        return r
            .steps
            .iter()
            .take(MAX_STEP_SPECTRA)
            .filter_map(|s| group_spectrum(r, s, format!("groups-{}", s.index), ""))
            .collect();
    }
    let peak = a.peak_step.and_then(|i| by_index(r, i));
    let Some(step) = peak.or(r.steps.first()) else {
        return Vec::new();
    };
    let which = if peak.is_some() {
        ", the peak step"
    } else {
        ""
    };
    group_spectrum(r, step, "groups".into(), which)
        .into_iter()
        .collect()
}

/// Steps drawn one chart each, at most.
const MAX_STEP_SPECTRA: usize = 8;

/// The groups' percentiles at `step`, each group once (one with the very figures of a group
/// before it, a job's only direction, is left out).
fn group_spectrum(
    r: &RunRecord,
    step: &StepResult,
    name: String,
    which: &str,
) -> Option<Planned<LineChart>> {
    let t = step.trials.first()?;
    let mut groups: Vec<&GroupResult> = Vec::new();
    for g in t.groups.iter().filter(|g| g.latency.count > 0) {
        if !groups.iter().any(|s| s.same_figures(g)) {
            groups.push(g);
        }
    }
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
                tip: format!("{name}: {} at {}", ns(v as f64), nines_label(q)),
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
    Some(planned(
        r,
        &name,
        format!(
            "Response time percentiles (p50, p90, p99, p99.9, max) per group at {}{which}.",
            step_label(step)
        ),
        chart,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    /// 1,000 ops from 1 µs to 1 ms: eight points per nine up to 99.9% (the last the count
    /// supports), then the maximum.
    #[test]
    fn a_step_spectrum_from_its_histogram() {
        let values: Vec<u64> = (1..=1000).map(|v| v * 1000).collect();
        let s = sample::with_histogram(sample::step(0, &[("threads", 4.0)], 100.0, 1000), &values);
        let max = step_histogram(&s).expect("a histogram").max() as f64;
        let c = spectrum(&sample::run(vec![s]), &Analysis::default()).expect("a spectrum");
        assert_eq!(c.name, "run-spectrum");
        assert_eq!(c.chart.x.scale, Scale::Nines);
        assert_eq!(c.chart.y.label, "response time");
        assert_eq!(c.chart.series.len(), 1);
        let line = &c.chart.series[0];
        assert_eq!(line.name, "threads=4");
        assert_eq!(line.points.len(), 8 * 3 + 1);
        assert_eq!(line.points[0].x, 0.0);
        let last = line.points.last().expect("the maximum");
        assert_eq!((last.x, last.y), (0.999, max));
        assert!(line.points.windows(2).all(|w| w[0].y <= w[1].y));
    }

    /// A handful of ops, or no histogram, draws no spectrum.
    #[test]
    fn too_few_ops_give_no_spectrum() {
        let few = sample::with_histogram(sample::step(0, &[], 1.0, 1000), &[1000; 10]);
        assert!(spectrum(&sample::run(vec![few]), &Analysis::default()).is_none());
        let none = sample::step(0, &[], 1.0, 1000);
        assert!(spectrum(&sample::run(vec![none]), &Analysis::default()).is_none());
    }

    /// Up to eight steps each get a line; of more, the first, the last, the peak and evenly
    /// spaced others.
    #[test]
    fn which_steps_get_a_line() {
        let ops: Vec<f64> = (0..20).map(|i| i as f64).collect();
        let many = sample::run(
            ops.iter()
                .enumerate()
                .map(|(i, &v)| sample::step(i, &[("threads", v + 1.0)], v, 1000))
                .collect(),
        );
        let a = Analysis {
            peak_step: Some(11),
            ..Default::default()
        };
        let chosen = chosen_steps(&many, &a);
        assert_eq!(chosen.len(), 8);
        assert!(chosen.contains(&0) && chosen.contains(&19) && chosen.contains(&11));
        let few = sample::threads_run(&[1.0, 2.0, 3.0]);
        assert_eq!(chosen_steps(&few, &a), [0, 1, 2]);
    }

    /// The groups at the peak step: a line each, their percentiles up to the maximum.
    #[test]
    fn groups_at_the_peak_step() {
        let mut r = sample::threads_run(&[100.0, 150.0]);
        r.steps[1].trials[0].groups = vec![
            sample::group("direction", "read", 1000),
            sample::group("direction", "write", 2000),
        ];
        let a = Analysis {
            peak_step: Some(1),
            ..Default::default()
        };
        let all = group_spectra(&r, &a);
        let c = all.first().expect("groups");
        assert_eq!(c.name, "run-groups");
        assert!(c.caption.ends_with("the peak step."), "{}", c.caption);
        assert_eq!(c.chart.title, "Latency by group at threads=2");
        let names = sample::names(&c.chart);
        assert_eq!(names, ["direction read", "direction write"]);
        let read = sample::xy(&c.chart.series[0]);
        assert_eq!(
            read,
            [
                (0.5, 1e3),
                (0.9, 2e3),
                (0.99, 4e3),
                (0.999, 8e3),
                (0.999, 16e3)
            ]
        );
        // One group is no comparison of groups, nor is a group with another's figures.
        let same = r.steps[1].trials[0].groups[0].clone();
        r.steps[1].trials[0].groups[1] = GroupResult {
            by: "job".into(),
            ..same
        };
        assert!(group_spectra(&r, &a).is_empty());
        r.steps[1].trials[0].groups.truncate(1);
        assert!(group_spectra(&r, &a).is_empty());
        assert!(group_spectra(&sample::run(Vec::new()), &a).is_empty());
    }
}
