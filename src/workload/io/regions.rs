//! Where each copy of a job file's job does its I/O in its files: fio's `file_offset` and
//! `io_size` (filesetup.c `get_start_offset`, `setup_files`), from `offset`,
//! `offset_increment`, `size` and `filesize`, in bytes or in percent of an existing file.
//!
//! Copy `c` (fio's `subjob_number`) of a job starts at `offset + c · offset_increment`;
//! a percentage of either is of the file's size as it exists before the run, and makes the
//! start round up to the smallest block size. Its region then spans:
//! - `size / files` bytes (`size` in bytes);
//! - `filesize - start` (`filesize`, for a file that is not already of that size);
//! - what an existing file holds past the start (no size);
//! - `size=N%`: N percent of the file (start included), at most what lies past the start,
//!   rounded down to the smallest block size.
//!
//! perflab gives every copy's region the same length (one pattern per job); a job whose
//! copies or files would get regions of different lengths is refused, naming why.

use super::fio::job::{FioJob, SizeSpec};
use std::path::Path;

/// A job's regions: each copy's start (the same in each of its files) and their length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regions {
    pub starts: Vec<u64>,
    pub len: u64,
}

/// The regions of `job`'s `copies`, whose files are `files_of(copy)`, with `min_bs` its
/// smallest block size and `existing` the length of a file or device that exists.
/// `Err((option, why))` when perflab cannot run them as fio would.
pub fn of(
    job: &FioJob,
    copies: u32,
    min_bs: u64,
    existing: &dyn Fn(&Path) -> Option<u64>,
) -> Result<Regions, (&'static str, String)> {
    let min_bs = min_bs.max(1);
    let mut starts = Vec::new();
    let mut len: Option<(u64, &'static str)> = None;
    for copy in 0..copies {
        let files = job.files_of(copy);
        let nfiles = files.len().max(1) as u64;
        let mut copy_start = None;
        for path in &files {
            let real = existing(path);
            let start = start_of(job, copy, real, min_bs, path)?;
            let this = region_of(job, nfiles, start, real, min_bs)?;
            if copy_start.is_some_and(|s| s != start) {
                return Err((
                    "offset",
                    "a percentage of files of different sizes starts each file elsewhere, which perflab does not run yet; give the offset in bytes".into(),
                ));
            }
            copy_start = Some(start);
            match len {
                Some((l, _)) if l != this.0 => {
                    return Err((
                        this.1,
                        format!(
                            "gives this job's copies or files regions of different sizes ({l} and {} bytes), which perflab does not run yet; give size= in bytes",
                            this.0
                        ),
                    ));
                }
                _ => len = Some(this),
            }
        }
        starts.push(copy_start.unwrap_or(0));
    }
    Ok(Regions {
        starts,
        len: len.map_or(0, |l| l.0),
    })
}

/// fio's `get_start_offset` for copy `copy` of a file whose existing length is `real`.
fn start_of(
    job: &FioJob,
    copy: u32,
    real: Option<u64>,
    min_bs: u64,
    path: &Path,
) -> Result<u64, (&'static str, String)> {
    let of_file = |option: &'static str, pct: u32| match real {
        Some(len) => Ok(u128::from(len) * u128::from(pct) / 100),
        None => Err((
            option,
            format!(
                "{pct}% of {}, which does not exist yet: fio takes it of the file's size before making it (0); give bytes",
                path.display()
            ),
        )),
    };
    let mut align = false;
    let increment = if job.offset_increment_percent > 0 {
        align = true;
        of_file("offset_increment", job.offset_increment_percent)?
    } else {
        u128::from(job.offset_increment)
    };
    let base = match job.offset {
        Some(SizeSpec::Percent(p)) => {
            align = true;
            of_file("offset", p)?
        }
        Some(SizeSpec::Bytes(b)) => u128::from(b),
        None => 0,
    };
    let mut start = base + u128::from(copy) * increment;
    if align {
        start = start.div_ceil(u128::from(min_bs)) * u128::from(min_bs);
    }
    u64::try_from(start).map_err(|_| ("offset", "runs past 2^64 bytes".into()))
}

/// fio's `io_size` of one file starting at `start`, and the option it comes from.
fn region_of(
    job: &FioJob,
    nfiles: u64,
    start: u64,
    real: Option<u64>,
    min_bs: u64,
) -> Result<(u64, &'static str), (&'static str, String)> {
    let past_start = |len: u64, option: &'static str| {
        len.checked_sub(start).ok_or_else(|| {
            (
                "offset",
                format!(
                    "starts at {start}, past the {len} bytes that {option} leaves; lower offset"
                ),
            )
        })
    };
    let (mut io_size, from) = match (job.filesize, job.size) {
        (Some((lo, hi)), _) => match real {
            Some(r) if (lo..=hi).contains(&r) => (past_start(r, "the file")?, "filesize"),
            _ => (past_start(lo, "filesize")?, "filesize"),
        },
        (None, Some(SizeSpec::Bytes(b))) => (b / nfiles, "size"),
        (None, size) => match real {
            Some(r) => (past_start(r, "the file")?, "size"),
            None => {
                return Err((
                    "size",
                    if size.is_some() {
                        "a percentage of a file that does not exist yet is 0 bytes in fio; give bytes".into()
                    } else {
                        "fio needs size= (or filesize=) for files that do not exist yet".into()
                    },
                ));
            }
        },
    };
    if let (None, Some(SizeSpec::Percent(p))) = (job.filesize, job.size)
        && p != 100
    {
        let file = io_size + start;
        io_size = ((u128::from(file) * u128::from(p) / 100) as u64).min(file - start);
        io_size -= io_size % min_bs;
    }
    Ok((io_size, from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const M: u64 = 1 << 20;

    fn job(f: impl FnOnce(&mut FioJob)) -> FioJob {
        let mut j = FioJob {
            name: "j".into(),
            filenames: vec![PathBuf::from("/dev/x")],
            ..FioJob::default()
        };
        f(&mut j);
        j
    }

    fn device(_: &Path) -> Option<u64> {
        Some(100 * M)
    }

    fn missing(_: &Path) -> Option<u64> {
        None
    }

    #[test]
    fn offset_and_increment_in_bytes() {
        let j = job(|j| {
            j.size = Some(SizeSpec::Bytes(8 * M));
            j.offset = Some(SizeSpec::Bytes(M));
            j.offset_increment = 10 * M;
        });
        let r = of(&j, 3, 4096, &missing).unwrap();
        assert_eq!(r.starts, vec![M, 11 * M, 21 * M]);
        assert_eq!(r.len, 8 * M);
    }

    #[test]
    fn percentages_of_an_existing_device() {
        // uring-cmd-fdp.fio: offset=30% size=30% of the device.
        let j = job(|j| {
            j.size = Some(SizeSpec::Percent(30));
            j.offset = Some(SizeSpec::Percent(30));
        });
        let r = of(&j, 1, 4096, &device).unwrap();
        assert_eq!(r.starts, vec![30 * M]);
        assert_eq!(r.len, 30 * M);
        // A percentage offset rounds up to the smallest block.
        let j = job(|j| {
            j.size = Some(SizeSpec::Bytes(M));
            j.offset = Some(SizeSpec::Percent(33));
        });
        let r = of(&j, 1, 1 << 16, &device).unwrap();
        assert_eq!(r.starts, vec![(33 * M).div_ceil(1 << 16) * (1 << 16)]);
        // size=N% is of the whole file, capped at what lies past the start.
        let j = job(|j| {
            j.size = Some(SizeSpec::Percent(80));
            j.offset = Some(SizeSpec::Bytes(50 * M));
        });
        assert_eq!(of(&j, 1, 4096, &device).unwrap().len, 50 * M);
        // Increments in percent.
        let j = job(|j| {
            j.size = Some(SizeSpec::Bytes(M));
            j.offset_increment_percent = 25;
        });
        assert_eq!(
            of(&j, 4, 4096, &device).unwrap().starts,
            vec![0, 25 * M, 50 * M, 75 * M]
        );
    }

    #[test]
    fn no_size_takes_the_rest_of_the_file_which_differs_per_copy() {
        let j = job(|j| j.offset = Some(SizeSpec::Bytes(40 * M)));
        assert_eq!(of(&j, 1, 4096, &device).unwrap().len, 60 * M);
        let j = job(|j| {
            j.offset = Some(SizeSpec::Bytes(40 * M));
            j.offset_increment = M;
        });
        let (option, why) = of(&j, 2, 4096, &device).unwrap_err();
        assert_eq!(option, "size");
        assert!(why.contains("different sizes"), "{why}");
    }

    #[test]
    fn filesize_leaves_what_is_past_the_offset() {
        let j = job(|j| {
            j.filesize = Some((16 * M, 16 * M));
            j.offset = Some(SizeSpec::Bytes(4 * M));
        });
        assert_eq!(of(&j, 1, 4096, &missing).unwrap().len, 12 * M);
        let j = job(|j| {
            j.filesize = Some((16 * M, 16 * M));
            j.offset = Some(SizeSpec::Bytes(20 * M));
        });
        assert!(of(&j, 1, 4096, &missing).unwrap_err().1.contains("past"));
    }

    #[test]
    fn percentages_of_files_that_do_not_exist_are_refused() {
        let j = job(|j| j.size = Some(SizeSpec::Percent(50)));
        assert_eq!(of(&j, 1, 4096, &missing).unwrap_err().0, "size");
        let j = job(|j| {
            j.size = Some(SizeSpec::Bytes(M));
            j.offset = Some(SizeSpec::Percent(50));
        });
        let (option, why) = of(&j, 1, 4096, &missing).unwrap_err();
        assert_eq!(option, "offset");
        assert!(why.contains("does not exist"), "{why}");
    }
}
