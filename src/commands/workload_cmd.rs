//! The workload commands: one workload, one run, one record; what fails a finished run is its
//! kind's rule (`crate::workload::kind`).

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
    execute(g, &spec, env)
}

pub fn oltp(g: &GlobalArgs, args: &OltpArgs) -> Result<(), AppError> {
    if matches!(args.action, OltpAction::Prepare | OltpAction::Cleanup) {
        return oltp_cmd::steps(g, args);
    }
    let env = Environment::collect();
    let spec = oltp_cmd::oltp_spec(args, &env)?;
    execute(g, &spec, env)
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
    execute(g, &spec, env)
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
    let record = result?;
    // What fails a finished run is its kind's rule (books that do not balance, mail lost).
    match crate::workload::kind::by_name(&record.workload).and_then(|k| k.failure(&record)) {
        Some(why) => Err(AppError::Failed(why)),
        None => Ok(record),
    }
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
