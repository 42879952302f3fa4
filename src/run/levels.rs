//! Graduated load levels, SPECpower's method, for any workload the runner can run open loop.
//!
//! 1. **Calibration**: `calibrate` steps at full speed (closed loop, no think time, the
//!    threads configured). The maximum is the mean throughput of the last two (of the one,
//!    with `--calibrate 1`): SPECpower discards the first, which warms caches and JITs.
//! 2. **Levels**: each level in the order given runs open loop, Poisson arrivals, at its
//!    share of the maximum over all workers; response time counts from the intended start.
//!    A level whose throughput lands more than [`TOLERANCE_POINTS`] from its target (in
//!    points of the maximum) is flagged, as SPECpower's run rules would reject it.
//! 3. **Active idle** (level 0): sessions open, no ops; the machine's power at rest.
//!
//! Every calibration and level is a step of the record, saved as it finishes, with the
//! record's `load_levels` summary updated after each: watts and ops per watt per level, and
//! the overall figure (the sum of the levels' ops/s over the sum of their watts, active idle
//! included) where every level has watts.

use super::runner::{RunError, Steps};
use crate::record::levels::{LevelResult, LoadLevels};
use crate::record::{StepResult, Warning, step_number};
use crate::vocab::{LevelsSpec, StepPoint, Sweep};
use crate::workload::{Arrival, LoadSpec, RateScope, RunSpec, StopSpec};
use serde_json::json;
use std::time::Duration;

/// How far a level's achieved load may be from its target, in percent of the maximum.
pub const TOLERANCE_POINTS: f64 = 2.0;
/// SPECpower judges a level over at least this long.
const MIN_LEVEL: Duration = Duration::from_secs(30);

/// Runs the calibration, then the levels.
pub(super) fn run(spec: &RunSpec, levels: &LevelsSpec, steps: &mut Steps) -> Result<(), RunError> {
    let swept = vec!["level".to_string()];
    if matches!(spec.stop, StopSpec::Duration(d) if d < MIN_LEVEL) {
        steps.warn(Warning {
            code: "short_levels".into(),
            message: format!(
                "levels shorter than {}s: SPECpower judges each level's load over at least 30 s, so the tolerance check here is indicative. Use --duration 30s or more",
                MIN_LEVEL.as_secs()
            ),
            step: None,
        });
    }
    let calibrating = RunSpec {
        load: LoadSpec::Closed {
            think: Duration::ZERO,
        },
        levels: None,
        ..spec.clone()
    };
    let mut summary = LoadLevels {
        method: method(levels),
        ..Default::default()
    };
    for i in 0..levels.calibrate {
        let params = vec![
            ("level".to_string(), json!(format!("calibrate {}", i + 1))),
            ("threads".to_string(), json!(spec.threads.first())),
        ];
        steps.run(&calibrating, &StepPoint::default(), params, &swept)?;
        summary
            .calibration_steps
            .push(steps.record.steps.len().saturating_sub(1));
    }
    let max = calibrated_max(&steps.record.steps, &summary.calibration_steps);
    summary.calibrated_max_ops_per_sec = max;
    steps.note(&format!(
        "calibrated maximum: {} ops/s ({})",
        crate::vocab::numbers::sig3(max),
        if levels.calibrate > 1 {
            "mean of the last two calibrations"
        } else {
            "one calibration"
        }
    ));
    refresh(&mut summary, steps)?;
    for &pct in &levels.levels_pct {
        let rate = max * pct / 100.0;
        let level = RunSpec {
            load: LoadSpec::Open {
                rate: Sweep::single("rate", rate),
                scope: RateScope::Total,
                arrival: Arrival::Poisson,
            },
            levels: None,
            ..spec.clone()
        };
        let name = if pct == 0.0 {
            "active idle".to_string()
        } else {
            format!("{pct}%")
        };
        let params = vec![
            ("level".to_string(), json!(name)),
            ("load_pct".to_string(), json!(pct)),
            ("rate".to_string(), json!(rate)),
            ("threads".to_string(), json!(spec.threads.first())),
        ];
        steps.run(&level, &StepPoint::default(), params, &swept)?;
        refresh(&mut summary, steps)?;
        if let Some(l) = summary.levels.last().filter(|l| !l.flag.is_empty()) {
            let w = Warning {
                code: "level_off_target".into(),
                message: format!("step {}: {}", step_number(l.step), l.flag),
                step: Some(l.step),
            };
            steps.warn(w);
        }
    }
    Ok(())
}

/// The method in words, for the record.
fn method(levels: &LevelsSpec) -> String {
    format!(
        "SPECpower's graduated load levels: {} calibration step(s) at full speed (closed loop); maximum = mean throughput of the last {}; then each level open loop (Poisson arrivals) at its share of the maximum, in the order {}; 0 = active idle (sessions open, no ops); a level more than {TOLERANCE_POINTS} points from its target is flagged; overall = sum of the levels' ops/s over the sum of their watts, active idle included",
        levels.calibrate,
        if levels.calibrate > 1 { "two" } else { "one" },
        levels
            .levels_pct
            .iter()
            .map(|p| format!("{p}%"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The mean throughput of the last two calibration steps (the last one alone if only one).
pub fn calibrated_max(steps: &[StepResult], calibration: &[usize]) -> f64 {
    let last: Vec<f64> = calibration
        .iter()
        .rev()
        .take(2)
        .filter_map(|&i| steps.get(i))
        .map(|s| s.summary.ops_per_sec.mean)
        .filter(|v| v.is_finite())
        .collect();
    if last.is_empty() {
        0.0
    } else {
        last.iter().sum::<f64>() / last.len() as f64
    }
}

/// Rebuilds the summary's rows from the record's steps and saves the record.
fn refresh(summary: &mut LoadLevels, steps: &mut Steps) -> Result<(), RunError> {
    let max = summary.calibrated_max_ops_per_sec;
    summary.levels = steps
        .record
        .steps
        .iter()
        .map(|s| level_result(s, max, summary.calibration_steps.contains(&s.index)))
        .collect();
    let levels: Vec<&LevelResult> = summary
        .levels
        .iter()
        .filter(|l| l.kind != "calibration")
        .collect();
    summary.overall_ops_per_watt = (!levels.is_empty() && levels.iter().all(|l| l.watts.is_some()))
        .then(|| {
            let ops: f64 = levels.iter().map(|l| l.ops_per_sec).sum();
            let watts: f64 = levels.iter().filter_map(|l| l.watts).sum();
            ops / watts
        })
        .filter(|v| v.is_finite());
    steps.record.load_levels = Some(summary.clone());
    steps.save()
}

/// One step as a row of the load-level table.
pub fn level_result(s: &StepResult, max: f64, calibration: bool) -> LevelResult {
    let mean = |f: &dyn Fn(&crate::record::Trial) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = s.trials.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let target_pct = s
        .params
        .get("load_pct")
        .and_then(|v| v.as_f64())
        .unwrap_or(100.0);
    let ops = s.summary.ops_per_sec.mean;
    let achieved_pct = if max > 0.0 { ops / max * 100.0 } else { 0.0 };
    let watts = mean(&|t| t.resources.summary.as_ref()?.watts);
    let kind = if calibration {
        "calibration"
    } else if target_pct == 0.0 {
        "idle"
    } else {
        "level"
    };
    let flag = if kind == "level" && (achieved_pct - target_pct).abs() > TOLERANCE_POINTS {
        format!(
            "level {target_pct}% reached {achieved_pct:.1}% of the calibrated maximum, more than {TOLERANCE_POINTS} points off: the system could not hold the offered rate steadily (see late starts), or the maximum was not stable"
        )
    } else {
        String::new()
    };
    LevelResult {
        step: s.index,
        kind: kind.into(),
        target_pct,
        target_ops_per_sec: s.params.get("rate").and_then(|v| v.as_f64()).unwrap_or(0.0),
        achieved_pct,
        ops_per_sec: ops,
        latency_mean_ns: s.summary.latency_mean_ns.mean,
        latency_p99_ns: s.summary.latency_p99_ns.mean,
        cpu_busy_pct: mean(&|t| {
            Some(
                t.resources
                    .summary
                    .as_ref()
                    .map_or(t.resources.cpu.busy_pct + t.resources.cpu.steal_pct, |r| {
                        r.cpu.busy()
                    }),
            )
        })
        .unwrap_or(0.0),
        watts,
        ops_per_watt: watts.filter(|w| *w > 0.0).map(|w| ops / w),
        flag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Estimate;

    fn step(index: usize, ops: f64, pct: Option<f64>) -> StepResult {
        let mut s = StepResult {
            index,
            ..Default::default()
        };
        s.summary.ops_per_sec = Estimate {
            mean: ops,
            ..Default::default()
        };
        if let Some(p) = pct {
            s.params.insert("load_pct".into(), json!(p));
        }
        s
    }

    #[test]
    fn the_maximum_is_the_mean_of_the_last_two_calibrations() {
        let steps = [
            step(0, 50.0, None),
            step(1, 100.0, None),
            step(2, 110.0, None),
        ];
        assert_eq!(calibrated_max(&steps, &[0, 1, 2]), 105.0);
        assert_eq!(calibrated_max(&steps, &[0]), 50.0);
        assert_eq!(calibrated_max(&steps, &[]), 0.0);
    }

    #[test]
    fn levels_off_target_are_flagged() {
        let ok = level_result(&step(3, 89.0, Some(90.0)), 100.0, false);
        assert_eq!((ok.kind.as_str(), ok.flag.as_str()), ("level", ""));
        assert!((ok.achieved_pct - 89.0).abs() < 1e-9);
        let off = level_result(&step(4, 80.0, Some(90.0)), 100.0, false);
        assert!(off.flag.contains("reached 80.0%"), "{}", off.flag);
        let idle = level_result(&step(5, 0.0, Some(0.0)), 100.0, false);
        assert_eq!((idle.kind.as_str(), idle.flag.as_str()), ("idle", ""));
        let cal = level_result(&step(0, 97.0, None), 100.0, true);
        assert_eq!(cal.kind, "calibration");
    }
}
