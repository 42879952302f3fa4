//! Mean and 95% confidence interval of repeated measurements.

use crate::record::Estimate;

/// Two-sided 95% quantiles of Student's t for 1..=30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile for `df` degrees of freedom (normal approximation past 30).
fn t95(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T95[df - 1],
        _ => 1.96,
    }
}

/// Mean of `samples` with a 95% confidence interval (absent for fewer than two samples) and
/// the relative spread (max - min) / mean.
pub fn estimate(samples: &[f64]) -> Estimate {
    let n = samples.len();
    if n == 0 {
        return Estimate::default();
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let (min, max) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let spread = if mean != 0.0 {
        (max - min) / mean.abs()
    } else {
        0.0
    };
    let (ci95_low, ci95_high) = if n >= 2 {
        let var = samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t95(n - 1) * (var / n as f64).sqrt();
        (Some(mean - half), Some(mean + half))
    } else {
        (None, None)
    };
    Estimate {
        mean,
        ci95_low,
        ci95_high,
        spread,
        n: n as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_sample_has_no_interval() {
        let e = estimate(&[5.0]);
        assert_eq!((e.mean, e.ci95_low, e.spread, e.n), (5.0, None, 0.0, 1));
        assert_eq!(estimate(&[]).n, 0);
    }

    #[test]
    fn interval_matches_a_hand_computation() {
        // mean 10, sample sd 1, n 4: half width = 3.182 * 1/2
        let e = estimate(&[9.0, 10.0, 11.0, 10.0]);
        let sd = (2.0f64 / 3.0).sqrt();
        let half = 3.182 * sd / 2.0;
        assert!((e.mean - 10.0).abs() < 1e-12);
        assert!((e.ci95_high.unwrap() - (10.0 + half)).abs() < 1e-9);
        assert!((e.spread - 0.2).abs() < 1e-12);
    }
}
