//! Comparing two runs, figure by figure: is the candidate (run B) faster, slower or the same
//! as the baseline (run A)?
//!
//! Each question is one figure of one step (throughput, mean latency, p99 latency...) with the
//! samples of both runs: the repeats of the step, or, when a run has a single repeat, the
//! per-interval values within it.
//!
//! # Method
//!
//! - Everything is done on natural logarithms: a ratio and its inverse become symmetric
//!   (`+d` and `-d`) and the right skew of positive figures mostly goes away. Samples that are
//!   zero, negative or not finite are dropped (the note says how many).
//! - The ratio B/A is the ratio of geometric means, `exp(d)` with
//!   `d = mean(ln b) - mean(ln a)`. Its standard error is Welch's,
//!   `se = sqrt(var(ln a)/n_a + var(ln b)/n_b)` (variances not assumed equal), with
//!   Welch–Satterthwaite degrees of freedom `df`; the 95% interval is
//!   `exp(d ± t(0.975, df) · se)`.
//! - Only a difference beyond the noise band counts. With `e = ln(1 + noise)`,
//!   `p_up = P(T >= (d - e)/se)`, `p_down = P(T <= (d + e)/se)` (`T` Student's t with `df`
//!   degrees of freedom) and `p = min(1, 2·min(p_up, p_down))`. With `noise = 0` this is the
//!   ordinary two-sided Welch test.
//! - All tests of one call are one family: Holm–Bonferroni step-down adjusted p-values
//!   (monotone, capped at 1) keep the chance of any false `Faster`/`Slower` among them at or
//!   below `alpha`.
//! - Verdict: `Faster`/`Slower` when the adjusted p is below `alpha` and each side has at least
//!   3 samples, in the direction of `d` read through `higher_is_better`; else `Equivalent`
//!   when the 95% interval lies within `[1/(1+noise), 1+noise]`; else `Inconclusive`.
//! - Fewer than 2 samples on a side: no test, `Inconclusive`. Constant samples on both sides
//!   (deterministic figures such as counts): exact comparison, `Equivalent` when the ratio is
//!   within the band, else `Faster`/`Slower` with at least 3 samples per side, else
//!   `Inconclusive`; exact comparisons take no part in the Holm family (Welch tests with 2
//!   samples on a side do, although they cannot decide).
//!
//! Defaults: noise band 2% (`noise = 0.02`), `alpha = 0.05`; intervals are always 95%.
//!
//! Per-interval samples are autocorrelated and carry no run-to-run noise, so their interval
//! is too narrow and their test too eager; the note says so. `ratio` is 0 when a side has no
//! usable sample.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The outcome of one comparison. "Faster" means better: higher throughput or lower latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    Equivalent,
    #[default]
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// Where the samples come from: independent repeats, or intervals within a single run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SampleKind {
    #[default]
    Repeats,
    Intervals,
}

impl SampleKind {
    fn label(self) -> &'static str {
        match self {
            SampleKind::Repeats => "repeats",
            SampleKind::Intervals => "intervals",
        }
    }
}

/// One figure of one step: baseline samples `a`, candidate samples `b`.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub higher_is_better: bool,
    pub kind: SampleKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Comparison {
    /// B/A, ratio of geometric means (0 when a side has no usable sample).
    pub ratio: f64,
    pub ci95: Option<[f64; 2]>,
    /// Arithmetic means of the usable samples, for display.
    pub mean_a: f64,
    pub mean_b: f64,
    /// Usable (positive, finite) samples per side.
    pub n_a: usize,
    pub n_b: usize,
    pub p_value: Option<f64>,
    /// Holm-adjusted over the family of the call.
    pub p_adjusted: Option<f64>,
    pub test: String,
    pub verdict: Verdict,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Relative noise band: differences within ±noise do not count (0.02 = 2%).
    pub noise: f64,
    /// Family-wise error rate for Faster/Slower.
    pub alpha: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            noise: 0.02,
            alpha: 0.05,
        }
    }
}

const NOTE_FEW: &str = "the test cannot reach significance with fewer than 3 samples per side; \
                        use --repeat 5 or more";
const NOTE_INTERVALS: &str =
    "samples are intervals within one run: run-to-run noise is not included";

/// 97.5% quantile of the standard normal, the limit of `t975` as `df` grows.
const Z975: f64 = 1.959_963_984_540_054;

/// Slack for comparisons against the band edge, so that e.g. 102 vs 100 with a 2% band is
/// inside despite rounding in `ln`.
const EDGE_TOL: f64 = 1e-12;

/// Student's t two-sided 95% quantile (the 0.975 quantile) for `df` degrees of freedom;
/// NaN for `df` NaN or not positive.
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    // statrs inverts through the incomplete beta, which has no infinite limit; past 1e7
    // degrees of freedom the quantile is within 3e-7 of the normal one.
    if df > 1e7 {
        return Z975;
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

/// Holm–Bonferroni step-down adjusted p-values, in input order: the i-th smallest p is
/// multiplied by `m - i + 1`, then made non-decreasing in that order and capped at 1.
/// NaN counts as 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let clean = |x: f64| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) };
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean(p[i]).total_cmp(&clean(p[j])));
    let mut adjusted = vec![1.0; m];
    // Monotone step-down: a hypothesis is rejected only if all smaller ones are, so its
    // adjusted p is never below theirs.
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * clean(p[i])).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Usable samples of one side, summarised on the log scale.
struct Side {
    n: usize,
    dropped: usize,
    mean: f64,
    log_mean: f64,
    /// Sample variance of the logs; exactly 0 when all samples are equal or n < 2.
    log_var: f64,
    constant: bool,
}

fn side(xs: &[f64]) -> Side {
    let kept: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let n = kept.len();
    let mut s = Side {
        n,
        dropped: xs.len() - n,
        mean: 0.0,
        log_mean: 0.0,
        log_var: 0.0,
        constant: true,
    };
    if n == 0 {
        return s;
    }
    let nf = n as f64;
    // Dividing first keeps the sum finite for values near f64::MAX.
    s.mean = kept.iter().map(|x| x / nf).sum();
    // Equal samples are detected exactly, not through a rounded variance: deterministic
    // figures (counts) must give d = 0 and se = 0, not 1e-17 noise that a t test would inflate.
    s.constant = kept.iter().all(|&x| x == kept[0]);
    if s.constant {
        s.log_mean = kept[0].ln();
        return s;
    }
    let logs: Vec<f64> = kept.iter().map(|x| x.ln()).collect();
    s.log_mean = logs.iter().sum::<f64>() / nf;
    s.log_var = logs.iter().map(|l| (l - s.log_mean).powi(2)).sum::<f64>() / (nf - 1.0);
    s
}

/// Verdict for a real difference in direction `up` (B's figure higher than A's).
fn direction(up: bool, higher_is_better: bool) -> Verdict {
    if up == higher_is_better {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// A Welch test awaiting the family's Holm adjustment.
struct Pending {
    index: usize,
    p: f64,
    up: bool,
    /// 95% interval of d on the log scale.
    lo: f64,
    hi: f64,
    decisive: bool,
}

/// Everything that does not depend on the rest of the family.
fn assess(index: usize, q: &Question, e: f64) -> (Comparison, Option<Pending>) {
    let (a, b) = (side(q.a), side(q.b));
    let mut c = Comparison {
        mean_a: a.mean,
        mean_b: b.mean,
        n_a: a.n,
        n_b: b.n,
        test: "none".to_string(),
        ..Comparison::default()
    };
    let mut notes: Vec<String> = Vec::new();
    for (run, s) in [("A", &a), ("B", &b)] {
        if s.dropped > 0 {
            notes.push(format!(
                "{} zero, negative or non-finite sample(s) of run {run} ignored",
                s.dropped
            ));
        }
    }
    let pending = if a.n == 0 || b.n == 0 {
        let run = if a.n == 0 { "A" } else { "B" };
        notes.push(format!("run {run} has no usable sample"));
        None
    } else {
        let d = b.log_mean - a.log_mean;
        c.ratio = d.exp();
        let decisive = a.n >= 3 && b.n >= 3;
        if a.n < 2 || b.n < 2 {
            notes.push(format!(
                "too few samples (n={}); repeat with --repeat 5",
                a.n.min(b.n)
            ));
            None
        } else {
            if !decisive {
                notes.push(NOTE_FEW.to_string());
            }
            if a.constant && b.constant {
                c.test = format!("exact (constant values), {}", q.kind.label());
                c.ci95 = Some([c.ratio, c.ratio]);
                c.verdict = if d.abs() <= e + EDGE_TOL {
                    Verdict::Equivalent
                } else if decisive {
                    direction(d > 0.0, q.higher_is_better)
                } else {
                    Verdict::Inconclusive
                };
                None
            } else {
                let (sa, sb) = (a.log_var / a.n as f64, b.log_var / b.n as f64);
                let se = (sa + sb).sqrt();
                let mut df =
                    (sa + sb).powi(2) / (sa * sa / (a.n - 1) as f64 + sb * sb / (b.n - 1) as f64);
                if df.is_nan() || df <= 0.0 {
                    // Only reachable through underflow of absurdly small variances.
                    df = (a.n + b.n - 2) as f64;
                }
                let t = StudentsT::new(0.0, 1.0, df).expect("df is positive");
                let half = t975(df) * se;
                c.ci95 = Some([(d - half).exp(), (d + half).exp()]);
                let p_up = t.sf((d - e) / se);
                let p_down = t.cdf((d + e) / se);
                let p = (2.0 * p_up.min(p_down)).min(1.0);
                c.p_value = Some(p);
                c.test = format!("Welch t on log values, {}", q.kind.label());
                Some(Pending {
                    index,
                    p,
                    up: p_up < p_down,
                    lo: d - half,
                    hi: d + half,
                    decisive,
                })
            }
        }
    };
    if q.kind == SampleKind::Intervals {
        notes.push(NOTE_INTERVALS.to_string());
    }
    if !notes.is_empty() {
        c.note = Some(notes.join("; "));
    }
    (c, pending)
}

/// Compares every question as one family (Holm over all of its tests); output in input order.
pub fn compare_all(questions: &[Question], settings: &Settings) -> Vec<Comparison> {
    // A negative or NaN band means no band.
    let noise = if settings.noise > 0.0 {
        settings.noise
    } else {
        0.0
    };
    let e = noise.ln_1p();
    let mut out = Vec::with_capacity(questions.len());
    let mut pending = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let (c, p) = assess(i, q, e);
        out.push(c);
        pending.extend(p);
    }
    let adjusted = holm(&pending.iter().map(|p| p.p).collect::<Vec<_>>());
    for (p, adj) in pending.iter().zip(adjusted) {
        let c = &mut out[p.index];
        c.p_adjusted = Some(adj);
        c.verdict = if p.decisive && adj < settings.alpha {
            direction(p.up, questions[p.index].higher_is_better)
        } else if p.lo >= -e - EDGE_TOL && p.hi <= e + EDGE_TOL {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64: small, seeded, good enough for simulations.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in (0, 1), never 0, so that ln is finite.
        fn uniform(&mut self) -> f64 {
            ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        /// Standard normal by Box–Muller (the second value is discarded for simplicity).
        fn normal(&mut self) -> f64 {
            let (u1, u2) = (self.uniform(), self.uniform());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        }
        fn lognormal(&mut self, median: f64, sd: f64, n: usize) -> Vec<f64> {
            (0..n)
                .map(|_| median * (sd * self.normal()).exp())
                .collect()
        }
    }

    fn q<'a>(a: &'a [f64], b: &'a [f64], higher_is_better: bool) -> Question<'a> {
        Question {
            a,
            b,
            higher_is_better,
            kind: SampleKind::Repeats,
        }
    }

    /// One simulated family: question i has true ratio `ratios[i]`.
    fn family(
        rng: &mut Rng,
        ratios: &[f64],
        n: usize,
        sd: f64,
        hib: bool,
        s: &Settings,
    ) -> Vec<Comparison> {
        let data: Vec<(Vec<f64>, Vec<f64>)> = ratios
            .iter()
            .map(|&r| {
                (
                    rng.lognormal(1000.0, sd, n),
                    rng.lognormal(1000.0 * r, sd, n),
                )
            })
            .collect();
        let qs: Vec<Question> = data.iter().map(|(a, b)| q(a, b, hib)).collect();
        compare_all(&qs, s)
    }

    fn decided(c: &Comparison) -> bool {
        matches!(c.verdict, Verdict::Faster | Verdict::Slower)
    }

    #[test]
    fn a_against_a_controls_family_wise_error() {
        let mut rng = Rng(1);
        let s = Settings::default();
        let (families, size) = (2000, 20);
        let (mut bad_families, mut calm) = (0, 0);
        for _ in 0..families {
            let f = family(&mut rng, &[1.0; 20], 5, 0.03, true, &s);
            bad_families += usize::from(f.iter().any(decided));
            calm += f.iter().filter(|c| !decided(c)).count();
        }
        let fwer = bad_families as f64 / families as f64;
        let calm = calm as f64 / (families * size) as f64;
        println!("null, 2% band: family-wise error {fwer:.4}, calm {calm:.4}");
        assert!(fwer <= 0.05 && calm >= 0.95);
    }

    #[test]
    fn without_band_the_test_is_calibrated() {
        // noise = 0 is the plain Welch test: ~5% false alarms per test, Holm keeps the family
        // near or below 5% (the slack covers simulation error, sd ~0.5%).
        let mut rng = Rng(2);
        let s = Settings {
            noise: 0.0,
            ..Settings::default()
        };
        let mut single = 0;
        for _ in 0..4000 {
            single += usize::from(decided(&family(&mut rng, &[1.0], 5, 0.03, true, &s)[0]));
        }
        let mut bad = 0;
        for _ in 0..1000 {
            bad += usize::from(
                family(&mut rng, &[1.0; 20], 5, 0.03, true, &s)
                    .iter()
                    .any(decided),
            );
        }
        let (single, fwer) = (single as f64 / 4000.0, bad as f64 / 1000.0);
        println!("null, no band: per-test error {single:.4}, family-wise {fwer:.4}");
        assert!((0.035..=0.065).contains(&single), "{single}");
        assert!(fwer <= 0.07, "{fwer}");
    }

    #[test]
    fn a_real_ten_percent_is_found_inside_a_family() {
        // The band test's true power here is about 96% (20,000 simulations), so 500 runs
        // pass the 95% bar with little margin: changing the seed may tip it.
        let mut rng = Rng(3);
        let s = Settings::default();
        let mut ratios = [1.0; 20];
        ratios[7] = 1.10;
        let (mut faster, mut slower, mut false_alarms) = (0, 0, 0);
        for _ in 0..500 {
            let f = family(&mut rng, &ratios, 10, 0.03, true, &s);
            faster += usize::from(f[7].verdict == Verdict::Faster);
            false_alarms += f
                .iter()
                .enumerate()
                .filter(|(i, c)| *i != 7 && decided(c))
                .count();
            let f = family(&mut rng, &ratios, 10, 0.03, false, &s);
            slower += usize::from(f[7].verdict == Verdict::Slower);
        }
        println!(
            "10% effect: faster {faster}/500, slower {slower}/500, null alarms {false_alarms}/9500"
        );
        assert!(faster >= 475 && slower >= 475);
    }

    #[test]
    fn a_half_percent_is_equivalent() {
        let mut rng = Rng(4);
        let s = Settings::default();
        let eq = (0..500)
            .filter(|_| {
                family(&mut rng, &[1.005], 30, 0.01, true, &s)[0].verdict == Verdict::Equivalent
            })
            .count();
        println!("0.5% effect, n=30, 1% sd: equivalent {eq}/500");
        assert!(eq >= 400);
    }

    #[test]
    fn holm_matches_hand_computation() {
        // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> raised to 0.06.
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (x, w) in adj.iter().zip(want) {
            assert!((x - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.5, 0.6]), vec![1.0, 1.0]);
        assert_eq!(holm(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn t975_matches_tables() {
        for (df, want, tol) in [
            (1.0, 12.706, 1e-3),
            (4.0, 2.776, 1e-3),
            (30.0, 2.042, 1e-3),
            (60.0, 2.000, 1e-3),
            (1000.0, 1.962, 1e-3),
            (1e9, Z975, 1e-12),
            (f64::INFINITY, Z975, 1e-12),
        ] {
            assert!((t975(df) - want).abs() < tol, "df {df}: {}", t975(df));
        }
        assert!(t975(0.0).is_nan() && t975(f64::NAN).is_nan());
    }

    /// A family of one, default settings.
    fn one(a: &[f64], b: &[f64], hib: bool) -> Comparison {
        compare_all(&[q(a, b, hib)], &Settings::default()).remove(0)
    }

    fn note(c: &Comparison) -> &str {
        c.note.as_deref().unwrap_or("")
    }

    #[test]
    fn edge_cases_do_not_panic() {
        let c = one(&[100.0], &[120.0], true);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!((c.ratio - 1.2).abs() < 1e-12);
        assert!(note(&c).contains("too few samples (n=1)"));
        let c = one(&[], &[1.0, 2.0], true);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(note(&c).contains("run A has no usable sample"));
        let junk = [0.0, -1.0, f64::NAN, f64::INFINITY];
        let c = one(&junk, &junk, true);
        assert_eq!((c.verdict, c.n_a, c.n_b), (Verdict::Inconclusive, 0, 0));
        let c = one(
            &[10.0, f64::NAN, 11.0, 0.0, 12.0],
            &[10.0, 11.0, 12.0],
            true,
        );
        assert_eq!(c.n_a, 3);
        assert!(note(&c).contains("2 zero, negative"));
        assert!(compare_all(&[], &Settings::default()).is_empty());
    }

    #[test]
    fn constant_samples_compare_exactly() {
        let (same, more) = ([7.0; 4], [7.7; 4]);
        let c = one(&same, &same, true);
        assert_eq!(
            (c.verdict, c.ratio, c.p_value),
            (Verdict::Equivalent, 1.0, None)
        );
        assert_eq!(one(&same, &more, true).verdict, Verdict::Faster);
        assert_eq!(one(&same, &more, false).verdict, Verdict::Slower);
        let c = one(&same[..2], &more[..2], true);
        assert_eq!((c.verdict, note(&c)), (Verdict::Inconclusive, NOTE_FEW));
        // 2% exactly is still inside a 2% band.
        assert_eq!(
            one(&[100.0; 3], &[102.0; 3], true).verdict,
            Verdict::Equivalent
        );
    }

    #[test]
    fn intervals_and_small_samples_are_flagged() {
        let s = Settings::default();
        let (a, b) = ([100.0, 101.0, 99.0, 100.5], [130.0, 131.0, 129.0, 130.5]);
        let c = &compare_all(
            &[Question {
                a: &a,
                b: &b,
                higher_is_better: false,
                kind: SampleKind::Intervals,
            }],
            &s,
        )[0];
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.test, "Welch t on log values, intervals");
        assert_eq!(c.note.as_deref(), Some(NOTE_INTERVALS));
        assert!(c.p_adjusted.unwrap() >= c.p_value.unwrap());
        let [lo, hi] = c.ci95.unwrap();
        assert!(lo < c.ratio && c.ratio < hi && lo > 1.2);

        // n = 2: a clear 30% difference still cannot be called.
        let c = one(&a[..2], &b[..2], true);
        assert_eq!((c.verdict, note(&c)), (Verdict::Inconclusive, NOTE_FEW));
        assert_eq!(Verdict::default().as_str(), "inconclusive");
    }
}
