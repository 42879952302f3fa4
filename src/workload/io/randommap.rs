//! fio's random map (lib/axmap.c's meaning): which blocks of a file a random job has
//! touched in this pass, so that each block is done once per pass.
//!
//! fio keeps one bit per block of the job's smallest block size. A random offset is drawn
//! over the whole region; if its bit is set, the next free bit after it is taken instead
//! (wrapping to the start), and when none is left the pass is over. An I/O then marks the
//! bits it covers, up to the first bit already set, and is *shortened* to what it marked:
//! a 64 KiB I/O drawn in front of a used 4 KiB block does 4 KiB. With mixed block sizes
//! (`bssplit`) this is why fio's mean I/O size falls as a pass fills (fio's
//! iometer-file-access-server.fio: 5.0 KiB against the split's 11.4 KiB), and why a pass
//! moves exactly the region's bytes.
//!
//! The map is a tree of 64-bit words, as fio's: a bit of level k+1 is set when its word of
//! level k is full, so finding a free block skips full stretches a word of 64 words at a
//! time and a pass over a large file stays linear.

/// How a job file's uniform random job keeps track of the blocks it has done (fio's
/// `norandommap` and `random_generator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MapRule {
    /// `norandommap`: every offset drawn afresh, blocks repeat within a pass.
    #[default]
    Off,
    /// fio's random map (the default): each block once a pass, I/Os shortened at used
    /// blocks.
    Shorten,
    /// `random_generator=lfsr`: fio keeps no map, its generator gives each block once a pass
    /// and the I/O keeps its drawn size.
    Once,
}

/// Bits per word.
const UNIT: u64 = 64;

/// One bit per block, with the levels that summarise full words.
#[derive(Debug, Clone)]
pub struct RandomMap {
    /// Level 0 is the blocks; each next level has a bit per word of the one below.
    levels: Vec<Vec<u64>>,
    blocks: u64,
}

impl RandomMap {
    /// A map of `blocks` free blocks (at least one).
    pub fn new(blocks: u64) -> RandomMap {
        let blocks = blocks.max(1);
        let mut levels = Vec::new();
        let mut bits = blocks;
        loop {
            let words = bits.div_ceil(UNIT);
            levels.push(vec![0u64; words as usize]);
            if words == 1 {
                break;
            }
            bits = words;
        }
        RandomMap { levels, blocks }
    }

    /// The number of blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Every block free again (fio's `fio_file_reset`).
    pub fn clear(&mut self) {
        for level in &mut self.levels {
            level.fill(0);
        }
    }

    /// Whether block `b` is used (a block past the map counts as used).
    pub fn is_set(&self, b: u64) -> bool {
        b >= self.blocks || self.levels[0][(b / UNIT) as usize] & (1 << (b % UNIT)) != 0
    }

    /// The first free block at or after `from`, not wrapping.
    fn first_free_from(&self, from: u64) -> Option<u64> {
        if from >= self.blocks {
            return None;
        }
        // Walk down from the top: at each level, the first word index at least as large as
        // `from` at that level's scale, then its first clear bit.
        let mut index = 0u64;
        for (k, level) in self.levels.iter().enumerate().rev() {
            index = (index * UNIT).max(from >> (6 * k as u32));
            let (mut word, bit) = ((index / UNIT) as usize, index % UNIT);
            let first = level.get(word)? | ((1u64 << bit) - 1);
            let mut free = !first;
            while free == 0 {
                word += 1;
                free = !*level.get(word)?;
            }
            index = word as u64 * UNIT + u64::from(free.trailing_zeros());
        }
        (index < self.blocks).then_some(index)
    }

    /// The next free block after the used block `b`, wrapping to the map's start; None
    /// when every block is used (fio's `axmap_next_free`).
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if b >= self.blocks {
            return None;
        }
        let next = if b + 1 == self.blocks { 0 } else { b + 1 };
        self.first_free_from(next)
            .or_else(|| (next != 0).then(|| self.first_free_from(0)).flatten())
    }

    /// Marks up to `n` blocks from `b`, stopping at the first one already used; returns how
    /// many it marked (fio's `axmap_set_nr`: 0 when `b` itself is used).
    pub fn set_run(&mut self, b: u64, n: u64) -> u64 {
        let n = n.min(self.blocks.saturating_sub(b));
        let mut done = 0;
        while done < n {
            let at = b + done;
            let (word, bit) = ((at / UNIT) as usize, at % UNIT);
            let room = (UNIT - bit).min(n - done);
            let mask = ones(room) << bit;
            let used = self.levels[0][word] & mask;
            // Up to the first used bit in this word's stretch.
            let take = if used == 0 {
                room
            } else {
                u64::from(used.trailing_zeros()) - bit
            };
            if take == 0 {
                break;
            }
            self.levels[0][word] |= ones(take) << bit;
            self.full_upwards(word);
            done += take;
            if take < room {
                break;
            }
        }
        done
    }

    /// After a word of level 0 changed: where it became full, set its bit a level up, and so
    /// on while words fill.
    fn full_upwards(&mut self, mut word: usize) {
        // Bits in use at the level being looked at: its last word may be partly empty.
        let mut bits = self.blocks;
        for k in 0..self.levels.len() - 1 {
            let words = self.levels[k].len();
            let width = if word == words - 1 {
                bits - word as u64 * UNIT
            } else {
                UNIT
            };
            if self.levels[k][word] != ones(width) {
                return;
            }
            let up = word / UNIT as usize;
            self.levels[k + 1][up] |= 1 << (word as u64 % UNIT);
            bits = words as u64;
            word = up;
        }
    }
}

/// The low `n` bits set (n <= 64).
fn ones(n: u64) -> u64 {
    if n >= UNIT { u64::MAX } else { (1u64 << n) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_at_the_first_used_block() {
        let mut m = RandomMap::new(200);
        assert_eq!(m.set_run(10, 1), 1);
        assert_eq!(m.set_run(5, 16), 5, "5..10, then 10 is used");
        assert_eq!(m.set_run(10, 4), 0);
        // Across a word boundary.
        assert_eq!(m.set_run(60, 16), 16);
        assert!(m.is_set(75) && !m.is_set(76));
        // Clipped at the map's end.
        assert_eq!(m.set_run(198, 16), 2);
    }

    #[test]
    fn next_free_skips_used_blocks_and_wraps() {
        let mut m = RandomMap::new(130);
        assert_eq!(m.set_run(0, 64), 64);
        assert_eq!(m.set_run(64, 64), 64);
        assert_eq!(m.next_free(3), Some(128));
        assert_eq!(m.set_run(128, 1), 1);
        assert_eq!(m.next_free(128), Some(129));
        assert_eq!(m.set_run(129, 1), 1);
        assert_eq!(m.next_free(129), None);
        m.clear();
        assert_eq!(m.next_free(129), Some(0));
    }

    #[test]
    fn a_large_map_fills_once_and_finds_every_block() {
        // Three levels; mark every block in a scrambled order, each exactly once.
        let n = 64 * 64 * 3 + 17;
        let mut m = RandomMap::new(n);
        let mut b = 7u64;
        for _ in 0..n {
            let at = if m.is_set(b) {
                m.next_free(b).unwrap()
            } else {
                b
            };
            assert_eq!(m.set_run(at, 1), 1);
            b = (b + 7919) % n;
        }
        assert_eq!(m.next_free(0), None);
        assert!((0..n).all(|b| m.is_set(b)));
    }
}
