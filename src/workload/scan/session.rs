//! One client of a database scan: its own connection, one query per op, every answer checked.
//!
//! - **warm**: the first client runs the query once, untimed, when it opens (the others wait
//!   for it in the setup phase), so the engine's cache (and the OS page cache under it) holds
//!   what it can of the table; every timed scan is a repeat.
//! - **cold**: SQLite: before each scan, untimed ([`Session::between`]), the database file's
//!   pages are dropped from the OS page cache (`fdatasync` + `POSIX_FADV_DONTNEED`, which
//!   changes nothing in the file) and the connection's own page cache is emptied (`PRAGMA
//!   shrink_memory`), so every scan reads the table from storage. With several clients, each
//!   drop also takes pages from under the others' scans. A server's cache cannot be dropped
//!   from a client: the step reports how much of what the server read came from storage (its
//!   own counters), and says so when "cold" was served from its cache.
//!
//! A connection that broke is opened again before the next scan (the failed scan counts as
//! an error).
//!
//! A scan can run for minutes. When perflab stops waiting for one (`--op-timeout`, Ctrl-C), the
//! server must stop too, or it goes on reading the table under the next step: the connection
//! is [`crate::sql::bounded`]'s, which tells the server so.

use super::predicate::Predicate;
use crate::sql::backend::Backend;
use crate::sql::sql::Conn;
use crate::stop::Stop;
use crate::workload::{OpError, OpOutcome, Session};
use std::path::PathBuf;
use std::sync::Arc;

/// What a scan session needs to know about its step.
#[derive(Debug, Clone)]
pub struct ScanQuery {
    pub predicate: Predicate,
    pub sql: String,
    /// Rows in the table: the answers' truth, and the op's items.
    pub rows: u64,
    /// The table's size as the engine stores it: the op's bytes.
    pub table_bytes: u64,
    pub cold: bool,
    /// Warm: this session runs the step's warming scan when it opens (one per step: the
    /// cache it fills is shared).
    pub warm_up: bool,
}

pub struct ScanSession {
    backend: Arc<Backend>,
    conn: Box<dyn Conn>,
    query: ScanQuery,
    /// SQLite, cold: the files whose cached pages are dropped before each scan.
    drop_files: Vec<PathBuf>,
}

impl ScanSession {
    pub fn open(
        backend: Arc<Backend>,
        query: ScanQuery,
        stop: &Stop,
    ) -> Result<ScanSession, OpError> {
        let conn = connect(&backend, stop)?;
        let drop_files = match (&*backend, query.cold) {
            (Backend::Sqlite { path, .. }, true) => {
                let mut wal = path.clone().into_os_string();
                wal.push("-wal");
                vec![path.clone(), PathBuf::from(wal)]
            }
            _ => Vec::new(),
        };
        let mut s = ScanSession {
            backend,
            conn,
            query,
            drop_files,
        };
        if s.query.cold {
            s.between();
        } else if s.query.warm_up {
            // The warming scan: untimed, and its answer checked like any other.
            s.scan()?;
        }
        Ok(s)
    }

    fn scan(&mut self) -> Result<(), OpError> {
        if self.conn.is_broken() {
            let stop = self.conn.stop().clone();
            self.conn = connect(&self.backend, &stop)?;
        }
        let answer = self
            .conn
            .query_text(&self.query.sql)
            .map_err(|e| OpError::db("", &e))?;
        self.query
            .predicate
            .check(answer.as_deref(), self.query.rows)
            .map_err(|wrong| OpError::new(crate::record::ErrorKind::WrongAnswer, wrong))
    }
}

impl Session for ScanSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        self.scan()?;
        Ok(OpOutcome {
            bytes: self.query.table_bytes,
            items: self.query.rows,
            kind: "",
        })
    }

    fn wants_between(&self) -> bool {
        !self.drop_files.is_empty()
    }

    fn between(&mut self) {
        for path in &self.drop_files {
            // A missing WAL file has nothing cached; a failure leaves the scan warmer than
            // asked, which the device's counters in the record show.
            if let Ok(f) = std::fs::File::open(path) {
                let _ = crate::engine::sys::drop_cache(&f);
            }
        }
        let _ = self.conn.batch("PRAGMA shrink_memory");
    }
}

/// A session's connection: the server stops a scan perflab stopped waiting for.
fn connect(backend: &Backend, stop: &Stop) -> Result<Box<dyn Conn>, OpError> {
    crate::sql::bounded::connect(backend, stop).map_err(|e| OpError::db("", &e))
}
