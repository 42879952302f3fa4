//! The OLAP kind in the registry.

use super::args::OlapArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::{RunRecord, step_number};
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::wrong_answers;
use crate::workload::kind::{Host, args, subcommand};
use crate::workload::run_args::Action;
use clap::ArgMatches;

/// What `perflab olap --help` says it does.
const ABOUT: &str = "OLAP (the Essbase report's phases): a star schema loaded from flat files in parallel through the engine's bulk path, summary tables built, then roll-up, drill, slice and top-N queries as analysts are added; on SQLite (default), PostgreSQL or MySQL";

/// olap, as the registry sees it.
pub struct OlapKind;

pub static KIND: OlapKind = OlapKind;

impl crate::workload::kind::Kind for OlapKind {
    fn name(&self) -> &'static str {
        "olap"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &crate::sql::TARGETS
    }

    fn workers(&self) -> &'static str {
        "analysts"
    }

    /// A check of the loaded rows or the summaries that failed, then a query that gave a
    /// wrong answer.
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let failed: Vec<String> = record
            .steps
            .iter()
            .flat_map(|s| s.checks.iter().filter(|c| !c.passed).map(move |c| (s, c)))
            .map(|(s, c)| format!("step {} {}: {}", step_number(s.index), c.name, c.summary))
            .collect();
        if let Some(first) = failed.first() {
            return Some(format!(
                "{} check(s) failed (run {}); the first: {first}",
                failed.len(),
                record.id
            ));
        }
        let wrong = wrong_answers(record);
        (wrong > 0).then(|| {
            format!(
                "{wrong} quer(ies) gave a wrong answer (run {}; the errors say which)",
                record.id
            )
        })
    }

    fn command(&self) -> clap::Command {
        subcommand::<OlapArgs>("olap", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        let a: OlapArgs = args(m)?;
        if matches!(a.action, Action::Cleanup) {
            return Ok(None);
        }
        Ok(Some(super::cmd::olap_spec(&a, env)?))
    }

    fn once_only(&self, m: &ArgMatches) -> Option<&'static str> {
        let a: OlapArgs = args(m).ok()?;
        a.action.is_setup().then_some("olap prepare or cleanup")
    }

    fn execute(&self, m: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        super::cmd::olap(host, &args(m)?)
    }

    fn findings(&self, record: &RunRecord) -> Vec<String> {
        super::present::fixed_work_finding(record)
            .into_iter()
            .collect()
    }
}
