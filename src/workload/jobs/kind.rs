//! The batch jobs kind in the registry.

use super::args::JobsArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::present::table::Table;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::{args, subcommand};
use clap::ArgMatches;

/// What `perflab jobs --help` says it does.
const ABOUT: &str = "Batch jobs: K copies of a command at once (or a batch of N jobs through K slots), pinned compact, spread or not; jobs per hour, elapsed and CPU per job, and the throughput relative to one copy alone";

/// jobs, as the registry sees it.
pub struct JobsKind;

pub static KIND: JobsKind = JobsKind;

impl crate::workload::kind::Kind for JobsKind {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "COMMAND",
            description: "any program (--command), run as K copies at once or a batch of N jobs through K slots",
        }]
    }

    fn workers(&self) -> &'static str {
        "copies"
    }

    /// Its per-copy figures have a table of their own.
    fn hidden(&self) -> &'static [crate::workload::kind::Hidden] {
        &[crate::workload::kind::Hidden::Prefix("copy_")]
    }

    fn command(&self) -> clap::Command {
        subcommand::<JobsArgs>("jobs", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        Ok(Some(super::cmd::jobs_spec(&args(m)?, env)?))
    }

    /// Any job that failed (a non-zero exit, a signal, a timeout), with the first one's reason.
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let failed: u64 = record.steps.iter().map(|s| s.summary.errors).sum();
        (failed > 0).then(|| {
            let first = record
                .steps
                .iter()
                .flat_map(|s| &s.trials)
                .flat_map(|t| &t.error_samples)
                .next()
                .map(|e| e.lines().next().unwrap_or_default().to_string())
                .unwrap_or_default();
            format!(
                "{failed} job(s) failed (run {}); the first: {first}",
                record.id
            )
        })
    }

    /// Its commands and copies; no breakdown by group (its groups are those).
    fn tables(&self, record: &RunRecord) -> Vec<(String, Table)> {
        super::present::tables(record)
    }

    /// Throughput relative to one copy, and the time to finish a batch.
    fn scaling(&self, record: &RunRecord) -> Option<Vec<String>> {
        Some(super::present::findings(record))
    }

    fn describe_work(&self, spec: &serde_json::Value) -> Option<String> {
        Some(super::present::describe(spec))
    }
}
