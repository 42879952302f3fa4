//! What a sweep shows: the peak, the sweet spot and scaling against the first step.

use super::curve::Axes;
use crate::record::{Analysis, Headline, Scaling, StepResult};

/// The option whose growth a speedup is measured against.
const SCALING_PARAM: &str = "threads";

/// Analyzes the steps of a run by its headline figure.
///
/// - Peak: the step with the best headline figure.
/// - Sweet spot: the step that maximizes throughput divided by mean response time, i.e. the
///   last level before response time grows faster than throughput. Only for figures where
///   higher is better (throughputs).
/// - Scaling: each step against the first step of its curve (the first step with the same
///   values of every option but `threads`); efficiency is the speedup divided by the growth in
///   threads, when threads is what changes.
///
/// Steps that differ along an axis the kind calls apart (different work, not a level) are
/// not ranked: such a run has no peak and no sweet spot.
pub fn analyze(steps: &[StepResult], headline: &Headline, axes: &Axes) -> Analysis {
    let figure = |s: &StepResult| s.summary.headline.mean;
    let ranked = !axes.varied_apart(steps);
    let usable: Vec<&StepResult> = steps
        .iter()
        .filter(|s| figure(s).is_finite() && s.summary.headline.n > 0 && !s.trials.is_empty())
        .collect();
    let better = |a: f64, b: f64| {
        if headline.higher_is_better {
            a > b
        } else {
            a < b
        }
    };
    let mut peak: Option<&StepResult> = None;
    for s in usable.iter().filter(|_| ranked) {
        if peak.is_none_or(|p| better(figure(s), figure(p))) {
            peak = Some(s);
        }
    }
    let sweet = if ranked && headline.higher_is_better && usable.len() > 1 {
        usable
            .iter()
            .filter(|s| s.summary.latency_mean_ns.mean > 0.0)
            .max_by(|a, b| {
                let pa = figure(a) / a.summary.latency_mean_ns.mean;
                let pb = figure(b) / b.summary.latency_mean_ns.mean;
                pa.total_cmp(&pb)
            })
            .map(|s| s.index)
    } else {
        None
    };
    let scaling = usable
        .iter()
        .filter_map(|s| {
            let base = usable.iter().find(|b| same_curve(b, s))?;
            let base_value = figure(base);
            if base_value == 0.0 || figure(s) == 0.0 {
                return None;
            }
            let speedup = if headline.higher_is_better {
                figure(s) / base_value
            } else {
                base_value / figure(s)
            };
            let efficiency = match (param(s, SCALING_PARAM), param(base, SCALING_PARAM)) {
                (Some(n), Some(n0)) if n0 > 0.0 && n > 0.0 => Some(speedup / (n / n0)),
                _ => None,
            };
            Some(Scaling {
                step: s.index,
                speedup,
                efficiency,
            })
        })
        .collect();
    Analysis {
        peak_step: peak.map(|s| s.index),
        sweet_spot_step: sweet,
        scaling,
        curves: super::curve::analyze_curves(steps, headline, None, axes),
    }
}

fn param(step: &StepResult, name: &str) -> Option<f64> {
    step.params.get(name).and_then(|v| v.as_f64())
}

/// Whether `a` and `b` lie on one curve: equal in every option but the scaling one.
fn same_curve(a: &StepResult, b: &StepResult) -> bool {
    a.params
        .iter()
        .filter(|(k, _)| k.as_str() != SCALING_PARAM)
        .all(|(k, v)| b.params.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Estimate, StepSummary, Trial};
    use serde_json::json;

    fn step(index: usize, threads: u64, kernel: &str, tput: f64, lat: f64) -> StepResult {
        StepResult {
            checks: Vec::new(),
            plan: None,
            index,
            params: [
                ("threads".to_string(), json!(threads)),
                ("kernel".to_string(), json!(kernel)),
            ]
            .into(),
            trials: vec![Trial::default()],
            summary: StepSummary {
                headline: Estimate {
                    mean: tput,
                    n: 1,
                    ..Default::default()
                },
                latency_mean_ns: Estimate {
                    mean: lat,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn peak_sweet_spot_and_scaling() {
        let h = Headline {
            metric: "ops_per_sec".into(),
            op_name: "ops".into(),
            higher_is_better: true,
        };
        // Throughput rises to a peak at 8 threads, but latency jumps there: the sweet spot is 4.
        let steps = vec![
            step(0, 1, "a", 100.0, 10.0),
            step(1, 2, "a", 190.0, 10.5),
            step(2, 4, "a", 360.0, 11.0),
            step(3, 8, "a", 400.0, 20.0),
        ];
        let a = analyze(&steps, &h, &Axes::WORKERS);
        assert_eq!(a.peak_step, Some(3));
        assert_eq!(a.sweet_spot_step, Some(2));
        assert_eq!(a.scaling[1].speedup, 1.9);
        assert!((a.scaling[1].efficiency.unwrap() - 0.95).abs() < 1e-12);
        assert!((a.scaling[0].efficiency.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn grid_curves_scale_against_their_own_first_step() {
        let h = Headline {
            metric: "bytes_per_sec".into(),
            op_name: "passes".into(),
            higher_is_better: true,
        };
        let steps = vec![
            step(0, 1, "copy", 10.0, 1.0),
            step(1, 2, "copy", 15.0, 1.0),
            step(2, 1, "triad", 20.0, 1.0),
            step(3, 2, "triad", 40.0, 1.0),
        ];
        let a = analyze(&steps, &h, &Axes::WORKERS);
        assert_eq!(a.scaling[1].speedup, 1.5);
        assert_eq!(a.scaling[3].speedup, 2.0);
        assert_eq!(a.scaling[3].efficiency, Some(1.0));
    }

    #[test]
    fn lower_is_better_has_no_sweet_spot() {
        let h = Headline {
            metric: "ns_per_load".into(),
            op_name: "chases".into(),
            higher_is_better: false,
        };
        let steps = vec![step(0, 1, "a", 5.0, 1.0), step(1, 1, "b", 90.0, 1.0)];
        let a = analyze(&steps, &h, &Axes::WORKERS);
        assert_eq!(a.peak_step, Some(0));
        assert_eq!(a.sweet_spot_step, None);
        assert!(analyze(&[], &h, &Axes::WORKERS).peak_step.is_none());
    }

    #[test]
    fn steps_of_different_work_are_not_ranked() {
        let h = Headline {
            metric: "ops_per_sec".into(),
            op_name: "I/Os".into(),
            higher_is_better: true,
        };
        // The `kernel` option stands for a job file's groups: different jobs, not levels.
        let axes = Axes {
            apart: &["kernel"],
            ..Axes::WORKERS
        };
        let steps = vec![step(0, 1, "a", 100.0, 1.0), step(1, 1, "b", 900.0, 1.0)];
        let a = analyze(&steps, &h, &axes);
        assert_eq!((a.peak_step, a.sweet_spot_step), (None, None));
        // One value of it is no difference: the steps still rank along their threads.
        let same = vec![step(0, 1, "a", 100.0, 1.0), step(1, 2, "a", 900.0, 1.0)];
        assert_eq!(analyze(&same, &h, &axes).peak_step, Some(1));
    }
}
