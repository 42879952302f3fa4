//! The CPU kind in the registry.

use super::args::CpuArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::{args, subcommand};
use clap::ArgMatches;

/// What `perflab cpu --help` says it does.
const ABOUT: &str = "CPU throughput: Mandelbrot fractals per second against threads";

/// cpu, as the registry sees it.
pub struct CpuKind;

pub static KIND: CpuKind = CpuKind;

impl crate::workload::kind::Kind for CpuKind {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "cpu",
            description: "the processors: Mandelbrot fractals (half integer, half floating point)",
        }]
    }

    fn command(&self) -> clap::Command {
        subcommand::<CpuArgs>("cpu", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        Ok(Some(super::cmd::cpu_spec(&args(m)?, env)?))
    }

    fn balance_line(&self, record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record))
    }
}
