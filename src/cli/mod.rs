//! The command line: clap definitions only. Values stay text here (sweeps and units are read
//! by `crate::spec`), so that every check and every error message lives in one place.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// perflab: curves of throughput and response time for a machine's memory and CPU (and,
/// coming, storage, databases and caches), archived and comparable.
#[derive(Debug, Parser)]
#[command(name = "perflab", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Results folder (default: $PERFLAB_RESULTS, else $XDG_DATA_HOME/perflab, else ~/.local/share/perflab)
    #[arg(long, global = true, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print the record (or listing) as JSON on stdout instead of tables
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress display on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite: by default the machine balance sheet (memory and CPU)
    Run(SuiteArgs),
    /// Memory bandwidth (STREAM kernels), latency (pointer chase) and the lotto test
    Memory(MemoryArgs),
    /// CPU throughput: Mandelbrot fractals per second against threads
    Cpu(CpuArgs),
    /// The null target: ops that do nothing, to measure perflab itself
    Null(NullArgs),
    /// List the archived runs
    Runs,
    /// Show an archived run as tables
    Show(ShowArgs),
    /// Export an archived run
    Export(ExportArgs),
    /// Print the disclosure of this machine
    Sysinfo,
    /// List the targets perflab can measure
    Targets,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Suite name
    #[arg(default_value = "default", value_name = "SUITE")]
    pub suite: String,
    /// Short steps: the whole suite within about a minute
    #[arg(long)]
    pub quick: bool,
}

/// Options every workload shares. Numeric options sweep: `1,2,4`, `1..8`, `1..64:x2`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Worker threads; sweeps (fio --numjobs, pgbench --jobs)
    #[arg(long, short = 't', value_name = "N|SWEEP")]
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
    /// Whether --rate is for all workers together or for each worker
    #[arg(long, value_enum, default_value = "total", requires = "rate")]
    pub rate_scope: crate::spec::RateScope,
    /// Spacing of open-loop starts (fio --rate_process)
    #[arg(long, value_enum, default_value = "poisson", requires = "rate")]
    pub arrival: crate::spec::Arrival,
    /// Closed loop: pause after each op (fio --thinktime)
    #[arg(long, value_name = "TIME", conflicts_with = "rate")]
    pub think: Option<String>,
    /// Seed of every random choice, for repeatable op streams
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,
    /// Length of one point of the per-step time series
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub interval: String,
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Kernels: read, write, copy, scale, add, triad (bandwidth); latency; lotto. A list sweeps.
    #[arg(long, short = 'k', value_name = "LIST", default_value = "copy,triad")]
    pub kernel: String,
    /// Bandwidth: bytes of each array, split over threads (default 4x the last-level cache);
    /// latency: working set (default 16k up to 4x the last-level cache); lotto: table per thread
    #[arg(long, short = 's', value_name = "SIZE|SWEEP")]
    pub size: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct CpuArgs {
    /// Pixels per side of one fractal
    #[arg(long, value_name = "N|SWEEP")]
    pub side: Option<String>,
    /// Iterations before a point counts as inside the set
    #[arg(long, value_name = "N|SWEEP")]
    pub max_iter: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct NullArgs {
    /// Busy time per op (0: none); sweeps
    #[arg(long, value_name = "TIME|SWEEP", default_value = "0")]
    pub spin: String,
    /// Make every Nth op of each worker fail, to test error accounting
    #[arg(long, value_name = "N", default_value = "0")]
    pub fail_every: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id, a unique prefix of one, or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id, a unique prefix of one, or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
    #[arg(long, short = 'f', value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout (refuses to replace a file that exists)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The record itself
    Json,
    /// One row per trial of each step
    Csv,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
