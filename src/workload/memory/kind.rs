//! The memory kind in the registry.

use super::args::MemoryArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::{args, subcommand};
use clap::ArgMatches;

/// What `perflab memory --help` says it does.
const ABOUT: &str = "Memory bandwidth (STREAM kernels), latency (pointer chase) and the lotto test";

/// memory, as the registry sees it.
pub struct MemoryKind;

pub static KIND: MemoryKind = MemoryKind;

impl crate::workload::kind::Kind for MemoryKind {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "memory",
            description: "main memory and caches: STREAM bandwidth, pointer-chase latency, lotto",
        }]
    }

    fn command(&self) -> clap::Command {
        subcommand::<MemoryArgs>("memory", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        Ok(Some(super::cmd::memory_spec(&args(m)?, env)?))
    }

    fn balance_line(&self, record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record))
    }
}
