//! The key space, the key each request touches, the size of each key's value and its bytes.
//!
//! # What is here
//!
//! - [`KeySpace`]: the keys, `<prefix><index>` for every index in `minimum..=maximum`
//!   (`--key-prefix`, `--key-minimum`, `--key-maximum`);
//! - [`KeyPattern`]: how requests choose among the keys, uniform, sequential, Zipf or Gaussian
//!   (`--key-pattern`, `--key-zipf-exp`, `--key-median`, `--key-stddev`);
//! - [`KeyPicker`]: one worker's draws from a pattern, O(1) each;
//! - [`ValueSizes`]: the size of each key's value, fixed, weighted ranges, a weighted list or
//!   Facebook's ETC (`--value-size`, memtier's `--data-size-range` and `--data-size-list`);
//! - [`Values`]: the bytes of every value, as slices of one shared pseudo-random buffer.
//!
//! The option names are memtier_benchmark's where it has one; its one-letter key patterns
//! (`R`, `S`, `Z`, `G`) are accepted too.
//!
//! # Why a value's size is fixed by its key
//!
//! [`ValueSizes::size_of`] is a function of the key's index alone (a hash of it, never the
//! run's seed or the op count), for three reasons:
//!
//! - a get knows what it should receive: a reply of another length is an error, not a hit, and
//!   with verification [`Values::of`] gives the exact bytes any set of that key wrote;
//! - `prepare` (which loads every key) and the measured steps agree, in this run and the next,
//!   so the cache holds the same bytes in the same slab classes whatever the seed, and runs
//!   compare;
//! - a set never changes the size of what it replaces, so the cache's footprint does not drift
//!   during a run (with sizes drawn per request, every set would move an item between slab
//!   classes, and memory use would depend on how many sets the run happened to make).
//!
//! The distribution of sizes is therefore over *keys*. It is also the distribution over
//! requests when keys are drawn uniformly; under Zipf the sizes of the few hot keys weigh more.
//!
//! # ETC
//!
//! `--value-size etc` reproduces the value sizes of Facebook's ETC memcached pool, the most
//! representative of the five pools traced by B. Atikoglu, Y. Xu, E. Frachtenberg, S. Jiang and
//! M. Paleczny, "Workload Analysis of a Large-Scale Key-Value Store", ACM SIGMETRICS 2012. The
//! paper fits value sizes with a generalized Pareto distribution (scale σ = 214.476, shape
//! k = 0.348238). A continuous fit cannot hold ETC's many tiny values (nearly a fifth of them
//! are 2 bytes), so the mutilate load generator (J. Leverich, `github.com/leverich/mutilate`,
//! `Generator.cc`, `createFacebookValue`, its `fb_value` generator) puts a discrete table for
//! sizes 0 to 14 ([`ETC_TABLE`]) in front of it: the table is walked first, and a draw past
//! its total probability (0.44155) takes a fresh uniform number into the Pareto. Here the
//! table is mutilate's, and the Pareto has the paper's scale and shape with location 15, so
//! that the continuous part starts where the table ends; sizes are rounded down to whole
//! bytes and capped at [`ETC_MAX`] (memcached's default 1 MiB item limit less room for the
//! item header and key). The tail past the cap has probability below 10⁻⁹.
//!
//! (mutilate's call `GPareto(214.476, 0.348238)` meets a constructor whose parameters are
//! location, scale, shape, so mutilate in fact draws location 214.476, scale 0.348238 and
//! shape 1: nine in ten values past the table are 214 to 218 bytes, and the tail
//! (P(size > 214.5 + t) ≈ 0.35/t) has no finite mean. perflab follows the paper's fit
//! instead: the mean size is then about 194 B over all keys, and 344 B over those past the
//! table.)
//!
//! No code here comes from memtier or mutilate; only the table's numbers do.

use crate::vocab::units::parse_size;
use crate::workload::distribution::{BlockPicker, Distribution};
use crate::workload::rng::Rng;
use std::fmt;
use std::str::FromStr;

/// `--key-prefix` when none is given.
pub const DEFAULT_KEY_PREFIX: &str = "perflab:";
/// `--key-minimum` when none is given (memtier's default too).
pub const DEFAULT_KEY_MINIMUM: u64 = 0;
/// `--key-maximum` when none is given.
pub const DEFAULT_KEY_MAXIMUM: u64 = 100_000;
/// `--key-zipf-exp` when none is given.
pub const DEFAULT_ZIPF_EXP: f64 = 1.0;

/// The longest key memcached's text protocol takes.
pub const MAX_KEY_LEN: usize = 250;
/// The most decimal digits an index can have (`u64::MAX` has 20).
const MAX_DIGITS: usize = 20;

/// The largest value `--value-size` accepts, 64 MiB. Redis takes up to 512 MB and memcached
/// up to its `-I` item size, but every worker holds whole values in its buffers and
/// [`Values`] holds the largest once; past this a request is a bulk transfer, not a cache op.
pub const MAX_VALUE_SIZE: u32 = 64 << 20;

/// The cap on ETC sizes: memcached's default item limit (1 MiB) less room for its item header
/// and the key.
pub const ETC_MAX: u32 = 1_000_000;

/// Facebook ETC's sizes 0..=14 bytes and the probability of each, from mutilate's `fb_value`
/// generator (see the module docs). `ETC_TABLE[s]` is the probability of size `s`; they sum to
/// 0.44155, and the rest of the probability goes to the generalized Pareto.
pub const ETC_TABLE: [f64; 15] = [
    0.00536, 0.00047, 0.17820, 0.09239, 0.00018, 0.02740, 0.00065, 0.00606, 0.00023, 0.00837,
    0.00837, 0.08989, 0.00092, 0.00326, 0.01980,
];
/// Location of ETC's generalized Pareto: the first size past the table.
pub const ETC_PARETO_LOCATION: f64 = 15.0;
/// Scale σ of ETC's generalized Pareto (Atikoglu et al.).
pub const ETC_PARETO_SCALE: f64 = 214.476;
/// Shape k of ETC's generalized Pareto (Atikoglu et al.).
pub const ETC_PARETO_SHAPE: f64 = 0.348238;

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

/// The finalizer of splitmix64 (Stafford's "Mix13" constants): a bijection of `u64` in which
/// every input bit flips each output bit with probability close to 1/2.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of `index` for one purpose (`salt`). Multiplying by an odd constant first spreads
/// consecutive indexes over the whole word, so the salted streams are unrelated to each other.
#[inline]
fn hash(index: u64, salt: u64) -> u64 {
    mix64(index.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(salt))
}

/// Salts: one per use of a key's hash, so that the range a size comes from tells nothing
/// about where in the range it lies.
const SALT_SIZE_PICK: u64 = 0x243F_6A88_85A3_08D3;
const SALT_SIZE_WITHIN: u64 = 0x1319_8A2E_0370_7344;

/// The top 53 bits of `h` as a float in `[0, 1)`.
#[inline]
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `h` scaled to `0..n` by a multiply-high. Its bias, below `n / 2^64`, is far under anything
/// a test or a cache could see for the spans used here (at most 2^26).
#[inline]
fn scale(h: u64, n: u64) -> u64 {
    ((u128::from(h) * u128::from(n)) >> 64) as u64
}

// ---------------------------------------------------------------------------------------------
// Key space
// ---------------------------------------------------------------------------------------------

/// The keys of the workload: `<prefix><index>` for every index in `minimum..=maximum`
/// (both ends included, as memtier's `--key-minimum`/`--key-maximum`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeySpace {
    /// Text before the decimal index (`--key-prefix`).
    pub prefix: String,
    /// The first index (`--key-minimum`).
    pub minimum: u64,
    /// The last index, included (`--key-maximum`).
    pub maximum: u64,
}

impl Default for KeySpace {
    fn default() -> Self {
        KeySpace {
            prefix: DEFAULT_KEY_PREFIX.to_string(),
            minimum: DEFAULT_KEY_MINIMUM,
            maximum: DEFAULT_KEY_MAXIMUM,
        }
    }
}

impl KeySpace {
    /// A checked key space (see [`validate`](Self::validate)).
    pub fn new(prefix: &str, minimum: u64, maximum: u64) -> Result<Self, String> {
        let keys = KeySpace {
            prefix: prefix.to_string(),
            minimum,
            maximum,
        };
        keys.validate()?;
        Ok(keys)
    }

    /// Checks that the range is not empty, that its size fits in a `u64`, and that every key
    /// is one memcached's text protocol takes (at most 250 bytes, no spaces or control
    /// characters, which would end the key early or the command line).
    pub fn validate(&self) -> Result<(), String> {
        if self.minimum > self.maximum {
            return Err(format!(
                "the key minimum {} is above the key maximum {}",
                self.minimum, self.maximum
            ));
        }
        if self.minimum == 0 && self.maximum == u64::MAX {
            return Err("a key space of 2^64 keys cannot be counted; lower --key-maximum".into());
        }
        if self.prefix.len() + MAX_DIGITS > MAX_KEY_LEN {
            return Err(format!(
                "the key prefix is {} bytes; keys must fit in memcached's {MAX_KEY_LEN} bytes \
                 with up to {MAX_DIGITS} digits, so at most {} bytes",
                self.prefix.len(),
                MAX_KEY_LEN - MAX_DIGITS
            ));
        }
        if let Some(c) = self
            .prefix
            .chars()
            .find(|c| c.is_whitespace() || c.is_control())
        {
            return Err(format!(
                "the key prefix {:?} holds {c:?}; memcached keys cannot contain spaces or \
                 control characters",
                self.prefix
            ));
        }
        Ok(())
    }

    /// The number of keys. Assumes a valid space (saturates otherwise).
    pub fn count(&self) -> u64 {
        self.maximum.saturating_sub(self.minimum).saturating_add(1)
    }

    /// Writes the key of `index` into `out`, replacing what was there: the prefix, then the
    /// index in decimal. The first call reserves room for the longest key, so later calls
    /// with the same buffer never allocate.
    #[inline]
    pub fn write_key(&self, index: u64, out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.prefix.len() + MAX_DIGITS);
        out.extend_from_slice(self.prefix.as_bytes());
        let mut digits = [0u8; MAX_DIGITS];
        let start = write_decimal(index, &mut digits);
        out.extend_from_slice(&digits[start..]);
    }
}

/// "00" "01" ... "99": two digits per division halves the divisions of a long index.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` in decimal at the end of `buf` and returns where its first digit is.
#[inline]
fn write_decimal(mut n: u64, buf: &mut [u8; MAX_DIGITS]) -> usize {
    let mut at = MAX_DIGITS;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    at
}

// ---------------------------------------------------------------------------------------------
// Key pattern
// ---------------------------------------------------------------------------------------------

/// The forms [`KeyPattern::from_str`] accepts, for error messages.
const PATTERN_FORMS: &str = "expected uniform (or R), sequential (or S), zipf (or Z, \
                             zipf:EXP with EXP > 0, e.g. zipf:0.99), gaussian (or G, \
                             gaussian:median=INDEX,stddev=KEYS with either part optional)";

/// How requests choose among the keys (`--key-pattern`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyPattern {
    /// Every key equally likely (memtier's `R`).
    Uniform,
    /// Each worker walks its own contiguous slice of the keys in order, wrapping around
    /// (memtier's `S`).
    Sequential,
    /// The key of rank `k` (1 the hottest) with probability proportional to `k^-exp`;
    /// `exp > 0` (`--key-zipf-exp`). The ranks are spread over the key space by a fixed
    /// permutation, the same for every worker.
    Zipf {
        /// The exponent; 1.0 unless `--key-zipf-exp` says otherwise.
        exp: f64,
    },
    /// A normal distribution over the indexes, redrawn until it falls in the key space
    /// (memtier's `G`).
    Gaussian {
        /// The centre, an index in the key space (`--key-median`); the middle of the space
        /// when `None`.
        median: Option<u64>,
        /// The standard deviation in keys, > 0 (`--key-stddev`); a sixth of the key count
        /// when `None`, so the space spans ±3 standard deviations.
        stddev: Option<f64>,
    },
}

impl KeyPattern {
    /// Checks the parameters that do not depend on the key space (the Zipf exponent and the
    /// Gaussian standard deviation); [`KeyPicker::new`] checks the rest.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            KeyPattern::Uniform | KeyPattern::Sequential => Ok(()),
            KeyPattern::Zipf { exp } => {
                if exp.is_finite() && exp > 0.0 {
                    Ok(())
                } else {
                    Err(format!("the zipf exponent must be a number > 0, got {exp}"))
                }
            }
            KeyPattern::Gaussian { stddev, .. } => match stddev {
                Some(s) if !(s.is_finite() && s > 0.0) => Err(format!(
                    "the gaussian standard deviation must be a number of keys > 0, got {s}"
                )),
                _ => Ok(()),
            },
        }
    }
}

/// The pattern a name or one of memtier's letters stands for, with default parameters.
fn pattern_named(name: &str) -> Option<KeyPattern> {
    Some(match name.to_ascii_lowercase().as_str() {
        "uniform" | "r" => KeyPattern::Uniform,
        "sequential" | "s" => KeyPattern::Sequential,
        "zipf" | "z" => KeyPattern::Zipf {
            exp: DEFAULT_ZIPF_EXP,
        },
        "gaussian" | "g" => KeyPattern::Gaussian {
            median: None,
            stddev: None,
        },
        _ => return None,
    })
}

impl FromStr for KeyPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (head, arg) = match s.split_once(':') {
            Some((h, a)) => (h.trim(), Some(a.trim())),
            None => (s, None),
        };
        let pattern = pattern_named(head)
            .ok_or_else(|| format!("unknown key pattern {s:?}; {PATTERN_FORMS}"))?;
        let pattern = match (pattern, arg) {
            (p, None) => p,
            // memtier's SET:GET pair of letters (its default is R:R).
            (p, Some(a)) if head.len() == 1 && a.len() == 1 && pattern_named(a).is_some() => {
                if pattern_named(a).as_ref() == Some(&p) {
                    p
                } else {
                    return Err(format!(
                        "{s:?} is memtier's SET:GET pair with two patterns; perflab draws \
                         sets and gets from one pattern, give one (e.g. {head}); {PATTERN_FORMS}"
                    ));
                }
            }
            (KeyPattern::Zipf { .. }, Some(a)) => KeyPattern::Zipf {
                exp: a
                    .parse::<f64>()
                    .map_err(|_| format!("zipf exponent {a:?} is not a number; {PATTERN_FORMS}"))?,
            },
            (KeyPattern::Gaussian { .. }, Some(a)) => parse_gaussian(a)?,
            (_, Some(_)) => {
                return Err(format!(
                    "{head} takes no parameters, got {s:?}; {PATTERN_FORMS}"
                ));
            }
        };
        pattern
            .validate()
            .map_err(|e| format!("{e}; {PATTERN_FORMS}"))?;
        Ok(pattern)
    }
}

/// Parses `median=INDEX,stddev=KEYS` (either part may be left out).
fn parse_gaussian(args: &str) -> Result<KeyPattern, String> {
    let (mut median, mut stddev) = (None, None);
    for part in args.split(',') {
        let (name, value) = part
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .ok_or_else(|| {
                format!("gaussian parameter {part:?} needs NAME=VALUE; {PATTERN_FORMS}")
            })?;
        match name {
            "median" if median.is_none() => {
                median = Some(value.parse::<u64>().map_err(|_| {
                    format!("gaussian median {value:?} is not a key index; {PATTERN_FORMS}")
                })?);
            }
            "stddev" if stddev.is_none() => {
                stddev = Some(value.parse::<f64>().map_err(|_| {
                    format!("gaussian stddev {value:?} is not a number; {PATTERN_FORMS}")
                })?);
            }
            _ => {
                return Err(format!(
                    "unknown or repeated gaussian parameter {name:?}; {PATTERN_FORMS}"
                ));
            }
        }
    }
    Ok(KeyPattern::Gaussian { median, stddev })
}

impl fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{}` on f64 prints the shortest text that parses back to the same value.
        match self {
            KeyPattern::Uniform => write!(f, "uniform"),
            KeyPattern::Sequential => write!(f, "sequential"),
            KeyPattern::Zipf { exp } => write!(f, "zipf:{exp}"),
            KeyPattern::Gaussian { median, stddev } => {
                write!(f, "gaussian")?;
                match (median, stddev) {
                    (None, None) => Ok(()),
                    (Some(m), None) => write!(f, ":median={m}"),
                    (None, Some(s)) => write!(f, ":stddev={s}"),
                    (Some(m), Some(s)) => write!(f, ":median={m},stddev={s}"),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Key picker
// ---------------------------------------------------------------------------------------------

/// Draws of a Gaussian that fall outside the key space before one falls inside it and the
/// picker gives up (see [`Gaussian::next`]).
const GAUSSIAN_TRIES: u32 = 64;

/// A truncated normal over the indexes, with its precomputed bounds.
#[derive(Debug, Clone)]
struct Gaussian {
    median: f64,
    stddev: f64,
    /// The key space as floats, for the range test before converting.
    low: f64,
    high: f64,
    /// The second normal of the last Box-Muller pair, not used yet.
    spare: Option<f64>,
}

impl Gaussian {
    /// A standard normal: Box-Muller gives two per pair of uniforms, the second kept.
    #[inline]
    fn normal(&mut self, rng: &mut Rng) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        // 1 - u is in (0, 1], so the logarithm is finite.
        let radius = (-2.0 * (1.0 - rng.next_f64()).ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * rng.next_f64()).sin_cos();
        self.spare = Some(radius * sin);
        radius * cos
    }

    /// An index in the key space. A draw outside it is redrawn rather than clamped: clamping
    /// would pile the whole tail onto the first and last keys and make them the hottest.
    /// With the defaults 99.7% of draws land inside, and with any median in the space and a
    /// standard deviation no wider than the space at least a third do, so the loop is short;
    /// only a standard deviation that dwarfs the space can exhaust the tries, and there the
    /// truncated normal is flat over the space anyway, so a uniform index stands in.
    #[inline]
    fn next(&mut self, rng: &mut Rng, keys: (u64, u64)) -> u64 {
        for _ in 0..GAUSSIAN_TRIES {
            let x = (self.median + self.stddev * self.normal(rng)).round();
            if (self.low..=self.high).contains(&x) {
                // Past 2^53 the float bounds are rounded: the clamp keeps the index exact.
                return (x as u64).clamp(keys.0, keys.1);
            }
        }
        keys.0 + rng.below(keys.1 - keys.0 + 1)
    }
}

/// What a [`KeyPicker`] draws from.
#[derive(Debug, Clone)]
enum Pick {
    /// Uniform or Zipf positions in `0..count`, from the storage workloads' block picker.
    Blocks(BlockPicker),
    /// Positions `first..first + len`, in order, `next` the one to give now.
    Sequential {
        first: u64,
        len: u64,
        next: u64,
    },
    Gaussian(Gaussian),
}

/// One worker's key choices: each [`next`](Self::next) is an index in
/// `minimum..=maximum`, O(1) whatever the number of keys.
#[derive(Debug, Clone)]
pub struct KeyPicker {
    minimum: u64,
    maximum: u64,
    pick: Pick,
}

impl KeyPicker {
    /// The picker of worker `worker` (counted from 0) of `workers`. Only the sequential pattern
    /// depends on the worker: each walks its own slice of the keys, so together they cover
    /// the space once per lap. Uniform and Zipf draw from the whole space, Zipf with the same
    /// hot keys for every worker.
    pub fn new(
        pattern: &KeyPattern,
        keys: &KeySpace,
        worker: usize,
        workers: usize,
    ) -> Result<Self, String> {
        keys.validate()?;
        pattern.validate()?;
        if worker >= workers {
            return Err(format!("worker {worker} of {workers} does not exist"));
        }
        let count = keys.count();
        let pick = match *pattern {
            KeyPattern::Uniform => {
                Pick::Blocks(BlockPicker::new(&Distribution::Uniform, count, false)?)
            }
            // Scrambled so that the hot keys are spread over the space rather than all at its
            // start: the permutation is fixed by the count alone, so every worker (and every
            // run) shares one set of hot keys.
            KeyPattern::Zipf { exp } => Pick::Blocks(BlockPicker::new(
                &Distribution::Zipf { theta: exp },
                count,
                true,
            )?),
            KeyPattern::Sequential => {
                // Worker w of W gets positions [count·w/W, count·(w+1)/W); in u128 because
                // count·w can pass 2^64. With more workers than keys some slices would be
                // empty: those workers get the one key their slice starts at.
                let (w, n) = (worker as u128, workers as u128);
                let first = (u128::from(count) * w / n) as u64;
                let end = (u128::from(count) * (w + 1) / n) as u64;
                Pick::Sequential {
                    first,
                    len: (end - first).max(1),
                    next: 0,
                }
            }
            KeyPattern::Gaussian { median, stddev } => {
                let median = match median {
                    Some(m) if m < keys.minimum || m > keys.maximum => {
                        return Err(format!(
                            "the gaussian median {m} is outside the key space {}..={}",
                            keys.minimum, keys.maximum
                        ));
                    }
                    Some(m) => m as f64,
                    // The middle of the space; exact for spaces up to 2^53 keys.
                    None => keys.minimum as f64 + (count - 1) as f64 / 2.0,
                };
                Pick::Gaussian(Gaussian {
                    median,
                    stddev: stddev.unwrap_or(count as f64 / 6.0),
                    low: keys.minimum as f64,
                    high: keys.maximum as f64,
                    spare: None,
                })
            }
        };
        Ok(KeyPicker {
            minimum: keys.minimum,
            maximum: keys.maximum,
            pick,
        })
    }

    /// The next key's index, in `minimum..=maximum`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match &mut self.pick {
            Pick::Blocks(blocks) => self.minimum + blocks.next(rng),
            Pick::Sequential { first, len, next } => {
                let position = *first + *next;
                *next += 1;
                if *next == *len {
                    *next = 0;
                }
                self.minimum + position
            }
            Pick::Gaussian(g) => g.next(rng, (self.minimum, self.maximum)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Value sizes
// ---------------------------------------------------------------------------------------------

/// The forms [`ValueSizes::from_str`] accepts, for error messages.
const SIZE_FORMS: &str = "expected a size (100, 4k), weighted ranges MIN-MAX:WEIGHT,... \
                          (e.g. 4-100:1,1k-2k:1,5k-20k:1; MIN-MAX alone is one range), \
                          weighted sizes SIZE:WEIGHT,... (e.g. 100:3,1k:1), or etc \
                          (Facebook's ETC pool); sizes from 1 byte to 64 MiB, weights > 0";

/// One entry of a [`SizeMix`]: sizes `min..=max`, drawn uniformly, chosen with a weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeRange {
    /// The smallest size, in bytes.
    pub min: u32,
    /// The largest size, in bytes (equal to `min` for a single size).
    pub max: u32,
    /// The entry's weight (> 0); the shares are the weights over their sum.
    pub weight: f64,
}

/// Weighted size ranges, checked, with their cumulative shares precomputed so a draw is a
/// binary search.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMix {
    entries: Vec<SizeRange>,
    /// `cumulative[i]`: the share of entries `0..=i`; the last is exactly 1.
    cumulative: Vec<f64>,
}

impl SizeMix {
    /// Checks the entries (at least one; sizes 1 to [`MAX_VALUE_SIZE`]; `min <= max`;
    /// weights finite and > 0) and precomputes the shares.
    pub fn new(entries: Vec<SizeRange>) -> Result<Self, String> {
        if entries.is_empty() {
            return Err(format!("the list of sizes is empty; {SIZE_FORMS}"));
        }
        for e in &entries {
            check_size(e.min)?;
            check_size(e.max)?;
            if e.min > e.max {
                return Err(format!(
                    "the range {}-{} runs backwards; give MIN-MAX with MIN <= MAX",
                    e.min, e.max
                ));
            }
            if !(e.weight.is_finite() && e.weight > 0.0) {
                return Err(format!(
                    "the weight {} of {}-{} must be a number > 0 (leave the entry out rather \
                     than give it weight 0)",
                    e.weight, e.min, e.max
                ));
            }
        }
        let total: f64 = entries.iter().map(|e| e.weight).sum();
        if !total.is_finite() {
            return Err(format!(
                "the weights add up to {total}; use smaller weights"
            ));
        }
        let mut sum = 0.0;
        let mut cumulative: Vec<f64> = entries
            .iter()
            .map(|e| {
                sum += e.weight;
                sum / total
            })
            .collect();
        // Rounding may leave the last share a hair under 1; a draw in [0, 1) must always find
        // an entry.
        *cumulative.last_mut().expect("entries are not empty") = 1.0;
        Ok(SizeMix {
            entries,
            cumulative,
        })
    }

    /// The entries, in the order given.
    pub fn entries(&self) -> &[SizeRange] {
        &self.entries
    }

    /// The entry whose share covers `u` in `[0, 1)`.
    #[inline]
    fn choose(&self, u: f64) -> &SizeRange {
        // The first entry whose cumulative share passes u; the last share is 1 > u.
        let i = self.cumulative.partition_point(|&c| c <= u);
        &self.entries[i.min(self.entries.len() - 1)]
    }

    /// The largest size of any entry.
    fn max(&self) -> u32 {
        self.entries.iter().map(|e| e.max).max().unwrap_or(0)
    }
}

/// Sizes of 0 come only from ETC; above [`MAX_VALUE_SIZE`] is refused.
fn check_size(size: u32) -> Result<(), String> {
    if size == 0 {
        Err(format!(
            "a value size of 0 is not allowed here; {SIZE_FORMS}"
        ))
    } else if size > MAX_VALUE_SIZE {
        Err(format!(
            "a value size of {size} bytes is over the limit of {MAX_VALUE_SIZE} (64 MiB)"
        ))
    } else {
        Ok(())
    }
}

/// The size of each key's value (`--value-size`, memtier's `--data-size`,
/// `--data-size-range` and `--data-size-list`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ValueSizes {
    /// Every value this many bytes (`100`, `1k`).
    Fixed(u32),
    /// A range chosen by weight, then a size uniformly within it, both ends included
    /// (`4-100:1,1k-2k:1`; memtier's `--data-size-range=MIN-MAX` is one range of weight 1).
    Ranges(SizeMix),
    /// A size chosen by weight (`100:3,1k:1`, memtier's `--data-size-list`); every entry's
    /// `min` equals its `max`.
    List(SizeMix),
    /// Facebook's ETC pool: sizes 0-14 from a table, then a generalized Pareto, capped at
    /// [`ETC_MAX`] (see the module docs).
    Etc,
}

impl ValueSizes {
    /// Weighted ranges `(min, max, weight)`, checked.
    pub fn ranges(ranges: &[(u32, u32, f64)]) -> Result<Self, String> {
        let entries = ranges
            .iter()
            .map(|&(min, max, weight)| SizeRange { min, max, weight })
            .collect();
        Ok(ValueSizes::Ranges(SizeMix::new(entries)?))
    }

    /// Weighted sizes `(size, weight)`, checked.
    pub fn list(sizes: &[(u32, f64)]) -> Result<Self, String> {
        let entries = sizes
            .iter()
            .map(|&(size, weight)| SizeRange {
                min: size,
                max: size,
                weight,
            })
            .collect();
        Ok(ValueSizes::List(SizeMix::new(entries)?))
    }

    /// The size of key `index`'s value: fixed by a hash of the index alone (not the run's
    /// seed), so every run and every `prepare`/`run` pair agree, and a get knows what size to
    /// expect. O(1): a hash, and for mixes a binary search over the entries.
    #[inline]
    pub fn size_of(&self, index: u64) -> u32 {
        match self {
            ValueSizes::Fixed(size) => *size,
            ValueSizes::Ranges(mix) | ValueSizes::List(mix) => {
                let e = mix.choose(unit(hash(index, SALT_SIZE_PICK)));
                let span = u64::from(e.max - e.min) + 1;
                e.min + scale(hash(index, SALT_SIZE_WITHIN), span) as u32
            }
            ValueSizes::Etc => etc_size(
                unit(hash(index, SALT_SIZE_PICK)),
                unit(hash(index, SALT_SIZE_WITHIN)),
            ),
        }
    }

    /// The largest size any key can have.
    pub fn max(&self) -> u32 {
        match self {
            ValueSizes::Fixed(size) => *size,
            ValueSizes::Ranges(mix) | ValueSizes::List(mix) => mix.max(),
            ValueSizes::Etc => ETC_MAX,
        }
    }

    /// The exact total bytes of the values of every key in `keys`: [`size_of`](Self::size_of)
    /// summed over the space (a few milliseconds per million keys; a multiplication for fixed
    /// sizes). Saturates at `u64::MAX`.
    pub fn total(&self, keys: &KeySpace) -> u64 {
        if let ValueSizes::Fixed(size) = self {
            return keys.count().saturating_mul(u64::from(*size));
        }
        (keys.minimum..=keys.maximum).fold(0u64, |sum, i| {
            sum.saturating_add(u64::from(self.size_of(i)))
        })
    }
}

/// An ETC size from two independent uniforms in `[0, 1)`: `pick` walks the table (as
/// mutilate's discrete generator does), and past it `tail` goes through the inverse of the
/// generalized Pareto's distribution function, `x = μ + σ·(v^-k - 1)/k` with `v = 1 - tail`
/// in `(0, 1]`, rounded down and capped.
#[inline]
fn etc_size(pick: f64, tail: f64) -> u32 {
    let mut sum = 0.0;
    for (size, p) in ETC_TABLE.iter().enumerate() {
        sum += p;
        if pick < sum {
            return size as u32;
        }
    }
    let v = 1.0 - tail;
    let x = ETC_PARETO_LOCATION
        + ETC_PARETO_SCALE * (v.powf(-ETC_PARETO_SHAPE) - 1.0) / ETC_PARETO_SHAPE;
    // `as` saturates, and the cap keeps it below memcached's item limit.
    (x as u32).min(ETC_MAX)
}

/// Parses one size of a list or range, with the text in the message.
fn parse_one_size(text: &str) -> Result<u32, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!(
            "a size is missing (a stray '-' or ','?); {SIZE_FORMS}"
        ));
    }
    let bytes = parse_size("value-size", text).map_err(|e| format!("size {text:?}: {}", e.hint))?;
    let size = u32::try_from(bytes).unwrap_or(u32::MAX);
    check_size(size).map_err(|e| format!("size {text:?}: {e}"))?;
    Ok(size)
}

impl FromStr for ValueSizes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("etc") {
            return Ok(ValueSizes::Etc);
        }
        if s.is_empty() {
            return Err(format!("no value size given; {SIZE_FORMS}"));
        }
        if !s.contains([',', ':', '-']) {
            return Ok(ValueSizes::Fixed(parse_one_size(s)?));
        }
        let mut entries = Vec::new();
        let mut any_range = false;
        for entry in s.split(',') {
            let entry = entry.trim();
            if entry.is_empty() {
                return Err(format!(
                    "an entry of {s:?} is empty (a stray ','?); {SIZE_FORMS}"
                ));
            }
            let (sizes, weight) = match entry.split_once(':') {
                Some((sizes, w)) => {
                    let w = w.trim();
                    let weight = w.parse::<f64>().map_err(|_| {
                        format!("weight {w:?} of {entry:?} is not a number; {SIZE_FORMS}")
                    })?;
                    (sizes, weight)
                }
                // memtier's --data-size-range=MIN-MAX has no weight; nor need a list's.
                None => (entry, 1.0),
            };
            let (min, max) = match sizes.split_once('-') {
                Some((a, b)) => {
                    any_range = true;
                    (parse_one_size(a)?, parse_one_size(b)?)
                }
                None => {
                    let size = parse_one_size(sizes)?;
                    (size, size)
                }
            };
            entries.push(SizeRange { min, max, weight });
        }
        let mix = SizeMix::new(entries)?;
        Ok(if any_range {
            ValueSizes::Ranges(mix)
        } else {
            ValueSizes::List(mix)
        })
    }
}

impl fmt::Display for ValueSizes {
    /// The canonical form, in bytes, which parses back to the same value: ranges always as
    /// `MIN-MAX:WEIGHT` (even when MIN = MAX, so they stay ranges), list entries as
    /// `SIZE:WEIGHT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSizes::Fixed(size) => write!(f, "{size}"),
            ValueSizes::Etc => write!(f, "etc"),
            ValueSizes::Ranges(mix) | ValueSizes::List(mix) => {
                let ranges = matches!(self, ValueSizes::Ranges(_));
                for (i, e) in mix.entries().iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    // `{}` on f64 is the shortest text that parses back to the same weight.
                    if ranges || e.min != e.max {
                        write!(f, "{}-{}:{}", e.min, e.max, e.weight)?;
                    } else {
                        write!(f, "{}:{}", e.min, e.weight)?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl From<ValueSizes> for String {
    fn from(sizes: ValueSizes) -> String {
        sizes.to_string()
    }
}

impl TryFrom<String> for ValueSizes {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

// ---------------------------------------------------------------------------------------------
// Value bytes
// ---------------------------------------------------------------------------------------------

/// Values start at offsets in `0..2^22` (4 MiB): a window of a few MiB keeps the pattern quick
/// to build (milliseconds) and small beside the cache under test, and wide enough that every
/// key of a space of up to 4 Mi keys has an offset of its own.
const WINDOW_BITS: u32 = 22;
const VALUE_WINDOW: usize = 1 << WINDOW_BITS;

/// The offset of key `index`'s value: a bijection of `index mod 2^22`, so keys whose indexes
/// differ by less than 2^22 never share an offset, and neighbouring keys land far apart.
/// Each step maps 22-bit numbers one-to-one (a multiplication by an odd number modulo 2^22,
/// an xor with a right shift of itself), and the low bits of a product depend only on the low
/// bits of its factors, so only `index mod 2^22` matters.
#[inline]
fn value_offset(index: u64) -> usize {
    let mask = (VALUE_WINDOW - 1) as u64;
    let mut x = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
    x ^= x >> 11;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
    x ^= x >> 12;
    x as usize
}

/// The seed of the pattern: fixed, so the bytes are the same in every run and build.
const PATTERN_SEED: u64 = 0x7065_7266_6c61_6221; // "perflab!"

/// The bytes of every value, without storing them per key: one pseudo-random buffer (4 MiB
/// plus the largest value), built once from a fixed seed, of which each value is a slice at
/// an offset fixed by a hash of its key's index. A get can then compare the bytes it received
/// with what any set of that key wrote, in this run or another. Keys whose indexes differ by
/// less than 2^22 start at different offsets, so their values (of 8 bytes or more) differ
/// but for a chance of 2^-64: a reply carrying another key's value is caught. Shared by the
/// workers (it is `Send + Sync`; put it in an `Arc`).
pub struct Values {
    pattern: Box<[u8]>,
    max_size: u32,
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the megabytes of the pattern.
        f.debug_struct("Values")
            .field("max_size", &self.max_size)
            .field("pattern_bytes", &self.pattern.len())
            .finish()
    }
}

impl Values {
    /// The pattern for values of up to `max_size` bytes (give [`ValueSizes::max`]). The bytes
    /// of a value do not depend on `max_size`: the buffer is a prefix of one fixed stream.
    pub fn new(max_size: u32) -> Self {
        let mut pattern = vec![0u8; VALUE_WINDOW + max_size as usize].into_boxed_slice();
        let mut rng = Rng::new(PATTERN_SEED);
        for chunk in pattern.chunks_mut(8) {
            let bytes = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Values { pattern, max_size }
    }

    /// The largest value this pattern serves.
    pub fn max_size(&self) -> u32 {
        self.max_size
    }

    /// The `size` bytes of key `index`'s value.
    ///
    /// # Panics
    ///
    /// When `size` is above the `max_size` the pattern was built for: a value cut short would
    /// be sent with the wrong bytes, so this is a bug to fix, not a case to serve.
    #[inline]
    pub fn of(&self, index: u64, size: u32) -> &[u8] {
        assert!(
            size <= self.max_size,
            "a value of {size} bytes from a pattern built for at most {}",
            self.max_size
        );
        let offset = value_offset(index);
        &self.pattern[offset..offset + size as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn keys(minimum: u64, maximum: u64) -> KeySpace {
        KeySpace::new(DEFAULT_KEY_PREFIX, minimum, maximum).unwrap()
    }

    /// `draws` picks of worker 0 of 1, counted per index.
    fn counts(pattern: &KeyPattern, keys: &KeySpace, draws: usize, seed: u64) -> Vec<u64> {
        let mut picker = KeyPicker::new(pattern, keys, 0, 1).unwrap();
        let mut rng = Rng::new(seed);
        let mut counts = vec![0u64; keys.count() as usize];
        for _ in 0..draws {
            let k = picker.next(&mut rng);
            assert!((keys.minimum..=keys.maximum).contains(&k), "{pattern}: {k}");
            counts[(k - keys.minimum) as usize] += 1;
        }
        counts
    }

    // --- key space ------------------------------------------------------------------------

    #[test]
    fn write_key_writes_prefix_and_digits_without_reallocating() {
        let space = KeySpace::default();
        let mut out = Vec::new();
        space.write_key(0, &mut out);
        assert_eq!(out, b"perflab:0");
        let (ptr, cap) = (out.as_ptr(), out.capacity());
        for (index, want) in [
            (9u64, "perflab:9"),
            (10, "perflab:10"),
            (99, "perflab:99"),
            (100, "perflab:100"),
            (12_345, "perflab:12345"),
            (100_000, "perflab:100000"),
            (u64::MAX, "perflab:18446744073709551615"),
        ] {
            space.write_key(index, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), want);
            // The first call reserved room for the longest key: no allocation since.
            assert_eq!((out.as_ptr(), out.capacity()), (ptr, cap));
        }
        // Every index agrees with the standard formatting.
        let mut rng = Rng::new(4);
        for _ in 0..10_000 {
            let i = rng.next_u64() >> rng.below(64);
            space.write_key(i, &mut out);
            assert_eq!(out, format!("perflab:{i}").as_bytes());
        }
        let bare = KeySpace::new("", 0, 10).unwrap();
        bare.write_key(7, &mut out);
        assert_eq!(out, b"7");
    }

    #[test]
    fn key_space_counts_and_checks() {
        assert_eq!(KeySpace::default().count(), 100_001);
        assert_eq!(keys(5, 5).count(), 1);
        assert_eq!(keys(1, u64::MAX).count(), u64::MAX);
        let err = KeySpace::new("k", 10, 9).unwrap_err();
        assert!(err.contains("above the key maximum"), "{err}");
        let err = KeySpace::new("k", 0, u64::MAX).unwrap_err();
        assert!(err.contains("2^64"), "{err}");
        let err = KeySpace::new("my key:", 0, 9).unwrap_err();
        assert!(err.contains("spaces or control"), "{err}");
        let err = KeySpace::new(&"x".repeat(231), 0, 9).unwrap_err();
        assert!(err.contains("at most 230 bytes"), "{err}");
        assert!(KeySpace::new(&"x".repeat(230), 0, 9).is_ok());
    }

    // --- key patterns ---------------------------------------------------------------------

    #[test]
    fn key_pattern_parses_names_letters_and_round_trips() {
        let zipf1 = KeyPattern::Zipf { exp: 1.0 };
        let gauss = KeyPattern::Gaussian {
            median: None,
            stddev: None,
        };
        for (text, want) in [
            ("uniform", KeyPattern::Uniform),
            ("R", KeyPattern::Uniform),
            ("r", KeyPattern::Uniform),
            ("R:R", KeyPattern::Uniform),
            ("sequential", KeyPattern::Sequential),
            ("S", KeyPattern::Sequential),
            ("Zipf", zipf1.clone()),
            ("Z", zipf1.clone()),
            ("Z:Z", zipf1.clone()),
            ("zipf:0.99", KeyPattern::Zipf { exp: 0.99 }),
            ("gaussian", gauss.clone()),
            ("G", gauss),
            (
                "gaussian:median=500",
                KeyPattern::Gaussian {
                    median: Some(500),
                    stddev: None,
                },
            ),
            (
                "gaussian: stddev=12.5 , median=7",
                KeyPattern::Gaussian {
                    median: Some(7),
                    stddev: Some(12.5),
                },
            ),
        ] {
            let got: KeyPattern = text.parse().unwrap();
            assert_eq!(got, want, "{text}");
            let again: KeyPattern = got.to_string().parse().unwrap();
            assert_eq!(again, got, "{text} -> {got}");
        }
        let stddev_only = KeyPattern::Gaussian {
            median: None,
            stddev: Some(3.0),
        };
        assert_eq!(
            stddev_only.to_string().parse::<KeyPattern>().unwrap(),
            stddev_only
        );
    }

    #[test]
    fn key_pattern_errors_name_the_forms() {
        for (text, says) in [
            ("hot", "unknown key pattern"),
            ("", "unknown key pattern"),
            ("zipf:0", "must be a number > 0"),
            ("zipf:-1", "must be a number > 0"),
            ("zipf:inf", "must be a number > 0"),
            ("zipf:x", "not a number"),
            ("S:R", "SET:GET"),
            ("uniform:3", "takes no parameters"),
            ("gaussian:stddev=0", "standard deviation"),
            ("gaussian:median=-3", "not a key index"),
            ("gaussian:mean=3", "unknown or repeated"),
            ("gaussian:median=1,median=2", "unknown or repeated"),
            ("gaussian:5", "NAME=VALUE"),
        ] {
            let err = text.parse::<KeyPattern>().unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
            assert!(err.contains("expected uniform (or R)"), "{text}: {err}");
        }
    }

    #[test]
    fn picker_checks_its_arguments() {
        let space = keys(100, 200);
        let off_range = KeyPattern::Gaussian {
            median: Some(99),
            stddev: None,
        };
        let err = KeyPicker::new(&off_range, &space, 0, 1).unwrap_err();
        assert!(err.contains("outside the key space 100..=200"), "{err}");
        let err = KeyPicker::new(&KeyPattern::Uniform, &space, 2, 2).unwrap_err();
        assert!(err.contains("does not exist"), "{err}");
        let bad = KeyPattern::Zipf { exp: 0.0 };
        assert!(KeyPicker::new(&bad, &space, 0, 1).is_err());
    }

    #[test]
    fn uniform_covers_the_space_evenly() {
        let space = keys(1000, 1099);
        let c = counts(&KeyPattern::Uniform, &space, 100_000, 1);
        // 1000 expected per key; a binomial count stays within ±200 (over 6 sd).
        assert!(c.iter().all(|&n| (800..1200).contains(&n)), "{c:?}");
    }

    #[test]
    fn zipf_concentrates_on_hot_keys_spread_over_the_space() {
        let space = KeySpace::default();
        let n = space.count() as usize;
        let draws = 300_000;
        let mut c = counts(&KeyPattern::Zipf { exp: 1.0 }, &space, draws, 2);
        // At exp 1 the hottest 1% of ranks get H(1000)/H(100001) ≈ 62% of the draws.
        let exact: f64 = (1..=n / 100).map(|k| 1.0 / k as f64).sum::<f64>()
            / (1..=n).map(|k| 1.0 / k as f64).sum::<f64>();
        let hottest: Vec<usize> = {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(c[i]));
            order.truncate(n / 100);
            order
        };
        let share = hottest.iter().map(|&i| c[i]).sum::<u64>() as f64 / draws as f64;
        assert!(
            share > 0.55 && (share - exact).abs() < 0.02,
            "{share} vs {exact}"
        );
        // The hot keys are spread over the space, not bunched at its start.
        let mut tenths = [0u32; 10];
        for &i in &hottest[..100] {
            tenths[i * 10 / n] += 1;
        }
        assert!(tenths.iter().all(|&t| (3..=20).contains(&t)), "{tenths:?}");
        // A lower exponent is flatter.
        c = counts(&KeyPattern::Zipf { exp: 0.5 }, &space, draws, 3);
        c.sort_unstable_by(|a, b| b.cmp(a));
        let flat = c[..n / 100].iter().sum::<u64>() as f64 / draws as f64;
        assert!(flat < share - 0.3, "{flat} vs {share}");
    }

    #[test]
    fn zipf_hot_keys_are_the_same_for_every_worker() {
        let space = keys(0, 9_999);
        let hottest = |worker: usize, seed: u64| {
            let mut p = KeyPicker::new(&KeyPattern::Zipf { exp: 1.2 }, &space, worker, 4).unwrap();
            let mut rng = Rng::new(seed);
            let mut c = vec![0u32; 10_000];
            for _ in 0..50_000 {
                c[p.next(&mut rng) as usize] += 1;
            }
            (0..10_000).max_by_key(|&i| c[i]).unwrap()
        };
        let first = hottest(0, 10);
        assert!((1..4).all(|w| hottest(w, 10 + w as u64) == first));
    }

    #[test]
    fn sequential_workers_walk_their_own_slices() {
        let space = keys(5, 14); // 10 keys over 3 workers: slices of 3, 3, 4
        let mut rng = Rng::new(0);
        let mut seen = Vec::new();
        for worker in 0..3 {
            let mut p = KeyPicker::new(&KeyPattern::Sequential, &space, worker, 3).unwrap();
            let lap: Vec<u64> = (0..10).map(|_| p.next(&mut rng)).collect();
            let len = [3, 3, 4][worker];
            let first = lap[0];
            // In order, contiguous, then around again.
            for (i, &k) in lap.iter().enumerate() {
                assert_eq!(k, first + (i % len) as u64, "worker {worker}: {lap:?}");
            }
            seen.extend_from_slice(&lap[..len]);
        }
        seen.sort_unstable();
        assert_eq!(seen, (5..=14).collect::<Vec<u64>>(), "every key once");
        // More workers than keys: each still gets a key.
        let tiny = keys(0, 1);
        for worker in 0..5 {
            let mut p = KeyPicker::new(&KeyPattern::Sequential, &tiny, worker, 5).unwrap();
            let k = p.next(&mut rng);
            assert!(k <= 1 && p.next(&mut rng) == k);
        }
        // A huge space: slice bounds computed without overflow.
        let huge = keys(1, u64::MAX);
        let mut p = KeyPicker::new(&KeyPattern::Sequential, &huge, 2, 3).unwrap();
        let k = p.next(&mut rng);
        assert_eq!(k, 1 + (u128::from(u64::MAX) * 2 / 3) as u64);
        assert_eq!(p.next(&mut rng), k + 1);
    }

    #[test]
    fn gaussian_stays_in_range_and_centred() {
        let space = keys(1_000, 100_999); // 100,000 keys
        let draws = 200_000;
        let pattern = KeyPattern::Gaussian {
            median: None,
            stddev: None,
        };
        let c = counts(&pattern, &space, draws, 5);
        let centre = 1_000.0 + 99_999.0 / 2.0;
        let sd = 100_000.0 / 6.0;
        let mean = c
            .iter()
            .enumerate()
            .map(|(i, &n)| (1_000 + i) as f64 * n as f64)
            .sum::<f64>()
            / draws as f64;
        assert!((mean - centre).abs() < 200.0, "{mean} vs {centre}");
        // About 68% within one standard deviation (a little more, the tails being cut).
        let within: u64 = c
            .iter()
            .enumerate()
            .filter(|&(i, _)| ((1_000 + i) as f64 - centre).abs() <= sd)
            .map(|(_, &n)| n)
            .sum();
        let share = within as f64 / draws as f64;
        assert!((0.67..0.70).contains(&share), "{share}");
        // An off-centre median with a wide spread: still in range, not piled on the ends.
        let edge = KeyPattern::Gaussian {
            median: Some(1_000),
            stddev: Some(50_000.0),
        };
        let c = counts(&edge, &space, draws, 6);
        let ends = c[0] + c[c.len() - 1];
        assert!(ends < 20, "{ends}");
        // A spread that dwarfs the space: the fallback keeps it in range.
        let tiny = keys(10, 12);
        let wide = KeyPattern::Gaussian {
            median: Some(10),
            stddev: Some(1e12),
        };
        let c = counts(&wide, &tiny, 3_000, 7);
        assert!(c.iter().all(|&n| n > 800), "{c:?}");
    }

    // --- value sizes ----------------------------------------------------------------------

    #[test]
    fn value_sizes_parse_and_round_trip() {
        let cases: Vec<(&str, ValueSizes)> = vec![
            ("100", ValueSizes::Fixed(100)),
            ("1k", ValueSizes::Fixed(1024)),
            (" 64MiB ", ValueSizes::Fixed(64 << 20)),
            ("etc", ValueSizes::Etc),
            ("ETC", ValueSizes::Etc),
            (
                "4-100:1,1k-2k:1,5k-20k:1",
                ValueSizes::ranges(&[(4, 100, 1.0), (1024, 2048, 1.0), (5120, 20480, 1.0)])
                    .unwrap(),
            ),
            ("32-64", ValueSizes::ranges(&[(32, 64, 1.0)]).unwrap()),
            ("8-8:2.5", ValueSizes::ranges(&[(8, 8, 2.5)]).unwrap()),
            (
                "100:2, 4k:0.5",
                ValueSizes::list(&[(100, 2.0), (4096, 0.5)]).unwrap(),
            ),
            ("100:1", ValueSizes::list(&[(100, 1.0)]).unwrap()),
            (
                "100,200",
                ValueSizes::list(&[(100, 1.0), (200, 1.0)]).unwrap(),
            ),
            (
                "100:1,200-300:3",
                ValueSizes::ranges(&[(100, 100, 1.0), (200, 300, 3.0)]).unwrap(),
            ),
        ];
        for (text, want) in cases {
            let got: ValueSizes = text.parse().unwrap();
            assert_eq!(got, want, "{text}");
            let shown = got.to_string();
            assert_eq!(
                shown.parse::<ValueSizes>().unwrap(),
                got,
                "{text} -> {shown}"
            );
            // And through serde, as a record stores it.
            let json = serde_json::to_string(&got).unwrap();
            assert_eq!(
                serde_json::from_str::<ValueSizes>(&json).unwrap(),
                got,
                "{json}"
            );
        }
        assert_eq!(
            "4-100:1,1k-2k:1".parse::<ValueSizes>().unwrap().to_string(),
            "4-100:1,1024-2048:1"
        );
        assert_eq!(
            ValueSizes::list(&[(100, 0.1)]).unwrap().to_string(),
            "100:0.1"
        );
    }

    #[test]
    fn value_size_errors_are_clear() {
        for (text, says) in [
            ("", "no value size"),
            ("0", "size of 0"),
            ("0-10", "size of 0"),
            ("100-50", "runs backwards"),
            ("4-100:0", "weight 0"),
            ("4-100:-1", "must be a number > 0"),
            ("100:x", "not a number"),
            ("100:NaN", "must be a number > 0"),
            ("100:1e308,200:1e308", "add up to"),
            ("65m", "over the limit"),
            ("1-2g:1", "over the limit"),
            ("99999999999", "over the limit"),
            (",", "empty"),
            ("100:1,", "empty"),
            ("100:1,,200:1", "empty"),
            ("-100", "a size is missing"),
            ("1x", "unknown size unit"),
            ("1.5", "whole number"),
            ("big", "size \"big\""),
        ] {
            let err = text.parse::<ValueSizes>().unwrap_err();
            assert!(err.contains(says), "{text:?}: {err}");
        }
        assert!(ValueSizes::list(&[]).unwrap_err().contains("empty"));
        assert!(
            ValueSizes::ranges(&[(1, 2, 0.0)])
                .unwrap_err()
                .contains("weight 0")
        );
    }

    #[test]
    fn size_of_is_deterministic_and_in_range() {
        let specs = [
            "100",
            "4-100:1,1k-2k:1,5k-20k:1",
            "100:3,1k:1",
            "etc",
            "7-7",
        ];
        for text in specs {
            let a: ValueSizes = text.parse().unwrap();
            let b: ValueSizes = text.parse().unwrap();
            let allowed: Box<dyn Fn(u32) -> bool> = match &a {
                ValueSizes::Fixed(n) => {
                    let n = *n;
                    Box::new(move |s| s == n)
                }
                ValueSizes::Ranges(mix) | ValueSizes::List(mix) => {
                    let entries = mix.entries().to_vec();
                    Box::new(move |s| entries.iter().any(|e| (e.min..=e.max).contains(&s)))
                }
                ValueSizes::Etc => Box::new(|s| s <= ETC_MAX),
            };
            for i in (0..20_000).chain([u64::MAX, u64::MAX - 1]) {
                let s = a.size_of(i);
                assert_eq!(s, b.size_of(i), "{text} key {i}");
                assert!(allowed(s) && s <= a.max(), "{text} key {i}: {s}");
            }
        }
        // Fixed by the index alone: known answers that must not change between builds (a
        // change would make a cache prepared by one build disagree with a run of the next).
        let mix: ValueSizes = "1-1000".parse().unwrap();
        let first: Vec<u32> = (0..6).map(|i| mix.size_of(i)).collect();
        assert_eq!(first, [875, 234, 252, 997, 587, 765]);
        assert_eq!(mix.max(), 1000);
        assert_eq!(ValueSizes::Etc.max(), ETC_MAX);
    }

    #[test]
    fn weighted_ranges_have_their_shares() {
        let sizes: ValueSizes = "4-100:1,1k-2k:1,5k-20k:2".parse().unwrap();
        let n = 100_000u64;
        let mut in_range = [0u64; 3];
        let mut sums = [0f64; 3];
        let mut ends = [false; 4];
        for i in 0..n {
            let s = sizes.size_of(i);
            let r = match s {
                4..=100 => 0,
                1024..=2048 => 1,
                5120..=20480 => 2,
                _ => panic!("size {s} outside every range"),
            };
            in_range[r] += 1;
            sums[r] += f64::from(s);
            ends[0] |= s == 4;
            ends[1] |= s == 100;
            ends[2] |= s == 5120;
            ends[3] |= s == 20480;
        }
        // Shares 1/4, 1/4, 1/2; a binomial share over 100k keys has sd under 0.0016.
        for (got, want) in in_range.iter().zip([0.25, 0.25, 0.5]) {
            let share = *got as f64 / n as f64;
            assert!((share - want).abs() < 0.008, "{in_range:?}");
        }
        // Uniform within each range: its mean is the midpoint, both ends included.
        for (r, mid) in [52.0, 1536.0, 12800.0].iter().enumerate() {
            let mean = sums[r] / in_range[r] as f64;
            assert!(
                (mean - mid).abs() / mid < 0.02,
                "range {r}: {mean} vs {mid}"
            );
        }
        assert!(ends.iter().all(|&e| e), "{ends:?}");

        let list: ValueSizes = "100:3,1k:1".parse().unwrap();
        let small = (0..n).filter(|&i| list.size_of(i) == 100).count() as f64 / n as f64;
        assert!((small - 0.75).abs() < 0.008, "{small}");
        assert!((0..n).all(|i| matches!(list.size_of(i), 100 | 1024)));
    }

    #[test]
    fn etc_matches_mutilates_table_and_the_pareto() {
        let n = 400_000u64;
        let mut table_counts = [0u64; 15];
        let mut sum = 0f64;
        let mut tail_min = u32::MAX;
        for i in 0..n {
            let s = ValueSizes::Etc.size_of(i);
            sum += f64::from(s);
            if s < 15 {
                table_counts[s as usize] += 1;
            } else {
                tail_min = tail_min.min(s);
            }
        }
        let table_share: f64 = ETC_TABLE.iter().sum();
        assert!((table_share - 0.44155).abs() < 1e-9);
        let under_15 = table_counts.iter().sum::<u64>() as f64 / n as f64;
        assert!(
            (under_15 - table_share).abs() < 0.004,
            "{under_15} vs {table_share}"
        );
        for (size, (&c, &p)) in table_counts.iter().zip(&ETC_TABLE).enumerate() {
            let share = c as f64 / n as f64;
            // Five binomial standard deviations, and a floor for the rarest sizes.
            let tolerance = 5.0 * (p * (1.0 - p) / n as f64).sqrt() + 1e-4;
            assert!((share - p).abs() < tolerance, "size {size}: {share} vs {p}");
        }
        assert_eq!(tail_min, 15, "the Pareto starts where the table ends");
        // The mean implied by the table and the Pareto: Σ s·p(s), plus the tail's share of the
        // Pareto's mean μ + σ/(1 - k), less half a byte for rounding down (the cap's effect is
        // below 10^-3 bytes). The Pareto's variance is finite (k < 1/2), its sample mean over
        // 223k tail keys within about 1.3 B (one sd) of its expectation.
        let table_mean: f64 = ETC_TABLE
            .iter()
            .enumerate()
            .map(|(s, p)| s as f64 * p)
            .sum();
        let pareto_mean = ETC_PARETO_LOCATION + ETC_PARETO_SCALE / (1.0 - ETC_PARETO_SHAPE);
        let expected = table_mean + (1.0 - table_share) * (pareto_mean - 0.5);
        let mean = sum / n as f64;
        assert!((expected - 194.2).abs() < 0.5, "{expected}");
        assert!((mean - expected).abs() < 5.0, "{mean} vs {expected}");
        // The Pareto's median μ + σ(2^k - 1)/k ≈ 183 B, checked against the tail's keys.
        let median = ETC_PARETO_LOCATION
            + ETC_PARETO_SCALE * (2f64.powf(ETC_PARETO_SHAPE) - 1.0) / ETC_PARETO_SHAPE;
        let (below, tail): (u64, u64) = (0..n)
            .map(|i| ValueSizes::Etc.size_of(i))
            .filter(|&s| s >= 15)
            .fold((0, 0), |(b, t), s| {
                (b + u64::from(f64::from(s) < median.floor()), t + 1)
            });
        let share = below as f64 / tail as f64;
        assert!((share - 0.5).abs() < 0.01, "{share} below {median}");
    }

    #[test]
    fn etc_extremes_are_capped() {
        assert_eq!(etc_size(0.0, 0.0), 0);
        assert_eq!(etc_size(0.44, 0.0), 14);
        assert_eq!(etc_size(0.9999, 0.0), 15);
        // tail → 1 is the far end of the Pareto: capped, not overflowed.
        assert_eq!(etc_size(0.9999, 1.0 - f64::EPSILON), ETC_MAX);
        assert_eq!(etc_size(0.9999, 1.0), ETC_MAX);
    }

    #[test]
    fn total_sums_the_sizes_of_the_keys() {
        let space = keys(10, 5_009);
        assert_eq!(ValueSizes::Fixed(100).total(&space), 500_000);
        for text in ["4-100:1,1k-2k:1", "100:3,1k:1", "etc"] {
            let sizes: ValueSizes = text.parse().unwrap();
            let by_hand: u64 = (10..=5_009).map(|i| u64::from(sizes.size_of(i))).sum();
            assert_eq!(sizes.total(&space), by_hand, "{text}");
        }
        let huge = keys(1, u64::MAX);
        assert_eq!(ValueSizes::Fixed(2).total(&huge), u64::MAX);
    }

    // --- value bytes ----------------------------------------------------------------------

    #[test]
    fn values_are_deterministic_and_distinct() {
        fn shared<T: Send + Sync>() {}
        shared::<Values>();

        let a = Values::new(1_000);
        let b = Values::new(100_000);
        assert_eq!(a.max_size(), 1_000);
        for i in [0u64, 1, 2, 99_999, u64::MAX] {
            // The same bytes whatever the largest size the pattern was built for.
            assert_eq!(a.of(i, 1_000), b.of(i, 1_000), "key {i}");
            assert_eq!(a.of(i, 1_000).len(), 1_000);
            // A shorter value of the same key is a prefix of the longer one.
            assert_eq!(a.of(i, 10), &a.of(i, 1_000)[..10]);
            assert!(a.of(i, 0).is_empty());
        }
        let distinct: HashSet<&[u8]> = (0..10_000u64).map(|i| a.of(i, 16)).collect();
        assert_eq!(distinct.len(), 10_000);
        // Known bytes, for the same reason as the sizes' known answers.
        assert_eq!(a.of(0, 8), [59, 9, 217, 137, 5, 22, 12, 3]);
        assert_eq!(a.of(1, 8), [62, 210, 54, 164, 34, 4, 106, 82]);
        // Not a constant or trivial pattern: every byte value appears.
        let bytes: HashSet<u8> = a.of(7, 1_000).iter().copied().collect();
        assert!(bytes.len() > 240, "{}", bytes.len());
        assert_eq!(Values::new(ETC_MAX).of(3, ETC_MAX).len(), ETC_MAX as usize);
    }

    #[test]
    fn value_offsets_are_one_to_one_over_the_window() {
        let mut seen = vec![false; VALUE_WINDOW];
        for i in 0..VALUE_WINDOW as u64 {
            let at = value_offset(i);
            assert!(!seen[at], "key {i} shares offset {at}");
            seen[at] = true;
        }
        // Only the index modulo 2^22 matters; neighbours land far apart.
        assert_eq!(value_offset(5), value_offset(5 + (1 << 22)));
        let gaps: Vec<usize> = (0..100u64)
            .map(|i| value_offset(i).abs_diff(value_offset(i + 1)))
            .collect();
        assert!(gaps.iter().filter(|&&g| g < 4096).count() < 5, "{gaps:?}");
    }

    #[test]
    #[should_panic(expected = "built for at most 100")]
    fn values_refuse_sizes_past_their_maximum() {
        Values::new(100).of(1, 101);
    }
}
