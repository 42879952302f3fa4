//! The fractal CPU test, after iGenCPU's ("calculates Mandelbrot fractals using a custom
//! imaginary-numbers library ... naturally creates 50% floating point and 50% integer
//! calculation").
//!
//! Two small hand-written complex types do the arithmetic: [`Complex`] over `f64`, and
//! [`FixedComplex`], a fixed-point complex over `i64` with [`FRAC_BITS`] fraction bits whose
//! multiplication rescales by shifting. An op renders one `side x side` escape-time image of a
//! view of the Mandelbrot set: pixel `(x, y)` stands for `c` in the view, and its value is the
//! number of iterations of `z = z * z + c` (from `z = 0`) until `|z| > 2`, or `max_iter` if
//! that does not happen. Even rows are computed with the floating-point type and odd rows with
//! the fixed-point type, so half of the work is floating point and half integer.
//!
//! Views come from a deterministic sequence fixed by the seed: each op zooms, to a random
//! depth, into one of a list of well-known points on the set's boundary (with a little random
//! offset), so no two consecutive ops compute the same thing and nothing can be hoisted out
//! of the op loop. The cost of a view depends on how much of it lies inside the set: with the
//! defaults an op takes about 0.8 ms on average on the reference machine (2-core Zen 5 VM),
//! from about 0.1 ms for a view mostly outside to about 2 ms for one mostly inside; the
//! sequence, and so the average over many ops, is the same for a given seed.
//!
//! The fixed-point type resolves 2^-28, so near the boundary at the deepest zooms a few
//! percent of the odd-row pixels differ from what `f64` would give (the test
//! `float_and_fixed_agree_on_most_pixels` bounds that). On the reference machine a float
//! iteration takes about 2.4 ns and a fixed-point one about 1.8 ns, so the split of time is
//! roughly 55/45.
//!
//! An op reports `items` = pixels and `bytes` = 0; the session keeps a checksum of every
//! image it rendered.

use std::ops::{Add, Mul};

use crate::workload::rng::Rng;
use crate::workload::session::{OpError, OpOutcome, Session};

/// Image side giving about 0.8 ms per fractal on average on the reference machine.
pub const DEFAULT_SIDE: usize = 64;
/// Iteration limit per pixel for the default fractal.
pub const DEFAULT_MAX_ITER: u32 = 256;
/// Largest image side accepted.
pub const MAX_SIDE: usize = 8192;
/// Largest iteration limit accepted.
pub const MAX_MAX_ITER: u32 = 1 << 20;
/// Deepest zoom: the view is `3 / 2^depth` wide, with depth in `0..=MAX_DEPTH`.
pub const MAX_DEPTH: u32 = 12;

/// Fraction bits of [`FixedComplex`]: a unit is `2^-28`, about 3.7e-9.
pub const FRAC_BITS: u32 = 28;
const ONE: i64 = 1 << FRAC_BITS;
/// Half a unit, added before the shift back so products round to nearest.
const HALF: i64 = 1 << (FRAC_BITS - 1);
/// `|z|^2` beyond which a point has escaped: 4 (so `|z| > 2`).
const ESCAPE_NORM_SQR: f64 = 4.0;

/// A complex number over `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl Complex {
    pub const ZERO: Complex = Complex { re: 0.0, im: 0.0 };

    pub fn new(re: f64, im: f64) -> Self {
        Complex { re, im }
    }

    /// `|z|^2`.
    #[inline]
    pub fn norm_sqr(self) -> f64 {
        self.re * self.re + self.im * self.im
    }
}

impl Add for Complex {
    type Output = Complex;
    #[inline]
    fn add(self, o: Complex) -> Complex {
        Complex {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}

impl Mul for Complex {
    type Output = Complex;
    #[inline]
    fn mul(self, o: Complex) -> Complex {
        Complex {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

/// A complex number in fixed point: each part is an `i64` counting units of `2^-FRAC_BITS`.
///
/// Parts must stay below about 11 in magnitude for products not to wrap; the escape-time
/// iteration keeps them below 7 (see [`escape_fixed`]). The operations wrap rather than
/// panic on overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FixedComplex {
    pub re: i64,
    pub im: i64,
}

impl FixedComplex {
    pub const ZERO: FixedComplex = FixedComplex { re: 0, im: 0 };

    /// The fixed-point value nearest to `re + im i` (saturating at the `i64` range).
    pub fn from_f64(re: f64, im: f64) -> Self {
        FixedComplex {
            re: to_fixed(re),
            im: to_fixed(im),
        }
    }

    /// The value as a float complex.
    pub fn to_complex(self) -> Complex {
        Complex {
            re: self.re as f64 / ONE as f64,
            im: self.im as f64 / ONE as f64,
        }
    }

    /// `|z|^2`, in the same fixed-point units.
    #[inline]
    pub fn norm_sqr(self) -> i64 {
        (self.re.wrapping_mul(self.re)).wrapping_add(self.im.wrapping_mul(self.im)) >> FRAC_BITS
    }
}

/// Nearest fixed-point value of `x`.
fn to_fixed(x: f64) -> i64 {
    // `as` saturates at the i64 range and maps NaN to 0.
    (x * ONE as f64).round() as i64
}

impl Add for FixedComplex {
    type Output = FixedComplex;
    #[inline]
    fn add(self, o: FixedComplex) -> FixedComplex {
        FixedComplex {
            re: self.re.wrapping_add(o.re),
            im: self.im.wrapping_add(o.im),
        }
    }
}

impl Mul for FixedComplex {
    type Output = FixedComplex;
    /// Products are formed at `2 * FRAC_BITS` fraction bits and shifted back once.
    #[inline]
    fn mul(self, o: FixedComplex) -> FixedComplex {
        let rr = self.re.wrapping_mul(o.re);
        let ii = self.im.wrapping_mul(o.im);
        let ri = self.re.wrapping_mul(o.im);
        let ir = self.im.wrapping_mul(o.re);
        FixedComplex {
            re: rr.wrapping_sub(ii).wrapping_add(HALF) >> FRAC_BITS,
            im: ri.wrapping_add(ir).wrapping_add(HALF) >> FRAC_BITS,
        }
    }
}

/// Iterations of `z = z^2 + c` from 0 until `|z| > 2` (the first `n` with `|z_n| > 2`), or
/// `max_iter` if it stays bounded that long. Floating-point version.
#[inline]
pub fn escape_float(c: Complex, max_iter: u32) -> u32 {
    let mut z = Complex::ZERO;
    for n in 1..=max_iter {
        z = z * z + c;
        if z.norm_sqr() > ESCAPE_NORM_SQR {
            return n;
        }
    }
    max_iter
}

/// As [`escape_float`], in fixed point.
#[inline]
pub fn escape_fixed(c: FixedComplex, max_iter: u32) -> u32 {
    // A part beyond 2 means |c| > 2: z_1 = c has escaped. Checking it first keeps every value
    // of the loop below within range (|z| <= 2 before squaring, |c| < 2.9 after).
    if max_iter == 0 {
        return 0;
    }
    if c.re.unsigned_abs() > 2 * ONE as u64 || c.im.unsigned_abs() > 2 * ONE as u64 {
        return 1;
    }
    let limit = 4 * ONE;
    let mut z = FixedComplex::ZERO;
    for n in 1..=max_iter {
        z = z * z + c;
        if z.norm_sqr() > limit {
            return n;
        }
    }
    max_iter
}

/// A square region of the complex plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// Centre of the view.
    pub center: Complex,
    /// Width (and height) of the view.
    pub width: f64,
}

impl View {
    /// The whole set: centre -0.5, width 3.
    pub const WHOLE: View = View {
        center: Complex { re: -0.5, im: 0.0 },
        width: 3.0,
    };
}

/// Well-known points on or near the boundary of the set, where zooms stay interesting.
const POINTS: [(f64, f64); 8] = [
    (-0.743_643_887_037_151, 0.131_825_904_205_33), // seahorse valley
    (0.285, 0.01),                                  // elephant valley
    (-0.088, 0.654),                                // triple spiral valley
    (-0.775_683_77, 0.136_467_37),                  // spirals in the seahorse valley
    (-0.1011, 0.9563),                              // Misiurewicz point near the top
    (-1.250_66, 0.020_12),                          // period-doubling region
    (0.001_643_721_971_153, 0.822_467_633_298_876), // spirals off the top bulb
    (-0.235_125, 0.827_215),                        // tendrils
];

/// The next view of a seeded sequence: one of [`POINTS`] at a random depth, nudged by up to
/// an eighth of the width.
fn next_view(rng: &mut Rng) -> View {
    let (re, im) = POINTS[rng.below_usize(POINTS.len())];
    let depth = rng.below(u64::from(MAX_DEPTH) + 1) as i32;
    let width = 3.0 * 0.5f64.powi(depth);
    let dx = (rng.next_f64() - 0.5) * width * 0.25;
    let dy = (rng.next_f64() - 0.5) * width * 0.25;
    View {
        center: Complex::new(re + dx, im + dy),
        width,
    }
}

/// Render `view` into `image` (`side * side`, row-major, top row first): even rows in floating
/// point, odd rows in fixed point. Returns the image's checksum.
fn render(image: &mut [u32], side: usize, max_iter: u32, view: View) -> u64 {
    let step = view.width / side as f64;
    let left = view.center.re - view.width / 2.0 + step / 2.0;
    let top = view.center.im + view.width / 2.0 - step / 2.0;
    // The fixed-point rows step through the view in integer units.
    let step_fx = to_fixed(step);
    let left_fx = to_fixed(left);
    for (y, row) in image.chunks_exact_mut(side).enumerate() {
        let im = top - y as f64 * step;
        if y % 2 == 0 {
            for (x, px) in row.iter_mut().enumerate() {
                let c = Complex::new(left + x as f64 * step, im);
                *px = escape_float(c, max_iter);
            }
        } else {
            let im_fx = to_fixed(im);
            let mut re_fx = left_fx;
            for px in row.iter_mut() {
                *px = escape_fixed(
                    FixedComplex {
                        re: re_fx,
                        im: im_fx,
                    },
                    max_iter,
                );
                re_fx = re_fx.wrapping_add(step_fx);
            }
        }
    }
    checksum(image)
}

/// FNV-1a over the iteration counts: equal images, equal checksums.
fn checksum(image: &[u32]) -> u64 {
    image.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &v| {
        (h ^ u64::from(v)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// One worker's fractal renderer.
#[derive(Debug)]
pub struct FractalSession {
    side: usize,
    max_iter: u32,
    rng: Rng,
    image: Vec<u32>,
    last_checksum: u64,
    checksum: u64,
    fractals: u64,
}

impl FractalSession {
    /// A renderer of `side x side` images with `max_iter` iterations per pixel at most, its
    /// views drawn from the sequence fixed by `seed`.
    pub fn new(side: usize, max_iter: u32, seed: u64) -> Result<Self, OpError> {
        if !(2..=MAX_SIDE).contains(&side) {
            return Err(OpError::other(format!(
                "fractal side {side} is out of range: use 2..={MAX_SIDE} (default {DEFAULT_SIDE})"
            )));
        }
        if !(1..=MAX_MAX_ITER).contains(&max_iter) {
            return Err(OpError::other(format!(
                "fractal max_iter {max_iter} is out of range: use 1..={MAX_MAX_ITER} (default \
                 {DEFAULT_MAX_ITER})"
            )));
        }
        Ok(FractalSession {
            side,
            max_iter,
            rng: Rng::new(seed),
            image: vec![0; side * side],
            last_checksum: 0,
            checksum: 0,
            fractals: 0,
        })
    }

    /// Checksum of the last image rendered.
    pub fn last_checksum(&self) -> u64 {
        self.last_checksum
    }

    /// A checksum of every image rendered so far, in order.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Images rendered so far.
    pub fn fractals(&self) -> u64 {
        self.fractals
    }

    /// The last image: `side * side` iteration counts, row-major.
    pub fn image(&self) -> &[u32] {
        &self.image
    }
}

impl Session for FractalSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let view = next_view(&mut self.rng);
        let sum = render(&mut self.image, self.side, self.max_iter, view);
        self.last_checksum = sum;
        self.checksum = self.checksum.rotate_left(7) ^ sum;
        self.fractals += 1;
        Ok(OpOutcome {
            bytes: 0,
            items: (self.side * self.side) as u64,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = DEFAULT_MAX_ITER;

    fn both(re: f64, im: f64) -> (u32, u32) {
        (
            escape_float(Complex::new(re, im), MAX),
            escape_fixed(FixedComplex::from_f64(re, im), MAX),
        )
    }

    #[test]
    fn complex_arithmetic() {
        let a = Complex::new(1.0, 2.0);
        let b = Complex::new(3.0, -1.0);
        assert_eq!(a + b, Complex::new(4.0, 1.0));
        assert_eq!(a * b, Complex::new(5.0, 5.0));
        assert_eq!(a.norm_sqr(), 5.0);
        let fa = FixedComplex::from_f64(1.0, 2.0);
        let fb = FixedComplex::from_f64(3.0, -1.0);
        assert_eq!((fa + fb).to_complex(), Complex::new(4.0, 1.0));
        assert_eq!((fa * fb).to_complex(), Complex::new(5.0, 5.0));
        assert_eq!(fa.norm_sqr(), 5 * ONE);
        let h = FixedComplex::from_f64(0.5, -0.25);
        assert_eq!((h * h).to_complex(), Complex::new(0.1875, -0.25));
    }

    #[test]
    fn known_points() {
        // Inside: 0, -1 (period 2), i (preperiodic), -0.1 + 0.1i (main cardioid).
        assert_eq!(both(0.0, 0.0), (MAX, MAX));
        assert_eq!(both(-1.0, 0.0), (MAX, MAX));
        assert_eq!(both(0.0, 1.0), (MAX, MAX));
        assert_eq!(both(-0.1, 0.1), (MAX, MAX));
        // -2 is on the boundary: 0, -2, 2, 2, ... never gets beyond |z| = 2.
        assert_eq!(both(-2.0, 0.0), (MAX, MAX));
        // Outside: 2 + 2i escapes on the first step; 1 goes 1, 2, 5; 0.5 takes five steps.
        assert_eq!(both(2.0, 2.0), (1, 1));
        assert_eq!(both(1.0, 0.0), (3, 3));
        assert_eq!(both(0.5, 0.0), (5, 5));
        assert_eq!(both(-2.1, 0.0), (1, 1));
        // Far out: no overflow, escapes at once.
        assert_eq!(both(1e6, -1e9), (1, 1));
        assert_eq!(escape_float(Complex::new(0.0, 0.0), 0), 0);
        assert_eq!(escape_fixed(FixedComplex::ZERO, 0), 0);
    }

    /// The two types round differently (the fixed one to 2^-28), and near the boundary the
    /// iteration amplifies any difference, so a few pixels there differ; at depth 10 in the
    /// seahorse valley about 97% agree exactly, in the whole set all of them.
    #[test]
    fn float_and_fixed_agree_on_most_pixels() {
        for (view, side) in [
            (View::WHOLE, 64),
            (
                View {
                    center: Complex::new(POINTS[0].0, POINTS[0].1),
                    width: 3.0 * 0.5f64.powi(10),
                },
                64,
            ),
        ] {
            let step = view.width / side as f64;
            let mut agree = 0;
            for y in 0..side {
                for x in 0..side {
                    let re = view.center.re - view.width / 2.0 + (x as f64 + 0.5) * step;
                    let im = view.center.im + view.width / 2.0 - (y as f64 + 0.5) * step;
                    let (f, i) = both(re, im);
                    agree += usize::from(f == i);
                }
            }
            let share = agree as f64 / (side * side) as f64;
            assert!(share > 0.95, "only {share} of pixels agree in {view:?}");
        }
    }

    #[test]
    fn rendered_rows_alternate_types() {
        let side = 32;
        let mut image = vec![0; side * side];
        render(&mut image, side, 100, View::WHOLE);
        // The centre rows cross the main cardioid; corners are far outside.
        assert_eq!(image[0], 1);
        assert!(image[(side / 2) * side + side / 2] == 100);
        assert!(image[(side / 2 + 1) * side + side / 2] == 100);
        // Rows mirror about the real axis whichever type computed them (row y and side-1-y
        // are of different parity here), apart from a few boundary pixels.
        let mut same = 0;
        for y in 0..side / 2 {
            let (a, b) = (y * side, (side - 1 - y) * side);
            same += (0..side).filter(|&x| image[a + x] == image[b + x]).count();
        }
        assert!(same * 100 > 95 * side * side / 2, "{same}");
    }

    #[test]
    fn checksum_is_deterministic_per_seed() {
        let run = |seed| {
            let mut s = FractalSession::new(24, 64, seed).unwrap();
            let mut sums = Vec::new();
            for _ in 0..5 {
                let out = s.execute().unwrap();
                assert_eq!(
                    out,
                    OpOutcome {
                        bytes: 0,
                        items: 576,
                        ..Default::default()
                    }
                );
                sums.push(s.last_checksum());
            }
            (sums, s.checksum(), s.fractals())
        };
        let (a, ca, n) = run(3);
        assert_eq!(n, 5);
        assert_eq!(run(3), (a.clone(), ca, 5));
        let (b, cb, _) = run(4);
        assert_ne!(ca, cb);
        // Views change from op to op.
        assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:?}");
        assert_ne!(a, b);
    }

    #[test]
    fn views_stay_near_the_set() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let v = next_view(&mut rng);
            assert!(v.width <= 3.0 && v.width >= 3.0 / f64::from(1 << MAX_DEPTH));
            // The farthest point (-1.77) plus the largest nudge (3/8) stays within |c| < 2.2.
            assert!(v.center.norm_sqr() < 2.2 * 2.2, "{v:?}");
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(
            FractalSession::new(1, 100, 0)
                .unwrap_err()
                .message
                .contains("2..=")
        );
        assert!(FractalSession::new(MAX_SIDE + 1, 100, 0).is_err());
        assert!(
            FractalSession::new(64, 0, 0)
                .unwrap_err()
                .message
                .contains("1..=")
        );
        assert!(FractalSession::new(DEFAULT_SIDE, DEFAULT_MAX_ITER, 0).is_ok());
    }
}
