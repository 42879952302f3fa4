//! The options every workload shares, as each kind's command takes them (flattened into its
//! arguments). Numeric options sweep: `1,2,4`, `1..8`, `1..64:x2`.

use clap::{Args, ValueEnum};

/// Options every workload shares. Numeric options sweep: `1,2,4`, `1..8`, `1..64:x2`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Worker threads (for oltp: clients, each with its own connection; alias --clients);
    /// sweeps (fio --numjobs, pgbench --clients)
    #[arg(long, short = 't', visible_alias = "clients", value_name = "N|SWEEP")]
    pub threads: Option<String>,
    /// Warm-up before each step is measured (fio --ramp_time)
    #[arg(long, value_name = "TIME")]
    pub warmup: Option<String>,
    /// Measure each step this long (fio --runtime, pgbench --time)
    #[arg(long, short = 'd', value_name = "TIME", conflicts_with = "ops")]
    pub duration: Option<String>,
    /// Measure each step for this many ops over all workers instead of a time (fio --number_ios)
    #[arg(long, value_name = "N")]
    pub ops: Option<String>,
    /// Run each step N times; steps report mean and 95% confidence interval
    #[arg(long, value_name = "N", default_value = "1")]
    pub repeat: String,
    /// Open loop: start ops at this rate (e.g. 1000/s; sweeps), timing responses from the
    /// intended start (fio --rate_iops, pgbench --rate)
    #[arg(long, value_name = "RATE|SWEEP")]
    pub rate: Option<String>,
    /// Whether --rate is for all workers together or for each worker (default: total; for
    /// oltp, worker: a rate per user, the stabilized load). Under MPI, total and worker
    /// divide --threads and --ops over the active ranks; rank gives each active rank
    /// --threads, --ops and --rate whole
    #[arg(long, value_enum)]
    pub rate_scope: Option<super::RateScope>,
    /// Under MPI: how many ranks drive the load (e.g. 1..8; sweeps): the curve against
    /// client hosts. Default: every rank
    #[arg(long, value_name = "N|SWEEP")]
    pub active_ranks: Option<String>,
    /// Spacing of open-loop starts (fio --rate_process)
    #[arg(long, value_enum, default_value = "poisson", requires = "rate")]
    pub arrival: super::Arrival,
    /// Closed loop: pause after each op (fio --thinktime)
    #[arg(long, value_name = "TIME", conflicts_with = "rate")]
    pub think: Option<String>,
    /// Options that step together instead of crossing, e.g. threads,files (IOzone's -t: one
    /// file per thread); each sweeps as many values; repeatable for another group
    #[arg(long, value_name = "OPT,OPT")]
    pub zip: Vec<String>,
    /// Seed of every random choice, for repeatable op streams
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,
    /// Length of one point of the per-step time series
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Read the machine's counters every interval (CPU, memory, network, disks, power);
    /// off only to measure the sampler's own cost
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub resources: crate::vocab::Switch,
    /// A power meter: a command printing watts (e.g. a PDU query), run every interval; its
    /// readings are recorded as the run's power
    #[arg(long, value_name = "CMD")]
    pub power_cmd: Option<String>,
    /// SPECpower's graduated load levels, in percent of a calibrated maximum (e.g.
    /// 100..10:-10,0; 0 is active idle): calibrate at full speed, then run each level open
    /// loop at that share; reports watts and ops per watt where power is readable
    #[arg(long, value_name = "PCT,..", conflicts_with_all = ["rate", "think", "ops"])]
    pub load_levels: Option<String>,
    /// Full-speed calibration steps before the load levels; the maximum is the mean of the
    /// last two
    #[arg(long, value_name = "N", default_value = "3", requires = "load_levels")]
    pub calibrate: String,
}

/// The steps of a kind that prepares a system under test (oltp, scan, olap, kv), as
/// sysbench names them: `all` (prepare, run, clean up: the default), `prepare` (load and
/// keep), `run` (against what was prepared) or `cleanup` (drop what prepare made).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    All,
    Prepare,
    Run,
    Cleanup,
}

impl Action {
    /// `prepare` or `cleanup`: setting up or tearing down, not a run.
    pub fn is_setup(self) -> bool {
        matches!(self, Action::Prepare | Action::Cleanup)
    }
}
