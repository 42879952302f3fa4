//! Steady state and stragglers, over a series of per-interval rates (IOPS each second, say).
//!
//! # Steady state
//!
//! The method follows the SNIA Solid State Storage Performance Test Specification (PTS,
//! "steady state" of its tests: a measurement window of rounds in which the excursion
//! `max - min` of the tracked variable stays within 20% of the window's average and the
//! change of its least-squares linear fit across the window within 10% of that average), and
//! fio's `steadystate` option, which applies the same two measures (`iops_slope`, `iops`
//! range) over a sliding window. For the window of `w` intervals starting at `i`, with mean
//! `m` and least-squares slope `b` of rate against interval number
//! (`b = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)²`, `Σ(x - x̄)² = w(w² - 1)/12` for `x = 0..w`):
//!
//! - slope: `b · w / m`, the fitted change across the window relative to its mean;
//!   it meets the criteria when `|slope| <= max_slope`;
//! - spread: `(max - min) / m`; it meets them when `spread <= max_spread`;
//! - the window's mean must be positive (an all-zero window is idle, not steady).
//!
//! A third condition makes the answer hold for the whole run and not just locally: *the rest
//! of the series keeps the window's level*, i.e. the mean of `rates[i..]` is within
//! `max_spread / 2` of `m`, relative to `m` (half the band a window may span). Without it an
//! SSD's fresh-out-of-box plateau, flat for a while before the write cliff, would count as
//! steady whenever the window is shorter than the plateau, and the "sustained" rate would mix
//! the plateau with what follows. A lone hiccup barely moves the mean of what follows, so it
//! does not push the steady point past itself, and the last window passes trivially.
//!
//! `steady_from` is the start of the first window meeting all three. "Initial" (maximum
//! delivered) is the highest window mean before it; "sustained" is the mean from it to the end:
//! the two figures of a write-cliff report.
//!
//! Cost: O(n · window), each window measured directly rather than by running sums, which
//! would accumulate rounding error over a long series; an hour of seconds with a one-minute
//! window is 200k operations.
//!
//! # Stragglers
//!
//! Members (volumes, workers) whose rate is below `fraction` × the median rate of all members.
//! The median, unlike the mean, is not dragged down by the stragglers themselves, so one slow
//! volume among 48 stands out against the typical one.

use serde::{Deserialize, Serialize};

/// When a window of the series counts as steady.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyCriteria {
    /// Intervals in a window (at least 2).
    pub window: usize,
    /// Largest `|least-squares slope| × window ÷ window mean`, e.g. 0.10.
    pub max_slope: f64,
    /// Largest `(max − min) ÷ mean` within the window, e.g. 0.20.
    pub max_spread: f64,
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Index of the first interval of the first window that met the criteria; None if never
    /// steady.
    pub steady_from: Option<usize>,
    /// "Maximum delivered": the highest mean over any `window` intervals starting before
    /// `steady_from` (over the whole series if never steady); for a series steady from 0, the
    /// mean of the first window.
    pub initial_rate: f64,
    /// "Sustained": the mean of the series from `steady_from` to the end; None if never steady.
    pub sustained_rate: Option<f64>,
    /// Signed relative slope (`b × window ÷ mean`) of the window that met the criteria, or of
    /// the last window if none did.
    pub slope: f64,
    /// Relative spread (`(max − min) ÷ mean`) of that window.
    pub spread: f64,
}

/// `x` relative to `mean`. A zero mean only arises for an all-zero window of non-negative
/// rates, where `x` is 0 too; the fallbacks keep the result finite (JSON has no NaN) for
/// any input.
fn relative(x: f64, mean: f64) -> f64 {
    if mean != 0.0 {
        x / mean.abs()
    } else if x == 0.0 {
        0.0
    } else {
        f64::MAX.copysign(x)
    }
}

/// Mean, relative slope and relative spread of one window (at least two values).
fn measure(w: &[f64]) -> (f64, f64, f64) {
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let x_mean = (n - 1.0) / 2.0;
    let sxy: f64 = w
        .iter()
        .enumerate()
        .map(|(x, y)| (x as f64 - x_mean) * (y - mean))
        .sum();
    let sxx = n * (n * n - 1.0) / 12.0;
    let slope = sxy / sxx;
    let (min, max) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    (mean, relative(slope * n, mean), relative(max - min, mean))
}

/// Finds where `rates` become steady (see the module doc). None when the series is shorter
/// than one window or the window is shorter than 2. Criteria that are negative or NaN are
/// never met.
pub fn detect(rates: &[f64], c: &SteadyCriteria) -> Option<SteadyState> {
    let w = c.window;
    if w < 2 || rates.len() < w {
        return None;
    }
    let windows = rates.len() - w + 1;
    // suffix[i] = Σ rates[i..], for the mean of what follows each window.
    let mut suffix = vec![0.0; rates.len() + 1];
    for i in (0..rates.len()).rev() {
        suffix[i] = suffix[i + 1] + rates[i];
    }

    let mut means = Vec::with_capacity(windows);
    let mut found = None;
    for i in 0..windows {
        let (mean, slope, spread) = measure(&rates[i..i + w]);
        means.push(mean);
        let rest_mean = suffix[i] / (rates.len() - i) as f64;
        let steady = mean > 0.0
            && slope.abs() <= c.max_slope
            && spread <= c.max_spread
            && (rest_mean - mean).abs() <= c.max_spread / 2.0 * mean;
        if steady {
            found = Some((i, slope, spread));
            break;
        }
    }

    let (steady_from, slope, spread) = match found {
        Some((i, slope, spread)) => (Some(i), slope, spread),
        None => {
            let (_, slope, spread) = measure(&rates[rates.len() - w..]);
            (None, slope, spread)
        }
    };
    // Windows starting before the steady point; the first window when that is 0.
    let before = steady_from.map_or(windows, |s| s.max(1));
    let initial_rate = means
        .iter()
        .take(before)
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let sustained_rate = steady_from.map(|s| suffix[s] / (rates.len() - s) as f64);
    Some(SteadyState {
        steady_from,
        initial_rate,
        sustained_rate,
        slope,
        spread,
    })
}

/// Indexes of members whose rate is below `fraction` × the median of all members (e.g.
/// fraction 0.5): the slow volume among 48. Needs at least 3 members (returns empty
/// otherwise); a member at 0 while the median is above 0 is a straggler; when the median is
/// 0 or less nobody is.
pub fn stragglers(rates: &[f64], fraction: f64) -> Vec<usize> {
    if rates.len() < 3 {
        return Vec::new();
    }
    let mut sorted = rates.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    };
    if median.is_nan() || median <= 0.0 {
        return Vec::new();
    }
    let threshold = fraction * median;
    rates
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r < threshold)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;

    const PTS: SteadyCriteria = SteadyCriteria {
        window: 10,
        max_slope: 0.10,
        max_spread: 0.20,
    };

    /// `level` × (1 ± `noise`), uniform noise.
    fn noisy(rng: &mut Rng, level: f64, noise: f64) -> f64 {
        level * (1.0 + noise * (2.0 * rng.next_f64() - 1.0))
    }

    /// An SSD's random writes: fresh-out-of-box at 100k IOPS for 20 s, a cliff over 3 s,
    /// then garbage collection holds it near 30k.
    fn ssd_series(rng: &mut Rng) -> Vec<f64> {
        let mut s: Vec<f64> = (0..20).map(|_| noisy(rng, 100_000.0, 0.02)).collect();
        s.extend([80_000.0, 55_000.0, 38_000.0]);
        s.extend((0..100).map(|_| noisy(rng, 30_000.0, 0.05)));
        s
    }

    #[test]
    fn flat_series_is_steady_from_the_start() {
        let rates = vec![500.0; 30];
        let s = detect(&rates, &PTS).unwrap();
        assert_eq!(s.steady_from, Some(0));
        assert_eq!(s.initial_rate, 500.0);
        assert_eq!(s.sustained_rate, Some(500.0));
        assert_eq!((s.slope, s.spread), (0.0, 0.0));

        let mut rng = Rng::new(1);
        let rates: Vec<f64> = (0..60).map(|_| noisy(&mut rng, 1000.0, 0.05)).collect();
        let s = detect(&rates, &PTS).unwrap();
        assert_eq!(s.steady_from, Some(0));
        let first = rates[..10].iter().sum::<f64>() / 10.0;
        assert!((s.initial_rate - first).abs() < 1e-9);
    }

    #[test]
    fn write_cliff_is_steady_after_the_drop() {
        let mut rng = Rng::new(2);
        let rates = ssd_series(&mut rng);
        // A window shorter than the plateau (where the level condition matters) and a
        // longer one.
        for window in [10, 30] {
            let c = SteadyCriteria { window, ..PTS };
            let s = detect(&rates, &c).unwrap();
            let from = s.steady_from.unwrap();
            assert!(
                (20..=25).contains(&from),
                "window {window}: steady from {from}"
            );
            // The best window mean: the plateau itself when it holds a whole window; a
            // window longer than the plateau averages in part of the cliff.
            let best = if window <= 20 { 100_000.0 } else { 79_400.0 };
            assert!(
                (s.initial_rate / best - 1.0).abs() < 0.03,
                "window {window}: {}",
                s.initial_rate
            );
            let sustained = s.sustained_rate.unwrap();
            assert!((sustained / 30_000.0 - 1.0).abs() < 0.03, "{sustained}");
            assert!(s.slope.abs() <= 0.10 && s.spread <= 0.20, "{s:?}");
        }
    }

    #[test]
    fn ramp_is_never_steady() {
        let rates: Vec<f64> = (1..=60).map(|i| 100.0 * f64::from(i)).collect();
        let s = detect(&rates, &PTS).unwrap();
        assert_eq!(s.steady_from, None);
        assert_eq!(s.sustained_rate, None);
        // The last window, 5100..6000, has the highest mean.
        assert!((s.initial_rate - 5550.0).abs() < 1e-9);
        // Its fit rises 100 per interval: 1000 over the window, relative to 5550.
        assert!((s.slope - 1000.0 / 5550.0).abs() < 1e-9, "{}", s.slope);
        assert!((s.spread - 900.0 / 5550.0).abs() < 1e-9, "{}", s.spread);
    }

    #[test]
    fn a_late_hiccup_does_not_undo_steadiness() {
        let mut rng = Rng::new(3);
        let mut rates: Vec<f64> = (0..100).map(|_| noisy(&mut rng, 1000.0, 0.03)).collect();
        rates[95] = 200.0;
        let s = detect(&rates, &PTS).unwrap();
        assert_eq!(s.steady_from, Some(0));
    }

    #[test]
    fn too_short_or_idle_series() {
        assert_eq!(detect(&[1.0; 5], &PTS), None);
        assert_eq!(detect(&[], &PTS), None);
        let one = SteadyCriteria { window: 1, ..PTS };
        assert_eq!(detect(&[1.0; 20], &one), None);
        let zero = SteadyCriteria { window: 0, ..PTS };
        assert_eq!(detect(&[1.0; 20], &zero), None);

        // Zeros never count as steady, and nothing in the answer is NaN.
        let s = detect(&[0.0; 20], &PTS).unwrap();
        assert_eq!(s.steady_from, None);
        assert_eq!((s.initial_rate, s.slope, s.spread), (0.0, 0.0, 0.0));

        // Exactly one window.
        let s = detect(&[7.0; 10], &PTS).unwrap();
        assert_eq!(s.steady_from, Some(0));
        assert_eq!(s.sustained_rate, Some(7.0));
    }

    #[test]
    fn state_round_trips_through_json() {
        let mut rng = Rng::new(4);
        let s = detect(&ssd_series(&mut rng), &PTS).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        let back: SteadyState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn finds_the_slow_volume_among_48() {
        let mut rng = Rng::new(5);
        let mut rates: Vec<f64> = (0..48).map(|_| noisy(&mut rng, 10_000.0, 0.1)).collect();
        assert!(stragglers(&rates, 0.5).is_empty());
        rates[17] = 3_000.0;
        assert_eq!(stragglers(&rates, 0.5), vec![17]);
        rates[40] = 0.0;
        assert_eq!(stragglers(&rates, 0.5), vec![17, 40]);
    }

    #[test]
    fn straggler_edge_cases() {
        assert!(stragglers(&[], 0.5).is_empty());
        assert!(stragglers(&[1.0, 0.0], 0.5).is_empty());
        assert!(stragglers(&[0.0; 48], 0.5).is_empty());
        assert!(stragglers(&[5.0; 48], 0.5).is_empty());
        // Even count: median of 10, 10, 10, 2 is 10.
        assert_eq!(stragglers(&[10.0, 2.0, 10.0, 10.0], 0.5), vec![1]);
        // Most members idle: the median is 0, so nobody is slow relative to it.
        assert!(stragglers(&[0.0, 0.0, 9.0], 0.5).is_empty());
        assert!(stragglers(&[1.0, 2.0, 3.0], f64::NAN).is_empty());
    }
}
