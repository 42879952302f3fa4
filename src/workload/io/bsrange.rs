//! fio's `bsrange=LO-HI` as the weighted block sizes perflab draws from.
//!
//! fio (io_u.c `get_next_buflen`) draws `LO + x` with `x` uniform in `[0, HI)`, rounds it
//! down to a multiple of `LO` (a mask when `LO` is a power of two, a remainder otherwise;
//! perflab refuses `bs_unaligned`, which skips the rounding) and caps it at `HI`. So each
//! multiple `k · LO` up to `HI` takes the `LO` values of `x` that round to it, and `HI`
//! itself takes whatever is left above the last multiple below it: `bsrange=4k-10k` draws
//! 4k and 8k 40% of the time each and 10k 20%. The weights are those counts of `x` (over a
//! common divisor), so the sizes are drawn exactly as fio draws them.

/// At most this many sizes in all (reads' and writes'): the I/O's size index is a byte, and
/// each size gets its own figures.
pub const MAX_SIZES: usize = 256;

/// The sizes `bsrange=lo-hi` draws, with their weights.
pub fn sizes(lo: u64, hi: u64) -> Vec<(u64, u32)> {
    let (lo, hi) = (lo.min(hi).max(1), lo.max(hi).max(1));
    if lo == hi {
        return vec![(lo, 1)];
    }
    // x in [k·lo, (k+1)·lo) rounds to (k+1)·lo, capped at hi; x runs below hi.
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut k = 0u64;
    while k * lo < hi {
        let size = (lo * (k + 1)).min(hi);
        let weight = ((k + 1) * lo).min(hi) - k * lo;
        match out.last_mut() {
            Some(last) if last.0 == size => last.1 += weight,
            _ => out.push((size, weight)),
        }
        k += 1;
    }
    let common = out.iter().fold(0, |g, s| gcd(g, s.1)).max(1);
    out.into_iter()
        .map(|(size, w)| (size, (w / common).min(u64::from(u32::MAX)) as u32))
        .collect()
}

/// How many sizes `bsrange=lo-hi` draws, without listing them.
pub fn count(lo: u64, hi: u64) -> u64 {
    let (lo, hi) = (lo.min(hi).max(1), lo.max(hi).max(1));
    hi.div_ceil(lo)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    #[test]
    fn one_size_is_one_size() {
        assert_eq!(sizes(4 * K, 4 * K), vec![(4 * K, 1)]);
        assert_eq!(count(4 * K, 4 * K), 1);
    }

    #[test]
    fn multiples_of_lo_up_to_hi_weigh_the_same() {
        assert_eq!(
            sizes(4 * K, 16 * K),
            vec![(4 * K, 1), (8 * K, 1), (12 * K, 1), (16 * K, 1)]
        );
        assert_eq!(count(4 * K, 16 * K), 4);
    }

    #[test]
    fn hi_off_the_multiples_takes_what_is_left() {
        // x in [0, 10k): [0,4k) -> 4k, [4k,8k) -> 8k, [8k,10k) -> 12k capped at 10k.
        assert_eq!(
            sizes(4 * K, 10 * K),
            vec![(4 * K, 2), (8 * K, 2), (10 * K, 1)]
        );
        assert_eq!(count(4 * K, 10 * K), 3);
        // Not a power of two: the remainder rounds the same way.
        assert_eq!(sizes(3000, 7000), vec![(3000, 3), (6000, 3), (7000, 1)]);
    }

    #[test]
    fn matches_a_simulation_of_fios_draw() {
        // fio: buflen = lo + hi·u, rounded down to a multiple of lo, capped at hi.
        let (lo, hi) = (4 * K, 22 * K);
        let mut counts = std::collections::BTreeMap::new();
        let n = 1 << 16;
        for i in 0..n {
            let buflen = lo + hi * i / n;
            let size = (buflen / lo * lo).min(hi);
            *counts.entry(size).or_insert(0u64) += 1;
        }
        let got = sizes(lo, hi);
        let total: u64 = got.iter().map(|s| u64::from(s.1)).sum();
        for (size, w) in got {
            let share = u64::from(w) as f64 / total as f64;
            let sim = counts[&size] as f64 / n as f64;
            assert!((share - sim).abs() < 1e-3, "{size}: {share} vs {sim}");
        }
    }
}
