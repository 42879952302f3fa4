//! Batch-job throughput: K copies of a command at once (the SAS grid and ECLIPSE
//! reservoir-simulation tables: K copies of a job against one alone), or a batch of N jobs
//! through K slots, pinned compact, spread or not at all.
//!
//! ```text
//!  JobsSpec (this file)        commands, weights, --jobs, placement; the Workload impl
//!    │ sessions(point)         one Plan per trial: which command each job runs (weights
//!    │                         apportioned, order shuffled by --seed) and a shared cursor
//!    ▼
//!  JobSession (per copy)       on its worker thread: pin the thread (placement), then per
//!    │                         op claim a job (exhausted() when none is left), run it
//!    ▼
//!  command::Runner             spawn (no shell unless --shell; stderr to an unlinked temp
//!    │                         file), block in wait4, the kernel's rusage of the child
//!    ▼
//!  Tally -> figures -> derive  each copy's tally leaves as per-worker figures (so it
//!                              crosses MPI ranks like any figure); derive turns them into
//!                              jobs/hour, elapsed and CPU per job, max RSS, perflab's own
//!                              CPU as a share of the jobs', each copy's CPU and elapsed
//! ```
//!
//! Every step is fixed work ([`Workload::fixed_work`]): K workers (the copies; the threads
//! axis, typed `--copies`), no warmup, no time limit; the step lasts until the last job has
//! ended and its rate is the jobs over that time. Without `--jobs` each copy runs exactly one
//! job, all starting together; with `--jobs N` the K workers take the N jobs from one queue,
//! each as soon as its last one ended (under MPI the batch is striped over the run's copies
//! instead: copy w takes jobs w, w + K, ...). One op is one job, run to its end; its kind is its
//! command's name, so a mixed batch gets response times per command. A job that exits
//! non-zero (or is killed) is a failed op whose message has its exit status and the end of
//! its stderr.
//!
//! - [`command`]: splitting a command line, finding the program, running one job.
//! - [`placement`]: the CPU topology and the compact and spread orders.
//!
//! Relative throughput (K copies against the first step, normally one copy) is the record's
//! `analysis.scaling` (speedup of the headline, jobs per hour): only the whole run sees both
//! steps.

pub mod args;
pub mod cmd;
pub mod command;
pub mod kind;
pub mod placement;
pub mod present;

pub use kind::KIND;

use super::{Figures, GroupTotals, OpError, OpOutcome, Session, SessionFactory, Workload};
use crate::record::histogram::{LatencyHistogram, new_histogram};
use crate::record::{Headline, Trial, Warning};
use crate::stop::Stop;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use command::{JobCommand, Runner};
use placement::Placement;
use serde::Serialize;
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Serialize)]
pub struct JobsSpec {
    /// The commands of the batch (one, or a mix by weight).
    pub commands: Vec<JobCommand>,
    /// Whether the command lines run through `sh -c`.
    pub shell: bool,
    /// `--jobs`: the batch size; None: one job per copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u64>,
    /// How copies are pinned; sweeps (`compact,spread`: the same copies each way).
    pub placement: Sweep<Placement>,
    /// The order copies take CPUs in under the first placement (copy i on
    /// `cpu_order[i % len]`); empty when not pinned.
    pub cpu_order: Vec<usize>,
    /// The CPUs perflab may use and where they sit, for each step's placement.
    #[serde(skip)]
    pub cpus: Vec<placement::Cpu>,
    /// The CPUs perflab may use (online, in its affinity mask).
    pub cpus_available: usize,
    /// The copies of each step: the run's threads axis (`--copies`), kept here too because
    /// [`Workload::fixed_work`] needs them.
    #[serde(skip)]
    pub copies: Sweep<u64>,
    /// Where each copy's stderr file is made (and unlinked at once).
    #[serde(skip)]
    pub temp_dir: PathBuf,
}

/// What one copy (worker) did over a step.
#[derive(Debug, Clone, Default)]
struct CopyTally {
    /// From 0.
    copy: usize,
    /// Succeeded and failed jobs.
    ok: u64,
    failed: u64,
    /// Over the succeeded jobs.
    elapsed: Duration,
    elapsed_min: Option<Duration>,
    elapsed_max: Duration,
    user: Duration,
    sys: Duration,
    /// Over every job, failed ones too (what perflab's own CPU is set against).
    cpu_all: Duration,
    max_rss_bytes: u64,
    /// Per command (by its index), over its succeeded jobs: CPU time (user + system) and
    /// elapsed time, for a mixed batch's `cmd_<name>_cpu_pct`.
    by_command: Vec<(Duration, Duration)>,
}

/// A tally travels as figures named `tally_<copy>_<what>`: one worker reports each, so the
/// mean over workers (within a process, and over MPI ranks) leaves it as it was.
const TALLY: &str = "tally_";

impl CopyTally {
    fn into_figures(self) -> Figures {
        let ns = |d: Duration| d.as_nanos() as f64;
        let c = self.copy;
        let mut f = Figures::new();
        let mut put = |what: &str, v: f64| {
            f.insert(format!("{TALLY}{c}_{what}"), v);
        };
        put("ok", self.ok as f64);
        put("failed", self.failed as f64);
        put("elapsed_ns", ns(self.elapsed));
        if let Some(m) = self.elapsed_min {
            put("elapsed_min_ns", ns(m));
        }
        put("elapsed_max_ns", ns(self.elapsed_max));
        put("user_ns", ns(self.user));
        put("sys_ns", ns(self.sys));
        put("cpu_all_ns", ns(self.cpu_all));
        put("max_rss_bytes", self.max_rss_bytes as f64);
        for (i, (cpu, elapsed)) in self.by_command.iter().enumerate() {
            put(&format!("cmd{i}_cpu_ns"), ns(*cpu));
            put(&format!("cmd{i}_elapsed_ns"), ns(*elapsed));
        }
        f
    }

    /// Every copy's tally, taken out of `figures` (in copy order).
    fn take_all(figures: &mut Figures) -> Vec<CopyTally> {
        let keys: Vec<String> = figures
            .keys()
            .filter(|k| k.starts_with(TALLY))
            .cloned()
            .collect();
        let mut by_copy = std::collections::BTreeMap::<usize, CopyTally>::new();
        let d = |v: f64| Duration::from_nanos(v.max(0.0) as u64);
        for key in keys {
            let value = figures.remove(&key).unwrap_or_default();
            let Some((copy, what)) = key[TALLY.len()..].split_once('_') else {
                continue;
            };
            let Ok(copy) = copy.parse::<usize>() else {
                continue;
            };
            let t = by_copy.entry(copy).or_insert_with(|| CopyTally {
                copy,
                ..Default::default()
            });
            match what {
                "ok" => t.ok = value as u64,
                "failed" => t.failed = value as u64,
                "elapsed_ns" => t.elapsed = d(value),
                "elapsed_min_ns" => t.elapsed_min = Some(d(value)),
                "elapsed_max_ns" => t.elapsed_max = d(value),
                "user_ns" => t.user = d(value),
                "sys_ns" => t.sys = d(value),
                "cpu_all_ns" => t.cpu_all = d(value),
                "max_rss_bytes" => t.max_rss_bytes = value as u64,
                _ => {
                    // `cmd<i>_cpu_ns`, `cmd<i>_elapsed_ns`: command i's share.
                    let Some((i, what)) = what
                        .strip_prefix("cmd")
                        .and_then(|r| r.split_once('_'))
                        .and_then(|(i, w)| Some((i.parse::<usize>().ok()?, w)))
                    else {
                        continue;
                    };
                    if t.by_command.len() <= i {
                        t.by_command.resize(i + 1, Default::default());
                    }
                    match what {
                        "cpu_ns" => t.by_command[i].0 = d(value),
                        "elapsed_ns" => t.by_command[i].1 = d(value),
                        _ => {}
                    }
                }
            }
        }
        by_copy.into_values().collect()
    }
}

impl JobsSpec {
    pub fn new(
        commands: Vec<JobCommand>,
        shell: bool,
        jobs: Option<u64>,
        placement: Sweep<Placement>,
        copies: Sweep<u64>,
    ) -> JobsSpec {
        let allowed = crate::engine::process::allowed_cpus().unwrap_or_default();
        let cpus = placement::read_topology(std::path::Path::new("/sys/devices/system"), &allowed);
        JobsSpec {
            commands,
            shell,
            jobs,
            cpu_order: placement::order(&cpus, placement.first()),
            placement,
            cpus_available: cpus.len().max(1),
            cpus,
            copies,
            temp_dir: std::env::temp_dir(),
        }
    }

    /// Which command each job of a step of `n` jobs runs: every command in proportion to its
    /// weight (rounded by largest remainder, so `--copies 2` with two equal commands runs one
    /// of each), in an order shuffled by the seed: the same batch for the same seed.
    pub fn job_order(&self, n: usize, seed: u64) -> Vec<usize> {
        let total: u64 = self.commands.iter().map(|c| c.weight).sum::<u64>().max(1);
        let exact: Vec<f64> = self
            .commands
            .iter()
            .map(|c| n as f64 * c.weight as f64 / total as f64)
            .collect();
        let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
        let mut by_remainder: Vec<usize> = (0..counts.len()).collect();
        by_remainder.sort_by(|&a, &b| {
            let ra = exact[a] - exact[a].floor();
            let rb = exact[b] - exact[b].floor();
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        let short = n.saturating_sub(counts.iter().sum());
        for &i in by_remainder.iter().cycle().take(short) {
            counts[i] += 1;
        }
        let mut order: Vec<usize> = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| std::iter::repeat_n(i, c))
            .collect();
        let mut rng = super::rng::Rng::new(seed ^ 0x6a6f_6273); // "jobs"
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below_usize(i + 1));
        }
        order
    }
}

impl Workload for JobsSpec {
    /// Under MPI each rank runs its share of the copies (and of the batch) on its own host,
    /// pinned there as on one machine.
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "jobs"
    }

    fn target(&self) -> String {
        self.commands
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join("+")
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        // The copies are the run's threads axis; the placement sweeps within each.
        match self.placement.is_swept() {
            true => vec![&self.placement],
            false => Vec::new(),
        }
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "jobs_per_hour".into(),
            op_name: "jobs".into(),
            higher_is_better: true,
        }
    }

    fn fixed_work(&self, point: &StepPoint) -> Option<usize> {
        Some(self.copies.at(point).max(1) as usize)
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let copies = self.copies.at(point).max(1) as usize;
        let n = self.jobs.map_or(copies, |j| j as usize);
        let plan = Arc::new(Plan {
            commands: self.commands.clone(),
            order: self.job_order(n, seed),
            next: AtomicUsize::new(0),
            batch: self.jobs.is_some(),
        });
        let cpu_order = placement::order(&self.cpus, self.placement.at(point));
        let temp_dir = self.temp_dir.clone();
        // Under MPI, copies are numbered over the run, but each host pins its own from its
        // first CPU in the order: a slot per copy opened on this rank.
        let ranks = ctx.ranks > 1;
        let stop = ctx.stop.clone();
        let slots = Arc::new(AtomicUsize::new(0));
        Ok(Arc::new(move |worker, workers| {
            let slot = match ranks {
                true => slots.fetch_add(1, Ordering::SeqCst),
                false => worker,
            };
            JobSession::open(
                worker,
                placement::cpus_of(&cpu_order, slot),
                Arc::clone(&plan),
                // Under MPI a batch is striped over the run's copies (each rank has its own
                // cursor, so copy w takes jobs w, w + copies, ...); alone, the copies share
                // one queue and each takes the next job as soon as it is free.
                ranks.then_some(workers),
                &temp_dir,
                &stop,
            )
            .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        // The copies' tallies arrive as figures (`Session::finish`), so they add up over
        // MPI ranks like any other figure.
        let tallies = CopyTally::take_all(&mut trial.figures);
        derive_figures(&tallies, trial);
        if self.commands.len() > 1 {
            let names: Vec<&str> = self.commands.iter().map(|c| c.name).collect();
            derive_command_shares(&tallies, &names, trial);
        }
    }

    fn run_warnings(&self, cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        let most = self.copies.values().iter().copied().max().unwrap_or(1) as usize;
        let pinned = match self
            .placement
            .values()
            .iter()
            .all(|p| *p == Placement::None)
        {
            true => "",
            false => " (pinned copies wrap around the CPU order, two or more to a CPU)",
        };
        copies_per_host(most, self.cpus_available, cluster)
            .into_iter()
            .filter(|h| h.copies > h.cpus)
            .map(|h| Warning {
                code: "oversubscribed".into(),
                message: match cluster {
                    None => format!(
                        "--copies {most} is more than the {} CPU(s) perflab may use: copies share CPUs{pinned}, so each job runs slower and throughput stops growing; give --copies up to {}",
                        h.cpus, h.cpus
                    ),
                    Some(_) => format!(
                        "--copies {most} puts {} copies on {} ({} rank(s)), which has {} CPU(s): copies share CPUs{pinned}, so each job runs slower and throughput stops growing; give fewer copies, or more hosts",
                        h.copies, h.host, h.ranks, h.cpus
                    ),
                },
                step: None,
            })
            .collect()
    }
}

/// One host's share of a step's copies.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostLoad {
    host: String,
    ranks: usize,
    copies: usize,
    cpus: usize,
}

/// How `copies` fall on hosts: alone, all on this one (`cpus_here` CPUs); under MPI, each
/// rank's share (as the runner splits workers over ranks) on its rank's host, whose CPUs the
/// record's cluster disclosure gives (this host's for rank 0's).
fn copies_per_host(
    copies: usize,
    cpus_here: usize,
    cluster: Option<&crate::record::ClusterInfo>,
) -> Vec<HostLoad> {
    let Some(c) = cluster else {
        return vec![HostLoad {
            host: "this host".into(),
            ranks: 1,
            copies,
            cpus: cpus_here,
        }];
    };
    let ranks = c.members.len().max(1);
    let per_rank = c.scope == "rank";
    let mut hosts: Vec<HostLoad> = Vec::new();
    for m in &c.members {
        let share = crate::vocab::share::Share::of(copies, ranks, m.rank as usize, per_rank);
        let cpus = m
            .env
            .as_ref()
            .and_then(|e| e.cpu.logical_cpus)
            .map_or(cpus_here, |n| n as usize);
        match hosts.iter_mut().find(|h| h.host == m.host) {
            Some(h) => {
                h.ranks += 1;
                h.copies += share.workers;
            }
            None => hosts.push(HostLoad {
                host: m.host.clone(),
                ranks: 1,
                copies: share.workers,
                cpus,
            }),
        }
    }
    hosts
}

/// The trial's figures from its copies' tallies (see docs/workloads.md, jobs).
fn derive_figures(tallies: &[CopyTally], trial: &mut Trial) {
    let secs = trial.elapsed_ns as f64 / 1e9;
    let ok: u64 = tallies.iter().map(|t| t.ok).sum();
    let all: u64 = ok + tallies.iter().map(|t| t.failed).sum::<u64>();
    let ns = |d: Duration| d.as_nanos() as f64;
    let sum = |f: fn(&CopyTally) -> Duration| tallies.iter().map(f).sum::<Duration>();
    let f = &mut trial.figures;
    f.insert(
        "jobs_per_hour".into(),
        if secs > 0.0 {
            trial.ops as f64 / secs * 3600.0
        } else {
            0.0
        },
    );
    f.insert("seconds".into(), secs);
    if ok > 0 {
        let per = |d: Duration| ns(d) / ok as f64;
        let elapsed = sum(|t| t.elapsed);
        let cpu = sum(|t| t.user) + sum(|t| t.sys);
        f.insert("elapsed_mean_ns".into(), per(elapsed));
        if let Some(min) = tallies.iter().filter_map(|t| t.elapsed_min).min() {
            f.insert("elapsed_min_ns".into(), ns(min));
        }
        let max = tallies
            .iter()
            .map(|t| t.elapsed_max)
            .max()
            .unwrap_or_default();
        f.insert("elapsed_max_ns".into(), ns(max));
        f.insert("cpu_per_job_ns".into(), per(cpu));
        f.insert("user_per_job_ns".into(), per(sum(|t| t.user)));
        f.insert("sys_per_job_ns".into(), per(sum(|t| t.sys)));
        if !elapsed.is_zero() {
            f.insert("job_cpu_pct".into(), ns(cpu) / ns(elapsed) * 100.0);
        }
    }
    let max_rss = tallies.iter().map(|t| t.max_rss_bytes).max().unwrap_or(0);
    f.insert("max_rss_bytes".into(), max_rss as f64);
    // perflab's own CPU per op (the sampler's, over the measure phase) against the jobs'.
    let job_cpu = sum(|t| t.cpu_all);
    if let Some(own) = trial.resources.process_cpu_ns_per_op
        && all > 0
        && !job_cpu.is_zero()
    {
        f.insert(
            "perflab_cpu_pct".into(),
            own / (ns(job_cpu) / all as f64) * 100.0,
        );
    }
    for t in tallies {
        let n = t.copy + 1;
        f.insert(format!("copy_{n}_cpu_ns"), ns(t.user + t.sys));
        f.insert(format!("copy_{n}_elapsed_ns"), ns(t.elapsed));
        f.insert(format!("copy_{n}_max_rss_bytes"), t.max_rss_bytes as f64);
    }
}

/// A mixed batch's on-CPU share per command, `cmd_<name>_cpu_pct`: its succeeded jobs' CPU
/// time over their elapsed time. A command that only computes (the CPU-bound jobs of a mix)
/// is on a CPU nearly all its time when it has one to itself, so its share says whether the
/// copies waited for a CPU, whatever the I/O of the other commands in the batch.
fn derive_command_shares(tallies: &[CopyTally], names: &[&str], trial: &mut Trial) {
    for (i, name) in names.iter().enumerate() {
        let (cpu, elapsed) = tallies
            .iter()
            .filter_map(|t| t.by_command.get(i))
            .fold((Duration::ZERO, Duration::ZERO), |(c, e), (tc, te)| {
                (c + *tc, e + *te)
            });
        if !elapsed.is_zero() {
            trial.figures.insert(
                format!("cmd_{name}_cpu_pct"),
                cpu.as_nanos() as f64 / elapsed.as_nanos() as f64 * 100.0,
            );
        }
    }
}

/// The jobs of one trial: which command each runs, and the next one to take.
struct Plan {
    commands: Vec<JobCommand>,
    order: Vec<usize>,
    next: AtomicUsize,
    /// `--jobs`: workers share the queue; otherwise copy i runs job i only.
    batch: bool,
}

/// One copy: a worker thread (pinned or not) running jobs one after another.
struct JobSession {
    copy: usize,
    cpus: Vec<usize>,
    plan: Arc<Plan>,
    runner: Runner,
    /// The job claimed by `exhausted` for the next `execute`.
    claimed: Cell<Option<usize>>,
    /// Without `--jobs`: whether this copy has claimed its one job.
    took_own: Cell<bool>,
    last_kind: &'static str,
    tally: CopyTally,
    /// Under MPI: the run's copies, the stride of this copy's jobs in a batch.
    stride: Option<usize>,
    /// Jobs this copy has claimed (the striped batch's position).
    claims: Cell<usize>,
    latency: LatencyHistogram,
    /// The run's stop token: a running job's process group is killed when it is set.
    stop: Stop,
}

/// Makes each stderr file's name unique within the process.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

impl JobSession {
    fn open(
        copy: usize,
        cpus: Vec<usize>,
        plan: Arc<Plan>,
        stride: Option<usize>,
        temp_dir: &std::path::Path,
        stop: &Stop,
    ) -> Result<JobSession, OpError> {
        // Pin this thread before any spawn: each child inherits the mask at fork.
        if !cpus.is_empty() {
            crate::engine::process::pin_current_thread(&cpus).map_err(|e| {
                OpError::other(format!(
                    "cannot pin copy {} to CPU {}: {e}",
                    copy + 1,
                    placement::format_list(&cpus)
                ))
            })?;
        }
        let tag = format!("{copy}-{}", NEXT_FILE.fetch_add(1, Ordering::Relaxed));
        let runner = Runner::new(temp_dir, &tag).map_err(|e| {
            OpError::other(format!(
                "cannot make a file for the jobs' stderr in {}: {e} (set TMPDIR to a writable folder)",
                temp_dir.display()
            ))
        })?;
        Ok(JobSession {
            copy,
            cpus,
            plan,
            runner,
            claimed: Cell::new(None),
            took_own: Cell::new(false),
            last_kind: "",
            tally: CopyTally {
                copy,
                ..Default::default()
            },
            stride,
            claims: Cell::new(0),
            latency: new_histogram(),
            stop: stop.clone(),
        })
    }

    /// Takes the next job, if any is left for this copy.
    fn claim(&self) -> Option<usize> {
        if let Some(j) = self.claimed.get() {
            return Some(j);
        }
        let job = if let (true, Some(stride)) = (self.plan.batch, self.stride) {
            let j = self.copy + self.claims.get() * stride;
            self.claims.set(self.claims.get() + 1);
            (j < self.plan.order.len()).then_some(j)
        } else if self.plan.batch {
            let j = self.plan.next.fetch_add(1, Ordering::SeqCst);
            (j < self.plan.order.len()).then_some(j)
        } else if self.took_own.replace(true) {
            None
        } else {
            (self.copy < self.plan.order.len()).then_some(self.copy)
        };
        self.claimed.set(job);
        job
    }
}

impl Session for JobSession {
    fn exhausted(&self) -> bool {
        self.claim().is_none()
    }

    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let job = self
            .claim()
            .ok_or_else(|| OpError::other("no job left to run (a bug in perflab)"))?;
        self.claimed.set(None);
        let plan = Arc::clone(&self.plan);
        let index = plan.order[job];
        let cmd = &plan.commands[index];
        self.last_kind = cmd.name;
        let run = self.runner.run(&cmd.argv, &self.stop).map_err(|e| {
            self.tally.failed += 1;
            OpError::other(format!("{}: could not run {}: {e}", cmd.name, cmd.argv[0]))
        })?;
        let t = &mut self.tally;
        t.cpu_all += run.usage.cpu();
        t.max_rss_bytes = t.max_rss_bytes.max(run.usage.max_rss_bytes);
        if !run.exit.success() {
            t.failed += 1;
            return Err(OpError::new(
                crate::record::ErrorKind::ExitStatus,
                command::failure(cmd.name, run.exit, &self.runner.stderr_tail()),
            ));
        }
        t.ok += 1;
        t.elapsed += run.elapsed;
        t.elapsed_min = Some(t.elapsed_min.map_or(run.elapsed, |m| m.min(run.elapsed)));
        t.elapsed_max = t.elapsed_max.max(run.elapsed);
        t.user += run.usage.user;
        t.sys += run.usage.sys;
        if t.by_command.len() <= index {
            t.by_command.resize(index + 1, Default::default());
        }
        t.by_command[index].0 += run.usage.user + run.usage.sys;
        t.by_command[index].1 += run.elapsed;
        self.latency
            .saturating_record(run.elapsed.as_nanos().min(u128::from(u64::MAX)) as u64);
        Ok(OpOutcome {
            bytes: 0,
            items: 1,
            kind: cmd.name,
        })
    }

    fn last_kind(&self) -> &'static str {
        self.last_kind
    }

    /// Each copy's jobs, elapsed times and failures, labelled with the CPUs it ran on.
    fn groups(&mut self) -> Vec<GroupTotals> {
        vec![GroupTotals {
            by: "copy",
            key: (self.copy + 1).to_string(),
            label: if self.cpus.is_empty() {
                "not pinned".into()
            } else {
                format!("CPU {}", placement::format_list(&self.cpus))
            },
            ops: self.tally.ok,
            bytes: 0,
            errors: self.tally.failed,
            latency: std::mem::replace(&mut self.latency, new_histogram()),
            active: None,
        }]
    }

    fn finish(&mut self) -> Figures {
        std::mem::take(&mut self.tally).into_figures()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversubscription_is_counted_per_host() {
        use crate::record::{ClusterInfo, RankInfo};
        let other = |cpus: u32| {
            let mut e = crate::env::Environment::default();
            e.cpu.logical_cpus = Some(cpus);
            Some(e)
        };
        // Four ranks on two hosts of 2 CPUs: 8 copies are 4 a host.
        let member = |rank: u64, host: &str, env| RankInfo {
            rank,
            host: host.into(),
            pid: 1,
            env,
        };
        let c = ClusterInfo {
            ranks: 4,
            library: String::new(),
            scope: "total".into(),
            members: vec![
                member(0, "a", None),
                member(1, "a", None),
                member(2, "b", other(2)),
                member(3, "b", other(2)),
            ],
        };
        let hosts = copies_per_host(4, 2, Some(&c));
        assert_eq!(
            hosts.iter().map(|h| (h.copies, h.cpus)).collect::<Vec<_>>(),
            [(2, 2), (2, 2)]
        );
        let hosts = copies_per_host(8, 2, Some(&c));
        assert!(hosts.iter().all(|h| h.copies == 4 && h.ranks == 2));
        // The run's 4 copies over 4 hosts' ranks would not crowd any 2-CPU host; alone,
        // 4 copies on 2 CPUs do.
        assert_eq!(copies_per_host(4, 2, None)[0].copies, 4);
    }

    fn spec(weights: &[u64]) -> JobsSpec {
        let commands = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| JobCommand {
                name: ["a", "b", "c"][i],
                argv: vec!["true".into()],
                weight: w,
            })
            .collect();
        JobsSpec::new(
            commands,
            false,
            None,
            Sweep::single("placement", Placement::None),
            Sweep::single("threads", 1),
        )
    }

    #[test]
    fn a_batch_follows_the_weights_in_a_seeded_order() {
        let s = spec(&[3, 1]);
        let order = s.job_order(400, 7);
        assert_eq!(order.len(), 400);
        assert_eq!(order.iter().filter(|&&c| c == 0).count(), 300);
        assert_eq!(order, s.job_order(400, 7));
        assert_ne!(order, s.job_order(400, 8));
        // Two equal commands over two copies: one of each.
        let mut two = spec(&[1, 1]).job_order(2, 1);
        two.sort();
        assert_eq!(two, vec![0, 1]);
        // Rounding by largest remainder: 1/3 each of 4 jobs.
        let mut c = spec(&[1, 1, 1]).job_order(4, 1);
        c.sort();
        assert_eq!(c, vec![0, 0, 1, 2]);
    }

    #[test]
    fn figures_come_from_the_copies_tallies() {
        let mut trial = Trial {
            elapsed_ns: 2_000_000_000,
            ops: 2,
            ..Default::default()
        };
        trial.resources.process_cpu_ns_per_op = Some(1e6);
        let copy = |copy, secs| CopyTally {
            copy,
            ok: 1,
            elapsed: Duration::from_secs(secs),
            elapsed_min: Some(Duration::from_secs(secs)),
            elapsed_max: Duration::from_secs(secs),
            user: Duration::from_millis(900),
            sys: Duration::from_millis(100),
            cpu_all: Duration::from_secs(1),
            max_rss_bytes: 4096 * secs,
            ..Default::default()
        };
        derive_figures(&[copy(0, 1), copy(1, 2)], &mut trial);
        let f = &trial.figures;
        assert_eq!(f["jobs_per_hour"], 3600.0);
        assert_eq!(f["elapsed_mean_ns"], 1.5e9);
        assert_eq!(f["elapsed_min_ns"], 1e9);
        assert_eq!(f["elapsed_max_ns"], 2e9);
        assert_eq!(f["cpu_per_job_ns"], 1e9);
        assert_eq!(f["max_rss_bytes"], 8192.0);
        assert!((f["perflab_cpu_pct"] - 0.1).abs() < 1e-9);
        assert_eq!(f["copy_2_elapsed_ns"], 2e9);
    }

    #[test]
    fn a_mixed_batch_has_each_commands_cpu_share() {
        let mut trial = Trial::default();
        let s = Duration::from_secs;
        let copy = |copy, by_command| CopyTally {
            copy,
            ok: 1,
            by_command,
            ..Default::default()
        };
        // Through figures and back, as the tallies travel.
        let mut figures = Figures::new();
        figures.extend(copy(0, vec![(s(9), s(10)), (s(1), s(4))]).into_figures());
        figures.extend(copy(1, vec![(s(8), s(10))]).into_figures());
        let tallies = CopyTally::take_all(&mut figures);
        assert!(figures.is_empty());
        derive_command_shares(&tallies, &["cpu", "io"], &mut trial);
        assert_eq!(trial.figures["cmd_cpu_cpu_pct"], 85.0);
        assert_eq!(trial.figures["cmd_io_cpu_pct"], 25.0);
    }
}
