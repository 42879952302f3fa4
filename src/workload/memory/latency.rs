//! Load-to-load memory latency by a dependent pointer chase.
//!
//! The working set is cut into slots one cache line (64 bytes) apart, each holding the index
//! of the next slot to visit. The "next" links form a single random cycle through every slot,
//! built with Sattolo's algorithm from the shared seeded [`Rng`], so:
//! - every load's address depends on the value of the previous load (no overlap of misses);
//! - consecutive loads land on unrelated cache lines in random order, which the hardware
//!   prefetchers cannot predict;
//! - one cycle covers the whole working set, so a long chase touches every line equally and
//!   the set is resident in exactly the cache level its size falls into.
//!
//! An op follows `loads_per_op` links, carrying the position over to the next op, and reports
//! `items = loads_per_op` and `bytes = 64 * loads_per_op`; the runner's op time divided by the
//! loads is the latency of one load. The pages are ordinary 4 KiB pages unless the system backs
//! them with huge pages, so working sets beyond the TLB reach include page-walk time, as any
//! program's random accesses would.

use crate::workload::rng::Rng;
use crate::workload::session::{Figures, OpError, OpOutcome, Session};

/// Bytes between consecutive slots: one cache line.
pub const SLOT_BYTES: usize = 64;

/// Smallest working set: two slots, the shortest cycle that is not a self-loop.
pub const MIN_WORKING_SET_BYTES: usize = 2 * SLOT_BYTES;

/// One cache line holding the index of the next line of the chase.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
struct Slot {
    next: usize,
}

/// A pointer chase over one worker's working set.
#[derive(Debug)]
pub struct LatencySession {
    slots: Vec<Slot>,
    loads_per_op: usize,
    position: usize,
}

/// `next[i]` for a single random cycle through `0..n` (Sattolo's algorithm): starting from the
/// identity, for `i` from `n - 1` down to 1 swap entry `i` with an entry `j < i` chosen
/// uniformly. Unlike Fisher-Yates (`j <= i`), this can only produce permutations made of one
/// cycle, and produces each of the `(n - 1)!` of them with equal probability.
fn sattolo_cycle(n: u32, rng: &mut Rng) -> Vec<u32> {
    let mut next: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = rng.below_usize(i);
        next.swap(i, j);
    }
    next
}

impl LatencySession {
    /// A chase over `working_set_bytes` (rounded down to whole 64-byte slots) in a random
    /// cycle fixed by `seed`, following `loads_per_op` loads per op.
    pub fn new(working_set_bytes: usize, loads_per_op: usize, seed: u64) -> Result<Self, OpError> {
        if working_set_bytes < MIN_WORKING_SET_BYTES {
            return Err(OpError::other(format!(
                "latency working set of {working_set_bytes} bytes is too small: use at least \
                 {MIN_WORKING_SET_BYTES} bytes (two 64-byte slots)"
            )));
        }
        if loads_per_op == 0 {
            return Err(OpError::other(
                "latency loads per op must be > 0: use e.g. 10000 (about 1 µs-1 ms per op)",
            ));
        }
        let n = working_set_bytes / SLOT_BYTES;
        let Ok(n32) = u32::try_from(n) else {
            return Err(OpError::other(format!(
                "latency working set of {working_set_bytes} bytes has more than 2^32 slots: use \
                 at most {} bytes",
                u32::MAX as u64 * SLOT_BYTES as u64
            )));
        };
        // The cycle is built in a compact index array (1/16 of the working set, so building
        // it is mostly cache hits), then written into the slots in order: that write is the
        // first touch of the working set, done by the thread that will chase it.
        let mut rng = Rng::new(seed);
        let mut slots = Vec::new();
        slots.try_reserve_exact(n).map_err(|e| {
            OpError::other(format!(
                "cannot allocate latency working set of {working_set_bytes} bytes ({e}): use a \
                 smaller working set"
            ))
        })?;
        let next = sattolo_cycle(n32, &mut rng);
        slots.extend(next.iter().map(|&i| Slot { next: i as usize }));
        drop(next);
        // Start somewhere in the cycle chosen by the seed.
        let position = rng.below_usize(n);
        Ok(LatencySession {
            slots,
            loads_per_op,
            position,
        })
    }

    /// Slots in the cycle (working set / 64).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Bytes actually chased: slots * 64.
    pub fn working_set_bytes(&self) -> usize {
        self.slots.len() * SLOT_BYTES
    }

    /// Follow `loads` dependent links from the current position and stay where they end.
    fn chase(&mut self, loads: usize) -> usize {
        let slots = &self.slots[..];
        let mut p = self.position;
        for _ in 0..loads {
            // Each index comes out of the previous load, so the loads cannot overlap.
            p = slots[p].next;
        }
        self.position = p;
        p
    }
}

impl Session for LatencySession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        self.chase(self.loads_per_op);
        Ok(OpOutcome {
            bytes: (self.loads_per_op * SLOT_BYTES) as u64,
            items: self.loads_per_op as u64,
            ..Default::default()
        })
    }

    fn finish(&mut self) -> Figures {
        let mut f = Figures::new();
        f.insert(
            "working_set_bytes".to_string(),
            self.working_set_bytes() as f64,
        );
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows the cycle from slot 0 and checks it returns there after exactly n steps,
    /// having visited every slot once.
    fn assert_single_cycle(next: impl Fn(usize) -> usize, n: usize) {
        let mut seen = vec![false; n];
        let mut p = 0;
        for step in 0..n {
            assert!(p < n, "link out of range at step {step}");
            assert!(!seen[p], "slot {p} visited twice, at step {step} of {n}");
            seen[p] = true;
            p = next(p);
        }
        assert_eq!(p, 0, "cycle does not close after {n} steps");
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn sattolo_gives_one_cycle_over_every_slot() {
        for n in [1u32, 2, 3, 4, 5, 17, 256, 1000, 65_537] {
            for seed in [0, 1, 42, u64::MAX] {
                let next = sattolo_cycle(n, &mut Rng::new(seed));
                assert_single_cycle(|i| next[i] as usize, n as usize);
            }
        }
    }

    #[test]
    fn session_slots_are_a_line_apart_and_one_cycle() {
        assert_eq!(std::mem::size_of::<Slot>(), 64);
        assert_eq!(std::mem::align_of::<Slot>(), 64);
        let s = LatencySession::new(16 * 1024 + 50, 100, 7).unwrap();
        assert_eq!(s.slots(), 256);
        assert_eq!(s.working_set_bytes(), 16 * 1024);
        assert_eq!(s.slots.as_ptr() as usize % 64, 0);
        assert_single_cycle(|i| s.slots[i].next, s.slots());
    }

    #[test]
    fn order_is_random_not_sequential() {
        let s = LatencySession::new(1 << 20, 1, 3).unwrap();
        let n = s.slots();
        // Links to the next or previous line (what a stride prefetcher would catch) are rare.
        let near = (0..n).filter(|&i| s.slots[i].next.abs_diff(i) <= 1).count();
        assert!(near < 10, "{near} of {n} links go to a neighbouring line");
        // Different seeds give different cycles; the same seed the same one.
        let t = LatencySession::new(1 << 20, 1, 4).unwrap();
        let u = LatencySession::new(1 << 20, 1, 3).unwrap();
        assert!((0..n).any(|i| s.slots[i].next != t.slots[i].next));
        assert!((0..n).all(|i| s.slots[i].next == u.slots[i].next));
    }

    #[test]
    fn ops_carry_position_and_count_loads() {
        let mut s = LatencySession::new(4096, 10, 9).unwrap();
        let start = s.position;
        let out = s.execute().unwrap();
        assert_eq!(
            out,
            OpOutcome {
                bytes: 640,
                items: 10,
                ..Default::default()
            }
        );
        let mut p = start;
        for _ in 0..10 {
            p = s.slots[p].next;
        }
        assert_eq!(s.position, p);
        // 64 slots: after 64 loads in total (this op's 10 plus 54) the chase is back at start.
        s.chase(54);
        assert_eq!(s.position, start);
        assert_eq!(s.finish()["working_set_bytes"], 4096.0);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let e = LatencySession::new(64, 10, 1).unwrap_err();
        assert!(e.message.contains("at least 128"), "{e}");
        let e = LatencySession::new(4096, 0, 1).unwrap_err();
        assert!(e.message.contains("> 0"), "{e}");
        assert!(LatencySession::new(usize::MAX, 1, 1).is_err());
    }
}
