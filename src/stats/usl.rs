//! A fit of Gunther's Universal Scalability Law to throughput measured at several levels of
//! concurrency: X(N) = gamma·N / (1 + sigma·(N−1) + kappa·N·(N−1)), with sigma the contention,
//! kappa the coherency (crosstalk) and gamma the throughput of one unit of concurrency.
//!
//! Method: least squares with bounds gamma ≥ 0 and sigma, kappa in [0, 1]. For fixed sigma and
//! kappa the model is linear in gamma, so gamma has a closed form and only (sigma, kappa) is
//! searched: first a grid (sigma on a quadratic scale from 0 to 1, kappa 0 and log-spaced from
//! 1e-7 to 1), then Nelder–Mead from the best grid point, restarted until it stops improving,
//! with vertices projected onto the bounds. A parameter next to a bound is snapped onto it when
//! that costs nothing. Standard errors come from the Jacobian at the optimum,
//! cov = s²·(JᵀJ)⁻¹ with s² = RSS/(n−3), over the parameters not on a bound; the intervals are
//! estimate ± t(0.975, n−3)·se, clipped to the bounds. Everything is deterministic.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A USL fit, its uncertainty and what it implies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct UslFit {
    /// Contention (the serial fraction, as in Amdahl's law).
    pub sigma: f64,
    /// Coherency: the cost of keeping N units consistent with each other, grows as N².
    pub kappa: f64,
    /// Throughput of one unit of concurrency with no contention.
    pub gamma: f64,
    /// 95% intervals; None when there are 3 points or fewer, the parameter sits on a bound or
    /// the problem is singular.
    pub sigma_ci95: Option<[f64; 2]>,
    pub kappa_ci95: Option<[f64; 2]>,
    pub gamma_ci95: Option<[f64; 2]>,
    pub r_squared: f64,
    /// The usable points the fit used.
    pub points: usize,
    /// N* = sqrt((1 − sigma)/kappa), the concurrency of peak throughput, when kappa > 0.
    pub peak_n: Option<f64>,
    /// X(N*).
    pub peak_throughput: Option<f64>,
    /// N* lies outside the measured range of N.
    pub peak_extrapolated: bool,
    /// gamma/sigma when sigma > 0: the ceiling if kappa were 0.
    pub amdahl_limit: Option<f64>,
    /// Plain sentences about how far to trust the fit.
    pub warnings: Vec<String>,
}

/// Below this many points the fit is reported as indicative only.
const FEW_POINTS: usize = 6;
/// Below this R² the fit is reported as poor.
const POOR_R_SQUARED: f64 = 0.9;
/// Efficiency (X/N) this much above the efficiency at the smallest N means super-linear data;
/// the margin keeps measurement noise from raising the warning.
const SUPERLINEAR_MARGIN: f64 = 1.1;
const SUPERLINEAR: &str = "the data scale super-linearly (throughput per unit of concurrency \
                           rises): the USL does not describe them";

/// The model's throughput at concurrency `n`; NaN where its denominator is not positive.
pub fn predict(fit: &UslFit, n: f64) -> f64 {
    model(fit.sigma, fit.kappa, fit.gamma, n)
}

fn model(sigma: f64, kappa: f64, gamma: f64, n: f64) -> f64 {
    let d = denominator(sigma, kappa, n);
    if d > 0.0 { gamma * n / d } else { f64::NAN }
}

fn denominator(sigma: f64, kappa: f64, n: f64) -> f64 {
    1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
}

/// The least-squares gamma for fixed sigma and kappa, and the residual sum of squares.
fn profile(data: &[(f64, f64)], sigma: f64, kappa: f64) -> (f64, f64) {
    let (mut sff, mut sxf) = (0.0, 0.0);
    for &(n, x) in data {
        let d = denominator(sigma, kappa, n);
        // Only possible for N < 1 with sigma near 1; such parameters are simply infeasible.
        if d <= 0.0 {
            return (0.0, f64::INFINITY);
        }
        let f = n / d;
        sff += f * f;
        sxf += x * f;
    }
    let gamma = if sff > 0.0 { (sxf / sff).max(0.0) } else { 0.0 };
    let residual = |&(n, x): &(f64, f64)| x - gamma * n / denominator(sigma, kappa, n);
    (gamma, data.iter().map(|p| residual(p).powi(2)).sum())
}

/// Nelder–Mead over (sigma, kappa) with every vertex projected onto [0, 1]².
fn nelder_mead(
    obj: &dyn Fn([f64; 2]) -> f64,
    start: [f64; 2],
    step: [f64; 2],
    tol: [f64; 2],
) -> ([f64; 2], f64) {
    let vertex = |p: [f64; 2]| {
        let p = [p[0].clamp(0.0, 1.0), p[1].clamp(0.0, 1.0)];
        (p, obj(p))
    };
    // Step towards the inside of the box so that the first simplex is not flat on a bound.
    let away = |v: f64, s: f64| if v + s <= 1.0 { v + s } else { v - s };
    let mut s = [
        vertex(start),
        vertex([away(start[0], step[0]), start[1]]),
        vertex([start[0], away(start[1], step[1])]),
    ];
    let along =
        |a: [f64; 2], b: [f64; 2], t: f64| [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
    for _ in 0..500 {
        s.sort_by(|a, b| a.1.total_cmp(&b.1));
        let converged = (0..2).all(|j| s.iter().all(|v| (v.0[j] - s[0].0[j]).abs() <= tol[j]));
        if converged {
            break;
        }
        let c = along(s[0].0, s[1].0, 0.5);
        let r = vertex(along(c, s[2].0, -1.0));
        if r.1 < s[0].1 {
            let e = vertex(along(c, s[2].0, -2.0));
            s[2] = if e.1 < r.1 { e } else { r };
        } else if r.1 < s[1].1 {
            s[2] = r;
        } else {
            let (inner, bar) = if r.1 < s[2].1 {
                (vertex(along(c, r.0, 0.5)), r.1)
            } else {
                (vertex(along(c, s[2].0, 0.5)), s[2].1)
            };
            if inner.1 < bar {
                s[2] = inner;
            } else {
                for k in 1..3 {
                    s[k] = vertex(along(s[0].0, s[k].0, 0.5));
                }
            }
        }
    }
    s.sort_by(|a, b| a.1.total_cmp(&b.1));
    s[0]
}

/// Inverts a symmetric positive-definite matrix whose top-left k×k block (k ≤ 3) is in use,
/// by the adjugate. The block is first scaled to unit diagonal (and padded with the identity),
/// so that parameters of very different size (kappa against gamma) do not make a well-posed
/// problem look singular. None when singular.
fn invert(m: &[[f64; 3]; 3], k: usize) -> Option<[[f64; 3]; 3]> {
    // A zero or non-finite diagonal turns into NaN here and fails the determinant test.
    let scale: [f64; 3] = std::array::from_fn(|i| m[i][i].sqrt());
    let mut a = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for i in 0..k {
        for j in 0..k {
            a[i][j] = m[i][j] / (scale[i] * scale[j]);
        }
    }
    // Cofactor of (i, j) by cyclic indices, which carries the sign for a 3×3 matrix.
    let cof = |i: usize, j: usize| {
        let (i1, i2, j1, j2) = ((i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3);
        a[i1][j1] * a[i2][j2] - a[i1][j2] * a[i2][j1]
    };
    let det = (0..3).map(|j| a[0][j] * cof(0, j)).sum::<f64>();
    // With a unit diagonal det ≤ 1, and near 0 means the columns are nearly dependent.
    if det.is_nan() || det <= 1e-12 {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for i in 0..k {
        for j in 0..k {
            inv[i][j] = cof(j, i) / det / (scale[i] * scale[j]);
        }
    }
    Some(inv)
}

/// Fits the USL to (N, X) pairs in any order. Points with a non-finite value, N ≤ 0 or X < 0
/// are ignored. None for fewer than 3 usable points, fewer than 3 distinct N, or throughput
/// zero everywhere.
pub fn fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let data: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(n, x)| n.is_finite() && x.is_finite() && n > 0.0 && x >= 0.0)
        .collect();
    let mut ns: Vec<f64> = data.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if data.len() < 3 || ns.len() < 3 || data.iter().all(|p| p.1 == 0.0) {
        return None;
    }
    let obj = |p: [f64; 2]| profile(&data, p[0], p[1]).1;

    // Grid: sigma dense near 0 where real systems sit; kappa spans seven decades.
    let kappas: Vec<f64> = std::iter::once(0.0)
        .chain((0..36).map(|j| 10f64.powf(-7.0 + f64::from(j) / 5.0)))
        .collect();
    let mut best = ([0.0, 0.0], f64::INFINITY);
    for i in 0..=40 {
        let sigma = (f64::from(i) / 40.0).powi(2);
        for &kappa in &kappas {
            let rss = obj([sigma, kappa]);
            if rss < best.1 {
                best = ([sigma, kappa], rss);
            }
        }
    }
    // Restarting lets a simplex that collapsed early (often against a bound) recover.
    let (mut p, mut rss) = best;
    for _ in 0..6 {
        let step = [(0.1 * p[0]).max(1e-3), (0.1 * p[1]).max(1e-7)];
        let tol = [1e-12 + 1e-10 * p[0], 1e-16 + 1e-10 * p[1]];
        let (q, fq) = nelder_mead(&obj, p, step, tol);
        let improved = fq < rss * (1.0 - 1e-12);
        if fq <= rss {
            (p, rss) = (q, fq);
        }
        if !improved {
            break;
        }
    }
    // A parameter a hair off its bound is on it; snapping makes "on a bound" exact.
    let sum_x2: f64 = data.iter().map(|p| p.1 * p.1).sum();
    for (idx, bound) in [(0, 0.0), (0, 1.0), (1, 0.0), (1, 1.0)] {
        if (p[idx] - bound).abs() < 1e-6 {
            let mut q = p;
            q[idx] = bound;
            let fq = obj(q);
            if fq <= rss * (1.0 + 1e-9) + 1e-15 * sum_x2 {
                (p, rss) = (q, fq);
            }
        }
    }
    let [sigma, kappa] = p;
    let gamma = profile(&data, sigma, kappa).0;
    let mean = data.iter().map(|p| p.1).sum::<f64>() / data.len() as f64;
    let tss: f64 = data.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let r_squared = if tss > 0.0 {
        1.0 - rss / tss
    } else if rss <= 1e-15 * sum_x2 {
        1.0
    } else {
        0.0
    };
    let peak_n = (kappa > 0.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let mut fit = UslFit {
        sigma,
        kappa,
        gamma,
        r_squared,
        points: data.len(),
        peak_throughput: peak_n.map(|n| model(sigma, kappa, gamma, n)),
        peak_extrapolated: peak_n.is_some_and(|n| n > ns[ns.len() - 1] || n < ns[0]),
        peak_n,
        amdahl_limit: (sigma > 0.0).then(|| gamma / sigma),
        ..UslFit::default()
    };
    intervals(&data, rss, &mut fit);
    fit.warnings = warnings(&data, &ns, &fit);
    Some(fit)
}

/// Fills the 95% intervals of the parameters that are not on a bound.
fn intervals(data: &[(f64, f64)], rss: f64, fit: &mut UslFit) {
    if data.len() <= 3 {
        return;
    }
    let (sigma, kappa, gamma) = (fit.sigma, fit.kappa, fit.gamma);
    let est = [sigma, kappa, gamma];
    let upper = [1.0, 1.0, f64::INFINITY];
    // A parameter on a bound is held fixed there, so it leaves the Jacobian.
    let free: Vec<usize> = (0..3)
        .filter(|&p| est[p] > 0.0 && est[p] < upper[p])
        .collect();
    let k = free.len();
    let mut jtj = [[0.0; 3]; 3];
    for &(n, _) in data {
        let d = denominator(sigma, kappa, n);
        // dX/dsigma, dX/dkappa, dX/dgamma.
        let g = -gamma * n * (n - 1.0) / (d * d);
        let grad = [g, g * n, n / d];
        for a in 0..k {
            for b in 0..k {
                jtj[a][b] += grad[free[a]] * grad[free[b]];
            }
        }
    }
    let Some(inv) = invert(&jtj, k) else { return };
    let dof = (data.len() - 3) as f64;
    let t = StudentsT::new(0.0, 1.0, dof).map_or(f64::NAN, |d| d.inverse_cdf(0.975));
    let mut ci = [None; 3];
    for (a, &p) in free.iter().enumerate() {
        let half = t * (rss / dof * inv[a][a]).max(0.0).sqrt();
        if half.is_nan() {
            return;
        }
        ci[p] = Some([(est[p] - half).max(0.0), (est[p] + half).min(upper[p])]);
    }
    [fit.sigma_ci95, fit.kappa_ci95, fit.gamma_ci95] = ci;
}

fn warnings(data: &[(f64, f64)], ns: &[f64], fit: &UslFit) -> Vec<String> {
    let mut w = Vec::new();
    if data.len() < FEW_POINTS {
        w.push(format!(
            "fewer than {FEW_POINTS} points: the fit is indicative only"
        ));
    }
    for (name, value) in [("sigma", fit.sigma), ("kappa", fit.kappa)] {
        if value == 1.0 {
            w.push(format!(
                "{name} is on its bound 1: the model does not fit these data"
            ));
        }
    }
    // The USL's throughput per unit of concurrency, gamma/D(N), can only fall as N grows, so
    // any level that does clearly better per unit than the smallest one is beyond the model.
    let efficiency = |n: f64| {
        let xs: Vec<f64> = data.iter().filter(|p| p.0 == n).map(|p| p.1).collect();
        xs.iter().sum::<f64>() / xs.len() as f64 / n
    };
    let bar = SUPERLINEAR_MARGIN * efficiency(ns[0]);
    if ns.iter().any(|&n| efficiency(n) > bar) {
        w.push(SUPERLINEAR.to_string());
    }
    if fit.r_squared < POOR_R_SQUARED {
        w.push(format!("R² {:.2}: the model fits poorly", fit.r_squared));
    }
    if let (true, Some(n)) = (fit.peak_extrapolated, fit.peak_n) {
        let (lo, hi) = (ns[0], ns[ns.len() - 1]);
        w.push(format!(
            "the peak at N = {n:.1} is outside the measured {lo}–{hi}: extrapolated"
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(ns: &[f64], mut x: impl FnMut(f64) -> f64) -> Vec<(f64, f64)> {
        ns.iter().map(|&n| (n, x(n))).collect()
    }

    fn curve(sigma: f64, kappa: f64, gamma: f64, ns: &[f64]) -> Vec<(f64, f64)> {
        points(ns, |n| model(sigma, kappa, gamma, n))
    }

    fn one_to(n: u32) -> Vec<f64> {
        (1..=n).map(f64::from).collect()
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    fn contains(ci: Option<[f64; 2]>, v: f64) -> bool {
        ci.is_some_and(|[lo, hi]| lo <= v && v <= hi)
    }

    fn warns(f: &UslFit, text: &str) -> bool {
        f.warnings.iter().any(|w| w.contains(text))
    }

    #[test]
    fn exact_data_recovers_the_parameters() {
        let mut pts = curve(0.05, 0.002, 1000.0, &one_to(32));
        pts.reverse(); // order must not matter
        let f = fit(&pts).unwrap();
        assert!(close(f.sigma, 0.05, 1e-3), "{f:?}");
        assert!(close(f.kappa, 0.002, 1e-3), "{f:?}");
        assert!(close(f.gamma, 1000.0, 1e-3), "{f:?}");
        assert!(f.r_squared > 0.999_999 && f.warnings.is_empty(), "{f:?}");
        let n_star = (0.95f64 / 0.002).sqrt();
        assert!(close(f.peak_n.unwrap(), n_star, 1e-3) && !f.peak_extrapolated);
        let x_star = model(0.05, 0.002, 1000.0, n_star);
        assert!(close(f.peak_throughput.unwrap(), x_star, 1e-3));
        let x_10 = model(0.05, 0.002, 1000.0, 10.0);
        assert!(close(predict(&f, 10.0), x_10, 1e-4));
    }

    #[test]
    fn noisy_data_with_repeats_stays_close_and_intervals_contain_the_truth() {
        // A tiny LCG (Numerical Recipes' constants) gives ±2% deterministic noise; every level
        // is measured twice.
        let mut state: u64 = 42;
        let mut noise = || {
            state = (state * 1_664_525 + 1_013_904_223) % (1 << 32);
            (state as f64 / 2f64.powi(32) - 0.5) * 0.04
        };
        let ns: Vec<f64> = one_to(32).iter().flat_map(|&n| [n, n]).collect();
        let pts = points(&ns, |n| model(0.05, 0.002, 1000.0, n) * (1.0 + noise()));
        let f = fit(&pts).unwrap();
        assert!(close(f.gamma, 1000.0, 0.03), "{f:?}");
        assert!((f.sigma - 0.05).abs() < 0.01, "{f:?}");
        assert!(close(f.kappa, 0.002, 0.1), "{f:?}");
        let n_star = (0.95f64 / 0.002).sqrt();
        assert!(close(f.peak_n.unwrap(), n_star, 0.05), "{f:?}");
        assert!(contains(f.sigma_ci95, 0.05), "{f:?}");
        assert!(contains(f.kappa_ci95, 0.002), "{f:?}");
        assert!(contains(f.gamma_ci95, 1000.0), "{f:?}");
        assert!(f.r_squared > 0.9 && f.warnings.is_empty(), "{f:?}");
    }

    #[test]
    fn linear_data_has_no_contention_and_no_peak() {
        let f = fit(&curve(0.0, 0.0, 250.0, &one_to(16))).unwrap();
        assert_eq!((f.sigma, f.kappa), (0.0, 0.0));
        assert!(close(f.gamma, 250.0, 1e-9));
        assert_eq!((f.peak_n, f.amdahl_limit), (None, None));
        assert_eq!((f.sigma_ci95, f.kappa_ci95), (None, None));
        assert!(f.gamma_ci95.is_some());
    }

    #[test]
    fn amdahl_data_has_a_ceiling_but_no_peak() {
        let f = fit(&curve(0.1, 0.0, 500.0, &one_to(64))).unwrap();
        assert_eq!((f.kappa, f.peak_n), (0.0, None), "{f:?}");
        assert!(close(f.amdahl_limit.unwrap(), 5000.0, 1e-3), "{f:?}");
    }

    #[test]
    fn a_peak_beyond_the_measured_range_is_flagged() {
        let f = fit(&curve(0.02, 0.0005, 100.0, &one_to(8))).unwrap();
        let n_star = (0.98f64 / 0.0005).sqrt();
        assert!(close(f.peak_n.unwrap(), n_star, 1e-2), "{f:?}");
        assert!(f.peak_extrapolated && warns(&f, "extrapolated"));
    }

    #[test]
    fn super_linear_data_are_warned_about() {
        let f = fit(&points(&one_to(16), |n| 100.0 * n.powf(1.3))).unwrap();
        assert!(warns(&f, "super-linearly"), "{f:?}");
    }

    #[test]
    fn falling_throughput_puts_sigma_on_its_bound() {
        let f = fit(&points(&one_to(8), |n| 100.0 / (n * n))).unwrap();
        assert_eq!((f.sigma, f.sigma_ci95), (1.0, None), "{f:?}");
        assert!(warns(&f, "sigma is on its bound 1"));
    }

    #[test]
    fn five_points_are_indicative_only() {
        let f = fit(&curve(0.05, 0.002, 1000.0, &[1.0, 2.0, 4.0, 8.0, 16.0])).unwrap();
        assert!(f.warnings[0].starts_with("fewer than 6 points"), "{f:?}");
        assert!(f.sigma_ci95.is_some());
        let three = fit(&curve(0.05, 0.002, 1000.0, &[1.0, 4.0, 16.0])).unwrap();
        let cis = [three.sigma_ci95, three.kappa_ci95, three.gamma_ci95];
        assert_eq!(cis, [None; 3]);
    }

    #[test]
    fn degenerate_input_gives_none() {
        let nan = f64::NAN;
        assert_eq!(fit(&[]), None);
        assert_eq!(fit(&[(4.0, 10.0); 10]), None);
        assert_eq!(fit(&[(1.0, 1.0), (2.0, 2.0), (2.0, 2.1), (1.0, 0.9)]), None);
        assert_eq!(
            fit(&[(nan, 1.0), (2.0, nan), (3.0, f64::INFINITY), (-1.0, 1.0)]),
            None
        );
        assert_eq!(fit(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]), None);
        // Bad points are dropped, the rest still fit.
        let mut pts = curve(0.0, 0.0, 10.0, &one_to(6));
        pts.extend([(nan, 3.0), (0.0, 3.0), (2.0, -1.0)]);
        assert_eq!(fit(&pts).unwrap().points, 6);
    }
}
