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
//! server must stop too, or it goes on reading the table under the next step: PostgreSQL gets
//! `statement_timeout` at the op timeout and `client_connection_check_interval` of a second
//! (PostgreSQL 14 and later notice a client that went away during a query), MariaDB
//! `max_statement_time` and MySQL `max_execution_time`; each only where the server knows it
//! and `--set` did not set it.

use super::predicate::Predicate;
use crate::sql::backend::Backend;
use crate::sql::sql::{Conn, Dialect};
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

/// A session's connection, with the server told to stop a statement nobody waits for (OLAP's
/// sessions use it too).
pub fn connect(backend: &Backend, stop: &Stop) -> Result<Box<dyn Conn>, OpError> {
    let mut conn = backend
        .connect_session(stop)
        .map_err(|e| OpError::db("", &e))?;
    for (_, sql) in server_limits(backend, conn.dialect()) {
        // A server that does not know the setting (PostgreSQL before 14, MySQL's name on
        // MariaDB) refuses it; the scan runs without.
        let _ = conn.batch(&sql);
    }
    Ok(conn)
}

/// The settings (name, statement) that make the server give up a scan at the op timeout or
/// when its client is gone, less those the user set with `--set`.
fn server_limits(backend: &Backend, d: Dialect) -> Vec<(&'static str, String)> {
    let (Backend::Postgres(t) | Backend::Mysql(t)) = backend else {
        return Vec::new();
    };
    let ms = t.op_timeout.as_millis().max(1);
    let all: Vec<(&'static str, String)> = match d {
        Dialect::Postgres => vec![
            ("statement_timeout", format!("SET statement_timeout = {ms}")),
            (
                "client_connection_check_interval",
                "SET client_connection_check_interval = 1000".into(),
            ),
        ],
        Dialect::Mysql => vec![
            (
                "max_statement_time",
                format!("SET SESSION max_statement_time = {:.3}", ms as f64 / 1000.0),
            ),
            (
                "max_execution_time",
                format!("SET SESSION max_execution_time = {ms}"),
            ),
        ],
        Dialect::Sqlite => Vec::new(),
    };
    all.into_iter()
        .filter(|(name, _)| !t.set.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::sql::ServerTarget;
    use std::time::Duration;

    #[test]
    fn servers_are_told_to_stop_at_the_op_timeout_unless_the_user_said_otherwise() {
        let target = |set: Vec<(String, String)>| ServerTarget {
            url: "postgres://u@h/db".into(),
            set,
            op_timeout: Duration::from_secs(90),
            query_mode: Default::default(),
        };
        let pg = server_limits(&Backend::Postgres(target(Vec::new())), Dialect::Postgres);
        assert_eq!(pg[0].1, "SET statement_timeout = 90000");
        assert_eq!(pg.len(), 2);
        let mine = vec![("statement_timeout".to_string(), "0".to_string())];
        let pg = server_limits(&Backend::Postgres(target(mine)), Dialect::Postgres);
        assert_eq!(pg.len(), 1);
        assert_eq!(pg[0].0, "client_connection_check_interval");
        let my = server_limits(&Backend::Mysql(target(Vec::new())), Dialect::Mysql);
        assert_eq!(my[0].1, "SET SESSION max_statement_time = 90.000");
        assert_eq!(my[1].1, "SET SESSION max_execution_time = 90000");
    }
}
