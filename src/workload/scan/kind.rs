//! The table scan kind in the registry.

use super::args::ScanArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::wrong_answers;
use crate::workload::kind::{Host, args, subcommand};
use clap::ArgMatches;

/// The databases the SQL kinds share, then the native ceiling.
static SCAN_TARGETS: [TargetEntry; 4] = [
    crate::sql::TARGETS[0],
    crate::sql::TARGETS[1],
    crate::sql::TARGETS[2],
    TargetEntry {
        name: "native",
        description: "the native ceiling: perflab's own scan of the scan tables' rows from memory, every byte read",
    },
];

/// What `perflab scan --help` says it does.
const ABOUT: &str = "Table scans (Gray's study): tables of 10 B, 100 B, 1 KB and 8 KB rows, a trivial and a complex predicate, cold and warm, on SQLite (default), PostgreSQL or MySQL, beside perflab's own scan of the same rows in memory (the native ceiling)";

/// scan, as the registry sees it.
pub struct ScanKind;

pub static KIND: ScanKind = ScanKind;

impl crate::workload::kind::Kind for ScanKind {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &SCAN_TARGETS
    }

    fn workers(&self) -> &'static str {
        "clients"
    }

    /// A scan that gave a wrong answer (a count or sum that is not the table's).
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let wrong = wrong_answers(record);
        (wrong > 0).then(|| {
            format!(
                "{wrong} scan(s) gave a wrong answer (run {}; the errors say which)",
                record.id
            )
        })
    }

    fn command(&self) -> clap::Command {
        subcommand::<ScanArgs>("scan", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        let a: ScanArgs = args(m)?;
        if a.action.is_setup() {
            return Ok(None);
        }
        Ok(Some(super::cmd::scan_spec(&a, env)?))
    }

    fn once_only(&self, m: &ArgMatches) -> Option<&'static str> {
        let a: ScanArgs = args(m).ok()?;
        a.action.is_setup().then_some("scan prepare or cleanup")
    }

    fn execute(&self, m: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        super::cmd::scan(host, &args(m)?)
    }

    fn balance_line(&self, record: &RunRecord, suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record, suite))
    }

    fn findings(&self, record: &RunRecord) -> Vec<String> {
        super::present::ceiling_finding(record)
            .into_iter()
            .collect()
    }
}
