//! The SQLite index of runs: one row per run, refreshed on every save.
//!
//! Each row carries the [`Stamp`] of the record file it was read from. A save replaces the
//! file (a new inode) and then updates the row; a process killed between the two leaves a row
//! that describes the previous version, which the stamp exposes (`Archive::list` re-reads it).

use crate::record::RunRecord;
use rusqlite::{Connection, params};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One line of `perflab runs`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: String,
    pub started_at: String,
    pub status: String,
    pub workload: String,
    pub target: String,
    pub suite: Option<String>,
    pub steps: u64,
    /// The best headline figure and its name, if the run has an analysis.
    pub peak_metric: String,
    pub peak_value: Option<f64>,
    pub command: String,
    /// The machine's host name, and its machine digest where it has one.
    pub host: String,
    pub machine: Option<String>,
    /// The settings that define the run (`rw randread, bs 4 KiB, iodepth 32`), empty for
    /// records made before 0.2.
    pub settings: String,
}

impl RunSummary {
    pub fn of(r: &RunRecord) -> Self {
        let peak = r
            .analysis
            .as_ref()
            .and_then(|a| a.peak_step)
            .and_then(|i| r.steps.iter().find(|s| s.index == i))
            .map(|s| s.summary.headline.mean);
        RunSummary {
            id: r.id.clone(),
            started_at: r.started_at.clone(),
            status: r.status.as_str().to_string(),
            workload: r.workload.clone(),
            target: r.target.clone(),
            suite: r.suite.clone(),
            steps: r.steps.len() as u64,
            peak_metric: r.headline.metric.clone(),
            peak_value: peak,
            command: r.command.join(" "),
            host: r.env.hostname.clone().unwrap_or_default(),
            machine: r.env.machine.clone(),
            settings: r
                .settings
                .iter()
                .map(|s| format!("{} {}", s.name, s.value))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Which version of a record file a row was read from: inode, size and modification time.
/// Every save writes a new file and renames it over the old one, so the inode alone changes
/// with each save; size and time guard against a reused inode number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp(String);

impl Stamp {
    pub fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp(format!(
            "{}:{}:{}.{:09}",
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec()
        ))
    }
}

pub struct Index {
    conn: Connection,
}

/// Bumped when the table changes: an index of another version is dropped and rebuilt (it is
/// only a cache).
const VERSION: i64 = 4;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, started_at TEXT NOT NULL, status TEXT NOT NULL, workload TEXT NOT NULL,
    target TEXT NOT NULL, suite TEXT, steps INTEGER NOT NULL, peak_metric TEXT NOT NULL,
    peak_value REAL, command TEXT NOT NULL, stamp TEXT NOT NULL, host TEXT NOT NULL,
    machine TEXT, settings TEXT NOT NULL)";

impl Index {
    /// Opens the index, recreating it if the file is not a usable database (it is only a
    /// cache of the record files, and perflab created it).
    pub fn open(root: &Path) -> rusqlite::Result<Index> {
        let path = root.join("index.sqlite");
        match Self::open_at(&path) {
            Ok(i) => Ok(i),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                Self::open_at(&path)
            }
        }
    }

    /// Opens the index to read only, if it is there and of this version (else the records
    /// are read instead): nothing is created, dropped or rewritten.
    pub fn open_read_only(root: &Path) -> Option<Index> {
        use rusqlite::OpenFlags;
        let path = root.join("index.sqlite");
        if !path.is_file() {
            return None;
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .ok()?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).ok()?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .ok()?;
        (version == VERSION).then_some(Index { conn })
    }

    fn open_at(path: &Path) -> rusqlite::Result<Index> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != VERSION {
            conn.execute_batch("DROP TABLE IF EXISTS runs")?;
            conn.pragma_update(None, "user_version", VERSION)?;
        }
        conn.execute_batch(SCHEMA)?;
        Ok(Index { conn })
    }

    /// Records `r`, read from the record file whose metadata gave `stamp`.
    pub fn upsert(&self, r: &RunSummary, stamp: &Stamp) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                r.id,
                r.started_at,
                r.status,
                r.workload,
                r.target,
                r.suite,
                r.steps as i64,
                r.peak_metric,
                r.peak_value,
                r.command,
                stamp.0,
                r.host,
                r.machine,
                r.settings
            ],
        )?;
        Ok(())
    }

    pub fn delete(&self, id: &str) -> rusqlite::Result<()> {
        self.conn.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Every row with the stamp of the file it was read from.
    pub fn list(&self) -> rusqlite::Result<Vec<(RunSummary, Stamp)>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, status, workload, target, suite, steps, peak_metric, peak_value, command, stamp,
             host, machine, settings FROM runs",
        )?;
        let rows = stmt.query_map([], |row| {
            let summary = RunSummary {
                id: row.get(0)?,
                started_at: row.get(1)?,
                status: row.get(2)?,
                workload: row.get(3)?,
                target: row.get(4)?,
                suite: row.get(5)?,
                steps: row.get::<_, i64>(6)? as u64,
                peak_metric: row.get(7)?,
                peak_value: row.get(8)?,
                command: row.get(9)?,
                host: row.get(11)?,
                machine: row.get(12)?,
                settings: row.get(13)?,
            };
            Ok((summary, Stamp(row.get(10)?)))
        })?;
        rows.collect()
    }
}
