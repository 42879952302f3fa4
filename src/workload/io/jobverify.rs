//! A job file's `verify`, as perflab has it: fio's options mapped onto perflab's own check
//! ([`super::verify`]), or refused by name where the check cannot mean what fio's does.
//!
//! What a job with `verify=METHOD` (any method fio knows but `pattern`) does here:
//! - every block it writes is one of perflab's self-describing blocks (header, 64-bit
//!   checksum, a payload from the block's identity), whatever METHOD names: fio cannot read
//!   perflab's blocks, nor perflab fio's (the run says so, warning `fio_verify`);
//! - every read of a block whose content the run knows (written by it, or made and filled by
//!   it) is checked at once, and a block of a file perflab did not make is checked only if it
//!   carries perflab's header (for all but its generation);
//! - `do_verify=1` (the default): once a copy's I/O is done, what it wrote is read back and
//!   checked (fio's verify phase); `do_verify=0` skips that. The read-back is not counted
//!   among the job's reads (fio counts its verify reads as the job's reads);
//! - a bad block is an error of the job (its read errors) and of the step, naming the file,
//!   the offset and what is wrong; the run then fails (exit 1). `verify_fatal=1` ends the copy
//!   at its first bad block, as fio's does; without it the copy goes on checking, as fio's;
//! - `verify_dump` is accepted and dumps nothing (the error says what was wrong), `verifysort`
//!   and `verifysort_nr` are ignored (fio 3.33 ignores them too), `verify=null` (fio only
//!   pretends) checks nothing.
//!
//! The check needs each I/O to be one whole block at a block's place: one block size for
//! the job (and for every job of the run that verifies), offsets at multiples of it, an
//! engine that moves data.

use super::fio::job::FioJob;
use super::walk::WalkRules;
use crate::engine::EngineKind;
use serde::Serialize;

/// Most blocks a run's verify tracks (4 bytes each: 1 GiB of tables), as `--verify`.
pub const MAX_BLOCKS: u64 = 1 << 28;

/// One job's verify.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobVerify {
    /// fio's method as the job names it (perflab's own check runs whatever it says).
    pub method: String,
    /// The job's one block size: the unit of the check.
    pub block: u64,
    /// `do_verify`: what a copy wrote is read back once its I/O is done.
    pub read_back: bool,
    /// `verify_fatal`: a copy ends at its first bad block.
    pub fatal: bool,
    /// `verify_dump` was asked (perflab dumps nothing).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dump: bool,
}

impl JobVerify {
    /// `job`'s verify, run on `engine` with block sizes `sizes` (`write_sizes` when writes'
    /// differ), each copy's region from `starts`, in fio's order of offsets `walk`; None
    /// without `verify`, or `(option, why)` when perflab's check cannot mean fio's.
    pub fn of(
        job: &FioJob,
        engine: EngineKind,
        sizes: &[(u64, u32)],
        write_sizes: Option<&[(u64, u32)]>,
        starts: &[u64],
        walk: &WalkRules,
    ) -> Result<Option<JobVerify>, (&'static str, String)> {
        let Some(method) = &job.verify else {
            return Ok(None);
        };
        if method == "pattern" {
            return Err((
                "verify",
                "verify=pattern checks verify_pattern's bytes, which perflab does not; give a checksum method (crc32c, md5, ...) for perflab's own check of every block".into(),
            ));
        }
        if !matches!(
            engine,
            EngineKind::Sync | EngineKind::IoUring | EngineKind::Libaio
        ) {
            return Err((
                "verify",
                format!(
                    "ioengine={} moves no data, so there is nothing to check; remove verify",
                    job.ioengine.name()
                ),
            ));
        }
        let block = match (sizes, write_sizes) {
            ([(b, _)], None) => *b,
            _ => {
                return Err((
                    "verify",
                    "with several block sizes (bs=READ,WRITE, bsrange, bssplit): perflab checks whole blocks of one size; give one bs".into(),
                ));
            }
        };
        if block < 512 || !block.is_multiple_of(512) {
            return Err((
                "bs",
                format!(
                    "{block} bytes: perflab's verify blocks are whole 512-byte sectors; give a bs that is a multiple of 512"
                ),
            ));
        }
        if let Some(s) = starts.iter().find(|s| !s.is_multiple_of(block)) {
            return Err((
                "offset",
                format!(
                    "a copy starts at byte {s}, not a multiple of bs ({block}): perflab checks blocks at their places; give an offset (and offset_increment) in whole blocks"
                ),
            ));
        }
        if walk.skip % block as i64 != 0 {
            return Err((
                "rw",
                format!(
                    "a skip of {} bytes leaves I/Os off the block boundaries perflab checks; give a skip in whole blocks ({block})",
                    walk.skip
                ),
            ));
        }
        Ok(Some(JobVerify {
            method: method.clone(),
            block,
            read_back: job.do_verify,
            fatal: job.verify_fatal,
            dump: job.verify_dump,
        }))
    }
}

/// What the run says about its jobs' verify: perflab's own blocks, and what it does not do
/// as fio does.
pub fn notes<'a>(
    verifies: impl Iterator<Item = (&'a str, &'a JobVerify)>,
) -> Vec<(&'static str, String)> {
    let all: Vec<(&str, &JobVerify)> = verifies.collect();
    let Some((_, first)) = all.first() else {
        return Vec::new();
    };
    let mut notes = vec![(
        "fio_verify",
        format!(
            "verify={} is perflab's own check: every block written carries perflab's header and 64-bit checksum (not fio's {}), every read of a known block is checked, and what each copy wrote is read back once its I/O is done (do_verify); fio cannot read perflab's blocks nor perflab fio's, and the read-back is not counted among the job's reads (fio counts it)",
            first.method, first.method
        ),
    )];
    let dumps: Vec<&str> = all
        .iter()
        .filter(|(_, v)| v.dump)
        .map(|(n, _)| *n)
        .collect();
    if !dumps.is_empty() {
        notes.push((
            "fio_verify_dump",
            format!(
                "verify_dump ({}): perflab writes no dump files; each bad block's error names its file, its offset and what is wrong with it",
                dumps.join(", ")
            ),
        ));
    }
    notes
}
