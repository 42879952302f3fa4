//! When a job file's copies start, pause and end, with fio's meaning (backend.c
//! `run_threads`, `do_io`, `handle_thinktime`; libfio.c `fio_terminate_threads`):
//!
//! - **start**: `startdelay` counts from the run's start (fio's genesis), a range drawing
//!   each copy's own delay; `wait_for=NAME` holds a copy until every copy of NAME (an
//!   earlier job of the same step) has ended;
//! - **pause**: `thinktime` once every `thinktime_blocks` completed I/Os, after the ones in
//!   flight complete, the first `thinktime_spin` of it spent busy on the CPU;
//!   `rate`/`rate_iops` of a job that both reads and writes (or starts late, or thinks) hold
//!   each direction to its own schedule from the copy's start ([`super::jobpace`]);
//! - **end**: `number_ios` I/Os (times `loops`) issued in the measure phase; steady state
//!   attained ([`super::jobsteady`]); and, once any job of the file sets `exitall` (fio makes
//!   it the whole run's), the end of any copy ends others as its job's `exit_what` says:
//!   `group` the jobs of its reporting group, started or not; `stonewall` every copy that
//!   has started; `all` every copy, and the steps after this one run nothing.
//!
//! A step's copies share one [`StepControl`]; each copy holds a [`CopyControl`] which its
//! session asks before each I/O ([`CopyControl::admit`]) and tells of each I/O issued and
//! completed. Everything here is about time and counts; what each I/O is stays the pattern's.

use super::fio::job::{ExitWhat, FioJob, SteadyState};
use super::jobpace::{DirPace, DirRate, DirRates};
use super::jobsteady::SteadyMonitor;
use crate::record::SteadyStateResult;
use crate::workload::rng::Rng;
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a copy held by another job (`wait_for`) looks again.
const WAIT_POLL: Duration = Duration::from_millis(10);

/// What one job asks of its copies' starts, pauses and ends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Control {
    /// `startdelay` (low, high): each copy draws its own delay in the range.
    pub start_delay: (Duration, Duration),
    /// `wait_for`: the job whose copies must all have ended first.
    pub wait_for: Option<String>,
    /// `thinktime`, `thinktime_spin`, `thinktime_blocks`.
    pub think: Duration,
    pub think_spin: Duration,
    pub think_blocks: u32,
    /// `number_ios` times `loops`.
    pub number_ios: Option<u64>,
    /// `exit_what`, acting when the run has `exitall`.
    pub exit_what: ExitWhat,
    /// The reads' and writes' own rates (a job that does both).
    pub rates: Option<DirRates>,
    /// `steadystate`.
    pub steady: Option<SteadyState>,
    /// `group_reporting`: steady state is judged over the reporting group.
    pub group_reporting: bool,
}

impl Control {
    /// What it asks, in a few words for `--dry-run` (empty when nothing).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let (lo, hi) = self.start_delay;
        if !hi.is_zero() {
            parts.push(match lo == hi {
                true => format!("starts after {lo:.0?}"),
                false => format!("starts after {lo:.0?} to {hi:.0?}"),
            });
        }
        if let Some(w) = &self.wait_for {
            parts.push(format!("starts when {w} has ended"));
        }
        if !self.think.is_zero() {
            parts.push(format!(
                "thinks {:.0?} every {} I/O(s)",
                self.think, self.think_blocks
            ));
        }
        if let Some(r) = &self.rates {
            let each = |d: usize| match r.rates[d] {
                Some(DirRate::Bytes(b)) => format!("{b} B/s"),
                Some(DirRate::Iops { iops, .. }) => format!("{iops} I/O/s"),
                None => "unpaced".into(),
            };
            let paces: Vec<String> = [(0, "reads"), (1, "writes")]
                .into_iter()
                .filter(|(d, _)| r.does[*d])
                .map(|(d, name)| format!("{name} {}", each(d)))
                .collect();
            parts.push(paces.join(", "));
        }
        if let Some(n) = self.number_ios {
            parts.push(format!("ends after {n} I/Os"));
        }
        if let Some(ss) = &self.steady {
            parts.push(format!(
                "ends at steady state {}{}",
                super::jobsteady::criterion_text(ss),
                if self.group_reporting {
                    " (of its reporting group)"
                } else {
                    ""
                }
            ));
        }
        parts.join(", ")
    }

    /// Whether a copy may end before its size or runtime says, or hold itself: its own
    /// running time is then its rates' divisor.
    pub fn runs_own_time(&self) -> bool {
        self.number_ios.is_some()
            || self.steady.is_some()
            || self.wait_for.is_some()
            || !self.start_delay.1.is_zero()
            || !self.think.is_zero()
            || self.rates.is_some()
    }
}

/// A job's control, from its section; `sizes` and `write_sizes` are the block sizes its
/// reads and writes take (as the plan has them). Refuses what it cannot honour yet.
pub fn control_of(
    job: &FioJob,
    sizes: &[(u64, u32)],
    write_sizes: Option<&[(u64, u32)]>,
) -> Result<Control, (&'static str, String)> {
    let mixed = job.rw.reads() && job.rw.writes();
    let paced = job.rate.iter().chain(&job.rate_iops).any(Option::is_some);
    // A copy that starts late or pauses keeps its own schedule, as fio's does (the step's
    // open-loop schedule would count its pauses into its I/Os' times).
    let own = holds_itself(job);
    let rates = match (paced && (mixed || own), write_sizes) {
        (false, _) => None,
        (true, Some(_)) if mixed => {
            return Err((
                "rate",
                "a rate in a job whose reads and writes take different block sizes is not supported yet; give both the same bs".into(),
            ));
        }
        (true, _) => {
            let min_bs = sizes.iter().map(|s| s.0).min().unwrap_or(4096);
            let rate = |d: usize| match (job.rate[d], job.rate_iops[d]) {
                (Some(b), _) => Some(DirRate::Bytes(b)),
                (None, Some(iops)) => Some(DirRate::Iops {
                    iops,
                    min_bs,
                    split: sizes.len() > 1,
                }),
                (None, None) => None,
            };
            Some(DirRates {
                rates: [rate(0), rate(1)],
                does: match mixed {
                    true => [job.rwmixread > 0, job.rwmixread < 100],
                    false => [job.rw.reads(), job.rw.writes()],
                },
                min_bs: [min_bs; 2],
                process: job.rate_process,
            })
        }
    };
    if job.number_ios.is_some() && job.time_based {
        // fio's loops keep a time_based job going whatever its count (backend.c do_io and
        // keep_running), so the line would mean nothing; refused rather than ignored.
        return Err((
            "number_ios",
            "fio ignores number_ios in a time_based job (it runs for its runtime); remove one of the two".into(),
        ));
    }
    Ok(Control {
        start_delay: job.startdelay,
        wait_for: job.wait_for.clone(),
        think: job.thinktime,
        think_spin: job.thinktime_spin,
        think_blocks: job.thinktime_blocks,
        number_ios: job
            .number_ios
            .map(|n| n.saturating_mul(u64::from(job.loops.max(1)))),
        exit_what: job.exit_what,
        rates,
        steady: job.steadystate,
        group_reporting: job.group_reporting,
    })
}

/// Each job's step: fio starts the jobs up to the next `stonewall` at once (`new_group`
/// alone starts a reporting group, not a step); a stonewall on the first job of a step
/// changes nothing.
pub fn steps_of(jobs: &[FioJob]) -> Vec<usize> {
    let (mut step, mut in_step) = (0, 0);
    jobs.iter()
        .map(|j| {
            if j.stonewall && in_step > 0 {
                step += 1;
                in_step = 0;
            }
            in_step += 1;
            step
        })
        .collect()
}

/// Whether the job's copies may start after their step does (`startdelay`, `wait_for`) or
/// pause (`thinktime`): their rates then keep their own schedule (here), not the step's.
pub fn holds_itself(job: &FioJob) -> bool {
    !job.startdelay.1.is_zero() || job.wait_for.is_some() || !job.thinktime.is_zero()
}

/// What fio rejects, or perflab cannot run yet, across jobs: steady-state options that
/// differ within a reporting group (fio: "must be consistent within reporting groups") or
/// an `ss_interval` that differs anywhere (fio: "must be globally equal").
pub fn check_jobs(jobs: &[FioJob]) -> Result<(), (usize, &'static str, String)> {
    for (i, j) in jobs.iter().enumerate() {
        let Some(first) = jobs[..i].first() else {
            continue;
        };
        if j.ss_interval != first.ss_interval {
            return Err((
                i,
                "ss_interval",
                format!(
                    "differs from job {}'s; fio requires one ss_interval for the whole run",
                    first.name
                ),
            ));
        }
        if let Some(o) = jobs[..i]
            .iter()
            .find(|o| o.group == j.group && o.steadystate != j.steadystate)
        {
            return Err((
                i,
                "steadystate",
                format!(
                    "differs from job {}'s in the same reporting group; fio rejects the job: give both the same steadystate, ss_dur and ss_ramp",
                    o.name
                ),
            ));
        }
    }
    Ok(())
}

/// Run-wide: `exit_what=all` ended the run in a step, and no later step runs anything.
#[derive(Debug)]
pub struct RunEnd {
    /// The step it happened in (`usize::MAX`: it has not).
    step: AtomicUsize,
}

impl Default for RunEnd {
    fn default() -> Self {
        RunEnd {
            step: AtomicUsize::new(usize::MAX),
        }
    }
}

/// One job of the step, as its copies share it.
struct JobSlot {
    name: String,
    /// fio's groupid.
    group: u32,
    control: Control,
    /// Copies that have not ended.
    running: AtomicU32,
    /// Ended by another job's end (`exit_what=group`).
    ended: AtomicBool,
    /// The job of this step it waits for (`wait_for`; None when that ran in an earlier step).
    waits_on: Option<usize>,
    /// Steady-state monitors: one for the reporting group (`group_reporting`), shared, or
    /// one per copy.
    monitors: Vec<Arc<SteadyMonitor>>,
    /// Its first copy's slot in a shared monitor (the copies of the group's jobs before it).
    first_slot: usize,
}

/// What the copies of one step share.
pub struct StepControl {
    /// The run's start: `startdelay` counts from it.
    genesis: Instant,
    /// Any job of the file sets `exitall`.
    exitall: bool,
    step: usize,
    run: Arc<RunEnd>,
    jobs: Vec<JobSlot>,
    /// `exit_what=stonewall` ended the copies started by then (ns after genesis; 0: never).
    stonewall_ns: AtomicU64,
    /// `exit_what=all` ended this step.
    all: AtomicBool,
}

impl std::fmt::Debug for StepControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepControl")
            .field("step", &self.step)
            .field(
                "jobs",
                &self.jobs.iter().map(|j| &j.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A job of a step: its name, fio group, copies and control.
pub struct StepJob<'a> {
    pub name: &'a str,
    pub group: u32,
    pub copies: u32,
    pub control: &'a Control,
}

impl StepControl {
    pub fn new(
        genesis: Instant,
        exitall: bool,
        step: usize,
        run: Arc<RunEnd>,
        jobs: &[StepJob],
    ) -> StepControl {
        // With group_reporting, the copies of every job of a reporting group feed one
        // monitor (fio requires their steady-state options to agree), each its own slot.
        let mut shared: Vec<(u32, Arc<SteadyMonitor>)> = Vec::new();
        let group_copies = |g: u32| -> usize {
            jobs.iter()
                .filter(|o| o.group == g)
                .map(|o| o.copies as usize)
                .sum()
        };
        let slots = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let first_slot = jobs[..i]
                    .iter()
                    .filter(|o| o.group == j.group)
                    .map(|o| o.copies as usize)
                    .sum();
                let monitors = match &j.control.steady {
                    None => Vec::new(),
                    Some(ss) if j.control.group_reporting => {
                        let m = match shared.iter().find(|(g, _)| *g == j.group) {
                            Some((_, m)) => Arc::clone(m),
                            None => {
                                let m = Arc::new(SteadyMonitor::new(*ss, group_copies(j.group)));
                                shared.push((j.group, Arc::clone(&m)));
                                m
                            }
                        };
                        vec![m]
                    }
                    Some(ss) => (0..j.copies)
                        .map(|_| Arc::new(SteadyMonitor::new(*ss, 1)))
                        .collect(),
                };
                JobSlot {
                    name: j.name.to_string(),
                    group: j.group,
                    control: j.control.clone(),
                    running: AtomicU32::new(j.copies),
                    ended: AtomicBool::new(false),
                    waits_on: j
                        .control
                        .wait_for
                        .as_ref()
                        .and_then(|w| jobs[..i].iter().rposition(|o| o.name == w)),
                    monitors,
                    first_slot,
                }
            })
            .collect();
        StepControl {
            genesis,
            exitall,
            step,
            run,
            jobs: slots,
            stonewall_ns: AtomicU64::new(0),
            all: AtomicBool::new(false),
        }
    }

    /// The control of copy `copy` of job `job` (its index among the step's jobs).
    pub fn copy(self: &Arc<Self>, job: usize, copy: usize, seed: u64) -> CopyControl {
        let slot = &self.jobs[job];
        let c = &slot.control;
        let mut rng = Rng::new(seed ^ 0x5eed_de1a_u64.wrapping_mul(copy as u64 + 1));
        let (lo, hi) = c.start_delay;
        let span = hi.saturating_sub(lo).as_micros() as u64;
        let delay = lo + Duration::from_micros(if span > 0 { rng.below(span + 1) } else { 0 });
        CopyControl {
            step: Arc::clone(self),
            job,
            start_at: self.genesis + delay,
            started_ns: None,
            think: Think {
                every: u64::from(c.think_blocks.max(1)),
                think: c.think,
                spin: c.think_spin.min(c.think),
                completed: 0,
                issued: 0,
                last: 0,
                pending: false,
                until: None,
            },
            ios_left: c.number_ios,
            pace: c
                .rates
                .clone()
                .map(|r| DirPace::new(r, rng.next_u64(), Instant::now())),
            steady: slot
                .monitors
                .get(copy.min(slot.monitors.len().saturating_sub(1)))
                .cloned(),
            steady_slot: match slot.monitors.len() {
                1 if c.group_reporting => slot.first_slot + copy,
                _ => 0,
            },
            measured: (0, 0, 0),
            measuring: false,
            clocked: !c.think.is_zero() || c.rates.is_some(),
            ended_at: Cell::new(None),
        }
    }

    /// Each job's steady state, by name, for the record.
    pub fn steady_states(&self) -> Vec<(String, SteadyStateResult)> {
        self.jobs
            .iter()
            .filter(|j| !j.monitors.is_empty())
            .filter_map(|j| {
                let results = j.monitors.iter().map(|m| m.result()).collect();
                super::jobsteady::combine(results).map(|r| (j.name.clone(), r))
            })
            .collect()
    }

    fn ns_since_genesis(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.genesis).as_nanos() as u64
    }
}

/// `thinktime`: the pause after every `every` completed I/Os.
#[derive(Debug)]
struct Think {
    every: u64,
    think: Duration,
    spin: Duration,
    completed: u64,
    /// I/Os issued: with those still in flight, a pause may be owed before they complete.
    issued: u64,
    /// Completions at the last pause.
    last: u64,
    /// A pause is due: it starts once nothing is in flight.
    pending: bool,
    /// Paused until then.
    until: Option<Instant>,
}

impl Think {
    /// Whether a pause is due or under way at `now` (the one a copy still owes after its
    /// last I/O).
    fn owed(&self, now: Instant) -> bool {
        !self.think.is_zero()
            && (self.pending
                || self.issued.max(self.completed) >= self.last + self.every
                || self.until.is_some_and(|u| now < u))
    }

    /// Whether an I/O may go now; starts a due pause once nothing is in flight.
    fn admit(&mut self, now: Instant, in_flight: usize) -> bool {
        if self.think.is_zero() {
            return true;
        }
        if let Some(u) = self.until {
            if now < u {
                return false;
            }
            self.until = None;
        }
        if !self.pending && self.completed >= self.last + self.every {
            self.pending = true;
            self.last = self.completed;
        }
        if !self.pending {
            return true;
        }
        if in_flight > 0 {
            return false;
        }
        self.pending = false;
        // fio's thinktime_spin: that much of the pause busy on the CPU, the rest asleep.
        let spin_end = now + self.spin;
        while Instant::now() < spin_end {
            std::hint::spin_loop();
        }
        let rest = self.think - self.spin;
        if rest.is_zero() {
            return true;
        }
        self.until = Some(Instant::now() + rest);
        false
    }
}

/// One copy's start, pauses and end.
pub struct CopyControl {
    step: Arc<StepControl>,
    job: usize,
    start_at: Instant,
    /// When it started (ns after genesis), once it has.
    started_ns: Option<u64>,
    think: Think,
    /// I/Os `number_ios` still allows.
    ios_left: Option<u64>,
    pace: Option<DirPace>,
    steady: Option<Arc<SteadyMonitor>>,
    /// Its slot in the monitor, and its measured I/Os, bytes and latency (ns) so far.
    steady_slot: usize,
    measured: (u64, u64, u64),
    /// The measure phase has begun for this copy.
    measuring: bool,
    /// It pauses or paces itself: each I/O needs the time. (Steady state is sampled at
    /// completions, whose time is known, and while the copy is held.)
    clocked: bool,
    /// When the copy ended (it then counts as ended for the others).
    ended_at: Cell<Option<Instant>>,
}

impl CopyControl {
    fn slot(&self) -> &JobSlot {
        &self.step.jobs[self.job]
    }

    /// Whether the copy may issue an I/O now (`in_flight`: its I/Os not yet completed;
    /// `measuring`: the measure phase has begun).
    pub fn admit(&mut self, in_flight: usize, measuring: bool) -> bool {
        // A started copy with nothing to time reads no clock: one check of its end per I/O.
        if !self.clocked && self.started_ns.is_some() && (self.measuring || !measuring) {
            return !self.ended();
        }
        let now = Instant::now();
        if measuring && !self.measuring {
            // fio starts its rate schedule and steady-state clock again after ramp_time.
            self.measuring = true;
            if let Some(p) = &mut self.pace {
                p.restart(now);
            }
            if let Some(m) = &self.steady {
                m.begin(now);
            }
        }
        if let Some(m) = &self.steady {
            m.poll(now);
        }
        if self.ended() {
            return false;
        }
        if self.started_ns.is_none() {
            if now < self.start_at || self.waiting() {
                return false;
            }
            self.started_ns = Some(self.step.ns_since_genesis(now).max(1));
            // fio's rate schedule counts from the job's own start.
            if let Some(p) = &mut self.pace {
                p.restart(now);
            }
        }
        if !self.think.admit(now, in_flight) {
            return false;
        }
        self.pace.as_ref().is_none_or(|p| p.ready(now).is_ok())
    }

    /// The job it waits for has copies still running.
    fn waiting(&self) -> bool {
        self.slot()
            .waits_on
            .is_some_and(|w| self.step.jobs[w].running.load(Ordering::Acquire) > 0)
    }

    /// The direction of the I/O about to go (`write`: the pattern's proposal), as the
    /// reads' and writes' own rates allow.
    pub fn direction(&self, write: bool) -> bool {
        match &self.pace {
            Some(p) => p.direction(write, Instant::now()),
            None => write,
        }
    }

    /// An I/O of `bytes` in direction `write` was issued.
    pub fn issued(&mut self, write: bool, bytes: u64, measuring: bool) {
        self.think.issued += 1;
        if let Some(p) = &mut self.pace {
            p.issued(write, bytes);
        }
        if measuring && let Some(left) = &mut self.ios_left {
            *left = left.saturating_sub(1);
        }
    }

    /// A read or write completed at `end`, taking `latency_ns`.
    pub fn completed(&mut self, bytes: u64, latency_ns: u64, measuring: bool, end: Instant) {
        self.think.completed += 1;
        if measuring && let Some(m) = &self.steady {
            let (ios, b, lat) = &mut self.measured;
            (*ios, *b, *lat) = (*ios + 1, *b + bytes, *lat + latency_ns);
            m.publish(self.steady_slot, *ios, *b, *lat);
            m.poll(end);
        }
    }

    /// When a copy with nothing in flight may next issue an I/O, if it is held.
    pub fn resumes_at(&self) -> Option<Instant> {
        // A started copy that neither pauses nor paces itself is never held.
        if (!self.clocked && self.started_ns.is_some()) || self.ended() {
            return None;
        }
        let now = Instant::now();
        let mut at: Option<Instant> = None;
        let mut later = |t: Instant| at = Some(at.map_or(t, |a| a.max(t)));
        if self.started_ns.is_none() {
            if now < self.start_at {
                later(self.start_at);
            } else if self.waiting() {
                later(now + WAIT_POLL);
            }
        }
        if let Some(u) = self.think.until {
            later(u);
        }
        if let Some(Err(t)) = self.pace.as_ref().map(|p| p.ready(now)) {
            later(t);
        }
        // A held copy wakes for the next steady-state sample, which it then takes.
        if let (Some(a), Some(m)) = (at, &self.steady) {
            at = Some(m.next_sample().map_or(a, |s| a.min(s.max(now))));
        }
        at
    }

    /// Whether the copy is done for a reason of its own or another job's.
    pub fn ended(&self) -> bool {
        if self.ended_at.get().is_some() {
            return true;
        }
        let step = &*self.step;
        let slot = self.slot();
        // fio pauses after each I/O before it looks at number_ios (backend.c do_io), so the
        // last I/O's pause is part of the job's time.
        (self.ios_left == Some(0) && !self.think.owed(Instant::now()))
            || self.steady.as_ref().is_some_and(|m| m.attained())
            || slot.ended.load(Ordering::Relaxed)
            || step.all.load(Ordering::Relaxed)
            || step.run.step.load(Ordering::Relaxed) < step.step
            || self.started_ns.is_some_and(|t| {
                let wall = step.stonewall_ns.load(Ordering::Relaxed);
                wall > 0 && t <= wall
            })
    }

    /// When the copy ended, once it has.
    pub fn ended_at(&self) -> Option<Instant> {
        self.ended_at.get()
    }

    /// Whether the copy's rates are over its own running time: it may end, or hold, on its
    /// own (not only when its step does).
    pub fn own_time(&self) -> bool {
        self.slot().control.runs_own_time() || self.step.exitall || self.ended_at.get().is_some()
    }

    /// The copy has ended with nothing in flight: the others learn it once (its `wait_for`
    /// waiters, and with `exitall` the jobs its `exit_what` names).
    pub fn finish(&self, now: Instant) {
        if self.ended_at.get().is_some() {
            return;
        }
        self.ended_at.set(Some(now));
        let step = &*self.step;
        let slot = self.slot();
        slot.running.fetch_sub(1, Ordering::AcqRel);
        if !step.exitall {
            return;
        }
        match slot.control.exit_what {
            ExitWhat::Group => {
                for j in step.jobs.iter().filter(|j| j.group == slot.group) {
                    j.ended.store(true, Ordering::Relaxed);
                }
            }
            ExitWhat::Stonewall => {
                step.stonewall_ns
                    .fetch_max(step.ns_since_genesis(now).max(1), Ordering::Relaxed);
            }
            ExitWhat::All => {
                step.all.store(true, Ordering::Relaxed);
                step.run.step.fetch_min(step.step, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(jobs: &[(&str, u32, u32, Control)], exitall: bool) -> Arc<StepControl> {
        let list: Vec<StepJob> = jobs
            .iter()
            .map(|(name, group, copies, control)| StepJob {
                name,
                group: *group,
                copies: *copies,
                control,
            })
            .collect();
        Arc::new(StepControl::new(
            Instant::now(),
            exitall,
            0,
            Arc::new(RunEnd::default()),
            &list,
        ))
    }

    fn read(text: &str) -> Vec<FioJob> {
        crate::workload::io::fio::read_str(text, std::path::Path::new("/t/j.fio"), &|_| None)
            .unwrap_or_else(|e| panic!("{e}"))
            .jobs
    }

    fn plan_of(text: &str) -> Result<Vec<Control>, String> {
        let jobs = read(text);
        check_jobs(&jobs).map_err(|(_, o, w)| format!("{o}: {w}"))?;
        jobs.iter()
            .map(|j| {
                let sizes = [(j.bs[0], 1)];
                control_of(j, &sizes, None).map_err(|(o, w)| format!("{o}: {w}"))
            })
            .collect()
    }

    #[test]
    fn steps_are_stonewall_segments_and_new_group_alone_runs_at_once() {
        // fio's exitwhat.fio: slow1 and fast1 at once (fast1 a reporting group of its own),
        // then slow2, fast2 and runsnever at once.
        let jobs = read(
            "[global]\nsize=1m\n[slow1]\nnew_group=1\n[fast1]\nnew_group=1\n[slow2]\nstonewall\nnew_group=1\n[fast2]\n[runsnever]\n",
        );
        assert_eq!(steps_of(&jobs), [0, 0, 1, 1, 1]);
        let groups: Vec<u32> = jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [0, 1, 2, 2, 2]);
        let jobs = read("[a]\nsize=1m\nstonewall\n[b]\nsize=1m\n[c]\nsize=1m\nwait_for_previous\n");
        assert_eq!(
            steps_of(&jobs),
            [0, 0, 1],
            "a stonewall on the first job changes nothing"
        );
    }

    #[test]
    fn a_jobs_options_become_its_control() {
        let c = plan_of(
            "[a]\nsize=1m\nrw=randrw\nrate=300,300,300\nthinktime=2000\nthinktime_blocks=4\nthinktime_spin=500\nnumber_ios=1000\nloops=2\nstartdelay=1-3\nexitall\nexit_what=stonewall\n",
        )
        .unwrap();
        let c = &c[0];
        assert_eq!(c.think, Duration::from_micros(2000));
        assert_eq!(
            (c.think_blocks, c.think_spin),
            (4, Duration::from_micros(500))
        );
        assert_eq!(c.number_ios, Some(2000), "number_ios counts per loop");
        assert_eq!(
            c.start_delay,
            (Duration::from_secs(1), Duration::from_secs(3))
        );
        assert_eq!(c.exit_what, ExitWhat::Stonewall);
        let rates = c.rates.as_ref().expect("a mixed job paces each direction");
        assert_eq!(
            rates.rates,
            [Some(DirRate::Bytes(300)), Some(DirRate::Bytes(300))]
        );
        assert_eq!(rates.does, [true, true]);
        // A one-direction job keeps the step's pacing unless it starts late.
        let c = plan_of("[a]\nsize=1m\nrate_iops=10\n").unwrap();
        assert!(c[0].rates.is_none());
        let c = plan_of("[a]\nsize=1m\nrate_iops=10\nstartdelay=1\n").unwrap();
        assert_eq!(
            c[0].rates.as_ref().unwrap().rates[0],
            Some(DirRate::Iops {
                iops: 10,
                min_bs: 4096,
                split: false
            })
        );
        assert_eq!(c[0].rates.as_ref().unwrap().does, [true, false]);
    }

    #[test]
    fn what_fio_rejects_or_perflab_cannot_run_yet_is_refused() {
        let e = plan_of("[a]\nsize=1m\nss=iops:5%\nss_dur=10\n[b]\nsize=1m\n").unwrap_err();
        assert!(e.starts_with("steadystate: differs from job a"), "{e}");
        let e = plan_of("[a]\nsize=1m\nss_interval=2\n[b]\nsize=1m\nstonewall\n").unwrap_err();
        assert!(e.starts_with("ss_interval:"), "{e}");
        // Each job ramps on its own, as fio's: different ramps at once, a late start after one.
        plan_of("[a]\nsize=1m\nramp_time=1\n[b]\nsize=1m\n").unwrap();
        plan_of("[a]\nsize=1m\nstartdelay=1\nramp_time=1\n").unwrap();
        let e = plan_of("[a]\nsize=1m\nnumber_ios=10\ntime_based\nruntime=1\n").unwrap_err();
        assert!(e.starts_with("number_ios: fio ignores"), "{e}");
        let jobs = read("[a]\nsize=1m\nrw=randrw\nbs=4k,64k\nrate=1m\n");
        let e = control_of(&jobs[0], &[(4096, 1)], Some(&[(65536, 1)])).unwrap_err();
        assert_eq!(e.0, "rate");
    }

    #[test]
    fn think_time_pauses_after_each_block_once_nothing_is_in_flight() {
        let c = Control {
            think: Duration::from_millis(50),
            think_blocks: 2,
            ..Default::default()
        };
        let s = step(&[("a", 0, 1, c)], false);
        let mut copy = s.copy(0, 0, 1);
        assert!(copy.admit(0, true));
        copy.issued(false, 4096, true);
        copy.completed(4096, 10, true, Instant::now());
        assert!(copy.admit(0, true), "one completed, blocks=2: no pause yet");
        copy.issued(false, 4096, true);
        copy.completed(4096, 10, true, Instant::now());
        copy.issued(false, 4096, true);
        // Two completed: a pause is due, and waits for the I/O in flight.
        assert!(!copy.admit(1, true));
        assert_eq!(copy.resumes_at(), None, "the pause has not begun");
        assert!(!copy.admit(0, true));
        let resume = copy.resumes_at().expect("paused");
        assert!(resume > Instant::now() + Duration::from_millis(30));
        assert!(!copy.admit(0, true), "still thinking");
        std::thread::sleep(resume.saturating_duration_since(Instant::now()));
        assert!(copy.admit(0, true));
    }

    /// fio pauses after each I/O before it checks number_ios: the last I/O's pause is the
    /// copy's too, and it ends when that pause does.
    #[test]
    fn the_last_ios_pause_comes_before_the_end() {
        let c = Control {
            number_ios: Some(1),
            think: Duration::from_millis(40),
            think_blocks: 1,
            ..Default::default()
        };
        let s = step(&[("a", 0, 1, c)], false);
        let mut copy = s.copy(0, 0, 1);
        assert!(copy.admit(0, true));
        copy.issued(false, 4096, true);
        assert!(!copy.ended(), "its pause is owed");
        copy.completed(4096, 10, true, Instant::now());
        assert!(!copy.admit(0, true), "the pause begins");
        let resume = copy.resumes_at().expect("paused");
        assert!(!copy.ended(), "thinking");
        std::thread::sleep(resume.saturating_duration_since(Instant::now()));
        assert!(copy.ended(), "the pause is over: number_ios ends it");
        assert!(!copy.admit(0, true), "and no I/O past number_ios");
    }

    #[test]
    fn number_ios_counts_measured_ios_and_the_end_is_told_once() {
        let c = Control {
            number_ios: Some(2),
            ..Default::default()
        };
        let s = step(&[("a", 0, 1, c)], false);
        let mut copy = s.copy(0, 0, 1);
        let now = Instant::now();
        copy.issued(false, 4096, false);
        assert!(!copy.ended(), "warmup I/Os do not count");
        copy.issued(false, 4096, true);
        assert!(copy.admit(0, true));
        copy.issued(false, 4096, true);
        assert!(copy.ended() && !copy.admit(0, true));
        copy.finish(now);
        copy.finish(now);
        assert_eq!(s.jobs[0].running.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_delayed_copy_and_a_waiting_one_start_when_they_may() {
        let later = Control {
            start_delay: (Duration::from_secs(3600), Duration::from_secs(3600)),
            ..Default::default()
        };
        let waits = Control {
            wait_for: Some("first".into()),
            ..Default::default()
        };
        let s = step(
            &[
                ("first", 0, 2, Control::default()),
                ("late", 0, 1, later),
                ("after", 1, 1, waits),
            ],
            false,
        );
        let now = Instant::now();
        let mut late = s.copy(1, 0, 1);
        assert!(!late.admit(0, true));
        assert!(late.resumes_at().unwrap() > now + Duration::from_secs(3000));
        let mut after = s.copy(2, 0, 1);
        assert!(!after.admit(0, true), "first still runs");
        let (a, b) = (s.copy(0, 0, 1), s.copy(0, 1, 1));
        a.finish(now);
        assert!(!after.admit(0, true), "one copy of first still runs");
        b.finish(now);
        assert!(after.admit(0, true));
    }

    #[test]
    fn exit_what_ends_the_group_the_started_copies_or_everything() {
        let group = Control::default();
        let s = step(
            &[
                ("a", 0, 1, group.clone()),
                ("b", 0, 1, group.clone()),
                ("c", 1, 1, group.clone()),
            ],
            true,
        );
        let now = Instant::now();
        let (a, b, mut c) = (s.copy(0, 0, 1), s.copy(1, 0, 1), s.copy(2, 0, 1));
        assert!(c.admit(0, true));
        a.finish(now);
        assert!(b.ended(), "same reporting group");
        assert!(!c.ended(), "another group runs on");

        let wall = Control {
            exit_what: ExitWhat::Stonewall,
            ..Default::default()
        };
        let delayed = Control {
            start_delay: (Duration::from_secs(3600), Duration::from_secs(3600)),
            ..Default::default()
        };
        let s = step(
            &[
                ("slow", 0, 1, wall),
                ("fast", 1, 1, group.clone()),
                ("later", 2, 1, delayed),
            ],
            true,
        );
        let (mut slow, mut fast, later) = (s.copy(0, 0, 1), s.copy(1, 0, 1), s.copy(2, 0, 1));
        let now = Instant::now();
        assert!(slow.admit(0, true) && fast.admit(0, true));
        slow.finish(Instant::now());
        assert!(fast.ended(), "a started copy of another group ends");
        assert!(!later.ended(), "one that has not started runs later");

        let all = Control {
            exit_what: ExitWhat::All,
            ..Default::default()
        };
        let run = Arc::new(RunEnd::default());
        let mk = |n: usize| {
            let job = StepJob {
                name: "x",
                group: 0,
                copies: 1,
                control: &all,
            };
            Arc::new(StepControl::new(now, true, n, Arc::clone(&run), &[job]))
        };
        let (first, second) = (mk(0), mk(1));
        first.copy(0, 0, 1).finish(now);
        assert!(
            second.copy(0, 0, 1).ended(),
            "the steps after it run nothing"
        );
        // Without exitall, nothing ends anything else.
        let s = step(
            &[
                ("a", 0, 1, Control::default()),
                ("b", 0, 1, Control::default()),
            ],
            false,
        );
        s.copy(0, 0, 1).finish(now);
        assert!(!s.copy(1, 0, 1).ended());
    }
}
