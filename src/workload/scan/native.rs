//! The native ceiling: the same rows scanned by perflab itself, from memory, with the same
//! predicate in Rust. It is what the machine can do, so an engine's rows/s against it says how
//! much of the machine the engine uses ("SQLite runs at 31% of the machine").
//!
//! The table is one buffer of packed rows of the table's row size: `a` as a little-endian
//! `i32` at the start of each row, with the same values as the databases' rows
//! ([`super::tables::a_of`]), then the pad. A scan reads **every byte** of every row once (the
//! bytes summed as `f64` words, as the memory read kernel sums its array) and applies
//! the predicate to each row's `a`, block by block (32 KiB at a time), so the rows' bytes come
//! from DRAM once and the predicate reads them from the cache. Reading every byte is what
//! makes the ceiling honest for wide rows: a scan that touched only `a` would skip most cache
//! lines of a 1 KB row and report more MB/s than the memory can deliver.
//!
//! Predicates: `read` (the fold alone: perflab's memory read bandwidth over the same bytes,
//! the ceiling of the ceiling), `trivial` (count of `a = 0`) and `complex` (Gray's expression
//! per row, and the sample standard deviation from sums, as the SQLite query computes it).
//!
//! The buffer holds at most [`MAX_NATIVE_BYTES`] of rows (the table's size if smaller): rows
//! per second do not depend on the count once the rows are far larger than the caches, and a
//! ceiling of a 100 GB table must not need 100 GB of memory.

use super::predicate::{COMPLEX_TOLERANCE, Predicate};
use super::tables::{A_BYTES, ScanTable, a_of, zeros};
use crate::workload::{OpError, OpOutcome, Session};
use std::hint::black_box;
use std::sync::Arc;

/// The most bytes of rows the native table holds.
pub const MAX_NATIVE_BYTES: u64 = 1 << 30;
/// Bytes folded before the predicate runs over their rows: small enough to stay in L1/L2.
const BLOCK_BYTES: usize = 32 * 1024;

/// A table's rows, packed, in memory.
pub struct NativeTable {
    pub table: ScanTable,
    bytes: Vec<u8>,
    row_bytes: usize,
    rows: u64,
    /// The sum of every byte's word ([`fold`]), as bits, computed when the rows were made:
    /// each scan must find it.
    fold: u64,
}

/// What one native scan found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scanned {
    /// The bits of the sum of every word read.
    pub fold: u64,
    pub zeros: u64,
    pub stdev: Option<f64>,
}

impl NativeTable {
    /// Rows as the database holds them, up to [`MAX_NATIVE_BYTES`] of them. Fails (instead of
    /// aborting) when the memory cannot be had.
    pub fn build(table: ScanTable, rows: u64) -> Result<NativeTable, OpError> {
        let row_bytes = table.row_bytes();
        let rows = rows.min(MAX_NATIVE_BYTES / row_bytes).max(1);
        let len = (rows * row_bytes) as usize;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(len).map_err(|_| {
            OpError::other(format!(
                "the native ceiling cannot allocate {} for the {} table",
                crate::vocab::units::format_bytes(len as u64),
                table.name()
            ))
        })?;
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ row_bytes;
        let hex = b"0123456789abcdef";
        for i in 0..rows {
            bytes.extend_from_slice(&a_of(i).to_le_bytes());
            for _ in 0..(row_bytes - A_BYTES) {
                // xorshift64: pad bytes that vary, as the databases' hex pads do.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bytes.push(hex[(state & 15) as usize]);
            }
        }
        let mut t = NativeTable {
            table,
            bytes,
            row_bytes: row_bytes as usize,
            rows,
            fold: 0,
        };
        // Folded block by block, as every scan folds it.
        t.fold = t.scan(Predicate::Read).fold;
        Ok(t)
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// One scan of every row with `predicate`.
    pub fn scan(&self, predicate: Predicate) -> Scanned {
        let rows_per_block = (BLOCK_BYTES / self.row_bytes).max(1);
        let block_bytes = rows_per_block * self.row_bytes;
        let mut out = Scanned {
            fold: 0,
            zeros: 0,
            stdev: None,
        };
        let (mut n, mut sum, mut sum_sq) = (0u64, 0.0f64, 0.0f64);
        let mut words = 0.0f64;
        for block in self.bytes.chunks(block_bytes) {
            words += fold(block);
            match predicate {
                Predicate::Read => {}
                Predicate::Trivial => {
                    out.zeros += block
                        .chunks_exact(self.row_bytes)
                        .filter(|row| a_in(row) == 0)
                        .count() as u64;
                }
                Predicate::Complex => {
                    for row in block.chunks_exact(self.row_bytes) {
                        let a = a_in(row) as f64;
                        let x = ((a * std::f64::consts::PI).sin()
                            * (a * std::f64::consts::PI).sin()
                            + (a * std::f64::consts::PI).cos() * (a * std::f64::consts::PI).cos())
                        .sqrt()
                            - 1.0;
                        n += 1;
                        sum += x;
                        sum_sq += x * x;
                    }
                }
            }
        }
        out.fold = words.to_bits();
        if predicate == Predicate::Complex && n > 1 {
            let nf = n as f64;
            out.stdev = Some(((sum_sq - sum * sum / nf) / (nf - 1.0)).max(0.0).sqrt());
        }
        out
    }

    /// Whether a scan found what the rows hold.
    pub fn check(&self, predicate: Predicate, s: &Scanned) -> Result<(), String> {
        if s.fold != self.fold {
            return Err("the native scan read other bytes than the rows hold".into());
        }
        match predicate {
            Predicate::Read => Ok(()),
            Predicate::Trivial if s.zeros == zeros(self.rows) => Ok(()),
            Predicate::Trivial => Err(format!(
                "the native scan counted {} rows with a = 0, expected {}",
                s.zeros,
                zeros(self.rows)
            )),
            Predicate::Complex => match s.stdev {
                Some(v) if v.abs() <= COMPLEX_TOLERANCE => Ok(()),
                None if self.rows < 2 => Ok(()),
                other => Err(format!(
                    "the native complex predicate gave {other:?}, expected 0"
                )),
            },
        }
    }
}

#[inline]
fn a_in(row: &[u8]) -> i32 {
    i32::from_le_bytes([row[0], row[1], row[2], row[3]])
}

/// The low 52 bits of a word: an `f64`'s fraction.
const FRACTION: u64 = 0x000F_FFFF_FFFF_FFFF;
/// The sign and exponent of 1.0.
const ONE: u64 = 0x3FF0_0000_0000_0000;

/// Every byte read once: each little-endian 64-bit word made an `f64` in [1, 2) (its low 52
/// bits as the fraction) and summed in eight lanes per 64-byte line, as perflab's memory read
/// kernel sums its array (the compiler makes vector loads, a mask and adds of it); the bytes
/// past the last whole line are added as one integer. The sum's bits are what a scan must
/// reproduce.
///
/// Why floating-point: an XOR or integer sum is associative, and with AVX-512 the compiler
/// then vectorizes across lines with gathers, at an eighth of the bandwidth (measured: 4.8
/// against 36 GB/s on Zen 5); the order of floating-point additions is fixed, so the lanes
/// stay plain vector loads. Why [1, 2): no word becomes a NaN, an infinity or a subnormal
/// (slow on some CPUs), whatever the bytes.
fn fold(bytes: &[u8]) -> f64 {
    let (lines, rest) = bytes.as_chunks::<64>();
    let mut acc = [0.0f64; 8];
    for line in lines {
        let (words, _) = line.as_chunks::<8>();
        for (a, w) in acc.iter_mut().zip(words) {
            *a += f64::from_bits((u64::from_le_bytes(*w) & FRACTION) | ONE);
        }
    }
    let mut tail = [0u8; 8];
    let mut extra = 0.0;
    for chunk in rest.chunks(8) {
        tail[..chunk.len()].copy_from_slice(chunk);
        tail[chunk.len()..].fill(0);
        extra += u64::from_le_bytes(tail) as f64;
    }
    acc.iter().sum::<f64>() + extra
}

/// One worker of the native ceiling: an op is one scan of the whole table.
pub struct NativeSession {
    table: Arc<NativeTable>,
    predicate: Predicate,
}

impl NativeSession {
    pub fn new(table: Arc<NativeTable>, predicate: Predicate) -> Self {
        NativeSession { table, predicate }
    }
}

impl Session for NativeSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let s = black_box(self.table.scan(black_box(self.predicate)));
        self.table
            .check(self.predicate, &s)
            .map_err(|wrong| OpError::new(crate::record::ErrorKind::WrongAnswer, wrong))?;
        Ok(OpOutcome {
            bytes: self.table.len_bytes(),
            items: self.table.rows,
            kind: "",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_predicate_finds_what_the_rows_hold() {
        for table in ScanTable::ALL {
            let t = NativeTable::build(table, 2_500).unwrap();
            assert_eq!(t.rows(), 2_500);
            assert_eq!(t.len_bytes(), 2_500 * table.row_bytes());
            for p in [Predicate::Read, Predicate::Trivial, Predicate::Complex] {
                let s = t.scan(p);
                t.check(p, &s).unwrap();
            }
            assert_eq!(t.scan(Predicate::Trivial).zeros, 3);
        }
    }

    #[test]
    fn a_wrong_count_or_fold_is_caught() {
        let t = NativeTable::build(ScanTable::Hundred, 1_000).unwrap();
        let mut s = t.scan(Predicate::Trivial);
        s.zeros += 1;
        assert!(t.check(Predicate::Trivial, &s).is_err());
        let mut s = t.scan(Predicate::Read);
        s.fold ^= 1 << 52;
        assert!(t.check(Predicate::Read, &s).is_err());
    }

    #[test]
    fn fold_reads_every_word() {
        let mut bytes = vec![0u8; 200];
        let zero = fold(&bytes);
        // 24 whole words, each at least 1.0, and the 8 bytes past the last line as the
        // integer 0: a word not read is a sum 1.0 short.
        assert_eq!(zero, 24.0);
        assert_eq!(fold(&bytes[..192]), 24.0);
        assert_eq!(fold(&bytes[..128]), 16.0);
        // A word's high fraction bits count (its low ones drown in the sum's rounding).
        for at in [6, 70, 134, 190] {
            bytes[at] = 0x0f;
            assert!(fold(&bytes) > zero, "byte {at}");
            bytes[at] = 0;
        }
        bytes[199] = 1;
        assert!(fold(&bytes) > zero);
    }

    #[test]
    fn the_native_table_is_capped() {
        assert_eq!(
            MAX_NATIVE_BYTES / ScanTable::Page.row_bytes(),
            (1u64 << 30) / 8000
        );
    }
}
