//! PostgreSQL through its wire protocol on a blocking socket: perflab's own small client, built
//! on the `postgres-protocol` crate's message codecs and SCRAM/MD5 authentication.
//!
//! Why not a general client: a benchmark client's cost per statement is overhead measured
//! against the server. Here a prepared statement is one `write` (Bind, Execute, Sync in one
//! buffer) and usually one `read`; libpq, under pgbench, adds a `poll` and a `recv` that finds
//! nothing, and the async `postgres` crate adds its runtime's `epoll_wait`s (docs/performance.md
//! has the counts). Only what the workloads need is here: prepared statements with integer
//! parameters (binary), simple queries for transactions, DDL and checks.
//! - `-M` ([`super::query_mode`]): named statements parsed once (`prepared`, the default),
//!   the unnamed statement parsed on every execution (`extended`), or the parameters written
//!   into the text of one Query (`simple`), as pgbench's modes.
//!
//! - Connecting: TCP or a Unix socket (a host that is a directory, as libpq), startup, then
//!   trust, password, MD5 or SCRAM-SHA-256 authentication. The URL or `key=value` string, the
//!   `PG*` variables and libpq's defaults are resolved as libpq does
//!   ([`crate::target::conninfo`]); TLS as libpq's `sslmode`, `verify-ca` and `verify-full`
//!   verifying the server's certificate ([`crate::target::tls`]); never over a Unix socket.
//! - `--set NAME=VALUE` sets server parameters per session (`SET`), e.g.
//!   `synchronous_commit=off`; the settings that decide durability and group commit
//!   ([`DISCLOSED`]) are read back and recorded.
//! - Log flushes: `pg_stat_wal`'s `wal_write`, `wal_sync` and `wal_bytes` (as `log_writes`,
//!   `log_syncs`, `log_bytes`) and `pg_stat_database`'s commits, sampled around every measure
//!   phase ([`counters`]).
//! - Passwords: from the URL, else `PGPASSWORD` or `~/.pgpass`, through the target module's
//!   lookup; never in a message.

use super::cancel::{Canceller, Place, Socket, Waiting, postgres_cancel};
use super::query_mode::{self, QueryMode};
use super::sql::{
    Answer, Conn, DbError, DbErrorKind, Dialect, MAX_MESSAGE, Param, SHUTDOWN_TIMEOUT,
    ServerTarget, Stmt, answer_limit, is_timeout, numbered_placeholders, plain_name,
};
use crate::stop::Stop;
use crate::target::conninfo::{self, Resolved, SslMode};
use crate::target::tls;
use crate::target::url::TargetUrl;
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::IsNull;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::{backend::Message, frontend};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Server settings recorded with every run: durability, group commit, the WAL.
pub const DISCLOSED: [&str; 11] = [
    "server_version",
    "synchronous_commit",
    "fsync",
    "wal_sync_method",
    "commit_delay",
    "commit_siblings",
    "full_page_writes",
    "wal_level",
    "shared_buffers",
    "max_connections",
    "default_transaction_isolation",
];

/// The most one read takes from the socket.
const READ_CHUNK: usize = 16 * 1024;

/// How long connecting may take before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Integer types' OIDs: the parameters perflab binds.
const INT2: u32 = 21;
const INT4: u32 = 23;
const INT8: u32 = 20;

/// The byte stream under the protocol.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A prepared statement: its server-side name and its parameters' types; in the extended
/// and simple modes (no named statement), its text to send on every execution.
struct Prepared {
    name: String,
    params: Vec<u32>,
    /// With `$n` placeholders (extended) or `?` (simple); empty when prepared.
    sql: String,
}

/// The most of a pipeline's statements held back before they are sent.
const PIPELINE_HOLD: usize = 64 << 10;

/// One connection.
pub struct PgConn {
    stream: Stream,
    /// Messages being composed; sent in one write.
    out: BytesMut,
    /// Bytes read and not yet parsed.
    inb: BytesMut,
    /// Where the socket is read into: allocated once, never cleared.
    chunk: Box<[u8]>,
    stmts: Vec<Prepared>,
    /// How statements are sent (`-M`).
    mode: QueryMode,
    broken: bool,
    /// The run's stop token; see [`super::cancel`].
    stop: Stop,
    /// Whether a read is waiting for the server, for the canceller.
    waiting: Waiting,
    /// Where to send a cancel request, and the backend's key (from BackendKeyData).
    cancel_key: Option<(Place, i32, i32)>,
    /// Registered with the stop token once the key is known.
    _canceller: Option<Canceller>,
    /// Whether reads were bounded by [`SHUTDOWN_TIMEOUT`] after the stop.
    bounded_after_stop: bool,
    /// Opened before the stop: a session's or a loader's, which takes no new statement once
    /// the run is stopping (cleanup opens connections of its own).
    before_stop: bool,
    /// The transaction status of the last ReadyForQuery: `I` idle, `T` in a transaction,
    /// `E` in a failed one.
    status: u8,
    /// In a pipeline: the statements sent since it began, their answers not yet read.
    pipelined: Option<usize>,
}

fn broken(message: impl Into<String>) -> DbError {
    DbError {
        kind: DbErrorKind::Broken,
        message: message.into(),
    }
}

fn io_error(e: std::io::Error) -> DbError {
    if is_timeout(&e) {
        return DbError {
            kind: DbErrorKind::TimedOut,
            message: "the server did not answer in time".into(),
        };
    }
    broken(format!("connection lost: {e}"))
}

/// What the server's ErrorResponse says, sorted by what the caller does next.
struct ServerError {
    severity: String,
    code: String,
    message: String,
}

impl ServerError {
    fn into_db_error(self) -> DbError {
        let kind = match self.code.as_str() {
            // serialization_failure, deadlock_detected, unique_violation,
            // lock_not_available (lock_timeout)
            "40001" | "40P01" | "23505" | "55P03" => DbErrorKind::Conflict,
            // query_canceled: statement_timeout, or a cancel request.
            "57014" => DbErrorKind::Cancelled,
            // duplicate_prepared_statement, invalid_sql_statement_name: only perflab's named
            // statements (`-M prepared`) can meet these, and a server that refuses them keeps
            // refusing; see `named_statements_refused`.
            "42P05" | "26000" => return named_statements_refused(&self.code, &self.message),
            _ if self.severity == "FATAL" || self.severity == "PANIC" => DbErrorKind::Broken,
            _ => DbErrorKind::Other,
        };
        DbError {
            kind,
            message: format!("{}: {}", self.severity, self.message),
        }
    }
}

/// Named prepared statements that the server says already exist (42P05) on a connection
/// that never made them, or do not exist (26000) where the connection made them: the
/// statements are not the connection's own, which is what a pooler in transaction mode
/// does (PgBouncer hands each transaction whichever server connection is free, and before
/// 1.21 it does not carry prepared statements across). The unnamed statement of `-M
/// extended` (parsed with each execution) and `-M simple` work there.
fn named_statements_refused(code: &str, message: &str) -> DbError {
    DbError {
        kind: DbErrorKind::Unsupported,
        message: format!(
            "the server (a pooler in transaction mode?) refused perflab's named prepared statements ({code}: {message}): run with -M extended or -M simple"
        ),
    }
}

fn server_error(body: &postgres_protocol::message::backend::ErrorResponseBody) -> ServerError {
    let mut e = ServerError {
        severity: "ERROR".into(),
        code: String::new(),
        message: String::new(),
    };
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        let value = String::from_utf8_lossy(f.value_bytes()).into_owned();
        match f.type_() {
            // V is the severity never translated; S may be in the server's language.
            b'V' => e.severity = value,
            b'S' if e.severity == "ERROR" => e.severity = value,
            b'C' => e.code = value,
            b'M' => e.message = value,
            _ => {}
        }
    }
    e
}

/// Connects, authenticates and applies the session settings, with no limit on how long a
/// statement may take (loading).
pub fn connect(t: &ServerTarget, stop: &Stop) -> Result<PgConn, DbError> {
    connect_with(t, None, stop)
}

/// Connects as [`connect`] does; afterwards each answer may take at most `answer`. The
/// handshake takes at most the connect timeout (or `answer`, if shorter), so a server that
/// accepts connections but never answers (stopped, overloaded) cannot hang perflab.
pub fn connect_with(
    t: &ServerTarget,
    answer: Option<Duration>,
    stop: &Stop,
) -> Result<PgConn, DbError> {
    let answer = answer_limit(answer, stop);
    let url: TargetUrl = t
        .url
        .parse()
        .map_err(|e| DbError::other(format!("bad URL: {e}")))?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let env = |k: &str| std::env::var(k).ok();
    let conn = conninfo::resolve(&url, &env, home.as_deref()).map_err(DbError::other)?;
    let timeout = conn.connect_timeout.unwrap_or(CONNECT_TIMEOUT);
    let timeout = answer.map_or(timeout, |a| a.min(timeout));
    let (host, port) = (conn.host.clone(), conn.port);
    let place = match host.starts_with('/') {
        true => Place::Unix(format!("{host}/.s.PGSQL.{port}")),
        false => Place::Tcp(host.clone(), port),
    };
    let open = |tls: bool| -> Result<Stream, DbError> {
        if host.starts_with('/') {
            let path = format!("{host}/.s.PGSQL.{port}");
            let unix = UnixStream::connect(&path)
                .map_err(|e| DbError::other(format!("cannot connect to {path}: {e}")))?;
            let _ = unix.set_read_timeout(Some(timeout));
            return Ok(Stream::Unix(unix));
        }
        let tcp = tcp_connect(&host, port, timeout)?;
        let _ = tcp.set_read_timeout(Some(timeout));
        let _ = tcp.set_write_timeout(Some(timeout));
        match tls {
            false => Ok(Stream::Tcp(tcp)),
            true => negotiate_tls(tcp, &host, &conn),
        }
    };
    let password = match &url.password {
        Some(p) => Some(p.expose().to_string()),
        None => conninfo::with_environment(&url, &env)
            .password_from_environment(&env, home.as_deref())
            .password
            .map(|p| p.expose().to_string()),
    };
    let first_tls = !matches!(conn.sslmode, SslMode::Disable | SslMode::Allow);
    let (mut c, key) = match start(open(first_tls)?, &conn, password.as_deref(), timeout, stop) {
        // libpq's `allow`: a server that refuses a plain session is asked again with TLS.
        Err(e)
            if conn.sslmode == SslMode::Allow
                && e.kind == DbErrorKind::Other
                && !host.starts_with('/') =>
        {
            start(open(true)?, &conn, password.as_deref(), timeout, stop).map_err(|again| {
                DbError {
                    kind: again.kind,
                    message: format!("{} (and without TLS: {})", again.message, e.message),
                }
            })?
        }
        other => other?,
    };
    c.cancel_on_stop(place, key);
    c.mode = t.query_mode;
    for (name, value) in &t.set {
        c.batch(&format!(
            "SET {} = '{}'",
            ident(name)?,
            value.replace('\'', "''")
        ))
        .map_err(|e| {
            // commit_delay and its kind are a superuser's: say so rather than only "denied".
            let hint = if e.message.contains("permission denied to set parameter") {
                "; the setting needs a superuser: connect as one, or leave it out"
            } else {
                ""
            };
            DbError {
                kind: e.kind,
                message: format!("--set {name}={value}: {}{hint}", e.message),
            }
        })?;
    }
    c.set_answer_timeout(answer);
    Ok(c)
}

/// A connection on `stream`, started up and authenticated, and its cancel key; answers
/// bounded by `timeout` until the caller sets its own.
fn start(
    stream: Stream,
    conn: &Resolved,
    password: Option<&str>,
    timeout: Duration,
    stop: &Stop,
) -> Result<(PgConn, Option<(i32, i32)>), DbError> {
    let mut c = PgConn {
        stream,
        out: BytesMut::with_capacity(1024),
        inb: BytesMut::with_capacity(READ_CHUNK),
        chunk: vec![0; READ_CHUNK].into_boxed_slice(),
        stmts: Vec::new(),
        mode: QueryMode::Prepared,
        broken: false,
        stop: stop.clone(),
        waiting: Waiting::default(),
        cancel_key: None,
        _canceller: None,
        bounded_after_stop: false,
        before_stop: !stop.is_set(),
        status: b'I',
        pipelined: None,
    };
    c.set_answer_timeout(Some(timeout));
    let key = c.startup(&conn.user, &conn.database, &conn.application_name, password)?;
    Ok((c, key))
}

fn tcp_connect(host: &str, port: u16, timeout: Duration) -> Result<TcpStream, DbError> {
    use std::net::ToSocketAddrs;
    let fail = |e: std::io::Error| DbError::other(format!("cannot connect to {host}:{port}: {e}"));
    let mut last = None;
    for addr in (host, port).to_socket_addrs().map_err(fail)? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                // Statements are small and each waits for its answer: send at once.
                s.set_nodelay(true).map_err(fail)?;
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(fail(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
    })))
}

/// Asks the server for TLS (SSLRequest) and wraps the socket if it agrees, verifying its
/// certificate as far as `conn.trust` says; a server that says no is refused when the
/// sslmode needs TLS, else the session goes on in the clear (`prefer`).
fn negotiate_tls(mut tcp: TcpStream, host: &str, conn: &Resolved) -> Result<Stream, DbError> {
    let mut buf = BytesMut::with_capacity(8);
    frontend::ssl_request(&mut buf);
    let mut answer = [0u8; 1];
    tcp.write_all(&buf)
        .and_then(|_| tcp.read_exact(&mut answer))
        .map_err(|e| DbError::other(format!("cannot connect to {host}: {e}")))?;
    match answer[0] {
        b'S' => {
            let config = conn.trust.config().map_err(|e| DbError::other(e.0))?;
            let name = rustls::pki_types::ServerName::try_from(host.to_string())
                .map_err(|e| DbError::other(format!("TLS: {host}: {e}")))?;
            let client = rustls::ClientConnection::new(config, name)
                .map_err(|e| DbError::other(format!("TLS: {e}")))?;
            let mut tls = rustls::StreamOwned::new(client, tcp);
            // Finish the handshake now, so a TLS failure reads as one.
            while tls.conn.is_handshaking() {
                tls.conn.complete_io(&mut tls.sock).map_err(|e| {
                    DbError::other(
                        tls::refusal(&e, tls::LIBPQ)
                            .unwrap_or_else(|| format!("TLS handshake with {host}: {e}")),
                    )
                })?;
            }
            Ok(Stream::Tls(Box::new(tls)))
        }
        _ if conn.sslmode.needs_tls() => Err(DbError::other(format!(
            "{host} does not offer TLS, and sslmode={} needs it",
            conn.sslmode.name()
        ))),
        _ => Ok(Stream::Tcp(tcp)),
    }
}

/// The first message in `inb` once all of it has arrived (and taken out of `inb`), `None`
/// while it is incomplete, or a protocol error. The length in its header is checked first:
/// the codec would set aside as much memory as a header claims (up to 2 GB) before a byte of
/// it came, so a reply costs the bytes received, and at most [`MAX_MESSAGE`] are waited for.
pub fn frame(inb: &mut BytesMut) -> Result<Option<Message>, DbError> {
    let Some(header) = inb.get(..5) else {
        return Ok(None);
    };
    let claimed = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    let garbled = |message: String| DbError {
        kind: DbErrorKind::Protocol,
        message,
    };
    if !(4..=MAX_MESSAGE).contains(&claimed) {
        return Err(garbled(format!(
            "protocol error: a message of type {:?} claims {claimed} bytes (perflab takes 4 to {MAX_MESSAGE})",
            char::from(header[0])
        )));
    }
    if inb.len() <= claimed {
        return Ok(None);
    }
    Message::parse(inb).map_err(|e| garbled(format!("protocol error: {e}")))
}

/// A parameter name as given, checked to be a plain identifier (it is spliced into SQL).
fn ident(name: &str) -> Result<&str, DbError> {
    plain_name(name).ok_or_else(|| DbError::other(format!("--set {name:?}: not a parameter name")))
}

/// The recorded settings, as the server reports them for a session with `--set` applied.
pub fn settings(c: &mut PgConn) -> Result<BTreeMap<String, String>, DbError> {
    let mut out = BTreeMap::new();
    for name in DISCLOSED {
        if let Some(v) = c.query_text(&format!("SHOW {name}"))? {
            out.insert(name.to_string(), v);
        }
    }
    Ok(out)
}

/// Cumulative server counters: WAL writes, syncs and bytes, commits.
pub fn counters(t: &ServerTarget, stop: &Stop) -> Option<Vec<(String, f64)>> {
    let mut c = connect_with(t, Some(t.op_timeout), stop).ok()?;
    let mut out = Vec::new();
    if let Ok(Some(r)) = c.query_row("SELECT wal_records, wal_bytes::bigint FROM pg_stat_wal") {
        out.push(("log_records".into(), r[0] as f64));
        out.push(("log_bytes".into(), r.get(1).copied().unwrap_or(0) as f64));
    }
    // PostgreSQL 14 to 17 count WAL writes and syncs in pg_stat_wal; 18 moved them to
    // pg_stat_io.
    let writes = c
        .query_row("SELECT wal_write, wal_sync FROM pg_stat_wal")
        .or_else(|_| {
            c.query_row(
                "SELECT sum(writes)::bigint, sum(fsyncs)::bigint FROM pg_stat_io WHERE object = 'wal'",
            )
        });
    if let Ok(Some(r)) = writes {
        out.push(("log_writes".into(), r[0] as f64));
        out.push(("log_syncs".into(), r.get(1).copied().unwrap_or(0) as f64));
    }
    if let Ok(Some(r)) =
        c.query_row("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
    {
        out.push(("server_commits".into(), r[0] as f64));
    }
    Some(out)
}

/// The number a command tag ends with: rows changed (`UPDATE 1`, `INSERT 0 5`).
fn rows_of(tag: &str) -> u64 {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A binary integer column, whatever its width; NULL and other shapes as 0.
fn int_of(bytes: Option<&[u8]>) -> i64 {
    match bytes {
        Some(b) if b.len() == 8 => i64::from_be_bytes(b.try_into().unwrap_or_default()),
        Some(b) if b.len() == 4 => i32::from_be_bytes(b.try_into().unwrap_or_default()) as i64,
        Some(b) if b.len() == 2 => i16::from_be_bytes(b.try_into().unwrap_or_default()) as i64,
        _ => 0,
    }
}

/// A column in the text format as an integer: NULL as 0, a fraction (numeric) cut off.
fn int_of_text(bytes: Option<&[u8]>) -> i64 {
    let text = bytes
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("");
    text.parse::<i64>()
        .ok()
        .or_else(|| text.parse::<f64>().ok().map(|f| f.trunc() as i64))
        .unwrap_or(0)
}

/// How much of a file one `CopyData` message carries.
const COPY_CHUNK: usize = 256 * 1024;

impl PgConn {
    fn send(&mut self) -> Result<(), DbError> {
        // A worker that starts a transaction between the stop and the end of its step must
        // not leave it waiting on the server (its lock) after perflab exits.
        if self.before_stop && self.stop.is_set() {
            self.out.clear();
            self.broken = true;
            return Err(broken("the run is stopping (Ctrl-C): no new statement"));
        }
        let sent = self
            .stream
            .write_all(&self.out)
            .and_then(|_| self.stream.flush());
        self.out.clear();
        sent.map_err(|e| {
            self.broken = true;
            io_error(e)
        })
    }

    /// The next message from the server, reading as needed ([`frame`]).
    fn next(&mut self) -> Result<Message, DbError> {
        loop {
            match frame(&mut self.inb) {
                Ok(Some(m)) => return Ok(m),
                Ok(None) => {}
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
            // Waiting before the look at the token (`Waiting::begin`): a stop after the look
            // finds the read waiting and cancels it, a stop before it bounds the read.
            self.waiting.begin();
            self.bound_after_stop();
            let read = self.stream.read(&mut self.chunk);
            self.waiting.set(false);
            match read {
                Ok(0) => {
                    self.broken = true;
                    return Err(broken("connection lost: the server closed the connection"));
                }
                Ok(n) => self.inb.extend_from_slice(&self.chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.broken = true;
                    if self.bounded_after_stop
                        && is_timeout(&e)
                        && let Some((place, pid, secret)) = &self.cancel_key
                    {
                        postgres_cancel(place, *pid, *secret);
                    }
                    return Err(io_error(e));
                }
            }
        }
    }

    /// Reads up to ReadyForQuery, handing data rows (and at startup the backend's key) to
    /// `row`; returns the rows changed (the command tag's count), or the first error the
    /// server sent.
    fn finish_exchange(&mut self, mut row: impl FnMut(&Message)) -> Result<u64, DbError> {
        let mut failed: Option<ServerError> = None;
        let mut changed = 0;
        loop {
            let m = self.next()?;
            match &m {
                Message::ReadyForQuery(body) => {
                    self.status = body.status();
                    break;
                }
                Message::ErrorResponse(body) => {
                    let e = server_error(body);
                    if e.severity == "FATAL" || e.severity == "PANIC" {
                        self.broken = true;
                        return Err(e.into_db_error());
                    }
                    failed.get_or_insert(e);
                }
                Message::CommandComplete(body) => {
                    changed = body.tag().map(rows_of).unwrap_or(0);
                }
                Message::DataRow(_) | Message::BackendKeyData(_) => row(&m),
                _ => {}
            }
        }
        match failed {
            Some(e) => Err(e.into_db_error()),
            None => Ok(changed),
        }
    }

    fn startup(
        &mut self,
        user: &str,
        database: &str,
        application: &str,
        password: Option<&str>,
    ) -> Result<Option<(i32, i32)>, DbError> {
        frontend::startup_message(
            [
                ("user", user),
                ("database", database),
                ("application_name", application),
                ("client_encoding", "UTF8"),
            ],
            &mut self.out,
        )
        .map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        let need = || {
            DbError::other(
                "the server asks for a password; give it in the URL, PGPASSWORD or ~/.pgpass",
            )
        };
        let mut scram: Option<ScramSha256> = None;
        loop {
            match self.next()? {
                Message::AuthenticationOk => break,
                Message::AuthenticationCleartextPassword => {
                    let pw = password.ok_or_else(need)?;
                    frontend::password_message(pw.as_bytes(), &mut self.out)
                        .map_err(|e| DbError::other(e.to_string()))?;
                    self.send()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let pw = password.ok_or_else(need)?;
                    let hash = md5_hash(user.as_bytes(), pw.as_bytes(), body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.out)
                        .map_err(|e| DbError::other(e.to_string()))?;
                    self.send()?;
                }
                Message::AuthenticationSasl(body) => {
                    let pw = password.ok_or_else(need)?;
                    let mut offered = body.mechanisms();
                    let mut scram_offered = false;
                    while let Ok(Some(m)) = offered.next() {
                        scram_offered |= m == SCRAM_SHA_256;
                    }
                    if !scram_offered {
                        return Err(DbError::other(
                            "the server offers no SASL mechanism perflab speaks (SCRAM-SHA-256)",
                        ));
                    }
                    let s = ScramSha256::new(pw.as_bytes(), ChannelBinding::unsupported());
                    frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut self.out)
                        .map_err(|e| DbError::other(e.to_string()))?;
                    scram = Some(s);
                    self.send()?;
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(|| broken("SCRAM out of order"))?;
                    s.update(body.data())
                        .map_err(|e| DbError::other(format!("SCRAM: {e}")))?;
                    frontend::sasl_response(s.message(), &mut self.out)
                        .map_err(|e| DbError::other(e.to_string()))?;
                    self.send()?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram.as_mut().ok_or_else(|| broken("SCRAM out of order"))?;
                    s.finish(body.data())
                        .map_err(|e| DbError::other(format!("SCRAM: {e}")))?;
                }
                Message::ErrorResponse(body) => {
                    let e = server_error(&body);
                    return Err(DbError::other(format!("{}: {}", e.severity, e.message)));
                }
                Message::AuthenticationGss
                | Message::AuthenticationKerberosV5
                | Message::AuthenticationSspi
                | Message::AuthenticationScmCredential => {
                    return Err(DbError::other(
                        "the server asks for GSS, Kerberos or SSPI authentication, which perflab does not speak; use password or trust",
                    ));
                }
                _ => {}
            }
        }
        // Parameter statuses and the key data, up to the first ReadyForQuery.
        let mut key = None;
        self.finish_exchange(|m| {
            if let Message::BackendKeyData(k) = m {
                key = Some((k.process_id(), k.secret_key()));
            }
        })?;
        Ok(key)
    }

    /// Registers the cancel of this connection's statement with the stop token: a
    /// CancelRequest with the backend's key, then the socket shut down if the read still
    /// waits (see [`super::cancel`]).
    fn cancel_on_stop(&mut self, place: Place, key: Option<(i32, i32)>) {
        let Some((pid, secret)) = key else {
            return;
        };
        let socket = match &self.stream {
            Stream::Tcp(s) => s.try_clone().ok().map(Socket::Tcp),
            Stream::Unix(s) => s.try_clone().ok().map(Socket::Unix),
            Stream::Tls(s) => s.sock.try_clone().ok().map(Socket::Tcp),
        };
        let to = place.clone();
        self._canceller = Some(Canceller::register(
            &self.stop,
            self.waiting.clone(),
            socket,
            move || postgres_cancel(&to, pid, secret),
        ));
        self.cancel_key = Some((place, pid, secret));
    }

    /// After the stop, every read is bounded by [`SHUTDOWN_TIMEOUT`], and a statement that
    /// outlasts it is cancelled on the server before the connection is given up.
    fn bound_after_stop(&mut self) {
        if !self.bounded_after_stop && self.stop.is_set() {
            self.bounded_after_stop = true;
            self.set_answer_timeout(Some(SHUTDOWN_TIMEOUT));
        }
    }

    /// Bind, Execute, Sync for a prepared statement, in one write (Parse first in the
    /// extended mode): integers in binary when every parameter is an integer of an integer
    /// type, else every one as text.
    fn bind_execute<P: AsParam>(&mut self, stmt: Stmt, params: &[P]) -> Result<(), DbError> {
        self.bind_execute_as(stmt, params, false)
    }

    /// [`Self::bind_execute`]; with `text`, the answer comes as text, after a description
    /// of its columns (a script's statement, read by [`Self::read_answer`]).
    fn bind_execute_as<P: AsParam>(
        &mut self,
        stmt: Stmt,
        params: &[P],
        text: bool,
    ) -> Result<(), DbError> {
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        if stmt >= self.stmts.len() {
            return Err(DbError::other("no such statement"));
        }
        if self.mode == QueryMode::Simple {
            return self.simple_execute(stmt, params);
        }
        let p = &self.stmts[stmt];
        let types = &p.params;
        if params.len() != types.len() {
            return Err(DbError::other(format!(
                "the statement takes {} parameters, {} given",
                types.len(),
                params.len()
            )));
        }
        let binary = types.iter().all(|t| [INT2, INT4, INT8].contains(t))
            && params.iter().all(|p| matches!(p.param(), Param::Int(_)));
        if self.mode == QueryMode::Extended {
            // The unnamed statement, parsed (and planned) again on every execution.
            frontend::parse("", &p.sql, types.iter().copied(), &mut self.out)
                .map_err(|e| DbError::other(e.to_string()))?;
        }
        let mut range_error = None;
        let bound = frontend::bind(
            "",
            &p.name,
            [if binary { 1 } else { 0 }],
            params.iter().zip(types),
            |(p, &ty), buf| {
                let v = match p.param() {
                    Param::Null => return Ok(IsNull::Yes),
                    Param::Int(v) if binary => v,
                    other => {
                        buf.extend_from_slice(other.text().as_bytes());
                        return Ok(IsNull::No);
                    }
                };
                match ty {
                    INT2 => match i16::try_from(v) {
                        Ok(v) => postgres_protocol::types::int2_to_sql(v, buf),
                        Err(_) => range_error = Some((v, "smallint")),
                    },
                    INT4 => match i32::try_from(v) {
                        Ok(v) => postgres_protocol::types::int4_to_sql(v, buf),
                        Err(_) => range_error = Some((v, "integer")),
                    },
                    _ => postgres_protocol::types::int8_to_sql(v, buf),
                }
                Ok(IsNull::No)
            },
            [if text { 0 } else { 1 }],
            &mut self.out,
        );
        if let Some((v, ty)) = range_error {
            self.out.clear();
            return Err(DbError::other(format!("{v} does not fit a {ty} parameter")));
        }
        if bound.is_err() {
            self.out.clear();
            return Err(DbError::other("cannot bind the parameters"));
        }
        if text {
            frontend::describe(b'P', "", &mut self.out)
                .map_err(|e| DbError::other(e.to_string()))?;
        }
        frontend::execute("", 0, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        // In a pipeline the statements wait in the buffer and go in one write with the one
        // Sync at its end, as libpq's pipeline mode sends them.
        // (A long pipeline goes out in pieces: the server's answers to it are read only at
        // its end, so what is held back stays small.)
        if self.pipelined.is_some() {
            return match self.out.len() > PIPELINE_HOLD {
                true => self.send(),
                false => Ok(()),
            };
        }
        frontend::sync(&mut self.out);
        self.send()
    }

    /// `-M simple`: the parameters written into the statement's text as literals (integers
    /// bare for integer parameters, anything else quoted), sent as one Query.
    fn simple_execute<P: AsParam>(&mut self, stmt: Stmt, params: &[P]) -> Result<(), DbError> {
        let p = &self.stmts[stmt];
        let values: Vec<Param<'_>> = params.iter().map(AsParam::param).collect();
        let text = query_mode::inline(&p.sql, &values, |i, v, out| match v {
            Param::Int(n)
                if [INT2, INT4, INT8].contains(&p.params.get(i).copied().unwrap_or(0)) =>
            {
                query_mode::integer(n, out)
            }
            Param::Null => out.push_str("NULL"),
            other => query_mode::quote(&other.text(), false, out),
        })
        .map_err(DbError::other)?;
        frontend::query(&text, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()
    }
}

impl PgConn {
    /// A script statement's answer, up to ReadyForQuery: the last result's columns and (when
    /// kept) rows as text, its rows changed; the first error the server sent.
    fn read_answer(&mut self, out: &mut Answer) -> Result<(), DbError> {
        let mut failed: Option<ServerError> = None;
        loop {
            let m = self.next()?;
            match &m {
                Message::ReadyForQuery(body) => {
                    self.status = body.status();
                    break;
                }
                Message::ErrorResponse(body) => {
                    let e = server_error(body);
                    if e.severity == "FATAL" || e.severity == "PANIC" {
                        self.broken = true;
                        return Err(e.into_db_error());
                    }
                    failed.get_or_insert(e);
                }
                // A compound query answers once per statement: the last one counts.
                Message::RowDescription(body) => {
                    out.columns.clear();
                    out.rows.clear();
                    out.returned = 0;
                    if out.keep {
                        let mut fields = body.fields();
                        while let Ok(Some(f)) = fields.next() {
                            out.columns.push(f.name().to_string());
                        }
                    }
                }
                Message::DataRow(row) => {
                    out.returned += 1;
                    if out.keep {
                        let mut values = Vec::with_capacity(out.columns.len());
                        let mut ranges = row.ranges();
                        while let Ok(Some(r)) = ranges.next() {
                            values.push(
                                r.map(|r| String::from_utf8_lossy(&row.buffer()[r]).into_owned()),
                            );
                        }
                        out.rows.push(values);
                    }
                }
                Message::CommandComplete(body) => {
                    out.changed = body.tag().map(rows_of).unwrap_or(0);
                }
                _ => {}
            }
        }
        match failed {
            Some(e) => Err(e.into_db_error()),
            None => Ok(()),
        }
    }

    /// The rows of an executed query: the first `width` columns of each, binary integers.
    /// In the simple mode the columns come as text.
    fn read_rows(&mut self, width: usize, out: &mut Vec<i64>) -> Result<usize, DbError> {
        let mut n = 0;
        let text = self.mode == QueryMode::Simple;
        self.finish_exchange(|m| {
            if let Message::DataRow(row) = m {
                let mut ranges = row.ranges();
                for _ in 0..width {
                    let value = ranges.next().ok().flatten().flatten();
                    let bytes = value.map(|r| &row.buffer()[r]);
                    out.push(match text {
                        true => int_of_text(bytes),
                        false => int_of(bytes),
                    });
                }
                n += 1;
            }
        })?;
        Ok(n)
    }
}

/// A parameter of either kind, so integer-only statements bind without building a list.
trait AsParam {
    fn param(&self) -> Param<'_>;
}

impl AsParam for i64 {
    fn param(&self) -> Param<'_> {
        Param::Int(*self)
    }
}

impl AsParam for Param<'_> {
    fn param(&self) -> Param<'_> {
        *self
    }
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        frontend::query(sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        self.finish_exchange(|_| {}).map(|_| ())
    }

    /// `COPY ... FROM STDIN` in the text format, the file sent as it is in chunks; Ctrl-C
    /// between chunks ends the copy with `CopyFail`, which rolls it back.
    fn load_file(
        &mut self,
        table: &str,
        columns: &[&str],
        path: &std::path::Path,
    ) -> Result<u64, DbError> {
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        let mut file = std::fs::File::open(path)
            .map_err(|e| DbError::other(format!("cannot read {}: {e}", path.display())))?;
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        frontend::query(&sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        loop {
            match self.next()? {
                Message::CopyInResponse(_) => break,
                // Refused (no such table, no privilege): the error, then ReadyForQuery.
                Message::ErrorResponse(body) => {
                    let e = server_error(&body);
                    self.finish_exchange(|_| {})?;
                    return Err(e.into_db_error());
                }
                _ => {}
            }
        }
        let mut chunk = vec![0u8; COPY_CHUNK];
        let mut stopped: Option<String> = None;
        loop {
            if self.stop.is_set() {
                stopped = Some("interrupted".into());
                break;
            }
            let n = match file.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    stopped = Some(format!("cannot read {}: {e}", path.display()));
                    break;
                }
            };
            frontend::CopyData::new(&chunk[..n])
                .map_err(|e| DbError::other(e.to_string()))?
                .write(&mut self.out);
            self.send()?;
        }
        match &stopped {
            Some(why) => frontend::copy_fail(why, &mut self.out)
                .map_err(|e| DbError::other(e.to_string()))?,
            None => frontend::copy_done(&mut self.out),
        }
        self.send()?;
        let rows = self.finish_exchange(|_| {});
        match stopped {
            Some(why) => Err(DbError::other(why)),
            None => rows,
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        // Without named statements, the unnamed one is parsed once here only to learn the
        // parameters' types (how to bind them, or write them as literals).
        let name = match self.mode {
            QueryMode::Prepared => format!("perflab_{}", self.stmts.len()),
            QueryMode::Extended | QueryMode::Simple => String::new(),
        };
        let numbered = numbered_placeholders(sql);
        frontend::parse(&name, &numbered, [], &mut self.out)
            .map_err(|e| DbError::other(e.to_string()))?;
        frontend::describe(b'S', &name, &mut self.out)
            .map_err(|e| DbError::other(e.to_string()))?;
        frontend::sync(&mut self.out);
        self.send()?;
        let mut params = Vec::new();
        let mut failed: Option<ServerError> = None;
        loop {
            match self.next()? {
                Message::ReadyForQuery(_) => break,
                Message::ParameterDescription(body) => {
                    let mut it = body.parameters();
                    while let Ok(Some(oid)) = it.next() {
                        params.push(oid);
                    }
                }
                Message::ErrorResponse(body) => {
                    let e = server_error(&body);
                    if e.severity == "FATAL" || e.severity == "PANIC" {
                        self.broken = true;
                        return Err(e.into_db_error());
                    }
                    failed.get_or_insert(e);
                }
                _ => {}
            }
        }
        if let Some(e) = failed {
            return Err(e.into_db_error());
        }
        let sql = match self.mode {
            QueryMode::Prepared => String::new(),
            QueryMode::Extended => numbered,
            QueryMode::Simple => sql.to_string(),
        };
        self.stmts.push(Prepared { name, params, sql });
        Ok(self.stmts.len() - 1)
    }

    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.bind_execute(stmt, params)?;
        self.finish_exchange(|_| {})
    }

    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.bind_execute(stmt, params)?;
        self.read_rows(1, out)
    }

    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        self.bind_execute(stmt, params)?;
        self.read_rows(width, out)
    }

    fn answer(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut Answer,
    ) -> Result<(), DbError> {
        if let Some(n) = &mut self.pipelined {
            if self.mode == QueryMode::Simple {
                return Err(DbError::unsupported(
                    "a pipeline needs the extended protocol: -M extended or prepared",
                ));
            }
            *n += 1;
            return self.bind_execute_as(stmt, params, false);
        }
        self.bind_execute_as(stmt, params, true)?;
        self.read_answer(out)
    }

    fn pipeline_begin(&mut self) -> Result<(), DbError> {
        if self.mode == QueryMode::Simple {
            return Err(DbError::unsupported(
                "a pipeline needs the extended protocol: -M extended or prepared",
            ));
        }
        if self.pipelined.is_some() {
            return Err(DbError::other("already in a pipeline"));
        }
        self.pipelined = Some(0);
        Ok(())
    }

    fn pipeline_end(&mut self) -> Result<(), DbError> {
        if self.pipelined.take().is_none() {
            return Err(DbError::other("not in a pipeline"));
        }
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        // One Sync: the server answers every statement (or skips the rest after the first
        // error), then ReadyForQuery.
        frontend::sync(&mut self.out);
        self.send()?;
        let mut answers = Answer::default();
        self.read_answer(&mut answers)
    }

    fn simple(&mut self, sql: &str, out: &mut Answer) -> Result<(), DbError> {
        if self.broken {
            return Err(broken("connection lost earlier"));
        }
        frontend::query(sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        self.read_answer(out)
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(self.status != b'I')
    }

    fn server_pid(&self) -> Option<i64> {
        self.cancel_key.as_ref().map(|(_, pid, _)| *pid as i64)
    }

    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        // The simple protocol sends text, so sums of any width parse alike.
        let mut first: Option<Result<Vec<i64>, DbError>> = None;
        frontend::query(sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        self.finish_exchange(|m| {
            if let (Message::DataRow(row), None) = (m, &first) {
                let mut values = Vec::new();
                let mut ranges = row.ranges();
                while let Ok(Some(r)) = ranges.next() {
                    let text = r.map(|r| String::from_utf8_lossy(&row.buffer()[r]).into_owned());
                    match text.as_deref().map(str::parse::<i64>) {
                        None => values.push(0),
                        Some(Ok(v)) => values.push(v),
                        Some(Err(_)) => {
                            first = Some(Err(DbError::other(format!(
                                "{:?} is not an integer",
                                text.unwrap_or_default()
                            ))));
                            return;
                        }
                    }
                }
                first = Some(Ok(values));
            }
        })?;
        first.transpose()
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let mut first: Option<Option<String>> = None;
        frontend::query(sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        self.finish_exchange(|m| {
            if let (Message::DataRow(row), None) = (m, &first) {
                let value = row
                    .ranges()
                    .next()
                    .ok()
                    .flatten()
                    .flatten()
                    .map(|r| String::from_utf8_lossy(&row.buffer()[r]).into_owned());
                first = Some(value);
            }
        })?;
        Ok(first.flatten())
    }

    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        let mut out = Vec::new();
        frontend::query(sql, &mut self.out).map_err(|e| DbError::other(e.to_string()))?;
        self.send()?;
        self.finish_exchange(|m| {
            if let Message::DataRow(row) = m {
                let mut values = Vec::new();
                let mut ranges = row.ranges();
                while let Ok(Some(r)) = ranges.next() {
                    values.push(
                        r.map(|r| String::from_utf8_lossy(&row.buffer()[r]).into_owned())
                            .unwrap_or_default(),
                    );
                }
                out.push(values);
            }
        })?;
        Ok(out)
    }

    fn begin(&mut self, _writes: bool) -> Result<(), DbError> {
        self.batch("BEGIN")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        // A pipeline left open by a failed script is synced and its answers read first.
        if self.pipelined.take().is_some() && !self.broken {
            frontend::sync(&mut self.out);
            if self.send().is_ok() {
                let _ = self.read_answer(&mut Answer::default());
            }
        }
        if !self.broken {
            let _ = self.batch("ROLLBACK");
        }
    }

    fn is_broken(&self) -> bool {
        self.broken
    }

    fn stop(&self) -> &Stop {
        &self.stop
    }

    fn set_answer_timeout(&mut self, limit: Option<Duration>) {
        let limit = answer_limit(limit, &self.stop);
        let _ = match &self.stream {
            Stream::Tcp(s) => s.set_read_timeout(limit),
            Stream::Unix(s) => s.set_read_timeout(limit),
            Stream::Tls(s) => s.sock.set_read_timeout(limit),
        };
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Say goodbye, so the server does not log an unexpected EOF.
        if !self.broken {
            frontend::terminate(&mut self.out);
            let _ = self.stream.write_all(&self.out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tags_give_the_rows_changed() {
        assert_eq!(rows_of("UPDATE 1"), 1);
        assert_eq!(rows_of("INSERT 0 5"), 5);
        assert_eq!(rows_of("DELETE 0"), 0);
        assert_eq!(rows_of("BEGIN"), 0);
    }

    #[test]
    fn binary_integers_of_every_width_decode() {
        assert_eq!(int_of(Some(&7i16.to_be_bytes())), 7);
        assert_eq!(int_of(Some(&(-7i32).to_be_bytes())), -7);
        assert_eq!(int_of(Some(&(1i64 << 40).to_be_bytes())), 1 << 40);
        assert_eq!(int_of(None), 0);
    }

    #[test]
    fn server_errors_are_sorted_by_what_to_do_next() {
        let e = |severity: &str, code: &str| {
            ServerError {
                severity: severity.into(),
                code: code.into(),
                message: "m".into(),
            }
            .into_db_error()
            .kind
        };
        assert_eq!(e("ERROR", "40001"), DbErrorKind::Conflict);
        assert_eq!(e("ERROR", "23505"), DbErrorKind::Conflict);
        assert_eq!(e("FATAL", "57P01"), DbErrorKind::Broken);
        assert_eq!(e("ERROR", "42P01"), DbErrorKind::Other);
        assert_eq!(e("ERROR", "57014"), DbErrorKind::Cancelled);
        // A pooler in transaction mode: named statements not the connection's own.
        for code in ["42P05", "26000"] {
            assert_eq!(e("ERROR", code), DbErrorKind::Unsupported);
        }
        let refused = ServerError {
            severity: "ERROR".into(),
            code: "42P05".into(),
            message: "prepared statement \"perflab_0\" already exists".into(),
        }
        .into_db_error()
        .message;
        assert_eq!(
            refused,
            "the server (a pooler in transaction mode?) refused perflab's named prepared statements (42P05: prepared statement \"perflab_0\" already exists): run with -M extended or -M simple"
        );
    }
}
