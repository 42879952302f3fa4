//! `run.json`: the archived, versioned result of a run. See docs/output-format.md.

pub use crate::env::disk::DeviceReading;
use crate::env::{CpuUsage, Environment};
pub use crate::stats::Estimate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped when a field changes meaning or disappears, or a reader needs to know a field is
/// there: 2 added `errors_by_kind` to trials and step summaries (records of version 1 load,
/// with it empty).
pub const SCHEMA_VERSION: u32 = 3;

/// One run: its specification, the machine, and one entry per step of the sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunRecord {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: Status,
    /// The workload family (`memory`, `cpu`, `null` ...).
    pub workload: String,
    /// The system under test, with any password removed.
    pub target: String,
    /// The suite this run belongs to, if it was started by `perflab run`.
    pub suite: Option<String>,
    /// Which invocation of the suite (shared by all its runs), so `perflab report --suite`
    /// can gather them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite_run: Option<String>,
    /// The study and leg this run is, when `perflab study` started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub study: Option<StudyRef>,
    /// The command line, with secrets removed.
    pub command: Vec<String>,
    /// The settings that define the run, as its kind chooses them (io: rw, bs, iodepth,
    /// size, direct; oltp: the transactions, the scale, the server and its durability), for
    /// `perflab show`, `perflab runs` and the reports. Absent in records made before 0.2.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    /// Labels given at run time (`--label commit=abc123`), name → value: what a team's
    /// trends and CI gate select runs by. Absent when none were given.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// The exact specification, as the workload serializes it.
    pub spec: serde_json::Value,
    /// Which figure the sweep analysis ranks steps by, and how to show it.
    pub headline: Headline,
    pub env: Environment,
    pub steps: Vec<StepResult>,
    pub analysis: Option<Analysis>,
    pub warnings: Vec<Warning>,
    /// The step the run was in when it stopped early (Ctrl-C, a failure), and why; that
    /// step's figures are not in `steps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<CutShort>,
    /// Where the run's watts come from, or why there are none (absent: a record from before
    /// the sampler, or `--resources off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerDisclosure>,
    /// A `--load-levels` run's calibration, levels and operations per watt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_levels: Option<super::levels::LoadLevels>,
    /// A `--search-users` run's candidates, probes and the value supported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<super::search::Search>,
    /// Under MPI: the ranks, their hosts and machines, and how the load was divided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::record::ClusterInfo>,
}

/// What a run says about the study it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudyRef {
    /// The study's name.
    pub name: String,
    /// The leg this run is.
    pub leg: String,
    /// The study invocation, shared by the runs of one `perflab study` (and its `--resume`).
    pub run: String,
    /// The study file's digest with the command line's `--quick` and flags: `--resume`
    /// reuses a leg only when these are the same.
    pub digest: String,
}

/// The power source of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct PowerDisclosure {
    /// The source read, the domains summed, counters or samples, wall power or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<crate::env::power::PowerMethod>,
    /// Its caveat, or why there is no source.
    pub note: String,
}

/// Where and why a run stopped before its last step finished.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct CutShort {
    /// The step in progress (its index in the sweep) and which repeat of it.
    pub step: usize,
    pub repeat: u32,
    /// The step's swept options (`clients=8`); empty when nothing sweeps.
    pub label: String,
    /// The phase it was in: `open`, `warmup`, `measure`, `drain`, `collect`, or `prepare`
    /// (before any step).
    pub phase: String,
    /// `interrupted` (Ctrl-C) or the failure's message.
    pub reason: String,
    /// Workers still inside an op when the run stopped: they were abandoned, their
    /// connections closed as the process exited.
    pub stuck_workers: u64,
    pub workers: u64,
}

impl Default for RunRecord {
    fn default() -> Self {
        RunRecord {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::this_build(),
            id: String::new(),
            started_at: String::new(),
            finished_at: None,
            status: Status::Incomplete,
            workload: String::new(),
            target: String::new(),
            suite: None,
            suite_run: None,
            study: None,
            command: Vec::new(),
            settings: Vec::new(),
            labels: std::collections::BTreeMap::new(),
            spec: serde_json::Value::Null,
            headline: Headline::default(),
            env: Environment::default(),
            steps: Vec::new(),
            analysis: None,
            warnings: Vec::new(),
            cut_short: None,
            power: None,
            load_levels: None,
            search: None,
            cluster: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// `release` or `debug`: figures from a debug build are not comparable; empty in
    /// records written before perflab said.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub profile: String,
    /// The commit it was built from (`-dirty` with uncommitted changes); empty in records
    /// written before perflab said.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub commit: String,
    /// The CPU level it was compiled for (`x86-64-v2`, `native (x86-64-v3)`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub target_cpu: String,
    /// Optional features built in (`mpi`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The bundled SQLite's version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sqlite: String,
}

impl Default for ToolInfo {
    /// What a record that does not say holds: the name, and nothing of a build.
    fn default() -> Self {
        ToolInfo {
            name: "perflab".into(),
            version: String::new(),
            profile: String::new(),
            commit: String::new(),
            target_cpu: String::new(),
            features: Vec::new(),
            sqlite: String::new(),
        }
    }
}

impl ToolInfo {
    /// This binary.
    pub fn this_build() -> ToolInfo {
        ToolInfo {
            name: "perflab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .into(),
            commit: env!("PERFLAB_COMMIT").into(),
            target_cpu: env!("PERFLAB_TARGET_CPU").into(),
            features: cfg!(feature = "mpi")
                .then(|| "mpi".to_string())
                .into_iter()
                .collect(),
            sqlite: rusqlite::version().into(),
        }
    }

    /// `perflab --version`'s long form, after the program's name (clap writes that).
    pub fn describe(&self) -> String {
        let features = match self.features.is_empty() {
            true => "none".to_string(),
            false => self.features.join(", "),
        };
        format!(
            "{}\ncommit:     {}\ntarget cpu: {}\nprofile:    {}\nfeatures:   {features}\nsqlite:     {}",
            self.version, self.commit, self.target_cpu, self.profile, self.sqlite
        )
    }
}

/// Where a run stands. A record is saved after every step, `incomplete` until the end.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Complete,
    /// Still running, interrupted (Ctrl-C) or killed: the steps present are finished.
    #[default]
    Incomplete,
    /// Stopped by an error; `warnings` says which.
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Incomplete => "incomplete",
            Status::Failed => "failed",
        }
    }
}

/// The figure that ranks the steps of a run: a field of [`Trial`] or one of its `figures`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Headline {
    /// Field name, e.g. `bytes_per_sec`, `ops_per_sec`, `ns_per_load`.
    pub metric: String,
    /// What one op is called in output (`fractals`, `searches`, `passes`).
    pub op_name: String,
    pub higher_is_better: bool,
}

/// One point of the sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct StepResult {
    /// Its 0-based position in the sweep (and in `steps`); people read it as
    /// [`step_number`]`(index)`.
    pub index: usize,
    /// Every option's value at this step (swept or not), in the run's option order.
    pub params: BTreeMap<String, serde_json::Value>,
    /// The options that sweep, in order (outer first), so renderers know the curve's axes.
    pub swept: Vec<String>,
    /// One per repeat.
    pub trials: Vec<Trial>,
    /// Across repeats: mean and 95% confidence interval of the main figures.
    pub summary: StepSummary,
    /// The workload's consistency checks after the step, passed or not, with what they
    /// counted: a reader can see that they ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// The query plan of the step's query, as the engine described it before the step, in
    /// one line (scans: seq or index scan, parallel workers planned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// One consistency check after a step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Check {
    /// What was checked: `books_balance`, `history_growth`, `order_counts`.
    pub name: String,
    /// The shard it ran on (from 1), with several; absent for one database or the total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
    pub passed: bool,
    /// The counts and sums it compared, by name.
    pub figures: BTreeMap<String, i64>,
    /// What it found, in one line (`could not run: ...` when it did not run).
    pub summary: String,
}

/// One measurement of one step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Trial {
    pub repeat: u32,
    pub started_at: String,
    pub workers: u64,
    /// Length of the measure phase.
    pub elapsed_ns: u64,
    pub ops: u64,
    pub items: u64,
    pub bytes: u64,
    pub errors: u64,
    pub ops_per_sec: f64,
    pub items_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Response time: from the intended start in an open loop, from the actual start in a
    /// closed loop (where the two are the same).
    pub latency: LatencySummary,
    /// Open loop only: time from the actual start to the end.
    pub service_latency: Option<LatencySummary>,
    /// Open loop only: how far actual starts fell behind the schedule.
    pub schedule: Option<ScheduleSummary>,
    /// Workload-specific figures, each named with its unit (`ns_per_load`, `alloc_ns`).
    pub figures: BTreeMap<String, f64>,
    /// What the machine and perflab itself did during the measure phase.
    pub resources: Resources,
    /// The failed ops by kind (`timeout`, `reset`, `wrong_answer`...); empty without errors,
    /// and in records of schema 1.
    pub errors_by_kind: super::ErrorsByKind,
    /// The first few distinct error messages.
    pub error_samples: Vec<String>,
    /// How long the failed ops took, from their intended start (none failed: absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_latency: Option<LatencySummary>,
    /// Their histogram, encoded as `latency_hdr` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_latency_hdr: Option<String>,
    /// Response-time histogram: base64 of the compressed HDR V2 format, values in ns.
    pub latency_hdr: String,
    /// Service-time histogram (open loop only), same encoding.
    pub service_latency_hdr: Option<String>,
    /// One point per interval of the measure phase.
    pub series: Vec<IntervalPoint>,
    /// Figures per group (I/O direction, block size, file), merged over workers.
    pub groups: Vec<GroupResult>,
    /// The block devices under the workload's files: what their own counters
    /// (`/proc/diskstats`) saw over the measure phase.
    pub devices: Vec<DeviceReading>,
    /// What each of the system under test's counters (as in `figures`' `<name>_per_sec`)
    /// rose by between the reading just before the measure phase and the one just after it
    /// began: the uncertainty at the phase's start edge, which a check comparing counts op
    /// for op allows for.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub server_start_window: BTreeMap<String, f64>,
    /// Under MPI: how many ranks drove the trial and how closely they kept step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankSync>,
}

/// How the ranks of an MPI run kept step in one trial.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct RankSync {
    /// Ranks in the job.
    pub ranks: u64,
    /// Ranks that ran workers in this trial (`--active-ranks`).
    pub active: u64,
    /// Wall-clock time between the first and the last rank's start of the measure phase.
    pub start_skew_ns: u64,
    /// The same for its end, over the active ranks: a straggling rank shows here.
    pub end_skew_ns: u64,
}

/// One group of a trial's ops: the reads, the 8 KiB I/Os, or one file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct GroupResult {
    /// What the groups divide by: `direction`, `block_size` or `file`.
    pub by: String,
    /// The group: `read`, `write`, `sync`, `8192`, `0` ...
    pub key: String,
    /// What a reader sees (a file's path); may equal `key`.
    pub label: String,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    /// Over the measure phase.
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub latency: LatencySummary,
    /// A file (or MPI rank) far slower than its siblings (see docs/workloads.md).
    pub straggler: bool,
    /// The group's histogram, encoded as `latency_hdr` is: sent between MPI ranks so their
    /// groups merge exactly; kept in records for a job file's jobs (`job`, `job_direction`),
    /// whose percentiles fio's JSON lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_hdr: Option<String>,
    /// How long the group's ops ran when not the whole measure phase (a job that finished
    /// before the others): its rates are over this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    /// A job file's job (`job` groups) with fio's `steadystate`: whether and when its
    /// criterion held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateResult>,
}

/// fio's steady state of one job (with `group_reporting`, of its reporting group): whether
/// and when its criterion held over the rolling window, and the window as it last stood.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct SteadyStateResult {
    /// fio's `steadystate` as it prints it: `iops:10%`, `bw_slope:1%`, `iops:50`.
    pub criterion: String,
    /// The limit: in the criterion's unit (I/Os a second, bytes a second, ns of latency), or
    /// a percent of the window's mean when `percent`.
    pub limit: f64,
    pub percent: bool,
    /// `ss_dur`: the rolling window's length.
    pub duration_ns: u64,
    /// `ss_ramp`: how long the job ran before the first sample was taken.
    pub ramp_ns: u64,
    /// `ss_interval`: one sample per interval.
    pub interval_ns: u64,
    pub attained: bool,
    /// When it was attained, in ns after the job's measure phase began (absent: it was not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attained_after_ns: Option<u64>,
    /// The criterion's value at the last check (the limit's unit); 0 before the window
    /// first filled.
    pub value: f64,
    /// The largest distance of a sample from the window's mean, and the least-squares slope
    /// of the samples per interval, in the samples' unit (fio's `max_deviation`, `slope`).
    pub max_deviation: f64,
    pub slope: f64,
    /// The window's samples, oldest first: I/Os a second, bytes a second and (for the
    /// latency criteria) the mean completion latency in ns.
    pub iops: Vec<u64>,
    pub bw_bytes: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lat_ns: Vec<u64>,
}

impl GroupResult {
    /// Whether `other` counted the same ops with the same bytes, errors and latencies: a
    /// job that only reads is also its own reads, and a step's only reader all its reads.
    pub fn same_figures(&self, other: &GroupResult) -> bool {
        let (x, y) = (&self.latency, &other.latency);
        self.ops == other.ops
            && self.bytes == other.bytes
            && self.errors == other.errors
            && x.mean_ns == y.mean_ns
            && (x.p50_ns, x.p99_ns, x.max_ns) == (y.p50_ns, y.p99_ns, y.max_ns)
    }
}

impl Trial {
    /// A figure by name: a standard field or one of `figures`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "ops_per_sec" => Some(self.ops_per_sec),
            "items_per_sec" => Some(self.items_per_sec),
            "bytes_per_sec" => Some(self.bytes_per_sec),
            "mean_ns" | "latency_mean_ns" => Some(self.latency.mean_ns),
            "p99_ns" => Some(self.latency.p99_ns as f64),
            "errors" => Some(self.errors as f64),
            other => self.figures.get(other).copied(),
        }
    }
}

/// Latency percentiles, all in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// How well an open loop kept its schedule.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ScheduleSummary {
    /// The rate asked for, ops/s over all workers.
    pub target_ops_per_sec: f64,
    /// Ops that started more than `late_threshold_ns` after their intended start.
    pub late_starts: u64,
    pub late_threshold_ns: u64,
    pub mean_lag_ns: f64,
    pub max_lag_ns: u64,
    /// Ops that fell due inside the measure phase but had not started when it ended. Each
    /// is in the response-time histogram with its delay so far (a lower bound on its
    /// response time), not in `ops`.
    pub missed_ops: u64,
    /// Ops not started because they were already later than the workload's limit when
    /// their worker was ready (pgbench's `-L` with `-R`): not in `ops`, `errors` or the
    /// histograms. Absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_ops: u64,
}

/// Machine and process figures over the measure phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Resources {
    /// Whole machine, percent of all CPUs.
    pub cpu: CpuUsage,
    /// perflab's own CPU time (user + system) per op.
    pub process_cpu_ns_per_op: Option<f64>,
    /// The whole phase from the sampler's first and last readings (absent in records
    /// written before the sampler, or with `--resources off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::env::resources::ResourceSummary>,
    /// One point per interval, on the clock of `series`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<crate::env::resources::ResourcePoint>,
}

/// One interval of a step's time series.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct IntervalPoint {
    /// Start of the interval, from the start of the measure phase.
    pub start_ns: u64,
    pub duration_ns: u64,
    pub ops: u64,
    pub errors: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// The latencies behind `p50_ns`, `p99_ns` and `max_ns`: ops timed one by one in this
    /// interval, fewer than `ops` where jobs keep no per-I/O latency (fio's `gtod_reduce`),
    /// and 0 where nothing was timed (then the three are 0 for want of a sample, not fast).
    /// Absent in records written before it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_count: Option<u64>,
    /// Open loop: ops due in this interval's stretch that had not started by the end of the
    /// measure phase (only the last interval can have them).
    #[serde(skip_serializing_if = "is_zero")]
    pub missed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Across the repeats of a step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct StepSummary {
    /// The headline figure.
    pub headline: Estimate,
    pub ops_per_sec: Estimate,
    pub bytes_per_sec: Estimate,
    pub latency_mean_ns: Estimate,
    pub latency_p99_ns: Estimate,
    pub errors: u64,
    /// The errors by kind over the repeats (`timeout`, `reset`, `wrong_answer`...); empty
    /// without errors, and in records of schema 1.
    pub errors_by_kind: super::ErrorsByKind,
}

/// The step number people read for a step's index: 1-based (`index + 1`).
///
/// The convention: the record's step fields (`steps[].index`, `analysis.peak_step`,
/// `warnings[].step`, `cut_short.step` ...) and the CSV export's `step` column hold the
/// 0-based position in the sweep; every text a person reads (the progress line, tables,
/// warnings, findings, check lines, error messages) shows this number instead, so the
/// first step is "step 1" while running and afterwards.
pub fn step_number(index: usize) -> usize {
    index.saturating_add(1)
}

/// What the sweep as a whole shows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Analysis {
    /// The step with the best headline figure.
    pub peak_step: Option<usize>,
    /// The step that maximizes throughput divided by mean response time: the last level
    /// before response time grows faster than throughput.
    pub sweet_spot_step: Option<usize>,
    /// Per step, against the first step of the same curve.
    pub scaling: Vec<Scaling>,
    /// Each throughput curve's knees and, for concurrency sweeps of at least six points, its
    /// Universal Scalability Law fit (see docs/reading-reports.md).
    pub curves: Vec<CurveAnalysis>,
}

/// What one curve of a sweep shows (the steps that differ only in the option along x).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct CurveAnalysis {
    /// The option along the x axis (`threads`, `iodepth` ...).
    pub x: String,
    /// The other swept options' values on this curve (`kernel=triad`); empty for the only one.
    pub label: String,
    /// The steps on the curve, in order of x.
    pub steps: Vec<usize>,
    /// The Universal Scalability Law fitted to throughput against x.
    pub usl: Option<crate::stats::usl::UslFit>,
    /// The knee by Kneedle (Satopää et al.): where the curve bends most.
    pub knee_kneedle_step: Option<usize>,
    /// The knee by Kleinrock's power: the most throughput per unit of mean response time.
    pub knee_power_step: Option<usize>,
    /// The highest throughput that meets a response-time objective (reports with `--slo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloKnee>,
}

/// The highest throughput on a curve that still meets a response-time objective.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct SloKnee {
    /// As given: `p99<10ms`.
    pub objective: String,
    /// Interpolated between the last step that met it and the first that did not.
    pub throughput: f64,
    /// The objective's figure at that throughput.
    pub latency_ns: f64,
    pub interpolated: bool,
    /// The last measured step that met it.
    pub last_step: usize,
}

/// Scaling of one step against the first step of its curve.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Scaling {
    pub step: usize,
    /// headline / headline of the base step.
    pub speedup: f64,
    /// speedup / (parameter / parameter of the base step); 1.0 is linear.
    pub efficiency: Option<f64>,
}

/// One setting that defines a run: `bs` = `4 KiB`, `synchronous_commit` = `on`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(default)]
pub struct Setting {
    pub name: String,
    /// As people read it: a unit, a sweep's values (`1,2,4`), `on`/`off`.
    pub value: String,
}

impl Setting {
    pub fn new(name: &str, value: impl Into<String>) -> Setting {
        Setting {
            name: name.to_string(),
            value: value.into(),
        }
    }
}

/// Settings as one line: `rw randread · bs 4 KiB · iodepth 32`.
pub fn settings_line(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| format!("{} {}", s.name, s.value))
        .collect::<Vec<_>>()
        .join("  ·  ")
}

/// Something the user should know about the run, with what to do about it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Warning {
    /// Stable identifier, e.g. `steal_time`, `repeat_spread`, `interrupted`.
    pub code: String,
    pub message: String,
    /// The step it concerns, if any.
    pub step: Option<usize>,
}
