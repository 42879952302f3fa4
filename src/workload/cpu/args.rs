//! `perflab cpu`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::RunArgs;
use clap::Args;

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
