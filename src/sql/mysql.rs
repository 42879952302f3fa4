//! MySQL and MariaDB behind [`Conn`], through the `mysql` crate (synchronous, pure Rust;
//! one wire protocol for both servers).
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
//! - Statements are prepared on the server once per connection and kept by index; the
//!   driver's own statement cache is off, since evicting from it closes statements on the
//!   server that the list still holds. Preparing the same text again returns the same index.
//! - Affected rows are rows *matched*, as SQLite and PostgreSQL count them
//!   (`CLIENT_FOUND_ROWS`): by default MySQL counts only rows whose value changed, so
//!   `SET a = a + 0` would report 0 rows.
//! - The transport is what the URL says: TCP to the host (127.0.0.1 when none is given), or
//!   the Unix socket of `?socket=` (or a host that is an absolute path). The driver's habit
//!   of quietly switching a loopback TCP connection to the server's socket is turned off:
//!   the two do not perform alike, and a run must measure the one it names.
//! - TLS: `PREFERRED` by default, as the MySQL 8 client does (TLS if the server offers it,
//!   else plain text); `?ssl-mode=REQUIRED` (encrypted, certificate not checked, as the MySQL
//!   clients do), `VERIFY_CA`, `VERIFY_IDENTITY` (with `?ssl-ca=FILE` for a private CA);
//!   `DISABLED` for plain text. Never over a Unix socket.
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
use super::query_mode::{self, QueryMode};
use super::sql::{
    Answer, Conn, DbError, DbErrorKind, Dialect, Param, ServerTarget, Stmt, answer_limit,
    is_timeout, plain_name,
};
use crate::stop::Stop;
use mysql::consts::CapabilityFlags;
use mysql::prelude::{Protocol, Queryable};
use mysql::{
    ClientIdentity, DriverError, LocalInfileHandler, OptsBuilder, Params, QueryResult, SslOpts,
    Statement, Value,
};
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
    conn: mysql::Conn,
    /// The prepared statements, by [`Stmt`], with their text (to find a repeated one); none
    /// server-side in the simple mode (`-M simple`, the text protocol), where the text is
    /// sent with the parameters written in.
    stmts: Vec<(String, Option<Statement>)>,
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

/// The driver's options, and for messages where the connection goes (`host:port` or the
/// socket's path) and whether TLS was asked for.
struct Options {
    builder: OptsBuilder,
    place: String,
    tls: bool,
    /// The URL chose an `ssl-mode` (else TLS is preferred).
    explicit: bool,
}

/// The driver's options from the URL: password from the URL, else the environment and
/// `~/.my.cnf` (the target module's lookup, shared by every backend).
fn options(t: &ServerTarget) -> Result<Options, DbError> {
    options_with(t, false)
}

/// As [`options`]; `upgrade` asks for TLS (`REQUIRED`) where the URL chose no mode or
/// `PREFERRED`.
fn options_with(t: &ServerTarget, upgrade: bool) -> Result<Options, DbError> {
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
        .or_else(|| std::env::var("LOGNAME").ok());

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
            let id = crate::target::tls::Identity { cert, key };
            // Read here, so a bad file is one line of ours rather than the driver's.
            id.check().map_err(|e| DbError::other(e.0))?;
            Some(ClientIdentity::new(id.cert, id.key))
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
    let host = match url.host.as_deref() {
        Some(h) if !h.starts_with('/') => h.to_string(),
        _ => "127.0.0.1".to_string(),
    };
    // The driver wants IPv6 addresses in brackets.
    let host_for_driver = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    let place = match &socket {
        Some(s) => s.clone(),
        None => format!("{host_for_driver}:{port}"),
    };

    // PREFERRED (the default) is tried as REQUIRED first, then as DISABLED: see `open`.
    let explicit = ssl_mode != "PREFERRED";
    if upgrade && !explicit {
        ssl_mode = "REQUIRED".into();
    }
    let ssl = match ssl_mode.as_str() {
        "DISABLED" | "PREFERRED" => None,
        // What the MySQL clients do for REQUIRED: encrypt, trust any certificate.
        "REQUIRED" => Some(
            SslOpts::default()
                .with_danger_accept_invalid_certs(true)
                .with_danger_skip_domain_validation(true),
        ),
        "VERIFY_CA" => Some(SslOpts::default().with_danger_skip_domain_validation(true)),
        "VERIFY_IDENTITY" => Some(SslOpts::default()),
        other => {
            return Err(DbError::other(format!(
                "ssl-mode={other}: use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
            )));
        }
    }
    .map(|o| match ssl_ca {
        Some(ca) => o.with_root_cert_path(Some(ca)),
        None => o,
    })
    .map(|o| o.with_client_identity(identity));

    let tls = ssl.is_some();
    let builder = OptsBuilder::new()
        .ip_or_hostname(Some(host_for_driver))
        .tcp_port(port)
        .socket(socket)
        .prefer_socket(false)
        .user(user)
        .pass(password)
        .db_name(url.database.clone())
        .stmt_cache_size(0)
        .ssl_opts(ssl)
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS);
    Ok(Options {
        builder,
        place,
        tls,
        explicit,
    })
}

/// The URL parameters a MySQL target takes, for messages.
const PARAMS: &str = "socket=PATH, ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY, ssl-ca=FILE, ssl-cert=FILE and ssl-key=FILE";

/// What a MySQL URL's TLS settings verify, for the record: the mode and, in the shared
/// words of [`crate::target::tls::Trust::describe`], what it checks.
pub fn tls_description(url: &crate::target::url::TargetUrl) -> String {
    use crate::target::tls::{Identity, Roots, Trust, Verify};
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
    if verify != Verify::Off {
        // The driver trusts its built-in Mozilla roots besides ssl-ca.
        text = text.replace("the system's roots", "the driver's Mozilla roots");
        text.push_str(" (the driver also trusts its built-in Mozilla roots)");
    }
    if mode == "PREFERRED" {
        text.push_str("; in the clear if the server offers no TLS");
    }
    text
}

/// Opens a connection, without the session settings. With no `ssl-mode` in the URL, TLS is
/// preferred, as the MySQL 8 client and libpq do: asked for first, plain TCP if the server
/// offers none. (MariaDB refuses an insecure connection to a server that requires TLS with
/// a plain "access denied", so waiting to be asked would not work.)
///
/// `answer` bounds every read and write, the handshake included (the driver sets its
/// timeouts once, at connect): None for loading, the op timeout for sessions and counters.
fn open(t: &ServerTarget, answer: Option<Duration>, stop: &Stop) -> Result<mysql::Conn, DbError> {
    let answer = answer_limit(answer, stop);
    let bound = |b: OptsBuilder| {
        b.read_timeout(answer)
            .write_timeout(answer)
            .tcp_connect_timeout(Some(
                answer.map_or(CONNECT_TIMEOUT, |a| a.min(CONNECT_TIMEOUT)),
            ))
    };
    let mut o = options(t)?;
    o.builder = bound(o.builder);
    if !o.explicit {
        let mut tls = options_with(t, true)?;
        tls.builder = bound(tls.builder);
        match mysql::Conn::new(tls.builder.clone()) {
            Ok(c) => return Ok(c),
            Err(mysql::Error::DriverError(DriverError::TlsNotSupported)) => {}
            Err(e) => return Err(open_error(e, &tls)),
        }
    }
    mysql::Conn::new(o.builder.clone()).map_err(|e| open_error(e, &o))
}

/// Why a connection did not open, in one line.
fn open_error(e: mysql::Error, o: &Options) -> DbError {
    // The driver's errors do not chain their causes: the I/O error inside holds rustls's.
    let inner: Option<&(dyn std::error::Error + 'static)> = match &e {
        mysql::Error::IoError(io) => Some(io),
        // Its source is the I/O error.
        mysql::Error::CodecError(c) => Some(c),
        mysql::Error::TlsError(t) => Some(t),
        _ => None,
    };
    if let Some(line) =
        inner.and_then(|i| crate::target::tls::refusal(i, crate::target::tls::MYSQL))
    {
        return DbError::other(format!("cannot connect to {} with TLS: {line}", o.place));
    }
    match e {
        mysql::Error::DriverError(DriverError::CouldNotConnect(Some((_, desc, _)))) => DbError {
            kind: DbErrorKind::Broken,
            message: format!("cannot connect to {}: {}", o.place, plain_io(&desc)),
        },
        mysql::Error::DriverError(DriverError::TlsNotSupported) => DbError::other(format!(
            "cannot connect to {} with TLS: the server does not offer it; drop ssl-mode or set it to PREFERRED",
            o.place
        )),
        mysql::Error::TlsError(e) => {
            DbError::other(format!("cannot connect to {} with TLS: {e}", o.place))
        }
        mysql::Error::DriverError(DriverError::ConnectTimeout) => DbError {
            kind: DbErrorKind::Broken,
            message: format!("cannot connect to {}: timed out", o.place),
        },
        mysql::Error::IoError(io) => DbError {
            kind: DbErrorKind::Broken,
            message: format!(
                "cannot connect to {}: {}",
                o.place,
                plain_io(&io.to_string())
            ),
        },
        // A failed TLS handshake (an untrusted certificate ...) arrives as a codec error.
        mysql::Error::CodecError(c) => DbError::other(format!(
            "cannot connect to {}{}: {}",
            o.place,
            if o.tls { " with TLS" } else { "" },
            plain_io(&c.to_string())
        )),
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
    // Looked at before the connection opens, as `open` chooses the reads' bound then (the
    // driver sets it once): a Ctrl-C while it opens leaves a connection whose reads wait
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
        conn.query_drop(sql).map_err(|e| {
            let e = db_err(e);
            DbError {
                kind: e.kind,
                message: format!("SET SESSION {name}: {}", e.message),
            }
        })?;
    }
    // The driver keeps its socket to itself, so a server that ignores the kill leaves the
    // read to its timeout: the op timeout for sessions, SHUTDOWN_TIMEOUT after the stop.
    let waiting = Waiting::default();
    let id = conn.connection_id();
    let target = t.clone();
    let kill: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
        let side = Stop::new();
        if let Ok(mut c) = open(&target, Some(super::sql::CANCEL_GRACE), &side) {
            let _ = c.query_drop(format!("KILL QUERY {id}"));
        }
    });
    let killer = kill.clone();
    let canceller = Canceller::register(stop, waiting.clone(), None, move || killer());
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
fn name_values(c: &mut mysql::Conn, sql: &str) -> mysql::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut r = c.query_iter(sql)?;
    while let Some(set) = r.iter() {
        for row in set {
            let row = row?;
            if let (Some(n), Some(v)) = (row.as_ref(0), row.as_ref(1)) {
                out.push((text_of(n), text_of(v)));
            }
        }
    }
    Ok(out)
}

/// Why a call failed: the driver (or server), or a value that is not a number.
enum Fail {
    Driver(mysql::Error),
    Value(String),
}

impl From<mysql::Error> for Fail {
    fn from(e: mysql::Error) -> Self {
        Fail::Driver(e)
    }
}

/// Reads every remaining row and result set, so an error in any of them is seen (dropping a
/// result reads them too, but swallows their errors).
fn drain<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> mysql::Result<()> {
    while let Some(set) = r.iter() {
        for row in set {
            row?;
        }
    }
    Ok(())
}

/// The parameters for the driver: all integers.
fn params_of(params: &[i64]) -> Params {
    if params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(params.iter().map(|&v| Value::Int(v)).collect())
    }
}

fn run_exec(c: &mut mysql::Conn, st: &Statement, params: &[i64]) -> mysql::Result<u64> {
    let mut r = c.exec_iter(st, params_of(params))?;
    let n = r.affected_rows();
    drain(&mut r)?;
    Ok(n)
}

fn run_query(
    c: &mut mysql::Conn,
    st: &Statement,
    params: Params,
    width: usize,
    out: &mut Vec<i64>,
) -> Result<usize, Fail> {
    let r = c.exec_iter(st, params)?;
    read_rows(r, width, out)
}

/// The rows of a result in either protocol: the first `width` columns as integers.
fn read_rows<P: Protocol>(
    mut r: QueryResult<'_, '_, '_, P>,
    width: usize,
    out: &mut Vec<i64>,
) -> Result<usize, Fail> {
    let mut rows = 0;
    let mut bad = None;
    if let Some(set) = r.iter() {
        for row in set {
            let row = row?;
            rows += 1;
            for i in 0..width {
                match row.as_ref(i).map(int_of).unwrap_or(Ok(0)) {
                    Ok(v) => out.push(v),
                    Err(e) => {
                        out.push(0);
                        bad.get_or_insert(e);
                    }
                }
            }
        }
    }
    drain(&mut r)?;
    match bad {
        Some(e) => Err(Fail::Value(e)),
        None => Ok(rows),
    }
}

/// `-M simple`: the statement with its parameters written in, over the text protocol;
/// the rows changed, or the rows read (first `width` columns) into `out`.
fn run_inline(
    c: &mut mysql::Conn,
    sql: &str,
    params: &[Param<'_>],
    width: usize,
    out: &mut Vec<i64>,
) -> Result<(u64, usize), Fail> {
    let backslashes = !c.no_backslash_escape();
    let text = query_mode::inline(sql, params, |_, v, out| match v {
        Param::Int(n) => query_mode::integer(n, out),
        Param::Text(t) => query_mode::quote(t, backslashes, out),
        Param::Null => out.push_str("NULL"),
    })
    .map_err(Fail::Value)?;
    let r = c.query_iter(text)?;
    let changed = r.affected_rows();
    let rows = read_rows(r, width, out)?;
    Ok((changed, rows))
}

fn run_text(c: &mut mysql::Conn, sql: &str) -> mysql::Result<()> {
    let mut r = c.query_iter(sql)?;
    drain(&mut r)
}

/// The first row of a text query, as the driver's values; the rest are read and dropped.
fn first_row(c: &mut mysql::Conn, sql: &str) -> mysql::Result<Option<Vec<Value>>> {
    let mut r = c.query_iter(sql)?;
    let mut first = None;
    if let Some(set) = r.iter() {
        for row in set {
            let row = row?;
            if first.is_none() {
                first = Some(row.unwrap());
            }
        }
    }
    drain(&mut r)?;
    Ok(first)
}

/// A script statement's answer in either protocol: the last result set's columns and (when
/// kept) rows as text, and the rows it changed.
fn read_answer<P: Protocol>(
    mut r: QueryResult<'_, '_, '_, P>,
    out: &mut Answer,
) -> Result<(), Fail> {
    loop {
        let changed = r.affected_rows();
        let Some(set) = r.iter() else { break };
        out.changed = changed;
        out.returned = 0;
        out.rows.clear();
        if out.keep {
            out.columns = set
                .columns()
                .as_ref()
                .iter()
                .map(|c| c.name_str().into_owned())
                .collect();
        }
        for row in set {
            let row = row?;
            out.returned += 1;
            if out.keep {
                let values = row.unwrap();
                let texts = values.iter().map(|v| match v {
                    Value::NULL => None,
                    v => Some(text_of(v)),
                });
                out.rows.push(texts.collect());
            }
        }
    }
    Ok(())
}

fn all_rows(c: &mut mysql::Conn, sql: &str) -> mysql::Result<Vec<Vec<Value>>> {
    let mut r = c.query_iter(sql)?;
    let mut out = Vec::new();
    if let Some(set) = r.iter() {
        for row in set {
            out.push(row?.unwrap());
        }
    }
    drain(&mut r)?;
    Ok(out)
}

/// A value as an integer: integers as they are, NULL as 0, text (DECIMAL in either
/// protocol, anything in the text protocol) parsed with any fraction cut off.
fn int_of(v: &Value) -> Result<i64, String> {
    match v {
        Value::NULL => Ok(0),
        Value::Int(i) => Ok(*i),
        Value::UInt(u) => i64::try_from(*u).map_err(|_| format!("{u} is out of range")),
        Value::Float(f) => float_to_int(f64::from(*f)),
        Value::Double(f) => float_to_int(*f),
        Value::Bytes(b) => parse_int(b),
        other => Err(format!("{other:?} is not a number")),
    }
}

fn float_to_int(f: f64) -> Result<i64, String> {
    if f.is_finite() && f.abs() < 9.2e18 {
        Ok(f.trunc() as i64)
    } else {
        Err(format!("{f} is out of range"))
    }
}

/// `123`, `-123.45` (DECIMAL), `1.5e3` (a DOUBLE in the text protocol).
fn parse_int(b: &[u8]) -> Result<i64, String> {
    let not_a_number = || format!("{:?} is not a number", String::from_utf8_lossy(b));
    let s = std::str::from_utf8(b).map_err(|_| not_a_number())?.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Ok(i);
    }
    if let Some((whole, frac)) = s.split_once('.')
        && frac.bytes().all(|c| c.is_ascii_digit())
    {
        match whole {
            "" | "-" | "+" if !frac.is_empty() => return Ok(0),
            _ => {
                if let Ok(i) = whole.parse::<i64>() {
                    return Ok(i);
                }
            }
        }
    }
    match s.parse::<f64>() {
        Ok(f) => float_to_int(f),
        Err(_) => Err(not_a_number()),
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::NULL => String::new(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(f) => f.to_string(),
        // Dates and times arrive as text in the text protocol; this is the binary form.
        other => other.as_sql(true).trim_matches('\'').to_string(),
    }
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

fn db_err(e: mysql::Error) -> DbError {
    use mysql::Error as E;
    let (kind, message) = match e {
        E::MySqlError(m) => {
            let kind = if conflict(m.code) {
                DbErrorKind::Conflict
            } else if gone(m.code) {
                DbErrorKind::Broken
            } else if cancelled(m.code) {
                DbErrorKind::Cancelled
            } else {
                DbErrorKind::Other
            };
            // `ERROR 1045 (28000): Access denied for user ...`, as the mysql client shows it.
            (kind, m.to_string())
        }
        // Just the cause (`server disconnected`, `Connection reset by peer`): the caller
        // says the connection was lost.
        E::IoError(io) if is_timeout(&io) => (
            DbErrorKind::TimedOut,
            "the server did not answer in time".into(),
        ),
        E::IoError(io) => (
            DbErrorKind::Broken,
            match io.kind() {
                std::io::ErrorKind::UnexpectedEof => "the server closed the connection".into(),
                _ => plain_io(&io.to_string()),
            },
        ),
        // The driver reads through its packet codec, so a socket timeout usually arrives
        // wrapped as a codec error, with the I/O error as its source.
        E::CodecError(c)
            if std::error::Error::source(&c)
                .and_then(|e| e.downcast_ref::<std::io::Error>())
                .is_some_and(is_timeout) =>
        {
            (
                DbErrorKind::TimedOut,
                "the server did not answer in time".into(),
            )
        }
        // An I/O error inside the codec is the connection breaking; anything else of the
        // codec's (packets out of sync, too large) is the server's bytes not following the
        // protocol.
        E::CodecError(c) => {
            match std::error::Error::source(&c).and_then(|e| e.downcast_ref::<std::io::Error>()) {
                Some(io) => (DbErrorKind::Broken, plain_io(&io.to_string())),
                None => (DbErrorKind::Protocol, format!("protocol error: {c}")),
            }
        }
        E::DriverError(d) => {
            // Caught before anything is sent: the connection is fine.
            let harmless = matches!(
                d,
                DriverError::MismatchedStmtParams(..)
                    | DriverError::Params(_)
                    | DriverError::MixedParams
                    | DriverError::ReadOnlyTransNotSupported
            );
            let garbled = matches!(
                d,
                DriverError::PacketOutOfSync
                    | DriverError::PacketTooLarge
                    | DriverError::UnexpectedPacket
                    | DriverError::UnsupportedProtocol(_)
            );
            let kind = if harmless {
                DbErrorKind::Other
            } else if garbled {
                DbErrorKind::Protocol
            } else {
                DbErrorKind::Broken
            };
            (kind, d.to_string())
        }
        E::TlsError(t) => (DbErrorKind::Broken, format!("TLS: {t}")),
        E::UrlError(u) => (DbErrorKind::Other, format!("bad URL: {u}")),
        e @ (E::FromValueError(_) | E::FromRowError(_)) => (DbErrorKind::Other, e.to_string()),
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

fn no_statement(stmt: Stmt) -> DbError {
    DbError::other(format!("no prepared statement #{stmt} on this connection"))
}

impl Conn for MyConn {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Sends the whole text at once (the driver enables multi-statements) and reads every
    /// result, so the first failing statement's error is returned and the rest do not run.
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.usable()?;
        let r = run_text(&mut self.conn, sql);
        self.check(r)
    }

    /// `LOAD DATA LOCAL INFILE`: the server asks for the file by name and the client sends
    /// it. Only for the duration of this statement does the connection answer such a
    /// request, and only with this file: a server asking for any other gets an error.
    fn load_file(&mut self, table: &str, columns: &[&str], path: &Path) -> Result<u64, DbError> {
        self.usable()?;
        let name = path
            .to_str()
            .filter(|n| !n.contains(['\'', '\\']))
            .ok_or_else(|| DbError::other(format!("cannot name {} in SQL", path.display())))?
            .to_string();
        let wanted = name.clone();
        self.conn
            .set_local_infile_handler(Some(LocalInfileHandler::new(move |asked, out| {
                if asked != wanted.as_bytes() {
                    return Err(std::io::Error::other(format!(
                        "the server asked for {}, not the file being loaded",
                        String::from_utf8_lossy(asked)
                    )));
                }
                let mut f = std::fs::File::open(&wanted)?;
                std::io::copy(&mut f, out)?;
                Ok(())
            })));
        let sql = format!(
            "LOAD DATA LOCAL INFILE '{name}' INTO TABLE {table} FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({})",
            columns.join(", ")
        );
        let r = self.conn.query_iter(&sql).and_then(|mut r| {
            let n = r.affected_rows();
            drain(&mut r).map(|_| n)
        });
        self.conn.set_local_infile_handler(None);
        // Done waiting, whatever came back (`check` says so for the errors it handles).
        self.waiting.set(false);
        match r {
            Ok(n) => Ok(n),
            // 1148 (MySQL) and 4166 (MariaDB): the server does not take local files.
            Err(mysql::Error::MySqlError(e))
                if e.code == 1148 || e.code == 3948 || e.code == 4166 =>
            {
                Err(DbError::other(format!(
                    "the server refuses LOAD DATA LOCAL INFILE ({}); allow it with SET GLOBAL local_infile = 1",
                    e.message
                )))
            }
            Err(e) => self.check(Err::<u64, _>(e)),
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.usable()?;
        if let Some(i) = self.stmts.iter().position(|(s, _)| s == sql) {
            return Ok(i);
        }
        let st = match self.simple {
            true => None,
            false => {
                let r = self.conn.prep(sql);
                Some(self.check(r)?)
            }
        };
        self.stmts.push((sql.to_string(), st));
        Ok(self.stmts.len() - 1)
    }

    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.usable()?;
        let r = match self.stmts.get(stmt) {
            None => return Err(no_statement(stmt)),
            Some((sql, None)) => {
                let values: Vec<Param<'_>> = params.iter().map(|&v| Param::Int(v)).collect();
                run_inline(&mut self.conn, sql, &values, 0, &mut Vec::new()).map(|(n, _)| n)
            }
            Some((_, Some(st))) => run_exec(&mut self.conn, st, params).map_err(Fail::from),
        };
        self.check(r)
    }

    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.usable()?;
        let r = match self.stmts.get(stmt) {
            None => return Err(no_statement(stmt)),
            Some((sql, None)) => {
                let values: Vec<Param<'_>> = params.iter().map(|&v| Param::Int(v)).collect();
                run_inline(&mut self.conn, sql, &values, 1, out).map(|(_, rows)| rows)
            }
            Some((_, Some(st))) => run_query(&mut self.conn, st, params_of(params), 1, out),
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
        let st = match self.stmts.get(stmt) {
            None => return Err(no_statement(stmt)),
            Some((sql, None)) => {
                let r = run_inline(&mut self.conn, sql, params, width, out).map(|(_, rows)| rows);
                return self.check(r);
            }
            Some((_, Some(st))) => st,
        };
        let values = if params.is_empty() {
            Params::Empty
        } else {
            Params::Positional(
                params
                    .iter()
                    .map(|p| match *p {
                        Param::Int(v) => Value::Int(v),
                        Param::Text(t) => Value::Bytes(t.as_bytes().to_vec()),
                        Param::Null => Value::NULL,
                    })
                    .collect(),
            )
        };
        let r = run_query(&mut self.conn, st, values, width, out);
        self.check(r)
    }

    fn answer(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Answer,
    ) -> Result<(), DbError> {
        self.usable()?;
        let r = match self.stmts.get(stmt) {
            None => return Err(no_statement(stmt)),
            Some((sql, None)) => {
                let backslashes = !self.conn.no_backslash_escape();
                match query_mode::inline(sql, params, |_, v, text| match v {
                    Param::Int(n) => query_mode::integer(n, text),
                    Param::Text(t) => query_mode::quote(t, backslashes, text),
                    Param::Null => text.push_str("NULL"),
                }) {
                    Err(e) => Err(Fail::Value(e)),
                    Ok(text) => match self.conn.query_iter(text) {
                        Ok(r) => read_answer(r, out),
                        Err(e) => Err(Fail::Driver(e)),
                    },
                }
            }
            Some((_, Some(st))) => {
                let values = match params.is_empty() {
                    true => Params::Empty,
                    false => Params::Positional(
                        params
                            .iter()
                            .map(|p| match *p {
                                Param::Int(v) => Value::Int(v),
                                Param::Text(t) => Value::Bytes(t.as_bytes().to_vec()),
                                Param::Null => Value::NULL,
                            })
                            .collect(),
                    ),
                };
                let st = st.clone();
                match self.conn.exec_iter(&st, values) {
                    Ok(r) => read_answer(r, out),
                    Err(e) => Err(Fail::Driver(e)),
                }
            }
        };
        self.check(r)
    }

    fn server_pid(&self) -> Option<i64> {
        Some(self.conn.connection_id() as i64)
    }

    fn simple(&mut self, sql: &str, out: &mut Answer) -> Result<(), DbError> {
        self.usable()?;
        let r = match self.conn.query_iter(sql) {
            Ok(r) => read_answer(r, out),
            Err(e) => Err(Fail::Driver(e)),
        };
        self.check(r)
    }

    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        self.usable()?;
        let r = first_row(&mut self.conn, sql);
        let row = self.check(r)?;
        row.map(|vals| vals.iter().map(int_of).collect::<Result<Vec<_>, _>>())
            .transpose()
            .map_err(DbError::other)
    }

    /// NULL gives None, as no row does.
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.usable()?;
        let r = first_row(&mut self.conn, sql);
        let row = self.check(r)?;
        Ok(row
            .and_then(|vals| vals.into_iter().next())
            .filter(|v| *v != Value::NULL)
            .map(|v| text_of(&v)))
    }

    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.usable()?;
        let r = all_rows(&mut self.conn, sql);
        let rows = self.check(r)?;
        Ok(rows
            .into_iter()
            .map(|row| row.iter().map(text_of).collect())
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
            let r = run_text(&mut self.conn, "ROLLBACK");
            let _ = self.check(r);
        }
    }

    fn is_broken(&self) -> bool {
        self.broken
    }
}

#[cfg(test)]
mod tests {
    //! What needs no server; the rest is tested against a live MariaDB.
    use super::*;

    #[test]
    fn numbers_from_text() {
        for (text, want) in [
            ("123", Ok(123)),
            (" -42 ", Ok(-42)),
            ("1234.00", Ok(1234)),
            ("-7.9", Ok(-7)),
            ("-0.5", Ok(0)),
            (".5", Ok(0)),
            ("99999999999999999999.5", Err(())),
            ("1.5e3", Ok(1500)),
            ("abc", Err(())),
            ("", Err(())),
        ] {
            assert_eq!(parse_int(text.as_bytes()).map_err(|_| ()), want, "{text:?}");
        }
        assert_eq!(int_of(&Value::NULL), Ok(0));
        assert_eq!(int_of(&Value::UInt(7)), Ok(7));
        assert!(int_of(&Value::UInt(u64::MAX)).is_err());
        assert_eq!(int_of(&Value::Double(-2.5)), Ok(-2));
    }

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
            db_err(mysql::Error::MySqlError(mysql::MySqlError {
                state: "40001".into(),
                message: "m".into(),
                code,
            }))
        };
        for code in [1213, 1205, 1062, 1020] {
            assert_eq!(server(code).kind, DbErrorKind::Conflict, "{code}");
        }
        for code in [1927, 2006, 2013, 4031] {
            assert_eq!(server(code).kind, DbErrorKind::Broken, "{code}");
        }
        assert_eq!(
            server(1146),
            DbError {
                kind: DbErrorKind::Other,
                message: "ERROR 1146 (40001): m".into()
            }
        );
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(db_err(eof.into()).kind, DbErrorKind::Broken);
        assert_eq!(
            db_err(DriverError::MismatchedStmtParams(2, 1).into()).kind,
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
            o.map(|o| (o.place, o.tls)),
            Ok(("[::1]:3307".into(), false))
        );
        let o = options(&t("mysql://u@/d?socket=/tmp/my.sock&ssl-mode=REQUIRED"));
        assert_eq!(o.ok().map(|o| o.place), Some("/tmp/my.sock".into()));
        let o = options(&t("mysql://u@h/d?ssl_mode=verify-identity"));
        assert!(o.is_ok_and(|o| o.tls && o.place == "h:3306"));
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
