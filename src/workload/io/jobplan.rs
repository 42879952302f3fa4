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
//!   flight per copy, whatever `iodepth` says, as in fio); libaio is Linux's native AIO
//!   and io_uring is io_uring, at `iodepth` (buffered libaio is the sync engine: Linux
//!   runs it inside io_submit, one at a time);
//! - `direct` (default 0: buffered), `invalidate` (default 1: each copy starts with its
//!   files out of the page cache), `fsync`, `fdatasync`, `rwmixread`, `bs=READ,WRITE`,
//!   `bssplit`, `bsrange` ([`super::bsrange`]), every `random_distribution` but `sequence`;
//! - where each I/O goes by fio's rules ([`super::walk`]: `rw=X:N`, `rw_sequencer`,
//!   `percentage_random`), in each copy's region ([`super::regions`]: `offset`,
//!   `offset_increment`, `size` and `offset` in percent of an existing file or device).
//! - what the writes carry, `sync`, `end_fsync` ([`super::writes`]) and `flow`
//!   ([`super::flow`]), which need the whole file (the copies' numbers, the flows' groups):
//!   `writes_and_flows`.
//!
//! What perflab cannot do yet is refused by name rather than run differently.

use super::IoSpec;
use super::bsrange;
use super::fio::job::{
    FioDistribution, FioEngine, FioJob, FioRw, RateProcess, RwModifier, Sequencer,
};
use super::fio::{JobFile, Origin};
use super::jobcontrol::{Control, check_jobs, control_of, steps_of};
use super::joblog::LogPlan;
use super::jobminrate::MinRate;
use super::jobrun::{Job, JobRun};
use super::jobverify::{self, JobVerify};
use super::layout::Layout;
use super::pattern::Rw;
use super::randommap::MapRule;
use super::regions;
use super::walk::WalkRules;
use super::writes::WriteSide;
use crate::engine::{EngineKind, probe_uring};
use crate::vocab::Sweep;
use crate::workload::Arrival;
use crate::workload::distribution::{BlockPicker, Distribution, Zone};
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
    /// Each copy's region start.
    starts: Vec<u64>,
    walk: WalkRules,
    pass_limit: Option<u32>,
    /// A job whose engine makes no file (fio's null): its files, on no layout of the run's.
    diskless: Option<Vec<PathBuf>>,
    control: Control,
    verify: Option<JobVerify>,
    no_latency: Option<&'static str>,
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
    check_jobs(&file.jobs).map_err(|(i, o, w)| refuse(&file.jobs[i], o, &w))?;
    let on_disk = || shaped.iter().filter(|s| s.diskless.is_none());
    // The files perflab makes are as long as their furthest region reaches (fio extends
    // each to its job's offset and size); an existing one is as long as it is.
    let mut reach = vec![0u64; files.paths.len()];
    for s in on_disk() {
        for (copy, fs) in s.files.iter().enumerate() {
            let end = s.starts.get(copy).copied().unwrap_or(0) + s.region;
            for &i in fs {
                reach[i] = reach[i].max(end);
            }
        }
    }
    let size = reach.iter().copied().max().unwrap_or(0);
    let file_lens: Vec<u64> = files
        .paths
        .iter()
        .zip(&reach)
        .map(|(p, &r)| existing_len(p).unwrap_or(r))
        .collect();
    // Only the files a writing job uses need permission to be written.
    let mut writes = vec![false; files.paths.len()];
    for s in on_disk().filter(|s| s.rw.writes()) {
        for &i in s.files.iter().flatten() {
            writes[i] = true;
        }
    }
    let verify_block = verify_block(&shaped)?;
    if let Some(block) = verify_block {
        let blocks = (size / block).saturating_mul(files.paths.len() as u64);
        if blocks > jobverify::MAX_BLOCKS {
            return Err(format!(
                "verify keeps 4 bytes per block: {blocks} blocks of {block} bytes is too many; lower size or raise bs"
            ));
        }
    }
    let layout =
        Arc::new(Layout::named(&files.paths, size, 0, &writes, opts.destroy).map_err(|e| e.0)?);
    let base = IoSpec {
        rw: Sweep::list("rw", shaped.iter().map(|s| s.rw).collect()),
        // The unit of the verify tables and of the files' verify fill, when jobs verify.
        bs_bytes: Sweep::single("bs_bytes", verify_block.unwrap_or(4096)),
        bssplit: Vec::new(),
        rwmix: Sweep::single("rwmix", 50),
        iodepth: Sweep::single("iodepth", 1),
        files: Sweep::single("files", files.paths.len() as u64),
        volume: None,
        size_bytes: size,
        region_bytes: Sweep::single("size_bytes", size),
        offset_bytes: 0,
        direct: false,
        // A job's own `invalidate` (JobPart) drops its files' pages.
        cold: false,
        fsync: 0,
        fdatasync: 0,
        distribution: Distribution::Uniform,
        engine: EngineKind::Sync,
        engine_note: None,
        prefill: false,
        verify: verify_block.is_some(),
        verify_seed: opts.seed,
        keep: opts.keep,
        steady_state: None,
        straggler_fraction: 0.5,
        layout: Arc::clone(&layout),
    };
    let mut jobs: Vec<Job> = shaped
        .into_iter()
        .zip(&steps)
        .map(|(s, &step)| job_of(s, step, &base, &file_lens))
        .collect();
    writes_and_flows(file, &mut jobs)?;
    logs_of(file, &mut jobs)?;
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
    let verifies = jobs
        .iter()
        .filter_map(|j| Some((j.name.as_str(), j.verify.as_ref()?)));
    let notes = notes_of(file)
        .into_iter()
        .chain(logs_note(&jobs))
        .chain(jobverify::notes(verifies))
        .chain(no_latency_note(&jobs))
        .chain(zoned_map_note(file))
        .collect();
    Ok(JobRun {
        job_files: names.to_vec(),
        group: Sweep::list("group", labels),
        jobs,
        global_options: file.global_options.clone(),
        notes,
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
    // A diskless job's files (fio's null) are names on a layout of their own, never made.
    let mut own = Files::default();
    let diskless = super::jobengine::diskless(job);
    let indexed = if diskless { &mut own } else { all };
    let files: Vec<Vec<usize>> = (0..copies)
        .map(|copy| {
            job.files_of(copy)
                .into_iter()
                .map(|p| indexed.index(p))
                .collect()
        })
        .collect();
    let nfiles = files.first().map_or(1, Vec::len).max(1) as u64;
    let (rw, read_pct) = rw_of(job).map_err(|w| refuse(job, "rw", &w))?;
    let (sizes, write_sizes) = super::jobengine::trim_sizes(job).unwrap_or_else(|| sizes_of(job));
    let smallest = sizes
        .iter()
        .chain(write_sizes.iter().flatten())
        .map(|s| s.0)
        .min()
        .unwrap_or(4096);
    // Each copy's start and its region's bytes in each file.
    let regions = regions::of(job, copies, smallest, &|p| existing_len(p))
        .map_err(|(o, w)| refuse(job, o, &w))?;
    let region = regions.len / smallest * smallest;
    if region == 0 {
        return Err(refuse(
            job,
            "size",
            "leaves no room for one block per file; raise size",
        ));
    }
    super::jobengine::one_block_per_file(job, region, &sizes)
        .map_err(|(o, w)| refuse(job, o, &w))?;
    let (engine, depth) = engine_of(job).map_err(|(o, w)| refuse(job, o, &w))?;
    let distribution =
        distribution_of(&job.distribution).map_err(|w| refuse(job, "random_distribution", &w))?;
    if let Distribution::ZonedAbs { .. } = distribution {
        // fio stops a job that draws a zone past its region: refuse it before the run.
        let largest = sizes
            .iter()
            .chain(write_sizes.iter().flatten())
            .map(|s| s.0)
            .max()
            .unwrap_or(smallest);
        let blocks = (region - largest.min(region)) / smallest + 1;
        BlockPicker::sized(&distribution, blocks, smallest, false)
            .map_err(|w| refuse(job, "random_distribution", &w))?;
    }
    let rate_iops =
        pace_of(job, &sizes, write_sizes.as_deref()).map_err(|(o, w)| refuse(job, o, &w))?;
    let control =
        control_of(job, &sizes, write_sizes.as_deref()).map_err(|(o, w)| refuse(job, o, &w))?;
    let no_latency = no_latency(job, rate_iops.is_some()).map_err(|(o, w)| refuse(job, o, &w))?;
    let walk = walk_of(job, nfiles);
    let verify = JobVerify::of(
        job,
        engine,
        &sizes,
        write_sizes.as_deref(),
        &regions.starts,
        &walk,
    )
    .map_err(|(o, w)| refuse(job, o, &w))?;
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
        starts: regions.starts,
        walk,
        // fio ends a job of fixed size without io_size when its files are done, after
        // `loops` passes, even short of its bytes (keep_running's `fio_files_done`).
        pass_limit: (!job.time_based && job.io_size.is_none()).then_some(job.loops.max(1)),
        diskless: diskless.then_some(own.paths),
        control,
        verify,
        no_latency,
    })
}

/// The one block size of the jobs that verify (their blocks share the files' tables), or
/// the refusal of a second size.
fn verify_block(shaped: &[Shaped]) -> Result<Option<u64>, String> {
    let mut first: Option<(&str, u64)> = None;
    for s in shaped {
        let Some(v) = &s.verify else { continue };
        match first {
            None => first = Some((&s.job.name, v.block)),
            Some((name, block)) if block != v.block => {
                return Err(refuse(
                    s.job,
                    "bs",
                    &format!(
                        "{} bytes, and {name} verifies {block}-byte blocks: perflab's verify keeps one block size for the run; give the jobs that verify one bs",
                        v.block
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(first.map(|(_, b)| b))
}

/// Whether `job` keeps no per-I/O latency, as fio's job keeps neither its total nor its
/// completion latency (`gtod_reduce=1`, or `disable_lat=1` with `disable_clat=1`): the option
/// that says so, or the refusal of what needs each I/O's time. `paced`: perflab's schedule
/// paces its I/Os, timing each from when it was due.
fn no_latency(job: &FioJob, paced: bool) -> Result<Option<&'static str>, (&'static str, String)> {
    if !(job.disable_lat && job.disable_clat) {
        return Ok(None);
    }
    let option = if job.gtod_reduce {
        "gtod_reduce"
    } else {
        "disable_clat"
    };
    if paced {
        return Err((
            option,
            "keeps no per-I/O latency, but the job's rate paces each I/O from when it was due, which perflab times; remove one of the two".into(),
        ));
    }
    if job.steadystate.is_some_and(|s| {
        matches!(
            s.criterion,
            super::fio::job::SsCriterion::Lat | super::fio::job::SsCriterion::LatSlope
        )
    }) {
        return Err((
            option,
            "keeps no per-I/O latency, which a steadystate on latency needs; use iops or bw, or remove it".into(),
        ));
    }
    Ok(Some(option))
}

/// fio's order of offsets for `job`, whose copies each drive `nfiles` files.
fn walk_of(job: &FioJob, nfiles: u64) -> WalkRules {
    let (skip, every) = match job.rw_modifier {
        Some(RwModifier::Skip(b)) => (b, 1),
        Some(RwModifier::NewOffsetEvery(n)) => (0, n.min(u64::from(u32::MAX)) as u32),
        None => (0, 1),
    };
    WalkRules {
        skip,
        every,
        identical: job.rw_sequencer == Sequencer::Identical,
        random_pct: job.percentage_random.map(|p| p.min(100)),
        rewind: job.time_based && nfiles == 1,
    }
}

/// A shaped job over the run's layout (`base`), with its own engine, O_DIRECT,
/// distribution and syncs.
fn job_of(s: Shaped, step: usize, base: &IoSpec, file_lens: &[u64]) -> Job {
    let job = s.job;
    // A diskless job's files are as long as its copies' regions reach; the others' as the
    // run's layout has them.
    let lens = s
        .files
        .iter()
        .enumerate()
        .map(|(copy, fs)| {
            fs.iter()
                .map(|&i| match s.diskless {
                    Some(_) => s.starts.get(copy).copied().unwrap_or(0) + s.region,
                    None => file_lens[i],
                })
                .collect()
        })
        .collect();
    let trims = super::jobengine::trims(job);
    let layout = match &s.diskless {
        Some(paths) => Arc::new(Layout::diskless(paths, s.region)),
        None => Arc::clone(&base.layout),
    };
    let spec = IoSpec {
        rw: Sweep::single("rw", s.rw),
        bs_bytes: Sweep::single(
            "bs_bytes",
            s.sizes.iter().map(|x| x.0).min().unwrap_or(4096),
        ),
        direct: job.direct,
        // fio counts writes towards fsync=N, never trims: a trim job never syncs.
        fsync: if trims { 0 } else { u64::from(job.fsync) },
        fdatasync: if trims { 0 } else { u64::from(job.fdatasync) },
        distribution: s.distribution,
        engine: s.engine,
        verify: s.verify.is_some(),
        layout,
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
        file_lens: lens,
        starts: s.starts,
        walk: s.walk,
        pass_limit: s.pass_limit,
        budget_bytes: s.budget,
        runtime: job.runtime,
        time_based: job.time_based,
        ramp_time: job.ramp_time,
        invalidate: job.invalidate && !job.direct,
        random_map: map_rule(job),
        min_rate: MinRate::of(job.rate_min, job.rate_iops_min, job.ratecycle),
        ioengine: job.ioengine.name(),
        engine: s.engine,
        trims,
        rate_iops: s.rate_iops,
        arrival: match job.rate_process {
            RateProcess::Linear => Arrival::Uniform,
            RateProcess::Poisson => Arrival::Poisson,
        },
        writes: WriteSide::default(),
        flow: None,
        logs: None,
        verify: s.verify,
        no_latency: s.no_latency,
        fio_disabled: [("lat", job.disable_lat), ("clat", job.disable_clat)]
            .into_iter()
            .filter_map(|(name, off)| off.then_some(name))
            .collect(),
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

/// How a job's random offsets keep fio's random map: none with `norandommap`; with
/// `random_generator=lfsr` fio keeps no map, its generator gives each block once a pass;
/// else the map, which shortens I/Os at used blocks.
fn map_rule(job: &FioJob) -> MapRule {
    if job.norandommap {
        MapRule::Off
    } else if job.random_generator == "lfsr" {
        MapRule::Once
    } else {
        MapRule::Shorten
    }
}

/// Zoned random jobs with fio's random map on: fio keeps the map but looks a zone's draw up
/// at the zone-relative block (io_u.c `__get_next_rand_offset_zoned`), which perflab does not
/// reproduce; it keeps no map for them, which is what `norandommap` asks.
fn zoned_map_note(file: &JobFile) -> Option<(&'static str, String)> {
    let zoned: Vec<&str> = file
        .jobs
        .iter()
        .filter(|j| j.rw.random() && map_rule(j) == MapRule::Shorten)
        .filter(|j| {
            matches!(
                j.distribution,
                FioDistribution::Zoned(_) | FioDistribution::ZonedAbs(_)
            )
        })
        .map(|j| j.name.as_str())
        .collect();
    (!zoned.is_empty()).then(|| {
        (
            "fio_zoned_map",
            format!(
                "{} draw(s) zoned offsets with fio's random map on; fio looks its map up at zone-relative blocks, which perflab does not copy: perflab keeps no map for them (as with norandommap), so I/O sizes are as drawn (fio's zoned I/Os are seldom shortened: 34.8 KB against 34.8 KB drawn in a 4k/64k test) and a block may repeat within a pass; add norandommap to run both tools alike",
                zoned.join(", ")
            ),
        )
    })
}

/// What perflab does not do yet, by option: `(option, why)`.
fn unsupported(job: &FioJob) -> Result<(), (&'static str, String)> {
    let not_yet = |o: &'static str, what: &str| Err((o, format!("{what} is not supported yet")));
    // Trims (falloc's only) and what the file-operation engines cannot run as fio does.
    super::jobengine::refusal(job)?;
    if let Some(ranges) = job.bsrange {
        if job.bssplit.is_some() {
            return Err((
                "bsrange",
                "with bssplit: fio draws from the split and rounds to the range's smallest; give one of the two".into(),
            ));
        }
        let n: u64 = ranges.iter().map(|&(lo, hi)| bsrange::count(lo, hi)).sum();
        if n > bsrange::MAX_SIZES as u64 {
            return Err((
                "bsrange",
                format!(
                    "draws {n} block sizes for reads and writes; perflab keeps at most {} (each with its figures): narrow the range or give bssplit",
                    bsrange::MAX_SIZES
                ),
            ));
        }
    }
    if job.filesize.is_some_and(|(lo, hi)| lo != hi) {
        return not_yet("filesize", "a range of file sizes");
    }
    let least = job.bsrange.map_or(job.bs, |r| [r[0].0, r[1].0]);
    if job
        .blockalign
        .is_some_and(|[r, w]| r != least[0] || w != least[1])
    {
        return not_yet("blockalign", "an alignment other than the block size");
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
    floors_of(job)?;
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

/// fio's own refusals of rates (init.c `fixup_options`): bytes and I/Os per second are
/// exclusive, and a floor may not exceed its rate.
fn floors_of(job: &FioJob) -> Result<(), (&'static str, String)> {
    let any = |v: &[Option<u64>; 2]| v.iter().any(Option::is_some);
    if any(&job.rate) && any(&job.rate_iops) || any(&job.rate_min) && any(&job.rate_iops_min) {
        return Err((
            "rate_iops",
            "rate and rate_iops (and rate_min and rate_iops_min) are mutually exclusive, in fio as here: keep one".into(),
        ));
    }
    for (d, name) in ["reads", "writes"].into_iter().enumerate() {
        let over = |rate: &[Option<u64>; 2], min: &[Option<u64>; 2]| matches!((rate[d], min[d]), (Some(r), Some(m)) if m > r);
        if over(&job.rate, &job.rate_min) || over(&job.rate_iops, &job.rate_iops_min) {
            return Err((
                "rate_min",
                format!(
                    "the minimum rate exceeds the rate for {name}, which fio refuses too: lower rate_min"
                ),
            ));
        }
    }
    Ok(())
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
        // falloc's punched holes: the pattern's writes, sent as trims (`Job::trims`).
        FioRw::Trim if super::jobengine::trims(job) => Rw::Write,
        FioRw::RandTrim if super::jobengine::trims(job) => Rw::RandWrite,
        FioRw::Trim | FioRw::RandTrim | FioRw::TrimWrite => {
            return Err("perflab trims only on ioengine=falloc".into());
        }
    };
    Ok((rw, u64::from(job.rwmixread.min(100))))
}

/// Reads' sizes, and writes' when they differ.
#[allow(clippy::type_complexity)]
fn sizes_of(job: &FioJob) -> (Vec<(u64, u32)>, Option<Vec<(u64, u32)>>) {
    let [r, w] = match (&job.bssplit, job.bsrange) {
        (Some(split), _) => [split[0].clone(), split[1].clone()],
        (None, Some([r, w])) => [bsrange::sizes(r.0, r.1), bsrange::sizes(w.0, w.1)],
        (None, None) => [vec![(job.bs[0], 1)], vec![(job.bs[1], 1)]],
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
        FioEngine::Libaio => Ok((EngineKind::Libaio, job.iodepth.max(1))),
        FioEngine::IoUring => match probe_uring() {
            Ok(()) => Ok((EngineKind::IoUring, job.iodepth.max(1))),
            Err(why) => Err((
                "ioengine",
                format!("io_uring is not available here ({why}); use ioengine=psync"),
            )),
        },
        // fio's null queues up to iodepth (and completes them all at once); the file
        // engines are synchronous, one at a time.
        FioEngine::Null => Ok((EngineKind::Null, job.iodepth.max(1))),
        FioEngine::Falloc => Ok((EngineKind::Falloc, 1)),
        FioEngine::Ftruncate => Ok((EngineKind::Ftruncate, 1)),
        FioEngine::FileStat => Ok((EngineKind::FileStat, 1)),
        FioEngine::FileDelete => Ok((EngineKind::FileDelete, 1)),
    }
}

/// fio's distribution as perflab's: the same draws (see [`Distribution`]).
fn distribution_of(d: &FioDistribution) -> Result<Distribution, String> {
    let zones = |z: &[(f64, u64)]| {
        z.iter()
            .map(|&(access, size)| Zone {
                access: access as u32,
                size,
            })
            .collect::<Vec<_>>()
    };
    let (base, center) = match d {
        FioDistribution::Random => (Distribution::Uniform, None),
        FioDistribution::Zipf { theta, center } => (Distribution::Zipf { theta: *theta }, *center),
        FioDistribution::Pareto { h, center } => (Distribution::Pareto { h: *h }, *center),
        FioDistribution::Normal { dev, center } => (Distribution::Normal { dev: *dev }, *center),
        FioDistribution::Zoned(z) => {
            let z: Vec<(f64, u64)> = z.iter().map(|&(a, s)| (a, s as u64)).collect();
            (Distribution::Zoned { zones: zones(&z) }, None)
        }
        FioDistribution::ZonedAbs(z) => (Distribution::ZonedAbs { zones: zones(z) }, None),
    };
    let dist = match center {
        Some(center) => Distribution::Centered {
            base: Box::new(base),
            center,
        },
        None => base,
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

/// What the run says of jobs that keep no per-I/O latency.
fn no_latency_note(jobs: &[Job]) -> Option<(&'static str, String)> {
    let untimed: Vec<String> = jobs
        .iter()
        .filter_map(|j| Some(format!("{} ({})", j.name, j.no_latency?)))
        .collect();
    if untimed.is_empty() {
        return None;
    }
    Some((
        "no_latency",
        format!(
            "{} keep(s) no per-I/O latency, as in fio: their I/Os are counted, not timed one by one, so their figures carry no latency (- in the tables, count 0 in the record, N 0 in fio's JSON); a step's latency covers its other jobs only, and its intervals count what they timed (latency_count; p50 and p99 are 0 where it is 0)",
            untimed.join(", ")
        ),
    ))
}

/// Where the jobs' fio logs go: files perflab writes because the job file asks, where it
/// asks (over a file of the same name, as fio).
fn logs_note(jobs: &[Job]) -> Option<(&'static str, String)> {
    let files: Vec<String> = jobs
        .iter()
        .filter_map(|j| Some(j.logs.as_ref()?.files(j.copies)))
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    let (first, rest) = files.split_first()?;
    let more = match rest.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some((
        "fio_logs",
        format!(
            "the job file's write_*_log lines write fio's logs, as fio names and formats them: {first}{more} (a file of the same name is replaced, or appended to with per_job_logs=0, as fio does)"
        ),
    ))
}

/// Each job's fio logs ([`LogPlan`]), which need the copies' numbers among all of the
/// file's (fio's thread numbers, from 1, name per-job logs).
fn logs_of(file: &JobFile, jobs: &mut [Job]) -> Result<(), String> {
    let mut first_copy = 0;
    for (fio, job) in file.jobs.iter().zip(jobs.iter_mut()) {
        job.logs =
            LogPlan::of(fio, job.engine, first_copy + 1).map_err(|(o, w)| refuse(fio, o, &w))?;
        first_copy += job.copies;
    }
    Ok(())
}

/// Each job's write side ([`WriteSide`]: contents, `sync`, end syncs) and flow, which need
/// the whole file: the copies' numbers among all of the file's (fio's thread numbers), and
/// the flows' groups.
fn writes_and_flows(file: &JobFile, jobs: &mut [Job]) -> Result<(), String> {
    if let Some(r) = super::flow::refusal(&file.jobs) {
        return Err(r.to_string());
    }
    let all_copies: u32 = jobs.iter().map(|j| j.copies).sum();
    let mut first_copy = 0;
    for (fio, job) in file.jobs.iter().zip(jobs.iter_mut()) {
        let min_write = job
            .write_sizes
            .as_ref()
            .unwrap_or(&job.sizes)
            .iter()
            .map(|s| s.0)
            .min()
            .unwrap_or(4096);
        // A pass: what one of fio's loops moves (the budget is all of them).
        let pass = job.budget_bytes.map(|b| b / u64::from(fio.loops.max(1)));
        job.writes = WriteSide::of(fio, min_write, pass, first_copy, all_copies)
            .map_err(|(o, w)| refuse(fio, o, &w))?;
        job.flow = super::flow::FlowSpec::of(fio);
        first_copy += job.copies;
    }
    Ok(())
}
