//! `perflab runs | show | export | tag | import`: work from saved records only, never from
//! live state; all but `import` read the shared store when one is set ([`super::shared::store`]).

use super::shared::store;
use crate::archive::{Archive, ArchiveError, Imported, Listing};
use crate::cli::{ExportArgs, GlobalArgs, ImportArgs, RunsArgs, ShowArgs, TagArgs};
use crate::error::AppError;
use crate::export;
use crate::launch::show as show_record;
use crate::ui::output::{print, write_new_file};
use crate::ui::show;

pub fn runs(g: &GlobalArgs, args: &RunsArgs) -> Result<(), AppError> {
    let store = store(g)?;
    let shared = g.shared_to_read().is_some();
    // A shared store holds a team's history: the newest page of it unless asked for more.
    let newest = args.newest.or(shared.then_some(SHARED_PAGE));
    let listing = Listing {
        newest,
        host: args.host.clone(),
    };
    let runs = store.list(&listing)?;
    if g.json {
        let text =
            serde_json::to_string_pretty(&runs).map_err(|e| AppError::Output(e.to_string()))?;
        return print(&(text + "\n"));
    }
    if runs.is_empty() {
        eprintln!(
            "perflab: no runs in {} yet; try 'perflab run --quick'",
            store.place()
        );
        return Ok(());
    }
    print(&show::render_runs(&runs, &store.tags()?))?;
    if let Some(n) = newest
        && runs.len() == n
        && !g.quiet
    {
        eprintln!(
            "perflab: the newest {n} runs of {} in {}; --newest N for more",
            store.count()?,
            store.place()
        );
    }
    Ok(())
}

/// How many runs `perflab runs` lists from a shared store unless `--newest` says.
const SHARED_PAGE: usize = 50;

pub fn show(g: &GlobalArgs, args: &ShowArgs) -> Result<(), AppError> {
    let store = store(g)?;
    let record = store.load(&args.run)?;
    if g.json {
        return show_record(g, &record);
    }
    let tags = store.tags()?;
    let names: Vec<&str> = tags
        .iter()
        .filter(|(_, id)| **id == record.id)
        .map(|(name, _)| name.as_str())
        .collect();
    print(&crate::ui::show::render_tagged(&record, &names))
}

pub fn export(g: &GlobalArgs, args: &ExportArgs) -> Result<(), AppError> {
    let record = store(g)?.load(&args.run)?;
    let format = export::resolve(&args.format, &record).map_err(AppError::Usage)?;
    let mut bytes = Vec::new();
    export::write_as(&format, &record, &mut bytes).map_err(|e| AppError::Output(e.to_string()))?;
    match &args.output {
        None => print(&String::from_utf8_lossy(&bytes)),
        Some(path) => write_new_file(path, &bytes),
    }
}

/// `perflab tag RUN NAME`.
pub fn tag(g: &GlobalArgs, args: &TagArgs) -> Result<(), AppError> {
    let id = store(g)?.tag(&args.run, &args.name)?;
    print(&format!("{} now names run {id}\n", args.name))
}

/// `perflab import PATH...`: every `run.json` given or found below a folder joins the
/// archive; a line for each, and one line naming a path that holds no record.
pub fn import(g: &GlobalArgs, args: &ImportArgs) -> Result<(), AppError> {
    let archive = Archive::open(g.results.as_deref())?;
    let mut files = Vec::new();
    for path in &args.paths {
        let found = record_files(path);
        if found.is_empty() {
            return Err(AppError::Usage(format!(
                "{}: no run.json there; give record files or folders that hold them",
                path.display()
            )));
        }
        files.extend(found);
    }
    if args.study.is_some() && files.len() != 1 {
        return Err(AppError::Usage(format!(
            "--leg takes one record, and {} were found; import the leg's run.json alone",
            files.len()
        )));
    }
    // The study's run, named before the import adds a run that could be `last`.
    let study = match &args.study {
        Some(q) => Some(crate::study::store::study_run(&archive, q)?.id),
        None => None,
    };
    let mut out = String::new();
    for file in &files {
        // A file that is not a record is the user's to fix (exit 2), not a broken archive.
        let imported = archive.import(file).map_err(|e| match e {
            e @ (ArchiveError::Corrupt { .. } | ArchiveError::NewerSchema { .. }) => {
                AppError::Usage(e.to_string())
            }
            e => AppError::Archive(e),
        })?;
        let (line, id) = match imported {
            Imported::New { id, host } => (format!("imported {id} (from {host})\n"), id),
            Imported::AlreadyHere(id) => (format!("{id} is in the archive already\n"), id),
        };
        out.push_str(&line);
        if let (Some(study), Some(leg)) = (&study, &args.leg) {
            let name = crate::study::store::attach(&archive, study, leg, &id)?;
            out.push_str(&format!(
                "{id} is leg {leg} of study {name} ('perflab report --study {study}')\n"
            ));
        }
    }
    print(&out)
}

/// `path` if it is a file, else every `run.json` below it (sorted, so runs join in order).
fn record_files(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            // Not through links: a results folder has none, and a loop must not hang us.
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(p),
                Ok(t) if t.is_file() && p.file_name().is_some_and(|n| n == "run.json") => {
                    out.push(p)
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}
