//! A job file's job's write side, beyond its pattern: what its writes carry
//! ([`super::contents`]), how its files are opened (`sync`: O_SYNC or O_DSYNC), and the
//! syncs at the end of each pass (`end_fsync`, `fsync_on_close`: [`super::end_sync`]).
//! [`WriteSide::of`] reads them from the job, as fio means them, or refuses.

use super::contents::{Contents, DedupeFrom, Fill, contents_of};
use super::fio::job::{FioJob, SyncIo};
use crate::engine::sys::WriteSync;
use crate::vocab::units::format_bytes;
use serde::Serialize;

/// What a job's writes carry and how they are made durable.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WriteSide {
    /// The writes' bytes, when not perflab's own random bytes filled once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contents: Option<Contents>,
    /// Every file of the job opened O_SYNC or O_DSYNC (fio's `sync`).
    #[serde(skip_serializing_if = "is_none")]
    pub open_sync: WriteSync,
    /// Bytes of a pass, after each of which every file is synced (fio's `end_fsync`,
    /// `fsync_on_close`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_fsync_every: Option<u64>,
    /// The job's first copy among all of the file's copies (fio's thread number, 0-based):
    /// where its buffers' streams are, for jobs that repeat each other's (`dedupe_global`).
    #[serde(skip)]
    pub first_copy: u32,
}

fn is_none(s: &WriteSync) -> bool {
    *s == WriteSync::None
}

impl WriteSide {
    /// `job`'s write side. `min_write` is its smallest write, `pass` the bytes of one pass
    /// (None for a `time_based` job), `first_copy` and `all_copies` its copies' place among
    /// all of the file's. Err: the option perflab refuses, and why.
    pub fn of(
        job: &FioJob,
        min_write: u64,
        pass: Option<u64>,
        first_copy: u32,
        all_copies: u32,
    ) -> Result<WriteSide, (&'static str, String)> {
        let end_fsync = (job.end_fsync || job.fsync_on_close) && job.rw.writes();
        let end_fsync_every = match (end_fsync, pass) {
            (false, _) => None,
            (true, Some(p)) => Some(p),
            (true, None) => {
                let option = if job.end_fsync {
                    "end_fsync"
                } else {
                    "fsync_on_close"
                };
                return Err((
                    option,
                    "with time_based: fio syncs after the runtime and counts the sync in the job's time, and perflab's timed steps end at the runtime; drop time_based (the job then runs its size) or this".into(),
                ));
            }
        };
        Ok(WriteSide {
            contents: contents_of(job, min_write, first_copy, all_copies)?,
            open_sync: match job.sync {
                SyncIo::None => WriteSync::None,
                SyncIo::Sync => WriteSync::Full,
                SyncIo::Dsync => WriteSync::Data,
            },
            end_fsync_every,
            first_copy,
        })
    }
}

impl WriteSide {
    /// The plan's lines for it (`--dry-run`), none when it is perflab's own.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = &self.contents {
            let what = match &c.fill {
                Fill::Random => "random bytes".to_string(),
                Fill::Zero => "zeros".to_string(),
                Fill::Pattern(p) => format!("a {}-byte pattern", p.len()),
                Fill::Chunks {
                    compress,
                    chunk,
                    pattern,
                    dedupe,
                } => {
                    let chunk = match *chunk {
                        0 => format_bytes(c.min_write),
                        n => format_bytes(n.min(c.min_write)),
                    };
                    let rest = if pattern.is_some() {
                        "pattern"
                    } else {
                        "zeros"
                    };
                    let mut s = format!("{compress}% {rest} in each {chunk} chunk");
                    if let Some(d) = dedupe {
                        let from = match d.from {
                            DedupeFrom::Repeat => "another of its buffers".to_string(),
                            DedupeFrom::WorkingSet { pages, global } => format!(
                                "a working set of {pages} blocks{}",
                                if global.is_some() {
                                    " shared by the jobs"
                                } else {
                                    ""
                                }
                            ),
                        };
                        s += &format!(", {}% of writes repeating {from}", d.percentage);
                    }
                    s
                }
            };
            let when = match (c.refill, c.scramble) {
                (true, _) => "refilled before each write",
                (false, true) => "filled once, scrambled before each write",
                (false, false) => "filled once",
            };
            out.push(format!("writes carry {what}, {when}"));
        }
        match self.open_sync {
            WriteSync::None => {}
            WriteSync::Full => out.push("files opened O_SYNC".into()),
            WriteSync::Data => out.push("files opened O_DSYNC".into()),
        }
        if let Some(every) = self.end_fsync_every {
            out.push(format!(
                "an fsync of each file after each pass of {}",
                format_bytes(every)
            ));
        }
        out
    }
}
