//! fio's zoned distributions (`zoned` and `zoned_abs`): the region cut into zones in order
//! from its start, each taking a whole percentage of the I/Os uniformly over its blocks.
//!
//! fio (io_u.c `__get_next_rand_offset_zoned`, zone-dist.c) draws `v` uniform in 1..=100
//! and looks up which zone the `v`-th percent of the accesses belongs to (a table of 100
//! slots, filled zone after zone by each zone's access percentage), then a block uniform in
//! that zone. With `blocks` the region's blocks (fio's `lastb`), a `zoned` zone spanning the
//! size percentages `p0..p1` starts at block `p0 · blocks / 100` and holds
//! `blocks · (p1 - p0) / 100` blocks, in integer arithmetic as fio's; a `zoned_abs` zone
//! spanning bytes `b0..b1` starts at block `b0 / block` and holds `b1 / block - b0 / block`.
//! A zone of no whole block draws its first block (fio's draw over 0 blocks gives 0). Sizes
//! may add up to less than the region: the blocks past the last zone are never drawn.

use super::Zone;
use crate::workload::rng::Rng;

/// The 100 slots of the access table: each percent of the I/Os, the zone it draws from as
/// (first block, blocks).
#[derive(Debug, Clone)]
pub(super) struct ZoneTable {
    slots: Box<[(u64, u64); 100]>,
}

impl ZoneTable {
    /// `zoned`: each zone's size is a percentage of the `blocks`.
    pub(super) fn percent(zones: &[Zone], blocks: u64) -> ZoneTable {
        let mut at = 0u64;
        Self::fill(zones, |z| {
            let (p0, p1) = (at, at + z.size);
            at = p1;
            let first = mul_div(p0, blocks, 100);
            // fio: lastb * (send - stotal) / 100, not the difference of the two starts.
            (first, mul_div(blocks, p1 - p0, 100))
        })
    }

    /// `zoned_abs`: each zone's size in bytes, in blocks of `block` bytes. Refused when a
    /// zone that takes any I/O ends past the region's `blocks` (fio stops the job with
    /// "zoned_abs sizes exceed file size" when it draws one).
    pub(super) fn bytes(zones: &[Zone], blocks: u64, block: u64) -> Result<ZoneTable, String> {
        let block = block.max(1);
        let mut at = 0u64;
        let mut past = None;
        let table = Self::fill(zones, |z| {
            let (b0, b1) = (at, at.saturating_add(z.size));
            at = b1;
            let (first, end) = (b0 / block, b1 / block);
            if end > blocks && z.access > 0 && past.is_none() {
                past = Some(b1);
            }
            (first, end - first)
        });
        match past {
            Some(end) => Err(format!(
                "zoned_abs zones reach {end} bytes, past the region's {} bytes; fio stops a job that draws past its region (make the zones smaller or the region larger)",
                blocks.saturating_mul(block)
            )),
            None => Ok(table),
        }
    }

    fn fill(zones: &[Zone], mut span: impl FnMut(&Zone) -> (u64, u64)) -> ZoneTable {
        let mut slots = Box::new([(0u64, 0u64); 100]);
        let mut next = 0usize;
        for z in zones {
            let s = span(z);
            for slot in slots.iter_mut().skip(next).take(z.access as usize) {
                *slot = s;
            }
            next += z.access as usize;
        }
        ZoneTable { slots }
    }

    /// A block: a percent of the I/Os, then a block uniform in its zone.
    #[inline]
    pub(super) fn next(&self, rng: &mut Rng) -> u64 {
        let (first, count) = self.slots[rng.below(100) as usize];
        first + rng.below(count)
    }
}

/// `a · b / c` without overflow (128-bit product), as fio's 64-bit arithmetic means it for
/// any region that fits.
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    (u128::from(a) * u128::from(b) / u128::from(c.max(1))) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(access: u32, size: u64) -> Zone {
        Zone { access, size }
    }

    #[test]
    fn zoned_splits_the_blocks_as_fio() {
        // rand-zones.fio: 50% of I/Os in the first 5%, 30% in the next 15%, 20% in the rest.
        let t = ZoneTable::percent(&[z(50, 5), z(30, 15), z(20, 80)], 4096);
        assert_eq!(t.slots[0], (0, 204));
        assert_eq!(t.slots[49], (0, 204));
        assert_eq!(t.slots[50], (204, 614));
        assert_eq!(t.slots[79], (204, 614));
        assert_eq!(t.slots[80], (819, 3276));
        let mut rng = Rng::new(3);
        let n = 200_000;
        let mut counts = [0u64; 3];
        for _ in 0..n {
            let b = t.next(&mut rng);
            assert!(b < 4096);
            counts[usize::from(b >= 204) + usize::from(b >= 819)] += 1;
        }
        let share = |c: u64| c as f64 / n as f64;
        assert!((share(counts[0]) - 0.5).abs() < 0.01, "{counts:?}");
        assert!((share(counts[1]) - 0.3).abs() < 0.01, "{counts:?}");
        assert!((share(counts[2]) - 0.2).abs() < 0.01, "{counts:?}");
    }

    #[test]
    fn zones_that_cover_less_leave_the_rest_untouched() {
        let t = ZoneTable::percent(&[z(50, 10), z(50, 10)], 1000);
        let mut rng = Rng::new(1);
        assert!((0..10_000).all(|_| t.next(&mut rng) < 200));
    }

    #[test]
    fn zoned_abs_counts_blocks_of_the_alignment() {
        let t = ZoneTable::bytes(&[z(80, 1 << 20), z(20, 3 << 20)], 1024, 4096).unwrap();
        assert_eq!(t.slots[0], (0, 256));
        assert_eq!(t.slots[99], (256, 768));
        let err = ZoneTable::bytes(&[z(80, 1 << 20), z(20, 8 << 20)], 1024, 4096).unwrap_err();
        assert!(err.contains("past the region"), "{err}");
        // A zone past the end that takes no I/O is never drawn: fio does not mind it.
        assert!(ZoneTable::bytes(&[z(100, 1 << 20), z(0, 8 << 20)], 1024, 4096).is_ok());
    }
}
