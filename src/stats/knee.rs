//! Three rules for where a performance curve stops paying: the Kneedle knee, Kleinrock's
//! power maximum and the highest throughput that meets a latency objective.
//!
//! - Kneedle (Satopää, Albrecht, Irwin, Raghavan 2011): normalise x and y to [0, 1]; the
//!   difference curve y − x (concave increasing) or x − y (convex increasing, the paper's
//!   reflection of the curve through (½, ½), which turns it concave) peaks where the normalised
//!   slope passes 1. The peak is a knee if the difference curve later drops below the paper's
//!   threshold, the peak minus the sensitivity (1.0) times the mean normalised x spacing. The
//!   paper's optional smoothing is left to the caller.
//! - Power (Kleinrock 1979): throughput divided by response time, highest where adding load
//!   starts to cost more in waiting than it gains in throughput.
//! - SLO maximum: walking the curve, the best throughput whose latency meets the limit,
//!   interpolating linearly where the limit is crossed between two measured points.

use serde::{Deserialize, Serialize};

/// The shape of the curve Kneedle looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Rises and flattens, e.g. throughput against concurrency.
    ConcaveIncreasing,
    /// Flat then rising steeply, e.g. latency against throughput (a hockey stick).
    ConvexIncreasing,
}

/// Kneedle's sensitivity S; 1.0 is the value the paper recommends for offline data.
const SENSITIVITY: f64 = 1.0;

/// Kneedle (Satopää et al. 2011): normalise x and y to [0,1], form the difference curve (for a
/// concave increasing curve y_n − x_n; for a convex increasing one x_n − y_n, the paper's
/// reflection), and return the index (into the input slice; points are sorted by x internally
/// and mapped back) of the point with the largest difference, provided it is a local maximum
/// from which the curve later drops below the paper's threshold with sensitivity 1.0. None for
/// fewer than 3 points, a flat or straight line, or non-finite values.
pub fn kneedle(points: &[(f64, f64)], shape: Shape) -> Option<usize> {
    if points.len() < 3 || points.iter().any(|p| !p.0.is_finite() || !p.1.is_finite()) {
        return None;
    }
    let mut order: Vec<usize> = (0..points.len()).collect();
    // Stable, so points with equal x keep the caller's order.
    order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    let range = |v: &dyn Fn(usize) -> f64| {
        let lo = order.iter().map(|&i| v(i)).fold(f64::INFINITY, f64::min);
        let hi = order
            .iter()
            .map(|&i| v(i))
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, hi - lo)
    };
    let (x_lo, x_span) = range(&|i| points[i].0);
    let (y_lo, y_span) = range(&|i| points[i].1);
    if !(x_span > 0.0 && y_span > 0.0) {
        return None;
    }
    let diff: Vec<f64> = order
        .iter()
        .map(|&i| {
            let xn = (points[i].0 - x_lo) / x_span;
            let yn = (points[i].1 - y_lo) / y_span;
            match shape {
                Shape::ConcaveIncreasing => yn - xn,
                Shape::ConvexIncreasing => xn - yn,
            }
        })
        .collect();
    // The first largest difference; ties keep the earlier point.
    let mut best = 0;
    for (k, &d) in diff.iter().enumerate() {
        if d > diff[best] {
            best = k;
        }
    }
    if best == 0 || best == diff.len() - 1 || diff[best] <= 0.0 {
        return None;
    }
    // Normalised x spans exactly 1, so the mean spacing is 1/(n−1). Unlike the paper's online
    // scan, a later (lower) local maximum does not cancel the test: the candidate is already
    // the global maximum, and small wiggles in unsmoothed data would otherwise hide a clear knee.
    let threshold = diff[best] - SENSITIVITY / (diff.len() - 1) as f64;
    diff[best + 1..]
        .iter()
        .any(|&d| d < threshold)
        .then_some(order[best])
}

/// Kleinrock's power: throughput / response time; the index of its maximum (ties: the first).
/// Skips points with response time <= 0 or non-finite, or non-finite throughput.
pub fn power_max(points: &[(f64, f64)]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, &(throughput, response)) in points.iter().enumerate() {
        if !(response > 0.0 && response.is_finite() && throughput.is_finite()) {
            continue;
        }
        let power = throughput / response;
        if best.is_none_or(|(_, p)| power > p) {
            best = Some((i, power));
        }
    }
    best.map(|b| b.0)
}

/// The best throughput that meets a latency objective.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SloPoint {
    pub throughput: f64,
    /// The measured latency, or the limit itself for an interpolated crossing.
    pub latency: f64,
    /// The point lies between two measurements, where latency crosses the limit.
    pub interpolated: bool,
    /// The last measured point that met the limit.
    pub index: usize,
}

/// The highest throughput that still meets latency <= limit, walking the points in the given
/// order (the order of the curve: rising concurrency). Where latency crosses the limit between
/// point i (meets) and point i+1 (does not), the crossing is interpolated linearly in
/// (latency -> throughput) and may exceed point i's throughput; returns the maximum over
/// measured points that meet and interpolated crossings (ties: the first found). Points with a
/// non-finite value are skipped and break the curve there. None when no point meets the limit.
pub fn slo_max(points: &[(f64, f64)], limit: f64) -> Option<SloPoint> {
    let ok = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let mut best: Option<SloPoint> = None;
    let mut offer = |c: SloPoint| {
        if best.is_none_or(|b| c.throughput > b.throughput) {
            best = Some(c);
        }
    };
    for (i, p) in points.iter().enumerate() {
        if !ok(p) || p.1 > limit || limit.is_nan() {
            continue;
        }
        offer(SloPoint {
            throughput: p.0,
            latency: p.1,
            interpolated: false,
            index: i,
        });
        if let Some(next) = points.get(i + 1).filter(|q| ok(q) && q.1 > limit) {
            // next.1 > limit >= p.1, so the denominator is positive.
            let t = (limit - p.1) / (next.1 - p.1);
            offer(SloPoint {
                throughput: p.0 + t * (next.0 - p.0),
                latency: limit,
                interpolated: true,
                index: i,
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1 with unit service rate: throughput rho, response time 1/(1 − rho).
    fn mm1() -> Vec<(f64, f64)> {
        (1..20)
            .map(|k| f64::from(k) * 0.05)
            .map(|rho| (rho, 1.0 / (1.0 - rho)))
            .collect()
    }

    #[test]
    fn saturating_curve_has_its_knee_where_the_normalised_slope_is_one() {
        // y = x/(1+x) on [0, 10]: slope·10/y_span = 1 at x = sqrt(11) − 1 ≈ 2.32.
        let mut pts: Vec<(f64, f64)> = (0..=40)
            .map(|k| f64::from(k) * 0.25)
            .map(|x| (x, x / (1.0 + x)))
            .collect();
        let i = kneedle(&pts, Shape::ConcaveIncreasing).unwrap();
        assert_eq!(pts[i].0, 2.25);
        // Unsorted input maps back to the caller's index.
        pts.reverse();
        let j = kneedle(&pts, Shape::ConcaveIncreasing).unwrap();
        assert_eq!(pts[j].0, 2.25);
    }

    #[test]
    fn hockey_stick_latency_has_its_knee_at_high_utilisation() {
        // Normalised slope 1 where 1/(1 − rho)² = 18.95/0.9, i.e. rho ≈ 0.78.
        let pts = mm1();
        let i = kneedle(&pts, Shape::ConvexIncreasing).unwrap();
        assert!((pts[i].0 - 0.8).abs() < 1e-9, "{:?}", pts[i]);
        // Read with the wrong shape, the same curve has no knee.
        assert_eq!(kneedle(&pts, Shape::ConcaveIncreasing), None);
    }

    #[test]
    fn straight_flat_short_and_nan_curves_have_no_knee() {
        let line: Vec<(f64, f64)> = (0..10)
            .map(|k| (f64::from(k), 3.0 * f64::from(k) + 1.0))
            .collect();
        assert_eq!(kneedle(&line, Shape::ConcaveIncreasing), None);
        assert_eq!(kneedle(&line, Shape::ConvexIncreasing), None);
        let flat: Vec<(f64, f64)> = (0..10).map(|k| (f64::from(k), 5.0)).collect();
        assert_eq!(kneedle(&flat, Shape::ConcaveIncreasing), None);
        assert_eq!(
            kneedle(&[(0.0, 0.0), (1.0, 1.0)], Shape::ConcaveIncreasing),
            None
        );
        let nan = [(0.0, 0.0), (1.0, f64::NAN), (2.0, 1.0), (3.0, 1.0)];
        assert_eq!(kneedle(&nan, Shape::ConcaveIncreasing), None);
        let same_x = [(1.0, 0.0), (1.0, 1.0), (1.0, 2.0)];
        assert_eq!(kneedle(&same_x, Shape::ConcaveIncreasing), None);
    }

    #[test]
    fn a_gentle_bend_is_below_the_threshold() {
        // Difference peaks at 0.05, below 1/(n − 1) = 0.1: not a knee.
        let pts: Vec<(f64, f64)> = (0..=10)
            .map(|k| f64::from(k) / 10.0)
            .map(|x| (x, x + 0.2 * x * (1.0 - x)))
            .collect();
        assert_eq!(kneedle(&pts, Shape::ConcaveIncreasing), None);
    }

    #[test]
    fn power_peaks_at_half_load_for_mm1() {
        // rho·(1 − rho) is largest at rho = 0.5.
        let pts = mm1();
        assert_eq!(pts[power_max(&pts).unwrap()].0, 0.5);
    }

    #[test]
    fn power_skips_bad_points_and_keeps_the_first_tie() {
        let pts = [
            (1.0, 0.0),
            (f64::NAN, 1.0),
            (2.0, 1.0),
            (9.0, f64::NAN),
            (4.0, 2.0),
            (1.0, -1.0),
        ];
        assert_eq!(power_max(&pts), Some(2));
        assert_eq!(power_max(&[(1.0, 0.0), (1.0, f64::INFINITY)]), None);
        assert_eq!(power_max(&[]), None);
    }

    #[test]
    fn slo_interpolates_exactly_on_linear_data() {
        // Latency = 1 + throughput/100: the limit 4.5 is met up to throughput 350.
        let pts: Vec<(f64, f64)> = (0..8)
            .map(|k| f64::from(k) * 100.0)
            .map(|x| (x, 1.0 + x / 100.0))
            .collect();
        let s = slo_max(&pts, 4.5).unwrap();
        assert!((s.throughput - 350.0).abs() < 1e-9, "{s:?}");
        assert_eq!((s.latency, s.interpolated, s.index), (4.5, true, 3));
        // A limit met exactly at a point needs no interpolation.
        let s = slo_max(&pts, 4.0).unwrap();
        assert_eq!((s.throughput, s.interpolated, s.index), (300.0, false, 3));
        // A limit every point meets gives the best measured point.
        assert_eq!(slo_max(&pts, 100.0).unwrap().index, 7);
    }

    #[test]
    fn slo_keeps_the_best_when_throughput_falls_past_the_peak() {
        // Throughput peaks then falls while latency keeps rising; the crossing after the fall
        // is worse than the measured peak.
        let pts = [(100.0, 1.0), (200.0, 2.0), (150.0, 3.0), (120.0, 5.0)];
        let s = slo_max(&pts, 4.0).unwrap();
        assert_eq!((s.throughput, s.interpolated, s.index), (200.0, false, 1));
    }

    #[test]
    fn slo_nobody_meets_and_nan_input() {
        let pts = [(100.0, 5.0), (200.0, 6.0)];
        assert_eq!(slo_max(&pts, 4.0), None);
        assert_eq!(slo_max(&pts, f64::NAN), None);
        assert_eq!(slo_max(&[], 4.0), None);
        let nan = [
            (100.0, 1.0),
            (f64::NAN, 2.0),
            (300.0, f64::NAN),
            (400.0, 9.0),
        ];
        let s = slo_max(&nan, 4.0).unwrap();
        assert_eq!((s.throughput, s.interpolated, s.index), (100.0, false, 0));
    }
}
