//! pgbench 15's random draws over a [`Prng`]: `random` (uniform), `random_exponential`,
//! `random_gaussian`, `random_zipfian`, the Poisson delays of `--rate`, and `permute`, each
//! computed as pgbench computes it, so the same generator state gives the same numbers.
//!
//! The bounds are pgbench's callers': `min <= max` and `max - min + 1` fits 64 bits (checked
//! in `functions`); each parameter in its range. Where pgbench converts a double to an
//! integer with C's cast, [`c_cast`] gives what x86-64 gives for a NaN or an out-of-range
//! value (the "integer indefinite", `i64::MIN`) and sums wrap, so even a NaN parameter
//! draws what pgbench draws instead of panicking.

use super::prng::Prng;

/// pgbench's smallest `random_gaussian` parameter.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// pgbench's `random_zipfian` parameter range.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// `getrand`: uniform in `[min, max]`.
pub fn uniform(rng: &mut Prng, min: i64, max: i64) -> i64 {
    rng.range(min, max)
}

/// `getExponentialRand`: the density at `max` is `exp(-parameter)` times that at `min`.
pub fn exponential(rng: &mut Prng, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    // In (0, 1], so the logarithm is finite.
    let uniform = 1.0 - rng.next_f64();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
    min.wrapping_add(c_cast(span(min, max) * rand))
}

/// `getGaussianRand`: a normal draw (Box-Muller, as `pg_prng_double_normal`) redrawn until
/// within `parameter` standard deviations, mapped onto `[min, max]`.
pub fn gaussian(rng: &mut Prng, min: i64, max: i64, parameter: f64) -> i64 {
    let stdev = loop {
        // Both in (0, 1], as the basic Box-Muller transform needs.
        let u1 = 1.0 - rng.next_f64();
        let u2 = 1.0 - rng.next_f64();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
        if !(z < -parameter || z >= parameter) {
            break z;
        }
    };
    let rand = (stdev + parameter) / (parameter * 2.0);
    min.wrapping_add(c_cast(span(min, max) * rand))
}

/// `getZipfianRand`: Zipf with exponent `s` over `[min, max]` (`min` the most frequent),
/// by Devroye's rejection method (`computeIterativeZipfian`).
///
/// `s` must be a number: pgbench loops forever on a NaN, which its range check lets through.
pub fn zipfian(rng: &mut Prng, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    min.wrapping_sub(1)
        .wrapping_add(iterative_zipfian(rng, n, s))
}

fn iterative_zipfian(rng: &mut Prng, n: i64, s: f64) -> i64 {
    if n <= 1 {
        return 1;
    }
    let b = 2.0f64.powf(s - 1.0);
    loop {
        let u = rng.next_f64();
        let v = rng.next_f64();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        // Rejected when too large or past n.
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return c_cast(x);
        }
    }
}

/// `getPoissonRand`: a delay for `--rate`'s schedule, averaging `center`.
pub fn poisson(rng: &mut Prng, center: f64) -> i64 {
    let uniform = 1.0 - rng.next_f64();
    c_cast(-uniform.ln() * center + 0.5)
}

/// `permute(val, size, seed)`: where `val mod size` goes in a pseudorandom permutation of
/// `[0, size)` chosen by `seed`: six rounds of an odd multiply, XOR and rotation of the
/// lower and upper overlapping power-of-two halves, then a random offset; the round
/// constants are drawn from a [`Prng`] seeded with `seed`. 0 when `size < 2`.
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rng = Prng::seeded(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    // Masks to the largest power of two not above size.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    let rotate = |x: u64| ((x << 1) & mask) | (x >> (masklen - 1));
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = rotate((v.wrapping_mul(m) ^ r) & mask);
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let t = size - 1 - v;
        if t <= mask {
            let t = rotate((t.wrapping_mul(m) ^ r) & mask);
            v = size - 1 - t;
        }
        let r = rng.range_u64(0, size - 1);
        // Both are below size, itself below 2^63: the sum cannot wrap.
        v = (v + r) % size;
    }
    v as i64
}

/// `max - min + 1` as the double pgbench multiplies by.
fn span(min: i64, max: i64) -> f64 {
    max.wrapping_sub(min).wrapping_add(1) as f64
}

/// C's `(int64) d` as x86-64 computes it: truncation toward zero, and `i64::MIN` (the
/// "integer indefinite") for a NaN or a value outside the range.
pub fn c_cast(d: f64) -> i64 {
    // 2^63 is exactly representable; everything in [-2^63, 2^63) truncates into range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    // A NaN is in no range.
    if !(-LIMIT..LIMIT).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

#[cfg(test)]
mod tests {
    use super::super::prng::Seeds;
    use super::*;

    fn client0() -> Prng {
        Seeds::new(5432, 1, 1, false).clients[0].clone()
    }

    /// t/001_pgbench_with_server.pl, `--random-seed=5432`: the first draws of client 0 are
    /// random(10,19) = 17, random_exponential(100,199,10.0) = 104,
    /// random_gaussian(1000,1999,10.0) = 1498.
    #[test]
    fn pgbench_tap_test_draws() {
        let mut rng = client0();
        assert_eq!(uniform(&mut rng, 10, 19), 17);
        assert_eq!(exponential(&mut rng, 100, 199, 10.0), 104);
        assert_eq!(gaussian(&mut rng, 1000, 1999, 10.0), 1498);
    }

    /// pgbench 15, `--random-seed=5432`, one client: five rounds of eleven draws, in order,
    /// as `debug()` printed them.
    #[test]
    fn distributions_match_pgbench_draw_for_draw() {
        let want: [[i64; 11]; 5] = [
            [
                554,
                316,
                222,
                -5,
                -1338268157808527263,
                -2071751088721138980,
                4,
                4038863025376100352,
                7,
                3,
                1,
            ],
            [
                520,
                794,
                612,
                -4,
                -964508654410625772,
                -914523133687929305,
                3,
                8802495879116764160,
                7,
                3,
                1,
            ],
            [
                525,
                49,
                1,
                -5,
                -897195634329113396,
                -969396140625744912,
                3,
                7254860696850988032,
                7,
                3,
                4,
            ],
            [
                632,
                755,
                1,
                -5,
                -3714678924557677978,
                -7249710997052834671,
                3,
                7480690406052943872,
                7,
                3,
                1,
            ],
            [
                96,
                90,
                314,
                -5,
                4287407526117363926,
                -1811894795085770238,
                1,
                8471447422837417984,
                7,
                3,
                3,
            ],
        ];
        let mut rng = client0();
        for row in want {
            let got = [
                exponential(&mut rng, 1, 1000, 2.5),
                gaussian(&mut rng, 1, 1000, 2.5),
                zipfian(&mut rng, 1, 1000, 1.07),
                zipfian(&mut rng, -5, 1_000_000, 2.5),
                uniform(&mut rng, -4611686018427387904, 4611686018427387902),
                uniform(&mut rng, -9223372036854775807, -1),
                gaussian(&mut rng, 0, 9, 2.0),
                exponential(&mut rng, 0, 9223372036854775806, 0.001),
                uniform(&mut rng, 7, 7),
                zipfian(&mut rng, 3, 3, 5.0),
                zipfian(&mut rng, 1, 9223372036854775806, 1.5),
            ];
            assert_eq!(got, row);
        }
    }

    /// pgbench 15 with a NaN parameter: its cast of NaN gives i64::MIN, so min + i64::MIN.
    #[test]
    fn nan_parameters_draw_what_pgbench_draws() {
        let mut rng = client0();
        assert_eq!(gaussian(&mut rng, 1, 10, f64::NAN), -9223372036854775807);
        assert_eq!(exponential(&mut rng, 1, 10, f64::NAN), -9223372036854775807);
    }

    #[test]
    fn draws_stay_in_bounds() {
        let mut rng = Prng::seeded(42);
        for _ in 0..20_000 {
            assert!((3..=9).contains(&uniform(&mut rng, 3, 9)));
            assert!((3..=9).contains(&exponential(&mut rng, 3, 9, 0.5)));
            assert!((3..=9).contains(&exponential(&mut rng, 3, 9, 50.0)));
            assert!((3..=9).contains(&gaussian(&mut rng, 3, 9, 2.0)));
            assert!((3..=9).contains(&zipfian(&mut rng, 3, 9, 1.001)));
            assert!((3..=9).contains(&zipfian(&mut rng, 3, 9, 1000.0)));
            assert!((-1..=0).contains(&uniform(&mut rng, -1, 0)));
            let big = uniform(&mut rng, i64::MIN, i64::MAX - 1);
            assert!(big < i64::MAX);
        }
        // Both ends are reached.
        let seen: std::collections::BTreeSet<i64> =
            (0..1000).map(|_| uniform(&mut rng, 1, 3)).collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
    }

    /// permute's values from pgbench 15 (and t/001's "portability across architectures").
    #[test]
    fn permute_matches_pgbench() {
        let ten: Vec<i64> = (0..10).map(|i| permute(i, 10, 5432)).collect();
        assert_eq!(ten, [6, 5, 3, 8, 0, 7, 1, 4, 9, 2]);
        let default_seed = 7590783070443337668;
        let seven: Vec<i64> = (0..7).map(|i| permute(i, 7, default_seed)).collect();
        assert_eq!(seven, [4, 5, 2, 0, 6, 3, 1]);
        assert_eq!(permute(-3, 7, 1), 3);
        assert_eq!(permute(5, 1, default_seed), 0);
        assert_eq!(permute(100, 1000000007, -42), 698140877);
        assert_eq!(permute(i64::MAX, i64::MAX, 0), 6827909720952040287);
        assert_eq!(permute(i64::MIN, 3, 9), 2);
        assert_eq!(permute(0, 2, 5431), 0);
        assert_eq!(permute(1, 2, 5431), 1);
        assert_eq!(permute(0, 2, 5433), 1);
        assert_eq!(permute(1, 2, 5433), 0);
        let size = i64::MAX - 10;
        let tail: Vec<i64> = (1..=7).map(|k| permute(size - k, size, 5432)).collect();
        assert_eq!(
            tail,
            [
                520382784483822430,
                1143715004660802862,
                447293596416496998,
                916527772266572956,
                2763809008686028849,
                8648551549198294572,
                4542876852200565125
            ]
        );
    }

    #[test]
    fn permute_is_a_permutation() {
        for size in 1..=70 {
            for seed in [0, 1, 5432, -1, i64::MIN] {
                let mut seen = vec![false; size as usize];
                for v in 0..size {
                    let p = permute(v, size, seed);
                    assert!((0..size).contains(&p));
                    assert!(!seen[p as usize], "size {size} seed {seed}");
                    seen[p as usize] = true;
                    // It works modulo size.
                    assert_eq!(permute(v + size, size, seed), p);
                }
            }
        }
    }

    #[test]
    fn c_cast_is_x86s() {
        assert_eq!(c_cast(2.9), 2);
        assert_eq!(c_cast(-2.9), -2);
        assert_eq!(c_cast(f64::NAN), i64::MIN);
        assert_eq!(c_cast(9.3e18), i64::MIN);
        assert_eq!(c_cast(-9223372036854775808.0), i64::MIN);
        assert_eq!(c_cast(f64::NEG_INFINITY), i64::MIN);
    }

    #[test]
    fn poisson_is_positive_around_its_center() {
        let mut rng = Prng::seeded(3);
        let n = 20_000;
        let sum: i64 = (0..n).map(|_| poisson(&mut rng, 1000.0)).sum();
        assert!((sum / n - 1000).abs() < 50);
    }
}
