//! What only a finished trial or step of an I/O test shows: steady state, stragglers among
//! the files, and whether the device's own counters agree with perflab's.
//!
//! The device check compares bytes, not requests: the block layer splits large I/Os and
//! merges adjacent ones, so request counts legitimately differ while bytes must not (for
//! direct I/O; buffered I/O goes through the page cache and is not compared). Other
//! processes' I/O on the same device only adds, so the check is one-sided with a margin.

use super::IoSpec;
use crate::record::{StepResult, Trial, Warning, step_number};
use crate::stats::steady::{SteadyCriteria, detect, stragglers};
use crate::vocab::units::format_bytes;

/// The device may see up to this much less than perflab moved (counter timing at the edges).
const DEVICE_SHORTFALL: f64 = 0.90;
/// ... and this much more (other processes, filesystem metadata, journal).
const DEVICE_EXCESS: f64 = 1.25;
/// Below this rate per direction the comparison is noise.
const DEVICE_MIN_BYTES_PER_SEC: f64 = 1e6;

/// Adds steady-state figures to a trial, from its per-interval I/O rate.
pub fn steady_state(trial: &mut Trial, criteria: &SteadyCriteria) {
    let rates: Vec<f64> = trial.series.iter().map(|p| p.ops_per_sec).collect();
    let interval_s = trial
        .series
        .first()
        .map_or(1.0, |p| p.duration_ns as f64 / 1e9);
    let Some(s) = detect(&rates, criteria) else {
        return;
    };
    trial.figures.insert("initial_iops".into(), s.initial_rate);
    trial.figures.insert(
        "steady".into(),
        f64::from(u8::from(s.steady_from.is_some())),
    );
    if let (Some(from), Some(sustained)) = (s.steady_from, s.sustained_rate) {
        trial
            .figures
            .insert("steady_after_s".into(), from as f64 * interval_s);
        trial.figures.insert("sustained_iops".into(), sustained);
    }
}

/// Flags files far slower than their siblings, in every trial of the step.
pub fn mark_stragglers(step: &mut StepResult, fraction: f64) {
    for trial in &mut step.trials {
        let files: Vec<usize> = (0..trial.groups.len())
            .filter(|&i| trial.groups[i].by == "file")
            .collect();
        let rates: Vec<f64> = files.iter().map(|&i| trial.groups[i].ops_per_sec).collect();
        for k in stragglers(&rates, fraction) {
            trial.groups[files[k]].straggler = true;
        }
    }
}

/// Warnings about a finished step: stragglers, steady state never reached, and a device
/// that disagrees with perflab.
pub fn warnings(spec: &IoSpec, step: &StepResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let warn = |code: &str, message: String| Warning {
        code: code.into(),
        message,
        step: Some(step.index),
    };
    for trial in &step.trials {
        let files: Vec<_> = trial.groups.iter().filter(|g| g.by == "file").collect();
        let mut rates: Vec<f64> = files.iter().map(|g| g.ops_per_sec).collect();
        rates.sort_by(f64::total_cmp);
        let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
        for g in files.iter().filter(|g| g.straggler) {
            out.push(warn(
                "straggler",
                format!(
                    "step {}: file {} ({}) ran at {:.0} I/O/s against a median of {:.0} over {} files; a slow volume holds back everything that waits on it",
                    step_number(step.index),
                    g.key,
                    g.label,
                    g.ops_per_sec,
                    median,
                    files.len()
                ),
            ));
        }
        if spec.steady_state.is_some() && trial.figures.get("steady") == Some(&0.0) {
            out.push(warn(
                "not_steady",
                format!(
                    "step {} never reached steady state; lengthen --duration or loosen --steady-state",
                    step_number(step.index)
                ),
            ));
        }
        if spec.direct {
            out.extend(
                device_mismatch(trial)
                    .into_iter()
                    .map(|m| warn("device_mismatch", m)),
            );
        }
    }
    out
}

/// Where the devices' byte counts disagree with perflab's for one trial.
fn device_mismatch(trial: &Trial) -> Vec<String> {
    if trial.devices.is_empty() {
        return Vec::new();
    }
    let ours = |key: &str| {
        trial
            .groups
            .iter()
            .find(|g| g.by == "direction" && g.key == key)
            .map_or(0.0, |g| g.bytes_per_sec)
    };
    let (read, write) = (ours("read"), ours("write"));
    let (dev_read, dev_write) = trial.devices.iter().fold((0.0, 0.0), |(r, w), d| {
        (
            r + d.activity.read_bytes_per_sec,
            w + d.activity.write_bytes_per_sec,
        )
    });
    let names = trial
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    let mut out = Vec::new();
    for (what, did, ours, theirs) in [
        ("read", "read", read, dev_read),
        ("written", "wrote", write, dev_write),
    ] {
        // Where perflab moved (next to) nothing, what the device did is someone else's.
        if ours < DEVICE_MIN_BYTES_PER_SEC {
            continue;
        }
        if theirs < ours * DEVICE_SHORTFALL || theirs > ours * DEVICE_EXCESS {
            out.push(format!(
                "{names} counted {}/s {what} while perflab {did} {}/s with direct I/O; {}",
                format_bytes(theirs as u64),
                format_bytes(ours as u64),
                if theirs > ours {
                    "other processes may be using the device"
                } else {
                    "the I/O may not be reaching the device (a cache or a layer in between)"
                }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GroupResult;

    fn file(key: &str, iops: f64) -> GroupResult {
        GroupResult {
            by: "file".into(),
            key: key.into(),
            label: format!("/data/{key}"),
            ops_per_sec: iops,
            ..Default::default()
        }
    }

    #[test]
    fn the_slow_volume_of_many_is_flagged() {
        let mut groups: Vec<GroupResult> = (0..47).map(|i| file(&i.to_string(), 1000.0)).collect();
        groups.push(file("47", 300.0));
        groups.push(GroupResult {
            by: "direction".into(),
            key: "read".into(),
            ops_per_sec: 47_300.0,
            ..Default::default()
        });
        let mut step = StepResult {
            trials: vec![Trial {
                groups,
                ..Default::default()
            }],
            ..Default::default()
        };
        mark_stragglers(&mut step, 0.5);
        let flagged: Vec<&str> = step.trials[0]
            .groups
            .iter()
            .filter(|g| g.straggler)
            .map(|g| g.key.as_str())
            .collect();
        assert_eq!(flagged, vec!["47"]);
    }
}
