//! The little a transaction workload needs from a database connection, so DebitCredit and
//! order entry are written once and run on SQLite, PostgreSQL and MySQL/MariaDB alike.
//!
//! Statements are written with `?` placeholders and integer parameters (the workloads need
//! nothing else); each backend rewrites the placeholders its own way (`$1` for PostgreSQL) and
//! converts the integers to the types the server inferred. Errors are sorted by what the
//! caller does next ([`DbErrorKind`]): retry the transaction, reconnect, or give up.

use crate::stop::Stop;
use std::fmt;

/// Which SQL the backend speaks, where the workloads' DDL and loading differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
    Mysql,
}

/// The longest message perflab's PostgreSQL client takes from a server (its header says how
/// long). perflab's statements answer with integers and short texts; a longer claim is a
/// broken or hostile server, refused before any memory is set aside for it, so what a reply
/// costs is bounded by the bytes actually received and this limit.
pub const MAX_MESSAGE: usize = 64 << 20;

/// What the caller does about a failed statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// A serialization failure, deadlock, lock timeout, busy database or duplicate key from
    /// a concurrent writer: roll back and run the transaction again.
    Conflict,
    /// The connection is gone: open a new one.
    Broken,
    /// The server's bytes did not follow its protocol (a message of an unknown type, a
    /// length past [`MAX_MESSAGE`], packets out of order): the connection is given up, as a
    /// broken one is.
    Protocol,
    /// No answer within the op timeout (`--op-timeout`): the connection is given up (its
    /// state is unknown) and re-opened, and the transaction counts as timed out.
    TimedOut,
    /// The server cancelled the statement: its statement timeout (which scans set at the op
    /// timeout), or a cancel request. The transaction failed; the connection is usable.
    Cancelled,
    /// The database's own storage failed (a full disk, an I/O error): SQLite's, where the
    /// client is the server. The transaction failed; the connection is usable.
    Io,
    /// The server cannot work the way perflab's options ask (a pooler in transaction mode
    /// that does not keep perflab's named prepared statements, `-M prepared`): retrying or
    /// reconnecting meets the same refusal, so the run stops with the message, which names
    /// the option to change.
    Unsupported,
    /// Anything else: the transaction failed.
    Other,
}

/// A failed statement, with the server's message (never a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    pub kind: DbErrorKind,
    pub message: String,
}

impl DbError {
    /// The kind of failure an op that met this error counts as.
    pub fn op_kind(&self) -> crate::record::ErrorKind {
        match self.kind {
            DbErrorKind::Conflict => crate::record::ErrorKind::Conflict,
            DbErrorKind::Broken => crate::record::ErrorKind::Reset,
            DbErrorKind::Protocol => crate::record::ErrorKind::Protocol,
            DbErrorKind::TimedOut => crate::record::ErrorKind::Timeout,
            DbErrorKind::Cancelled => crate::record::ErrorKind::Timeout,
            DbErrorKind::Io => crate::record::ErrorKind::Io,
            DbErrorKind::Unsupported | DbErrorKind::Other => crate::record::ErrorKind::Server,
        }
    }

    pub fn other(message: impl Into<String>) -> Self {
        DbError {
            kind: DbErrorKind::Other,
            message: message.into(),
        }
    }

    /// What this engine or connection cannot do at all.
    pub fn unsupported(message: impl Into<String>) -> Self {
        DbError {
            kind: DbErrorKind::Unsupported,
            message: message.into(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<DbError> for String {
    fn from(e: DbError) -> String {
        e.message
    }
}

/// How to reach a database server: its URL, password included, and the session settings
/// (`--set`) for every connection. `Debug` shows the URL with its password as `***`.
#[derive(Clone)]
pub struct ServerTarget {
    /// A `postgres://`, `mysql://` or `mariadb://` URL.
    pub url: String,
    /// `SET name = value` for every session.
    pub set: Vec<(String, String)>,
    /// How long a session's statement (or a counter's query) may wait for its answer.
    pub op_timeout: std::time::Duration,
    /// How the sessions send their statements (`-M`).
    pub query_mode: super::query_mode::QueryMode,
}

/// How long any wait on a server may take once the run was stopped: cleanup after Ctrl-C
/// must not hang on a server that stopped answering.
pub const SHUTDOWN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(400);

/// How long a statement in flight may go on after its server was sent a cancel before
/// perflab closes the connection under it (a server that does not answer the cancel): well
/// within the 2 s a Ctrl-C may take.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// The answer timeout to use now: as asked, but never above [`SHUTDOWN_TIMEOUT`] once the
/// run was stopped.
pub fn answer_limit(
    asked: Option<std::time::Duration>,
    stop: &Stop,
) -> Option<std::time::Duration> {
    if stop.is_set() {
        Some(asked.map_or(SHUTDOWN_TIMEOUT, |a| a.min(SHUTDOWN_TIMEOUT)))
    } else {
        asked
    }
}

/// `name` when it is a plain setting name (letters, digits, `_` and `.`) that can be spliced
/// into a `SET` statement; None otherwise.
pub fn plain_name(name: &str) -> Option<&str> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    plain.then_some(name)
}

/// Whether an I/O error is a socket timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO` expired).
pub fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl fmt::Debug for ServerTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = match self.url.parse::<crate::target::url::TargetUrl>() {
            Ok(u) => u.redacted(),
            Err(_) => "..".to_string(),
        };
        f.debug_struct("ServerTarget")
            .field("url", &url)
            .field("set", &self.set)
            .field("op_timeout", &self.op_timeout)
            .field("query_mode", &self.query_mode)
            .finish()
    }
}

/// A statement prepared on one connection: an index into that connection's list.
pub type Stmt = usize;

/// A parameter of [`Conn::fetch`]: most are integers; a few lookups need text (TPC-C's
/// customer by last name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    /// SQL NULL (a script's variable that is not defined, as pgbench binds it).
    Null,
}

impl Param<'_> {
    /// The parameter as the text protocols send it.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Param::Int(v) => std::borrow::Cow::Owned(v.to_string()),
            Param::Text(s) => std::borrow::Cow::Borrowed(s),
            Param::Null => std::borrow::Cow::Borrowed("NULL"),
        }
    }
}

/// A statement's answer as a script reads it: how many rows it changed and returned, and,
/// when asked (`keep`: pgbench's `\gset` and `\aset`), its columns' names and rows as
/// text (NULL as None).
#[derive(Debug, Default, Clone)]
pub struct Answer {
    pub keep: bool,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows returned, kept or not.
    pub returned: u64,
    /// Rows changed (the command tag's count).
    pub changed: u64,
}

impl Answer {
    /// Ready for the next statement: what it keeps, nothing from the last one.
    pub fn reset(&mut self, keep: bool) {
        self.keep = keep;
        self.columns.clear();
        self.rows.clear();
        self.returned = 0;
        self.changed = 0;
    }
}

/// One connection, as the workloads use it.
pub trait Conn: Send {
    fn dialect(&self) -> Dialect;
    /// Runs SQL with no parameters and no result rows (DDL, loading, `ANALYZE`); several
    /// statements separated by `;` where the backend allows it.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Prepares a statement written with `?` placeholders.
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError>;
    /// Runs a prepared statement; returns the rows it changed.
    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError>;
    /// Runs a prepared query and reads every row; appends each row's first column (as an
    /// integer, NULL as 0) to `out` and returns the number of rows.
    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError>;
    /// Runs a prepared query whose parameters may be text and reads the first `width`
    /// columns of every row as integers (NULL as 0) into `out`, row after row; returns the
    /// number of rows. Columns after the first `width` travel but are not read: a
    /// transaction that selects text it only shows puts it last.
    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError>;
    /// Runs an unprepared query and returns its first row, every column as an integer
    /// (NULL as 0), or None when there is no row: counts and sums for checks.
    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError>;
    /// Runs an unprepared query and returns its first row's first column as text.
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError>;
    /// Runs an unprepared query and returns every row, every column as text (NULL as an
    /// empty string): query plans, answers to check.
    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError>;
    /// Runs a prepared statement of a user's script (pgbench `-f`): parameters of any kind,
    /// the answer read as text into `out` (its rows kept only when `out.keep` says so).
    fn answer(&mut self, stmt: Stmt, params: &[Param<'_>], out: &mut Answer)
    -> Result<(), DbError>;
    /// Runs `sql` as it is over the simple path (PostgreSQL's Query message, MySQL's text
    /// protocol; SQLite runs each of its statements), the last statement's answer into `out`:
    /// a script's statement under `-M simple`, its variables already written in.
    fn simple(&mut self, sql: &str, out: &mut Answer) -> Result<(), DbError>;
    /// Starts a pipeline (PostgreSQL's extended protocol without a Sync after each
    /// statement): [`Conn::answer`] then sends its statement and returns at once, reading
    /// nothing, until [`Conn::pipeline_end`]. Other engines have none.
    fn pipeline_begin(&mut self) -> Result<(), DbError> {
        Err(DbError::unsupported(
            "pipelines are PostgreSQL's (its extended protocol); this engine has none",
        ))
    }
    /// Ends a pipeline: one Sync, then every queued statement's answer read; the first
    /// error any of them met.
    fn pipeline_end(&mut self) -> Result<(), DbError> {
        Err(DbError::unsupported(
            "pipelines are PostgreSQL's (its extended protocol); this engine has none",
        ))
    }
    /// The server's id of this connection's session (PostgreSQL's backend pid, MySQL's
    /// connection id), to end it from another connection; None for SQLite.
    fn server_pid(&self) -> Option<i64> {
        None
    }
    /// Whether a transaction is open on the connection; None when the backend cannot tell.
    fn in_transaction(&self) -> Option<bool> {
        None
    }
    /// Starts a transaction; `writes` says it will write (SQLite then takes the write lock
    /// at once, so two writers never deadlock upgrading their locks).
    fn begin(&mut self, writes: bool) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    /// Rolls back whatever is open; errors are ignored (the connection may be gone).
    fn rollback(&mut self);
    /// Whether the connection is known to be unusable.
    fn is_broken(&self) -> bool;
    /// Loads a flat file into `table` through the engine's bulk path and returns the rows
    /// loaded: PostgreSQL `COPY ... FROM STDIN`, MySQL `LOAD DATA LOCAL INFILE`, SQLite one
    /// transaction of prepared inserts. The file is perflab's own format ([`load_file_rows`]):
    /// one row per line, columns in the order of `columns` separated by tabs, integers or text
    /// without tabs, newlines or backslashes, and `\N` for NULL (the text formats of COPY
    /// and LOAD DATA alike).
    fn load_file(
        &mut self,
        table: &str,
        columns: &[&str],
        path: &std::path::Path,
    ) -> Result<u64, DbError>;
    /// How long one answer may take before the connection counts as broken (None: no
    /// limit, for loading). Backends that cannot change it after connecting ignore it.
    fn set_answer_timeout(&mut self, _limit: Option<std::time::Duration>) {}
    /// The stop token the connection was opened with: a statement in flight when it is set
    /// is cancelled on the server, and loops over statements (loading) look at it.
    fn stop(&self) -> &Stop;
}

/// Fails with "interrupted" once the connection's stop token is set: loads look between
/// chunks.
pub fn stopped(conn: &dyn Conn) -> Result<(), DbError> {
    match conn.stop().is_set() {
        true => Err(DbError::other("interrupted while loading")),
        false => Ok(()),
    }
}

/// The rows of a flat file for [`Conn::load_file`], each line's fields as they are (a final
/// line without its newline counts too).
pub fn load_file_rows(bytes: &[u8]) -> impl Iterator<Item = std::str::Split<'_, char>> {
    let text = std::str::from_utf8(bytes).unwrap_or("");
    text.split_terminator('\n').map(|line| line.split('\t'))
}

/// Reads a flat file for loading, with its name in the error.
pub fn read_load_file(path: &std::path::Path) -> Result<Vec<u8>, DbError> {
    std::fs::read(path).map_err(|e| DbError::other(format!("cannot read {}: {e}", path.display())))
}

/// Rewrites `?` placeholders as `$1`, `$2` ... (PostgreSQL). The workloads' SQL has no `?`
/// inside literals.
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// The tables perflab created in a database, as listed in its `perflab_meta` table.
pub const META: &str = "perflab_meta";

/// How many of `names` exist as tables in the connection's database (schema).
pub fn count_tables(conn: &mut dyn Conn, names: &[&str]) -> Result<i64, DbError> {
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = match conn.dialect() {
        Dialect::Sqlite => {
            format!("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ({list})")
        }
        Dialect::Postgres => format!(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ({list})"
        ),
        Dialect::Mysql => format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name IN ({list})"
        ),
    };
    Ok(conn.query_row(&sql)?.map(|r| r[0]).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered_placeholders("UPDATE t SET a = a + ? WHERE k = ?"),
            "UPDATE t SET a = a + $1 WHERE k = $2"
        );
        assert_eq!(numbered_placeholders("SELECT 1"), "SELECT 1");
    }
}
