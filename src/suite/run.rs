//! A suite from start to end: every entry checked as its command would check it before the
//! first one runs (a bad entry cannot waste the ones before it), then each run through the
//! one path every run takes ([`crate::launch`]), stamped with the suite's name and one id for
//! this invocation. An entry that fails is named and the others still run; what is printed
//! of the runs (the balance sheet, the report) is the command's.

use super::{SUITES, entries, skipped};
use crate::archive::Archive;
use crate::cli::GlobalArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::launch::{Flow, Launcher, Tally};
use crate::record::RunRecord;
use crate::run::RunOptions;
use crate::ui::style;
use std::path::PathBuf;

/// What a suite's invocation came to.
pub struct Ran {
    /// Its name as the balance sheet heads it (`default (quick)`).
    pub name: String,
    pub env: Environment,
    pub archive: Archive,
    /// Every run it made, in order, failed ones too.
    pub records: Vec<RunRecord>,
    /// Exit 1 naming each entry that failed; 130 after a Ctrl-C.
    pub end: Result<(), AppError>,
}

/// Runs suite `name` (`--quick`: shorter steps), its storage files under `io_path` (by
/// default the results folder).
pub fn run(
    g: &GlobalArgs,
    name: &str,
    quick: bool,
    io_path: Option<PathBuf>,
) -> Result<Ran, AppError> {
    let env = Environment::collect();
    let archive = Archive::open(g.results.as_deref())?;
    let io_path = io_path.unwrap_or_else(|| archive.root().to_path_buf());
    let list = entries(name, quick, &env, &io_path).ok_or_else(|| {
        AppError::Usage(format!(
            "unknown suite {name:?}; the suites are: {}",
            SUITES.join(", ")
        ))
    })?;
    for e in &list {
        let (kind, args, _) = crate::launch::parse(&e.args)
            .map_err(|err| AppError::Usage(format!("suite entry '{}': {err}", e.args.join(" "))))?;
        if kind.spec(&args, &env)?.is_none() {
            return Err(AppError::Usage(format!(
                "suite entry '{}' is not a run",
                e.args.join(" ")
            )));
        }
    }
    // The notes on how the entries' options were read are said as each one runs.
    crate::vocab::notes::take();

    let suite_name = format!("{name}{}", if quick { " (quick)" } else { "" });
    let options = RunOptions {
        suite: Some(suite_name.clone()),
        // One id for this invocation, shared by its runs, so the report can gather them later.
        suite_run: Some(crate::record::timestamp::run_id(
            std::time::SystemTime::now(),
        )),
        ..RunOptions::default()
    };
    let mut launcher = Launcher::batch(g, archive, options)?;
    for note in skipped(name) {
        launcher.line(&style::warning(&format!("== {note}")));
    }
    let mut tally = Tally::new("entry");
    for e in &list {
        launcher.line(&format!(
            "== {}: perflab {}",
            e.capability,
            e.args.join(" ")
        ));
        let entry = launcher.entry(&e.args, None);
        let failed = entry.result.as_ref().err().map(|e| e.to_string());
        if tally.add(e.capability, entry.result) == Flow::Stop {
            break;
        }
        // One capability failing should not hide the others: name it and go on.
        if let Some(why) = failed {
            launcher.line(&style::warning(&format!(
                "{} failed: {why}; the other entries go on",
                e.capability
            )));
        }
    }
    launcher.finish();
    Ok(Ran {
        name: suite_name,
        env,
        archive: launcher.archive()?.clone(),
        records: launcher.runs(),
        end: tally.result(),
    })
}
