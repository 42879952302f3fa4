//! sysbench's random numbers: `rand.default` (the id and k of every statement) in each of
//! `--rand-type`'s distributions, `rand.uniform` (which table), the digit templates of c and
//! pad, and `rand.unique` (oltp_insert's ids without auto_inc).
//!
//! The distributions are sysbench's definitions (`sb_rand.c`), over an inclusive range
//! `[a, b]`, with perflab's own generator underneath ([`Rng`], seeded from `--seed`):
//!
//! - **uniform**: every value of `[a, b]` equally likely.
//! - **gaussian**: `a + (b - a + 1) · mean of --rand-spec-iter uniforms` (a bell, 12 by
//!   default).
//! - **special** (sysbench 1.0.20's default): with `t = b - a` and `u` uniform in `[0, 1)`,
//!   if `u · t · 100 / (100 - res) < t` the value is `a + t · mean of iter uniforms` (a bell);
//!   otherwise `u` (the same draw) is mapped onto the `pct`% of the range centred on its
//!   middle: `a + u · (t · pct / 100 + 1) + t / 2 - t · pct / 200`. With the defaults (iter
//!   12, pct 1, res 75) three draws in four fall in a band 1% wide at mid-range.
//! - **pareto**: `a + (b - a + 1) · u^p` with `p = ln h / ln(1 - h)` (`--rand-pareto-h`, 0.2):
//!   the hot values at the low end.
//! - **zipfian** (sysbench after 1.0.20, whose default exponent is 0.8): value `a + k - 1`
//!   with probability proportional to `k^-exp`, drawn by rejection-inversion
//!   ([`crate::workload::distribution`]'s Zipf, unscrambled so that `a` is the hottest).
//!   An exponent of 0 is uniform.
//!
//! sysbench draws with libc's `random()` seeded from the clock unless `--rand-seed` is
//! given; perflab's draws repeat from `--seed`, so the values differ from sysbench's but
//! follow the same laws (the tests check the shapes).

use crate::workload::distribution::{BlockPicker, Distribution};
use crate::workload::rng::Rng;
use serde::Serialize;
use std::sync::atomic::{AtomicU32, Ordering};

/// `--rand-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl RandType {
    pub const NAMES: &'static str = "uniform, gaussian, special, pareto or zipfian";

    pub fn parse(text: &str) -> Option<RandType> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return None,
        })
    }
}

/// `rand.default`'s distribution and its parameters, as the run's options give them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RandSpec {
    #[serde(rename = "type")]
    pub kind: RandType,
    /// `--rand-spec-iter`: uniforms averaged by gaussian and special.
    pub iter: u32,
    /// `--rand-spec-pct`: the share of the range (percent) special's hot values fill.
    pub pct: u32,
    /// `--rand-spec-res`: the share of draws (percent) that go to those hot values.
    pub res: u32,
    /// `--rand-pareto-h`.
    pub pareto_h: f64,
    /// `--rand-zipfian-exp`.
    pub zipfian_exp: f64,
}

impl Default for RandSpec {
    /// sysbench 1.0.20's defaults.
    fn default() -> Self {
        RandSpec {
            kind: RandType::Special,
            iter: 12,
            pct: 1,
            res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        }
    }
}

impl RandSpec {
    /// The parameters checked as sysbench would use them, or why not (one line).
    pub fn validate(&self) -> Result<(), String> {
        if self.iter == 0 && matches!(self.kind, RandType::Gaussian | RandType::Special) {
            return Err("--rand-spec-iter must be at least 1".into());
        }
        if self.pct > 100 || self.res > 100 {
            return Err("--rand-spec-pct and --rand-spec-res are percentages, 0 to 100".into());
        }
        if !(self.pareto_h > 0.0 && self.pareto_h < 1.0) {
            return Err("--rand-pareto-h must be between 0 and 1 (exclusive)".into());
        }
        if !(self.zipfian_exp >= 0.0 && self.zipfian_exp.is_finite()) {
            return Err("--rand-zipfian-exp must be 0 or more".into());
        }
        Ok(())
    }
}

/// One client's `rand.default`: the spec with what its draws precompute.
#[derive(Debug, Clone)]
pub struct Dist {
    spec: RandSpec,
    /// pareto's power `ln h / ln(1 - h)`.
    power: f64,
    /// zipfian's sampler for the last range size drawn from (ranges are fixed per client,
    /// so it is built once).
    zipf: Option<(u64, BlockPicker)>,
}

impl Dist {
    pub fn new(spec: &RandSpec) -> Dist {
        Dist {
            spec: spec.clone(),
            power: spec.pareto_h.ln() / (-spec.pareto_h).ln_1p(),
            zipf: None,
        }
    }

    /// `rand.default(a, b)`: a value in `[a, b]` (`a <= b`).
    pub fn draw(&mut self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let (a, b) = (a.min(b), a.max(b));
        let s = &self.spec;
        match s.kind {
            RandType::Uniform => uniform(rng, a, b),
            RandType::Gaussian => {
                let t = f64::from(b - a) + 1.0;
                let sum: f64 = (0..s.iter).map(|_| rng.next_f64() * t).sum();
                clamp(a, b, sum / f64::from(s.iter))
            }
            RandType::Special => {
                let t = f64::from(b - a);
                let u = rng.next_f64();
                // A draw below t (of a range widened by 100 / (100 - res)) is a bell; the
                // rest are the hot values. res = 100 widens it without end: all hot.
                let widened = match s.res {
                    100 => f64::INFINITY,
                    r => t * 100.0 / f64::from(100 - r),
                };
                if u * widened < t {
                    let sum: f64 = (0..s.iter).map(|_| rng.next_f64()).sum();
                    return clamp(a, b, sum * t / f64::from(s.iter));
                }
                let d = t * f64::from(s.pct) / 100.0;
                clamp(a, b, u * (d + 1.0) + t / 2.0 - t * f64::from(s.pct) / 200.0)
            }
            RandType::Pareto => {
                let t = f64::from(b - a) + 1.0;
                clamp(a, b, t * rng.next_f64().powf(self.power))
            }
            RandType::Zipfian if s.zipfian_exp == 0.0 => uniform(rng, a, b),
            RandType::Zipfian => {
                let n = u64::from(b - a) + 1;
                let theta = s.zipfian_exp;
                let picker = match &mut self.zipf {
                    Some((size, p)) if *size == n => p,
                    slot => {
                        let p = BlockPicker::new(&Distribution::Zipf { theta }, n, false)
                            .unwrap_or_else(|_| {
                                BlockPicker::new(&Distribution::Uniform, n, false)
                                    .expect("a uniform picker over at least one value")
                            });
                        &mut slot.insert((n, p)).1
                    }
                };
                // Rank 0 is the hottest, and stays `a` unscrambled, as sysbench's k = 1.
                a + picker.next(rng) as u32
            }
        }
    }
}

/// `a` plus an offset computed in floating point, kept inside `[a, b]` (the float can land
/// on `b - a + 1` at the very top).
fn clamp(a: u32, b: u32, offset: f64) -> u32 {
    let v = u64::from(a) + offset.max(0.0) as u64;
    v.min(u64::from(b)) as u32
}

/// `rand.uniform(a, b)`: every value of `[a, b]` equally likely.
#[inline]
pub fn uniform(rng: &mut Rng, a: u32, b: u32) -> u32 {
    a + rng.below(u64::from(b - a) + 1) as u32
}

/// Appends `groups` groups of eleven random digits joined by `-` (sysbench's
/// `###########-...` templates): 10 groups for c (119 characters), 5 for pad (59).
pub fn digit_groups(rng: &mut Rng, groups: usize, out: &mut String) {
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        for _ in 0..11 {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
}

/// Groups in c's template.
pub const C_GROUPS: usize = 10;
/// Groups in pad's template.
pub const PAD_GROUPS: usize = 5;

/// `rand.unique()`: 32-bit values that do not repeat (until 2^32 draws), shared by every
/// client of a run, from a permutation of the 32-bit integers through the prime
/// 4294967291 (the quadratic-residue permutation sysbench uses, as Jeff Preshing describes
/// it). oltp_insert without auto_inc takes its ids from it.
#[derive(Debug)]
pub struct Unique {
    index: AtomicU32,
    offset: u32,
}

/// The largest prime below 2^32.
const PRIME: u32 = 4_294_967_291;

/// x ↦ x² mod p on the lower half and p - x² mod p on the upper: a permutation of
/// `0..p`; the five values at or above p map to themselves.
fn permute(x: u32) -> u32 {
    if x >= PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

impl Unique {
    /// A sequence started from `seed` (sysbench takes two values of `random()`).
    pub fn new(seed: u64) -> Unique {
        let (index, offset) = (seed as u32, (seed >> 32) as u32);
        Unique {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    pub fn next(&self) -> u32 {
        let index = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(index).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: RandType) -> RandSpec {
        RandSpec {
            kind,
            ..RandSpec::default()
        }
    }

    fn histogram(kind: RandType, a: u32, b: u32, n: usize) -> Vec<u64> {
        let mut d = Dist::new(&spec(kind));
        let mut rng = Rng::new(7);
        let mut h = vec![0u64; (b - a + 1) as usize];
        for _ in 0..n {
            let v = d.draw(&mut rng, a, b);
            assert!((a..=b).contains(&v), "{kind:?} drew {v} outside [{a}, {b}]");
            h[(v - a) as usize] += 1;
        }
        h
    }

    #[test]
    fn every_distribution_stays_in_its_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
            RandType::Zipfian,
        ] {
            histogram(kind, 1, 10, 20_000);
            histogram(kind, 5, 5, 100);
            let mut d = Dist::new(&spec(kind));
            let mut rng = Rng::new(1);
            for _ in 0..1000 {
                let v = d.draw(&mut rng, 1, u32::MAX);
                assert!(v >= 1);
            }
        }
    }

    #[test]
    fn special_sends_three_draws_in_four_to_a_band_at_mid_range() {
        // 10,000 values: the band is 1% of the range (about 100 values) around 5,000.
        let h = histogram(RandType::Special, 1, 10_000, 200_000);
        let band: u64 = h[4_940..5_060].iter().sum();
        let share = band as f64 / 200_000.0;
        // 75% land in the band, plus the bell's own share of those 120 values.
        assert!((0.75..0.80).contains(&share), "{share}");
    }

    #[test]
    fn gaussian_is_a_bell_and_uniform_is_flat() {
        let h = histogram(RandType::Gaussian, 1, 100, 100_000);
        let middle: u64 = h[40..60].iter().sum();
        let edges: u64 = h[..10].iter().chain(&h[90..]).sum();
        assert!(middle > 20 * edges.max(1), "{middle} {edges}");
        let h = histogram(RandType::Uniform, 1, 10, 100_000);
        assert!(h.iter().all(|&c| (9_000..11_000).contains(&c)), "{h:?}");
    }

    #[test]
    fn pareto_and_zipfian_are_hottest_at_the_low_end() {
        let h = histogram(RandType::Pareto, 1, 100, 100_000);
        // h = 0.2: 80% of the draws in the first 20% of the values.
        let low: u64 = h[..20].iter().sum();
        assert!((0.77..0.83).contains(&(low as f64 / 100_000.0)), "{low}");
        let h = histogram(RandType::Zipfian, 1, 100, 100_000);
        assert!(h[0] > h[1] && h[1] > h[9] && h[9] > h[99], "{h:?}");
        // k^-0.8: the first value drawn about 2^0.8 times as often as the second.
        let ratio = h[0] as f64 / h[1] as f64;
        assert!((1.6..1.9).contains(&ratio), "{ratio}");
    }

    #[test]
    fn digits_fill_sysbenchs_templates() {
        let mut rng = Rng::new(3);
        let mut c = String::new();
        digit_groups(&mut rng, C_GROUPS, &mut c);
        assert_eq!(c.len(), 119);
        let mut pad = String::new();
        digit_groups(&mut rng, PAD_GROUPS, &mut pad);
        assert_eq!(pad.len(), 59);
        for (i, ch) in c.chars().enumerate() {
            match i % 12 {
                11 => assert_eq!(ch, '-'),
                _ => assert!(ch.is_ascii_digit()),
            }
        }
    }

    #[test]
    fn unique_values_do_not_repeat() {
        let u = Unique::new(12345);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(u.next()));
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let bad = RandSpec {
            pareto_h: 1.0,
            ..RandSpec::default()
        };
        assert!(bad.validate().unwrap_err().contains("--rand-pareto-h"));
        let bad = RandSpec {
            pct: 101,
            ..RandSpec::default()
        };
        assert!(bad.validate().is_err());
        assert!(RandSpec::default().validate().is_ok());
    }
}
