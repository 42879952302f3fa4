//! `perflab runs | show | export`: work from saved records only, never from live state.

use super::workload_cmd::show as show_record;
use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::{ExportArgs, GlobalArgs, ShowArgs, TagArgs};
use crate::export;
use crate::ui::show;

pub fn runs(g: &GlobalArgs) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let runs = archive.list()?;
    if g.json {
        let text =
            serde_json::to_string_pretty(&runs).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    if runs.is_empty() {
        eprintln!(
            "perflab: no runs in {} yet; try 'perflab run --quick'",
            archive.root().display()
        );
        return Ok(());
    }
    print(&show::render_runs(&runs, &archive.tags()?))
}

pub fn show(g: &GlobalArgs, args: &ShowArgs) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let record = archive.load(&args.run)?;
    show_record(g, &record)
}

pub fn export(g: &GlobalArgs, args: &ExportArgs) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let record = archive.load(&args.run)?;
    let mut bytes = Vec::new();
    export::write(args.format, &record, &mut bytes).map_err(|e| AppError::Output(e.to_string()))?;
    match &args.output {
        None => print(&String::from_utf8_lossy(&bytes)),
        Some(path) => super::write_new_file(path, &bytes),
    }
}

/// `perflab tag RUN NAME`.
pub fn tag(g: &GlobalArgs, args: &TagArgs) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let id = archive.tag(&args.run, &args.name)?;
    print(&format!("{} now names run {id}\n", args.name))
}
