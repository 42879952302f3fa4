//! A report written to a file: a new file the user names (`-o`, never one that exists), or
//! the archive's own `reports/` folder, which perflab owns and may rewrite, named after what
//! it shows (a run, a suite invocation, a study invocation). Runs are named by their tags.

use super::Options;
use crate::archive::Archive;
use crate::cli::ReportFormat;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::ui::output::{check_output_folder, write_new_file};
use std::path::{Path, PathBuf};

/// The default place of a report: the archive's own `reports/` folder.
fn default_path(archive: &Archive, records: &[RunRecord], format: ReportFormat) -> PathBuf {
    let stem = match records {
        [first, ..]
            if first.study.is_some()
                && records.iter().all(|r| {
                    r.study.as_ref().map(|s| &s.run) == first.study.as_ref().map(|s| &s.run)
                }) =>
        {
            let s = first
                .study
                .as_ref()
                .map(|s| (s.name.as_str(), s.run.as_str()));
            let (name, run) = s.unwrap_or_default();
            format!("study-{name}-{run}")
        }
        [r] => r.id.clone(),
        [first, ..]
            if first.suite_run.is_some()
                && records.iter().all(|r| r.suite_run == first.suite_run) =>
        {
            format!("suite-{}", first.suite_run.as_deref().unwrap_or_default())
        }
        [first, rest @ ..] => format!("{}+{}", first.id, rest.len()),
        [] => "empty".into(),
    };
    let ext = match format {
        ReportFormat::Html => "html",
        ReportFormat::Md => "md",
    };
    archive.root().join("reports").join(format!("{stem}.{ext}"))
}

/// Writes the report of `records` to `output` (a new file), or into the archive's `reports/`
/// folder, which perflab owns and may rewrite. Returns the path written.
pub fn write(
    archive: &Archive,
    records: &[RunRecord],
    options: &Options,
    output: Option<&Path>,
    format: ReportFormat,
) -> Result<PathBuf, AppError> {
    let (path, own) = match output {
        Some(p) => (p.to_path_buf(), false),
        None => (default_path(archive, records, format), true),
    };
    if !own {
        check_output_folder(&path)?;
    }
    let out_err = |p: &Path, e: std::io::Error| AppError::Output(format!("{}: {e}", p.display()));
    if own && let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| out_err(dir, e))?;
    }
    let put = |p: &Path, bytes: &[u8]| -> Result<(), AppError> {
        if own {
            std::fs::write(p, bytes).map_err(|e| out_err(p, e))
        } else {
            write_new_file(p, bytes)
        }
    };
    // Runs are named by their tags wherever a report names them.
    let mut named = options.clone();
    if named.names.is_empty() {
        for (tag, id) in archive.tags()? {
            named
                .names
                .entry(id)
                .and_modify(|n: &mut String| {
                    n.push_str(", ");
                    n.push_str(&tag)
                })
                .or_insert(tag);
        }
    }
    let options = &named;
    match format {
        ReportFormat::Html => put(&path, super::to_html(records, options).as_bytes())?,
        ReportFormat::Md => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "report".into());
            let files_name = format!("{stem}-files");
            let files_dir = path.with_file_name(&files_name);
            if !own && (path.exists() || files_dir.exists()) {
                return Err(AppError::Usage(format!(
                    "{} or {} exists; choose a new file name (perflab does not overwrite files)",
                    path.display(),
                    files_dir.display()
                )));
            }
            let (text, figures) = super::to_markdown(records, options, &files_name);
            if !figures.is_empty() {
                std::fs::create_dir_all(&files_dir).map_err(|e| out_err(&files_dir, e))?;
            }
            for (rel, svg) in figures {
                put(&path.with_file_name(rel), svg.as_bytes())?;
            }
            put(&path, text.as_bytes())?;
        }
    }
    Ok(path)
}
