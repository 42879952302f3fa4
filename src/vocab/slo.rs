//! A service-level objective on response time, as `--slo p99<10ms` gives it: the figure
//! (a percentile, the mean or the maximum) and the limit it must stay under.

use super::SpecError;
use super::units::parse_duration;
use serde::{Deserialize, Serialize};

/// Which response-time figure of a step the objective bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SloFigure {
    Mean,
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl SloFigure {
    pub fn as_str(self) -> &'static str {
        match self {
            SloFigure::Mean => "mean",
            SloFigure::P50 => "p50",
            SloFigure::P90 => "p90",
            SloFigure::P99 => "p99",
            SloFigure::P999 => "p99.9",
            SloFigure::Max => "max",
        }
    }

    /// This figure of one latency summary, in nanoseconds.
    pub fn of(self, l: &crate::record::LatencySummary) -> f64 {
        match self {
            SloFigure::Mean => l.mean_ns,
            SloFigure::P50 => l.p50_ns as f64,
            SloFigure::P90 => l.p90_ns as f64,
            SloFigure::P99 => l.p99_ns as f64,
            SloFigure::P999 => l.p999_ns as f64,
            SloFigure::Max => l.max_ns as f64,
        }
    }
}

/// `p99<10ms`: the figure must stay below the limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub figure: SloFigure,
    pub limit_ns: f64,
}

impl Slo {
    /// Reads `p99<10ms` (also `p99.9<`, `p999<`, `p50<`, `p90<`, `mean<`, `max<`; `<=` is
    /// the same: the limit is a bound on measured values, which are never exactly equal).
    pub fn parse(option: &str, text: &str) -> Result<Slo, SpecError> {
        let bad = |hint: &str| SpecError::new(option, text, hint);
        let form =
            "write it as FIGURE<TIME, e.g. p99<10ms (figures: mean, p50, p90, p99, p99.9, max)";
        let (name, limit) = text
            .split_once("<=")
            .or_else(|| text.split_once('<'))
            .ok_or_else(|| bad(form))?;
        let figure = match name.trim().to_ascii_lowercase().as_str() {
            "mean" | "avg" => SloFigure::Mean,
            "p50" | "median" => SloFigure::P50,
            "p90" => SloFigure::P90,
            "p99" => SloFigure::P99,
            "p99.9" | "p999" => SloFigure::P999,
            "max" => SloFigure::Max,
            _ => return Err(bad(form)),
        };
        // A bare number has no obvious unit here (seconds? milliseconds, as a latency?):
        // refused rather than guessed.
        let limit = limit.trim();
        if !limit.is_empty() && limit.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(bad(&format!(
                "give the limit a unit, e.g. {name}<{limit}ms or {name}<{limit}s",
                name = name.trim()
            )));
        }
        let limit = parse_duration(option, limit).map_err(|_| bad(form))?;
        if limit.is_zero() {
            return Err(bad("the limit must be above zero, e.g. p99<10ms"));
        }
        Ok(Slo {
            figure,
            limit_ns: limit.as_nanos() as f64,
        })
    }

    /// `p99<10ms`, for output.
    pub fn label(&self) -> String {
        let (value, unit) = match self.limit_ns {
            v if v >= 1e9 => (v / 1e9, "s"),
            v if v >= 1e6 => (v / 1e6, "ms"),
            v if v >= 1e3 => (v / 1e3, "us"),
            v => (v, "ns"),
        };
        let value = format!("{value:.3}");
        let value = value.trim_end_matches('0').trim_end_matches('.');
        format!("{}<{value}{unit}", self.figure.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_usual_forms() {
        let s = Slo::parse("slo", "p99<10ms").unwrap();
        assert_eq!((s.figure, s.limit_ns), (SloFigure::P99, 10e6));
        assert_eq!(Slo::parse("slo", "P99.9 <= 500us").unwrap().limit_ns, 500e3);
        assert_eq!(
            Slo::parse("slo", "mean<1s").unwrap().figure,
            SloFigure::Mean
        );
        assert_eq!(Slo::parse("slo", "p99<10ms").unwrap().label(), "p99<10ms");
        assert_eq!(
            Slo::parse("slo", "p99.9<500us").unwrap().label(),
            "p99.9<500us"
        );
        assert_eq!(Slo::parse("slo", "max<1.5s").unwrap().label(), "max<1.5s");
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for text in ["p99", "p98<1ms", "p99<", "p99<ten", "p99<0s", "<1ms", ""] {
            let e = Slo::parse("slo", text).unwrap_err();
            assert!(e.to_string().contains("p99<10ms"), "{text}: {e}");
        }
        let e = Slo::parse("slo", "p99<1").unwrap_err().to_string();
        assert!(e.contains("p99<1ms or p99<1s"), "{e}");
    }
}
