//! PostgreSQL's pseudo-random generator (`src/common/pg_prng.c`, new in 15): Blackman and
//! Vigna's xoroshiro128** 1.0, seeded through splitmix64, bit for bit; and pgbench 15's
//! seeding of its generators from `--random-seed`, in pgbench's order, so a run given the
//! same seed draws the same numbers as pgbench does.
//!
//! pgbench seeds one base sequence with the seed, then draws the seed of every other
//! generator from it, in this order ([`Seeds`]):
//!
//! 1. each client's generator for the script's random functions (`CState.cs_func_rs`),
//!    client 0 first;
//! 2. the `:default_seed` variable (the hash functions' and `permute`'s default seed),
//!    unless `-D default_seed=...` defined it, in which case nothing is drawn;
//! 3. for each thread, thread 0 first: its generator choosing the next script by weight
//!    (`TState.ts_choose_rs`), its `--rate` schedule's (`ts_throttle_rs`) and its
//!    `--sampling-rate` log sampling's (`ts_sample_rs`).

use std::fmt;

/// One generator's state (`pg_prng_state`): 16 bytes, cloned to save and restore a
/// client's draws (pgbench reruns a transaction after a serialization failure with the
/// same draws). Not `Copy`, so that copying a generator, which repeats its draws, is
/// always written out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prng {
    s0: u64,
    s1: u64,
}

impl Prng {
    /// `pg_prng_seed`: the state from a 64-bit seed, through splitmix64.
    pub fn seeded(seed: u64) -> Prng {
        let mut sm = seed;
        let s0 = splitmix64(&mut sm);
        let s1 = splitmix64(&mut sm);
        // xoroshiro's one fixed point is all zeroes; pg_prng puts Knuth's LCG constants there.
        if s0 == 0 && s1 == 0 {
            return Prng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        Prng { s0, s1 }
    }

    /// `pg_prng_uint64`: the next 64 bits (xoroshiro128**).
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range`: uniform in `[rmin, rmax]` by bitmask rejection (each draw is
    /// shifted to the range's bit length, and redrawn while above it); `rmin` if the range
    /// is empty.
    pub fn range_u64(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax <= rmin {
            return rmin;
        }
        let range = rmax - rmin;
        let shift = range.leading_zeros();
        loop {
            let val = self.next_u64() >> shift;
            if val <= range {
                return rmin + val;
            }
        }
    }

    /// pgbench's `getrand`: uniform in `[lo, hi]`, both inclusive, as
    /// `lo + pg_prng_uint64_range(0, hi - lo)` (the difference taken as unsigned, so the
    /// whole 64-bit range works); `lo` when `hi <= lo`. The caller checks the bounds as
    /// `random()` does ([`super::functions`]).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo.wrapping_add(self.range_u64(0, hi.wrapping_sub(lo) as u64) as i64)
    }

    /// `pg_prng_double`: uniform in `[0, 1)`, the draw's top 52 bits.
    pub fn next_f64(&mut self) -> f64 {
        let v = self.next_u64();
        (v >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `--random-seed` as pgbench reads it: `time` (the default), `rand`, or an unsigned integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomSeed {
    /// The monotonic clock in microseconds (pgbench's `pg_time_now()`: on Linux,
    /// `CLOCK_MONOTONIC`, the time since boot).
    Time,
    /// 64 bits from the system's strong random source.
    Rand,
    Value(u64),
}

/// `--random-seed`'s value not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSeed(pub String);

impl fmt::Display for BadSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unrecognized random seed option \"{}\": expecting an unsigned integer, \"time\" or \"rand\"",
            self.0
        )
    }
}

impl std::error::Error for BadSeed {}

impl RandomSeed {
    /// pgbench's `set_random_seed`: `time` and `rand` exactly (lower case), or what
    /// `sscanf("%lu%c")` reads as one unsigned integer with nothing after it: leading white
    /// space and a sign allowed, a negative number wrapped (`-1` is 2^64-1), a too large
    /// one saturated to 2^64-1, a trailing space refused.
    pub fn parse(text: &str) -> Result<RandomSeed, BadSeed> {
        match text {
            "time" => return Ok(RandomSeed::Time),
            "rand" => return Ok(RandomSeed::Rand),
            _ => {}
        }
        let bad = || BadSeed(text.to_string());
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() && super::cnum::is_c_space(b[i]) {
            i += 1;
        }
        let negative = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut value: u64 = 0;
        let mut saturated = false;
        while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(v) => value = v,
                None => saturated = true,
            }
            i += 1;
        }
        if i == start || i != b.len() {
            return Err(bad());
        }
        if saturated {
            return Ok(RandomSeed::Value(u64::MAX));
        }
        Ok(RandomSeed::Value(if negative {
            value.wrapping_neg()
        } else {
            value
        }))
    }

    /// The seed itself: the clock or the random source read now.
    pub fn resolve(self) -> std::io::Result<u64> {
        match self {
            RandomSeed::Value(v) => Ok(v),
            RandomSeed::Time => Ok(monotonic_micros()),
            RandomSeed::Rand => {
                use std::io::Read;
                let mut bytes = [0u8; 8];
                std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
                Ok(u64::from_ne_bytes(bytes))
            }
        }
    }
}

/// Microseconds since boot, as pgbench's `pg_time_now()` reads `CLOCK_MONOTONIC`: here from
/// `/proc/uptime` (to its hundredth of a second, without `unsafe`), else the wall clock's.
fn monotonic_micros() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|text| {
            let seconds: f64 = text.split_whitespace().next()?.parse().ok()?;
            Some((seconds * 1e6) as u64)
        });
    uptime.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    })
}

/// One thread's generators, seeded in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRngs {
    /// Chooses each transaction's script by weight (`ts_choose_rs`, pgbench's
    /// `chooseScript`): `w = choose.range(0, total_weight - 1)`, then the first script
    /// whose running total of weights exceeds `w`.
    pub choose: Prng,
    /// Draws `--rate`'s Poisson schedule (`ts_throttle_rs`).
    pub throttle: Prng,
    /// Decides which transactions `--sampling-rate` logs (`ts_sample_rs`).
    pub sample: Prng,
}

/// Every generator and seed of a pgbench run, derived from `--random-seed` as pgbench 15
/// derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds {
    /// The `:random_seed` variable: the seed, as a signed integer.
    pub random_seed: i64,
    /// The `:default_seed` variable, or `None` when `-D default_seed` defined it.
    pub default_seed: Option<i64>,
    /// Each client's generator for the script's random functions (`cs_func_rs`).
    pub clients: Vec<Prng>,
    /// Each thread's generators.
    pub threads: Vec<ThreadRngs>,
}

impl Seeds {
    /// `threads` is the count pgbench runs, which it caps at `clients`;
    /// `default_seed_defined` is whether `-D default_seed=...` was given.
    pub fn new(
        random_seed: u64,
        clients: usize,
        threads: usize,
        default_seed_defined: bool,
    ) -> Seeds {
        let mut base = Prng::seeded(random_seed);
        let clients = (0..clients)
            .map(|_| Prng::seeded(base.next_u64()))
            .collect();
        let default_seed = (!default_seed_defined).then(|| base.next_u64() as i64);
        let threads = (0..threads)
            .map(|_| {
                let choose = Prng::seeded(base.next_u64());
                let throttle = Prng::seeded(base.next_u64());
                let sample = Prng::seeded(base.next_u64());
                ThreadRngs {
                    choose,
                    throttle,
                    sample,
                }
            })
            .collect();
        Seeds {
            random_seed: random_seed as i64,
            default_seed,
            clients,
            threads,
        }
    }
}

/// The clients pgbench gives thread `thread` of `threads`: consecutive, the remainder going
/// to the first threads (`(left + threads_left - 1) / threads_left` each).
pub fn thread_clients(clients: usize, threads: usize, thread: usize) -> std::ops::Range<usize> {
    let mut start = 0;
    for t in 0..threads.max(1) {
        let left = clients - start;
        let n = left.div_ceil(threads - t);
        if t == thread {
            return start..start + n;
        }
        start += n;
    }
    start..start
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xoroshiro128** from the reference implementation's state update, checked against
    /// splitmix64's published first output for seed 0 (0xE220A8397B1DCDAF).
    #[test]
    fn splitmix_matches_the_reference() {
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    /// pgbench 15, `--random-seed=5432`, one client: `random(1, 1000)` six times over two
    /// transactions gave 837 461 349 245 506 702, and `:default_seed` 7590783070443337668.
    #[test]
    fn client_draws_match_pgbench() {
        let seeds = Seeds::new(5432, 1, 1, false);
        let mut rng = seeds.clients[0].clone();
        let draws: Vec<u64> = (0..6).map(|_| 1 + rng.range_u64(0, 999)).collect();
        assert_eq!(draws, [837, 461, 349, 245, 506, 702]);
        assert_eq!(seeds.default_seed, Some(7590783070443337668));
        assert_eq!(seeds.random_seed, 5432);
    }

    /// pgbench 15, `--random-seed=5432 -c 3 -j 2` (and `-j 1`): each client's first three
    /// `random(1, 1000)`, and the `:default_seed` drawn after the three clients' seeds.
    #[test]
    fn several_clients_match_pgbench() {
        for threads in [1, 2] {
            let seeds = Seeds::new(5432, 3, threads, false);
            let firsts: Vec<Vec<u64>> = seeds
                .clients
                .iter()
                .map(|c| {
                    let mut r = c.clone();
                    (0..3).map(|_| 1 + r.range_u64(0, 999)).collect()
                })
                .collect();
            assert_eq!(firsts, [[837, 461, 349], [496, 437, 559], [311, 90, 785]]);
            assert_eq!(seeds.default_seed, Some(-1082569615652803502));
        }
    }

    /// pgbench 15, two scripts weighted 1 and 3, `-t 20 --random-seed=5432`: which script
    /// each transaction ran (`getrand(ts_choose_rs, 0, 3)`, script 0 on 0).
    #[test]
    fn script_choice_matches_pgbench() {
        let pick = |rng: &mut Prng| if rng.range_u64(0, 3) < 1 { '0' } else { '1' };
        let run = |seeds: &Seeds, thread: usize| -> String {
            let mut rng = seeds.threads[thread].choose.clone();
            (0..20).map(|_| pick(&mut rng)).collect()
        };
        // -c 1 -j 1
        assert_eq!(
            run(&Seeds::new(5432, 1, 1, false), 0),
            "10111111011111011011"
        );
        // -c 2 -j 2: thread 0 runs client 0, thread 1 client 1
        let two = Seeds::new(5432, 2, 2, false);
        assert_eq!(run(&two, 0), "11100010011011011011");
        assert_eq!(run(&two, 1), "11110101100111100111");
        // -D default_seed=3: no default seed drawn, so the threads' seeds come one earlier
        assert_eq!(
            run(&Seeds::new(5432, 1, 1, true), 0),
            "11110011001111110100"
        );
    }

    #[test]
    fn range_of_one_value_draws_nothing() {
        let mut a = Prng::seeded(1);
        let b = a.clone();
        assert_eq!(a.range_u64(7, 7), 7);
        assert_eq!(a, b);
        assert_eq!(a.range_u64(0, u64::MAX), b.clone().next_u64());
    }

    /// `range` is pgbench's `getrand`: client 0 under `--random-seed=5432` draws
    /// random(1, 1000) = 837 first; the whole 64-bit range is one draw.
    #[test]
    fn range_is_getrand() {
        let seeds = Seeds::new(5432, 1, 1, false);
        assert_eq!(seeds.clients[0].clone().range(1, 1000), 837);
        let mut a = Prng::seeded(9);
        let mut b = a.clone();
        assert_eq!(a.range(i64::MIN, i64::MAX), b.next_u64() as i64 ^ i64::MIN);
        assert_eq!(a.range(5, 5), 5);
        assert_eq!(a.range(5, 4), 5);
    }

    #[test]
    fn doubles_are_in_unit_interval() {
        let mut r = Prng::seeded(99);
        for _ in 0..10_000 {
            let d = r.next_f64();
            assert!((0.0..1.0).contains(&d));
        }
    }

    /// What pgbench 15 said for each `--random-seed` (its `:random_seed`, or a refusal).
    #[test]
    fn seed_option_reads_as_pgbench() {
        let ok = |s: &str| RandomSeed::parse(s).ok();
        assert_eq!(ok(" 7"), Some(RandomSeed::Value(7)));
        assert_eq!(ok("+7"), Some(RandomSeed::Value(7)));
        assert_eq!(ok("0"), Some(RandomSeed::Value(0)));
        assert_eq!(ok("-1"), Some(RandomSeed::Value(u64::MAX)));
        assert_eq!(
            ok("18446744073709551615"),
            Some(RandomSeed::Value(u64::MAX))
        );
        assert_eq!(
            ok("18446744073709551616"),
            Some(RandomSeed::Value(u64::MAX))
        );
        assert_eq!(
            ok("99999999999999999999999"),
            Some(RandomSeed::Value(u64::MAX))
        );
        assert_eq!(ok("time"), Some(RandomSeed::Time));
        assert_eq!(ok("rand"), Some(RandomSeed::Rand));
        for bad in ["7 ", "0x10", "TIME", "", "-", "seven"] {
            assert!(RandomSeed::parse(bad).is_err(), "{bad:?}");
        }
        // --random-seed=-1 shows as :random_seed -1 and draws 949 first from random(1,1000).
        let seeds = Seeds::new(u64::MAX, 1, 1, false);
        assert_eq!(seeds.random_seed, -1);
        assert_eq!(1 + seeds.clients[0].clone().range_u64(0, 999), 949);
        // --random-seed=7: 850; 0: 234.
        assert_eq!(
            1 + Seeds::new(7, 1, 1, false).clients[0].range_u64(0, 999),
            850
        );
        assert_eq!(
            1 + Seeds::new(0, 1, 1, false).clients[0].range_u64(0, 999),
            234
        );
    }

    #[test]
    fn resolved_seeds() {
        assert_eq!(RandomSeed::Value(5).resolve().unwrap(), 5);
        assert!(RandomSeed::Time.resolve().unwrap() > 0);
        assert!(RandomSeed::Rand.resolve().is_ok());
    }

    #[test]
    fn clients_are_dealt_as_pgbench_deals_them() {
        assert_eq!(thread_clients(3, 2, 0), 0..2);
        assert_eq!(thread_clients(3, 2, 1), 2..3);
        assert_eq!(thread_clients(10, 4, 0), 0..3);
        assert_eq!(thread_clients(10, 4, 1), 3..6);
        assert_eq!(thread_clients(10, 4, 2), 6..8);
        assert_eq!(thread_clients(10, 4, 3), 8..10);
        assert_eq!(thread_clients(1, 1, 0), 0..1);
    }
}
