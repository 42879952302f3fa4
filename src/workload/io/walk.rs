//! Where a job file's next I/O goes, by fio's rules (io_u.c `get_next_offset`,
//! `get_next_block`, `get_next_seq_offset`): the order of offsets within one file's region,
//! beyond "walk it" or "pick at random".
//!
//! The region is fio's: it starts at the copy's `file_offset` (`offset`, plus
//! `offset_increment` per copy), spans `io_size` bytes (`len`), in a file of `file_len`
//! bytes (fio's `real_file_size`). Each direction keeps its own cursor (`last_pos`, the end
//! of its last I/O) and its last start, as fio's do: a sequential mixed job walks its reads
//! and its writes each from the region's start.
//!
//! - `rw=read:N` (sequential with a skip): after each I/O the next starts N bytes past its
//!   end (N < 0 goes backwards). Past the file's end it wraps: forwards to the region's
//!   start, backwards to the region's end. A backwards job with an offset jumps to the end
//!   at its first I/O. fio's arithmetic is kept exactly, quirks included (a forward wrap
//!   lands on the *file offset* counted from the region's start; see `seq`).
//! - `rw=randread:N`: a random offset every N I/Os (the first I/O is one), in between the
//!   next sequential offset (`rw_sequencer=sequential`) or the same offset again
//!   (`identical`).
//! - `percentage_random`: each random choice is sequential instead with the rest of the
//!   odds.
//!
//! A choice that falls outside the region ends the pass over the file (fio marks the file
//! done); the caller starts a new pass from the region's start, or ends the job.
//! [`Walk::choose`] says what kind of offset comes next; the caller picks random blocks
//! (its distribution, its random map), and [`Walk::place`] checks the offset as fio's
//! `get_next_offset` does.

use crate::workload::rng::Rng;
use serde::Serialize;

/// What a job's options say about its offsets, the same for every file and copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WalkRules {
    /// `rw=read:N`: bytes added after each sequential I/O (fio's `ddir_seq_add`).
    pub skip: i64,
    /// `rw=randread:N`: a new random offset every N I/Os (fio's `ddir_seq_nr`; 1 is every).
    pub every: u32,
    /// `rw_sequencer=identical`: between random offsets, the same offset again.
    pub identical: bool,
    /// `percentage_random` of reads and writes (100: all random).
    pub random_pct: [u32; 2],
    /// `time_based` with one file: the cursor goes back to the region's start at its end
    /// within the pass (fio's first rule in `get_next_seq_offset`).
    pub rewind: bool,
}

impl Default for WalkRules {
    fn default() -> Self {
        WalkRules {
            skip: 0,
            every: 1,
            identical: false,
            random_pct: [100, 100],
            rewind: false,
        }
    }
}

impl WalkRules {
    /// The rules in words, for a plan (None: plain walking or picking).
    pub fn describe(&self, random: bool) -> Option<String> {
        let bytes = |b: u64| crate::vocab::units::format_bytes(b);
        let mut parts = Vec::new();
        if !random && self.skip != 0 {
            parts.push(match self.skip {
                s if s < 0 => format!(
                    "backwards, {} back after each I/O's end",
                    bytes(s.unsigned_abs())
                ),
                s => format!("{} skipped after each I/O", bytes(s as u64)),
            });
        }
        if random && self.every > 1 {
            let between = if self.identical {
                "the same offset"
            } else {
                "sequential"
            };
            parts.push(format!(
                "a random offset every {} I/Os, {between} between",
                self.every
            ));
        }
        if random && self.random_pct != [100, 100] {
            let [r, w] = self.random_pct;
            parts.push(if r == w {
                format!("{r}% random")
            } else {
                format!("{r}% of reads and {w}% of writes random")
            });
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// What the next offset is, before it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// This many bytes from the region's start (fio's relative offset; may be past it).
    At(u64),
    /// A random block, which the caller picks.
    Random,
    /// Nothing: the pass over this file is over.
    End,
}

/// One file's region, walked by one copy of a job.
#[derive(Debug, Clone)]
pub struct Walk {
    rules: WalkRules,
    /// The pattern is random (fio's `td_random`).
    random: bool,
    start: u64,
    len: u64,
    file_len: u64,
    /// Per direction (read, write): the end of the last I/O, absolute.
    last_pos: [u64; 2],
    /// Per direction: the start of the last I/O, absolute.
    last_start: [Option<u64>; 2],
    /// I/Os until the next random one (fio's `td->ddir_seq_nr`, 1 at the start so the first
    /// I/O is random).
    countdown: u32,
    /// A cursor went back to the region's start within the pass since the last
    /// [`Walk::take_rewound`] (fio drops the file's cached pages then).
    rewound: bool,
}

impl Walk {
    pub fn new(rules: WalkRules, random: bool, start: u64, len: u64, file_len: u64) -> Walk {
        Walk {
            rules,
            random,
            start,
            len,
            file_len,
            last_pos: [start; 2],
            last_start: [None; 2],
            countdown: 1,
            rewound: false,
        }
    }

    /// Whether a cursor went back to the region's start within the pass since the last call.
    pub fn take_rewound(&mut self) -> bool {
        std::mem::take(&mut self.rewound)
    }

    pub fn start(&self) -> u64 {
        self.start
    }

    /// The end of the region (fio's `io_size` past `file_offset`).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// The file's length (fio's `real_file_size`).
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// A new pass from the region's start (fio's `fio_file_reset`).
    pub fn restart(&mut self) {
        self.last_pos = [self.start; 2];
        self.last_start = [None; 2];
    }

    /// The kind of offset the next I/O in direction `write` takes.
    pub fn choose(&mut self, write: bool, rng: &mut Rng) -> Choice {
        let d = usize::from(write);
        let hit = {
            self.countdown -= 1;
            if self.countdown == 0 {
                self.countdown = self.rules.every.max(1);
                true
            } else {
                false
            }
        };
        if hit {
            if !self.random {
                return self.seq(d).map_or(Choice::End, Choice::At);
            }
            let pct = self.rules.random_pct[d];
            if pct >= 100 || (rng.below(100) as u32) < pct {
                return Choice::Random;
            }
            return self.seq(d).map_or(Choice::Random, Choice::At);
        }
        if self.rules.identical {
            let at = self.last_start[d].map_or(0, |s| s.wrapping_sub(self.start));
            return Choice::At(at);
        }
        self.seq(d).map_or(Choice::Random, Choice::At)
    }

    /// A relative offset placed in the file, or None where fio's `get_next_offset` gives up
    /// (past the region, or past the file).
    pub fn place(&self, pos: u64) -> Option<u64> {
        if pos >= self.len {
            return None;
        }
        let at = pos.checked_add(self.start)?;
        (at < self.file_len).then_some(at)
    }

    /// An I/O was issued at `offset` for `len` bytes.
    pub fn issued(&mut self, write: bool, offset: u64, len: u64) {
        let d = usize::from(write);
        self.last_start[d] = Some(offset);
        self.last_pos[d] = offset.saturating_add(len);
    }

    /// fio's `get_next_seq_offset`, relative to the region's start, in fio's unsigned
    /// arithmetic (a relative offset "below zero" is a huge one, which ends the pass).
    fn seq(&mut self, d: usize) -> Option<u64> {
        let (s, l, f) = (self.start, self.len, self.file_len);
        let skip = self.rules.skip;
        if self.rules.rewind && self.last_pos[d] >= l.saturating_add(s) {
            self.last_pos[d] = s;
            self.rewound = true;
        }
        if self.last_pos[d] >= f {
            return None;
        }
        // The end the backwards walk wraps to: the region's length, or the file's if
        // shorter (fio compares the two, whatever the offset).
        let back_end = if f > l { l } else { f };
        // Only rewind if we already hit the end: a backwards walk with an offset starts
        // from there.
        if self.last_pos[d] == s && s != 0 && skip < 0 {
            self.last_pos[d] = back_end;
        }
        let mut pos = self.last_pos[d].wrapping_sub(s);
        if pos != 0 && skip != 0 {
            pos = pos.wrapping_add(skip as u64);
            if pos >= f {
                pos = if skip > 0 {
                    // fio sets the relative position to the file offset itself.
                    s
                } else {
                    back_end.wrapping_add(skip as u64)
                };
            }
        }
        Some(pos)
    }
}

/// A file's length, or a block device's (fio's `real_file_size`), as opened.
pub fn file_len(file: &std::fs::File) -> u64 {
    use std::io::{Seek, SeekFrom};
    // Seeking a shared reference moves the descriptor's position, which perflab's
    // positioned reads and writes ignore.
    let mut f = file;
    f.seek(SeekFrom::End(0)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    /// The offsets of `n` reads of `bs` bytes, starting each pass anew at its end.
    fn offsets(walk: &mut Walk, n: usize, bs: u64) -> Vec<u64> {
        let mut rng = Rng::new(1);
        let mut out = Vec::new();
        while out.len() < n {
            let at = match walk.choose(false, &mut rng) {
                Choice::At(pos) => walk.place(pos),
                Choice::Random => panic!("a sequential walk chose a random offset"),
                Choice::End => None,
            };
            let Some(at) = at.filter(|a| a + bs <= walk.file_len()) else {
                walk.restart();
                out.push(u64::MAX);
                continue;
            };
            walk.issued(false, at, bs);
            out.push(at);
        }
        out
    }

    #[test]
    fn backwards_read_goes_where_fios_does() {
        // backwards-read.fio: bs=4k, rw=read:-8k, size=128m over a file of 128m.
        let size = 128 * K * K;
        let rules = WalkRules {
            skip: -8 * 1024,
            ..WalkRules::default()
        };
        let mut w = Walk::new(rules, false, 0, size, size);
        let got = offsets(&mut w, 32 * K as usize * 2, 4 * K);
        // 0, then from the end backwards: size-8k, size-12k, ..., 4k, 0, and round again.
        assert_eq!(got[0], 0);
        assert_eq!(got[1], size - 8 * K);
        assert_eq!(got[2], size - 12 * K);
        let pass = (size / (4 * K)) as usize - 1; // every block but the last, once
        assert_eq!(got[pass - 1], 4 * K);
        assert_eq!(got[pass], 0);
        assert_eq!(got[pass + 1], size - 8 * K);
        assert!(
            got.iter().all(|&o| o != u64::MAX),
            "a backwards walk never ends"
        );
        let distinct: std::collections::BTreeSet<_> = got[..pass].iter().collect();
        assert_eq!(distinct.len(), pass);
        assert!(!got.contains(&(size - 4 * K)));
    }

    #[test]
    fn backwards_with_an_offset_jumps_to_the_end_first() {
        // offset=64k, size=64k in a file of 128k, bs=4k, rw=read:-8k: fio rewinds its
        // cursor to io_size (64k), which is the region's start: 64k, then 128k-8k down.
        let mut w = Walk::new(
            WalkRules {
                skip: -8 * 1024,
                ..WalkRules::default()
            },
            false,
            64 * K,
            64 * K,
            128 * K,
        );
        let got = offsets(&mut w, 4, 4 * K);
        assert_eq!(got, vec![64 * K, 120 * K, 116 * K, 112 * K]);
    }

    #[test]
    fn a_forward_skip_leaves_holes() {
        let rules = WalkRules {
            skip: 4 * 1024,
            ..WalkRules::default()
        };
        // rw=write:4k with bs=4k over a file of 32k: every other block; past the file's end
        // fio wraps to the start within the pass, so the pass never ends.
        let mut w = Walk::new(rules, false, 0, 32 * K, 32 * K);
        let got = offsets(&mut w, 6, 4 * K);
        assert_eq!(got, vec![0, 8 * K, 16 * K, 24 * K, 0, 8 * K]);
        // In a file larger than the region, the walk runs past the region: the pass ends.
        let mut w = Walk::new(rules, false, 0, 32 * K, 64 * K);
        let got = offsets(&mut w, 6, 4 * K);
        assert_eq!(got, vec![0, 8 * K, 16 * K, 24 * K, u64::MAX, 0]);
        // With an offset, fio's wrap past the file's end lands on the offset counted from
        // the region's start (8k + 8k), again and again: offset=8k, size=24k, rw=read:28k.
        let rules = WalkRules {
            skip: 28 * 1024,
            ..WalkRules::default()
        };
        let mut w = Walk::new(rules, false, 8 * K, 24 * K, 32 * K);
        let got = offsets(&mut w, 4, 4 * K);
        assert_eq!(got, vec![8 * K, 16 * K, 16 * K, 16 * K]);
    }

    #[test]
    fn plain_sequential_walks_each_direction_on_its_own() {
        let mut w = Walk::new(WalkRules::default(), false, 8 * K, 16 * K, 24 * K);
        let mut rng = Rng::new(1);
        let mut next = |w: &mut Walk, write| match w.choose(write, &mut rng) {
            Choice::At(p) => {
                let at = w.place(p).unwrap();
                w.issued(write, at, 4 * K);
                at
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(next(&mut w, false), 8 * K);
        assert_eq!(next(&mut w, false), 12 * K);
        assert_eq!(next(&mut w, true), 8 * K);
        assert_eq!(next(&mut w, false), 16 * K);
        assert_eq!(next(&mut w, true), 12 * K);
        assert_eq!(next(&mut w, false), 20 * K);
        // The read cursor is at the file's end: the pass is over for reads.
        assert_eq!(w.choose(false, &mut rng), Choice::End);
        // In a longer file it stops at the region's end.
        let mut w = Walk::new(WalkRules::default(), false, 0, 4 * K, 24 * K);
        w.issued(false, 0, 4 * K);
        assert_eq!(w.choose(false, &mut rng), Choice::At(4 * K));
        assert_eq!(w.place(4 * K), None);
    }

    /// Kinds of the first `n` choices of a random walk whose random blocks land at
    /// `random_at`, each I/O 4k.
    fn random_kinds(rules: WalkRules, n: usize, random_at: &[u64]) -> Vec<(char, u64)> {
        let mut w = Walk::new(rules, true, 0, 1 << 20, 1 << 20);
        let mut rng = Rng::new(9);
        let mut picks = random_at.iter().copied();
        (0..n)
            .map(|_| {
                let (kind, pos) = match w.choose(false, &mut rng) {
                    Choice::Random => ('r', picks.next().unwrap()),
                    Choice::At(p) => ('s', p),
                    Choice::End => panic!("end"),
                };
                let at = w.place(pos).unwrap();
                w.issued(false, at, 4096);
                (kind, at)
            })
            .collect()
    }

    #[test]
    fn time_based_rewinds_within_the_pass_and_says_so() {
        let rules = WalkRules {
            rewind: true,
            ..WalkRules::default()
        };
        // A region of 8k in a file of 16k: past the region, back to its start (without
        // rewind the pass would end there).
        let mut w = Walk::new(rules, false, 0, 8 * K, 16 * K);
        let got = offsets(&mut w, 4, 4 * K);
        assert_eq!(got, vec![0, 4 * K, 0, 4 * K]);
        assert!(w.take_rewound());
        assert!(!w.take_rewound());
    }

    #[test]
    fn a_random_offset_every_n_ios_sequential_in_between() {
        let rules = WalkRules {
            every: 3,
            ..WalkRules::default()
        };
        let got = random_kinds(rules, 7, &[400 * K, 100 * K, 800 * K]);
        assert_eq!(
            got,
            vec![
                ('r', 400 * K),
                ('s', 404 * K),
                ('s', 408 * K),
                ('r', 100 * K),
                ('s', 104 * K),
                ('s', 108 * K),
                ('r', 800 * K),
            ]
        );
    }

    #[test]
    fn identical_repeats_the_random_offset() {
        let rules = WalkRules {
            every: 3,
            identical: true,
            ..WalkRules::default()
        };
        let got = random_kinds(rules, 6, &[400 * K, 100 * K]);
        assert_eq!(
            got,
            vec![
                ('r', 400 * K),
                ('s', 400 * K),
                ('s', 400 * K),
                ('r', 100 * K),
                ('s', 100 * K),
                ('s', 100 * K),
            ]
        );
    }

    #[test]
    fn percentage_random_mixes_in_sequential_ios() {
        let rules = WalkRules {
            random_pct: [25, 100],
            ..WalkRules::default()
        };
        let picks: Vec<u64> = (0..10_000).map(|i| (i % 200) * 4096).collect();
        let got = random_kinds(rules, 10_000, &picks);
        let random = got.iter().filter(|(k, _)| *k == 'r').count();
        assert!((2200..2800).contains(&random), "{random}");
        // A sequential I/O follows the one before it.
        for pair in got.windows(2) {
            if pair[1].0 == 's' {
                assert_eq!(pair[1].1, pair[0].1 + 4096);
            }
        }
    }
}
