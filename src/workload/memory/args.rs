//! `perflab memory`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::RunArgs;
use clap::Args;

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
