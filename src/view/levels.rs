//! The load-level table of a `--load-levels` run, SPECpower's way: target against achieved
//! load, throughput, response time, CPU, watts and operations per watt per level, then the
//! overall figure; and the run's findings, which are the levels' rather than a curve's.

use crate::present::table::Table;
use crate::record::levels::LoadLevels;
use crate::record::{RunRecord, step_number};
use crate::vocab::numbers::{ns, rate, sig3};

/// The title, the table, and the overall line.
pub fn table(r: &RunRecord) -> Option<(String, Table, String)> {
    let l = r.load_levels.as_ref()?;
    let mut t = Table::new(
        [
            "step", "level", "target", "achieved", "ops/s", "mean", "p99", "cpu", "watts", "ops/W",
            "",
        ]
        .map(String::from)
        .to_vec(),
    );
    for row in &l.levels {
        let name = match row.kind.as_str() {
            "calibration" => "calibration".to_string(),
            "idle" => "active idle".to_string(),
            _ => format!("{}%", row.target_pct),
        };
        t.row(vec![
            step_number(row.step).to_string(),
            name,
            if row.kind == "calibration" {
                "max".into()
            } else {
                rate(row.target_ops_per_sec)
            },
            format!("{:.1}%", row.achieved_pct),
            rate(row.ops_per_sec),
            ns(row.latency_mean_ns),
            ns(row.latency_p99_ns),
            format!("{:.1}%", row.cpu_busy_pct),
            row.watts.map_or("-".into(), |w| format!("{w:.1}")),
            row.ops_per_watt.map_or("-".into(), sig3),
            if row.flag.is_empty() {
                ""
            } else {
                "OFF TARGET"
            }
            .into(),
        ]);
    }
    let title = format!(
        "load levels (calibrated maximum {}; achieved load in % of it; cpu: % of all CPUs)",
        rate(l.calibrated_max_ops_per_sec)
    );
    let overall = match l.overall_ops_per_watt {
        Some(v) => format!(
            "overall: {} ops per watt (the levels' ops/s summed over their watts summed, active idle included)",
            sig3(v)
        ),
        None => format!(
            "overall: no ops per watt: {}",
            r.power
                .as_ref()
                .map_or("the run recorded no power source", |p| p.note.as_str())
        ),
    };
    Some((title, t, overall))
}

/// The run's findings: the maximum, which levels held their target, the overall figure.
pub fn findings(r: &RunRecord, l: &LoadLevels) -> Vec<String> {
    let mut out = Vec::new();
    if l.calibration_steps.is_empty() {
        return out;
    }
    out.push(format!(
        "calibrated maximum: {} ({} of {} calibration steps averaged)",
        rate(l.calibrated_max_ops_per_sec),
        l.calibration_steps.len().min(2),
        l.calibration_steps.len()
    ));
    let levels: Vec<_> = l.levels.iter().filter(|x| x.kind == "level").collect();
    let off: Vec<String> = levels
        .iter()
        .filter(|x| !x.flag.is_empty())
        .map(|x| format!("{}% reached {:.1}%", x.target_pct, x.achieved_pct))
        .collect();
    if !levels.is_empty() {
        out.push(if off.is_empty() {
            format!(
                "all {} levels within 2 points of their target",
                levels.len()
            )
        } else {
            format!(
                "{} of {} levels within 2 points of their target; off target: {}",
                levels.len() - off.len(),
                levels.len(),
                off.join(", ")
            )
        });
    }
    out.push(match l.overall_ops_per_watt {
        Some(v) => format!("overall: {} ops per watt", sig3(v)),
        None => format!(
            "no ops per watt: {}",
            r.power
                .as_ref()
                .map_or("the run recorded no power source", |p| p.note.as_str())
        ),
    });
    out
}
