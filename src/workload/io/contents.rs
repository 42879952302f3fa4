//! What a job file's writes carry: fio's buffer options resolved by fio's own rules into one
//! [`Contents`], which [`super::fill`] then produces.
//!
//! fio's rules (options.c's callbacks, init.c's `fixup_options` and `td_set_flags`, io_u.c's
//! `get_io_u` and `fill_io_buffer`):
//! - each job's write buffers are filled once, when the job starts; `refill_buffers` fills
//!   each again before every write. `verify` turns refilling on unless `refill_buffers` was
//!   written, and so does a `buffer_compress_percentage` below 100; `dedupe_percentage`
//!   always does (at its line), and `buffer_pattern` does when the job reads or compresses;
//! - a buffer that is not refilled is scrambled before each write (`scramble_buffers`, on
//!   by default): each 512-byte block takes its offset and the write's time, so no two
//!   writes carry the same bytes. Not when `zero_buffers` was written (unless
//!   `scramble_buffers` was too), nor in a job that names a compression or dedupe
//!   percentage (even 0), nor with `verify`;
//! - a fill is, first match: compressible chunks when a compression or dedupe percentage
//!   is set; else `buffer_pattern` repeated; else zeros (`zero_buffers`, or
//!   `buffer_compress_percentage=100`); else random bytes;
//! - compressible chunks: the buffer in chunks of `buffer_compress_chunk` (no bigger than
//!   the smallest write; 0 is the smallest write), each random for its first
//!   (100 - N) percent and zeros (or the pattern) after, each from a seed of its own;
//! - dedupe: a write buffer is a repeat with `dedupe_percentage` chance, all of it: in
//!   `repeat` mode the job's unique stream regenerated without advancing it; in
//!   `working_set` mode one of the job's first unique buffers, as many as fill
//!   `dedupe_working_set_percentage` of its `size` (in blocks of the smallest write), and
//!   with `dedupe_global` those of all jobs in turn, block by block.
//!
//! When a job's writes would carry what perflab writes anyway (random bytes filled once and
//! never scrambled: `scramble_buffers=0`), there are no [`Contents`] and the write path is
//! perflab's own.

use super::fio::job::{DedupeMode, FioJob};
use serde::Serialize;

/// What one job's write buffers hold and when they change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contents {
    /// Every write's buffer is filled anew before it is issued (fio's `refill_buffers`).
    pub refill: bool,
    /// A buffer that is not refilled is marked before each write: each 512-byte block
    /// takes its offset and the time (fio's `scramble_buffers`).
    pub scramble: bool,
    /// What a fill puts in a buffer.
    pub fill: Fill,
    /// The job's smallest write: compressible chunks are no bigger, and a working set's
    /// blocks are this big.
    pub min_write: u64,
}

/// What a fill puts in a buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// Random bytes (fio's default).
    Random,
    /// `zero_buffers`, or `buffer_compress_percentage=100`.
    Zero,
    /// `buffer_pattern`, repeated from the buffer's start.
    Pattern(Vec<u8>),
    /// fio's compressible or deduplicable buffers.
    Chunks {
        /// Percent of each chunk that is zeros (or the pattern), after its random part.
        compress: u32,
        /// Bytes of a chunk (0: the smallest write).
        chunk: u64,
        /// What fills the compressible part instead of zeros.
        #[serde(skip_serializing_if = "Option::is_none")]
        pattern: Option<Vec<u8>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        dedupe: Option<Dedupe>,
    },
}

/// `dedupe_percentage` and where its repeats come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dedupe {
    /// Percent of writes whose buffer is a repeat (1 to 100; 100: every buffer the same).
    pub percentage: u32,
    pub from: DedupeFrom,
}

/// Where a repeated buffer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeFrom {
    /// `dedupe_mode=repeat`: the buffer the job's unique stream is at.
    Repeat,
    /// `dedupe_mode=working_set`: one of `pages` blocks, each a unique buffer of the job
    /// (or, `global`, of the jobs in turn).
    WorkingSet {
        pages: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        global: Option<Global>,
    },
}

/// `dedupe_global`: which copy this job's first is among all the file's copies (fio's
/// thread numbers, 0-based), and how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Global {
    pub first_copy: u32,
    pub all_copies: u32,
}

/// `job`'s write contents as fio resolves them, or None where perflab's own (random bytes,
/// filled once) are the same. `min_write` is the job's smallest write; `first_copy` and
/// `all_copies` place its copies among all of the file's (for `dedupe_global`).
pub fn contents_of(
    job: &FioJob,
    min_write: u64,
    first_copy: u32,
    all_copies: u32,
) -> Result<Option<Contents>, (&'static str, String)> {
    if !job.rw.writes() {
        return Ok(None);
    }
    // init.c fixup_options.
    let mut refill = job.refill_buffers;
    let verify = job.verify.is_some();
    if verify && !job.refill_buffers_set {
        refill = true;
    }
    let mut compress = job.buffer_compress_percentage.unwrap_or(0);
    let mut zero = job.zero_buffers;
    if compress == 100 {
        zero = true;
        compress = 0;
    } else if compress > 0 && !job.refill_buffers_set {
        refill = true;
    }
    // init.c td_set_flags, io_u.c get_io_u.
    let scramble_flag =
        job.scramble_buffers && (job.scramble_buffers_set || !(zero && job.zero_buffers_set));
    let scramble = !refill && scramble_flag && !job.compress_written && !verify;
    // io_u.c fill_io_buffer.
    let fill = if compress > 0 || job.dedupe_percentage > 0 {
        Fill::Chunks {
            compress,
            chunk: job.buffer_compress_chunk,
            pattern: job.buffer_pattern.clone(),
            dedupe: dedupe_of(job, min_write, first_copy, all_copies)?,
        }
    } else if let Some(p) = &job.buffer_pattern {
        Fill::Pattern(p.clone())
    } else if zero {
        Fill::Zero
    } else {
        Fill::Random
    };
    if fill == Fill::Random && !refill && !scramble {
        return Ok(None);
    }
    Ok(Some(Contents {
        refill,
        scramble,
        fill,
        min_write: min_write.max(1),
    }))
}

fn dedupe_of(
    job: &FioJob,
    min_write: u64,
    first_copy: u32,
    all_copies: u32,
) -> Result<Option<Dedupe>, (&'static str, String)> {
    let percentage = job.dedupe_percentage;
    if percentage == 0 {
        return Ok(None);
    }
    let from = match job.dedupe_mode {
        // At 100 percent every buffer is the same whatever the mode, as in fio.
        _ if percentage == 100 => DedupeFrom::Repeat,
        DedupeMode::Repeat => DedupeFrom::Repeat,
        DedupeMode::WorkingSet => {
            // fio (dedupe.c): the working set is this share of the job's own `size` as
            // written, in blocks of its smallest write; fio has no set without it.
            let size = match job.size {
                Some(super::fio::job::SizeSpec::Bytes(b)) => b,
                _ => 0,
            };
            let pages = size.saturating_mul(u64::from(job.dedupe_working_set_percentage))
                / 100
                / min_write.max(1);
            if pages == 0 {
                return Err((
                    "dedupe_working_set_percentage",
                    format!(
                        "{}% of size= holds no whole block of {min_write} bytes, so fio would have no working set to repeat; give size= in bytes and a larger percentage",
                        job.dedupe_working_set_percentage
                    ),
                ));
            }
            DedupeFrom::WorkingSet {
                pages,
                global: job.dedupe_global.then_some(Global {
                    first_copy,
                    all_copies: all_copies.max(1),
                }),
            }
        }
    };
    Ok(Some(Dedupe { percentage, from }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::io::fio::{FioJob, read_str};
    use std::path::Path;

    fn job(text: &str) -> FioJob {
        let f = read_str(text, Path::new("/t/j.fio"), &|_| None).unwrap();
        f.jobs.into_iter().next().unwrap()
    }

    fn of(text: &str) -> Option<Contents> {
        contents_of(&job(text), 4096, 0, 1).unwrap()
    }

    #[test]
    fn fios_default_is_random_once_then_scrambled() {
        let c = of("[a]\nsize=1m\nrw=write\n").unwrap();
        assert_eq!(
            (c.refill, c.scramble, &c.fill),
            (false, true, &Fill::Random)
        );
        // Readers' buffers are never written; scramble_buffers=0 is perflab's own path.
        assert_eq!(of("[a]\nsize=1m\nrw=read\n"), None);
        assert_eq!(of("[a]\nsize=1m\nrw=write\nscramble_buffers=0\n"), None);
        let c = of("[a]\nsize=1m\nrw=write\nrefill_buffers\n").unwrap();
        assert_eq!((c.refill, c.scramble), (true, false));
    }

    #[test]
    fn zeros_are_not_scrambled_unless_asked() {
        let c = of("[a]\nsize=1m\nrw=write\nzero_buffers\n").unwrap();
        assert_eq!((c.refill, c.scramble, &c.fill), (false, false, &Fill::Zero));
        let c = of("[a]\nsize=1m\nrw=write\nzero_buffers\nscramble_buffers=1\n").unwrap();
        assert!(c.scramble);
        // 100 percent compressible is zeros, filled once, and (a compression was named)
        // never scrambled.
        let c = of("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=100\n").unwrap();
        assert_eq!((c.refill, c.scramble, &c.fill), (false, false, &Fill::Zero));
    }

    #[test]
    fn compression_refills_unless_refill_was_written() {
        let c =
            of("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=50\nbuffer_compress_chunk=1k\n")
                .unwrap();
        assert!(c.refill && !c.scramble);
        assert_eq!(
            c.fill,
            Fill::Chunks {
                compress: 50,
                chunk: 1024,
                pattern: None,
                dedupe: None
            }
        );
        let c = of("[a]\nsize=1m\nrw=write\nrefill_buffers=0\nbuffer_compress_percentage=50\n")
            .unwrap();
        assert!(!c.refill && !c.scramble, "filled once, never scrambled");
        // A compression of 0 still names one: no scramble, perflab's own random bytes.
        assert_eq!(
            of("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=0\n"),
            None
        );
    }

    #[test]
    fn a_pattern_is_refilled_only_for_jobs_that_read_or_compress() {
        let c = of("[a]\nsize=1m\nrw=write\nbuffer_pattern=0xab\n").unwrap();
        assert_eq!((c.refill, c.scramble), (false, false));
        assert_eq!(c.fill, Fill::Pattern(vec![0xab]));
        // rw as it stood at the pattern's line: read (the default) until rw= comes.
        let c = of("[a]\nsize=1m\nbuffer_pattern=0xab\nrw=write\n").unwrap();
        assert!(c.refill);
        let c = of("[a]\nsize=1m\nrw=randrw\nbuffer_pattern=0xab\n").unwrap();
        assert!(c.refill);
    }

    #[test]
    fn dedupe_modes() {
        let c = of("[a]\nsize=1m\nrw=write\ndedupe_percentage=30\n").unwrap();
        assert!(c.refill && !c.scramble);
        let Fill::Chunks {
            compress, dedupe, ..
        } = c.fill
        else {
            panic!()
        };
        assert_eq!(compress, 0);
        assert_eq!(
            dedupe,
            Some(Dedupe {
                percentage: 30,
                from: DedupeFrom::Repeat
            })
        );
        // 1 MiB, 10 percent, 4 KiB blocks: 25 blocks; global places this job's copies.
        let j = job(
            "[a]\nsize=1m\nrw=write\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=10\ndedupe_global=1\n",
        );
        let c = contents_of(&j, 4096, 3, 8).unwrap().unwrap();
        let Fill::Chunks { dedupe, .. } = c.fill else {
            panic!()
        };
        assert_eq!(
            dedupe.unwrap().from,
            DedupeFrom::WorkingSet {
                pages: 25,
                global: Some(Global {
                    first_copy: 3,
                    all_copies: 8
                })
            }
        );
        // No whole block in the set: fio has nothing to repeat from.
        let j = job(
            "[a]\nsize=1m\nrw=write\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=0\n",
        );
        let (opt, why) = contents_of(&j, 4096, 0, 1).unwrap_err();
        assert_eq!(opt, "dedupe_working_set_percentage");
        assert!(why.contains("no whole block"), "{why}");
    }
}
