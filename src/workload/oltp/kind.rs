//! The OLTP kind in the registry.

use super::args::OltpArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::warnings_with;
use crate::workload::kind::{Host, args, run_spec, subcommand};
use clap::ArgMatches;

/// What `perflab oltp --help` says it does.
const ABOUT: &str =
    "OLTP: DebitCredit (TPC-B, pgbench-compatible) on a database; SQLite needs no server";

/// oltp, as the registry sees it.
pub struct OltpKind;

pub static KIND: OltpKind = OltpKind;

/// The tools whose flags `perflab oltp` reads.
static PEERS: &[&crate::workload::peer::Peer] =
    &[&super::peer::PGBENCH, &super::sysbench::SYSBENCH];

impl crate::workload::kind::Kind for OltpKind {
    fn name(&self) -> &'static str {
        "oltp"
    }

    fn peers(&self) -> &'static [&'static crate::workload::peer::Peer] {
        PEERS
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &crate::sql::TARGETS
    }

    /// Trouble counted per client (retries, reconnects, TPC-C's rollbacks) shows only where
    /// there was some.
    /// sysbench's figures (`sb_`) are in a table of their own.
    fn hidden(&self) -> &'static [crate::workload::kind::Hidden] {
        &[
            crate::workload::kind::Hidden::UnlessNonZero("_per_client"),
            crate::workload::kind::Hidden::Prefix(super::sysbench::figures::PREFIX),
        ]
    }

    /// The breakdowns, then sysbench's statistics (and histograms) for its tests.
    fn tables(&self, record: &RunRecord) -> Vec<(String, crate::present::table::Table)> {
        let mut out = crate::workload::kind::breakdowns(record, self.words());
        out.extend(super::sysbench::figures::tables(record));
        out
    }

    fn workers(&self) -> &'static str {
        "clients"
    }

    /// A consistency check that found the database wrong after a step, or could not run
    /// (then nothing is known either way, and the command says so rather than pass).
    fn failure(&self, record: &RunRecord) -> Option<String> {
        if let Some(why) = aborted_clients(record) {
            return Some(why);
        }
        let bad = warnings_with(record, "inconsistent");
        let unknown = warnings_with(record, "check_not_run");
        if bad > 0 {
            return Some(format!(
                "consistency check failed after {bad} step(s): the database lost or duplicated updates (run {})",
                record.id
            ));
        }
        (unknown > 0).then(|| {
            format!(
                "the consistency check could not run after {unknown} step(s): whether the database is consistent is not known (run {})",
                record.id
            )
        })
    }

    fn command(&self) -> clap::Command {
        subcommand::<OltpArgs>("oltp", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        let a: OltpArgs = args(m)?;
        if a.action.is_setup() {
            return Ok(None);
        }
        Ok(Some(super::cmd::oltp_spec(&a, env)?))
    }

    fn once_only(&self, m: &ArgMatches) -> Option<&'static str> {
        let a: OltpArgs = args(m).ok()?;
        a.action.is_setup().then_some("oltp prepare or cleanup")
    }

    fn execute(&self, m: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        let a: OltpArgs = args(m)?;
        // `-b list`, as pgbench: the built-in scripts, and nothing run.
        if a.builtin.iter().any(|b| b == "list") {
            print!("{}", super::script::setup::listing());
            return Ok(());
        }
        if a.action.is_setup() {
            return super::cmd::steps(host, &a);
        }
        run_spec(self, m, host)
    }

    fn balance_line(&self, record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record))
    }
}

/// `--abort-on-error` (pgbench's rule): clients that stopped at an error leave the run
/// incomplete, as pgbench's "Run was aborted".
fn aborted_clients(record: &RunRecord) -> Option<String> {
    let mut aborted = 0.0;
    for s in &record.steps {
        for t in &s.trials {
            let share = t.figures.get("aborted_per_client").copied().unwrap_or(0.0);
            aborted += share * t.workers as f64;
        }
    }
    (aborted > 0.0).then(|| {
        format!(
            "{} client(s) aborted at an error (pgbench's rule, --abort-on-error): the run is incomplete (see the warnings; run {})",
            aborted.round(),
            record.id
        )
    })
}
