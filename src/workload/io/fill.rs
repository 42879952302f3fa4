//! The bytes a job file's writes carry, made as [`super::contents::Contents`] says: one
//! [`Filler`] per copy of a job, called when the copy opens (each slot's buffer filled once,
//! as fio fills its buffers when a job starts) and before each write (refilled, or
//! scrambled). Sessions without contents of their own never call it, so perflab's own write
//! path (random bytes filled once) costs nothing more.
//!
//! The random bytes come from perflab's own generator, not fio's, so the bytes differ from
//! fio's; what they mean is fio's: which share of a buffer compresses, which writes repeat
//! which, and that no two scrambled writes carry the same bytes.
//!
//! A copy's unique buffers come from a stream: seed `n` of copy `g` is a hash of the run's
//! seed, `g` and `n`, and each chunk of a buffer takes the next seed. A repeat (dedupe)
//! regenerates a buffer from a place in a stream without moving the copy's own: in `repeat`
//! mode where the stream is now, in `working_set` mode where one of its first buffers began,
//! so any copy can regenerate any other's buffers (`dedupe_global`) from their numbers alone.

use super::contents::{Contents, Dedupe, DedupeFrom, Fill};
use crate::workload::rng::Rng;
use std::time::{Duration, Instant, SystemTime};

/// A place in a copy's stream of seeds.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    copy: u64,
    at: u64,
}

/// One copy's write contents.
pub struct Filler {
    contents: Contents,
    seed: u64,
    /// This copy among all of the file's (fio's thread number, 0-based).
    copy: u64,
    /// How far this copy's unique stream has gone.
    at: u64,
    /// Which writes repeat, and which working-set block they repeat.
    choices: Rng,
    /// The scramble's clock: the wall time at `epoch`.
    epoch: Instant,
    wall: Duration,
}

impl Filler {
    /// Copy `copy` (among all of the file's) of a job with these contents, in a run with
    /// this seed.
    pub fn new(contents: Contents, seed: u64, copy: u32) -> Filler {
        let copy = u64::from(copy);
        Filler {
            contents,
            seed,
            copy,
            at: 0,
            choices: Rng::new(mix(seed ^ 0x6465_6475_7065, copy)),
            epoch: Instant::now(),
            wall: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        }
    }

    /// A slot's buffer when the copy opens: filled once, as fio fills every buffer of a job
    /// that writes.
    pub fn initial(&mut self, buf: &mut [u8]) {
        self.fill(buf);
    }

    /// Just before `buf` is written at `offset`, issued at `at`: refilled, or scrambled, or
    /// left as it is.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64, at: Instant) {
        if self.contents.refill {
            self.fill(buf);
        } else if self.contents.scramble {
            let t = self.wall + at.saturating_duration_since(self.epoch);
            scramble(buf, offset, t);
        }
    }

    fn fill(&mut self, buf: &mut [u8]) {
        match &self.contents.fill {
            Fill::Random => {
                let seed = seed_at(self.seed, self.own());
                self.at += 1;
                random(buf, seed);
            }
            Fill::Zero => buf.fill(0),
            Fill::Pattern(p) => repeat(buf, p),
            Fill::Chunks { .. } => self.chunks(buf),
        }
    }

    fn own(&self) -> Cursor {
        Cursor {
            copy: self.copy,
            at: self.at,
        }
    }

    /// Where this buffer's seeds start, and whether it is a unique one (the copy's stream
    /// moves on past it) or a repeat (it does not).
    fn source(&mut self, dedupe: Option<Dedupe>) -> (Cursor, bool) {
        let Some(d) = dedupe else {
            return (self.own(), true);
        };
        if d.percentage < 100 && 1 + self.choices.below(100) > u64::from(d.percentage) {
            return (self.own(), true);
        }
        match d.from {
            DedupeFrom::Repeat => (self.own(), false),
            DedupeFrom::WorkingSet { pages, global } => {
                let page = self.choices.below(pages);
                let per_page = self.seeds_per_page();
                let cursor = match global {
                    None => Cursor {
                        copy: self.copy,
                        at: page * per_page,
                    },
                    // fio (dedupe.c): the set is the copies' first buffers in turn, this
                    // copy's first, as many from each as the set over the copies.
                    Some(g) => {
                        let all = u64::from(g.all_copies);
                        let each = (pages / all).max(1);
                        Cursor {
                            copy: (self.copy + page / each) % all,
                            at: (page % each) * per_page,
                        }
                    }
                };
                (cursor, false)
            }
        }
    }

    /// Seeds one smallest write takes: one per chunk.
    fn seeds_per_page(&self) -> u64 {
        let Fill::Chunks { chunk, .. } = self.contents.fill else {
            return 1;
        };
        let w = self.contents.min_write;
        w / min_not_zero(w, chunk).max(1)
    }

    /// fio's compressible (and deduplicable) buffer: chunks, each from its own seed.
    fn chunks(&mut self, buf: &mut [u8]) {
        let Fill::Chunks { dedupe, .. } = self.contents.fill else {
            return;
        };
        let same = dedupe.is_some_and(|d| d.percentage == 100);
        let (mut cursor, unique) = self.source(dedupe);
        let Fill::Chunks {
            compress,
            chunk,
            ref pattern,
            ..
        } = self.contents.fill
        else {
            return;
        };
        let mut min_write = self.contents.min_write as usize;
        let mut off = 0;
        while off < buf.len() {
            let left = buf.len() - off;
            min_write = min_write.min(left).max(1);
            let this = min_not_zero(min_write as u64, chunk) as usize;
            let seed = seed_at(self.seed, cursor);
            // At 100 percent every chunk of every buffer is the same one (fio restores its
            // state after each).
            if !same {
                cursor.at += 1;
            }
            compressible(
                &mut buf[off..off + this],
                seed,
                compress,
                pattern.as_deref(),
            );
            off += this;
        }
        if unique {
            self.at = cursor.at;
        }
    }
}

fn min_not_zero(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// splitmix64's finalizer over `a` and `b`.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Seed `at` of copy `copy`'s stream.
fn seed_at(seed: u64, c: Cursor) -> u64 {
    mix(mix(seed, c.copy.wrapping_add(1)), c.at)
}

/// One chunk: random for its first (100 - `compress`) percent, then zeros or the pattern.
fn compressible(buf: &mut [u8], seed: u64, compress: u32, pattern: Option<&[u8]>) {
    let random_len = if compress >= 100 {
        0
    } else {
        (buf.len() as u64 * u64::from(100 - compress) / 100) as usize
    };
    let (head, tail) = buf.split_at_mut(random_len);
    random(head, seed);
    match pattern {
        Some(p) => repeat(tail, p),
        None => tail.fill(0),
    }
}

/// `p` repeated from the start of `buf`.
fn repeat(buf: &mut [u8], p: &[u8]) {
    if p.is_empty() {
        buf.fill(0);
        return;
    }
    for (dst, src) in buf.chunks_mut(p.len()).zip(std::iter::repeat(p)) {
        dst.copy_from_slice(&src[..dst.len()]);
    }
}

/// Random bytes from `seed` (wyrand: one multiply per 8 bytes).
fn random(buf: &mut [u8], seed: u64) {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
        (t as u64) ^ ((t >> 64) as u64)
    };
    let mut words = buf.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&next().to_le_bytes());
    }
    let tail = words.into_remainder();
    let last = next().to_le_bytes();
    let n = tail.len();
    tail.copy_from_slice(&last[..n]);
}

/// fio's scramble (io_u.c `small_content_scramble`): each whole 512-byte block takes its
/// offset at the start of one of its first eight cache lines (the same one for the whole
/// buffer, chosen by the time and the offset) and the time (seconds, nanoseconds) at the end
/// of its first cache line.
fn scramble(buf: &mut [u8], offset: u64, t: Duration) {
    let (secs, nanos) = (t.as_secs(), u64::from(t.subsec_nanos()));
    let line = ((nanos ^ offset) & 7) as usize * 64;
    for (i, block) in buf.chunks_exact_mut(512).enumerate() {
        let at = offset.wrapping_add(i as u64 * 512);
        block[line..line + 8].copy_from_slice(&at.to_le_bytes());
        block[48..56].copy_from_slice(&secs.to_le_bytes());
        block[56..64].copy_from_slice(&nanos.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::io::contents::Global;
    use std::collections::HashSet;

    fn contents(fill: Fill, refill: bool, scramble: bool) -> Contents {
        Contents {
            refill,
            scramble,
            fill,
            min_write: 4096,
        }
    }

    fn chunks(compress: u32, chunk: u64, dedupe: Option<Dedupe>) -> Fill {
        Fill::Chunks {
            compress,
            chunk,
            pattern: None,
            dedupe,
        }
    }

    /// Writes `n` 4 KiB buffers through `f`, refilled before each.
    fn writes(f: &mut Filler, n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let mut b = vec![0xee; 4096];
                f.before_write(&mut b, i as u64 * 4096, Instant::now());
                b
            })
            .collect()
    }

    #[test]
    fn compressible_chunks_are_random_then_zero() {
        let mut f = Filler::new(contents(chunks(50, 512, None), true, false), 1, 0);
        let b = &writes(&mut f, 1)[0];
        for c in b.chunks(512) {
            assert!(c[256..].iter().all(|&x| x == 0), "second half zero");
            assert!(
                c[..256].iter().filter(|&&x| x == 0).count() < 16,
                "first half random"
            );
        }
        // Each chunk from its own seed.
        let firsts: HashSet<&[u8]> = b.chunks(512).map(|c| &c[..256]).collect();
        assert_eq!(firsts.len(), 8);
        // Chunk 0 is the smallest write; a pattern fills the compressible part.
        let fill = Fill::Chunks {
            compress: 25,
            chunk: 0,
            pattern: Some(vec![1, 2, 3]),
            dedupe: None,
        };
        let mut f = Filler::new(contents(fill, true, false), 1, 0);
        let b = &writes(&mut f, 1)[0];
        assert_eq!(&b[3072..3078], &[1, 2, 3, 1, 2, 3]);
        assert_ne!(&b[3069..3072], &[1, 2, 3]);
    }

    #[test]
    fn repeats_come_at_the_dedupe_percentage() {
        let d = Dedupe {
            percentage: 40,
            from: DedupeFrom::Repeat,
        };
        let mut f = Filler::new(contents(chunks(0, 512, Some(d)), true, false), 7, 0);
        let bufs = writes(&mut f, 2000);
        let unique: HashSet<&Vec<u8>> = bufs.iter().collect();
        let repeated = 1.0 - unique.len() as f64 / bufs.len() as f64;
        assert!((0.35..0.45).contains(&repeated), "{repeated}");
        // At 100 percent every buffer is the same, every chunk of it too.
        let d = Dedupe {
            percentage: 100,
            from: DedupeFrom::Repeat,
        };
        let mut f = Filler::new(contents(chunks(0, 512, Some(d)), true, false), 7, 0);
        let bufs = writes(&mut f, 10);
        assert!(bufs.iter().all(|b| *b == bufs[0]));
        assert!(bufs[0].chunks(512).all(|c| c == &bufs[0][..512]));
    }

    #[test]
    fn a_working_set_repeats_the_first_unique_buffers() {
        let d = Dedupe {
            percentage: 50,
            from: DedupeFrom::WorkingSet {
                pages: 10,
                global: None,
            },
        };
        let mut f = Filler::new(contents(chunks(0, 512, Some(d)), true, false), 3, 0);
        let bufs = writes(&mut f, 1000);
        let set: HashSet<&Vec<u8>> = bufs.iter().collect();
        // The first ten unique buffers are the set; every repeat is one of them.
        let mut unique_seen = Vec::new();
        for b in &bufs {
            if !unique_seen.contains(b) {
                unique_seen.push(b.clone());
            }
        }
        let first: HashSet<&Vec<u8>> = unique_seen.iter().take(10).collect();
        let repeats = bufs.len() - set.len();
        assert!(repeats > 400, "{repeats}");
        for b in &bufs {
            let n = bufs.iter().filter(|x| *x == b).count();
            if n > 1 {
                assert!(first.contains(b));
            }
        }
    }

    #[test]
    fn a_global_working_set_repeats_other_copies_buffers() {
        let d = Dedupe {
            percentage: 100 - 1,
            from: DedupeFrom::WorkingSet {
                pages: 8,
                global: Some(Global {
                    first_copy: 0,
                    all_copies: 2,
                }),
            },
        };
        let c = contents(chunks(0, 512, Some(d)), true, false);
        let undeduped = contents(chunks(0, 512, None), true, false);
        // Copy 1's own first four buffers, written without dedupe.
        let mut other = Filler::new(undeduped, 5, 1);
        let theirs: HashSet<Vec<u8>> = writes(&mut other, 4).into_iter().collect();
        let mut own = Filler::new(undeduped_clone(&c), 5, 0);
        let mine: HashSet<Vec<u8>> = writes(&mut own, 4).into_iter().collect();
        let mut f = Filler::new(c, 5, 0);
        let bufs = writes(&mut f, 400);
        let from_theirs = bufs.iter().filter(|b| theirs.contains(*b)).count();
        let from_mine = bufs.iter().filter(|b| mine.contains(*b)).count();
        assert!(
            from_theirs > 150 && from_mine > 150,
            "{from_theirs} {from_mine}"
        );
    }

    fn undeduped_clone(c: &Contents) -> Contents {
        let mut c = c.clone();
        if let Fill::Chunks { dedupe, .. } = &mut c.fill {
            *dedupe = None;
        }
        c
    }

    #[test]
    fn scrambling_marks_every_block_with_its_offset_and_the_time() {
        let mut f = Filler::new(contents(Fill::Random, false, true), 1, 0);
        let mut a = vec![0u8; 4096];
        f.initial(&mut a);
        let mut b = a.clone();
        let t = Instant::now();
        f.before_write(&mut a, 8192, t);
        f.before_write(&mut b, 8192 + 4096, t);
        assert_ne!(a, b);
        for (i, block) in a.chunks(512).enumerate() {
            let want = (8192 + i as u64 * 512).to_le_bytes();
            assert!(
                (0..8).any(|l| block[l * 64..l * 64 + 8] == want),
                "block {i} carries its offset"
            );
        }
        // The same offset written later carries a later time.
        let mut c = b.clone();
        f.before_write(&mut c, 8192 + 4096, t + Duration::from_millis(3));
        assert_ne!(b, c);
    }

    #[test]
    fn fills_without_refill_happen_once() {
        let mut f = Filler::new(contents(Fill::Zero, false, false), 1, 0);
        let mut b = vec![9u8; 1000];
        f.initial(&mut b);
        assert!(b.iter().all(|&x| x == 0));
        b[0] = 5;
        f.before_write(&mut b, 0, Instant::now());
        assert_eq!(b[0], 5, "not refilled, not scrambled");
        let mut f = Filler::new(
            contents(Fill::Pattern(vec![0xab, 0xcd]), false, false),
            1,
            0,
        );
        f.initial(&mut b);
        assert_eq!(&b[..5], &[0xab, 0xcd, 0xab, 0xcd, 0xab]);
        // Random fills differ from buffer to buffer, with no tail left unwritten.
        let mut f = Filler::new(contents(Fill::Random, false, false), 1, 0);
        let (mut x, mut y) = (vec![0u8; 1001], vec![0u8; 1001]);
        f.initial(&mut x);
        f.initial(&mut y);
        assert_ne!(x, y);
        assert_ne!(&x[993..], &[0u8; 8]);
    }
}
