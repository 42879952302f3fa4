//! The "lotto" test: allocation plus search of a large in-memory table of lottery tickets,
//! after the iGenRAM lotto test described in Sun's reports ("an accurate simulation of the
//! California Lotto winner determination ... Memory allocation time as well as memory search
//! performance produce a combined throughput number"). Concretely, in perflab:
//!
//! **Game.** California SuperLotto Plus: a ticket picks 5 distinct numbers of 1..=47 and a
//! Mega number of 1..=27. A ticket is packed in one `u64`: bit `k - 1` is set for each picked
//! number `k` (bits 0..=46, exactly five set) and the Mega number is in bits 56..=63.
//!
//! **Setup (timed by the session itself).** Each worker allocates a table of `table_bytes`
//! (rounded down to whole blocks of 8192 tickets, 64 KiB) and fills it with tickets drawn
//! from the shared seeded [`Rng`] (Floyd's sampling of 5 of the 47 numbers and a uniform
//! Mega number, see `random_ticket`). The time from the allocation request to the last
//! ticket written (allocation, page faults on first touch and ticket generation) is the
//! `alloc_ns` figure; `table_bytes` is the table's size.
//!
//! **Op (a search).** Draw a winning combination the same way, pick a block uniformly among
//! the table's blocks, and check all 8192 tickets of it: the main matches of a ticket are
//! `popcount(ticket & draw & numbers_mask)` and the Mega matches when the Mega fields are
//! equal. Winners are counted in the nine prize tiers of SuperLotto Plus:
//!
//! | tier | 1     | 2 | 3     | 4 | 5     | 6 | 7     | 8     | 9     |
//! |------|-------|---|-------|---|-------|---|-------|-------|-------|
//! | hits | 5 + M | 5 | 4 + M | 4 | 3 + M | 3 | 2 + M | 1 + M | 0 + M |
//!
//! The counts are added to running totals kept by the session (so the search is not dead
//! code). An op reports `items` = tickets checked (8192) and `bytes` = 8 per ticket.

use std::time::Instant;

use crate::workload::rng::Rng;
use crate::workload::session::{Figures, OpError, OpOutcome, Session};

/// Tickets checked by one search.
pub const BLOCK_TICKETS: usize = 8192;
/// Bytes of one ticket.
pub const TICKET_BYTES: usize = 8;
/// Smallest table: one block.
pub const MIN_TABLE_BYTES: usize = BLOCK_TICKETS * TICKET_BYTES;
/// Highest main number (numbers are 1..=47).
pub const NUMBERS: u32 = 47;
/// Numbers picked per ticket.
pub const PICKS: u32 = 5;
/// Highest Mega number (1..=27).
pub const MEGA_NUMBERS: u32 = 27;
/// Prize tiers, best first.
pub const TIERS: usize = 9;

/// Bits of the picked numbers.
const NUMBERS_MASK: u64 = (1 << NUMBERS) - 1;
/// Where the Mega number sits.
const MEGA_SHIFT: u32 = 56;

/// Prize tier (0-based, 0 = jackpot) of a ticket with `hits` main matches and `mega` match,
/// or `None` when it wins nothing.
pub fn tier(hits: u32, mega: bool) -> Option<usize> {
    match (hits, mega) {
        (5, true) => Some(0),
        (5, false) => Some(1),
        (4, true) => Some(2),
        (4, false) => Some(3),
        (3, true) => Some(4),
        (3, false) => Some(5),
        (2, true) => Some(6),
        (1, true) => Some(7),
        (0, true) => Some(8),
        _ => None,
    }
}

/// Pack the numbers (each in 1..=47) and the Mega number (1..=27) of a ticket; `None` if any
/// is out of range or the numbers are not 5 distinct ones.
pub fn pack_ticket(numbers: [u32; 5], mega: u32) -> Option<u64> {
    if !(1..=MEGA_NUMBERS).contains(&mega) {
        return None;
    }
    let mut bits = 0u64;
    for n in numbers {
        if !(1..=NUMBERS).contains(&n) {
            return None;
        }
        bits |= 1 << (n - 1);
    }
    (bits.count_ones() == PICKS).then_some(bits | (u64::from(mega) << MEGA_SHIFT))
}

/// A uniform value in `0..n` (`n > 0`) from the 32 random bits `x`, by Lemire's
/// multiply-and-reject: the high half of `x * n`, unless the low half falls in the few values
/// that would bias it, in which case fresh bits are drawn (rarely: less than `n / 2^32`).
#[inline]
fn bounded(x: u32, n: u32, rng: &mut Rng) -> u32 {
    let mut m = u64::from(x) * u64::from(n);
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(rng.next_u64() as u32) * u64::from(n);
        }
    }
    (m >> 32) as u32
}

/// A random ticket: five distinct numbers and a Mega number, each choice exactly uniform.
///
/// The numbers are drawn with Floyd's sampling algorithm: for `j` in `42..47`, draw `t`
/// uniformly in `0..=j` and add `t` to the set, or `j` if `t` is already in it; this gives
/// every 5-subset of the 47 numbers with the same probability, with exactly five draws and no
/// unpredictable branch (the choice is a conditional move). Each draw takes 32 bits of a
/// random word, so a ticket costs three words: about 6 ns on the reference machine, against
/// about 3 ns per ticket for allocating and first touching the table.
#[inline]
fn random_ticket(rng: &mut Rng) -> u64 {
    let words = [rng.next_u64(), rng.next_u64(), rng.next_u64()];
    let draw = |i: usize| (words[i / 2] >> (32 * (i % 2))) as u32;
    let mut set = 0u64;
    for (i, j) in (NUMBERS - PICKS..NUMBERS).enumerate() {
        let bit = 1u64 << bounded(draw(i), j + 1, rng);
        set |= if set & bit != 0 { 1 << j } else { bit };
    }
    let mega = 1 + bounded(draw(5), MEGA_NUMBERS, rng);
    set | (u64::from(mega) << MEGA_SHIFT)
}

/// Main-number matches and Mega match of `ticket` against `draw`.
#[inline]
fn hits(ticket: u64, draw: u64) -> (u32, bool) {
    (
        (ticket & draw & NUMBERS_MASK).count_ones(),
        (ticket >> MEGA_SHIFT) == (draw >> MEGA_SHIFT),
    )
}

/// Winners per tier among `tickets` for `draw`.
fn count_winners(tickets: &[u64], draw: u64) -> [u64; TIERS] {
    // Histogram over (hits, mega) = 12 cells, kept as four interleaved copies so consecutive
    // tickets rarely increment the same counter back to back; folded into tiers at the end.
    let mut cells = [[0u32; 12]; 4];
    let mut chunks = tickets.chunks_exact(4);
    for chunk in &mut chunks {
        for (cell, &t) in cells.iter_mut().zip(chunk) {
            let (h, m) = hits(t, draw);
            cell[(h as usize) * 2 + usize::from(m)] += 1;
        }
    }
    for &t in chunks.remainder() {
        let (h, m) = hits(t, draw);
        cells[0][(h as usize) * 2 + usize::from(m)] += 1;
    }
    let mut tiers = [0u64; TIERS];
    for h in 0..=5u32 {
        for m in [false, true] {
            if let Some(t) = tier(h, m) {
                let idx = (h as usize) * 2 + usize::from(m);
                tiers[t] += cells.iter().map(|c| u64::from(c[idx])).sum::<u64>();
            }
        }
    }
    tiers
}

/// One worker's ticket table and its searches.
#[derive(Debug)]
pub struct LottoSession {
    tickets: Vec<u64>,
    rng: Rng,
    alloc_ns: u64,
    totals: [u64; TIERS],
    searches: u64,
}

impl LottoSession {
    /// Allocate and fill a table of `table_bytes` (rounded down to whole 64 KiB blocks) of
    /// tickets from `seed`, timing it for the `alloc_ns` figure.
    pub fn new(table_bytes: usize, seed: u64) -> Result<Self, OpError> {
        if table_bytes < MIN_TABLE_BYTES {
            return Err(OpError::other(format!(
                "lotto table of {table_bytes} bytes is too small: use at least {MIN_TABLE_BYTES} \
                 bytes (one block of {BLOCK_TICKETS} tickets)"
            )));
        }
        let count = table_bytes / TICKET_BYTES / BLOCK_TICKETS * BLOCK_TICKETS;
        let mut rng = Rng::new(seed);
        let start = Instant::now();
        let mut tickets = Vec::new();
        tickets.try_reserve_exact(count).map_err(|e| {
            OpError::other(format!(
                "cannot allocate lotto table of {table_bytes} bytes ({e}): use a smaller table"
            ))
        })?;
        tickets.extend((0..count).map(|_| random_ticket(&mut rng)));
        let alloc_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Ok(LottoSession {
            tickets,
            rng,
            alloc_ns,
            totals: [0; TIERS],
            searches: 0,
        })
    }

    #[cfg(test)]
    fn from_tickets(tickets: Vec<u64>, seed: u64) -> Self {
        LottoSession {
            tickets,
            rng: Rng::new(seed),
            alloc_ns: 0,
            totals: [0; TIERS],
            searches: 0,
        }
    }

    /// Bytes of the table.
    pub fn table_bytes(&self) -> usize {
        self.tickets.len() * TICKET_BYTES
    }

    /// Time taken to allocate and fill the table, in nanoseconds.
    pub fn alloc_ns(&self) -> u64 {
        self.alloc_ns
    }

    /// Winners per tier (jackpot first) over all searches so far.
    pub fn tier_totals(&self) -> [u64; TIERS] {
        self.totals
    }

    /// Searches run so far.
    pub fn searches(&self) -> u64 {
        self.searches
    }

    /// Check block `block` against `draw`, add the winners to the totals and return them.
    fn search_block(&mut self, block: usize, draw: u64) -> [u64; TIERS] {
        let start = block * BLOCK_TICKETS;
        let found = match self.tickets.get(start..start + BLOCK_TICKETS) {
            Some(tickets) => count_winners(tickets, draw),
            None => [0; TIERS],
        };
        for (t, f) in self.totals.iter_mut().zip(found) {
            *t += f;
        }
        self.searches += 1;
        found
    }
}

impl Session for LottoSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let draw = random_ticket(&mut self.rng);
        let blocks = self.tickets.len() / BLOCK_TICKETS;
        let block = self.rng.below_usize(blocks);
        self.search_block(block, draw);
        Ok(OpOutcome {
            bytes: (BLOCK_TICKETS * TICKET_BYTES) as u64,
            items: BLOCK_TICKETS as u64,
            ..Default::default()
        })
    }

    fn finish(&mut self) -> Figures {
        let mut f = Figures::new();
        f.insert("alloc_ns".to_string(), self.alloc_ns as f64);
        f.insert("table_bytes".to_string(), self.table_bytes() as f64);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(numbers: [u32; 5], mega: u32) -> u64 {
        pack_ticket(numbers, mega).unwrap()
    }

    #[test]
    fn packing() {
        let x = t([1, 2, 3, 46, 47], 27);
        assert_eq!(x & NUMBERS_MASK, 0b111 | (0b11 << 45));
        assert_eq!(x >> MEGA_SHIFT, 27);
        assert_eq!(pack_ticket([1, 1, 2, 3, 4], 1), None);
        assert_eq!(pack_ticket([0, 1, 2, 3, 4], 1), None);
        assert_eq!(pack_ticket([1, 2, 3, 4, 48], 1), None);
        assert_eq!(pack_ticket([1, 2, 3, 4, 5], 0), None);
        assert_eq!(pack_ticket([1, 2, 3, 4, 5], 28), None);
    }

    #[test]
    fn random_tickets_are_valid() {
        let mut rng = Rng::new(5);
        let mut megas = [0u32; 28];
        let mut numbers = [0u32; 48];
        for _ in 0..20_000 {
            let x = random_ticket(&mut rng);
            assert_eq!((x & NUMBERS_MASK).count_ones(), 5);
            assert_eq!(x & !NUMBERS_MASK & ((1 << MEGA_SHIFT) - 1), 0);
            let mega = (x >> MEGA_SHIFT) as usize;
            assert!((1..=27).contains(&mega));
            megas[mega] += 1;
            for (k, n) in numbers.iter_mut().enumerate().skip(1) {
                *n += ((x >> (k - 1)) & 1) as u32;
            }
        }
        // Every number and Mega number turns up, none wildly over-represented.
        assert!(
            megas[1..].iter().all(|&m| (500..1000).contains(&m)),
            "{megas:?}"
        );
        assert!(
            numbers[1..].iter().all(|&n| (1800..2450).contains(&n)),
            "{numbers:?}"
        );
    }

    #[test]
    fn tiers_of_hand_made_tickets() {
        let draw = t([3, 11, 19, 27, 41], 7);
        let tickets = vec![
            t([3, 11, 19, 27, 41], 7),  // 5 + M: jackpot
            t([41, 27, 19, 11, 3], 8),  // 5
            t([3, 11, 19, 27, 1], 7),   // 4 + M
            t([3, 11, 19, 2, 27], 1),   // 4
            t([3, 11, 19, 1, 2], 7),    // 3 + M
            t([19, 11, 3, 46, 47], 26), // 3
            t([3, 11, 1, 2, 4], 7),     // 2 + M
            t([3, 11, 1, 2, 4], 6),     // 2: nothing
            t([41, 1, 2, 4, 5], 7),     // 1 + M
            t([41, 1, 2, 4, 5], 27),    // 1: nothing
            t([1, 2, 4, 5, 6], 7),      // 0 + M
            t([1, 2, 4, 5, 6], 17),     // nothing
            t([3, 11, 19, 27, 41], 7),  // a second jackpot
        ];
        assert_eq!(count_winners(&tickets, draw), [2, 1, 1, 1, 1, 1, 1, 1, 1]);
        // Totals add up over searches; the block is padded with losers to a full block.
        let mut table = tickets.clone();
        table.resize(BLOCK_TICKETS, t([1, 2, 4, 5, 6], 1));
        let mut s = LottoSession::from_tickets(table, 1);
        s.search_block(0, draw);
        s.search_block(0, draw);
        assert_eq!(s.tier_totals(), [4, 2, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(s.searches(), 2);
        assert_eq!(s.search_block(1, draw), [0; TIERS]);
    }

    #[test]
    fn tier_table() {
        assert_eq!(tier(5, true), Some(0));
        assert_eq!(tier(0, true), Some(8));
        assert_eq!(tier(2, false), None);
        assert_eq!(tier(0, false), None);
    }

    #[test]
    fn session_searches_and_reports() {
        let mut s = LottoSession::new(4 * MIN_TABLE_BYTES + 100, 11).unwrap();
        assert_eq!(s.table_bytes(), 4 * MIN_TABLE_BYTES);
        for _ in 0..50 {
            let out = s.execute().unwrap();
            assert_eq!(out.items, 8192);
            assert_eq!(out.bytes, 65536);
        }
        assert_eq!(s.searches(), 50);
        // 0 + M alone wins with probability about 0.55 / 27: about 8400 of 409,600 tickets.
        let totals = s.tier_totals();
        assert!(totals[8] > 5_000, "{totals:?}");
        assert!(totals[7] > totals[6], "{totals:?}");
        let f = s.finish();
        assert_eq!(f["table_bytes"], (4 * MIN_TABLE_BYTES) as f64);
        assert!(f["alloc_ns"] > 0.0);
        // Same seed, same table and same searches.
        let mut u = LottoSession::new(4 * MIN_TABLE_BYTES, 11).unwrap();
        assert_eq!(u.tickets, s.tickets);
        for _ in 0..50 {
            u.execute().unwrap();
        }
        assert_eq!(u.tier_totals(), totals);
    }

    #[test]
    fn too_small_table_is_an_error() {
        let e = LottoSession::new(MIN_TABLE_BYTES - 1, 1).unwrap_err();
        assert!(e.message.contains("at least 65536"), "{e}");
    }
}
