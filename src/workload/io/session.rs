//! One worker's I/O: a queue per file over one engine, every I/O timed from submission to
//! completion.
//!
//! Each call of [`IoSession::pump`] tops up the queues as far as the pump admits, handing
//! each I/O to the kernel as soon as it is queued (one `io_uring_enter` each, as fio does by
//! default), then waits for a completion if none has arrived yet and reports every
//! completion it has. An I/O's time runs from the clock read just before its submission to
//! the clock read just after its completion was reaped: fio's submission-to-completion time.
//! The sync engine issues one I/O per call, timed around the `pread`/`pwrite` itself.
//!
//! With `--verify`, each worker owns its part of each file outright (no two workers and no
//! two I/Os in flight touch the same block), so the generation it expects in every block is
//! known exactly. Blocks whose content this run does not know (kept files, devices without
//! `--prefill`) are checked only if they carry a verify header, for everything but their
//! generation. After each step that wrote, the blocks written in it are read back.

use super::IoSpec;
use super::end_sync::{EndSync, Next};
use super::fill::Filler;
use super::flow::{Flow, FlowSpec, Gate};
use super::jobcontrol::{CopyControl, StepControl};
use super::joblog::{CopyLogs, Done, LogPlan};
use super::jobminrate::{MinRate, MinRateCheck};
use super::layout::FileSpec;
use super::pattern::{Io, Pattern};
use super::verify::{self, BlockId};
use super::writes::WriteSide;
use crate::engine::{self, Completion, Engine, EngineConfig, EngineKind, Op, Reach, Request, sys};
use crate::record::ErrorKind;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use crate::vocab::StepPoint;
use crate::workload::distribution::Distribution;
use crate::workload::rng::Rng;
use crate::workload::{
    Failure, Figures, GroupTotals, OpError, OpOutcome, Pump, QueuedSession, Session, SessionFactory,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Marks a block with an I/O in flight in a verify generation table.
const IN_FLIGHT: u32 = 1 << 31;
/// Tries to find a block with nothing in flight before issuing the I/O elsewhere.
const VERIFY_PICKS: usize = 16;

/// Everything a worker needs to open its session for one step.
pub(super) struct StepPlan {
    pub spec: Arc<IoSpec>,
    files: usize,
    depth: u32,
    sizes: Vec<(u64, u32)>,
    rw: super::pattern::Rw,
    read_pct: u64,
    /// Bytes of each file this step's I/O keeps to.
    region: u64,
    /// `--each-volume`: the one file of a volume measured alone (None: the first `files`).
    only: Option<usize>,
    seed: u64,
    /// A job file's job, when the session runs one of its copies.
    pub job: Option<JobPart>,
}

impl StepPlan {
    /// A job file's job: its copies each drive their own files whole.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn for_job(
        spec: Arc<IoSpec>,
        rw: super::pattern::Rw,
        read_pct: u64,
        sizes: Vec<(u64, u32)>,
        depth: u32,
        region: u64,
        seed: u64,
        job: JobPart,
    ) -> StepPlan {
        StepPlan {
            files: job.files.iter().map(Vec::len).max().unwrap_or(0),
            region: region.min(spec.layout.size),
            spec,
            depth: depth.max(1),
            sizes,
            rw,
            read_pct,
            only: None,
            seed,
            job: Some(job),
        }
    }
}

/// Opens copy `copy` of a job's plan.
pub(super) fn open_job(plan: &StepPlan, copy: usize) -> Result<IoSession, OpError> {
    let copies = plan.job.as_ref().map_or(1, |j| j.files.len());
    IoSession::open(plan, copy, copies)
}

/// What a job file's job adds to a session: its name (its groups carry it), its writes'
/// own block sizes, and when a copy of it has done its part.
#[derive(Debug, Clone)]
pub(super) struct JobPart {
    pub name: String,
    /// fio's `rate_min` / `rate_iops_min`: each copy ends in error below them.
    pub min_rate: Option<MinRate>,
    /// Each copy reports on its own as well (`numjobs` above 1 without `group_reporting`,
    /// where fio prints a section per copy).
    pub per_copy: bool,
    /// Writes' block sizes when they differ from reads' (fio's `bs=4k,64k`).
    pub write_sizes: Option<Vec<(u64, u32)>>,
    /// Bytes each copy moves before it is done (fio's `size`/`io_size` times `loops`).
    pub budget: Option<u64>,
    /// How long each copy runs before it is done (fio's `runtime`).
    pub runtime: Option<std::time::Duration>,
    /// fio's `ramp_time` counted from each copy's own start, where the step's shared warmup
    /// does not cover it (a delayed start, or a longer ramp than another job's at once):
    /// the copy's I/O in it runs and is thrown away, as fio resets a job's figures at the
    /// end of its own ramp.
    pub own_ramp: Option<std::time::Duration>,
    /// The layout's files each copy drives, whole (`[copy]`).
    pub files: Vec<Vec<usize>>,
    /// Drop the files' pages from the page cache as the copy opens them and after every
    /// pass over them (fio's `invalidate`, buffered: fio opens the files again for each
    /// pass, which drops them).
    pub invalidate: bool,
    /// fio's random map: a uniform random job touches each block once per pass.
    pub random_map: super::randommap::MapRule,
    /// Where each copy's region starts in its files (`[copy]`).
    pub starts: Vec<u64>,
    /// fio's order of offsets.
    pub walk: super::walk::WalkRules,
    /// The copy is done after this many passes over its files (fio's `loops`, for a job of
    /// fixed size without `io_size`).
    pub pass_limit: Option<u32>,
    /// Each copy's files' lengths as fio sees them (`[copy][file]`).
    pub file_lens: Vec<Vec<u64>>,
    /// The pattern's writes are trims (fio's rw=trim or randtrim), counted as their own
    /// direction.
    pub trims: bool,
    /// What its writes carry, how its files are opened, its end-of-pass syncs.
    pub writes: WriteSide,
    /// The step's seed, the same for every job, from which copies regenerate each other's
    /// buffers (`dedupe_global`).
    pub step_seed: u64,
    /// The job's flow, shared with the step's other jobs of its `flow_id`.
    pub flow: Option<(Arc<Flow>, FlowSpec)>,
    /// When its copies start, pause and end (the step's shared control, and the job's
    /// index in it).
    pub control: Option<(Arc<StepControl>, usize)>,
    /// The fio logs each copy writes.
    pub logs: Option<LogPlan>,
    /// With verify: what a copy wrote is read back once its I/O is done (fio's `do_verify`).
    pub read_back: bool,
    /// With verify: a copy ends at its first bad block (fio's `verify_fatal`).
    pub verify_fatal: bool,
    /// Its I/Os' latency is kept (not fio's `gtod_reduce`, or `disable_lat` with
    /// `disable_clat`).
    pub latency: bool,
}

impl JobPart {
    /// The job's share of its flow, if it has one.
    fn gate(&self) -> Option<Gate> {
        self.flow
            .as_ref()
            .map(|(flow, spec)| Gate::new(Arc::clone(flow), spec))
    }

    /// Whether its logs time each submission apart from its completion.
    fn splits(&self) -> bool {
        self.logs.as_ref().is_some_and(LogPlan::splits)
    }

    /// Whether each I/O needs the clock: for its latency, or for a log of every I/O's time.
    fn clocks_each_io(&self) -> bool {
        self.latency || self.logs.as_ref().is_some_and(LogPlan::needs_each_time)
    }

    /// What the pattern's writes are to the engine: trims for a trim job.
    fn write_op(&self) -> Op {
        if self.trims { Op::Trim } else { Op::Write }
    }

    /// Copy `worker`'s pattern over its `i`-th file by fio's rules (random map, order of
    /// offsets), and the file to drop from the page cache after each pass, if any.
    fn stream(
        &self,
        plan: &StepPlan,
        (worker, i): (usize, usize),
        file: Option<&std::fs::File>,
        mut pattern: Pattern,
    ) -> (Pattern, Option<std::fs::File>) {
        if matches!(plan.spec.distribution, Distribution::Uniform) {
            pattern = pattern.with_random_map(self.random_map);
        }
        let file_len = self.file_lens.get(worker).and_then(|l| l.get(i)).copied();
        pattern = pattern.with_walk(
            self.walk,
            // A job on the null engine opens no file: its region is all there is.
            file_len.unwrap_or_else(|| file.map_or(plan.region, super::walk::file_len)),
        );
        let mut cache = None;
        if let (true, Some(file)) = (self.invalidate, file) {
            let _ = sys::advise_dontneed(file);
            cache = file.try_clone().ok();
        }
        (pattern, cache)
    }
}

pub fn factory(spec: &IoSpec, point: &StepPoint, seed: u64) -> Result<SessionFactory, OpError> {
    let files = spec.files.at(point) as usize;
    let plan = Arc::new(StepPlan {
        spec: Arc::new(spec.clone()),
        files,
        depth: spec.iodepth.at(point).max(1) as u32,
        sizes: spec.sizes_at(point),
        rw: spec.rw.at(point),
        read_pct: spec.rwmix.at(point),
        region: spec.region_bytes.at(point).min(spec.layout.size),
        // File k is on path k (files go to the paths in turn), and the volume sweep lists
        // the paths first, in order.
        only: spec.volume.as_ref().and_then(|v| {
            let at = v.at(point);
            v.values()
                .iter()
                .position(|p| *p == at)
                .filter(|_| at != "all")
        }),
        seed,
        job: None,
    });
    Ok(Arc::new(move |worker, workers| {
        IoSession::open(&plan, worker, workers).map(|s| Box::new(s) as Box<dyn Session>)
    }))
}

/// The part of one file one worker drives.
struct Stream {
    /// The file, as the layout lists it.
    file: FileSpec,
    pattern: Pattern,
    depth: u32,
    in_flight: u32,
    writes: u64,
    sync_due: bool,
    /// Verify: the generation table of the file, and this worker's blocks in it.
    generations: Option<Arc<[AtomicU32]>>,
    /// Verify: the blocks this worker wrote in this step (one bit each, by block index in
    /// the file), which the verify pass reads back.
    written: Vec<u64>,
    /// A job's file whose pages are dropped after each pass (fio's `invalidate`).
    cache: Option<std::fs::File>,
    /// A job's file that has made its last pass.
    spent: bool,
}

#[derive(Clone, Copy)]
enum SlotOp {
    Io(Io),
    Sync,
    /// fio's `end_fsync`: an fsync at the end of a pass, timed in the job's running time
    /// but not counted among its syncs.
    EndSync,
}

#[derive(Clone, Copy)]
struct Slot {
    stream: u32,
    op: SlotOp,
    intended: Instant,
    start: Instant,
    /// When its submission returned, for logs that time it apart (else `start`).
    issued: Instant,
    /// Verify: the encoded generation (generation + 1) the block held, or will hold after
    /// this write.
    generation: u32,
}

impl Slot {
    /// A slot with nothing in it yet.
    fn idle(now: Instant) -> Slot {
        Slot {
            stream: 0,
            op: SlotOp::Sync,
            intended: now,
            start: now,
            issued: now,
            generation: 0,
        }
    }
}

/// Counts and latencies of one group.
struct Group {
    ops: u64,
    bytes: u64,
    errors: u64,
    latency: LatencyHistogram,
}

impl Group {
    fn new() -> Self {
        Group {
            ops: 0,
            bytes: 0,
            errors: 0,
            latency: new_histogram(),
        }
    }

    #[inline]
    fn add(&mut self, ns: Option<u64>, bytes: u64, ok: bool) {
        if ok {
            self.ops += 1;
            self.bytes += bytes;
            if let Some(ns) = ns {
                self.latency.saturating_record(ns);
            }
        } else {
            self.errors += 1;
        }
    }
}

/// One worker's queues.
pub struct IoSession {
    engine: Box<dyn Engine>,
    streams: Vec<Stream>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    pending: Vec<u32>,
    completions: Vec<Completion>,
    in_flight: usize,
    /// Where the next top-up starts, so no queue is always served last.
    next_stream: usize,
    one_at_a_time: bool,
    /// Per-file figures: the step has several files, or measures one volume alone.
    per_file: bool,
    rng: Rng,
    sizes: Vec<u64>,
    fsync_every: u64,
    sync_op: Op,
    verify_seed: Option<u64>,
    block: u64,
    wrote: bool,
    verified: u64,
    /// A job's read-back after its writes (`verify`): fio counts these among the job's
    /// reads; perflab keeps them apart from the step's measured ops (they come after it).
    verify_reads: Group,
    read: Group,
    write: Group,
    sync: Group,
    /// A job that trims: its pattern's writes go to the engine as [`Op::Trim`] and count
    /// here.
    trim: Group,
    write_op: Op,
    by_size: Vec<Group>,
    by_file: Vec<Group>,
    /// A job file's job: its name and what is left of its part.
    job: Option<JobState>,
    /// A job's write contents other than perflab's own ([`super::fill`]).
    filler: Option<Filler>,
    /// A job's share of its flow ([`super::flow`]).
    gate: Option<Gate>,
    /// A job's fio logs time each submission apart from its completion ([`super::joblog`]).
    split: bool,
    /// Verify: read back what was written once the I/O is done (fio's `do_verify`).
    read_back: bool,
    /// Verify: the copy ends at its first bad block (fio's `verify_fatal`).
    fatal: bool,
    /// Verify: bad blocks read so far.
    bad_blocks: u64,
    /// A job's I/Os are timed one by one (not with fio's `gtod_reduce`, or `disable_lat`
    /// with `disable_clat`): their latency is recorded.
    latency: bool,
    /// How completions read the time.
    clock: Clock,
}

/// The time of completions: read for each round of them, or, for a copy that needs no
/// per-I/O time (fio's `gtod_reduce`), once every [`Clock::SHARED`] rounds, as fio reads its
/// clock once in 64 calls then (its `ts_cache_mask`). What it then stands for: which interval
/// of the run the completions count in, and the copy's end, read afresh when it ends.
struct Clock {
    each_io: bool,
    at: Instant,
    left: u32,
}

impl Clock {
    const SHARED: u32 = 64;

    fn new(each_io: bool) -> Clock {
        Clock {
            each_io,
            at: Instant::now(),
            left: 0,
        }
    }

    #[inline]
    fn now(&mut self) -> Instant {
        if self.each_io {
            return Instant::now();
        }
        if self.left == 0 {
            self.at = Instant::now();
            self.left = Self::SHARED;
        }
        self.left -= 1;
        self.at
    }
}

/// Where a job's copy stands.
struct JobState {
    name: String,
    /// `NAME.COPY` where the copy reports on its own too ([`JobPart::per_copy`]).
    copy_key: Option<String>,
    /// Bytes still to issue, for a job of a fixed size.
    budget_left: Option<u64>,
    runtime: Option<std::time::Duration>,
    /// Passes over its files after which the copy is done.
    pass_limit: Option<u32>,
    /// The first I/O's submission and the last completion: the copy's own running time.
    first: Option<Instant>,
    last: Option<Instant>,
    /// Its own ramp ([`JobPart::own_ramp`]), the submission of its very first I/O (ramp or
    /// not), and whether the ramp is over.
    own_ramp: Option<std::time::Duration>,
    began: Option<Instant>,
    ramped: bool,
    /// fio's `end_fsync`: the syncs after each pass.
    end_sync: Option<EndSync>,
    /// When it starts, pauses and ends, beyond its size and runtime.
    control: Option<CopyControl>,
    /// Its fio logs.
    logs: Option<CopyLogs>,
    /// Its floors (`rate_min`, `rate_iops_min`).
    min_rate: Option<MinRateCheck>,
}

impl JobState {
    /// Copy `copy` of job `j`, before its first I/O.
    fn new(j: &JobPart, copy: usize, seed: u64) -> JobState {
        JobState {
            name: j.name.clone(),
            copy_key: j.per_copy.then(|| format!("{}.{copy}", j.name)),
            budget_left: j.budget,
            runtime: j.runtime,
            pass_limit: j.pass_limit,
            first: None,
            last: None,
            own_ramp: j.own_ramp,
            began: None,
            ramped: j.own_ramp.is_none(),
            end_sync: j.writes.end_fsync_every.map(EndSync::new),
            control: j
                .control
                .as_ref()
                .map(|(step, k)| step.copy(*k, copy, seed)),
            logs: j.logs.as_ref().map(|p| CopyLogs::new(p, copy as u32)),
            min_rate: j.min_rate.map(MinRateCheck::new),
        }
    }

    /// Whether the copy has issued all it will.
    fn done(&self) -> bool {
        self.budget_left == Some(0)
            || matches!((self.first, self.runtime), (Some(t), Some(r)) if t.elapsed() >= r)
    }

    /// Whether its own ramp is over (`now`: read only while it may not be).
    fn ramp_over(&mut self, now: impl FnOnce() -> Instant) -> bool {
        if !self.ramped
            && let (Some(ramp), Some(began)) = (self.own_ramp, self.began)
            && now() >= began + ramp
        {
            self.ramped = true;
        }
        self.ramped
    }

    /// Whether it has done so and its end-of-pass syncs have completed too.
    fn finished(&self) -> bool {
        self.done() && self.end_sync.as_ref().is_none_or(EndSync::complete)
    }
}

impl IoSession {
    /// Opens worker `worker` of `workers`; for a job, `worker` is the copy.
    pub(super) fn open(plan: &StepPlan, worker: usize, workers: usize) -> Result<Self, OpError> {
        let spec = &plan.spec;
        let layout = &spec.layout;
        let verify = spec.verify;
        let sequential = !plan.rw.random();
        let write_sizes = plan.job.as_ref().and_then(|j| j.write_sizes.as_deref());
        let max_bs = plan
            .sizes
            .iter()
            .chain(write_sizes.unwrap_or_default())
            .map(|s| s.0)
            .max()
            .unwrap_or(4096);
        let mut streams = Vec::new();
        let mut files = Vec::new();
        let mut paths = Vec::new();
        // A job's copy drives its own files whole, as fio's jobs do; a plain step shares
        // its first `files` out among its workers.
        let own = plan.job.as_ref().map(|j| &j.files[worker]);
        let chosen: Vec<&FileSpec> = match (own, plan.only) {
            (Some(own), _) => own.iter().filter_map(|&i| layout.files.get(i)).collect(),
            (None, Some(k)) => layout.files.iter().skip(k).take(1).collect(),
            (None, None) => layout.files.iter().take(plan.files).collect(),
        };
        let n_chosen = chosen.len();
        for (i, f) in chosen.into_iter().enumerate() {
            let (mine, sharers, rank) = match own {
                Some(_) => (true, 1, 0),
                None => share(i, plan.files, worker, workers),
            };
            if !mine {
                continue;
            }
            // Sequential streams and verifying workers split a shared file; random readers
            // and writers roam all of it, as fio's jobs do.
            let (start, len) = if let Some(job) = &plan.job {
                (
                    f.start + job.starts.get(worker).copied().unwrap_or(0),
                    plan.region,
                )
            } else if sharers > 1 && (sequential || verify) {
                let part = plan.region / sharers as u64 / max_bs * max_bs;
                (f.start + rank as u64 * part, part)
            } else {
                (f.start, plan.region)
            };
            let mut pattern = Pattern::split(
                plan.rw,
                plan.read_pct,
                &plan.sizes,
                write_sizes,
                start,
                len,
                &spec.distribution,
            )
            .map_err(|e| OpError::other(format!("{}: {e}; raise --size", f.path.display())))?;
            let open_sync = plan.job.as_ref().map(|j| j.writes.open_sync);
            let flags = (spec.direct, open_sync.unwrap_or_default());
            let file = open_for(spec.engine, &f.path, flags, plan.rw.writes())?;
            let mut cache = None;
            if let Some(job) = &plan.job {
                (pattern, cache) = job.stream(plan, (worker, i), file.as_ref(), pattern);
            } else if spec.cold
                && let Some(file) = &file
            {
                // `--cold`: out of the page cache now and after every pass (next_io).
                let _ = sys::advise_dontneed(file);
                cache = file.try_clone().ok();
            }
            files.extend(file);
            paths.push(f.path.clone());
            streams.push(Stream {
                file: f.clone(),
                pattern,
                depth: plan.depth,
                in_flight: 0,
                writes: 0,
                sync_due: false,
                // A job that does not verify leaves the tables to those that do.
                generations: layout.generations(f.index).filter(|_| verify).cloned(),
                cache,
                spent: false,
                written: if verify {
                    vec![0; (layout.size / spec.bs_bytes.first().max(512)).div_ceil(64) as usize]
                } else {
                    Vec::new()
                },
            });
        }
        let total_depth: u32 = streams.iter().map(|s| s.depth).sum::<u32>().max(1);
        let mut engine = engine::open(
            spec.engine,
            EngineConfig {
                depth: total_depth,
                buf_len: max_bs as usize,
                align: 4096,
                files,
                paths,
            },
        )
        .map_err(|e| OpError::other(e.to_string()))?;
        let mut rng = Rng::new(plan.seed ^ (worker as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let filler = fill_slots(engine.as_mut(), plan, worker, total_depth, &mut rng);
        let now = Instant::now();
        let n_files = streams.len();
        let sizes: Vec<u64> = plan
            .sizes
            .iter()
            .chain(write_sizes.unwrap_or_default())
            .map(|s| s.0)
            .collect();
        Ok(IoSession {
            one_at_a_time: engine.kind().one_at_a_time(),
            // A volume measured alone names its file, as the ramp's steps do.
            per_file: n_chosen > 1 || plan.only.is_some(),
            job: plan
                .job
                .as_ref()
                .map(|j| JobState::new(j, worker, plan.seed)),
            filler,
            gate: plan.job.as_ref().and_then(JobPart::gate),
            split: plan.job.as_ref().is_some_and(JobPart::splits),
            read_back: plan.job.as_ref().is_none_or(|j| j.read_back),
            fatal: plan.job.as_ref().is_some_and(|j| j.verify_fatal),
            bad_blocks: 0,
            latency: plan.job.as_ref().is_none_or(|j| j.latency),
            clock: Clock::new(plan.job.as_ref().is_none_or(JobPart::clocks_each_io)),
            engine,
            slots: vec![Slot::idle(now); total_depth as usize],
            free: (0..total_depth).rev().collect(),
            pending: Vec::with_capacity(total_depth as usize),
            completions: Vec::with_capacity(total_depth as usize),
            in_flight: 0,
            next_stream: 0,
            rng,
            by_size: sizes.iter().map(|_| Group::new()).collect(),
            sizes,
            fsync_every: spec.fsync.max(spec.fdatasync),
            sync_op: if spec.fsync > 0 {
                Op::Fsync
            } else {
                Op::Fdatasync
            },
            verify_seed: verify.then_some(spec.verify_seed),
            block: spec.bs_bytes.first().max(512),
            wrote: false,
            verified: 0,
            verify_reads: Group::new(),
            read: Group::new(),
            write: Group::new(),
            sync: Group::new(),
            trim: Group::new(),
            write_op: plan.job.as_ref().map_or(Op::Write, JobPart::write_op),
            by_file: (0..n_files).map(|_| Group::new()).collect(),
            streams,
        })
    }

    /// Picks the next I/O of stream `s`; with verify, one whose block has nothing in flight
    /// (marked in flight now), with the encoded generation the block holds or will hold.
    fn next_io(&mut self, s: usize) -> Option<(Io, u32)> {
        let stream = &mut self.streams[s];
        let Some(gens) = &stream.generations else {
            let io = stream.pattern.next(&mut self.rng);
            if let Some(file) = &stream.cache
                && stream.pattern.take_wrapped()
            {
                let _ = sys::advise_dontneed(file);
            }
            return Some((io, 0));
        };
        for _ in 0..VERIFY_PICKS {
            let io = stream.pattern.next(&mut self.rng);
            let idx = ((io.offset - stream.file.start) / self.block) as usize;
            let Some(g) = gens.get(idx) else { continue };
            let v = g.load(Ordering::Relaxed);
            if v & IN_FLIGHT != 0 {
                continue;
            }
            g.store(v | IN_FLIGHT, Ordering::Relaxed);
            // Encoded generations: 0 unknown, 1 the prefill (generation 0), n generation n-1.
            // A first write over unknown content starts at generation 1, so a lost write
            // can never pass for an earlier run's prefill. Past 2^31 writes to one block the
            // generation stops growing (lost writes of that block go unseen from then on).
            let generation = match (io.write, v) {
                (false, v) => v,
                (true, 0) => 2,
                (true, v) => (v + 1).min(IN_FLIGHT - 1),
            };
            return Some((io, generation));
        }
        None
    }

    /// For a job that ends with its passes: whether file `s` has made its last (then
    /// nothing more is issued on it), marking the copy done once every file has.
    fn pass_spent(&mut self, s: usize) -> bool {
        let Some(limit) = self.job.as_ref().and_then(|j| j.pass_limit) else {
            return false;
        };
        let st = &mut self.streams[s];
        if !st.spent && st.pattern.pass_over() && st.pattern.passes() + 1 >= u64::from(limit) {
            st.spent = true;
            if self.streams.iter().all(|x| x.spent)
                && let Some(job) = &mut self.job
            {
                // Nothing left to issue: the copy is done, as fio's job whose files are.
                job.budget_left = Some(0);
            }
        }
        self.streams[s].spent
    }

    /// Gives back a verify pick that was not issued.
    fn unpick(&mut self, s: usize, io: &Io) {
        if let Some(gens) = &self.streams[s].generations {
            let idx = ((io.offset - self.streams[s].file.start) / self.block) as usize;
            if let Some(g) = gens.get(idx) {
                g.fetch_and(!IN_FLIGHT, Ordering::Relaxed);
            }
        }
    }

    /// Queues one I/O (or a due sync) on stream `s`; false if nothing could be queued.
    fn queue_one(&mut self, s: usize, pump: &mut dyn Pump) -> bool {
        if let Some(queued) = self.end_sync_step() {
            return queued;
        }
        if let Some(gate) = &mut self.gate
            && !gate.may_issue(self.in_flight)
        {
            return false;
        }
        if self.streams[s].sync_due && self.job.as_ref().is_some_and(JobState::done) {
            // fio issues a periodic sync before the next I/O, and a done job has none.
            self.streams[s].sync_due = false;
        }
        if self.streams[s].sync_due {
            // A sync covers the writes before it only once they have completed: io_uring
            // does not order requests. Nothing more is queued on this file meanwhile.
            if self.streams[s].in_flight > 0 {
                return false;
            }
            let Some(slot) = self.free.pop() else {
                return false;
            };
            self.streams[s].sync_due = false;
            self.push(s, slot, SlotOp::Sync, Instant::now(), 0);
            if let Some(gate) = &mut self.gate {
                gate.issued();
            }
            return true;
        }
        if self.free.is_empty()
            || self.job.as_ref().is_some_and(JobState::done)
            || self.pass_spent(s)
            || !self.control_admits(pump)
        {
            return false;
        }
        // Admission is asked last where picking can fail (verify), first where it cannot
        // (a sequential cursor must not skip), so an admitted I/O is always issued.
        let (mut io, generation, intended) = if self.verify_seed.is_some() {
            let Some((io, generation)) = self.next_io(s) else {
                return false;
            };
            let Some(intended) = pump.admit() else {
                self.unpick(s, &io);
                return false;
            };
            (io, generation, intended)
        } else {
            let Some(intended) = pump.admit() else {
                return false;
            };
            let Some((io, generation)) = self.next_io(s) else {
                return false;
            };
            (io, generation, intended)
        };
        let Some(slot) = self.free.pop() else {
            return false;
        };
        if let Some(job) = &mut self.job {
            job.began.get_or_insert_with(Instant::now);
        }
        let measuring = self.measuring(pump, Instant::now);
        if let Some(c) = self.job.as_mut().and_then(|j| j.control.as_mut()) {
            io.write = c.direction(io.write);
            c.issued(io.write, u64::from(io.len), measuring);
        }
        if let Some(job) = &mut self.job {
            if measuring {
                job.first.get_or_insert_with(Instant::now);
            }
            if let Some(left) = &mut job.budget_left {
                *left = left.saturating_sub(u64::from(io.len));
            }
            if let Some(e) = &mut job.end_sync {
                e.issued(u64::from(io.len));
            }
        }
        if let Some(gate) = &mut self.gate {
            gate.issued();
        }
        if io.write {
            self.wrote = true;
            if let Some(f) = &mut self.filler {
                f.before_write(
                    &mut self.engine.buf(slot)[..io.len as usize],
                    io.offset,
                    intended,
                );
            }
            if let Some(seed) = self.verify_seed {
                let id = BlockId {
                    file_id: self.streams[s].file.index as u32,
                    offset: io.offset,
                    generation: u64::from(generation - 1),
                    seed,
                };
                verify::fill(&mut self.engine.buf(slot)[..io.len as usize], id);
                let st = &mut self.streams[s];
                let idx = ((io.offset - st.file.start) / self.block) as usize;
                if let Some(w) = st.written.get_mut(idx / 64) {
                    *w |= 1 << (idx % 64);
                }
            }
            let st = &mut self.streams[s];
            st.writes += 1;
            if self.fsync_every > 0 && st.writes.is_multiple_of(self.fsync_every) {
                st.sync_due = true;
            }
        }
        self.push(s, slot, SlotOp::Io(io), intended, generation);
        true
    }

    /// fio's end-of-pass syncs: Some(whether one was queued) while a round is under way
    /// (nothing else is queued meanwhile), None to carry on with I/O.
    fn end_sync_step(&mut self) -> Option<bool> {
        let job = self.job.as_mut()?;
        let done = job.done();
        let end_sync = job.end_sync.as_mut()?;
        if done {
            end_sync.finish();
        }
        match end_sync.next(self.streams.len(), self.in_flight) {
            Next::Go => None,
            Next::Wait => Some(false),
            // Nothing is in flight, so every slot is free.
            Next::Sync(n) => Some(self.free.pop().is_some_and(|slot| {
                self.push(n, slot, SlotOp::EndSync, Instant::now(), 0);
                true
            })),
        }
    }

    /// Whether a job's copy may issue now, as its start, think time, pace and end allow
    /// (see `jobcontrol`).
    fn control_admits(&mut self, pump: &dyn Pump) -> bool {
        let in_flight = self.in_flight;
        let measuring = self.measuring(pump, Instant::now);
        match self.job.as_mut().and_then(|j| j.control.as_mut()) {
            Some(c) => c.admit(in_flight, measuring),
            None => true,
        }
    }

    /// Whether what completes now counts: the step's measure phase, and for a copy with a
    /// ramp of its own, after it.
    fn measuring(&mut self, pump: &dyn Pump, now: impl FnOnce() -> Instant) -> bool {
        pump.measuring() && self.job.as_mut().is_none_or(|j| j.ramp_over(now))
    }

    fn push(&mut self, s: usize, slot: u32, op: SlotOp, intended: Instant, generation: u32) {
        let (engine_op, offset, len) = match op {
            SlotOp::Io(io) => (
                if io.write { self.write_op } else { Op::Read },
                io.offset,
                io.len,
            ),
            SlotOp::Sync => (self.sync_op, 0, 0),
            SlotOp::EndSync => (Op::Fsync, 0, 0),
        };
        self.engine.push(Request {
            slot,
            file: s as u32,
            op: engine_op,
            offset,
            len,
        });
        self.slots[slot as usize] = Slot {
            stream: s as u32,
            op,
            intended,
            start: intended,
            issued: intended,
            generation,
        };
        self.streams[s].in_flight += 1;
        self.in_flight += 1;
        self.pending.push(slot);
    }

    /// Tops up the queues: round robin from `next_stream`, one I/O at a time on the sync
    /// engine.
    fn top_up(&mut self, pump: &mut dyn Pump) -> Result<(), OpError> {
        let n = self.streams.len();
        if n == 0 {
            return Ok(());
        }
        if self.one_at_a_time {
            if self.in_flight == 0 {
                for k in 0..n {
                    let s = (self.next_stream + k) % n;
                    if self.queue_one(s, pump) {
                        self.next_stream = (s + 1) % n;
                        break;
                    }
                }
            }
            return Ok(());
        }
        // Each I/O goes to the kernel the moment it is queued, as fio's default
        // (iodepth_batch_submit=1) does: submitting a batch in one call lets the block layer
        // plug it, and the device sees the first I/O only when the last is ready (measured:
        // 10-20% fewer IOPS at depth 32 on a virtio disk). Topping up stops at the first
        // completion seen, so its time is taken promptly.
        'files: for k in 0..n {
            let s = (self.next_stream + k) % n;
            while self.streams[s].in_flight < self.streams[s].depth {
                if !self.queue_one(s, pump) {
                    break;
                }
                self.submit_pending(0)?;
                if !self.completions.is_empty() {
                    break 'files;
                }
            }
        }
        self.next_stream = (self.next_stream + 1) % n;
        Ok(())
    }

    /// Stamps what was queued since the last submission with the time now (nothing, for a
    /// copy that reads no clock per I/O: fio's gtod_reduce).
    fn stamp_pending(&mut self) {
        if !self.clock.each_io {
            self.pending.clear();
            return;
        }
        let now = Instant::now();
        for &slot in &self.pending {
            self.slots[slot as usize].start = now;
        }
        self.pending.clear();
    }

    /// Stamps what was queued since the last submission with the time now and submits it,
    /// waiting for `wait` completions. Logs that time submissions apart (a queued engine's)
    /// stamp them again when the submission returns, if it waited for nothing.
    fn submit_pending(&mut self, wait: u32) -> Result<(), OpError> {
        if !self.split || wait > 0 {
            self.stamp_pending();
            return self
                .engine
                .submit(wait, &mut self.completions)
                .map_err(|e| OpError::other(format!("the I/O engine failed: {e}")));
        }
        let now = Instant::now();
        for &slot in &self.pending {
            self.slots[slot as usize].start = now;
        }
        let submitted = self.engine.submit(0, &mut self.completions);
        let issued = Instant::now();
        for &slot in &self.pending {
            self.slots[slot as usize].issued = issued;
        }
        self.pending.clear();
        submitted.map_err(|e| OpError::other(format!("the I/O engine failed: {e}")))
    }

    /// Accounts one completion; `Err` only for a full disk, which ends the step.
    fn complete(
        &mut self,
        c: Completion,
        end: Instant,
        pump: &mut dyn Pump,
    ) -> Result<(), OpError> {
        let slot = self.slots[c.slot as usize];
        let s = slot.stream as usize;
        let measuring = self.measuring(pump, || end);
        if let Some(job) = &mut self.job {
            job.last = Some(end);
        }
        self.free.push(c.slot);
        self.in_flight -= 1;
        self.streams[s].in_flight -= 1;
        // A copy that keeps no latency (fio's gtod_reduce) never stamped the start.
        let ns = self
            .latency
            .then(|| end.saturating_duration_since(slot.start).as_nanos() as u64);
        let io = match slot.op {
            SlotOp::Sync | SlotOp::EndSync => {
                if measuring && matches!(slot.op, SlotOp::Sync) {
                    self.sync.add(ns, 0, c.result >= 0);
                }
                if let Some(e) = c.error() {
                    if sys::is_no_space(&e) {
                        return Err(self.full(s, &e));
                    }
                    pump.fail(
                        ErrorKind::Io,
                        &format!(
                            "sync of {} failed: {e}",
                            self.streams[s].file.path.display()
                        ),
                    );
                }
                return Ok(());
            }
            SlotOp::Io(io) => io,
        };
        let mut failure: Option<String> = None;
        let what = match (io.write, self.write_op) {
            (false, _) => "read",
            (true, Op::Trim) => "trim",
            (true, _) => "write",
        };
        if let Some(e) = c.error() {
            if io.write && sys::is_no_space(&e) {
                return Err(self.full(s, &e));
            }
            failure = Some(format!(
                "{what} of {} bytes at offset {} of {} failed: {e}",
                io.len,
                io.offset,
                self.streams[s].file.path.display()
            ));
        } else if c.result as u32 != io.len {
            failure = Some(format!(
                "short {what}: {} of {} bytes at offset {} of {}",
                c.result,
                io.len,
                io.offset,
                self.streams[s].file.path.display()
            ));
        }
        if let Some(gens) = self.streams[s].generations.clone() {
            let idx = ((io.offset - self.streams[s].file.start) / self.block) as usize;
            let mut now_holds = slot.generation;
            if io.write && failure.is_some() {
                now_holds = 0; // unknown: part of it may have been written
            } else if !io.write && failure.is_none() {
                let expected = self.block_id(s, io.offset, slot.generation);
                let block = &self.engine.buf(c.slot)[..io.len as usize];
                // A block this run has not written (kept files) is checked for everything
                // but its generation.
                let checked = if slot.generation > 0 {
                    verify::check(block, expected)
                } else {
                    match verify::check_any_generation(block, expected) {
                        // Content this run knows nothing about, not written by perflab's
                        // verify mode: nothing to check it against.
                        Err(verify::Corruption::NeverWritten { .. }) => Ok(()),
                        other => other,
                    }
                };
                if let Err(bad) = checked {
                    failure = Some(format!("{}: {bad}", self.streams[s].file.path.display()));
                    self.bad_block();
                }
            }
            if let Some(g) = gens.get(idx) {
                g.store(now_holds, Ordering::Relaxed);
            }
        }
        let ok = failure.is_none();
        let bytes = u64::from(io.len);
        if ok
            && measuring
            && let Some(job) = &mut self.job
            && let Some(logs) = &mut job.logs
        {
            if let Some(first) = job.first {
                logs.begin(first);
            }
            logs.io(Done {
                dir: match (io.write, self.write_op) {
                    (false, _) => 0,
                    (true, Op::Trim) => 2,
                    (true, _) => 1,
                },
                bytes,
                offset: io.offset,
                start: slot.start,
                issued: if self.split { slot.issued } else { slot.start },
                end,
            });
        }
        if let Some(c) = self.job.as_mut().and_then(|j| j.control.as_mut()) {
            c.completed(bytes, ns.unwrap_or(0), ok && measuring, end);
        }
        // Trims have no floor in perflab (the value's third part, for trims, is not kept).
        if ok && !(io.write && self.write_op == Op::Trim) {
            self.check_min_rate(io.write, bytes, end, measuring, pump);
        }
        if measuring {
            let direction = match (io.write, self.write_op) {
                (false, _) => &mut self.read,
                (true, Op::Trim) => &mut self.trim,
                (true, _) => &mut self.write,
            };
            direction.add(ns, bytes, ok);
            if self.by_size.len() > 1 {
                self.by_size[io.size_index as usize].add(ns, bytes, ok);
            }
            if self.per_file {
                self.by_file[s].add(ns, bytes, ok);
            }
        }
        let outcome = match &failure {
            None => Ok(OpOutcome {
                bytes,
                items: 1,
                ..Default::default()
            }),
            Some(m) => Err(Failure::new(ErrorKind::Io, m)),
        };
        if pump.measuring() && !measuring {
            // The copy's own ramp, inside the step's measure phase: run, not counted.
        } else if self.latency {
            pump.done(slot.intended, slot.start, end, outcome);
        } else {
            pump.done_untimed(end, outcome);
        }
        Ok(())
    }

    fn block_id(&self, s: usize, offset: u64, encoded: u32) -> BlockId {
        BlockId {
            file_id: self.streams[s].file.index as u32,
            offset,
            generation: u64::from(encoded.saturating_sub(1)),
            seed: self.verify_seed.unwrap_or(0),
        }
    }

    fn full(&self, s: usize, e: &std::io::Error) -> OpError {
        OpError::other(format!(
            "the disk under {} is full ({e}); the step ends and the test files are removed. Lower --size or --files",
            self.streams[s].file.path.display()
        ))
    }

    /// fio's `rate_min` and `rate_iops_min`: a copy below its floor ends, with an error of
    /// its job in fio's words.
    fn check_min_rate(
        &mut self,
        write: bool,
        bytes: u64,
        end: Instant,
        measuring: bool,
        pump: &mut dyn Pump,
    ) {
        let Some(job) = &mut self.job else { return };
        let (Some(check), Some(first)) = (&mut job.min_rate, job.first) else {
            return;
        };
        let running = end.saturating_duration_since(first);
        if let Err(why) = check.completed(write, bytes, end, running, measuring) {
            pump.fail(ErrorKind::Io, &format!("{}: {why}", job.name));
            job.min_rate = None;
            job.budget_left = Some(0);
            let direction = if write {
                &mut self.write
            } else {
                &mut self.read
            };
            direction.errors += 1;
        }
    }

    /// A bad block was read: with `verify_fatal` the copy issues nothing more.
    fn bad_block(&mut self) {
        self.bad_blocks += 1;
        if self.fatal
            && let Some(job) = &mut self.job
        {
            job.budget_left = Some(0);
        }
    }

    /// A block the read-back found bad or could not read: a job counts it among its read
    /// errors, as fio counts its verify errors as the job's.
    fn bad_read_back(&mut self, pump: &mut dyn Pump, cause: ErrorKind, message: &str) {
        pump.fail(cause, message);
        if self.job.is_some() {
            self.read.errors += 1;
        }
        self.bad_block();
    }

    /// Reads back every block this worker wrote in this step, checking each.
    fn verify_pass(&mut self, pump: &mut dyn Pump) -> Result<(), OpError> {
        let block = self.block;
        for s in 0..self.streams.len() {
            let Some(gens) = self.streams[s].generations.clone() else {
                continue;
            };
            let written = std::mem::take(&mut self.streams[s].written);
            let mut blocks = written.iter().enumerate().flat_map(|(w, &bits)| {
                (0..64)
                    .filter(move |b| bits & (1 << b) != 0)
                    .map(move |b| w * 64 + b)
            });
            let depth = self.streams[s].depth.max(1) as usize;
            let mut waiting: Vec<(u32, u64, u32, Instant)> = Vec::with_capacity(depth);
            let mut more = true;
            while more || !waiting.is_empty() {
                // verify_fatal: the first bad block ends the read-back.
                more &= !(self.fatal && self.bad_blocks > 0);
                while more && waiting.len() < depth && !self.free.is_empty() {
                    let Some(idx) = blocks.next() else {
                        more = false;
                        break;
                    };
                    let encoded = gens.get(idx).map_or(0, |g| g.load(Ordering::Relaxed));
                    if encoded == 0 {
                        continue; // a failed write left it unknown
                    }
                    let Some(slot) = self.free.pop() else { break };
                    let offset = self.streams[s].file.start + idx as u64 * block;
                    self.engine.push(Request {
                        slot,
                        file: s as u32,
                        op: Op::Read,
                        offset,
                        len: block as u32,
                    });
                    waiting.push((slot, offset, encoded, Instant::now()));
                }
                if waiting.is_empty() {
                    continue;
                }
                self.engine
                    .submit(1, &mut self.completions)
                    .map_err(|e| OpError::other(format!("verify pass: {e}")))?;
                let done: Vec<Completion> = self.completions.drain(..).collect();
                for c in done {
                    let Some(i) = waiting.iter().position(|w| w.0 == c.slot) else {
                        continue;
                    };
                    let (slot, offset, encoded, start) = waiting.swap_remove(i);
                    self.free.push(slot);
                    self.verified += 1;
                    let ns = self.latency.then(|| start.elapsed().as_nanos() as u64);
                    let errors = self.bad_blocks;
                    self.check_read_back(pump, &c, (s, slot, offset, encoded));
                    // A bad block is already the job's read error (`bad_read_back`).
                    if self.bad_blocks == errors {
                        self.verify_reads.add(ns, block, true);
                    }
                }
            }
        }
        Ok(())
    }

    /// One read-back's completion: an error, a short read or a block that does not check is
    /// a bad block of the job.
    fn check_read_back(
        &mut self,
        pump: &mut dyn Pump,
        c: &Completion,
        (s, slot, offset, encoded): (usize, u32, u64, u32),
    ) {
        let block = self.block;
        let path = self.streams[s].file.path.display().to_string();
        let expected = self.block_id(s, offset, encoded);
        if let Some(e) = c.error() {
            self.bad_read_back(
                pump,
                ErrorKind::Io,
                &format!("verify read at offset {offset} of {path}: {e}"),
            );
        } else if c.result as u64 != block {
            self.bad_read_back(
                pump,
                ErrorKind::Io,
                &format!(
                    "verify read at offset {offset} of {path}: short read, {} of {block} bytes",
                    c.result
                ),
            );
        } else if let Err(bad) = verify::check(&self.engine.buf(slot)[..block as usize], expected) {
            self.bad_read_back(pump, ErrorKind::WrongAnswer, &format!("{path}: {bad}"));
        }
    }
}

/// Whether `worker` drives file `file` (of `files`), and if so how many workers share it and
/// which of them this one is.
fn share(file: usize, files: usize, worker: usize, workers: usize) -> (bool, usize, usize) {
    if files >= workers {
        (file % workers == worker, 1, 0)
    } else {
        let sharers = workers / files + usize::from(file < workers % files);
        (worker % files == file, sharers, worker / files)
    }
}

/// A job's groups: its total (`job`) and each direction it did (`job_direction`, keyed
/// `NAME/read`), over the copy's own running time; its read-back after the step
/// (`job_verify`), and the same of each copy that reports on its own (`job_copy`...).
fn job_groups(job: &JobState, directions: [&Group; 4], verify: &Group, out: &mut Vec<GroupTotals>) {
    // A copy that ends by itself (its size, its runtime) runs for its own time; in a timed
    // step it runs for the step's.
    let control = job.control.as_ref();
    let end = match (job.last, control.and_then(CopyControl::ended_at)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let own_time = job.budget_left.is_some()
        || job.runtime.is_some()
        || control.is_some_and(CopyControl::own_time);
    let active = match (job.first, end) {
        (Some(a), Some(b)) if own_time => Some(b.saturating_duration_since(a)),
        _ => None,
    };
    let mut kinds = vec![("job", "job_direction", "job_verify", &job.name)];
    if let Some(key) = &job.copy_key {
        kinds.push(("job_copy", "job_copy_direction", "job_copy_verify", key));
    }
    for (whole, part, read_back, key) in kinds.into_iter().rev() {
        if verify.ops > 0 {
            out.push(GroupTotals {
                by: read_back,
                key: key.clone(),
                label: format!("{key} read-back"),
                ops: verify.ops,
                bytes: verify.bytes,
                errors: 0,
                latency: verify.latency.clone(),
                active: None,
            });
        }
        let mut total = Group::new();
        for (name, g) in ["read", "write", "trim", "sync"]
            .into_iter()
            .zip(directions)
        {
            total.ops += g.ops;
            total.bytes += g.bytes;
            total.errors += g.errors;
            let _ = total.latency.add(&g.latency);
            if g.ops + g.errors > 0 {
                out.push(GroupTotals {
                    by: part,
                    key: format!("{key}/{name}"),
                    label: format!("{key} {name}"),
                    ops: g.ops,
                    bytes: g.bytes,
                    errors: g.errors,
                    latency: g.latency.clone(),
                    active,
                });
            }
        }
        out.insert(
            0,
            GroupTotals {
                by: whole,
                key: key.clone(),
                label: key.clone(),
                ops: total.ops,
                bytes: total.bytes,
                errors: total.errors,
                latency: total.latency,
                active,
            },
        );
    }
}

/// `path` opened as `engine` reaches its files: for the I/O asked (O_DIRECT if `direct`),
/// read-write and buffered (falloc, as fio opens it), or not at all (by name, or no file).
/// The file as the engine reaches it (None for an engine that opens nothing), O_DIRECT and
/// `sync`'s flag as the job says where the engine opens the file for I/O.
fn open_for(
    engine: EngineKind,
    path: &std::path::Path,
    (direct, sync): (bool, sys::WriteSync),
    writes: bool,
) -> Result<Option<std::fs::File>, OpError> {
    let (direct, writes) = match engine.reach() {
        Reach::Open => (direct, writes),
        Reach::OpenReadWrite => (false, true),
        Reach::Path | Reach::Nothing => return Ok(None),
    };
    sys::open_options_synced(direct, sync)
        .read(true)
        .write(writes)
        .open(path)
        .map(Some)
        .map_err(|e| open_error(path, direct, &e))
}

/// Fills the `depth` slot buffers before the first write: with a job's own contents (its
/// [`Filler`], returned to refill them by fio's rules), else with incompressible bytes, as
/// fio's writes carry by default.
fn fill_slots(
    engine: &mut dyn Engine,
    plan: &StepPlan,
    worker: usize,
    depth: u32,
    rng: &mut Rng,
) -> Option<Filler> {
    let mut filler = plan.job.as_ref().and_then(|j| {
        let c = j.writes.contents.clone()?;
        Some(Filler::new(
            c,
            j.step_seed,
            j.writes.first_copy + worker as u32,
        ))
    });
    for slot in 0..depth {
        match &mut filler {
            Some(f) => f.initial(engine.buf(slot)),
            None => {
                for w in engine.buf(slot).chunks_exact_mut(8) {
                    w.copy_from_slice(&rng.next_u64().to_le_bytes());
                }
            }
        }
    }
    filler
}

fn open_error(path: &std::path::Path, direct: bool, e: &std::io::Error) -> OpError {
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        OpError::other(format!(
            "{}: the filesystem does not support O_DIRECT; use --direct 0",
            path.display()
        ))
    } else {
        OpError::other(format!("cannot open {}: {e}", path.display()))
    }
}

impl Session for IoSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Err(OpError::other("an I/O session runs only as a queue"))
    }

    fn as_queued(&mut self) -> Option<&mut dyn QueuedSession> {
        Some(self)
    }

    fn finish(&mut self) -> Figures {
        let mut f = Figures::new();
        if self.verify_seed.is_some() {
            f.insert("verified_blocks_per_worker".into(), self.verified as f64);
        }
        if let Some(e) = self.job.as_ref().and_then(|j| j.end_sync.as_ref()) {
            f.insert("end_fsyncs_per_worker".into(), e.syncs() as f64);
        }
        f
    }

    fn groups(&mut self) -> Vec<GroupTotals> {
        let mut out = Vec::new();
        if let Some(job) = &self.job {
            job_groups(
                job,
                [&self.read, &self.write, &self.trim, &self.sync],
                &self.verify_reads,
                &mut out,
            );
        }
        // Files report even when they did nothing: a stalled volume is the worst straggler.
        let mut take = |by: &'static str, key: String, label: String, g: &mut Group| {
            if by == "file" || g.ops + g.errors > 0 {
                out.push(GroupTotals {
                    by,
                    key,
                    label,
                    ops: g.ops,
                    bytes: g.bytes,
                    errors: g.errors,
                    latency: std::mem::replace(&mut g.latency, new_histogram()),
                    active: None,
                });
            }
        };
        take("direction", "read".into(), "read".into(), &mut self.read);
        take("direction", "write".into(), "write".into(), &mut self.write);
        take("direction", "trim".into(), "trim".into(), &mut self.trim);
        take("direction", "sync".into(), "sync".into(), &mut self.sync);
        for (i, g) in self.by_size.iter_mut().enumerate() {
            let b = self.sizes[i];
            take(
                "block_size",
                b.to_string(),
                crate::vocab::units::format_bytes(b),
                g,
            );
        }
        if self.per_file {
            for (s, g) in self.by_file.iter_mut().enumerate() {
                let f = &self.streams[s].file;
                take("file", f.index.to_string(), f.path.display().to_string(), g);
            }
        }
        out
    }
}

impl QueuedSession for IoSession {
    fn pump(&mut self, pump: &mut dyn Pump) -> Result<(), OpError> {
        self.top_up(pump)?;
        if self.in_flight == 0 {
            if let Some(gate) = &self.gate {
                gate.idle();
            }
            return Ok(());
        }
        if self.completions.is_empty() {
            // The sync engine runs its one queued I/O here; io_uring waits for a completion,
            // in an open loop no longer than until the next start is due.
            if pump.may_block() {
                self.submit_pending(1)?;
            } else {
                let until = pump
                    .next_due()
                    .map(|at| at.saturating_duration_since(Instant::now()))
                    .unwrap_or_default();
                self.stamp_pending();
                self.engine
                    .submit_within(until, &mut self.completions)
                    .map_err(|e| OpError::other(format!("the I/O engine failed: {e}")))?;
            }
        }
        let end = self.clock.now();
        let mut done = std::mem::take(&mut self.completions);
        let mut outcome = Ok(());
        for c in done.drain(..) {
            if let Err(e) = self.complete(c, end, pump) {
                outcome = Err(e);
            }
        }
        self.completions = done;
        if !self.clock.each_io
            && self.in_flight == 0
            && let Some(job) = &mut self.job
            && job.finished()
        {
            // The copy's end, read afresh: the shared clock may lag by a few rounds.
            job.last = Some(Instant::now());
        }
        if self.in_flight == 0
            && let Some(gate) = &mut self.gate
            && self.job.as_ref().is_some_and(JobState::finished)
        {
            // fio takes an ended job out of its flow.
            gate.leave();
        }
        outcome
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn exhausted(&self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        let control = job.control.as_ref();
        // Its size or time spent and its end-of-pass syncs complete, or ended by another.
        let done = job.finished() || control.is_some_and(CopyControl::ended);
        // The copy has ended: the other jobs learn it (wait_for, exitall).
        if done
            && self.in_flight == 0
            && let Some(c) = control
        {
            c.finish(Instant::now());
        }
        done
    }

    fn resumes_at(&self) -> Option<Instant> {
        self.job.as_ref()?.control.as_ref()?.resumes_at()
    }

    fn after(&mut self, pump: &mut dyn Pump) -> Result<(), OpError> {
        // The copy's I/O is done: its fio logs are written (fio writes them as a job ends).
        if let Some(logs) = self.job.as_mut().and_then(|j| j.logs.as_mut())
            && let Err(e) = logs.finish(Instant::now())
        {
            pump.fail(ErrorKind::Other, &e);
        }
        if self.verify_seed.is_some() && self.wrote && self.read_back {
            self.verify_pass(pump)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn files_are_shared_out_evenly() {
        // 4 files, 2 workers: each worker drives two whole files.
        assert_eq!(share(0, 4, 0, 2), (true, 1, 0));
        assert_eq!(share(1, 4, 0, 2), (false, 1, 0));
        assert_eq!(share(3, 4, 1, 2), (true, 1, 0));
        // 2 files, 5 workers: file 0 has workers 0, 2, 4; file 1 has 1 and 3.
        assert_eq!(share(0, 2, 4, 5), (true, 3, 2));
        assert_eq!(share(1, 2, 3, 5), (true, 2, 1));
        assert_eq!(share(1, 2, 4, 5), (false, 2, 2));
    }
}
