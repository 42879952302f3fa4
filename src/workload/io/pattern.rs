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

use super::randommap::{MapRule, RandomMap};
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
    /// fio's random map (uniform random jobs from a job file, unless `norandommap`): asked
    /// for by [`Pattern::with_random_map`], made by [`Pattern::with_walk`] for the file.
    map_rule: MapRule,
    map: Option<RandomMap>,
    /// A pass over the region has ended since the last [`Pattern::take_wrapped`]: the
    /// sequential cursor wrapped, or the random map ran out.
    wrapped: bool,
    /// A job file's pattern: fio's rules for the order of offsets.
    walk: Option<Walk>,
    /// The walk's next I/O, chosen as soon as the last one was issued.
    planned: Option<Planned>,
    /// Passes over the region the walk has ended.
    passes: u64,
}

/// A walked I/O's direction and offset, chosen before its size as fio does.
#[derive(Debug, Clone, Copy)]
struct Planned {
    write: bool,
    /// None: the pass is over.
    at: Option<u64>,
    /// A random offset, which marks the random map (fio's sequential offsets within a random
    /// job, `IO_U_F_BUSY_OK`, do not).
    random: bool,
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
            map_rule: MapRule::Off,
            map: None,
            wrapped: false,
            walk: None,
            planned: None,
            passes: 0,
        })
    }

    /// With fio's rules for the order of offsets, in a file of `file_len` bytes (a job
    /// file's pattern).
    pub fn with_walk(mut self, rules: WalkRules, file_len: u64) -> Pattern {
        let file_len = file_len.max(self.start + self.len);
        self.walk = Some(Walk::new(
            rules,
            self.rw.random(),
            self.start,
            self.len,
            file_len,
        ));
        if self.map_rule != MapRule::Off {
            // fio's `init_random_map`: a bit per block of the smallest size of either
            // direction, over the region or the file, whichever is shorter.
            self.map = Some(RandomMap::new(self.len.min(file_len) / self.align));
        }
        self
    }

    /// Whether the walk's pass over the region is over: the next I/O would start a new one.
    pub fn pass_over(&self) -> bool {
        matches!(self.planned, Some(Planned { at: None, .. }))
    }

    /// The passes over the region the walk has finished.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// With fio's random map ([`RandomMap`]): a uniform random pattern touches each block
    /// once per pass, and an I/O that runs into a used block is shortened to end before it.
    /// The map is made with the walk ([`Pattern::with_walk`]), which a job file's pattern
    /// always has.
    pub fn with_random_map(mut self, rule: MapRule) -> Pattern {
        if self.rw.random() {
            self.map_rule = rule;
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
        let mut next = match self.planned.take() {
            Some(p) => p,
            None => self.plan(rng),
        };
        if next.at.is_none() {
            self.new_pass();
            next = self.plan(rng);
        }
        let write = next.write;
        let offset = next.at.unwrap_or(self.start);
        let (mut len, mut size_index) = self.size_at(write, offset, rng);
        if next.random {
            (len, size_index) = self.mark(write, offset, len, size_index);
        }
        if let Some(walk) = &mut self.walk {
            walk.issued(write, offset, u64::from(len));
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
    fn plan(&mut self, rng: &mut Rng) -> Planned {
        let write = self.direction(rng);
        let Some(walk) = &mut self.walk else {
            return Planned {
                write,
                at: None,
                random: false,
            };
        };
        let choice = walk.choose(write, rng);
        // fio drops the file's cached pages when a time_based walk goes back to the start.
        self.wrapped |= walk.take_rewound();
        let pos = match choice {
            Choice::At(pos) => Some(pos),
            Choice::Random => self.random_pos(write, rng),
            Choice::End => None,
        };
        let at = pos
            .and_then(|p| self.walk.as_ref().and_then(|w| w.place(p)))
            .filter(|&at| self.smallest_fits(write, at));
        Planned {
            write,
            at,
            random: matches!(choice, Choice::Random),
        }
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
    /// distribution. None: the random map is full, and the pass is over.
    fn random_pos(&mut self, write: bool, rng: &mut Rng) -> Option<u64> {
        let Some(map) = &self.map else {
            // fio aligns a direction's random offsets to its own smallest size (`blockalign`'s
            // default, `ba[ddir]`): with `bs=4k,64k` the writes land on 64 KiB boundaries.
            let unit = self.smallest(write);
            let pos = self.picker.as_mut().map_or(0, |p| p.next(rng) * self.align);
            return Some(pos / unit * unit);
        };
        // fio's `__get_next_rand_offset`: a block of this direction's smallest size over the
        // region (`last_block`), or the next free one after it; the map counts blocks of the
        // job's smallest size, and fio indexes it with this direction's block number as is.
        // fio's LFSR counts blocks of the job's smallest size, the map's own.
        let unit = match self.map_rule {
            MapRule::Once => self.align,
            _ => self.smallest(write),
        };
        let file_len = self.walk.as_ref().map_or(self.len, Walk::file_len);
        let last = self.len.min(file_len) / unit;
        if last == 0 {
            return None;
        }
        let b = rng.below(last);
        let b = if map.is_set(b) { map.next_free(b)? } else { b };
        Some(b * unit)
    }

    /// fio's `mark_random_map`: the I/O marks its blocks up to the first one used, and is
    /// shortened to what it marked. A shortened I/O counts with the largest of its
    /// direction's sizes that it still holds.
    fn mark(&mut self, write: bool, offset: u64, len: u32, index: u8) -> (u32, u8) {
        let (unit, rule, start) = (self.smallest(write), self.map_rule, self.start);
        let align = self.align;
        let Some(map) = &mut self.map else {
            return (len, index);
        };
        if rule == MapRule::Once {
            // fio's LFSR: the block is done, the I/O keeps its size.
            map.set_run((offset - start) / align, 1);
            return (len, index);
        }
        let marked = map.set_run((offset - start) / unit, u64::from(len).div_ceil(unit));
        let room = marked * unit;
        // Nothing marked: the block was used after all (a direction whose smallest size is
        // not the map's); fio asserts here, perflab keeps the I/O as drawn.
        if marked == 0 || room >= u64::from(len) {
            return (len, index);
        }
        let (table, _, first) = self.table(write);
        let held = (0..table.len())
            .filter(|&i| u64::from(table[i].0) <= room)
            .max_by_key(|&i| table[i].0)
            .map_or(index, |i| (first + i) as u8);
        (room as u32, held)
    }

    /// The smallest size of a direction (fio's `min_bs[ddir]`, and its `ba[ddir]`).
    fn smallest(&self, write: bool) -> u64 {
        let (table, _, _) = self.table(write);
        table
            .iter()
            .map(|s| u64::from(s.0))
            .min()
            .unwrap_or(self.align)
            .max(1)
    }

    /// A new pass from the region's start (fio's `fio_file_reset`: cursors and random map).
    fn new_pass(&mut self) {
        if let Some(walk) = &mut self.walk {
            walk.restart();
        }
        if let Some(map) = &mut self.map {
            map.clear();
        }
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

    fn mapped(sizes: &[(u64, u32)], len: u64) -> Pattern {
        Pattern::new(Rw::RandRead, 100, sizes, 0, len, &Distribution::Uniform)
            .unwrap()
            .with_random_map(MapRule::Shorten)
            .with_walk(WalkRules::default(), len)
    }

    #[test]
    fn the_random_map_touches_every_block_once_per_pass() {
        let mut rng = Rng::new(5);
        let mut p = mapped(&[(4096, 1)], 1000 * 4096);
        for pass in 0..3 {
            let mut seen = vec![false; 1000];
            for k in 0..1000 {
                let io = p.next(&mut rng);
                let b = (io.offset / 4096) as usize;
                assert!(!seen[b], "block {b} twice");
                seen[b] = true;
                assert_eq!(io.len, 4096);
                // The pass is over as soon as its last block is issued, and the next one
                // starts with a clean map.
                assert_eq!(p.pass_over(), k == 999, "pass {pass}, I/O {k}");
            }
            assert_eq!(p.passes(), pass);
        }
    }

    #[test]
    fn mixed_sizes_are_shortened_where_they_run_into_used_blocks_as_fios_are() {
        // bssplit=4k/50:64k/50 over 8 MiB: drawn sizes average 34 KiB, but every pass moves
        // the region's bytes exactly once, so I/Os that meet used blocks are cut short. fio
        // 3.33 averaged 20,320 bytes an I/O on this job (time_based, psync, 2 s).
        let len = 8 << 20;
        let mut rng = Rng::new(11);
        let mut p = mapped(&[(4096, 1), (65536, 1)], len);
        let (mut ios, mut bytes) = (0u64, 0u64);
        for _pass in 0..4 {
            let mut seen = vec![false; (len / 4096) as usize];
            while {
                let io = p.next(&mut rng);
                assert_eq!(io.offset % 4096, 0);
                assert_eq!(io.len % 4096, 0);
                assert!(io.offset + u64::from(io.len) <= len);
                for b in io.offset / 4096..(io.offset + u64::from(io.len)) / 4096 {
                    assert!(!seen[b as usize], "block {b} twice in a pass");
                    seen[b as usize] = true;
                }
                // A shortened I/O counts with the 4 KiB size.
                assert_eq!(io.size_index, u8::from(io.len == 65536));
                ios += 1;
                bytes += u64::from(io.len);
                !p.pass_over()
            } {}
            assert!(seen.iter().all(|&s| s), "a pass covers every block");
        }
        assert_eq!(bytes, 4 * len);
        let mean = bytes / ios;
        assert!((17_000..24_000).contains(&mean), "mean I/O {mean} bytes");
    }

    #[test]
    fn each_direction_aligns_to_its_own_smallest_size_as_fio_does() {
        // bs=4k,64k rw=randrw norandommap: reads on 4 KiB boundaries, writes on 64 KiB ones.
        let len = 1 << 20;
        let mut rng = Rng::new(8);
        let mut p = Pattern::split(
            Rw::RandRw,
            50,
            &[(4096, 1)],
            Some(&[(65536, 1)]),
            0,
            len,
            &Distribution::Uniform,
        )
        .unwrap()
        .with_walk(WalkRules::default(), len);
        let mut unaligned_reads = 0;
        for _ in 0..2000 {
            let io = p.next(&mut rng);
            if io.write {
                assert_eq!(io.offset % 65536, 0, "{io:?}");
            } else {
                assert_eq!(io.offset % 4096, 0, "{io:?}");
                unaligned_reads += usize::from(!io.offset.is_multiple_of(65536));
            }
            assert!(io.offset + u64::from(io.len) <= len);
        }
        assert!(unaligned_reads > 100, "{unaligned_reads}");
    }

    #[test]
    fn an_lfsr_job_takes_each_block_once_a_pass_and_keeps_its_sizes() {
        // random_generator=lfsr: fio keeps no map, so nothing is shortened.
        let len = 64 * 4096;
        let mut rng = Rng::new(3);
        let mut p = Pattern::new(
            Rw::RandRead,
            100,
            &[(4096, 1), (65536, 1)],
            0,
            len,
            &Distribution::Uniform,
        )
        .unwrap()
        .with_random_map(MapRule::Once)
        .with_walk(WalkRules::default(), len);
        let mut offsets = std::collections::BTreeSet::new();
        let mut big = 0;
        for k in 0..64 {
            let io = p.next(&mut rng);
            assert!(offsets.insert(io.offset), "{} twice", io.offset);
            assert!(io.len == 4096 || io.len == 65536);
            assert!(io.offset + u64::from(io.len) <= len);
            big += usize::from(io.len == 65536);
            assert_eq!(p.pass_over(), k == 63);
        }
        assert!(big > 10, "{big} I/Os of 64 KiB");
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
