//! `perflab report RUN... [-o FILE]`: archived runs as one HTML file (or Markdown + SVG).

use super::{AppError, print, write_new_file};
use crate::archive::Archive;
use crate::cli::{GlobalArgs, ReportArgs, ReportFormat};
use crate::record::RunRecord;
use crate::report::{self, Options};
use crate::spec::Slo;
use std::path::{Path, PathBuf};

pub fn report(g: &GlobalArgs, args: &ReportArgs) -> Result<(), AppError> {
    let slo = args
        .slo
        .as_deref()
        .map(|s| Slo::parse("slo", s))
        .transpose()?;
    let archive = Archive::open(g.results.as_deref())?;
    let mut study = None;
    let records = if args.study {
        let [one] = args.runs.as_slice() else {
            return Err(AppError::Usage(
                "--study takes one run of the study (e.g. last)".into(),
            ));
        };
        let (records, answer) =
            super::study_cmd::report_of(&archive, &super::study_cmd::study_run(&archive, one)?)?;
        study = Some(answer);
        records
    } else if args.suite {
        suite_records(&archive, &args.runs)?
    } else {
        args.runs
            .iter()
            .map(|q| archive.load(q))
            .collect::<Result<Vec<_>, _>>()?
    };
    let options = Options {
        slo,
        landscape: args.landscape,
        title: args.title.clone(),
        comparison: None,
        study,
        names: Default::default(),
    };
    let format = args.format.unwrap_or(match &args.output {
        Some(p) if p.extension().is_some_and(|e| e == "md" || e == "markdown") => ReportFormat::Md,
        _ => ReportFormat::Html,
    });
    if args.landscape && !g.quiet {
        let (t, note) = report::landscape::table(&records);
        let mut text = crate::present::table::Table::new(t.head.clone());
        for row in t.rows {
            text.row(row);
        }
        print(&text.render())?;
        if let Some(n) = note {
            print(&format!("{n}\n"))?;
        }
    }
    let path = write(&archive, &records, &options, args.output.as_deref(), format)?;
    print(&format!("report: {}\n", path.display()))
}

/// Every run of the suite invocations the queried runs belong to, oldest first.
fn suite_records(archive: &Archive, queries: &[String]) -> Result<Vec<RunRecord>, AppError> {
    let mut out: Vec<RunRecord> = Vec::new();
    for q in queries {
        let r = archive.load(q)?;
        let Some(invocation) = r.suite_run.clone() else {
            return Err(AppError::Usage(format!(
                "run {} was not started by a suite ('perflab run'); name its runs instead",
                r.id
            )));
        };
        for summary in archive.list()? {
            if summary.suite != r.suite || out.iter().any(|x| x.id == summary.id) {
                continue;
            }
            let candidate = archive.load(&summary.id)?;
            if candidate.suite_run.as_deref() == Some(invocation.as_str()) {
                out.push(candidate);
            }
        }
    }
    Ok(out)
}

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
pub(crate) fn write(
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
        super::check_output_folder(&path)?;
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
        ReportFormat::Html => put(&path, report::to_html(records, options).as_bytes())?,
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
            let (text, figures) = report::to_markdown(records, options, &files_name);
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
