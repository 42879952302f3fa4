//! The curves of a sweep and what each shows: which option runs along the x axis, which steps
//! lie on one curve, and for throughput against concurrency the Universal Scalability Law fit
//! and the knee by three rules (Kneedle, Kleinrock's power, and a response-time objective).
//!
//! The x axis is the innermost swept option with numeric values (`--kernel copy,triad
//! --threads 1,2` draws threads along x, one curve per kernel). Steps lie on one curve when
//! every other swept option has the same value. Reports draw these curves; the record keeps
//! their analysis (`Analysis::curves`).

use crate::record::{CurveAnalysis, Headline, SloKnee, StepResult};
use crate::stats::{knee, usl};
use crate::vocab::Slo;
use serde_json::Value;

/// Which options of a kind are load axes, as the kind declares them
/// (`crate::workload::kind::Kind::axes`): along these, knees and the response-time hockey
/// stick mean something (along a block size or a spin time, "where the curve bends" is not a
/// saturation), and along its concurrencies a scalability model describes the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axes {
    /// Options that raise the offered load: concurrency, or an open loop's rate.
    pub load: &'static [&'static str],
    /// Of those, the ones along which throughput is expected to grow with more work in
    /// flight: the x axes the Universal Scalability Law is fitted along.
    pub concurrency: &'static [&'static str],
    /// Options whose values are different work rather than levels of one (a job file's
    /// groups of jobs): steps apart along them are not ranked against each other, so a run
    /// that varies one has no peak and no sweet spot.
    pub apart: &'static [&'static str],
}

impl Axes {
    /// Every kind's: its workers, and an open loop's rate.
    pub const WORKERS: Axes = Axes {
        load: &["threads", "rate"],
        concurrency: &["threads"],
        apart: &[],
    };

    /// Whether option `x` raises the offered load.
    pub fn is_load(&self, x: &str) -> bool {
        self.load.contains(&x)
    }

    /// Whether option `x` names different work rather than a level.
    pub fn is_apart(&self, x: &str) -> bool {
        self.apart.contains(&x)
    }

    /// Whether the steps take more than one value of an option that names different work:
    /// then they are not points of one curve, and none is the peak.
    pub fn varied_apart(&self, steps: &[StepResult]) -> bool {
        self.apart.iter().any(|x| {
            let mut values = steps.iter().filter_map(|s| s.params.get(*x));
            values
                .next()
                .is_some_and(|first| values.any(|v| v != first))
        })
    }

    /// Whether option `x` is a concurrency.
    pub fn is_concurrency(&self, x: &str) -> bool {
        self.concurrency.contains(&x)
    }
}

/// Points a concurrency curve needs before the USL is fitted to it (the `usl` R package's
/// own minimum; below it three parameters are barely determined).
pub const USL_MIN_POINTS: usize = 6;

/// One curve: the steps that differ only in the x option.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The option along the x axis.
    pub x: String,
    /// The other swept options and their values on this curve, e.g. `kernel=triad`.
    pub fixed: Vec<(String, Value)>,
    /// Positions in the steps slice, in order of x.
    pub steps: Vec<usize>,
}

impl Curve {
    /// `kernel=triad rw=read`, or empty for the only curve of a one-option sweep.
    pub fn label(&self) -> String {
        self.fixed
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(k, v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A value as people read it: sizes in binary units (`64 KiB`), the rest as written.
fn value_text(name: &str, v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if name.ends_with("_bytes") => {
            crate::vocab::units::format_bytes(n.as_u64().unwrap_or(0))
        }
        other => other.to_string(),
    }
}

/// The innermost swept option whose values are numbers, if any.
pub fn x_axis(steps: &[StepResult]) -> Option<String> {
    let first = steps.first()?;
    first
        .swept
        .iter()
        .rev()
        .find(|name| {
            steps
                .iter()
                .all(|s| s.params.get(*name).is_none_or(Value::is_number))
        })
        .cloned()
}

/// The step's value of option `name` as a number.
pub fn param_f64(step: &StepResult, name: &str) -> Option<f64> {
    step.params.get(name).and_then(Value::as_f64)
}

/// The curves of a sweep, in order of their first step; empty when no swept option is
/// numeric.
pub fn curves(steps: &[StepResult]) -> Vec<Curve> {
    let Some(x) = x_axis(steps) else {
        return Vec::new();
    };
    let others: Vec<String> = steps[0]
        .swept
        .iter()
        .filter(|k| **k != x)
        .cloned()
        .collect();
    let mut out: Vec<Curve> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let fixed: Vec<(String, Value)> = others
            .iter()
            .map(|k| (k.clone(), s.params.get(k).cloned().unwrap_or(Value::Null)))
            .collect();
        match out.iter_mut().find(|c| c.fixed == fixed) {
            Some(c) => c.steps.push(i),
            None => out.push(Curve {
                x: x.clone(),
                fixed,
                steps: vec![i],
            }),
        }
    }
    for c in &mut out {
        c.steps.sort_by(|&a, &b| {
            let xa = param_f64(&steps[a], &c.x).unwrap_or(f64::NAN);
            let xb = param_f64(&steps[b], &c.x).unwrap_or(f64::NAN);
            xa.total_cmp(&xb)
        });
    }
    out
}

/// A step's response-time figure for an objective: the mean over its repeats.
pub fn step_latency(step: &StepResult, slo: &Slo) -> f64 {
    let n = step.trials.len();
    if n == 0 {
        return f64::NAN;
    }
    step.trials
        .iter()
        .map(|t| slo.figure.of(&t.latency))
        .sum::<f64>()
        / n as f64
}

/// The analysis of every curve whose figure is a throughput along one of `axes`' load axes:
/// knees wherever a curve has three points or more, and the USL fit where its x axis is a concurrency with at least
/// [`USL_MIN_POINTS`] distinct values. `slo` adds the objective's knee (reports pass it; runs
/// do not).
pub fn analyze_curves(
    steps: &[StepResult],
    headline: &Headline,
    slo: Option<&Slo>,
    axes: &Axes,
) -> Vec<CurveAnalysis> {
    if !headline.higher_is_better {
        return Vec::new();
    }
    let usable = |s: &StepResult| {
        !s.trials.is_empty() && s.summary.headline.n > 0 && s.summary.headline.mean.is_finite()
    };
    curves(steps)
        .into_iter()
        .filter(|c| axes.is_load(&c.x))
        .filter_map(|c| {
            let on: Vec<&StepResult> = c
                .steps
                .iter()
                .map(|&i| &steps[i])
                .filter(|s| usable(s) && param_f64(s, &c.x).is_some())
                .collect();
            if on.len() < 3 {
                return None;
            }
            let xs: Vec<f64> = on.iter().filter_map(|s| param_f64(s, &c.x)).collect();
            let tput: Vec<f64> = on.iter().map(|s| s.summary.headline.mean).collect();
            let concurrency = axes.is_concurrency(&c.x);
            let mut distinct = xs.clone();
            distinct.dedup();
            let usl = (concurrency && distinct.len() >= USL_MIN_POINTS)
                .then(|| {
                    let points: Vec<(f64, f64)> = xs.iter().copied().zip(tput.clone()).collect();
                    usl::fit(&points)
                })
                .flatten();
            let kneedle_points: Vec<(f64, f64)> = xs.iter().copied().zip(tput.clone()).collect();
            let knee_kneedle =
                knee::kneedle(&kneedle_points, knee::Shape::ConcaveIncreasing).map(|i| on[i].index);
            let power_points: Vec<(f64, f64)> = on
                .iter()
                .map(|s| (s.summary.headline.mean, s.summary.latency_mean_ns.mean))
                .collect();
            let knee_power = knee::power_max(&power_points).map(|i| on[i].index);
            let slo = slo.and_then(|o| {
                let points: Vec<(f64, f64)> = on
                    .iter()
                    .map(|s| (s.summary.headline.mean, step_latency(s, o)))
                    .collect();
                knee::slo_max(&points, o.limit_ns).map(|p| SloKnee {
                    objective: o.label(),
                    throughput: p.throughput,
                    latency_ns: p.latency,
                    interpolated: p.interpolated,
                    last_step: on[p.index].index,
                })
            });
            Some(CurveAnalysis {
                x: c.x.clone(),
                label: c.label(),
                steps: on.iter().map(|s| s.index).collect(),
                usl,
                knee_kneedle_step: knee_kneedle,
                knee_power_step: knee_power,
                slo,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Estimate, StepSummary, Trial};
    use serde_json::json;

    fn step(index: usize, kernel: &str, threads: u64, tput: f64, lat: f64) -> StepResult {
        let trial = Trial {
            latency: crate::record::LatencySummary {
                mean_ns: lat,
                p99_ns: (lat * 2.0) as u64,
                ..Default::default()
            },
            ..Default::default()
        };
        StepResult {
            checks: Vec::new(),
            plan: None,
            index,
            params: [
                ("kernel".to_string(), json!(kernel)),
                ("threads".to_string(), json!(threads)),
            ]
            .into(),
            swept: vec!["kernel".into(), "threads".into()],
            trials: vec![trial],
            summary: StepSummary {
                headline: Estimate {
                    mean: tput,
                    n: 1,
                    ..Default::default()
                },
                latency_mean_ns: Estimate {
                    mean: lat,
                    n: 1,
                    ..Default::default()
                },
                ..Default::default()
            },
        }
    }

    fn throughput() -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "ops".into(),
            higher_is_better: true,
        }
    }

    #[test]
    fn the_innermost_numeric_option_is_the_x_axis() {
        let steps = vec![
            step(0, "copy", 2, 20.0, 1.0),
            step(1, "copy", 1, 10.0, 1.0),
            step(2, "triad", 1, 30.0, 1.0),
            step(3, "triad", 2, 50.0, 1.0),
        ];
        assert_eq!(x_axis(&steps).as_deref(), Some("threads"));
        let c = curves(&steps);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].label(), "kernel=copy");
        assert_eq!(c[0].steps, vec![1, 0], "sorted by threads");
        assert_eq!(c[1].steps, vec![2, 3]);
        // Only a categorical option: no curve.
        let mut only_kernel = steps.clone();
        for s in &mut only_kernel {
            s.swept = vec!["kernel".into()];
            s.params.remove("threads");
        }
        assert!(curves(&only_kernel).is_empty());
    }

    #[test]
    fn a_concurrency_curve_gets_the_usl_and_knees() {
        // Known USL truth: sigma 0.05, kappa 0.002, gamma 1000; response time by Little's law.
        let usl = |n: f64| 1000.0 * n / (1.0 + 0.05 * (n - 1.0) + 0.002 * n * (n - 1.0));
        let steps: Vec<StepResult> = (0..8)
            .map(|i| {
                let n = (1u64 << i) as f64;
                step(i, "a", 1 << i, usl(n), n / usl(n) * 1e9)
            })
            .collect();
        let slo = Slo::parse("slo", "p99<10ms").unwrap();
        let a = analyze_curves(&steps, &throughput(), Some(&slo), &Axes::WORKERS);
        assert_eq!(a.len(), 1);
        let fit = a[0].usl.as_ref().expect("a fit from 8 points");
        assert!((fit.sigma - 0.05).abs() < 1e-3, "{fit:?}");
        assert!(a[0].knee_kneedle_step.is_some());
        assert!(a[0].knee_power_step.is_some());
        let s = a[0]
            .slo
            .as_ref()
            .expect("the first steps meet 10 ms at p99");
        assert_eq!(s.objective, "p99<10ms");
        assert!(s.latency_ns <= 10e6 + 1.0);
        // Five points: knees, but no model.
        let a = analyze_curves(&steps[..5], &throughput(), None, &Axes::WORKERS);
        assert!(a[0].usl.is_none() && a[0].slo.is_none());
        // A figure where lower is better has no throughput curve to analyze.
        let mut h = throughput();
        h.higher_is_better = false;
        assert!(analyze_curves(&steps, &h, None, &Axes::WORKERS).is_empty());
    }
}
