//! SQLite (rusqlite, bundled): the embedded default, no server needed.
//!
//! Each client has its own connection. Writers take the database's write lock at `BEGIN
//! IMMEDIATE`, so two writers never deadlock on a lock upgrade; waiting for the lock is part
//! of the response time (`busy_timeout`), and a transaction that still finds it busy is a
//! conflict, rolled back and retried. The durability settings that decide how often the log
//! is synced (`journal_mode`, `synchronous`) are set on every connection and recorded in the
//! spec. Statements are prepared once and kept in rusqlite's per-connection cache.

use super::sql::{Answer, Conn, DbError, DbErrorKind, Dialect, Param, Stmt};
use crate::stop::{OnStop, Stop};
use rusqlite::{Connection, ErrorCode, params_from_iter};
use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for the write lock before its transaction is retried.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

thread_local! {
    /// The stop token of the connection whose statement runs on this thread, and when the
    /// current wait for a lock began: SQLite's busy handler is a plain function, so it finds
    /// them here. (The interrupt alone does not end a wait for a lock.)
    static BUSY: RefCell<(Option<Stop>, Option<Instant>)> = const { RefCell::new((None, None)) };
}

/// Waits for a lock as SQLite's own busy timeout does (short sleeps, growing), for at most
/// [`BUSY_TIMEOUT`], and gives up at once when the statement's stop token is set.
fn busy(count: i32) -> bool {
    const DELAYS_MS: [u64; 8] = [1, 2, 5, 10, 15, 20, 25, 25];
    BUSY.with(|b| {
        let mut b = b.borrow_mut();
        if count == 0 || b.1.is_none() {
            b.1 = Some(Instant::now());
        }
        if b.0.as_ref().is_some_and(Stop::is_set) {
            return false;
        }
        let waited = b.1.map_or(Duration::ZERO, |s| s.elapsed());
        if waited >= BUSY_TIMEOUT {
            return false;
        }
        let delay = DELAYS_MS[(count.max(0) as usize).min(DELAYS_MS.len() - 1)];
        drop(b);
        std::thread::sleep(Duration::from_millis(delay).min(BUSY_TIMEOUT - waited));
        true
    })
}

/// The settings that decide durability and log syncs, as SQLite names them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SqliteSettings {
    /// `wal`, `delete`, `truncate`, `persist`, `memory` or `off`.
    pub journal_mode: String,
    /// `full`, `normal`, `off` or `extra`.
    pub synchronous: String,
    /// The page size of a database this connection creates (SQLite's default, 4 KiB, when
    /// None); an existing database keeps its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
}

impl SqliteSettings {
    pub const JOURNAL_MODES: [&'static str; 6] =
        ["wal", "delete", "truncate", "persist", "memory", "off"];
    pub const SYNCHRONOUS: [&'static str; 4] = ["full", "normal", "off", "extra"];
}

fn db_error(e: rusqlite::Error) -> DbError {
    let kind = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbErrorKind::Conflict,
        // SQLITE_FULL and SQLITE_IOERR: the disk under the database file.
        Some(ErrorCode::DiskFull | ErrorCode::SystemIoFailure) => DbErrorKind::Io,
        _ => DbErrorKind::Other,
    };
    DbError {
        kind,
        message: e.to_string(),
    }
}

/// Opens a connection with the run's settings.
pub fn connect(path: &Path, s: &SqliteSettings, stop: &Stop) -> Result<SqliteConn, DbError> {
    let open = || -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        crate::engine::sqlite_math::register(&conn)
            .map_err(|e| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(1), Some(e)))?;
        conn.busy_handler(Some(busy))?;
        conn.set_prepared_statement_cache_capacity(64);
        // Before the journal mode: switching to WAL writes the header of a new database,
        // after which its page size is fixed.
        if let Some(size) = s.page_size {
            conn.execute_batch(&format!("PRAGMA page_size = {size}"))?;
        }
        // The values were checked against the lists above, so they are plain keywords.
        conn.query_row(
            &format!("PRAGMA journal_mode = {}", s.journal_mode),
            [],
            |_| Ok(()),
        )?;
        conn.execute_batch(&format!("PRAGMA synchronous = {}", s.synchronous))?;
        Ok(conn)
    };
    let conn =
        open().map_err(|e| DbError::other(format!("cannot open {}: {e}", path.display())))?;
    Ok(SqliteConn::new(conn, stop))
}

/// Opens a database read-only, changing nothing (not even its journal mode): to look at a
/// file before deciding whether perflab may write to it.
pub fn inspect(path: &Path, stop: &Stop) -> Result<SqliteConn, DbError> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| DbError::other(format!("cannot open {}: {e}", path.display())))?;
    crate::engine::sqlite_math::register(&conn).map_err(DbError::other)?;
    Ok(SqliteConn::new(conn, stop))
}

/// One connection. A statement handle is its SQL's index; the compiled statement lives in
/// rusqlite's cache (a statement borrowing its connection cannot sit beside it).
pub struct SqliteConn {
    conn: Connection,
    sqls: Vec<String>,
    stop: Stop,
    /// Interrupts the running statement when the stop token is set.
    _interrupt: OnStop,
}

impl SqliteConn {
    fn new(conn: Connection, stop: &Stop) -> SqliteConn {
        let handle = conn.get_interrupt_handle();
        SqliteConn {
            conn,
            sqls: Vec::new(),
            stop: stop.clone(),
            _interrupt: stop.on_stop(move || handle.interrupt()),
        }
    }

    /// Makes this connection's token the one the busy handler watches on this thread.
    #[inline]
    fn arm(&self) {
        BUSY.with(|b| {
            let mut b = b.borrow_mut();
            if !b.0.as_ref().is_some_and(|s| s.same(&self.stop)) {
                b.0 = Some(self.stop.clone());
            }
        });
    }

    /// Runs a prepared query and reads the first `width` columns of every row.
    fn rows<P: rusqlite::ToSql>(
        &mut self,
        stmt: Stmt,
        params: &[P],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        let mut s = self
            .conn
            .prepare_cached(&self.sqls[stmt])
            .map_err(db_error)?;
        let mut rows = s.query(params_from_iter(params.iter())).map_err(db_error)?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(db_error)? {
            for i in 0..width {
                out.push(r.get::<_, Option<i64>>(i).map_err(db_error)?.unwrap_or(0));
            }
            n += 1;
        }
        Ok(n)
    }
}

/// Reads a script statement's answer from SQLite: every row counted, kept as text when
/// asked; the rows it changed.
fn read_answer(
    conn: &Connection,
    s: &mut rusqlite::Statement<'_>,
    params: &[Param<'_>],
    out: &mut Answer,
) -> Result<(), DbError> {
    if out.keep {
        out.columns = s.column_names().iter().map(|c| c.to_string()).collect();
    }
    let width = s.column_count();
    let mut rows = s.query(params_from_iter(params.iter())).map_err(db_error)?;
    while let Some(r) = rows.next().map_err(db_error)? {
        out.returned += 1;
        if out.keep {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                use rusqlite::types::ValueRef;
                values.push(match r.get_ref(i).map_err(db_error)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some(v.to_string()),
                    ValueRef::Real(v) => Some(v.to_string()),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                });
            }
            out.rows.push(values);
        }
    }
    drop(rows);
    out.changed = conn.changes();
    Ok(())
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn stop(&self) -> &Stop {
        &self.stop
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.arm();
        self.conn.execute_batch(sql).map_err(db_error)
    }

    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.arm();
        // Compiled now, so a missing table shows here rather than in the first transaction.
        self.conn.prepare_cached(sql).map_err(db_error)?;
        self.sqls.push(sql.to_string());
        Ok(self.sqls.len() - 1)
    }

    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.arm();
        let mut s = self
            .conn
            .prepare_cached(&self.sqls[stmt])
            .map_err(db_error)?;
        s.execute(params_from_iter(params.iter()))
            .map(|n| n as u64)
            .map_err(db_error)
    }

    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.arm();
        self.rows(stmt, params, 1, out)
    }

    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        self.arm();
        self.rows(stmt, params, width, out)
    }

    fn answer(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Answer,
    ) -> Result<(), DbError> {
        self.arm();
        let mut s = self
            .conn
            .prepare_cached(&self.sqls[stmt])
            .map_err(db_error)?;
        read_answer(&self.conn, &mut s, params, out)
    }

    fn simple(&mut self, sql: &str, out: &mut Answer) -> Result<(), DbError> {
        self.arm();
        match self.conn.prepare(sql) {
            Ok(mut s) => read_answer(&self.conn, &mut s, &[], out),
            // Several statements in one (a compound query): run them all; no answer is read.
            Err(rusqlite::Error::MultipleStatement) => {
                self.conn.execute_batch(sql).map_err(db_error)?;
                out.changed = self.conn.changes();
                Ok(())
            }
            Err(e) => Err(db_error(e)),
        }
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(!self.conn.is_autocommit())
    }

    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        self.arm();
        let mut s = self.conn.prepare(sql).map_err(db_error)?;
        let columns = s.column_count();
        let mut rows = s.query([]).map_err(db_error)?;
        match rows.next().map_err(db_error)? {
            None => Ok(None),
            Some(r) => (0..columns)
                .map(|i| {
                    r.get::<_, Option<i64>>(i)
                        .map(|v| v.unwrap_or(0))
                        .map_err(db_error)
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.arm();
        let mut s = self.conn.prepare(sql).map_err(db_error)?;
        let mut rows = s.query([]).map_err(db_error)?;
        match rows.next().map_err(db_error)? {
            None => Ok(None),
            Some(r) => {
                let v: rusqlite::types::Value = r.get(0).map_err(db_error)?;
                Ok(match v {
                    rusqlite::types::Value::Null => None,
                    rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                    rusqlite::types::Value::Real(f) => Some(f.to_string()),
                    rusqlite::types::Value::Text(t) => Some(t),
                    rusqlite::types::Value::Blob(_) => None,
                })
            }
        }
    }

    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.arm();
        let mut s = self.conn.prepare(sql).map_err(db_error)?;
        let columns = s.column_count();
        let mut rows = s.query([]).map_err(db_error)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(db_error)? {
            let mut row = Vec::with_capacity(columns);
            for i in 0..columns {
                let v: rusqlite::types::Value = r.get(i).map_err(db_error)?;
                row.push(match v {
                    rusqlite::types::Value::Null | rusqlite::types::Value::Blob(_) => String::new(),
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Real(f) => f.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                });
            }
            out.push(row);
        }
        Ok(out)
    }

    /// The file is read and parsed before the write lock is taken, so loaders of several
    /// files overlap everything but the inserts (SQLite has one writer).
    fn load_file(&mut self, table: &str, columns: &[&str], path: &Path) -> Result<u64, DbError> {
        self.arm();
        use rusqlite::types::Value;
        let bytes = super::sql::read_load_file(path)?;
        if std::str::from_utf8(&bytes).is_err() {
            return Err(DbError::other(format!(
                "{} is not UTF-8 text",
                path.display()
            )));
        }
        let width = columns.len();
        let mut values: Vec<Value> = Vec::with_capacity(bytes.len() / 4);
        for (line, fields) in super::sql::load_file_rows(&bytes).enumerate() {
            let before = values.len();
            values.extend(fields.map(|f| match f.parse::<i64>() {
                Ok(i) => Value::Integer(i),
                Err(_) if f == "\\N" => Value::Null,
                Err(_) => Value::Text(f.to_string()),
            }));
            if values.len() - before != width {
                return Err(DbError::other(format!(
                    "{} line {}: {} fields, {table} has {width} columns",
                    path.display(),
                    line + 1,
                    values.len() - before
                )));
            }
        }
        let marks = vec!["?"; width].join(", ");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(", ")
        );
        self.begin(true)?;
        let inserted = (|| -> rusqlite::Result<u64> {
            let mut s = self.conn.prepare_cached(&sql)?;
            let mut n = 0;
            for row in values.chunks_exact(width.max(1)) {
                s.execute(params_from_iter(row.iter()))?;
                n += 1;
            }
            Ok(n)
        })();
        match inserted {
            Ok(n) => self.commit().map(|_| n),
            Err(e) => {
                self.rollback();
                Err(db_error(e))
            }
        }
    }

    fn begin(&mut self, writes: bool) -> Result<(), DbError> {
        self.arm();
        let sql = if writes { "BEGIN IMMEDIATE" } else { "BEGIN" };
        let mut s = self.conn.prepare_cached(sql).map_err(db_error)?;
        s.execute([]).map(|_| ()).map_err(db_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.arm();
        let mut s = self.conn.prepare_cached("COMMIT").map_err(db_error)?;
        s.execute([]).map(|_| ()).map_err(db_error)
    }

    fn rollback(&mut self) {
        self.arm();
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    fn is_broken(&self) -> bool {
        false
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Int(v) => rusqlite::types::ToSqlOutput::from(v),
            Param::Text(t) => rusqlite::types::ToSqlOutput::from(t),
            Param::Null => rusqlite::types::ToSqlOutput::from(rusqlite::types::Null),
        })
    }
}
