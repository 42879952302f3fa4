//! Graduated load levels (SPECpower's method): `--load-levels 100..10:-10,0 --calibrate 3`.
//!
//! The run first measures the workload at full speed `calibrate` times (closed loop, as
//! configured), takes the maximum as the mean of the last two calibrations (the last one alone
//! when there is one), then runs each level open loop at that share of the maximum, in the
//! order given; level 0 is active idle (sessions open, no ops). See `crate::run::levels`.

use super::SpecError;
use serde::Serialize;

/// The most levels a run may have (SPECpower has ten and active idle).
const MAX_LEVELS: usize = 101;
/// The most calibration steps.
pub const MAX_CALIBRATE: u32 = 10;

/// Which levels to run and how to find the maximum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelsSpec {
    /// Percent of the calibrated maximum, in the order run; 0 is active idle.
    pub levels_pct: Vec<f64>,
    /// Full-speed steps before the levels.
    pub calibrate: u32,
}

/// Parses `100..10:-10,0`: numbers and ranges of percents from 0 to 100, going down or up
/// (`10..100:+10`), in the order written.
pub fn parse_levels(text: &str) -> Result<Vec<f64>, SpecError> {
    let err = |hint: &str| SpecError::new("load-levels", text, hint);
    let number = |s: &str| -> Result<f64, SpecError> {
        let v: f64 = s
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| err("give percents of the calibrated maximum, e.g. 100..10:-10,0"))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(err("a load level is a percent from 0 (active idle) to 100"));
        }
        Ok(v)
    };
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(err("empty item in the list; write e.g. 100..10:-10,0"));
        }
        let Some((from, rest)) = item.split_once("..") else {
            out.push(number(item)?);
            continue;
        };
        let (to, step) = rest.split_once(':').unwrap_or((rest, "10"));
        let (from, to) = (number(from)?, number(to)?);
        let step: f64 = step
            .trim()
            .trim_start_matches('+')
            .trim_start_matches('-')
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s > 0.0)
            .ok_or_else(|| err("a range's step is a percent above 0, e.g. 100..10:-10"))?;
        let down = to < from;
        let mut v = from;
        // Half a step of slack so 100..10:-10 ends at 10 despite rounding.
        while (down && v >= to - step / 2.0) || (!down && v <= to + step / 2.0) {
            out.push((v * 1e6).round() / 1e6);
            v = if down { v - step } else { v + step };
            if out.len() > MAX_LEVELS {
                break;
            }
        }
    }
    if out.len() > MAX_LEVELS {
        return Err(err("at most 101 levels; use a larger step"));
    }
    if out.iter().all(|v| *v == 0.0) {
        return Err(err("give at least one level above 0 (0 is active idle)"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specpower_levels() {
        let l = parse_levels("100..10:-10,0").unwrap_or_default();
        assert_eq!(
            l,
            [
                100.0, 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 20.0, 10.0, 0.0
            ]
        );
        assert_eq!(
            parse_levels("10..30:+10").unwrap_or_default(),
            [10.0, 20.0, 30.0]
        );
        assert_eq!(parse_levels("75%,25").unwrap_or_default(), [75.0, 25.0]);
    }

    #[test]
    fn bad_levels_say_why() {
        for (text, hint) in [
            ("120", "from 0 (active idle) to 100"),
            ("0", "at least one level above 0"),
            ("100..10:0", "step is a percent above 0"),
            ("fast", "percents of the calibrated maximum"),
            ("100,,0", "empty item"),
        ] {
            let e = parse_levels(text)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(hint), "{text}: {e}");
        }
    }
}
