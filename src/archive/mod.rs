//! The archive: one folder per run, each holding its `run.json`, plus an SQLite index.
//!
//! ```text
//! <results>/index.sqlite          runs, for `perflab runs` and lookups (rows re-read from the folders when stale)
//! <results>/runs/<id>/run.json    the record, rewritten atomically after every step
//! <results>/tags.json             names given to runs (`perflab tag`)
//! <results>/reports/              reports perflab wrote there (`perflab report`, `perflab run`)
//! ```
//! The results folder is `--results DIR`, else `$PERFLAB_RESULTS`, else
//! `$XDG_DATA_HOME/perflab`, else `~/.local/share/perflab`. The record files are the truth;
//! the index is a cache of them: a row whose record file is gone, new, or replaced since the
//! row was written (a run killed between saving its record and indexing it) is re-read.
//!
//! A kill can land anywhere in a save. Before the rename the old `run.json` stands and a
//! `run.json.tmp` may be left beside it (never read: only `run.json` is a record, and the
//! next process's first save removes it once it is a minute old); after the rename the new
//! record stands and its index row is stale until the next listing.

mod index;
pub mod run_store;
mod store;

/// How old a `run.json.tmp` must be to be a leftover of a killed save rather than a save in
/// progress.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(60);
pub mod tags;

pub use index::RunSummary;
pub use run_store::{Listing, RunStore, TrendPoint, TrendQuery, last_of, load_or_file};
pub use store::parse_record;

use crate::record::{RunRecord, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// What [`Archive::import`] did with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// It joined the archive under this id; it was made on this host.
    New { id: String, host: String },
    /// The archive holds it already.
    AlreadyHere(String),
}

/// What can go wrong with the archive. Each message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "{path}: {source} (check the folder's permissions, or choose another with --results DIR)"
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no run matches {0:?}; list the archive with 'perflab runs'")]
    NotFound(String),
    #[error("{query:?} matches several runs ({}); give more of the id", candidates.join(", "))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    #[error("the archive is empty; record a run first, e.g. 'perflab run --quick'")]
    Empty,
    #[error("{path}: not a perflab record ({reason})")]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "{path}: written by a newer perflab (schema {version}, this one reads up to {SCHEMA_VERSION}); upgrade perflab"
    )]
    NewerSchema { path: PathBuf, version: u64 },
    #[error(
        "{0}: no perflab archive there; record a run first (e.g. 'perflab run --quick') or give --results DIR"
    )]
    NoArchive(PathBuf),
    #[error("no results folder: set --results DIR or PERFLAB_RESULTS (HOME is not set)")]
    NoHome,
    #[error("{0}: not a folder; give --results (or PERFLAB_RESULTS) a folder")]
    NotAFolder(PathBuf),
    #[error("{name:?} cannot be a tag: {reason}")]
    BadTag { name: String, reason: &'static str },
    /// The shared store could not be reached or failed a statement (the message says which,
    /// never with a password).
    #[error("the shared store: {0}")]
    Shared(String),
    /// The shared store refuses what was asked (a schema of a newer perflab, no tables yet,
    /// a role that may not write, a bad address); the message names the fix.
    #[error("the shared store: {0}")]
    SharedRefused(String),
    /// A store opened to read was asked to write.
    #[error("{0} is read-only here: tag runs without 'serve'")]
    ReadOnly(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An opened results folder.
#[derive(Debug, Clone)]
pub struct Archive {
    root: PathBuf,
}

impl Archive {
    /// Opens (creating if needed) the results folder: `dir`, else the default.
    pub fn open(dir: Option<&Path>) -> Result<Archive, ArchiveError> {
        let root = root_of(dir)?;
        let runs = root.join("runs");
        // A file (or a path through one) is a bad --results, not a failed run.
        let not_a_folder = |p: &Path| p.exists() && !p.is_dir();
        if let Some(file) = root.ancestors().find(|p| not_a_folder(p)) {
            return Err(ArchiveError::NotAFolder(file.to_path_buf()));
        }
        std::fs::create_dir_all(&runs).map_err(io(&runs))?;
        Ok(Archive { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn run_dir(&self, id: &str) -> PathBuf {
        self.root.join("runs").join(id)
    }

    /// Where a run's record lives.
    pub fn record_path(&self, id: &str) -> PathBuf {
        self.run_dir(id).join("run.json")
    }

    /// Writes the record (atomically: a crash leaves the previous version) and indexes it.
    /// A failure to index is not fatal: the index is rebuilt from the records when stale.
    pub fn save(&self, record: &RunRecord) -> Result<PathBuf, ArchiveError> {
        let dir = self.run_dir(&record.id);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join("run.json");
        let json = serde_json::to_vec_pretty(record).map_err(|e| ArchiveError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        store::write_atomic(&path, &json).map_err(io(&path))?;
        self.sweep_leftovers();
        if let Ok(m) = std::fs::metadata(&path) {
            let stamp = index::Stamp::of(&m);
            let _ = index::Index::open(&self.root)
                .and_then(|i| i.upsert(&RunSummary::of(record), &stamp));
        }
        Ok(path)
    }

    /// Removes the `run.json.tmp` files that killed saves left behind (and a run's folder
    /// that held nothing else: a run killed during its first save). Once per process, at its
    /// first save; only files older than [`LEFTOVER_AGE`], so another process's save in
    /// progress (milliseconds between the write and the rename) is never touched.
    fn sweep_leftovers(&self) {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| {
            let runs = self.root.join("runs");
            let Ok(entries) = std::fs::read_dir(&runs) else {
                return;
            };
            for run in entries.flatten() {
                let tmp = run.path().join("run.json.tmp");
                let old = std::fs::metadata(&tmp)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > LEFTOVER_AGE));
                if old && std::fs::remove_file(&tmp).is_ok() {
                    // Only an empty folder goes: remove_dir refuses any other.
                    let _ = std::fs::remove_dir(run.path());
                }
            }
        });
    }

    /// Brings a record made elsewhere (another machine's `run.json`) into the archive, as it
    /// is: never over a run already here. The same record again is left alone; another run
    /// with the same id (two machines that started a run in the same second with the same
    /// suffix) joins under its id with its host's name added.
    pub fn import(&self, path: &Path) -> Result<Imported, ArchiveError> {
        let mut record = store::read_record(path)?;
        let host = record
            .env
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown-host".into());
        let here = self.record_path(&record.id);
        if here.is_file() {
            let theirs = std::fs::read(path).map_err(io(path))?;
            let ours = std::fs::read(&here).map_err(io(&here))?;
            if theirs == ours || store::read_record(&here).is_ok_and(|r| r == record) {
                return Ok(Imported::AlreadyHere(record.id));
            }
            record.id = id_beside(&record);
            if self.record_path(&record.id).is_file() {
                return Ok(Imported::AlreadyHere(record.id));
            }
        }
        self.save(&record)?;
        Ok(Imported::New {
            id: record.id,
            host,
        })
    }

    /// Loads a run by id, unique id prefix, or `last`.
    pub fn load(&self, query: &str) -> Result<RunRecord, ArchiveError> {
        let id = self.resolve(query)?;
        store::read_record(&self.record_path(&id))
    }

    /// [`Archive::load`], or the record in a `run.json` file named by its path (a query
    /// with a `/` or ending in `.json`): a record from another machine, not imported.
    pub fn load_or_file(&self, query: &str) -> Result<RunRecord, ArchiveError> {
        let path = Path::new(query.trim());
        match query.contains('/') || query.ends_with(".json") {
            true if path.is_file() => store::read_record(path),
            true if !query.contains('/') => self.load(query),
            true => Err(ArchiveError::NotFound(format!("{query} (no such file)"))),
            false => self.load(query),
        }
    }

    /// The runs, oldest first: index rows whose record file is unchanged since they were
    /// written, the others read again from their files (and re-indexed); unreadable records
    /// are left out.
    pub fn list(&self) -> Result<Vec<RunSummary>, ArchiveError> {
        list_in(&self.root, Refresh::Write)
    }

    fn ids(&self) -> Result<Vec<String>, ArchiveError> {
        ids_in(&self.root)
    }

    /// Names run `query` (an id, a prefix, `last` or another tag) `name`, moving the tag if
    /// it named another run. Returns the run's id.
    pub fn tag(&self, query: &str, name: &str) -> Result<String, ArchiveError> {
        if let Some(reason) = tags::invalid_name(name) {
            return Err(ArchiveError::BadTag {
                name: name.to_string(),
                reason,
            });
        }
        let id = self.resolve(query)?;
        let mut all = tags::load(&self.root)?;
        all.insert(name.to_string(), id.clone());
        tags::save(&self.root, &all)?;
        Ok(id)
    }

    /// Every tag, name → run id.
    pub fn tags(&self) -> Result<tags::Tags, ArchiveError> {
        tags::load(&self.root)
    }

    /// Turns `last`, a tag, an id or a unique prefix of one into an id.
    pub fn resolve(&self, query: &str) -> Result<String, ArchiveError> {
        let query = query.trim();
        if let Some(host) = last_of(query) {
            return newest_of(self.list()?, host);
        }
        if tags::invalid_name(query).is_none()
            && let Some(id) = tags::load(&self.root)?.remove(query)
        {
            return if self.record_path(&id).is_file() {
                Ok(id)
            } else {
                Err(ArchiveError::NotFound(format!(
                    "{query} (the tag names run {id}, which is no longer in the archive)"
                )))
            };
        }
        let ids = self.ids()?;
        if ids.iter().any(|id| id == query) {
            return Ok(query.to_string());
        }
        let matches: Vec<String> = ids
            .into_iter()
            .filter(|id| !query.is_empty() && id.starts_with(query))
            .collect();
        match matches.len() {
            0 => Err(ArchiveError::NotFound(query.to_string())),
            1 => Ok(matches.into_iter().next().unwrap_or_default()),
            _ => Err(ArchiveError::Ambiguous {
                query: query.to_string(),
                candidates: matches,
            }),
        }
    }
}

/// The newest of `rows` (oldest first), of `host` if one is named.
fn newest_of(rows: Vec<RunSummary>, host: Option<&str>) -> Result<String, ArchiveError> {
    let mut rows = rows.into_iter().rev();
    let found = match host {
        None => rows.next(),
        Some(h) => rows.find(|r| r.host == h),
    };
    match (found, host) {
        (Some(r), _) => Ok(r.id),
        (None, None) => Err(ArchiveError::Empty),
        (None, Some(h)) => Err(ArchiveError::NotFound(format!(
            "last@{h} (no run of host {h:?})"
        ))),
    }
}

/// The newest `listing.newest` of `rows` (oldest first), of `listing.host` if named.
fn listed(mut rows: Vec<RunSummary>, listing: &Listing) -> Vec<RunSummary> {
    if let Some(h) = &listing.host {
        rows.retain(|r| r.host == *h);
    }
    if let Some(n) = listing.newest {
        let skip = rows.len().saturating_sub(n);
        rows.drain(..skip);
    }
    rows
}

impl RunStore for Archive {
    fn place(&self) -> String {
        self.root.display().to_string()
    }

    fn list(&self, listing: &Listing) -> Result<Vec<RunSummary>, ArchiveError> {
        Ok(listed(Archive::list(self)?, listing))
    }

    fn resolve(&self, query: &str) -> Result<String, ArchiveError> {
        Archive::resolve(self, query)
    }

    fn load(&self, query: &str) -> Result<RunRecord, ArchiveError> {
        Archive::load(self, query)
    }

    fn tags(&self) -> Result<tags::Tags, ArchiveError> {
        Archive::tags(self)
    }

    fn tag(&self, query: &str, name: &str) -> Result<String, ArchiveError> {
        Archive::tag(self, query, name)
    }

    fn run_dir(&self, id: &str) -> Option<PathBuf> {
        Some(Archive::run_dir(self, id)).filter(|d| d.join("run.json").is_file())
    }
}

impl RunStore for ReadOnlyArchive {
    fn place(&self) -> String {
        self.root.display().to_string()
    }

    fn list(&self, listing: &Listing) -> Result<Vec<RunSummary>, ArchiveError> {
        Ok(listed(ReadOnlyArchive::list(self)?, listing))
    }

    fn resolve(&self, query: &str) -> Result<String, ArchiveError> {
        match last_of(query) {
            Some(host) => newest_of(ReadOnlyArchive::list(self)?, host),
            None => self
                .run_dir(query.trim())
                .map(|_| query.trim().to_string())
                .ok_or_else(|| ArchiveError::NotFound(query.to_string())),
        }
    }

    fn load(&self, query: &str) -> Result<RunRecord, ArchiveError> {
        ReadOnlyArchive::load(self, query)
    }

    fn tags(&self) -> Result<tags::Tags, ArchiveError> {
        ReadOnlyArchive::tags(self)
    }

    fn tag(&self, _query: &str, _name: &str) -> Result<String, ArchiveError> {
        Err(ArchiveError::ReadOnly(self.root.display().to_string()))
    }

    fn run_dir(&self, id: &str) -> Option<PathBuf> {
        ReadOnlyArchive::run_dir(self, id)
    }
}

/// The id another host's record joins under when its own is taken by a different run: the
/// id with its host's name and the start of its machine digest added (cloned machines share
/// host names; the digest keeps them apart), as `perflab import` and the shared store do.
pub fn id_beside(record: &RunRecord) -> String {
    let host = record.env.hostname.as_deref().unwrap_or("unknown-host");
    let who = match &record.env.machine {
        Some(m) => format!("{host}-{}", m.get(..6).unwrap_or(m)),
        None => host.to_string(),
    };
    let safe: String = who
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{}-{safe}", record.id)
}

/// Whether listing may bring the index up to date; read-only, which run folders to list.
#[derive(Clone, Copy)]
enum Refresh<'a> {
    Write,
    ReadOnly(&'a dyn Fn(&str) -> bool),
}

/// The runs of the archive at `root`, oldest first (see [`Archive::list`]); read-only, the
/// index is read where it is current and the records where it is not, and nothing is written.
fn list_in(root: &Path, refresh: Refresh) -> Result<Vec<RunSummary>, ArchiveError> {
    let mut ids = ids_in(root)?;
    let (index, write) = match refresh {
        Refresh::Write => (index::Index::open(root).ok(), true),
        Refresh::ReadOnly(keep) => {
            ids.retain(|id| keep(id));
            (index::Index::open_read_only(root), false)
        }
    };
    let mut indexed: std::collections::HashMap<String, (RunSummary, index::Stamp)> = index
        .as_ref()
        .and_then(|i| i.list().ok())
        .unwrap_or_default()
        .into_iter()
        .map(|(row, stamp)| (row.id.clone(), (row, stamp)))
        .collect();
    let record_path = |id: &str| root.join("runs").join(id).join("run.json");
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let path = record_path(id);
        let current = std::fs::metadata(&path).ok().map(|m| index::Stamp::of(&m));
        match indexed.remove(id) {
            Some((row, stamp)) if current.as_ref() == Some(&stamp) => rows.push(row),
            _ => {
                if let Ok((record, stamp)) = store::read_stamped(&path) {
                    let row = RunSummary::of(&record);
                    if let (Some(i), true) = (&index, write) {
                        let _ = i.upsert(&row, &stamp);
                    }
                    rows.push(row);
                }
            }
        }
    }
    // Rows of runs whose folders are gone (re-checked: a run may have started meanwhile).
    if let (Some(i), true) = (&index, write) {
        for id in indexed.keys() {
            if !record_path(id).is_file() {
                let _ = i.delete(id);
            }
        }
    }
    rows.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    Ok(rows)
}

/// Run folders present (those holding a `run.json`), sorted.
fn ids_in(root: &Path) -> Result<Vec<String>, ArchiveError> {
    let runs = root.join("runs");
    let mut ids: Vec<String> = std::fs::read_dir(&runs)
        .map_err(io(&runs))?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("run.json").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    ids.sort();
    Ok(ids)
}

/// A results folder opened to read and never write (`perflab serve`): no folder made, no
/// index row refreshed, no leftover swept. What the index has wrong is read from the records.
#[derive(Debug, Clone)]
pub struct ReadOnlyArchive {
    root: PathBuf,
}

impl ReadOnlyArchive {
    /// The results folder `dir`, else the default; it must exist.
    pub fn open(dir: Option<&Path>) -> Result<ReadOnlyArchive, ArchiveError> {
        let root = root_of(dir)?;
        if root.exists() && !root.is_dir() {
            return Err(ArchiveError::NotAFolder(root));
        }
        if !root.join("runs").is_dir() {
            return Err(ArchiveError::NoArchive(root));
        }
        Ok(ReadOnlyArchive { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// As [`Archive::list`], writing nothing, and without the folders [`Self::run_dir`]
    /// refuses (a link to a folder elsewhere).
    pub fn list(&self) -> Result<Vec<RunSummary>, ArchiveError> {
        list_in(
            &self.root,
            Refresh::ReadOnly(&|id| self.run_dir(id).is_some()),
        )
    }

    /// The folder of run `id`, if the archive holds that run: `id` must be the name of a run
    /// folder (no path), and the folder must lie inside the archive once links are followed.
    pub fn run_dir(&self, id: &str) -> Option<PathBuf> {
        let plain = !id.is_empty()
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !plain {
            return None;
        }
        let runs = self.root.join("runs").canonicalize().ok()?;
        let dir = runs.join(id).canonicalize().ok()?;
        (dir.parent() == Some(runs.as_path()) && dir.join("run.json").is_file()).then_some(dir)
    }

    /// Run `id` (exactly, or `last`).
    pub fn load(&self, id: &str) -> Result<RunRecord, ArchiveError> {
        let id = match last_of(id) {
            Some(host) => newest_of(self.list()?, host)?,
            None => id.to_string(),
        };
        let dir = self
            .run_dir(&id)
            .ok_or_else(|| ArchiveError::NotFound(id.clone()))?;
        store::read_record(&dir.join("run.json"))
    }

    /// Every tag, name → run id.
    pub fn tags(&self) -> Result<tags::Tags, ArchiveError> {
        tags::load(&self.root)
    }
}

/// The results folder: `dir`, else the default.
fn root_of(dir: Option<&Path>) -> Result<PathBuf, ArchiveError> {
    match dir {
        Some(d) => Ok(d.to_path_buf()),
        None => default_root(),
    }
}

fn default_root() -> Result<PathBuf, ArchiveError> {
    if let Some(dir) = std::env::var_os("PERFLAB_RESULTS").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("perflab"));
    }
    let home = std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .ok_or(ArchiveError::NoHome)?;
    Ok(PathBuf::from(home).join(".local/share/perflab"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Status;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("perflab-archive-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn record(id: &str, started: &str) -> RunRecord {
        RunRecord {
            id: id.into(),
            started_at: started.into(),
            workload: "null".into(),
            ..Default::default()
        }
    }

    #[test]
    fn save_list_resolve_and_load() {
        let dir = temp_dir("basic");
        let a = Archive::open(Some(&dir)).unwrap();
        assert!(matches!(a.resolve("last"), Err(ArchiveError::Empty)));
        a.save(&record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z"))
            .unwrap();
        let mut r = record("20260102-000000-bbbb", "2026-01-02T00:00:00.000Z");
        a.save(&r).unwrap();
        r.status = Status::Complete;
        a.save(&r).unwrap();
        let list = a.list().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].status, "complete");
        assert_eq!(a.resolve("last").unwrap(), "20260102-000000-bbbb");
        assert_eq!(a.resolve("20260101").unwrap(), "20260101-000000-aaaa");
        assert!(matches!(
            a.resolve("2026"),
            Err(ArchiveError::Ambiguous { .. })
        ));
        assert!(matches!(a.resolve("1999"), Err(ArchiveError::NotFound(_))));
        assert_eq!(a.load("last").unwrap().status, Status::Complete);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn tags_name_runs_and_move() {
        let dir = temp_dir("tags");
        let a = Archive::open(Some(&dir)).unwrap();
        a.save(&record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z"))
            .unwrap();
        a.save(&record("20260102-000000-bbbb", "2026-01-02T00:00:00.000Z"))
            .unwrap();
        assert_eq!(
            a.tag("20260101", "baseline").unwrap(),
            "20260101-000000-aaaa"
        );
        assert_eq!(a.resolve("baseline").unwrap(), "20260101-000000-aaaa");
        a.tag("last", "baseline").unwrap();
        assert_eq!(a.resolve("baseline").unwrap(), "20260102-000000-bbbb");
        assert_eq!(a.tags().unwrap().len(), 1);
        assert!(matches!(
            a.tag("last", "2026"),
            Err(ArchiveError::BadTag { .. })
        ));
        assert!(matches!(
            a.resolve("nosuch"),
            Err(ArchiveError::NotFound(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A run killed after renaming its new record into place but before indexing it: the
    /// row describes the previous version, and listing must notice.
    #[test]
    fn a_record_replaced_behind_the_index_is_read_again() {
        let dir = temp_dir("stale");
        let a = Archive::open(Some(&dir)).unwrap();
        let mut r = record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z");
        a.save(&r).unwrap();
        assert_eq!(a.list().unwrap()[0].status, "incomplete");
        r.status = Status::Complete;
        let path = a.record_path(&r.id);
        store::write_atomic(&path, &serde_json::to_vec_pretty(&r).unwrap()).unwrap();
        assert_eq!(a.list().unwrap()[0].status, "complete");
        // ...and the row was refreshed: the next listing agrees without reading the file.
        let i = index::Index::open(&dir).unwrap();
        assert_eq!(i.list().unwrap()[0].0.status, "complete");
        // A folder gone takes its row with it.
        std::fs::remove_dir_all(dir.join("runs").join(&r.id)).unwrap();
        assert!(a.list().unwrap().is_empty());
        assert!(i.list().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// What a kill in the middle of writing leaves: temporary files, never records.
    #[test]
    fn temporary_files_are_never_records() {
        let dir = temp_dir("tmpfiles");
        let a = Archive::open(Some(&dir)).unwrap();
        let r = record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z");
        a.save(&r).unwrap();
        let run = dir.join("runs").join(&r.id);
        std::fs::write(
            run.join("run.json.tmp"),
            b"{\"schema_version\": 1, \"id\": \"20260101-0",
        )
        .unwrap();
        // A run killed during its first save: a folder with only the temporary file.
        let first = dir.join("runs").join("20260102-000000-bbbb");
        std::fs::create_dir_all(&first).unwrap();
        std::fs::write(first.join("run.json.tmp"), b"{").unwrap();
        let list = a.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].id, r.id);
        assert_eq!(a.load("last").unwrap().id, r.id);
        assert!(matches!(
            a.resolve("20260102"),
            Err(ArchiveError::NotFound(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An index written by an older perflab (no stamps) is dropped and rebuilt.
    #[test]
    fn an_index_of_another_version_is_rebuilt() {
        let dir = temp_dir("oldindex");
        let a = Archive::open(Some(&dir)).unwrap();
        a.save(&record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z"))
            .unwrap();
        std::fs::remove_file(dir.join("index.sqlite")).unwrap();
        let old = rusqlite::Connection::open(dir.join("index.sqlite")).unwrap();
        old.execute_batch(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, started_at TEXT NOT NULL, status TEXT NOT NULL,
             workload TEXT NOT NULL, target TEXT NOT NULL, suite TEXT, steps INTEGER NOT NULL,
             peak_metric TEXT NOT NULL, peak_value REAL, command TEXT NOT NULL);
             INSERT INTO runs VALUES ('20260101-000000-aaaa', 'x', 'stale', 'null', '', NULL, 7, '', NULL, '')",
        )
        .unwrap();
        drop(old);
        let list = a.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!((list[0].status.as_str(), list[0].steps), ("incomplete", 0));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_is_not_a_results_folder() {
        let dir = temp_dir("file");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        for root in [file.clone(), file.join("below")] {
            let e = Archive::open(Some(&root)).err().unwrap();
            assert!(
                matches!(&e, ArchiveError::NotAFolder(p) if p == &file),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lost_index_is_rebuilt_from_the_records() {
        let dir = temp_dir("reindex");
        let a = Archive::open(Some(&dir)).unwrap();
        a.save(&record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z"))
            .unwrap();
        std::fs::write(dir.join("index.sqlite"), b"not a database").unwrap();
        assert_eq!(a.list().unwrap().len(), 1);
        std::fs::remove_file(dir.join("index.sqlite")).unwrap();
        assert_eq!(a.list().unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Every file under `dir` with its size, modification time and inode.
    fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, i64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let m = e.metadata().unwrap();
                if m.is_dir() {
                    todo.push(e.path());
                }
                out.push((
                    e.path(),
                    m.len(),
                    m.mtime_nsec() + m.mtime() * 1_000_000_000,
                    m.ino(),
                ));
            }
        }
        out.sort();
        out
    }

    /// Read-only listing sees what the records say, even where the index is stale or of
    /// another version, and leaves every file as it was; a missing archive is not created.
    #[test]
    fn a_read_only_archive_writes_nothing() {
        let dir = temp_dir("readonly");
        assert!(matches!(
            ReadOnlyArchive::open(Some(&dir)),
            Err(ArchiveError::NoArchive(_))
        ));
        assert!(!dir.exists());
        let a = Archive::open(Some(&dir)).unwrap();
        let mut r = record("20260101-000000-aaaa", "2026-01-01T00:00:00.000Z");
        a.save(&r).unwrap();
        a.save(&record("20260102-000000-bbbb", "2026-01-02T00:00:00.000Z"))
            .unwrap();
        a.tag("20260101", "base").unwrap();
        // The first run's record replaced behind the index's back; the second's folder gone.
        r.status = Status::Complete;
        store::write_atomic(
            &a.record_path(&r.id),
            &serde_json::to_vec_pretty(&r).unwrap(),
        )
        .unwrap();
        std::fs::remove_dir_all(dir.join("runs/20260102-000000-bbbb")).unwrap();
        let before = snapshot(&dir);
        let ro = ReadOnlyArchive::open(Some(&dir)).unwrap();
        let list = ro.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].status, "complete");
        assert_eq!(ro.load("last").unwrap().status, Status::Complete);
        assert_eq!(ro.tags().unwrap()["base"], r.id);
        assert_eq!(snapshot(&dir), before, "nothing written");
        // Ids are folder names, never paths.
        for bad in [
            "..",
            "../runs",
            "/etc",
            "20260101-000000-aaaa/..",
            "",
            ".hidden",
        ] {
            assert!(ro.run_dir(bad).is_none(), "{bad}");
        }
        assert!(ro.run_dir(&r.id).is_some());
        // An index of another version is read around, not rebuilt.
        let c = rusqlite::Connection::open(dir.join("index.sqlite")).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        drop(c);
        let before = snapshot(&dir);
        assert_eq!(ro.list().unwrap().len(), 1);
        assert_eq!(snapshot(&dir), before);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
