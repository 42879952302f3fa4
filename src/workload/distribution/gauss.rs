//! fio's `normal:DEV` (lib/gauss.c): the mean of twelve uniform draws, an approximate bell
//! curve over the blocks, widened by a uniform jitter that `DEV` sets.
//!
//! With `n` blocks, fio draws twelve integers uniform in `0..=n`, takes their mean rounded
//! up (`(sum + 11) / 12`): an Irwin-Hall bell centred on `n / 2` with a standard deviation
//! of about `n / 12`. With `DEV` > 0 it adds a jitter uniform in
//! `[-stddev/2, stddev/2)` where `stddev = ceil(n · DEV / 100)` (at most `n / 2`), halving
//! the jitter while it would carry the value to `n` or past. The value is taken modulo
//! `n`. fio then hashes it over the file, as it does zipf's and pareto's ranks: the caller
//! spreads it (see the parent module's "Scrambling").

use crate::workload::rng::Rng;

/// The draws fio averages.
const ITERS: u64 = 12;

#[derive(Debug, Clone)]
pub(super) struct Gauss {
    blocks: u64,
    /// fio's `stddev`: the jitter's width in blocks (0: none).
    stddev: u64,
}

impl Gauss {
    /// `dev` in `0..100` (checked by the caller).
    pub(super) fn new(dev: f64, blocks: u64) -> Gauss {
        let stddev = if dev == 0.0 {
            0
        } else {
            // `as` saturates; ceil as fio's.
            ((blocks as f64 * dev / 100.0).ceil() as u64).min(blocks / 2)
        };
        Gauss { blocks, stddev }
    }

    /// A value in `0..blocks`, before spreading.
    #[inline]
    pub(super) fn sample(&self, rng: &mut Rng) -> u64 {
        let n = self.blocks;
        let mut sum: u64 = 0;
        for _ in 0..ITERS {
            sum = sum.saturating_add(rng.below(n.saturating_add(1)));
        }
        let mut v = i128::from(sum.div_ceil(ITERS));
        if self.stddev > 0 {
            let width = self.stddev;
            let mut jitter = rng.below(width) as i128 - (width / 2) as i128;
            while jitter + v >= i128::from(n) && jitter != 0 {
                // C's integer division truncates toward zero, as Rust's does.
                jitter /= 2;
            }
            v += jitter;
        }
        v.rem_euclid(i128::from(n.max(1))) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(g: &Gauss, draws: usize) -> (f64, f64) {
        let mut rng = Rng::new(17);
        let xs: Vec<f64> = (0..draws).map(|_| g.sample(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / draws as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws as f64;
        (mean, var.sqrt())
    }

    #[test]
    fn a_bell_around_the_middle() {
        let n = 12_000;
        let (mean, sd) = moments(&Gauss::new(0.0, n), 100_000);
        // Twelve uniforms on 0..=n averaged: mean n/2, sd n / sqrt(12 · 12) = n / 12.
        assert!((mean - 6000.0).abs() < 30.0, "{mean}");
        assert!((sd - 1000.0).abs() < 30.0, "{sd}");
    }

    #[test]
    fn dev_widens_it_by_a_uniform_jitter() {
        let n = 12_000;
        // DEV 50: a jitter uniform over 6000 blocks, sd 6000 / sqrt(12) ≈ 1732, added to
        // the bell's 1000: sqrt(1000² + 1732²) = 2000.
        let (mean, sd) = moments(&Gauss::new(50.0, n), 100_000);
        assert!((mean - 6000.0).abs() < 60.0, "{mean}");
        assert!((sd - 2000.0).abs() < 60.0, "{sd}");
    }

    #[test]
    fn values_stay_in_range() {
        let mut rng = Rng::new(2);
        for n in [1u64, 2, 3, 7, 100] {
            for dev in [0.0, 1.0, 50.0, 99.9] {
                let g = Gauss::new(dev, n);
                assert!((0..2000).all(|_| g.sample(&mut rng) < n), "n={n} dev={dev}");
            }
        }
    }
}
