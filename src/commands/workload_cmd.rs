//! `perflab memory | cpu | null`: one workload, one run, one record.

use super::build::{cpu_spec, memory_spec, null_spec};
use super::io_build::io_spec;
use super::oltp_cmd;
use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::{
    CpuArgs, GlobalArgs, IoArgs, KvAction, KvArgs, MemoryArgs, NullArgs, OltpAction, OltpArgs,
};
use crate::env::Environment;
use crate::record::RunRecord;
use crate::run::RunSpec;
use crate::run::{self, RunError, RunOptions, interrupt};
use crate::ui::{Progress, show};

pub fn memory(g: &GlobalArgs, args: &MemoryArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let spec = memory_spec(args, &env)?;
    execute(g, &spec, env)
}

pub fn cpu(g: &GlobalArgs, args: &CpuArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let spec = cpu_spec(args, &env)?;
    execute(g, &spec, env)
}

pub fn io(g: &GlobalArgs, args: &IoArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let spec = io_spec(args, &env)?;
    let record = execute_record(g, &spec, env)?;
    let bad: u64 = record.steps.iter().map(|s| s.summary.errors).sum();
    if args.verify && bad > 0 {
        return Err(AppError::Failed(format!(
            "verification failed: {bad} I/O(s) found bad or unreadable blocks (see the warnings; run {})",
            record.id
        )));
    }
    Ok(())
}

pub fn oltp(g: &GlobalArgs, args: &OltpArgs) -> Result<(), AppError> {
    if matches!(args.action, OltpAction::Prepare | OltpAction::Cleanup) {
        return oltp_cmd::steps(g, args);
    }
    let env = Environment::collect();
    let spec = oltp_cmd::oltp_spec(args, &env)?;
    let record = execute_record(g, &spec, env)?;
    let bad = record
        .warnings
        .iter()
        .filter(|w| w.code == "inconsistent")
        .count();
    if bad > 0 {
        return Err(AppError::Failed(format!(
            "consistency check failed after {bad} step(s): the books do not balance (run {})",
            record.id
        )));
    }
    Ok(())
}

pub fn kv(g: &GlobalArgs, args: &KvArgs) -> Result<(), AppError> {
    if matches!(args.action, KvAction::Prepare | KvAction::Cleanup) {
        return super::kv_cmd::steps(g, args);
    }
    let env = Environment::collect();
    let spec = super::kv_cmd::kv_spec(args)?;
    execute(g, &spec, env)
}

pub fn mail(g: &GlobalArgs, args: &crate::cli::MailArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let spec = super::mail_cmd::mail_spec(args)?;
    let record = execute_record(g, &spec, env)?;
    // Lost, duplicated or corrupt mail fails the run; a missed quality of service is a
    // finding (a warning), as a slow step is.
    let bad = record
        .warnings
        .iter()
        .filter(|w| w.code == "mail_lost")
        .count();
    if bad > 0 {
        return Err(AppError::Failed(format!(
            "mail was lost, duplicated or corrupted in {bad} step(s) (run {})",
            record.id
        )));
    }
    Ok(())
}

pub fn null(g: &GlobalArgs, args: &NullArgs) -> Result<(), AppError> {
    let spec = null_spec(args)?;
    execute(g, &spec, Environment::collect())
}

/// Runs a spec, saving its record; prints the record (tables, or JSON with `--json`), also
/// when the run stopped early, then reports why it stopped.
fn execute(g: &GlobalArgs, spec: &RunSpec, env: Environment) -> Result<(), AppError> {
    execute_record(g, spec, env).map(|_| ())
}

/// [`execute`], handing back the finished record.
pub(super) fn execute_record(
    g: &GlobalArgs,
    spec: &RunSpec,
    env: Environment,
) -> Result<RunRecord, AppError> {
    run_record(g, spec, env, true)
}

/// Runs a spec, saving its record, and prints the record when `print` (a run that precedes
/// the one a command is about, such as a scan's native ceiling under `--json`, does not:
/// stdout holds one JSON document).
pub(super) fn run_record(
    g: &GlobalArgs,
    spec: &RunSpec,
    env: Environment,
    print: bool,
) -> Result<RunRecord, AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    interrupt::install();
    let progress = Progress::new(g.quiet);
    let options = RunOptions {
        command: command_line(),
        ..Default::default()
    };
    let result = run::run(spec, &env, &archive, &options, &progress);
    progress.finish();
    let saved = match &result {
        Ok(record) => Some(record.clone()),
        Err(RunError::Interrupted { id, .. } | RunError::Failed { id, .. }) => {
            archive.load(id).ok()
        }
        Err(RunError::Archive(_) | RunError::Power(_) | RunError::Refused(_)) => None,
    };
    if let Some(record) = saved.as_ref().filter(|_| print) {
        show(g, record)?;
    }
    result.map_err(AppError::from)
}

/// The record on stdout: tables, or JSON with `--json`.
pub(crate) fn show(g: &GlobalArgs, record: &RunRecord) -> Result<(), AppError> {
    if g.json {
        let text =
            serde_json::to_string_pretty(record).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))
    } else {
        print(&show::render(record))
    }
}

/// The command line as given, for the record, with any password in a URL replaced by `***`.
pub(crate) fn command_line() -> Vec<String> {
    crate::target::url::redact_command_line(&std::env::args().collect::<Vec<_>>())
}

/// Errors of trials where the engine gave a wrong answer (a scan's or a query's check), counted
/// by the trials whose error samples say so: the commands that check answers exit 1 on them.
pub fn wrong_answers(record: &crate::record::RunRecord) -> u64 {
    record
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .filter(|t| t.error_samples.iter().any(|e| e.contains("wrong answer")))
        .map(|t| t.errors)
        .sum()
}
