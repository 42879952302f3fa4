//! What each I/O is: its direction, block size and offset within its file's region.
//!
//! `--rw` names the pattern as fio does. Sequential I/O walks the region from its start and
//! wraps at its end; random I/O picks aligned blocks through a [`BlockPicker`]. Offsets are
//! aligned to the smallest block size of the step (fio's `blockalign` default), so every I/O
//! of an O_DIRECT test is aligned.
//!
//! A job file's pattern follows fio's rules for the order of offsets ([`super::walk`]): the
//! offset is chosen before the size, as fio's `fill_io_u` does, each direction walks on its
//! own, and a choice outside the region ends the pass (a new one starts from the region's
//! start; [`Pattern::pass_over`] tells the session first, for jobs that end with it).

use super::walk::{Choice, Walk, WalkRules};
use crate::vocab::SpecError;
use crate::workload::distribution::{BlockPicker, Distribution};
use crate::workload::rng::Rng;
use serde::Serialize;

/// An I/O pattern, named as fio's `--rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential, mixed by `--rwmix`.
    ReadWrite,
    /// Random, mixed by `--rwmix`.
    RandRw,
}

impl Rw {
    pub const ALL: [Rw; 6] = [
        Rw::Read,
        Rw::Write,
        Rw::RandRead,
        Rw::RandWrite,
        Rw::ReadWrite,
        Rw::RandRw,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "rw",
            Rw::RandRw => "randrw",
        }
    }

    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let text = if text == "readwrite" { "rw" } else { text };
        Rw::ALL
            .into_iter()
            .find(|r| r.name() == text)
            .ok_or_else(|| {
                SpecError::new(
                    "rw",
                    text,
                    "use read, write, randread, randwrite, rw or randrw (as fio's --rw)",
                )
            })
    }

    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }

    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
}

impl Serialize for Rw {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub write: bool,
    /// Byte offset within the file.
    pub offset: u64,
    pub len: u32,
    /// Index of the block size in the step's list (for per-size figures).
    pub size_index: u8,
}

/// Generates the I/Os of one region of one file for one worker.
pub struct Pattern {
    rw: Rw,
    /// Reads out of 100 in a mixed pattern.
    read_pct: u64,
    /// Block sizes and cumulative weights.
    sizes: Vec<(u32, u64)>,
    total_weight: u64,
    /// Writes' own sizes when they differ from reads' (fio's `bs=4k,64k`), with their
    /// total weight; their `size_index` counts on after the reads'.
    write_sizes: Option<(Vec<(u32, u64)>, u64)>,
    align: u64,
    start: u64,
    len: u64,
    cursor: u64,
    picker: Option<BlockPicker>,
    /// fio's random map: each block once per pass, in a scrambled order (uniform random
    /// jobs from a job file, unless `norandommap`).
    map: Option<Permutation>,
    /// A pass over the region has ended since the last [`Pattern::take_wrapped`]: the
    /// sequential cursor wrapped, or the random map ran out.
    wrapped: bool,
    /// A job file's pattern: fio's rules for the order of offsets.
    walk: Option<Walk>,
    /// The walk's next I/O, chosen as soon as the last one was issued: its direction and
    /// offset (None: the pass is over).
    planned: Option<(bool, Option<u64>)>,
    /// Passes over the region the walk has ended.
    passes: u64,
    /// The random map ran out on the last block it gave: the walk starts a new pass.
    map_ended: bool,
}

/// The blocks `0..n` once each: `(offset + i * stride) mod n` with `stride` coprime to `n`,
/// drawn again for every pass.
struct Permutation {
    n: u64,
    stride: u64,
    offset: u64,
    i: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Rng) -> Permutation {
        let mut p = Permutation {
            n,
            stride: 1,
            offset: 0,
            i: 0,
        };
        p.shuffle(rng);
        p
    }

    /// A new order: a stride near the golden section of `n`, coprime with it, and a start.
    fn shuffle(&mut self, rng: &mut Rng) {
        let n = self.n.max(1);
        let mut stride = (n as f64 * 0.618_033_988_7) as u64 + rng.below(n.clamp(1, 1 << 20));
        stride %= n;
        while gcd(stride.max(1), n) != 1 {
            stride = (stride + 1) % n;
        }
        self.stride = stride.max(1);
        self.offset = rng.below(n);
        self.i = 0;
    }

    /// The next block, and whether the pass just ended.
    fn next(&mut self, rng: &mut Rng) -> (u64, bool) {
        let block = ((u128::from(self.offset) + u128::from(self.i) * u128::from(self.stride))
            % u128::from(self.n.max(1))) as u64;
        self.i += 1;
        let ended = self.i >= self.n;
        if ended {
            self.shuffle(rng);
        }
        (block, ended)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Pattern {
    /// `sizes` holds (bytes, weight), at least one; the region is `start .. start + len`
    /// and must hold the largest size.
    pub fn new(
        rw: Rw,
        read_pct: u64,
        sizes: &[(u64, u32)],
        start: u64,
        len: u64,
        dist: &Distribution,
    ) -> Result<Self, String> {
        Self::split(rw, read_pct, sizes, None, start, len, dist)
    }

    /// As [`Pattern::new`], with writes in `write_sizes` when given (reads in `sizes`).
    pub fn split(
        rw: Rw,
        read_pct: u64,
        sizes: &[(u64, u32)],
        write_sizes: Option<&[(u64, u32)]>,
        start: u64,
        len: u64,
        dist: &Distribution,
    ) -> Result<Self, String> {
        let all = || sizes.iter().chain(write_sizes.unwrap_or_default());
        let largest = all().map(|s| s.0).max().unwrap_or(0);
        let align = all().map(|s| s.0).min().unwrap_or(0);
        if align == 0 || largest > len {
            return Err(format!(
                "a region of {len} bytes cannot hold blocks of {largest} bytes"
            ));
        }
        let cumulative = |sizes: &[(u64, u32)]| {
            let mut acc = 0u64;
            let table: Vec<(u32, u64)> = sizes
                .iter()
                .map(|&(b, w)| {
                    acc += u64::from(w);
                    (b.min(u64::from(u32::MAX)) as u32, acc)
                })
                .collect();
            (table, acc.max(1))
        };
        let (sizes, acc) = cumulative(sizes);
        let write_sizes = write_sizes.map(cumulative);
        // Blocks whose start is aligned and whose largest I/O still fits.
        let blocks = (len - largest) / align + 1;
        let picker = if rw.random() {
            // Scrambling spreads the hot blocks of a skewed distribution over the region
            // as fio does; a hot set stays at the region's start, where a user expects it.
            let scramble = dist.spread();
            Some(BlockPicker::sized(dist, blocks, align, scramble)?)
        } else {
            None
        };
        Ok(Pattern {
            rw,
            read_pct,
            total_weight: acc,
            sizes,
            write_sizes,
            align,
            start,
            len,
            cursor: 0,
            picker,
            map: None,
            wrapped: false,
            walk: None,
            planned: None,
            passes: 0,
            map_ended: false,
        })
    }

    /// With fio's rules for the order of offsets, in a file of `file_len` bytes (a job
    /// file's pattern).
    pub fn with_walk(mut self, rules: WalkRules, file_len: u64) -> Pattern {
        self.walk = Some(Walk::new(
            rules,
            self.rw.random(),
            self.start,
            self.len,
            file_len.max(self.start + self.len),
        ));
        self
    }

    /// Whether the walk's pass over the region is over: the next I/O would start a new one.
    pub fn pass_over(&self) -> bool {
        matches!(self.planned, Some((_, None)))
    }

    /// The passes over the region the walk has finished.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// With fio's random map: a uniform random pattern touches each block once per pass.
    /// Blocks are of the smallest size, as fio's map counts them (`blockalign` defaults to
    /// the smallest block size), at the offsets where the largest I/O still fits.
    pub fn with_random_map(mut self, rng: &mut Rng) -> Pattern {
        if self.rw.random() {
            let largest = self
                .sizes
                .iter()
                .chain(self.write_sizes.iter().flat_map(|(w, _)| w))
                .map(|s| u64::from(s.0))
                .max()
                .unwrap_or(self.align);
            let blocks = (self.len.saturating_sub(largest)) / self.align.max(1) + 1;
            self.map = Some(Permutation::new(blocks, rng));
            self.picker = None;
        }
        self
    }

    /// Whether a pass over the region ended since the last call.
    pub fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    /// The next I/O.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Io {
        if self.walk.is_some() {
            return self.next_walked(rng);
        }
        let write = self.direction(rng);
        let (table, total, first) = self.table(write);
        let (len, size_index) = if table.len() == 1 {
            (table[0].0, first as u8)
        } else {
            let r = rng.below(total);
            let i = table.iter().position(|&(_, c)| r < c).unwrap_or(0);
            (table[i].0, (first + i) as u8)
        };
        if let Some(map) = &mut self.map {
            let (block, ended) = map.next(rng);
            self.wrapped |= ended;
            return Io {
                write,
                offset: self.start + block * self.align,
                len,
                size_index,
            };
        }
        let within = match &mut self.picker {
            Some(p) => p.next(rng) * self.align,
            None => {
                if self.cursor + u64::from(len) > self.len {
                    self.cursor = 0;
                    self.wrapped = true;
                }
                let at = self.cursor;
                self.cursor += u64::from(len);
                at
            }
        };
        Io {
            write,
            offset: self.start + within,
            len,
            size_index,
        }
    }
}

/// A job file's pattern: fio's order of offsets ([`Walk`]), the offset chosen before the size.
impl Pattern {
    /// Whether the next I/O writes: by the pattern, or by `read_pct` in a mixed one.
    #[inline]
    fn direction(&self, rng: &mut Rng) -> bool {
        match self.rw {
            Rw::Read | Rw::RandRead => false,
            Rw::Write | Rw::RandWrite => true,
            Rw::ReadWrite | Rw::RandRw => rng.below(100) >= self.read_pct,
        }
    }

    /// A direction's sizes with cumulative weights, their total, and the index of the
    /// first in the step's list.
    #[inline]
    fn table(&self, write: bool) -> (&[(u32, u64)], u64, usize) {
        match &self.write_sizes {
            Some((w, total)) if write => (w.as_slice(), *total, self.sizes.len()),
            _ => (self.sizes.as_slice(), self.total_weight, 0),
        }
    }

    fn next_walked(&mut self, rng: &mut Rng) -> Io {
        let (mut write, mut at) = match self.planned.take() {
            Some(p) => p,
            None => self.plan(rng),
        };
        if at.is_none() {
            self.new_pass(rng);
            (write, at) = self.plan(rng);
        }
        let offset = at.unwrap_or(self.start);
        let (len, size_index) = self.size_at(write, offset, rng);
        if let Some(walk) = &mut self.walk {
            walk.issued(write, offset, u64::from(len));
            // fio resets the file when its random map runs out: the cursors start over.
            if std::mem::take(&mut self.map_ended) {
                walk.restart();
            }
        }
        self.planned = Some(self.plan(rng));
        Io {
            write,
            offset,
            len,
            size_index,
        }
    }

    /// The next I/O's direction and offset, or None where the pass ends (fio's
    /// `get_next_offset`, and the checks of `get_next_buflen` and `fill_io_u` that do not
    /// depend on the size drawn).
    fn plan(&mut self, rng: &mut Rng) -> (bool, Option<u64>) {
        let write = self.direction(rng);
        let Some(walk) = &mut self.walk else {
            return (write, None);
        };
        let choice = walk.choose(write, rng);
        // fio drops the file's cached pages when a time_based walk goes back to the start.
        self.wrapped |= walk.take_rewound();
        let pos = match choice {
            Choice::At(pos) => Some(pos),
            Choice::Random => Some(self.random_pos(rng)),
            Choice::End => None,
        };
        let at = pos
            .and_then(|p| self.walk.as_ref().and_then(|w| w.place(p)))
            .filter(|&at| self.smallest_fits(write, at));
        (write, at)
    }

    /// Whether an I/O can start at `at`: one size must end inside the file (fio's
    /// `fill_io_u`); of several, the smallest must end inside the region (`io_u_fits`).
    fn smallest_fits(&self, write: bool, at: u64) -> bool {
        let Some(walk) = &self.walk else { return true };
        let (table, _, _) = self.table(write);
        let smallest = table.iter().map(|s| u64::from(s.0)).min().unwrap_or(0);
        let end = if table.len() == 1 {
            walk.file_len()
        } else {
            walk.end().min(walk.file_len())
        };
        at.saturating_add(smallest) <= end
    }

    /// A size for an I/O at `at`: of several, drawn again until it ends inside the region,
    /// as fio's `get_next_buflen` does.
    fn size_at(&self, write: bool, at: u64, rng: &mut Rng) -> (u32, u8) {
        let (table, total, first) = self.table(write);
        if table.len() == 1 {
            return (table[0].0, first as u8);
        }
        let end = self.walk.as_ref().map_or(u64::MAX, Walk::end);
        let fits = |i: usize| at + u64::from(table[i].0) <= end;
        for _ in 0..64 {
            let r = rng.below(total);
            let i = table.iter().position(|&(_, c)| r < c).unwrap_or(0);
            if fits(i) {
                return (table[i].0, (first + i) as u8);
            }
        }
        // Only a tiny weight fits here: take the smallest (the plan checked that it fits).
        let i = (0..table.len()).min_by_key(|&i| table[i].0).unwrap_or(0);
        (table[i].0, (first + i) as u8)
    }

    /// A random block's offset from the region's start: from the random map, else the
    /// distribution.
    fn random_pos(&mut self, rng: &mut Rng) -> u64 {
        if let Some(map) = &mut self.map {
            let (block, ended) = map.next(rng);
            self.map_ended |= ended;
            self.wrapped |= ended;
            return block * self.align;
        }
        self.picker.as_mut().map_or(0, |p| p.next(rng) * self.align)
    }

    /// A new pass from the region's start (fio's `fio_file_reset`: cursors and random map).
    fn new_pass(&mut self, rng: &mut Rng) {
        if let Some(walk) = &mut self.walk {
            walk.restart();
        }
        if let Some(map) = &mut self.map {
            map.shuffle(rng);
        }
        self.map_ended = false;
        self.passes += 1;
        self.wrapped = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_classify() {
        for r in Rw::ALL {
            assert_eq!(Rw::parse(r.name()).unwrap(), r);
        }
        assert!(Rw::parse("randomread").is_err());
        assert!(Rw::RandRw.reads() && Rw::RandRw.writes() && Rw::RandRw.random());
        assert!(!Rw::Read.writes() && !Rw::Write.reads());
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let mut p = Pattern::new(
            Rw::Read,
            100,
            &[(4096, 1)],
            8192,
            3 * 4096,
            &Distribution::Uniform,
        )
        .unwrap();
        let mut rng = Rng::new(1);
        let offs: Vec<u64> = (0..4).map(|_| p.next(&mut rng).offset).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192]);
    }

    #[test]
    fn random_offsets_are_aligned_and_inside() {
        let sizes = [(4096, 3), (65536, 1)];
        let mut p = Pattern::new(
            Rw::RandRw,
            70,
            &sizes,
            1 << 20,
            1 << 20,
            &Distribution::Uniform,
        )
        .unwrap();
        let mut rng = Rng::new(7);
        let mut reads = 0;
        let mut big = 0;
        for _ in 0..10_000 {
            let io = p.next(&mut rng);
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset >= 1 << 20);
            assert!(io.offset + u64::from(io.len) <= 2 << 20);
            reads += usize::from(!io.write);
            big += usize::from(io.len == 65536);
        }
        assert!((6500..7500).contains(&reads), "{reads}");
        assert!((2000..3000).contains(&big), "{big}");
    }

    #[test]
    fn reads_and_writes_take_their_own_sizes() {
        let mut p = Pattern::split(
            Rw::RandRw,
            50,
            &[(4096, 1)],
            Some(&[(65536, 1)]),
            0,
            1 << 20,
            &Distribution::Uniform,
        )
        .unwrap();
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let io = p.next(&mut rng);
            assert_eq!(io.len, if io.write { 65536 } else { 4096 });
            assert_eq!(io.size_index, u8::from(io.write));
            assert!(io.offset + u64::from(io.len) <= 1 << 20);
        }
    }

    #[test]
    fn the_random_map_touches_every_block_once_per_pass() {
        let mut rng = Rng::new(5);
        let mut p = Pattern::new(
            Rw::RandRead,
            100,
            &[(4096, 1)],
            0,
            1000 * 4096,
            &Distribution::Uniform,
        )
        .unwrap()
        .with_random_map(&mut rng);
        for _pass in 0..3 {
            let mut seen = vec![false; 1000];
            for k in 0..1000 {
                let io = p.next(&mut rng);
                let b = (io.offset / 4096) as usize;
                assert!(!seen[b], "block {b} twice");
                seen[b] = true;
                assert_eq!(p.take_wrapped(), k == 999);
            }
        }
    }

    #[test]
    fn the_random_map_counts_blocks_of_the_smallest_size_and_never_runs_past_the_region() {
        let mut rng = Rng::new(9);
        let len = 64 * 4096;
        let mut p = Pattern::new(
            Rw::RandRead,
            100,
            &[(4096, 3), (65536, 1)],
            0,
            len,
            &Distribution::Uniform,
        )
        .unwrap()
        .with_random_map(&mut rng);
        // 49 offsets of 4 KiB where a 64 KiB I/O still fits, each once per pass.
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..49 {
            let io = p.next(&mut rng);
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset + u64::from(io.len) <= len);
            assert!(seen.insert(io.offset), "{} twice", io.offset);
        }
        assert!(p.take_wrapped());
    }

    fn walked(rw: Rw, sizes: &[(u64, u32)], start: u64, len: u64, rules: WalkRules) -> Pattern {
        Pattern::new(rw, 100, sizes, start, len, &Distribution::Uniform)
            .unwrap()
            .with_walk(rules, start + len)
    }

    #[test]
    fn backwards_read_fio_examples_offsets() {
        // backwards-read.fio, shrunk: bs=4k, rw=read:-8k, size=1m.
        let rules = WalkRules {
            skip: -8192,
            ..WalkRules::default()
        };
        let mut p = walked(Rw::Read, &[(4096, 1)], 0, 1 << 20, rules);
        let mut rng = Rng::new(1);
        let offs: Vec<u64> = (0..258).map(|_| p.next(&mut rng).offset).collect();
        let end = 1u64 << 20;
        assert_eq!(&offs[..4], &[0, end - 8192, end - 12288, end - 16384]);
        assert_eq!(offs[254], 4096);
        assert_eq!(offs[255], 0);
        assert_eq!(offs[256], end - 8192);
        assert!(!p.pass_over() && p.passes() == 0 && !p.take_wrapped());
    }

    #[test]
    fn a_pass_that_runs_past_the_region_is_over_before_it_is_asked_for() {
        // offset=64k size=64k rw=write:4k in a file of 128k: fio writes 64k, 72k, ... 120k.
        let rules = WalkRules {
            skip: 4096,
            ..WalkRules::default()
        };
        let mut p = walked(Rw::Write, &[(4096, 1)], 64 << 10, 64 << 10, rules);
        let mut rng = Rng::new(1);
        let mut offs = Vec::new();
        while !p.pass_over() {
            offs.push(p.next(&mut rng).offset >> 10);
        }
        assert_eq!(offs, vec![64, 72, 80, 88, 96, 104, 112, 120]);
        assert_eq!(p.passes(), 0);
        // Asked anyway, it starts the next pass.
        assert_eq!(p.next(&mut rng).offset, 64 << 10);
        assert_eq!(p.passes(), 1);
        assert!(p.take_wrapped());
    }

    #[test]
    fn a_range_of_sizes_fits_each_io_in_the_region() {
        // bsrange=4k-16k walked sequentially over 40k: every I/O ends inside the region, and
        // the pass ends where not even 4k fits.
        let sizes = [(4096, 1), (8192, 1), (12288, 1), (16384, 1)];
        let mut rng = Rng::new(8);
        for _ in 0..200 {
            let mut p = walked(Rw::Read, &sizes, 0, 40 << 10, WalkRules::default());
            let mut at = 0;
            while !p.pass_over() {
                let io = p.next(&mut rng);
                assert_eq!(io.offset, at);
                at += u64::from(io.len);
                assert!(at <= 40 << 10);
            }
            assert_eq!(at, 40 << 10);
        }
    }

    #[test]
    fn zoned_offsets_stay_in_their_zones() {
        use crate::workload::distribution::Zone;
        let zones = vec![
            Zone {
                access: 0,
                size: 50,
            },
            Zone {
                access: 100,
                size: 50,
            },
        ];
        let mut p = Pattern::new(
            Rw::RandRead,
            100,
            &[(4096, 1)],
            1 << 20,
            1 << 20,
            &Distribution::Zoned { zones },
        )
        .unwrap()
        .with_walk(WalkRules::default(), 2 << 20);
        let mut rng = Rng::new(2);
        for _ in 0..2000 {
            let io = p.next(&mut rng);
            assert!((3 << 19..2 << 20).contains(&io.offset), "{}", io.offset);
        }
    }

    #[test]
    fn a_region_too_small_is_refused() {
        assert!(
            Pattern::new(Rw::Read, 100, &[(8192, 1)], 0, 4096, &Distribution::Uniform).is_err()
        );
    }
}
