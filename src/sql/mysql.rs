//! MySQL and MariaDB behind [`Conn`], through perflab's own client of their wire protocol
//! ([`super::mysql_wire`]; one protocol for both servers), which reads rows where they lie
//! and decodes only the cells a caller asks for ([`super::mysql_row`]).
//!
//! ```text
//!  mysql://user:pw@host:3306/db?socket=/run/mysqld/mysqld.sock&ssl-mode=REQUIRED
//!        │  (mariadb:// too)                     │
//!        ▼                                       ▼
//!  TargetUrl ──► password: URL, else MYSQL_PWD, else ~/.my.cnf [client]
//!        │
//!        ▼
//!  connect() ──► SET SESSION name = value, for every --set pair
//!        │
//!        ▼
//!  MyConn ─ prepare(sql) ──► COM_STMT_PREPARE once; Stmt = index into MyConn's list
//!         ─ exec/query   ──► COM_STMT_EXECUTE (binary protocol), i64 parameters
//!         ─ batch, query_row, query_text, begin/commit/rollback ──► COM_QUERY (text)
//! ```
//!
//! - Statements are prepared on the server once per connection and kept by index, for the
//!   connection's life. Preparing the same text again returns the same index.
//! - Affected rows are rows *matched*, as SQLite and PostgreSQL count them
//!   (`CLIENT_FOUND_ROWS`): by default MySQL counts only rows whose value changed, so
//!   `SET a = a + 0` would report 0 rows.
//! - The transport is what the URL says: TCP to the host (127.0.0.1 when none is given), or
//!   the Unix socket of `?socket=` (or a host that is an absolute path); never the one for
//!   the other (the two do not perform alike, and a run must measure the one it names).
//! - TLS: `PREFERRED` by default, as the MySQL 8 client does (TLS if the server offers it,
//!   else plain text); `?ssl-mode=REQUIRED` (encrypted, certificate not checked, as the MySQL
//!   clients do), `VERIFY_CA`, `VERIFY_IDENTITY` (against `?ssl-ca=FILE`, else the system's
//!   roots: [`crate::target::tls`], shared with PostgreSQL); `DISABLED` for plain text.
//!   Never over a Unix socket.
//! - Authentication: `mysql_native_password` and `caching_sha2_password` (the full exchange
//!   sends the password over TLS or a socket, else encrypted with the server's RSA key).
//! - Errors, by what the caller does next: deadlock (1213), lock wait timeout (1205),
//!   duplicate key (1062) and MariaDB's snapshot-isolation write conflict (1020) are
//!   conflicts to retry; I/O and protocol failures, a killed session and a server shutting
//!   down mark the connection broken (every later call fails at once, with no I/O); the
//!   rest are the server's own message, `ERROR 1146 (42S02): Table ... doesn't exist`.
//! - Numbers come back as integers whatever their SQL type: `sum()` is DECIMAL in MySQL and
//!   arrives as text (`"1234"`), which is parsed; a fraction is cut off; NULL is 0.
//! - Disclosure: [`settings`] reads [`DISCLOSED`] in one `SHOW VARIABLES` (the session's
//!   values, after `SET SESSION`); [`counters`] reads redo log writes and syncs, data file
//!   syncs and commits from `SHOW GLOBAL STATUS` on a connection of its own.

use super::cancel::{Canceller, Waiting};
use super::mysql_row::{Cell, Column, RowRef, int_of, text_of};
use super::mysql_wire::{self, Login, Prepared, Sink, Stream, TlsChoice, WireConn, WireError};
use super::query_mode::{self, QueryMode};
use super::sql::{
    Answer, Conn, DbError, DbErrorKind, Dialect, Param, ServerTarget, Stmt, answer_limit,
    is_timeout, plain_name,
};
use crate::stop::Stop;
use crate::target::tls::{Identity, Roots, Trust, Verify};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long opening a TCP connection may take, as for PostgreSQL.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Server variables recorded with every run: version, durability, group commit, sizes.
/// Servers name some differently (`tx_isolation` is MariaDB's name before 11.1,
/// `transaction_isolation` MySQL's; `binlog_commit_wait_*` are MariaDB's group commit delay,
/// `binlog_group_commit_sync_delay` MySQL's; `innodb_redo_log_capacity` replaces
/// `innodb_log_file_size` from MySQL 8.0.30): each name the server lacks is left out.
pub const DISCLOSED: [&str; 17] = [
    "version",
    "version_comment",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "log_bin",
    "innodb_flush_method",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_doublewrite",
    "transaction_isolation",
    "tx_isolation",
    "binlog_commit_wait_usec",
    "binlog_commit_wait_count",
    "binlog_group_commit_sync_delay",
    "autocommit",
    "max_connections",
];

/// The cumulative counters of [`counters`]: perflab's name, then the server's.
const COUNTERS: [(&str, &str); 7] = [
    ("log_writes", "Innodb_log_writes"),
    // MySQL, and MariaDB before 10.8; MariaDB 10.8+ has no such counter, and its redo log
    // syncs are counted in Innodb_data_fsyncs instead.
    ("log_syncs", "Innodb_os_log_fsyncs"),
    ("log_bytes", "Innodb_os_log_written"),
    ("data_syncs", "Innodb_data_fsyncs"),
    // Explicit COMMIT statements. The workloads end every transaction with one, so this
    // counts their commits exactly (and other sessions' too, as pg_stat_database does).
    // Handler_commit is no measure of transactions: it counts the engine's commit of every
    // statement, so a transaction of three statements and a COMMIT adds 4, and every
    // autocommit SELECT adds 1. Autocommit writes have no counter of their own (Com_insert
    // and the like count statements inside transactions as well), so they are not added.
    ("server_commits", "Com_commit"),
    // MariaDB with the binary log on: transactions written to it, and the group commits
    // that wrote them (commits per group shows group commit at work).
    ("binlog_commits", "Binlog_commits"),
    ("binlog_group_commits", "Binlog_group_commits"),
];

/// One connection to the server, with the statements prepared on it.
pub struct MyConn {
    conn: WireConn,
    /// The prepared statements, by [`Stmt`], with their text (to find a repeated one); none
    /// server-side in the simple mode (`-M simple`, the text protocol), where the text is
    /// sent with the parameters written in.
    stmts: Vec<(String, Option<Prepared>)>,
    /// `-M simple`: statements go as text with their parameters written in.
    simple: bool,
    broken: bool,
    /// The run's stop token; see [`super::cancel`].
    stop: Stop,
    /// Whether a statement is waiting for the server, for the canceller.
    waiting: Waiting,
    /// `KILL QUERY` of this connection's statement on a side connection, registered with
    /// the stop token.
    _canceller: Canceller,
    /// The same kill, for a statement the client gave up on (a read that timed out): the
    /// server would otherwise run it on, or keep it waiting for a lock.
    kill: Arc<dyn Fn() + Send + Sync>,
    /// Opened before the stop: takes no new statement once the run is stopping.
    before_stop: bool,
}

impl std::fmt::Debug for MyConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyConn")
            .field("connection_id", &self.conn.connection_id())
            .field("statements", &self.stmts.len())
            .field("broken", &self.broken)
            .finish()
    }
}

/// Where and how to connect, read from the URL, and for messages where the connection goes
/// (`host:port` or the socket's path).
struct Options {
    host: String,
    port: u16,
    socket: Option<String>,
    user: String,
    password: Option<String>,
    database: Option<String>,
    /// None: `DISABLED`; else how far the server is trusted.
    trust: Option<Trust>,
    /// TLS must be had (`REQUIRED` and the `VERIFY_*` modes), rather than `PREFERRED`.
    required: bool,
    place: String,
}

/// What connecting needs from the URL: password from the URL, else the environment and
/// `~/.my.cnf` (the target module's lookup, shared by every backend).
fn options(t: &ServerTarget) -> Result<Options, DbError> {
    use crate::target::url::{Backend, TargetUrl};
    let url: TargetUrl = t
        .url
        .parse()
        .map_err(|e| DbError::other(format!("bad URL: {e}")))?;
    if url.backend != Backend::Mysql {
        return Err(DbError::other(
            "not a MySQL URL; write mysql://USER@HOST:PORT/DATABASE (or mariadb://)",
        ));
    }
    let password = match &url.password {
        Some(p) => Some(p.expose().to_string()),
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            url.password_from_environment(&|k| std::env::var(k).ok(), home.as_deref())
                .password
                .map(|p| p.expose().to_string())
        }
    };
    // As the mysql client: no user means the login name.
    let user = url
        .user
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .unwrap_or_default();

    let mut socket: Option<String> = None;
    let mut ssl_mode = String::from("PREFERRED");
    let mut ssl_ca: Option<PathBuf> = None;
    let (mut ssl_cert, mut ssl_key): (Option<PathBuf>, Option<PathBuf>) = (None, None);
    for (k, v) in &url.params {
        match k.to_ascii_lowercase().replace('_', "-").as_str() {
            "socket" => socket = Some(v.clone()),
            "ssl-mode" | "sslmode" => ssl_mode = v.to_ascii_uppercase().replace('-', "_"),
            "ssl-ca" | "sslca" | "sslrootcert" => ssl_ca = Some(PathBuf::from(v)),
            "ssl-cert" | "sslcert" => ssl_cert = Some(PathBuf::from(v)),
            "ssl-key" | "sslkey" => ssl_key = Some(PathBuf::from(v)),
            _ => {
                return Err(DbError::other(format!(
                    "unknown URL parameter {k:?}; MySQL targets take {PARAMS}"
                )));
            }
        }
    }
    let identity = match (ssl_cert, ssl_key) {
        (None, None) => None,
        (Some(cert), Some(key)) => {
            let id = Identity { cert, key };
            // Read here, so a bad file is one line before any connection.
            id.check().map_err(|e| DbError::other(e.0))?;
            Some(id)
        }
        _ => {
            return Err(DbError::other(
                "ssl-cert and ssl-key go together: give the client certificate and its key",
            ));
        }
    };
    // A host that is a path names the socket (or the directory holding mysqld.sock).
    if socket.is_none()
        && let Some(h) = url.host.as_deref().filter(|h| h.starts_with('/'))
    {
        let p = Path::new(h);
        socket = Some(if p.is_dir() {
            p.join("mysqld.sock").display().to_string()
        } else {
            h.to_string()
        });
    }

    let port = url.port.unwrap_or(3306);
    if port == 0 {
        return Err(DbError::other(
            "port 0: give the server's port (3306 by default)",
        ));
    }
    let host = match url.host.as_deref() {
        Some(h) if !h.starts_with('/') => h.to_string(),
        _ => "127.0.0.1".to_string(),
    };
    let place = match &socket {
        Some(s) => s.clone(),
        None if host.contains(':') => format!("[{host}]:{port}"),
        None => format!("{host}:{port}"),
    };
    let verify = match ssl_mode.as_str() {
        "DISABLED" => None,
        // What the MySQL clients do for PREFERRED and REQUIRED: encrypt, trust any certificate.
        "PREFERRED" | "REQUIRED" => Some(Verify::Off),
        "VERIFY_CA" => Some(Verify::Chain),
        "VERIFY_IDENTITY" => Some(Verify::Full),
        other => {
            return Err(DbError::other(format!(
                "ssl-mode={other}: use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
            )));
        }
    };
    let trust = verify.map(|verify| Trust {
        verify,
        roots: ssl_ca.map_or(Roots::System, Roots::File),
        identity,
    });
    Ok(Options {
        host,
        port,
        socket,
        user,
        password,
        database: url.database.clone().filter(|d| !d.is_empty()),
        required: trust.is_some() && ssl_mode != "PREFERRED",
        trust,
        place,
    })
}

/// The URL parameters a MySQL target takes, for messages.
const PARAMS: &str = "socket=PATH, ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY, ssl-ca=FILE, ssl-cert=FILE and ssl-key=FILE";

/// What a MySQL URL's TLS settings verify, for the record: the mode and, in the shared
/// words of [`crate::target::tls::Trust::describe`], what it checks.
pub fn tls_description(url: &crate::target::url::TargetUrl) -> String {
    if url.host.as_deref().is_some_and(|h| h.starts_with('/'))
        || url
            .params
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("socket"))
    {
        return "a Unix socket: not encrypted".into();
    }
    let param = |names: &[&str]| {
        url.params
            .iter()
            .find(|(k, _)| names.contains(&k.to_ascii_lowercase().replace('_', "-").as_str()))
            .map(|(_, v)| v.clone())
    };
    let mode = param(&["ssl-mode", "sslmode"]).map_or_else(
        || "PREFERRED".into(),
        |m| m.to_ascii_uppercase().replace('-', "_"),
    );
    let verify = match mode.as_str() {
        "DISABLED" => return "ssl-mode=DISABLED: not encrypted".into(),
        "VERIFY_CA" => Verify::Chain,
        "VERIFY_IDENTITY" => Verify::Full,
        _ => Verify::Off,
    };
    let trust = Trust {
        verify,
        roots: param(&["ssl-ca", "sslca", "sslrootcert"])
            .map_or(Roots::System, |f| Roots::File(f.into())),
        identity: param(&["ssl-cert", "sslcert"])
            .zip(param(&["ssl-key", "sslkey"]))
            .map(|(c, k)| Identity {
                cert: c.into(),
                key: k.into(),
            }),
    };
    let mut text = format!("ssl-mode={mode}: {}", trust.describe());
    if mode == "PREFERRED" {
        text.push_str("; in the clear if the server offers no TLS");
    }
    text
}

/// Opens a connection, without the session settings: TCP (or the socket), then the
/// handshake. With no `ssl-mode` in the URL, TLS is preferred, as the MySQL 8 client and
/// libpq do: used if the server offers it, plain TCP if it offers none.
///
/// `answer` bounds every read and write, the handshake included: None for loading, the op
/// timeout for sessions and counters.
fn open(t: &ServerTarget, answer: Option<Duration>, stop: &Stop) -> Result<WireConn, DbError> {
    let answer = answer_limit(answer, stop);
    let o = options(t)?;
    let limit = answer.map_or(CONNECT_TIMEOUT, |a| a.min(CONNECT_TIMEOUT));
    let stream = match &o.socket {
        Some(path) => {
            let s = std::os::unix::net::UnixStream::connect(path).map_err(|e| DbError {
                kind: DbErrorKind::Broken,
                message: format!("cannot connect to {path}: {}", plain_io(&e.to_string())),
            })?;
            Stream::Unix(s)
        }
        None => Stream::Tcp(tcp_connect(&o, limit)?),
    };
    // The handshake within the connect timeout; then each answer within `answer`.
    stream.set_timeouts(Some(limit));
    let tls = match &o.trust {
        None => TlsChoice::Off,
        Some(trust) => {
            let config = trust.config().map_err(|e| DbError::other(e.0))?;
            match o.required {
                true => TlsChoice::Required(config),
                false => TlsChoice::Preferred(config),
            }
        }
    };
    let login = Login {
        user: &o.user,
        password: o.password.as_deref(),
        database: o.database.as_deref(),
        tls,
        server_name: &o.host,
    };
    let conn = mysql_wire::connect(stream, &login).map_err(|e| open_error(e, &o))?;
    conn.stream().set_timeouts(answer);
    Ok(conn)
}

/// A TCP connection to the server, Nagle off (statements are small and each waits for its
/// answer).
fn tcp_connect(o: &Options, limit: Duration) -> Result<std::net::TcpStream, DbError> {
    use std::net::ToSocketAddrs;
    let fail = |e: std::io::Error| DbError {
        kind: DbErrorKind::Broken,
        message: format!(
            "cannot connect to {}: {}",
            o.place,
            plain_io(&e.to_string())
        ),
    };
    let mut last = None;
    for addr in (o.host.as_str(), o.port).to_socket_addrs().map_err(fail)? {
        match std::net::TcpStream::connect_timeout(&addr, limit) {
            Ok(s) => {
                s.set_nodelay(true).map_err(fail)?;
                return Ok(s);
            }
            Err(e) if is_timeout(&e) => last = Some(std::io::Error::other("timed out")),
            Err(e) => last = Some(e),
        }
    }
    Err(fail(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
    })))
}

/// Why a connection did not open, in one line.
fn open_error(e: WireError, o: &Options) -> DbError {
    match e {
        WireError::Tls(io) => {
            let line = crate::target::tls::refusal(&io, crate::target::tls::MYSQL)
                .unwrap_or_else(|| plain_io(&io.to_string()));
            DbError::other(format!("cannot connect to {} with TLS: {line}", o.place))
        }
        WireError::NoTls => DbError::other(format!(
            "cannot connect to {} with TLS: the server does not offer it; drop ssl-mode or set it to PREFERRED",
            o.place
        )),
        WireError::Io(io) if is_timeout(&io) => DbError {
            kind: DbErrorKind::Broken,
            message: format!("cannot connect to {}: timed out", o.place),
        },
        WireError::Io(io) => DbError {
            kind: DbErrorKind::Broken,
            message: format!(
                "cannot connect to {}: {}",
                o.place,
                match io.kind() {
                    std::io::ErrorKind::UnexpectedEof => "the server closed the connection".into(),
                    _ => plain_io(&io.to_string()),
                }
            ),
        },
        e => db_err(e),
    }
}

/// Connects and applies the session settings, with no limit on how long a statement may
/// take (loading).
pub fn connect(t: &ServerTarget, stop: &Stop) -> Result<MyConn, DbError> {
    connect_with(t, None, stop)
}

/// Connects as [`connect`] does; each answer may then take at most `answer`.
pub fn connect_with(
    t: &ServerTarget,
    answer: Option<Duration>,
    stop: &Stop,
) -> Result<MyConn, DbError> {
    // Looked at before the connection opens, as `open` chooses the reads' bound then: a
    // Ctrl-C while it opens leaves a connection whose reads wait
    // without end, and whose stop action was never registered, so it must take no statement.
    // Looked at afterwards, as it was, such a connection counted as one opened after the
    // stop, ran the load's DROP TABLE, and waited on a lock past the test's 90 s.
    let before_stop = !stop.is_set();
    let mut conn = open(t, answer, stop)?;
    for (name, value) in &t.set {
        let sql = format!(
            "SET SESSION {} = {}",
            ident(name)?,
            literal(value, conn.no_backslash_escape())
        );
        run_text(&mut conn, &sql).map_err(|e| {
            let e = db_err(e);
            DbError {
                kind: e.kind,
                message: format!("SET SESSION {name}: {}", e.message),
            }
        })?;
    }
    // A server that ignores the kill has the socket shut down under the read, as for
    // PostgreSQL (see [`super::cancel`]).
    let waiting = Waiting::default();
    let id = conn.connection_id();
    let target = t.clone();
    let kill: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
        let side = Stop::new();
        if let Ok(mut c) = open(&target, Some(super::sql::CANCEL_GRACE), &side) {
            let _ = run_text(&mut c, &format!("KILL QUERY {id}"));
        }
    });
    let killer = kill.clone();
    let socket = conn.stream().duplicate();
    let canceller = Canceller::register(stop, waiting.clone(), socket, move || killer());
    Ok(MyConn {
        conn,
        stmts: Vec::new(),
        simple: t.query_mode == QueryMode::Simple,
        broken: false,
        stop: stop.clone(),
        waiting,
        _canceller: canceller,
        kill,
        before_stop,
    })
}

/// A variable name as given, checked to be a plain identifier (it is spliced into SQL).
fn ident(name: &str) -> Result<&str, DbError> {
    plain_name(name)
        .ok_or_else(|| DbError::other(format!("SET SESSION {name:?}: not a variable name")))
}

/// A value for `SET SESSION`: numbers and `DEFAULT` bare (MySQL refuses a quoted string for
/// a numeric variable: error 1232), anything else as a quoted string.
fn literal(value: &str, no_backslash_escape: bool) -> String {
    let v = value.trim();
    let digits = v.strip_prefix('-').unwrap_or(v);
    let numeric = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit());
    if numeric || v.eq_ignore_ascii_case("default") {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('\'');
    for c in value.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' if !no_backslash_escape => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The recorded settings, as the server reports them for a session with `SET SESSION`
/// applied (global values for variables that have no session value). Variables this server
/// does not have are absent.
pub fn settings(c: &mut MyConn) -> Result<BTreeMap<String, String>, DbError> {
    let names = DISCLOSED
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    c.usable()?;
    let r = name_values(
        &mut c.conn,
        &format!("SHOW SESSION VARIABLES WHERE Variable_name IN ({names})"),
    );
    Ok(c.check(r)?.into_iter().collect())
}

/// Cumulative server counters, on a connection of its own: redo log writes, syncs and bytes,
/// data file syncs, commits (see [`COUNTERS`] for what each counts). Counters this server
/// does not have are left out; None when the server cannot be reached.
pub fn counters(t: &ServerTarget, stop: &Stop) -> Option<Vec<(String, f64)>> {
    let mut c = open(t, Some(t.op_timeout), stop).ok()?;
    let names = COUNTERS
        .iter()
        .map(|(_, n)| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = name_values(
        &mut c,
        &format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({names})"),
    )
    .ok()?;
    let mut out = Vec::new();
    for (ours, theirs) in COUNTERS {
        let value = rows
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(theirs))
            .and_then(|(_, v)| v.trim().parse::<f64>().ok());
        if let Some(v) = value {
            out.push((ours.to_string(), v));
        }
    }
    Some(out)
}

/// The (name, value) rows of a `SHOW VARIABLES` or `SHOW STATUS`.
fn name_values(c: &mut WireConn, sql: &str) -> Result<Vec<(String, String)>, WireError> {
    let mut rows = Texts::default();
    c.query(sql, &mut rows, None)?;
    Ok(rows
        .rows
        .into_iter()
        .filter_map(|mut r| {
            let v = r.get_mut(1)?.take()?;
            Some((r.first_mut()?.take()?, v))
        })
        .collect())
}

/// Why a call failed: the client (or server), or a value that is not a number.
enum Fail {
    Driver(WireError),
    Value(String),
}

impl From<WireError> for Fail {
    fn from(e: WireError) -> Self {
        Fail::Driver(e)
    }
}

/// The sink of a statement run for its effect: the rows the first result changed.
#[derive(Default)]
struct Changed {
    rows: Option<u64>,
}

impl Sink for Changed {
    fn changed(&mut self, rows: u64) {
        self.rows.get_or_insert(rows);
    }
    fn columns(&mut self, _columns: &[Column], _names: &[String]) {
        self.rows.get_or_insert(0);
    }
    fn row(&mut self, _row: RowRef<'_>) {}
}

/// The sink of a query: the rows of its first result counted, and their first `width`
/// cells read as integers into `out`; nothing else of a row is looked at.
struct Ints<'a> {
    width: usize,
    out: &'a mut Vec<i64>,
    /// Results seen: only the first one's rows are read.
    results: usize,
    rows: usize,
    rows_changed: u64,
    /// The first cell that was not a number (or a row that did not parse).
    bad: Option<String>,
}

impl<'a> Ints<'a> {
    fn new(width: usize, out: &'a mut Vec<i64>) -> Ints<'a> {
        Ints {
            width,
            out,
            results: 0,
            rows: 0,
            rows_changed: 0,
            bad: None,
        }
    }

    fn done(self) -> Result<usize, Fail> {
        match self.bad {
            Some(e) => Err(Fail::Value(e)),
            None => Ok(self.rows),
        }
    }
}

impl Sink for Ints<'_> {
    fn changed(&mut self, rows: u64) {
        if self.results == 0 {
            self.rows_changed = rows;
        }
        self.results += 1;
    }
    fn columns(&mut self, _columns: &[Column], _names: &[String]) {
        self.results += 1;
    }
    #[inline]
    fn row(&mut self, row: RowRef<'_>) {
        if self.results != 1 {
            return;
        }
        self.rows += 1;
        if self.width == 0 {
            return;
        }
        let mut cells = row.cells();
        for _ in 0..self.width {
            let v = match cells.next() {
                None => Ok(0),
                Some(Ok(c)) => int_of(c),
                Some(Err(e)) => Err(e.to_string()),
            };
            match v {
                Ok(v) => self.out.push(v),
                Err(e) => {
                    self.out.push(0);
                    self.bad.get_or_insert(e);
                }
            }
        }
    }
}

/// The sink of a text query whose rows are wanted whole: the first result's rows, every
/// cell as text (NULL as None).
#[derive(Default)]
struct Texts {
    results: usize,
    rows: Vec<Vec<Option<String>>>,
    bad: Option<String>,
}

impl Sink for Texts {
    fn changed(&mut self, _rows: u64) {
        self.results += 1;
    }
    fn columns(&mut self, _columns: &[Column], _names: &[String]) {
        self.results += 1;
    }
    fn row(&mut self, row: RowRef<'_>) {
        if self.results != 1 {
            return;
        }
        let mut texts = Vec::with_capacity(row.columns.len());
        for c in row.cells() {
            match c {
                Ok(Cell::Null) => texts.push(None),
                Ok(c) => texts.push(Some(text_of(c))),
                Err(e) => {
                    texts.push(None);
                    self.bad.get_or_insert(e.to_string());
                }
            }
        }
        self.rows.push(texts);
    }
}

impl Texts {
    fn done(self) -> Result<Vec<Vec<Option<String>>>, Fail> {
        match self.bad {
            Some(e) => Err(Fail::Value(e)),
            None => Ok(self.rows),
        }
    }
}

/// The sink of a script's statement: the last result's columns and (when kept) rows as
/// text, and the rows it changed.
struct Answering<'a> {
    out: &'a mut Answer,
    bad: Option<String>,
}

impl Sink for Answering<'_> {
    fn changed(&mut self, rows: u64) {
        self.out.changed = rows;
        self.out.returned = 0;
        self.out.rows.clear();
        self.out.columns.clear();
    }
    fn names(&self) -> bool {
        self.out.keep
    }
    fn columns(&mut self, _columns: &[Column], names: &[String]) {
        self.out.changed = 0;
        self.out.returned = 0;
        self.out.rows.clear();
        self.out.columns.clear();
        self.out.columns.extend_from_slice(names);
    }
    fn row(&mut self, row: RowRef<'_>) {
        self.out.returned += 1;
        if !self.out.keep {
            return;
        }
        let mut texts = Vec::with_capacity(row.columns.len());
        for c in row.cells() {
            match c {
                Ok(Cell::Null) => texts.push(None),
                Ok(c) => texts.push(Some(text_of(c))),
                Err(e) => {
                    texts.push(None);
                    self.bad.get_or_insert(e.to_string());
                }
            }
        }
        self.out.rows.push(texts);
    }
}

/// Runs `sql` as text, its results read and dropped (the first failing statement's error
/// is returned; the rest of a batch does not run).
fn run_text(c: &mut WireConn, sql: &str) -> Result<(), WireError> {
    c.query(sql, &mut mysql_wire::Discard, None)
}

/// `-M simple`: the statement with its parameters written in, over the text protocol;
/// the rows changed, or the rows read (first `width` columns) into `out`.
fn run_inline(
    c: &mut WireConn,
    sql: &str,
    params: &[Param<'_>],
    width: usize,
    out: &mut Vec<i64>,
) -> Result<(u64, usize), Fail> {
    let text = inline(c, sql, params)?;
    let mut sink = Ints::new(width, out);
    c.query(&text, &mut sink, None)?;
    let changed = sink.rows_changed;
    Ok((changed, sink.done()?))
}

/// `sql` with `params` written in, quoted for this session's escaping.
fn inline(c: &WireConn, sql: &str, params: &[Param<'_>]) -> Result<String, Fail> {
    let backslashes = !c.no_backslash_escape();
    query_mode::inline(sql, params, |_, v, out| match v {
        Param::Int(n) => query_mode::integer(n, out),
        Param::Text(t) => query_mode::quote(t, backslashes, out),
        Param::Null => out.push_str("NULL"),
    })
    .map_err(Fail::Value)
}

/// The rows of a text query, every cell as text (NULL as None).
fn all_rows(c: &mut WireConn, sql: &str) -> Result<Vec<Vec<Option<String>>>, Fail> {
    let mut sink = Texts::default();
    c.query(sql, &mut sink, None)?;
    sink.done()
}

/// `Connection refused (os error 111)` → `Connection refused`.
fn plain_io(desc: &str) -> String {
    match desc.rfind(" (os error ") {
        Some(i) if desc.ends_with(')') => desc[..i].to_string(),
        _ => desc.to_string(),
    }
}

/// The server's error codes that mean: retry the transaction.
fn conflict(code: u16) -> bool {
    matches!(
        code,
        1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
        | 1205 // ER_LOCK_WAIT_TIMEOUT: the statement was rolled back
        | 1062 // ER_DUP_ENTRY: a concurrent insert of the same key
        | 1020 // ER_CHECKREAD: MariaDB's innodb_snapshot_isolation write conflict (on from 11.8)
    )
}

/// The server's error codes that mean: the server cancelled the statement.
fn cancelled(code: u16) -> bool {
    matches!(
        code,
        1317 // ER_QUERY_INTERRUPTED: KILL QUERY
        | 1969 // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
        | 3024 // ER_QUERY_TIMEOUT (MySQL max_execution_time)
    )
}

/// The server's error codes that mean: the connection is gone.
fn gone(code: u16) -> bool {
    matches!(
        code,
        1053 // ER_SERVER_SHUTDOWN
        | 1152 // ER_ABORTING_CONNECTION
        | 1927 // ER_CONNECTION_KILLED (MariaDB)
        | 2006 // CR_SERVER_GONE_ERROR
        | 2013 // CR_SERVER_LOST
        | 3169 // ER_SESSION_WAS_KILLED (MySQL)
        | 4031 // ER_CLIENT_INTERACTION_TIMEOUT (MySQL)
    )
}

fn db_err(e: WireError) -> DbError {
    let (kind, message) = match e {
        WireError::Server { code, .. } => {
            let kind = if conflict(code) {
                DbErrorKind::Conflict
            } else if gone(code) {
                DbErrorKind::Broken
            } else if cancelled(code) {
                DbErrorKind::Cancelled
            } else {
                DbErrorKind::Other
            };
            // `ERROR 1045 (28000): Access denied for user ...`, as the mysql client shows it.
            (kind, e.to_string())
        }
        // Just the cause (`server disconnected`, `Connection reset by peer`): the caller
        // says the connection was lost.
        WireError::Io(io) if is_timeout(&io) => (
            DbErrorKind::TimedOut,
            "the server did not answer in time".into(),
        ),
        WireError::Io(io) => (
            DbErrorKind::Broken,
            match io.kind() {
                std::io::ErrorKind::UnexpectedEof => "the server closed the connection".into(),
                _ => plain_io(&io.to_string()),
            },
        ),
        e @ WireError::Protocol(_) => (DbErrorKind::Protocol, e.to_string()),
        e @ (WireError::Tls(_) | WireError::NoTls) => (DbErrorKind::Broken, e.to_string()),
        // Caught by perflab, with the connection in step: the statement failed.
        WireError::Refused(m) => (DbErrorKind::Other, m),
    };
    DbError { kind, message }
}

impl MyConn {
    /// Fails at once, with no I/O, once the connection is known to be gone. Every statement
    /// starts here, and ends in [`MyConn::check`]: in between it waits for the server.
    fn usable(&self) -> Result<(), DbError> {
        // Waiting before the look at the token (`Waiting::begin`): a stop after the look
        // finds the statement waiting and kills it.
        self.waiting.begin();
        if self.before_stop && self.stop.is_set() {
            self.waiting.set(false);
            // Nothing new on the server once the run is stopping (see postgres.rs).
            return Err(DbError {
                kind: DbErrorKind::Broken,
                message: "the run is stopping (Ctrl-C): no new statement".into(),
            });
        }
        if self.broken {
            self.waiting.set(false);
            Err(DbError {
                kind: DbErrorKind::Broken,
                message: "the connection was lost earlier".into(),
            })
        } else {
            Ok(())
        }
    }

    /// The error for the caller, noting a broken connection.
    fn fail(&mut self, f: Fail) -> DbError {
        let e = match f {
            Fail::Driver(e) => db_err(e),
            Fail::Value(m) => DbError::other(m),
        };
        if e.kind == DbErrorKind::TimedOut && !self.broken {
            // perflab stops waiting; the statement must stop on the server too.
            (self.kill)();
        }
        if matches!(
            e.kind,
            DbErrorKind::Broken | DbErrorKind::Protocol | DbErrorKind::TimedOut
        ) {
            self.broken = true;
        }
        e
    }

    fn check<T>(&mut self, r: Result<T, impl Into<Fail>>) -> Result<T, DbError> {
        self.waiting.set(false);
        r.map_err(|e| self.fail(e.into()))
    }
}

impl MyConn {
    /// A statement index this connection never gave out; the statement never started.
    fn no_statement(&self, stmt: Stmt) -> DbError {
        self.waiting.set(false);
        DbError::other(format!("no prepared statement #{stmt} on this connection"))
    }
}

impl Conn for MyConn {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Sends the whole text at once (multi-statements are on) and reads every result, so
    /// the first failing statement's error is returned and the rest do not run.
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.usable()?;
        let r = run_text(&mut self.conn, sql);
        self.check(r)
    }

    /// `LOAD DATA LOCAL INFILE`: the server asks for the file by name and the client sends
    /// it. Only for the duration of this statement does the connection answer such a
    /// request, and only with this file: a server asking for any other gets nothing, and
    /// the load an error.
    fn load_file(&mut self, table: &str, columns: &[&str], path: &Path) -> Result<u64, DbError> {
        self.usable()?;
        let name = path
            .to_str()
            .filter(|n| !n.contains(['\'', '\\']))
            .ok_or_else(|| DbError::other(format!("cannot name {} in SQL", path.display())))?
            .to_string();
        let sql = format!(
            "LOAD DATA LOCAL INFILE '{name}' INTO TABLE {table} FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({})",
            columns.join(", ")
        );
        let mut sink = Changed::default();
        let r = self.conn.query(&sql, &mut sink, Some(path));
        match r {
            Ok(()) => {
                self.waiting.set(false);
                Ok(sink.rows.unwrap_or(0))
            }
            // 1148 (MySQL) and 4166 (MariaDB): the server does not take local files.
            Err(WireError::Server { code, message, .. })
                if code == 1148 || code == 3948 || code == 4166 =>
            {
                self.waiting.set(false);
                Err(DbError::other(format!(
                    "the server refuses LOAD DATA LOCAL INFILE ({message}); allow it with SET GLOBAL local_infile = 1"
                )))
            }
            Err(e) => self.check(Err::<u64, _>(e)),
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.usable()?;
        if let Some(i) = self.stmts.iter().position(|(s, _)| s == sql) {
            self.waiting.set(false);
            return Ok(i);
        }
        let st = match self.simple {
            true => {
                self.waiting.set(false);
                None
            }
            false => {
                let r = self.conn.prepare(sql);
                Some(self.check(r)?)
            }
        };
        self.stmts.push((sql.to_string(), st));
        Ok(self.stmts.len() - 1)
    }

    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.usable()?;
        let r = match self.stmts.get_mut(stmt) {
            None => return Err(self.no_statement(stmt)),
            Some((sql, None)) => {
                let values: Vec<Param<'_>> = params.iter().map(|&v| Param::Int(v)).collect();
                run_inline(&mut self.conn, sql, &values, 0, &mut Vec::new()).map(|(n, _)| n)
            }
            Some((_, Some(st))) => {
                let mut sink = Changed::default();
                self.conn
                    .execute(st, params, &mut sink)
                    .map(|()| sink.rows.unwrap_or(0))
                    .map_err(Fail::from)
            }
        };
        self.check(r)
    }

    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.usable()?;
        let r = match self.stmts.get_mut(stmt) {
            None => return Err(self.no_statement(stmt)),
            Some((sql, None)) => {
                let values: Vec<Param<'_>> = params.iter().map(|&v| Param::Int(v)).collect();
                run_inline(&mut self.conn, sql, &values, 1, out).map(|(_, rows)| rows)
            }
            Some((_, Some(st))) => {
                let mut sink = Ints::new(1, out);
                match self.conn.execute(st, params, &mut sink) {
                    Ok(()) => sink.done(),
                    Err(e) => Err(Fail::Driver(e)),
                }
            }
        };
        self.check(r)
    }

    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        self.usable()?;
        let r = match self.stmts.get_mut(stmt) {
            None => return Err(self.no_statement(stmt)),
            Some((sql, None)) => {
                run_inline(&mut self.conn, sql, params, width, out).map(|(_, rows)| rows)
            }
            Some((_, Some(st))) => {
                let mut sink = Ints::new(width, out);
                match self.conn.execute(st, params, &mut sink) {
                    Ok(()) => sink.done(),
                    Err(e) => Err(Fail::Driver(e)),
                }
            }
        };
        self.check(r)
    }

    fn answer(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Answer,
    ) -> Result<(), DbError> {
        self.usable()?;
        let mut sink = Answering { out, bad: None };
        let r = match self.stmts.get_mut(stmt) {
            None => return Err(self.no_statement(stmt)),
            Some((sql, None)) => match inline(&self.conn, sql, params) {
                Err(e) => Err(e),
                Ok(text) => self.conn.query(&text, &mut sink, None).map_err(Fail::from),
            },
            Some((_, Some(st))) => self.conn.execute(st, params, &mut sink).map_err(Fail::from),
        };
        let r = r.and_then(|()| sink.bad.map_or(Ok(()), |e| Err(Fail::Value(e))));
        self.check(r)
    }

    fn server_pid(&self) -> Option<i64> {
        Some(i64::from(self.conn.connection_id()))
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(self.conn.in_transaction())
    }

    fn simple(&mut self, sql: &str, out: &mut Answer) -> Result<(), DbError> {
        self.usable()?;
        let mut sink = Answering { out, bad: None };
        let r = self
            .conn
            .query(sql, &mut sink, None)
            .map_err(Fail::from)
            .and_then(|()| sink.bad.map_or(Ok(()), |e| Err(Fail::Value(e))));
        self.check(r)
    }

    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        self.usable()?;
        let r = all_rows(&mut self.conn, sql);
        let rows = self.check(r)?;
        rows.into_iter()
            .next()
            .map(|row| {
                row.iter()
                    .map(|v| {
                        v.as_deref()
                            .map_or(Ok(0), |t| int_of(Cell::Bytes(t.as_bytes())))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()
            .map_err(DbError::other)
    }

    /// NULL gives None, as no row does.
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.usable()?;
        let r = all_rows(&mut self.conn, sql);
        let rows = self.check(r)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .flatten())
    }

    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.usable()?;
        let r = all_rows(&mut self.conn, sql);
        let rows = self.check(r)?;
        Ok(rows
            .into_iter()
            .map(|row| row.into_iter().map(Option::unwrap_or_default).collect())
            .collect())
    }

    /// `START TRANSACTION` for readers and writers alike: InnoDB treats a transaction as
    /// read-only until it writes.
    fn begin(&mut self, _writes: bool) -> Result<(), DbError> {
        self.usable()?;
        let r = run_text(&mut self.conn, "START TRANSACTION");
        self.check(r)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.usable()?;
        let r = run_text(&mut self.conn, "COMMIT");
        self.check(r)
    }

    fn rollback(&mut self) {
        if !self.broken {
            self.waiting.begin();
            let r = run_text(&mut self.conn, "ROLLBACK");
            let _ = self.check(r);
        }
    }

    fn is_broken(&self) -> bool {
        self.broken
    }

    fn set_answer_timeout(&mut self, limit: Option<Duration>) {
        let limit = answer_limit(limit, &self.stop);
        self.conn.stream().set_timeouts(limit);
    }
}

#[cfg(test)]
mod tests {
    //! What needs no server; the rest is tested against a live MariaDB.
    use super::*;

    #[test]
    fn set_values() {
        assert_eq!(literal("5", false), "5");
        assert_eq!(literal("-1.5", false), "-1.5");
        assert_eq!(literal("default", false), "default");
        assert_eq!(literal("READ-COMMITTED", false), "'READ-COMMITTED'");
        assert_eq!(literal("it's a\\b", false), "'it''s a\\\\b'");
        assert_eq!(literal("a\\b", true), "'a\\b'");
        assert_eq!(literal(".", false), "'.'");
        assert!(ident("innodb_lock_wait_timeout").is_ok());
        assert!(ident("x = 1; DROP TABLE t").is_err());
        assert!(ident("").is_err());
    }

    #[test]
    fn errors_by_code() {
        let server = |code| {
            db_err(WireError::Server {
                state: "40001".into(),
                message: "m".into(),
                code,
            })
        };
        for code in [1213, 1205, 1062, 1020] {
            assert_eq!(server(code).kind, DbErrorKind::Conflict, "{code}");
        }
        for code in [1927, 2006, 2013, 4031] {
            assert_eq!(server(code).kind, DbErrorKind::Broken, "{code}");
        }
        assert_eq!(server(1317).kind, DbErrorKind::Cancelled);
        assert_eq!(
            server(1146),
            DbError {
                kind: DbErrorKind::Other,
                message: "ERROR 1146 (40001): m".into()
            }
        );
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(db_err(eof.into()).kind, DbErrorKind::Broken);
        let late = std::io::Error::from(std::io::ErrorKind::WouldBlock);
        assert_eq!(db_err(late.into()).kind, DbErrorKind::TimedOut);
        assert_eq!(
            db_err(WireError::Protocol("x".into())).kind,
            DbErrorKind::Protocol
        );
        assert_eq!(
            db_err(WireError::Refused("2 parameters".into())).kind,
            DbErrorKind::Other
        );
        assert_eq!(
            plain_io("Connection refused (os error 111)"),
            "Connection refused"
        );
    }

    #[test]
    fn urls_and_secrets() {
        let t = |url: &str| ServerTarget {
            url: url.into(),
            set: vec![],
            op_timeout: Duration::from_secs(30),
            query_mode: Default::default(),
        };
        let o = options(&t("mariadb://u:pw@[::1]:3307/d")).map_err(|e| e.message);
        assert_eq!(
            o.map(|o| (o.place, o.required)),
            Ok(("[::1]:3307".into(), false))
        );
        let o = options(&t("mysql://u@/d?socket=/tmp/my.sock&ssl-mode=REQUIRED"));
        assert_eq!(o.ok().map(|o| o.place), Some("/tmp/my.sock".into()));
        let o = options(&t("mysql://u@h/d?ssl_mode=verify-identity"));
        assert!(o.is_ok_and(|o| o.required && o.place == "h:3306"));
        for bad in [
            "sqlite:///x.db",
            "mysql://u:hunter2@h/d?foo=1",
            "mysql://u:hunter2@h/d?ssl-mode=maybe",
            "mysql://u:hunter2@h:0/d",
        ] {
            let e = options(&t(bad)).err().expect(bad);
            assert!(!e.message.contains("hunter2"), "{}", e.message);
        }
        let shown = format!("{:?}", t("mysql://u:hunter2@h/d"));
        assert!(
            !shown.contains("hunter2") && shown.contains("***"),
            "{shown}"
        );
    }
}
