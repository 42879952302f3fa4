//! Which block an I/O touches: uniform, Zipf, Pareto and "hot set" access distributions.
//! io draws its random offsets from it and kv its keys (a key is a block of the key space),
//! so it sits beside the kinds rather than in one of them.
//!
//! Every distribution first draws a *rank* in `0..blocks`, where rank 0 is the hottest block,
//! and then maps the rank to a block (see "Scrambling" below).
//!
//! # Uniform
//!
//! Every block equally likely: Lemire's unbiased multiply-and-reject ([`Rng::below`]).
//!
//! # Zipf (`zipf:THETA`, any THETA > 0, including 1)
//!
//! Rank `k - 1` has probability proportional to `k^-θ` for `k = 1..=blocks`. fio computes the
//! normalising constant `ζ(N, θ)` with a loop over all `N` blocks at start-up and cannot take
//! `θ = 1`; here the draw uses *rejection-inversion* (W. Hörmann and G. Derflinger,
//! "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
//! 6(3), 1996), which needs no normalising constant, so set-up and each draw are O(1) for any
//! number of blocks and any θ > 0. With `h(x) = x^-θ` and its integral
//! `H(x) = (x^(1-θ) - 1) / (1 - θ)` (`ln x` when θ = 1):
//!
//! 1. draw `u` uniform in `(H(1.5) - h(1), H(N + 0.5)]`;
//! 2. invert: `x = H⁻¹(u)`, `k = round(x)` clamped to `1..=N`;
//! 3. accept `k` if `k - x <= s`, where `s = 2 - H⁻¹(H(2.5) - h(2))` (the squeeze of the
//!    paper, which accepts most draws without evaluating `H` again), or if
//!    `u >= H(k + 0.5) - h(k)`; otherwise draw again.
//!
//! The area under the hat for `k` is exactly `h(k)` and lies inside `[k - 0.5, k + 0.5]`, so an
//! accepted `k` has probability proportional to `h(k)`. The expected number of rounds is close
//! to 1. `H` and `H⁻¹` are evaluated as `expm1(t)/t · ln x` and `exp(ln_1p(t)/t · y)` with
//! `t = (1 - θ)·ln x` resp. `t = (1 - θ)·y`, which stay accurate through θ = 1 (where `t → 0`).
//!
//! # Pareto (`pareto:H`, 0 < H < 1)
//!
//! fio's definition (`lib/zipf.c`, `pareto_next`): with `u` uniform in `[0, 1)` and the power
//! `p = ln H / ln(1 - H)`, the draw is `n = u^p` scaled to the blocks, hottest at the top. Since
//! `u^p >= H` exactly when `u >= H^(1/p) = 1 - H`, the top `1 - H` of the blocks receive a share
//! `H` of the accesses: `pareto:0.9` sends 90% of I/Os to 10% of the blocks, `pareto:0.8` is the
//! 80/20 rule. More generally the hottest share `f` of the blocks receives `1 - (1 - f)^(1/p)`
//! of the accesses (for `pareto:0.9`, the hottest 1% get about 20%). fio scales
//! by `blocks - 1`, which leaves the last block almost never drawn; this scales by `blocks`
//! (`n = floor(blocks · u^p)`, clamped) so that every block can be drawn. The rank is
//! `blocks - 1 - n`.
//!
//! # Hot set (`hot:ACCESS/DATA`)
//!
//! `ACCESS`% of the draws are uniform over the first `DATA`% of the ranks, the rest uniform
//! over the others. The hot set holds `round(blocks · DATA / 100)` blocks, kept between 1 and
//! `blocks - 1` so that both sets exist whenever there are two blocks.
//!
//! # fio's own (`normal:DEV`, `zoned:...`, `zoned_abs:...`, and a center)
//!
//! A job file's `random_distribution` means what fio means: `normal` is fio's bell
//! ([`gauss`]), `zoned` and `zoned_abs` its zones ([`zones`]), and the optional center of
//! zipf, pareto and normal (`zipf:1.2:0.25`) is fio's `rand_off`: after spreading, every
//! block moves by that share of the region, wrapping (for normal, by the center less one
//! half: fio's bell sits in the middle by default). The spreading maps rank 0 to block 0, so
//! zipf's hottest block lands exactly at the center, as in fio.
//!
//! # Scrambling
//!
//! Without scrambling rank `r` is block `r`: the hot blocks sit together at the start of the
//! file, which a device's caches and read-ahead favour. fio spreads them by hashing the rank by
//! default for zipf and pareto; a hash modulo `blocks` is not one-to-one, so some blocks would
//! get two ranks' traffic and others none, changing the distribution. Here the rank is mapped
//! through the permutation `r ↦ r·a mod blocks`, a bijection of `0..blocks` because `a` is
//! coprime with `blocks` (it has an inverse modulo `blocks`). `a` is the first such number from
//! `blocks / φ` up (φ the golden ratio): successive ranks then land far apart and fill the file
//! evenly (the three-distance theorem for `r·α mod 1`). Scrambling a uniform draw changes
//! nothing, so it is skipped there.
//!
//! # Cost
//!
//! Measured on the development machine (2-core AMD EPYC VM, release build with
//! `target-cpu=native`, 2·10⁷ draws in a loop, scrambled, over 2²⁰ and over 2³⁴ + 7 blocks,
//! including the xoshiro256** draws of about 0.6 ns each), per [`BlockPicker::next`]:
//! uniform 1.5 ns, hot 3 ns, pareto 11-13 ns (one `powf`), zipf 10 ns at θ = 1 and 14-16 ns
//! at θ = 0.8 and 1.2 (one `ln` and one `exp`: the squeeze accepts about 98% of the first
//! rounds). Scrambling adds 1-2 ns: up to 2³² blocks the modulo is a Barrett reduction (two
//! multiplications) instead of a division, which had cost 5-10 ns; past that it is a 128-bit
//! remainder.

mod gauss;
mod zones;

use crate::workload::rng::Rng;
use gauss::Gauss;
use std::fmt;
use std::str::FromStr;
use zones::ZoneTable;

/// The forms [`Distribution::from_str`] accepts, for error messages.
const FORMS: &str = "expected uniform, zipf:THETA (THETA > 0, e.g. zipf:1.2), \
                     pareto:H (0 < H < 1, e.g. pareto:0.9) or hot:ACCESS/DATA (percentages \
                     strictly between 0 and 100, e.g. hot:90/10 sends 90% of I/Os to 10% of \
                     the blocks), or fio's normal:DEV (0 <= DEV < 100), zoned:A/S:A/S... \
                     (A% of the I/Os in the next S% of the blocks, the A adding up to 100), \
                     zoned_abs:A/BYTES:... and a center for zipf, pareto and normal \
                     (zipf:1.2:0.25)";

/// How the blocks an I/O touches are spread over a file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    /// Every block equally likely.
    Uniform,
    /// Rank `k - 1` with probability proportional to `k^-theta`; `theta > 0`.
    Zipf { theta: f64 },
    /// fio's Pareto: a share `h` of the I/Os go to a share `1 - h` of the blocks; `0 < h < 1`.
    Pareto { h: f64 },
    /// `access_pct`% of the I/Os go uniformly to `data_pct`% of the blocks; both in (0, 100).
    Hot { access_pct: f64, data_pct: f64 },
    /// fio's `normal:DEV`: a bell over the blocks ([`gauss`]), widened by `dev` in `[0, 100)`.
    Normal { dev: f64 },
    /// fio's `zoned`: in order from the region's start, each zone takes `access` percent of
    /// the I/Os uniformly over its `size` percent of the blocks. The accesses add up to 100,
    /// the sizes to at most 100.
    Zoned { zones: Vec<Zone> },
    /// fio's `zoned_abs`: as `Zoned` with each zone's `size` in bytes.
    ZonedAbs { zones: Vec<Zone> },
    /// zipf, pareto or normal with fio's center: the blocks moved by `center` (0 to 1) of
    /// the region (see the module doc).
    Centered {
        base: Box<Distribution>,
        center: f64,
    },
}

/// One zone of a zoned distribution: its whole percentage of the I/Os and its size (a
/// percentage of the region, or bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Zone {
    pub access: u32,
    pub size: u64,
}

/// fio's cap on zones (ZONESPLIT_MAX).
pub const MAX_ZONES: usize = 256;

impl Distribution {
    /// Checks the parameters, with a message that names the rule broken.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Distribution::Uniform => Ok(()),
            Distribution::Zipf { theta } => {
                if theta.is_finite() && theta > 0.0 {
                    Ok(())
                } else {
                    Err(format!("zipf theta must be a number > 0, got {theta}"))
                }
            }
            Distribution::Pareto { h } => {
                if h > 0.0 && h < 1.0 {
                    Ok(())
                } else {
                    Err(format!(
                        "pareto h must be strictly between 0 and 1, got {h}"
                    ))
                }
            }
            Distribution::Hot {
                access_pct,
                data_pct,
            } => {
                let ok = |p: f64| p > 0.0 && p < 100.0;
                if ok(access_pct) && ok(data_pct) {
                    Ok(())
                } else {
                    Err(format!(
                        "hot percentages must be strictly between 0 and 100, got \
                         {access_pct}/{data_pct}"
                    ))
                }
            }
            Distribution::Normal { dev } => {
                if (0.0..100.0).contains(&dev) {
                    Ok(())
                } else {
                    Err(format!(
                        "normal's deviation must be 0 to below 100, got {dev}"
                    ))
                }
            }
            Distribution::Zoned { ref zones } | Distribution::ZonedAbs { ref zones } => {
                let absolute = matches!(self, Distribution::ZonedAbs { .. });
                if zones.is_empty() || zones.len() > MAX_ZONES {
                    return Err(format!("a zoned distribution has 1 to {MAX_ZONES} zones"));
                }
                let access: u64 = zones.iter().map(|z| u64::from(z.access)).sum();
                if access != 100 {
                    return Err(format!(
                        "the zones' shares of the I/O add up to {access}, not 100"
                    ));
                }
                let sizes: u64 = zones.iter().map(|z| z.size).fold(0, u64::saturating_add);
                if !absolute && sizes > 100 {
                    return Err(format!(
                        "the zones' sizes add up to {sizes} percent, over 100"
                    ));
                }
                if absolute && zones.iter().any(|z| z.size == 0) {
                    return Err("every zoned_abs zone needs a size in bytes".into());
                }
                Ok(())
            }
            Distribution::Centered { ref base, center } => {
                if !matches!(
                    **base,
                    Distribution::Zipf { .. }
                        | Distribution::Pareto { .. }
                        | Distribution::Normal { .. }
                ) {
                    return Err(format!(
                        "{base} takes no center (zipf, pareto and normal do)"
                    ));
                }
                if !(0.0..=1.0).contains(&center) {
                    return Err(format!("a center is 0 to 1, got {center}"));
                }
                base.validate()
            }
        }
    }

    /// Whether fio spreads the hot blocks over the region (zipf, pareto and normal, by
    /// hashing) rather than keeping them where the distribution puts them.
    pub fn spread(&self) -> bool {
        match self {
            Distribution::Zipf { .. }
            | Distribution::Pareto { .. }
            | Distribution::Normal { .. } => true,
            Distribution::Centered { base, .. } => base.spread(),
            _ => false,
        }
    }
}

/// Parses a number, refusing NaN and infinities (which `f64::from_str` accepts).
fn parse_number(s: &str, what: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{what} {s:?} is not a number; {FORMS}")),
    }
}

/// `A/S:A/S:...`: each zone's whole percentage of the I/Os and its size (a whole
/// percentage, or bytes with units when `absolute`).
fn parse_zones(text: &str, absolute: bool) -> Result<Vec<Zone>, String> {
    text.split(':')
        .map(|z| {
            let (a, size) = z
                .split_once('/')
                .ok_or_else(|| format!("a zone is ACCESS/SIZE, got {z:?}; {FORMS}"))?;
            let access = a
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("zone {z:?}: {a:?} is not a whole percentage; {FORMS}"))?;
            let size = if absolute {
                crate::vocab::units::parse_size("zoned_abs", size.trim())
                    .map_err(|e| format!("zone {z:?}: {e}"))?
            } else {
                size.trim().parse::<u64>().map_err(|_| {
                    format!("zone {z:?}: {size:?} is not a whole percentage; {FORMS}")
                })?
            };
            Ok(Zone { access, size })
        })
        .collect()
}

impl FromStr for Distribution {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k.trim().to_ascii_lowercase(), Some(a)),
            None => (s.to_ascii_lowercase(), None),
        };
        // zipf, pareto and normal take fio's optional center after a second colon.
        let (arg, center) = match (kind.as_str(), arg) {
            ("zipf" | "pareto" | "normal", Some(a)) => match a.split_once(':') {
                Some((v, c)) => (Some(v), Some(parse_number(c, "center")?)),
                None => (Some(a), None),
            },
            _ => (arg, None),
        };
        let dist = match (kind.as_str(), arg) {
            ("uniform", None) => Distribution::Uniform,
            ("zipf", Some(a)) => Distribution::Zipf {
                theta: parse_number(a, "zipf theta")?,
            },
            ("pareto", Some(a)) => Distribution::Pareto {
                h: parse_number(a, "pareto h")?,
            },
            ("hot", Some(a)) => {
                let (access, data) = a
                    .split_once('/')
                    .ok_or_else(|| format!("hot needs ACCESS/DATA, got {a:?}; {FORMS}"))?;
                Distribution::Hot {
                    access_pct: parse_number(access, "hot access percentage")?,
                    data_pct: parse_number(data, "hot data percentage")?,
                }
            }
            ("normal", None) => Distribution::Normal { dev: 0.0 },
            ("normal", Some(a)) => Distribution::Normal {
                dev: parse_number(a, "normal deviation")?,
            },
            ("zoned", Some(a)) => Distribution::Zoned {
                zones: parse_zones(a, false)?,
            },
            ("zoned_abs", Some(a)) => Distribution::ZonedAbs {
                zones: parse_zones(a, true)?,
            },
            _ => return Err(format!("unknown distribution {s:?}; {FORMS}")),
        };
        let dist = match center {
            Some(center) => Distribution::Centered {
                base: Box::new(dist),
                center,
            },
            None => dist,
        };
        dist.validate().map_err(|e| format!("{e}; {FORMS}"))?;
        Ok(dist)
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{}` on f64 prints the shortest text that parses back to the same value, so this
        // round-trips through `from_str`.
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Hot {
                access_pct,
                data_pct,
            } => write!(f, "hot:{access_pct}/{data_pct}"),
            Distribution::Normal { dev } => write!(f, "normal:{dev}"),
            Distribution::Zoned { zones } | Distribution::ZonedAbs { zones } => {
                let kind = match self {
                    Distribution::ZonedAbs { .. } => "zoned_abs",
                    _ => "zoned",
                };
                write!(f, "{kind}")?;
                for z in zones {
                    write!(f, ":{}/{}", z.access, z.size)?;
                }
                Ok(())
            }
            Distribution::Centered { base, center } => write!(f, "{base}:{center}"),
        }
    }
}

/// `expm1(t) / t`, continued to 1 at `t = 0` (a Taylor polynomial where the quotient would
/// lose its digits).
#[inline]
fn expm1_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.exp_m1() / t
    } else {
        1.0 + t * (0.5 + t / 6.0)
    }
}

/// `ln(1 + t) / t`, continued to 1 at `t = 0`. This is on every Zipf draw, and `ln_1p` costs
/// twice `ln` here, so `ln(1 + t)` is taken directly where rounding `1 + t` costs at most
/// 2⁻⁵³/|t| ≤ 10⁻¹³ of relative accuracy, and the Taylor series
/// `1 - t/2 + t²/3 - t³/4 + t⁴/5` (truncation error below |t|⁵/6 < 2·10⁻¹⁶) nearer to 0.
#[inline]
fn ln1p_over(t: f64) -> f64 {
    if t.abs() > 1e-3 {
        (1.0 + t).ln() / t
    } else {
        1.0 - t * (0.5 - t * (1.0 / 3.0 - t * (0.25 - t * 0.2)))
    }
}

/// The precomputed constants of the rejection-inversion Zipf sampler (see the module doc).
#[derive(Debug, Clone)]
struct Zipf {
    /// `1 - θ`.
    one_minus_theta: f64,
    /// `θ`.
    theta: f64,
    /// The number of ranks, as a float.
    n: f64,
    /// `H(1.5) - h(1)`: the lower end of the range `u` is drawn from.
    h_int_x1: f64,
    /// `H(N + 0.5)`: the upper end. `u` is drawn downward from it (`next_f64` is in
    /// `[0, 1)`), so this end is reachable and the lower one, where `H⁻¹` would give the
    /// hat's left edge rather than a rank, is not.
    h_int_n: f64,
    /// The squeeze constant `s`.
    s: f64,
}

impl Zipf {
    fn new(theta: f64, ranks: u64) -> Self {
        let mut z = Zipf {
            one_minus_theta: 1.0 - theta,
            theta,
            n: ranks as f64,
            h_int_x1: 0.0,
            h_int_n: 0.0,
            s: 0.0,
        };
        z.h_int_x1 = z.big_h(1.5) - 1.0;
        z.h_int_n = z.big_h(z.n + 0.5);
        z.s = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// `h(x) = x^-θ`.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// `H(x) = (x^(1-θ) - 1) / (1 - θ)`, or `ln x` for θ = 1.
    #[inline]
    fn big_h(&self, x: f64) -> f64 {
        let ln_x = x.ln();
        expm1_over(self.one_minus_theta * ln_x) * ln_x
    }

    /// The inverse of `H`: `(1 + (1-θ)·y)^(1/(1-θ))`, or `e^y` for θ = 1.
    #[inline]
    fn big_h_inv(&self, y: f64) -> f64 {
        (ln1p_over(self.one_minus_theta * y) * y).exp()
    }

    /// A rank in `0..N`, rank 0 the most likely.
    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        // Each round accepts with probability well above 1/2, so 64 rounds all rejecting has
        // probability below 2^-64; the cap only guards against a loop that never ends should
        // a non-finite value ever reach the comparisons. The fallback is the hottest rank,
        // which is what extreme θ (the only source of such values) draws anyway.
        for _ in 0..64 {
            let u = self.h_int_n + rng.next_f64() * (self.h_int_x1 - self.h_int_n);
            let x = self.big_h_inv(u);
            // `as` saturates (NaN becomes 0), and the clamp keeps k in 1..=N.
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.big_h(k + 0.5) - self.h(k) {
                return (k as u64).saturating_sub(1);
            }
        }
        0
    }
}

/// What a [`BlockPicker`] draws, with its precomputed constants.
#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    Zipf(Zipf),
    Pareto {
        /// `ln h / ln(1 - h)`.
        power: f64,
    },
    Hot {
        /// A draw of `next_u64` below this goes to the hot set.
        threshold: u64,
        /// Blocks in the hot set (ranks `0..hot`).
        hot: u64,
    },
    Normal(Gauss),
    Zones(ZoneTable),
}

/// Draws block indexes in `0..blocks` for one worker. Construction precomputes whatever makes
/// [`next`](Self::next) O(1): no per-call loop over blocks and O(1) memory whatever the count.
#[derive(Debug, Clone)]
pub struct BlockPicker {
    kind: Kind,
    blocks: u64,
    /// The multiplier of the scrambling permutation, or 0 when ranks are blocks.
    multiplier: u64,
    /// `floor(2^64 / blocks)` for Barrett reduction when `blocks <= 2^32`, else 0.
    barrett: u64,
    /// fio's center: blocks added after scrambling, modulo `blocks` (0: none).
    rotate: u64,
}

impl BlockPicker {
    /// A picker over `blocks` blocks (at least 1). With `scramble`, ranks are spread over the
    /// file by a fixed permutation (the same for every worker, so they share one hot set).
    pub fn new(dist: &Distribution, blocks: u64, scramble: bool) -> Result<Self, String> {
        Self::sized(dist, blocks, 1, scramble)
    }

    /// As [`BlockPicker::new`], over blocks of `block_bytes` bytes, which `zoned_abs`
    /// counts its zones' bytes in.
    pub fn sized(
        dist: &Distribution,
        blocks: u64,
        block_bytes: u64,
        scramble: bool,
    ) -> Result<Self, String> {
        if blocks == 0 {
            return Err("a block picker needs at least one block".to_string());
        }
        dist.validate()?;
        let (dist, rotate) = match dist {
            Distribution::Centered { base, center } => {
                // fio's rand_off: the center's share of the blocks; normal's bell already
                // sits in the middle, so it moves by the center less one half.
                let turn = match **base {
                    Distribution::Normal { .. } => center - 0.5,
                    _ => *center,
                };
                let b = blocks as f64;
                // `as` saturates; the remainder keeps it in range.
                (&**base, ((turn * b).rem_euclid(b) as u64) % blocks)
            }
            d => (d, 0),
        };
        let kind = match *dist {
            Distribution::Normal { dev } => Kind::Normal(Gauss::new(dev, blocks)),
            Distribution::Zoned { ref zones } => Kind::Zones(ZoneTable::percent(zones, blocks)),
            Distribution::ZonedAbs { ref zones } => {
                Kind::Zones(ZoneTable::bytes(zones, blocks, block_bytes)?)
            }
            Distribution::Centered { .. } => {
                return Err("a center of a center is not a distribution".into());
            }
            Distribution::Uniform => Kind::Uniform,
            Distribution::Zipf { theta } => Kind::Zipf(Zipf::new(theta, blocks)),
            Distribution::Pareto { h } => Kind::Pareto {
                // ln_1p keeps ln(1 - h) accurate for small h.
                power: h.ln() / (-h).ln_1p(),
            },
            Distribution::Hot {
                access_pct,
                data_pct,
            } => {
                let hot = if blocks == 1 {
                    1
                } else {
                    // `as` saturates; the clamp keeps both the hot and the cold set non-empty.
                    ((blocks as f64 * data_pct / 100.0).round() as u64).clamp(1, blocks - 1)
                };
                // access_pct / 100 of the 2^64 outcomes of next_u64; `as` saturates.
                let threshold = (access_pct / 100.0 * 18_446_744_073_709_551_616.0) as u64;
                Kind::Hot { threshold, hot }
            }
        };
        // Uniform draws gain nothing from a permutation: skip its cost.
        let multiplier = if scramble && blocks > 2 && !matches!(kind, Kind::Uniform) {
            scramble_multiplier(blocks)
        } else {
            0
        };
        let barrett = if multiplier != 0 && blocks <= 1 << 32 {
            // blocks > 2 here, so the quotient fits in 64 bits.
            ((1u128 << 64) / u128::from(blocks)) as u64
        } else {
            0
        };
        Ok(BlockPicker {
            kind,
            blocks,
            multiplier,
            barrett,
            rotate,
        })
    }

    /// The number of blocks drawn from.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The next block index, in `0..blocks`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let rank = match &self.kind {
            Kind::Uniform => rng.below(self.blocks),
            Kind::Zipf(z) => z.sample(rng),
            Kind::Pareto { power } => {
                let n = (self.blocks as f64 * rng.next_f64().powf(*power)) as u64;
                (self.blocks - 1).saturating_sub(n)
            }
            Kind::Hot { threshold, hot } => {
                if rng.next_u64() < *threshold {
                    rng.below(*hot)
                } else {
                    *hot + rng.below(self.blocks - *hot)
                }
            }
            Kind::Normal(g) => g.sample(rng),
            Kind::Zones(t) => t.next(rng),
        };
        let block = self.scramble(rank);
        if self.rotate == 0 {
            block
        } else {
            // Both below `blocks`: the sum fits in 128 bits, the remainder in `blocks`.
            ((u128::from(block) + u128::from(self.rotate)) % u128::from(self.blocks)) as u64
        }
    }

    /// Maps a rank to its block: `rank · a mod blocks`, or the rank itself.
    #[inline]
    fn scramble(&self, rank: u64) -> u64 {
        // Past 2^53 blocks, float rounding can carry a Zipf or Pareto rank up to `blocks`
        // itself; the `min` keeps every answer in range.
        let rank = rank.min(self.blocks - 1);
        if self.multiplier == 0 {
            rank
        } else if self.barrett != 0 {
            // Both factors are below 2^32, so the product p fits in 64 bits. Barrett
            // reduction replaces the division (tens of cycles, and it was a third of a zipf
            // draw) by two multiplications: with m = floor(2^64 / n), q = floor(p·m / 2^64)
            // is floor(p / n) or one less, because p·m / 2^64 > p/n - p/2^64 > p/n - 1. So
            // p - q·n is in 0..2n, and one subtraction finishes it.
            let p = rank * self.multiplier;
            let q = ((u128::from(p) * u128::from(self.barrett)) >> 64) as u64;
            let r = p - q * self.blocks;
            if r >= self.blocks { r - self.blocks } else { r }
        } else {
            ((u128::from(rank) * u128::from(self.multiplier)) % u128::from(self.blocks)) as u64
        }
    }
}

/// Greatest common divisor (Euclid).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The first multiplier from `blocks / φ` up that is coprime with `blocks` (> 2), so that
/// `r ↦ r·a mod blocks` is a permutation.
fn scramble_multiplier(blocks: u64) -> u64 {
    const INV_PHI: f64 = 0.618_033_988_749_894_8;
    let mut a = ((blocks as f64 * INV_PHI) as u64).clamp(1, blocks - 1);
    // Terminates: a = blocks - 1 is always coprime with blocks. The gap between numbers
    // coprime with any 64-bit integer is at most a few hundred (Jacobsthal's function), so
    // this is a short loop, not one over the blocks.
    while gcd(a, blocks) != 1 {
        a += 1;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share_of_hottest_tenth(dist: &Distribution, blocks: u64, scramble: bool) -> f64 {
        let mut p = BlockPicker::new(dist, blocks, scramble).unwrap();
        let mut rng = Rng::new(11);
        let mut counts = vec![0u64; blocks as usize];
        let draws = 400_000;
        for _ in 0..draws {
            counts[p.next(&mut rng) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = counts[..blocks as usize / 10].iter().sum();
        top as f64 / draws as f64
    }

    #[test]
    fn parses_and_round_trips() {
        let cases = [
            ("uniform", Distribution::Uniform),
            ("zipf:1.2", Distribution::Zipf { theta: 1.2 }),
            ("zipf:1", Distribution::Zipf { theta: 1.0 }),
            ("pareto:0.9", Distribution::Pareto { h: 0.9 }),
            (
                "hot:90/10",
                Distribution::Hot {
                    access_pct: 90.0,
                    data_pct: 10.0,
                },
            ),
        ];
        for (text, dist) in cases {
            assert_eq!(text.parse::<Distribution>().unwrap(), dist);
            assert_eq!(dist.to_string(), text);
        }
        for d in [
            Distribution::Zipf { theta: 0.1 + 0.2 },
            Distribution::Pareto { h: 1.0 / 3.0 },
            Distribution::Hot {
                access_pct: 99.99,
                data_pct: 1e-5,
            },
        ] {
            assert_eq!(d.to_string().parse::<Distribution>().unwrap(), d);
        }
        assert_eq!(
            " Zipf : 0.8 ".parse::<Distribution>().unwrap(),
            Distribution::Zipf { theta: 0.8 }
        );
    }

    #[test]
    fn rejects_bad_forms_with_a_hint() {
        for bad in [
            "",
            "gauss",
            "uniform:1",
            "zipf",
            "zipf:",
            "zipf:0",
            "zipf:-1",
            "zipf:nan",
            "zipf:inf",
            "pareto:1",
            "pareto:0",
            "pareto:1.5",
            "hot:90",
            "hot:100/10",
            "hot:90/0",
            "hot:a/b",
            "hot:90/10/5",
        ] {
            let err = bad.parse::<Distribution>().unwrap_err();
            assert!(err.contains("expected uniform"), "{bad}: {err}");
        }
    }

    #[test]
    fn serializes_with_a_kind_tag() {
        let json = serde_json::to_string(&Distribution::Zipf { theta: 1.2 }).unwrap();
        assert_eq!(json, r#"{"kind":"zipf","theta":1.2}"#);
        let json = serde_json::to_string(&Distribution::Uniform).unwrap();
        assert_eq!(json, r#"{"kind":"uniform"}"#);
        let back: Distribution =
            serde_json::from_str(r#"{"kind":"hot","access_pct":90.0,"data_pct":10.0}"#).unwrap();
        assert_eq!(
            back,
            Distribution::Hot {
                access_pct: 90.0,
                data_pct: 10.0
            }
        );
    }

    #[test]
    fn picker_rejects_bad_input() {
        assert!(BlockPicker::new(&Distribution::Uniform, 0, false).is_err());
        assert!(BlockPicker::new(&Distribution::Zipf { theta: 0.0 }, 10, true).is_err());
        assert!(BlockPicker::new(&Distribution::Zipf { theta: f64::NAN }, 10, true).is_err());
        assert!(BlockPicker::new(&Distribution::Pareto { h: 1.0 }, 10, true).is_err());
        let hot = Distribution::Hot {
            access_pct: 90.0,
            data_pct: 100.0,
        };
        assert!(BlockPicker::new(&hot, 10, true).is_err());
    }

    #[test]
    fn draws_stay_in_range_for_every_size_and_parameter() {
        let dists = [
            Distribution::Uniform,
            Distribution::Zipf { theta: 1e-9 },
            Distribution::Zipf { theta: 0.5 },
            Distribution::Zipf { theta: 1.0 },
            Distribution::Zipf { theta: 1.2 },
            Distribution::Zipf { theta: 50.0 },
            Distribution::Zipf { theta: 1e9 },
            Distribution::Pareto { h: 1e-9 },
            Distribution::Pareto { h: 0.5 },
            Distribution::Pareto { h: 0.9 },
            Distribution::Pareto { h: 1.0 - 1e-12 },
            Distribution::Hot {
                access_pct: 90.0,
                data_pct: 10.0,
            },
            Distribution::Hot {
                access_pct: 1e-9,
                data_pct: 99.999,
            },
        ];
        for dist in &dists {
            for blocks in [1, 2, 3, 10, 1 << 20, (1 << 32) + 15, u64::MAX] {
                for scramble in [false, true] {
                    let mut p = BlockPicker::new(dist, blocks, scramble).unwrap();
                    let mut rng = Rng::new(blocks);
                    for _ in 0..2_000 {
                        let b = p.next(&mut rng);
                        assert!(b < blocks, "{dist} over {blocks}: {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn hottest_tenth_gets_the_expected_share() {
        for scramble in [false, true] {
            let uniform = share_of_hottest_tenth(&Distribution::Uniform, 1000, scramble);
            // The busiest 100 of 1000 equally likely blocks, 400 draws each on average, get
            // a little over 10% by chance.
            assert!((0.10..0.12).contains(&uniform), "uniform: {uniform}");

            let pareto = share_of_hottest_tenth(&Distribution::Pareto { h: 0.9 }, 1000, scramble);
            assert!((0.88..0.92).contains(&pareto), "pareto 0.9: {pareto}");

            let hot = Distribution::Hot {
                access_pct: 90.0,
                data_pct: 10.0,
            };
            let hot = share_of_hottest_tenth(&hot, 1000, scramble);
            assert!((0.89..0.91).contains(&hot), "hot 90/10: {hot}");

            // Exact share of ranks 1..=100 of 1000 under k^-1.2 is about 0.78.
            let weights: Vec<f64> = (1..=1000).map(|k| f64::from(k).powf(-1.2)).collect();
            let exact = weights[..100].iter().sum::<f64>() / weights.iter().sum::<f64>();
            let zipf = share_of_hottest_tenth(&Distribution::Zipf { theta: 1.2 }, 1000, scramble);
            assert!((zipf - exact).abs() < 0.01, "zipf 1.2: {zipf} vs {exact}");
        }
    }

    #[test]
    fn zipf_matches_the_exact_probabilities() {
        // Compares the frequency of each rank with k^-θ / Σ k^-θ, for θ on both sides of 1
        // and at 1, where the closed forms of H change.
        for theta in [0.3, 0.99, 1.0, 1.01, 1.5, 3.0] {
            let blocks = 50u64;
            let mut p = BlockPicker::new(&Distribution::Zipf { theta }, blocks, false).unwrap();
            let mut rng = Rng::new(5);
            let draws = 500_000;
            let mut counts = vec![0u64; blocks as usize];
            for _ in 0..draws {
                counts[p.next(&mut rng) as usize] += 1;
            }
            let weights: Vec<f64> = (1..=blocks).map(|k| (k as f64).powf(-theta)).collect();
            let total: f64 = weights.iter().sum();
            for (rank, (&c, w)) in counts.iter().zip(&weights).enumerate() {
                let expected = draws as f64 * w / total;
                // Five standard deviations of a binomial count.
                let tolerance = 5.0 * expected.sqrt() + 1.0;
                assert!(
                    (c as f64 - expected).abs() < tolerance,
                    "θ={theta} rank {rank}: {c} vs {expected:.0}"
                );
            }
        }
    }

    #[test]
    fn zipf_handles_huge_files_in_constant_time() {
        // 2^60 blocks: a ζ(N) loop would never finish; rejection-inversion does not care.
        let blocks = 1u64 << 60;
        let mut p = BlockPicker::new(&Distribution::Zipf { theta: 1.1 }, blocks, true).unwrap();
        let mut q = BlockPicker::new(&Distribution::Zipf { theta: 1.1 }, blocks, false).unwrap();
        let mut rng = Rng::new(3);
        let mut first = 0;
        for _ in 0..10_000 {
            assert!(p.next(&mut rng) < blocks);
            if q.next(&mut rng) == 0 {
                first += 1;
            }
        }
        // P(rank 0) = 1/ζ(1.1) ≈ 1/10.58 (the tail past 2^60 is negligible at this precision).
        let share = f64::from(first) / 10_000.0;
        assert!((0.085..0.105).contains(&share), "{share}");
    }

    #[test]
    fn extreme_thetas_behave() {
        // θ near 0 is nearly uniform; a huge θ puts everything on the hottest block.
        let flat = share_of_hottest_tenth(&Distribution::Zipf { theta: 1e-9 }, 1000, false);
        assert!((0.10..0.12).contains(&flat), "{flat}");
        let mut p = BlockPicker::new(&Distribution::Zipf { theta: 60.0 }, 1 << 40, false).unwrap();
        let mut rng = Rng::new(8);
        assert!((0..10_000).all(|_| p.next(&mut rng) == 0));
    }

    #[test]
    fn pareto_follows_its_power_law() {
        // The hottest share f of the blocks gets 1 - (1 - f)^(1/p), p = ln h / ln(1 - h).
        let h: f64 = 0.9;
        let p = h.ln() / (1.0 - h).ln();
        let blocks = 100_000u64;
        let mut picker = BlockPicker::new(&Distribution::Pareto { h }, blocks, false).unwrap();
        let mut rng = Rng::new(9);
        let draws = 200_000;
        let ranks: Vec<u64> = (0..draws).map(|_| picker.next(&mut rng)).collect();
        for f in [0.01, 0.1, 0.5] {
            let cut = (blocks as f64 * f) as u64;
            let got = ranks.iter().filter(|&&r| r < cut).count() as f64 / draws as f64;
            let want = 1.0 - (1.0 - f).powf(1.0 / p);
            assert!((got - want).abs() < 0.005, "f={f}: {got} vs {want}");
        }
    }

    #[test]
    fn hot_set_respects_its_bounds() {
        let hot = Distribution::Hot {
            access_pct: 90.0,
            data_pct: 10.0,
        };
        // Two blocks: one hot, one cold, whatever the percentages round to.
        let mut p = BlockPicker::new(&hot, 2, false).unwrap();
        let mut rng = Rng::new(1);
        let zeros = (0..10_000).filter(|_| p.next(&mut rng) == 0).count();
        assert!((8_800..9_200).contains(&zeros), "{zeros}");
        // One block: always block 0.
        let mut p = BlockPicker::new(&hot, 1, true).unwrap();
        assert!((0..100).all(|_| p.next(&mut rng) == 0));
    }

    #[test]
    fn scramble_is_a_bijection() {
        let primes_and_powers = [
            1u64,
            2,
            3,
            4,
            5,
            7,
            8,
            13,
            16,
            30,
            97,
            100,
            101,
            127,
            128,
            210,
            1000,
            1024,
            4096,
            30_030,
            65_537,
            999_983,
            1 << 20,
        ];
        for blocks in primes_and_powers {
            let p = BlockPicker::new(&Distribution::Zipf { theta: 1.0 }, blocks, true).unwrap();
            let mut seen = vec![false; blocks as usize];
            for rank in 0..blocks {
                let b = p.scramble(rank);
                assert!(
                    b < blocks && !seen[b as usize],
                    "{blocks}: rank {rank} -> {b}"
                );
                seen[b as usize] = true;
            }
        }
        // Barrett reduction agrees with the remainder, up to the largest size it serves.
        let mut rng = Rng::new(21);
        for blocks in [3u64, 1000, 65_537, (1 << 32) - 5, 1 << 32] {
            let p = BlockPicker::new(&Distribution::Zipf { theta: 1.0 }, blocks, true).unwrap();
            assert_ne!(p.barrett, 0);
            for rank in (0..10_000)
                .map(|_| rng.below(blocks))
                .chain([0, blocks - 1])
            {
                let want = (u128::from(rank) * u128::from(p.multiplier)) % u128::from(blocks);
                assert_eq!(u128::from(p.scramble(rank)), want, "{blocks}: {rank}");
            }
        }
        // Too many to enumerate: coprimality is what makes r·a mod n a bijection.
        for blocks in [(1u64 << 32) + 1, (1 << 40) - 87, 1 << 62, u64::MAX] {
            let p = BlockPicker::new(&Distribution::Pareto { h: 0.8 }, blocks, true).unwrap();
            assert_eq!(gcd(p.multiplier, blocks), 1);
            assert!(p.scramble(blocks - 1) < blocks);
            assert_ne!(p.scramble(1), p.scramble(2));
        }
    }

    #[test]
    fn scramble_spreads_the_hot_blocks() {
        // Without scrambling the hot tenth of a zipf file is its first tenth; with it, the
        // 100 hottest ranks fall in every tenth of the file.
        let blocks = 10_000u64;
        let p = BlockPicker::new(&Distribution::Zipf { theta: 1.2 }, blocks, true).unwrap();
        let mut tenths = [0u32; 10];
        for rank in 0..100 {
            tenths[(p.scramble(rank) * 10 / blocks) as usize] += 1;
        }
        assert!(tenths.iter().all(|&n| (5..=15).contains(&n)), "{tenths:?}");
    }

    #[test]
    fn fio_forms_parse_and_round_trip() {
        let zones = |z: &[(u32, u64)]| {
            z.iter()
                .map(|&(access, size)| Zone { access, size })
                .collect::<Vec<_>>()
        };
        let cases = [
            ("normal:5", Distribution::Normal { dev: 5.0 }),
            (
                "zoned:50/5:30/15:20/80",
                Distribution::Zoned {
                    zones: zones(&[(50, 5), (30, 15), (20, 80)]),
                },
            ),
            (
                "zoned_abs:80/1048576:20/4194304",
                Distribution::ZonedAbs {
                    zones: zones(&[(80, 1 << 20), (20, 4 << 20)]),
                },
            ),
            (
                "zipf:1.2:0.25",
                Distribution::Centered {
                    base: Box::new(Distribution::Zipf { theta: 1.2 }),
                    center: 0.25,
                },
            ),
        ];
        for (text, dist) in cases {
            assert_eq!(text.parse::<Distribution>().unwrap(), dist, "{text}");
            assert_eq!(dist.to_string(), text);
        }
        assert_eq!(
            "zoned_abs:100/1m".parse::<Distribution>().unwrap(),
            Distribution::ZonedAbs {
                zones: zones(&[(100, 1 << 20)])
            }
        );
        for bad in [
            "normal:100",
            "zoned:50/5:30/15",
            "zoned:50/60:50/60",
            "zoned:50",
            "zoned_abs:100/0",
            "zipf:1.2:2",
            "hot:90/10:0.5",
        ] {
            let err = bad.parse::<Distribution>().unwrap_err();
            assert!(err.contains("expected uniform"), "{bad}: {err}");
        }
        let json = serde_json::to_string(&cases_json()).unwrap();
        let back: Distribution = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cases_json());
    }

    fn cases_json() -> Distribution {
        Distribution::Centered {
            base: Box::new(Distribution::Normal { dev: 3.0 }),
            center: 0.7,
        }
    }

    #[test]
    fn a_center_puts_zipfs_hottest_block_there() {
        let blocks = 1000;
        let centered = Distribution::Centered {
            base: Box::new(Distribution::Zipf { theta: 1.5 }),
            center: 0.25,
        };
        let mut p = BlockPicker::new(&centered, blocks, true).unwrap();
        let mut rng = Rng::new(4);
        let mut counts = vec![0u32; blocks as usize];
        for _ in 0..50_000 {
            counts[p.next(&mut rng) as usize] += 1;
        }
        let hottest = (0..blocks as usize).max_by_key(|&b| counts[b]).unwrap();
        assert_eq!(hottest, 250);
        // Normal's default center is the middle: a center of 0.5 moves nothing.
        let plain = BlockPicker::new(&Distribution::Normal { dev: 0.0 }, blocks, true).unwrap();
        let half = Distribution::Centered {
            base: Box::new(Distribution::Normal { dev: 0.0 }),
            center: 0.5,
        };
        let half = BlockPicker::new(&half, blocks, true).unwrap();
        assert_eq!(half.rotate, 0);
        assert_eq!(plain.rotate, 0);
    }

    #[test]
    fn fio_spreads_zipf_pareto_and_normal_but_not_zones() {
        assert!(Distribution::Normal { dev: 0.0 }.spread());
        assert!(Distribution::Pareto { h: 0.5 }.spread());
        assert!(!Distribution::Uniform.spread());
        assert!(
            !Distribution::Zoned {
                zones: vec![Zone {
                    access: 100,
                    size: 100
                }]
            }
            .spread()
        );
    }

    #[test]
    fn same_seed_same_blocks() {
        let d = Distribution::Zipf { theta: 0.9 };
        let mut a = BlockPicker::new(&d, 12_345, true).unwrap();
        let mut b = a.clone();
        let (mut ra, mut rb) = (Rng::new(77), Rng::new(77));
        for _ in 0..1000 {
            assert_eq!(a.next(&mut ra), b.next(&mut rb));
        }
    }
}
