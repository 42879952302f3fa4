//! `perflab run [SUITE] [--quick]`: every run of a suite, then the balance sheet.

use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::{GlobalArgs, SuiteArgs};
use crate::env::Environment;
use crate::record::{RunRecord, step_number};
use crate::run::{self, RunError, RunOptions, interrupt};
use crate::suite::{self, SUITES};
use crate::ui::{balance, style};

pub fn run(g: &GlobalArgs, args: &SuiteArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let archive = Archive::open(g.results.as_deref())?;
    let io_path = args
        .io_path
        .clone()
        .unwrap_or_else(|| archive.root().to_path_buf());
    let entries = suite::entries(&args.suite, args.quick, &env, &io_path).ok_or_else(|| {
        AppError::Usage(format!(
            "unknown suite {:?}; the suites are: {}",
            args.suite,
            SUITES.join(", ")
        ))
    })?;
    // Validate every entry before running any, so a bad entry cannot waste the first ones.
    let specs = entries
        .iter()
        .map(|e| {
            let cli = crate::cli::parse(
                std::iter::once("perflab".to_string()).chain(e.args.iter().cloned()),
            )
            .map_err(|err| {
                AppError::Usage(format!(
                    "suite entry '{}': {}",
                    e.args.join(" "),
                    err.kind()
                ))
            })?;
            super::workload_spec(&cli.what, &env)?.ok_or_else(|| {
                AppError::Usage(format!(
                    "suite entry '{}' is not a workload",
                    e.args.join(" ")
                ))
            })
        })
        .collect::<Result<Vec<_>, AppError>>()?;

    interrupt::install();
    let watch = super::watch::Watch::open(g, &archive)?;
    let progress = &watch;
    for note in suite::skipped(&args.suite) {
        progress.line(&style::warning(&format!("== {note}")));
    }
    let suite_name = format!("{}{}", args.suite, if args.quick { " (quick)" } else { "" });
    // One id for this invocation, shared by its runs, so the report can gather them later.
    let suite_run = crate::record::timestamp::run_id(std::time::SystemTime::now());
    let mut records: Vec<RunRecord> = Vec::new();
    let mut outcome = Ok(());
    for (entry, spec) in entries.iter().zip(&specs) {
        progress.line(&format!(
            "== {}: perflab {}",
            entry.capability,
            entry.args.join(" ")
        ));
        let options = RunOptions {
            command: std::iter::once("perflab".to_string())
                .chain(entry.args.iter().cloned())
                .collect(),
            suite: Some(suite_name.clone()),
            suite_run: Some(suite_run.clone()),
            study: None,
        };
        match run::run(spec, &env, &archive, &options, &watch.observer()) {
            Ok(record) => records.push(record),
            Err(e @ RunError::Interrupted { .. }) => {
                outcome = Err(AppError::Run(e));
                break;
            }
            Err(RunError::Failed {
                id, step, message, ..
            }) => {
                // One capability failing should not hide the others: note it and go on.
                progress.line(&style::warning(&format!(
                    "{}: step {} failed: {message} (run {id})",
                    entry.capability,
                    step_number(step)
                )));
                if let Ok(r) = archive.load(&id) {
                    records.push(r);
                }
                outcome = Err(AppError::Usage(format!(
                    "{} failed; the other capabilities ran",
                    entry.capability
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
    watch.finish();
    if g.json {
        let value = serde_json::json!({ "suite": suite_name, "runs": records });
        let text =
            serde_json::to_string_pretty(&value).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))?;
    } else {
        print(&balance::render(&suite_name, &env, &records))?;
    }
    // The first thing a new user opens: a picture of their machine, beside its runs.
    if !records.is_empty() {
        match super::report_cmd::write(
            &archive,
            &records,
            &crate::report::Options::default(),
            None,
            crate::cli::ReportFormat::Html,
        ) {
            Ok(path) if !g.json => print(&format!(
                "report: {}  (open it in a browser; 'perflab report --suite last' writes it again)\n",
                path.display()
            ))?,
            Ok(_) => {}
            Err(e) => progress.line(&style::warning(&format!("the report was not written: {e}"))),
        }
    }
    match outcome {
        Err(AppError::Usage(m)) => Err(AppError::Run(RunError::Failed {
            id: String::new(),
            step: 0,
            phase: String::new(),
            message: m,
        })),
        other => other,
    }
}
