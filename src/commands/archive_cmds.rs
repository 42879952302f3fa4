//! `perflab runs | show | export`: work from saved records only, never from live state.

use super::workload_cmd::show as show_record;
use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::{ExportArgs, GlobalArgs, ShowArgs};
use crate::export;
use crate::ui::report;

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
    print(&report::render_runs(&runs))
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
        Some(path) => {
            // perflab never replaces a file it did not create.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        AppError::Usage(format!(
                            "{} exists; choose a new file name (perflab does not overwrite files)",
                            path.display()
                        ))
                    } else {
                        AppError::Output(format!("{}: {e}", path.display()))
                    }
                })?;
            std::io::Write::write_all(&mut file, &bytes)
                .map_err(|e| AppError::Output(format!("{}: {e}", path.display())))
        }
    }
}
