//! Workloads: what operations are issued, in what mix, against which target.
//!
//! A workload's specification type *is* the workload: it holds the workload's own options
//! (some of them [`Sweep`]s) and implements [`Workload`], which tells the runner which options
//! sweep, how to open one [`Session`] per worker for a step, and which figure ranks the steps.
//! [`kind`] is the registry the layers above ask: each kind's subcommand, spec, setup
//! actions, exit rule, tables, findings, charts and balance-sheet line. [`WorkloadSpec`] is
//! any kind's spec behind one type (the record's `spec`, the runner's way in), and
//! [`RunSpec`] adds the options every kind shares ([`run_args`], read by [`build`]). Adding a
//! workload is a folder and a line in [`kind::KINDS`] (docs/architecture.md works through
//! `null`). No kind names another (`tests/layers.rs` holds them to it): what two kinds share
//! sits here, beside them: [`distribution`] (io's offsets, kv's keys), [`phases`] (oltp's,
//! scan's and kv's `prepare` and `run`), [`rng`]; SQL connecting and options are
//! [`crate::sql`]'s.
//!
//! - [`null`]: does nothing, to measure the harness itself.
//! - [`memory`]: STREAM bandwidth kernels, pointer-chase latency, the "lotto" test.
//! - [`cpu`]: Mandelbrot fractals with a hand-written complex type (iGenCPU).
//! - [`io`]: storage I/O as fio does it, and IOzone's file-size x record-size surface.
//! - [`oltp`]: DebitCredit and order entry on SQLite, PostgreSQL and MySQL.
//! - [`kv`]: gets and sets on memcached and Redis.
//! - [`mail`]: SPECmail-style users on a mail server: SMTP/LMTP delivery, IMAP and POP3
//!   sessions, every message accounted for.
//! - [`scan`]: Gray's table scans on SQLite, PostgreSQL and MySQL, and the native ceiling.
//! - [`olap`]: a star schema loaded from flat files, aggregated and queried (the Essbase
//!   report's three phases) on the same databases.
//! - [`jobs`]: K copies of a command (or a batch of N jobs through K slots), pinned compact,
//!   spread or not: jobs per hour against copies.

pub mod build;
pub mod cpu;
pub mod distribution;
pub mod io;
pub mod jobs;
pub mod kind;
pub mod kv;
pub mod mail;
pub mod memory;
pub mod null;
pub mod olap;
pub mod oltp;
pub mod peer;
pub mod phases;
pub mod rng;
pub mod run_args;
pub mod run_spec;
pub mod scan;
pub mod session;

pub use run_spec::{Arrival, LoadSpec, RateScope, RunSpec, StopSpec};
pub use session::{
    Failure, Figures, GroupTotals, OpError, OpOutcome, OpResult, Pump, QueuedSession, Session,
};

use crate::record::{Headline, StepResult, Trial, Warning};
use crate::vocab::{Axis, StepPoint};
use serde::Serialize;
use std::sync::Arc;

/// Opens the session of worker `worker` (of `workers`) for one step, inside that worker's thread.
pub type SessionFactory =
    Arc<dyn Fn(usize, usize) -> Result<Box<dyn Session>, OpError> + Send + Sync>;

/// What the runner hands a workload with every call that does work (opening sessions,
/// preparing): the run's stop token, which every wait watches, and how many MPI ranks drive
/// the run.
#[derive(Debug, Clone)]
pub struct Context {
    pub stop: crate::stop::Stop,
    /// Ranks in the job (1 without a launcher).
    pub ranks: usize,
}

impl Context {
    /// One process, with a token nothing sets: for tests and tools that drive a workload
    /// without a run.
    pub fn alone() -> Context {
        Context {
            stop: crate::stop::Stop::new(),
            ranks: 1,
        }
    }
}

/// What the runner needs from a workload.
pub trait Workload: AsSpec {
    /// The workload family, as in the command (`memory`).
    fn name(&self) -> &'static str;
    /// The system under test, with secrets removed (`memory`, `sqlite:///tmp/x.db`).
    fn target(&self) -> String;
    /// The workload's own options that may sweep, in the order the user thinks of them.
    fn axes(&self) -> Vec<&dyn Axis>;
    /// The figure that ranks steps.
    fn headline(&self) -> Headline;
    /// The settings that define the run, as its users name them (io: rw, bs, iodepth, size,
    /// direct), for the record: what `perflab show` and `perflab runs` say it ran. The shared
    /// options (threads, duration, rate) are the record's own.
    fn settings(&self) -> Vec<crate::record::Setting> {
        Vec::new()
    }
    /// Whether the grid point `point` is not a step of this workload (IOzone's surface has no
    /// record larger than its file).
    fn skip(&self, _point: &StepPoint) -> bool {
        false
    }
    /// Whether the step at `point` is a fixed amount of work done once (loading files,
    /// building tables) rather than ops repeated for a time: `Some(workers)` runs it with that
    /// many workers (whatever the threads axis says), with no time limit and no warmup (unless
    /// [`Workload::step_shape`] gives one: the work goes on through it, its ops thrown away);
    /// each session works until it is [`Session::exhausted`], and the step's time runs from
    /// the start until the last worker finished. `None` (the default): a timed step.
    fn fixed_work(&self, _point: &StepPoint) -> Option<usize> {
        None
    }
    /// The step's workers, warmup and end when the workload sets them itself, whatever the
    /// run's threads, `--warmup` and `--duration` say: a job file's group of jobs runs as many
    /// workers as its jobs have copies, for the jobs' own `runtime` after their `ramp_time`.
    /// In a step of fixed work only the warmup counts. `None` (the default): the run's.
    fn step_shape(&self, _point: &StepPoint) -> Option<StepShape> {
        None
    }
    /// The rate worker `worker` of the step at `point` keeps, in ops per second, when the
    /// workload paces its workers itself (a job file's job with `rate_iops`): that worker runs
    /// open loop at it, whatever the run's `--rate` says. `None` (the default): the run's.
    fn worker_pace(&self, _point: &StepPoint, _worker: usize) -> Option<(f64, Arrival)> {
        None
    }
    /// How to open sessions for the step at `point`. `seed` is the run's seed.
    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError>;
    /// Adds figures derived from a finished trial (e.g. ns per load from the mean op time).
    fn derive(&self, _point: &StepPoint, _trial: &mut Trial) {}

    /// Work before the first step (creating and filling files). What it returns is dropped
    /// after the last step, or when the run stops early: that is where cleanup goes.
    /// `note` prints a progress line; a Ctrl-C sets `ctx.stop`, and the work stops with an
    /// error soon after.
    fn prepare(&self, _ctx: &Context, _note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        Ok(Box::new(()))
    }

    /// What the user should know before any step runs (found while planning it); under
    /// MPI, `cluster` says which rank runs on which host.
    fn run_warnings(&self, cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        let _ = cluster;
        Vec::new()
    }

    /// The block devices (kernel names) whose counters the runner samples around each
    /// measure phase.
    fn devices(&self) -> Vec<String> {
        Vec::new()
    }

    /// Marks what only the whole step shows (stragglers among files, the consistency checks
    /// after it), before it is saved.
    fn finish_step(&self, _step: &mut StepResult, _ctx: &Context) {}

    /// Cumulative counters of the system under test (a server's WAL syncs, commits), by
    /// name. The runner samples them around each measure phase and records each one's rate
    /// as the figure `<name>_per_sec`.
    fn server_counters(&self, _ctx: &Context) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// The workload's own warnings about a finished step (stragglers, disagreement with the
    /// device's counters).
    fn step_warnings(&self, _step: &StepResult) -> Vec<Warning> {
        Vec::new()
    }

    /// The open-loop rate (ops per second over the whole run) the step at `point` offers,
    /// when the workload sets it itself: mail's sessions follow from its user count. The
    /// runner then runs the step open loop with Poisson arrivals, as for `--rate`.
    fn offered_rate(&self, _point: &StepPoint) -> Option<f64> {
        None
    }

    /// Bytes of files the run creates at most (its largest step), so that a study can say
    /// what space it needs before it starts, and refuse when it is not there.
    fn disk_bytes(&self) -> u64 {
        0
    }

    /// How the workload runs when an MPI launcher started several ranks.
    fn scale_out(&self) -> ScaleOut {
        ScaleOut::Unsupported("it does not run under MPI yet")
    }
}

/// A timed step's shape as its workload sets it ([`Workload::step_shape`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepShape {
    pub workers: usize,
    pub warmup: std::time::Duration,
    pub stop: StopSpec,
}

/// How a workload runs over several MPI ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleOut {
    /// Each rank measures its own host (memory, CPU, its own files): each prepares its own.
    EachRank,
    /// The ranks drive one system under test (a server): rank 0 prepares it, once.
    SharedTarget,
    /// Not under MPI, and why (the fix is to run it without mpirun).
    Unsupported(&'static str),
}

/// What [`Workload::prepare`] leaves for the run; dropping it cleans up.
pub type Prepared = Box<dyn std::any::Any>;

/// A kind's workload as a run holds it: what the runner drives, and what the record's `spec`
/// says (the workload's own options, tagged with its name). Any kind's spec type fits; no
/// layer needs a list of them.
#[derive(Clone)]
pub struct WorkloadSpec(Arc<dyn Workload + Send + Sync>);

impl WorkloadSpec {
    pub fn new(workload: impl Workload + Send + Sync + 'static) -> WorkloadSpec {
        WorkloadSpec(Arc::new(workload))
    }

    pub fn workload(&self) -> &dyn Workload {
        self.0.as_ref()
    }

    pub fn axes(&self) -> Vec<&dyn Axis> {
        self.workload().axes()
    }

    /// The kind's own spec type, for the kind's code that built it.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl std::fmt::Debug for WorkloadSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WorkloadSpec({})", self.0.name())
    }
}

/// `{"workload": NAME, ...its options}`, the shape records have always had.
impl Serialize for WorkloadSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let options = match self.0.to_json() {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) => serde_json::Map::new(),
            Err(e) => return Err(S::Error::custom(e)),
        };
        let mut map = serializer.serialize_map(Some(options.len() + 1))?;
        map.serialize_entry("workload", self.0.name())?;
        for (k, v) in &options {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What every workload spec can do by being `Serialize`: show its options as JSON, and be
/// looked at as itself by its kind's code.
pub trait AsSpec {
    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error>;
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: Serialize + 'static> AsSpec for T {
    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
