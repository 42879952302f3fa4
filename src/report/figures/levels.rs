//! A load-level run's charts (SPECpower's): achieved against target load per level, and,
//! where the run has watts, power and operations per watt per level.

use super::{Planned, chart, planned};
use crate::present::svg::{Axis, LineChart, Point, Scale, Series, Style};
use crate::record::RunRecord;
use crate::vocab::numbers::{rate, sig3};

/// SPECpower's figures: achieved against target load per level (the diagonal is a level run
/// exactly at its target), and, where the run has watts, power and operations per watt.
pub(super) fn load_levels(r: &RunRecord) -> Vec<Planned<LineChart>> {
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
    let mut out = vec![planned(
        r,
        "levels-load",
        format!(
            "Achieved against target load per level, in percent of the calibrated maximum of {}; a level more than 2 points off the diagonal is flagged.",
            rate(l.calibrated_max_ops_per_sec)
        ),
        chart("Load levels", x(), y, vec![achieved, ideal]),
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
        out.push(planned(
            r,
            "levels-power",
            "Mean power per level, active idle at 0%.".into(),
            chart(
                "Power per load level",
                x(),
                Axis::new("watts", Scale::Linear).with_zero(),
                vec![watts],
            ),
        ));
        out.push(planned(
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
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use crate::record::levels::{LevelResult, LoadLevels};

    fn level(kind: &str, target_pct: f64, achieved_pct: f64, watts: Option<f64>) -> LevelResult {
        LevelResult {
            kind: kind.into(),
            target_pct,
            achieved_pct,
            watts,
            ops_per_watt: watts.map(|w| achieved_pct * 10.0 / w),
            ..Default::default()
        }
    }

    fn levelled(levels: Vec<LevelResult>) -> RunRecord {
        let mut r = sample::run(Vec::new());
        r.load_levels = Some(LoadLevels {
            calibrated_max_ops_per_sec: 1000.0,
            levels,
            overall_ops_per_watt: Some(5.0),
            ..Default::default()
        });
        r
    }

    /// The calibration is no level: the levels' achieved loads against their targets, the
    /// diagonal, and with watts the power and efficiency per level.
    #[test]
    fn levels_against_their_targets_and_their_watts() {
        let r = levelled(vec![
            level("calibration", 100.0, 100.0, Some(130.0)),
            level("level", 50.0, 49.0, Some(80.0)),
            level("level", 100.0, 99.5, Some(120.0)),
            level("idle", 0.0, 0.0, Some(40.0)),
        ]);
        let charts = load_levels(&r);
        let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "run-levels-load",
                "run-levels-power",
                "run-levels-efficiency"
            ]
        );
        let load = &charts[0].chart;
        assert_eq!(load.x.label, "target load (% of the calibrated maximum)");
        let series = sample::names(load);
        assert_eq!(series, ["achieved", "target"]);
        let achieved = sample::xy(&load.series[0]);
        assert_eq!(achieved, [(50.0, 49.0), (100.0, 99.5), (0.0, 0.0)]);
        assert!(
            charts[0].caption.contains("1.00k/s"),
            "{}",
            charts[0].caption
        );
        let watts = sample::ys(&charts[1].chart.series[0]);
        assert_eq!(watts, [80.0, 120.0, 40.0]);
        assert_eq!(charts[2].chart.y.label, "ops per watt");
        assert!(charts[2].caption.contains("overall 5.00 ops/W"));
    }

    #[test]
    fn without_watts_only_the_loads_and_without_levels_nothing() {
        let r = levelled(vec![
            level("level", 50.0, 49.0, None),
            level("level", 100.0, 99.5, None),
        ]);
        assert_eq!(load_levels(&r).len(), 1);
        let one = levelled(vec![level("level", 50.0, 49.0, Some(80.0))]);
        assert!(load_levels(&one).is_empty());
        assert!(load_levels(&sample::run(Vec::new())).is_empty());
    }
}
