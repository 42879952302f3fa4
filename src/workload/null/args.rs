//! `perflab null`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::RunArgs;
use clap::Args;

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
