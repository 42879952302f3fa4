//! From a job file's jobs ([`super::fio`]) to the run ([`super::jobrun::JobRun`]): fio's
//! meaning, defaults included, or a refusal naming `FILE:LINE`, the option and why.
//!
//! What a job means here:
//! - its files: `filename` (every copy shares them) or fio's own names per copy in
//!   `directory`; a file that does not exist is made at the start of the run and removed at
//!   the end (fio leaves it; say `unlink=0`... perflab never leaves what it made behind);
//! - `size` is the job's bytes over its files (`filesize` each file's); `io_size` (else
//!   `size`) times `loops` is what each copy moves, unless `time_based`;
//! - fio's engines: psync, sync, pvsync and pvsync2 are perflab's sync engine (one I/O in
//!   flight per copy, whatever `iodepth` says, as in fio); libaio and io_uring are io_uring
//!   at `iodepth`;
//! - `direct` (default 0: buffered), `invalidate` (default 1: each copy starts with its
//!   files out of the page cache), `fsync`, `fdatasync`, `rwmixread`, `bs=READ,WRITE`,
//!   `bssplit`, the random distributions perflab has.
//!
//! What perflab cannot do yet is refused by name rather than run differently.

use super::IoSpec;
use super::fio::job::{FioDistribution, FioEngine, FioJob, FioRw, RateProcess, SizeSpec};
use super::fio::{JobFile, Origin};
use super::jobcontrol::{Control, check_jobs, control_of, steps_of};
use super::jobrun::{Job, JobRun};
use super::layout::Layout;
use super::pattern::Rw;
use crate::engine::{EngineKind, probe_uring};
use crate::vocab::Sweep;
use crate::workload::Arrival;
use crate::workload::distribution::Distribution;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A job perflab cannot run as fio would: where, which option, why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub at: Origin,
    pub option: String,
    pub why: String,
}

/// What a fio command line's jobs are called where a job file's would name the file.
pub const COMMAND_LINE: &str = "fio's command line";

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.file.as_os_str() == COMMAND_LINE {
            return write!(f, "fio's --{}: {}", self.option, self.why);
        }
        write!(f, "{}: {}: {}", self.at, self.option, self.why)
    }
}

/// What the command adds to the job file: `--destroy-data`, `--keep`, the run's seed.
pub struct Options<'a> {
    pub destroy: Option<&'a str>,
    pub keep: bool,
    pub seed: u64,
}

/// One job, shaped for the run, before the run's layout exists.
struct Shaped<'f> {
    job: &'f FioJob,
    copies: u32,
    /// The layout's files each copy drives.
    files: Vec<Vec<usize>>,
    region: u64,
    rw: Rw,
    read_pct: u64,
    sizes: Vec<(u64, u32)>,
    write_sizes: Option<Vec<(u64, u32)>>,
    engine: EngineKind,
    depth: u32,
    distribution: Distribution,
    budget: Option<u64>,
    rate_iops: Option<f64>,
    control: Control,
}

/// Every file of every copy once, in the order first named.
#[derive(Default)]
struct Files {
    paths: Vec<PathBuf>,
    index_of: BTreeMap<PathBuf, usize>,
}

impl Files {
    fn index(&mut self, p: PathBuf) -> usize {
        let paths = &mut self.paths;
        *self.index_of.entry(p.clone()).or_insert_with(|| {
            paths.push(p);
            paths.len() - 1
        })
    }
}

/// `job`'s refusal of `option`, as one line.
fn refuse(job: &FioJob, option: &str, why: &str) -> String {
    Refusal {
        at: job.at.clone(),
        option: option.to_string(),
        why: why.to_string(),
    }
    .to_string()
}

/// The run of `file`'s jobs, or the first thing in it perflab cannot honour.
pub fn plan(file: &JobFile, names: &[String], opts: &Options) -> Result<JobRun, String> {
    if file.jobs.is_empty() {
        return Err("the job file has no jobs".into());
    }
    let mut files = Files::default();
    let shaped = file
        .jobs
        .iter()
        .map(|job| shape(job, &mut files))
        .collect::<Result<Vec<_>, _>>()?;
    let steps = steps_of(&file.jobs);
    check_groups(file, &steps)?;
    check_jobs(&file.jobs, &steps).map_err(|(i, o, w)| refuse(&file.jobs[i], o, &w))?;
    let size = shaped.iter().map(|s| s.region).max().unwrap_or(0);
    // Only the files a writing job uses need permission to be written.
    let mut writes = vec![false; files.paths.len()];
    for s in shaped.iter().filter(|s| s.rw.writes()) {
        for &i in s.files.iter().flatten() {
            writes[i] = true;
        }
    }
    let layout =
        Arc::new(Layout::named(&files.paths, size, 0, &writes, opts.destroy).map_err(|e| e.0)?);
    let base = IoSpec {
        rw: Sweep::list("rw", shaped.iter().map(|s| s.rw).collect()),
        bs_bytes: Sweep::single("bs_bytes", 4096),
        bssplit: Vec::new(),
        rwmix: Sweep::single("rwmix", 50),
        iodepth: Sweep::single("iodepth", 1),
        files: Sweep::single("files", files.paths.len() as u64),
        volume: None,
        size_bytes: size,
        region_bytes: Sweep::single("size_bytes", size),
        offset_bytes: 0,
        direct: false,
        fsync: 0,
        fdatasync: 0,
        distribution: Distribution::Uniform,
        engine: EngineKind::Sync,
        engine_note: None,
        prefill: false,
        verify: false,
        verify_seed: opts.seed,
        keep: opts.keep,
        steady_state: None,
        straggler_fraction: 0.5,
        layout: Arc::clone(&layout),
    };
    let jobs: Vec<Job> = shaped
        .into_iter()
        .zip(&steps)
        .map(|(s, &step)| job_of(s, step, &base))
        .collect();
    let count = steps.iter().max().map_or(1, |m| m + 1);
    let labels: Vec<String> = (0..count)
        .map(|g| {
            jobs.iter()
                .filter(|j| j.step == g)
                .map(|j| j.name.as_str())
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    Ok(JobRun {
        job_files: names.to_vec(),
        group: Sweep::list("group", labels),
        jobs,
        global_options: file.global_options.clone(),
        notes: notes_of(file),
        layout,
        base: Arc::new(base),
        exitall: file.jobs.iter().any(|j| j.exitall),
        genesis: Default::default(),
        run_end: Default::default(),
        latest: Default::default(),
    })
}

/// One job's files, sizes, pattern, engine and end, or its refusal.
fn shape<'f>(job: &'f FioJob, all: &mut Files) -> Result<Shaped<'f>, String> {
    unsupported(job).map_err(|(o, w)| refuse(job, o, &w))?;
    endless_files(job).map_err(|w| refuse(job, "filename", &w))?;
    let copies = job.numjobs.max(1);
    let files: Vec<Vec<usize>> = (0..copies)
        .map(|copy| {
            job.files_of(copy)
                .into_iter()
                .map(|p| all.index(p))
                .collect()
        })
        .collect();
    let nfiles = files.first().map_or(1, Vec::len).max(1) as u64;
    // Each file's bytes: filesize, else the job's size over its files, else what an
    // existing file holds.
    let region = match (job.filesize, job.size) {
        (Some((lo, _)), _) => lo,
        (None, Some(SizeSpec::Bytes(b))) => b / nfiles,
        (None, Some(SizeSpec::Percent(_))) => {
            return Err(refuse(
                job,
                "size",
                "a size in percent of the file is not supported yet; give bytes",
            ));
        }
        (None, None) => job
            .files_of(0)
            .iter()
            .filter_map(|p| existing_len(p))
            .min()
            .ok_or_else(|| {
                refuse(
                    job,
                    "size",
                    "fio needs size= (or filesize=) for files that do not exist yet",
                )
            })?,
    };
    let (rw, read_pct) = rw_of(job).map_err(|w| refuse(job, "rw", &w))?;
    let (sizes, write_sizes) = sizes_of(job);
    let smallest = sizes
        .iter()
        .chain(write_sizes.iter().flatten())
        .map(|s| s.0)
        .min()
        .unwrap_or(4096);
    let region = region / smallest * smallest;
    if region == 0 {
        return Err(refuse(
            job,
            "size",
            "leaves no room for one block per file; raise size",
        ));
    }
    let (engine, depth) = engine_of(job).map_err(|(o, w)| refuse(job, o, &w))?;
    let distribution =
        distribution_of(&job.distribution).map_err(|w| refuse(job, "random_distribution", &w))?;
    let rate_iops =
        pace_of(job, &sizes, write_sizes.as_deref()).map_err(|(o, w)| refuse(job, o, &w))?;
    let control =
        control_of(job, &sizes, write_sizes.as_deref()).map_err(|(o, w)| refuse(job, o, &w))?;
    let budget = (!job.time_based).then(|| {
        job.io_size
            .unwrap_or(region.saturating_mul(nfiles))
            .saturating_mul(u64::from(job.loops.max(1)))
    });
    Ok(Shaped {
        job,
        copies,
        files,
        region,
        rw,
        read_pct,
        sizes,
        write_sizes,
        engine,
        depth,
        distribution,
        budget,
        rate_iops,
        control,
    })
}

/// Jobs that run at once (`steps[i]`: job i's step) must end the same way: all for their
/// sizes, or all for one runtime after one ramp_time.
fn check_groups(file: &JobFile, steps: &[usize]) -> Result<(), String> {
    let count = steps.iter().max().map_or(1, |m| m + 1);
    for g in 0..count {
        let at_once: Vec<&FioJob> = file
            .jobs
            .iter()
            .zip(steps)
            .filter(|(_, s)| **s == g)
            .map(|(j, _)| j)
            .collect();
        let Some(first) = at_once.first() else {
            continue;
        };
        for j in &at_once[1..] {
            if j.time_based != first.time_based {
                return Err(refuse(
                    j,
                    "time_based",
                    &format!(
                        "runs at once with {} whose time_based differs; perflab runs a group of jobs either for a time or for their sizes: give both the same, or a stonewall between them",
                        first.name
                    ),
                ));
            }
            if j.time_based && (j.runtime != first.runtime || j.ramp_time != first.ramp_time) {
                return Err(refuse(
                    j,
                    "runtime",
                    &format!(
                        "runs at once with {} for another runtime or ramp_time; perflab times a group of time_based jobs as one: give both the same, or a stonewall between them",
                        first.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A shaped job over the run's layout (`base`), with its own engine, O_DIRECT,
/// distribution and syncs.
fn job_of(s: Shaped, step: usize, base: &IoSpec) -> Job {
    let job = s.job;
    let spec = IoSpec {
        rw: Sweep::single("rw", s.rw),
        bs_bytes: Sweep::single(
            "bs_bytes",
            s.sizes.iter().map(|x| x.0).min().unwrap_or(4096),
        ),
        direct: job.direct,
        fsync: u64::from(job.fsync),
        fdatasync: u64::from(job.fdatasync),
        distribution: s.distribution,
        engine: s.engine,
        ..base.clone()
    };
    Job {
        name: job.name.clone(),
        at: job.at.to_string(),
        group: job.group as usize,
        step,
        copies: s.copies,
        rw: s.rw,
        read_pct: s.read_pct,
        sizes: s.sizes,
        write_sizes: s.write_sizes,
        iodepth: s.depth,
        files: s.files,
        region_bytes: s.region,
        budget_bytes: s.budget,
        runtime: job.runtime,
        time_based: job.time_based,
        ramp_time: job.ramp_time,
        invalidate: job.invalidate && !job.direct,
        random_map: !job.norandommap,
        rate_iops: s.rate_iops,
        arrival: match job.rate_process {
            RateProcess::Linear => Arrival::Uniform,
            RateProcess::Poisson => Arrival::Poisson,
        },
        options: job.options.clone(),
        control: s.control,
        spec: Arc::new(spec),
    }
}

/// What the run says before its numbers: fio's defaults that differ from perflab's.
fn notes_of(file: &JobFile) -> Vec<(&'static str, String)> {
    let mut notes = Vec::new();
    if file
        .jobs
        .iter()
        .any(|j| !j.direct && j.ioengine == FioEngine::Libaio && j.iodepth > 1)
    {
        notes.push((
            "fio_libaio_buffered",
            "libaio without direct=1 runs one I/O at a time whatever its iodepth (Linux queues only O_DIRECT AIO), in fio as here".into(),
        ));
    }
    if file.jobs.iter().any(|j| !j.direct) {
        notes.push((
            "fio_default",
            "fio's defaults hold in a job file: buffered I/O (direct=0) unless the job says direct=1, psync unless it names an engine, no warm-up unless ramp_time".into(),
        ));
    }
    notes
}

/// What perflab does not do yet, by option: `(option, why)`.
fn unsupported(job: &FioJob) -> Result<(), (&'static str, String)> {
    let not_yet = |o: &'static str, what: &str| Err((o, format!("{what} is not supported yet")));
    if matches!(job.rw, FioRw::Trim | FioRw::RandTrim | FioRw::TrimWrite) {
        return Err((
            "rw",
            "perflab does not trim; use read, write, randread, randwrite, rw or randrw".into(),
        ));
    }
    if job.rw_modifier.is_some() {
        return not_yet(
            "rw",
            "an rw=X:N modifier (skips or offset changes every N I/Os)",
        );
    }
    if job.bsrange.is_some() {
        return not_yet("bsrange", "a range of block sizes (give bs or bssplit)");
    }
    if job.offset.is_some_and(|o| o != SizeSpec::Bytes(0)) || job.offset_increment > 0 {
        return not_yet("offset", "an offset into the files");
    }
    if job
        .rate_min
        .iter()
        .chain(&job.rate_iops_min)
        .any(Option::is_some)
    {
        return not_yet("rate_min", "ending a job that falls below a rate");
    }
    if job.verify.is_some() {
        return not_yet(
            "verify",
            "verify in a job file (perflab io --verify on a command line checks every block)",
        );
    }
    if job.write_bw_log.is_some()
        || job.write_lat_log.is_some()
        || job.write_iops_log.is_some()
        || job.write_hist_log.is_some()
    {
        return not_yet(
            "write_bw_log",
            "fio's log files (every run is archived with its time series: perflab export RUN -f csv-intervals)",
        );
    }
    if job.sync {
        return not_yet("sync", "O_SYNC writes (fsync=1 syncs after every write)");
    }
    if job.end_fsync || job.fsync_on_close {
        return not_yet("end_fsync", "a sync at the job's end");
    }
    if job.buffers != super::fio::job::Buffers::Random || job.buffer_compress_percentage.is_some() {
        return Err(("buffer_compress_percentage", "perflab writes random bytes, incompressible and unique; it has no other buffer contents".into()));
    }
    if job.filesize.is_some_and(|(lo, hi)| lo != hi) {
        return not_yet("filesize", "a range of file sizes");
    }
    if job
        .blockalign
        .is_some_and(|[r, w]| r != job.bs[0] || w != job.bs[1])
    {
        return not_yet("blockalign", "an alignment other than the block size");
    }
    if job.percentage_random != [100, 100] && job.rw.random() {
        return not_yet(
            "percentage_random",
            "a share of sequential I/O in a random job",
        );
    }
    Ok(())
}

/// Each copy's pace in I/Os a second, from fio's `rate_iops` or `rate` (bytes a second over
/// the block size), for a job that reads or writes; a job that does both paces each
/// direction on its own, as fio does (its copies hold themselves: `jobcontrol`).
fn pace_of(
    job: &FioJob,
    sizes: &[(u64, u32)],
    write_sizes: Option<&[(u64, u32)]>,
) -> Result<Option<f64>, (&'static str, String)> {
    let dir = usize::from(job.rw.writes() && !job.rw.reads());
    let given = job.rate.iter().chain(&job.rate_iops).any(Option::is_some);
    if !given {
        return Ok(None);
    }
    if job.rw.reads() && job.rw.writes() || super::jobcontrol::holds_itself(job) {
        return Ok(None);
    }
    if let Some(iops) = job.rate_iops[dir] {
        return Ok(Some(iops.max(1) as f64));
    }
    let Some(bytes) = job.rate[dir] else {
        // A rate for the other direction only: this job's I/Os are not paced, as in fio.
        return Ok(None);
    };
    let one_size = match (sizes, write_sizes) {
        ([(b, _)], None) => *b,
        _ => {
            return Err((
                "rate",
                "a rate in bytes with several block sizes is not supported yet; give rate_iops"
                    .into(),
            ));
        }
    };
    Ok(Some((bytes as f64 / one_size as f64).max(1e-3)))
}

/// The pattern, and the reads out of 100 in a mixed one.
fn rw_of(job: &FioJob) -> Result<(Rw, u64), String> {
    let rw = match job.rw {
        FioRw::Read => Rw::Read,
        FioRw::Write => Rw::Write,
        FioRw::RandRead => Rw::RandRead,
        FioRw::RandWrite => Rw::RandWrite,
        FioRw::ReadWrite => Rw::ReadWrite,
        FioRw::RandRw => Rw::RandRw,
        FioRw::Trim | FioRw::RandTrim | FioRw::TrimWrite => {
            return Err("perflab does not trim".into());
        }
    };
    Ok((rw, u64::from(job.rwmixread.min(100))))
}

/// Reads' sizes, and writes' when they differ.
#[allow(clippy::type_complexity)]
fn sizes_of(job: &FioJob) -> (Vec<(u64, u32)>, Option<Vec<(u64, u32)>>) {
    let [r, w] = match &job.bssplit {
        Some(split) => [split[0].clone(), split[1].clone()],
        None => [vec![(job.bs[0], 1)], vec![(job.bs[1], 1)]],
    };
    let differ = job.rw.writes() && job.rw.reads() && r != w;
    match (job.rw.reads(), job.rw.writes()) {
        (false, true) => (w, None),
        _ if differ => (r, Some(w)),
        _ => (r, None),
    }
}

/// The engine and the depth each copy keeps.
fn engine_of(job: &FioJob) -> Result<(EngineKind, u32), (&'static str, String)> {
    match job.ioengine {
        FioEngine::Psync | FioEngine::Sync | FioEngine::Pvsync | FioEngine::Pvsync2 => {
            Ok((EngineKind::Sync, 1))
        }
        // Linux's native AIO queues only O_DIRECT I/O: a buffered read or write completes
        // inside io_submit, one at a time, so fio's libaio job without direct=1 keeps one
        // I/O in flight whatever its iodepth. perflab's sync engine does the same.
        FioEngine::Libaio if !job.direct => Ok((EngineKind::Sync, 1)),
        FioEngine::Libaio | FioEngine::IoUring => match probe_uring() {
            Ok(()) => Ok((EngineKind::IoUring, job.iodepth.max(1))),
            Err(why) => Err((
                "ioengine",
                format!("io_uring is not available here ({why}); use ioengine=psync"),
            )),
        },
        FioEngine::Null => Err(("ioengine", "the null engine is not supported yet".into())),
    }
}

fn distribution_of(d: &FioDistribution) -> Result<Distribution, String> {
    let off_center = |c: f64| c != 0.0;
    let dist = match d {
        FioDistribution::Random => Distribution::Uniform,
        FioDistribution::Zipf { theta, center } if !off_center(*center) => {
            Distribution::Zipf { theta: *theta }
        }
        FioDistribution::Pareto { h, center } if !off_center(*center) => {
            Distribution::Pareto { h: *h }
        }
        FioDistribution::Zoned(zones) if zones.len() == 2 => Distribution::Hot {
            access_pct: zones[0].0,
            data_pct: zones[0].1,
        },
        FioDistribution::Zoned(zones) if zones.len() == 1 => Distribution::Uniform,
        FioDistribution::Zipf { .. } | FioDistribution::Pareto { .. } => {
            return Err("a center other than 0 is not supported yet".into());
        }
        FioDistribution::Normal { .. } => {
            return Err("normal is not supported yet (zipf, pareto and zoned are)".into());
        }
        FioDistribution::Zoned(_) => {
            return Err("zoned with more than two zones is not supported yet".into());
        }
        FioDistribution::ZonedAbs(_) => {
            return Err("zoned_abs is not supported yet (zoned is)".into());
        }
    };
    dist.validate()?;
    Ok(dist)
}

/// `/dev/null` and `/dev/zero` take any I/O anywhere, as fio uses them, but reads of
/// `/dev/null` find nothing (end of file) and neither takes O_DIRECT.
fn endless_files(job: &FioJob) -> Result<(), String> {
    for p in job.files_of(0) {
        let Some(kind) = super::layout::endless_device(&p) else {
            continue;
        };
        if job.direct {
            return Err(format!(
                "{} takes no O_DIRECT (fio's open fails too); remove direct=1",
                p.display()
            ));
        }
        if kind == "null" && job.rw.reads() {
            return Err(format!(
                "reads of {} find nothing (end of file); read /dev/zero instead",
                p.display()
            ));
        }
    }
    Ok(())
}

fn existing_len(p: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    let m = std::fs::metadata(p).ok()?;
    if m.is_file() {
        return Some(m.len());
    }
    if m.file_type().is_block_device() {
        use std::io::{Seek, SeekFrom};
        return std::fs::File::open(p)
            .ok()
            .and_then(|mut f| f.seek(SeekFrom::End(0)).ok());
    }
    None
}
