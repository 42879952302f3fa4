//! The storage kind in the registry (IOzone's surface included).

use super::args::IoArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::{Host, RecordFormat, args, subcommand};
use clap::ArgMatches;

/// What `perflab io --help` says it does.
const ABOUT: &str = "Storage I/O against files, directories or block devices (fio-class): IOPS, bandwidth and latency, ramps over files and queue depths, IOzone's surface";

/// The tools whose flags `perflab io` reads.
static PEERS: &[&crate::workload::peer::Peer] = &[&super::peer::FIO];

/// fio's JSON and json+ of an io run, for `perflab export --format`.
static FORMATS: [RecordFormat; 2] = [
    RecordFormat {
        name: "fio-json",
        about: "fio's JSON output (fio --output-format=json)",
        write: |r, out| super::fio_json::write(r, false, out),
    },
    RecordFormat {
        name: "fio-jsonplus",
        about: "fio's json+ output: fio-json with each latency's histogram bins",
        write: |r, out| super::fio_json::write(r, true, out),
    },
];

/// io, as the registry sees it.
pub struct IoKind;

pub static KIND: IoKind = IoKind;

impl crate::workload::kind::Kind for IoKind {
    fn name(&self) -> &'static str {
        "io"
    }

    /// Outstanding I/Os grow with the workers, the queue depth and the files (one queue per
    /// file); the rate of an open loop is a load too. A job file's groups are different
    /// jobs, not levels of one load.
    fn axes(&self) -> crate::analysis::curve::Axes {
        crate::analysis::curve::Axes {
            load: &["threads", "iodepth", "files", "rate"],
            concurrency: &["threads", "iodepth", "files"],
            apart: &["group"],
        }
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "PATH",
            description: "storage: a directory (perflab creates its files there), a file, or a block device",
        }]
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["io_surface"]
    }

    fn peers(&self) -> &'static [&'static crate::workload::peer::Peer] {
        PEERS
    }

    /// With `--verify` (or a job file's job with `verify`), a block that does not read back
    /// as written fails the run; so does a job file's job that fell below its `rate_min`
    /// (fio's exit status is 1 then too).
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let jobs = record.spec.get("jobs").and_then(|j| j.as_array());
        let with = |field: &str| -> Vec<&str> {
            jobs.into_iter()
                .flatten()
                .filter(|j| j.get(field).is_some_and(|v| !v.is_null()))
                .filter_map(|j| j.get("name")?.as_str())
                .collect()
        };
        let verify = record.spec.get("verify").and_then(|v| v.as_bool()) == Some(true)
            || !with("verify").is_empty();
        let bad: u64 = record.steps.iter().map(|s| s.summary.errors).sum();
        if verify && bad > 0 {
            return Some(format!(
                "verification failed: {bad} I/O(s) found bad or unreadable blocks (see the warnings; run {})",
                record.id
            ));
        }
        let floors = with("min_rate");
        let below: u64 = record
            .steps
            .iter()
            .flat_map(|s| s.trials.iter().flat_map(|t| &t.groups))
            .filter(|g| g.by == "job" && floors.contains(&g.key.as_str()))
            .map(|g| g.errors)
            .sum();
        (below > 0).then(|| {
            format!(
                "a job fell below its rate_min or rate_iops_min ({below} error(s): see the warnings; run {})",
                record.id
            )
        })
    }

    /// A job file's steady states: whether and when each job reached it.
    fn findings(&self, record: &RunRecord) -> Vec<String> {
        super::jobsteady::findings(record)
    }

    fn command(&self) -> clap::Command {
        subcommand::<IoArgs>("io", ABOUT)
    }

    /// fio's `--output-format=json`: the run as usual, then fio's JSON of its record on
    /// stdout in place of perflab's tables.
    fn execute(&self, m: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        let format: Option<String> = m.get_one::<String>("output_format").cloned();
        let plus = match format.as_deref() {
            Some("json") => false,
            Some("json+") => true,
            _ => return crate::workload::kind::run_spec(self, m, host),
        };
        if host.json() {
            return Err(AppError::Usage(
                "--json is perflab's record and --output-format=json fio's JSON: give one".into(),
            ));
        }
        let env = Environment::collect();
        let Some(spec) = self.spec(m, &env)? else {
            return Ok(());
        };
        let record = host.run(&spec, env, false)?;
        let doc = super::fio_json::document(&record, plus);
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| AppError::Usage(e.to_string()))?
        );
        Ok(())
    }

    fn spec(&self, m: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError> {
        let args: IoArgs = args(m)?;
        if !args.job_files.is_empty() || args.fio_job.is_some() {
            return super::jobs_cmd::spec(&args, m);
        }
        if args.dry_run {
            return Err(AppError::Usage(
                "--dry-run prints a job file's plan: give the job file (perflab io JOB.fio --dry-run)".into(),
            ));
        }
        Ok(Some(super::cmd::io_spec(&args, env)?))
    }

    /// A job file's groups run as their jobs say, not for the runner's step length.
    fn describe_work(&self, spec: &serde_json::Value) -> Option<String> {
        super::jobrun::describe(spec)
    }

    fn formats(&self) -> &'static [RecordFormat] {
        &FORMATS
    }

    fn balance_line(&self, record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record))
    }
}
