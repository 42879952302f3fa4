//! The workload commands: one workload, one run, one record; what fails a finished run is its
//! kind's rule (`crate::workload::kind`).

use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::GlobalArgs;
use crate::env::Environment;
use crate::record::RunRecord;
use crate::run::{self, RunError, RunOptions, interrupt};
use crate::ui::show;
use crate::workload::RunSpec;
use crate::workload::kind::Host;

/// The commands as a kind's command sees them ([`Host`]): runs archived and shown, and the
/// user's global options.
pub struct Commands<'a> {
    pub global: &'a GlobalArgs,
}

impl Host for Commands<'_> {
    fn run(&self, spec: &RunSpec, env: Environment, print: bool) -> Result<RunRecord, AppError> {
        run_record(self.global, spec, env, print)
    }

    fn json(&self) -> bool {
        self.global.json
    }

    fn quiet(&self) -> bool {
        self.global.quiet
    }

    fn stop(&self) -> crate::stop::Stop {
        interrupt::install();
        interrupt::token()
    }
}

/// Runs a spec, saving its record, and prints the record when `print` (a run that precedes
/// the one a command is about, such as a scan's native ceiling under `--json`, does not:
/// stdout holds one JSON document).
fn run_record(
    g: &GlobalArgs,
    spec: &RunSpec,
    env: Environment,
    print: bool,
) -> Result<RunRecord, AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    // How the options were read, where that may surprise (`64MB` is 64 MiB), before the run.
    let notes = crate::spec::notes::take();
    if crate::env::launcher::launcher_rank() == 0 {
        for note in notes {
            eprintln!("perflab: note: {note}");
        }
    }
    interrupt::install();
    let watch = super::watch::Watch::open(g, &archive)?;
    let options = RunOptions {
        command: command_line(),
        ..Default::default()
    };
    let result = run::run(spec, &env, &archive, &options, &watch.observer());
    watch.finish();
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
    // `--live -` gave stdout to the JSON lines: the tables are 'perflab show last' away.
    if g.live.live.as_deref() == Some("-") && !g.json {
        return Ok(());
    }
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
