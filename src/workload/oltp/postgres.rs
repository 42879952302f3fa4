//! PostgreSQL, through the `postgres` crate: the extended protocol, each statement prepared
//! once per connection, integers converted to the types the server inferred.
//!
//! - `--set NAME=VALUE` sets server parameters per session (`SET`), e.g.
//!   `synchronous_commit=off`; the settings that decide durability and group commit
//!   ([`DISCLOSED`]) are read back and recorded.
//! - Log flushes: `pg_stat_wal`'s `wal_write` and `wal_sync` (as `log_writes`, `log_syncs`)
//!   and `pg_stat_database`'s commits are sampled around every measure phase ([`counters`]).
//! - Passwords: from the URL, else `PGPASSWORD` or `~/.pgpass` (as libpq does; the crate reads
//!   neither), through the target module's lookup.
//! - TLS as libpq's `sslmode` says ([`super::pg_tls`]).

use super::sql::{Conn, DbError, Dialect, ErrorKind, Stmt, numbered_placeholders};
use bytes::BytesMut;
use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, SimpleQueryMessage, Statement};
use std::collections::BTreeMap;

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

/// How to reach the server, with the password (never shown) and the session settings.
#[derive(Clone)]
pub struct PgTarget {
    /// A libpq-style URL, password included.
    pub url: String,
    /// `SET name = value` for every session.
    pub set: Vec<(String, String)>,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgTarget { .. }")
    }
}

fn db_error(e: postgres::Error) -> DbError {
    let kind = match e.code() {
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::UNIQUE_VIOLATION =>
        {
            ErrorKind::Conflict
        }
        _ if e.is_closed() => ErrorKind::Broken,
        _ => ErrorKind::Other,
    };
    // The server's message when there is one (wrong password, missing table ...).
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    DbError { kind, message }
}

/// The connection settings: the URL, with the password from `PGPASSWORD` or `~/.pgpass`
/// when the URL has none.
fn config(t: &PgTarget) -> Result<postgres::Config, DbError> {
    let mut cfg: postgres::Config = t
        .url
        .parse()
        .map_err(|e: postgres::Error| DbError::other(format!("bad URL: {e}")))?;
    if cfg.get_password().is_none()
        && let Ok(target) = t.url.parse::<crate::target::url::TargetUrl>()
    {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let found = target.password_from_environment(&|k| std::env::var(k).ok(), home.as_deref());
        if let Some(pw) = found.password {
            cfg.password(pw.expose());
        }
    }
    Ok(cfg)
}

/// Opens a session: TLS unless the URL says `sslmode=disable` (libpq's default, `prefer`,
/// encrypts where the server offers it).
fn open(t: &PgTarget) -> Result<Client, DbError> {
    let cfg = config(t)?;
    match cfg.get_ssl_mode() {
        SslMode::Disable => cfg.connect(NoTls),
        _ => cfg.connect(super::pg_tls::connector().map_err(DbError::other)?),
    }
    .map_err(db_error)
}

/// Connects and applies the session settings.
pub fn connect(t: &PgTarget) -> Result<PgConn, DbError> {
    let mut client = open(t)?;
    for (name, value) in &t.set {
        client
            .batch_execute(&format!(
                "SET {} = '{}'",
                ident(name)?,
                value.replace('\'', "''")
            ))
            .map_err(db_error)?;
    }
    Ok(PgConn {
        client,
        stmts: Vec::new(),
        params: Vec::with_capacity(8),
    })
}

/// A parameter name as given, checked to be a plain identifier (it is spliced into SQL).
fn ident(name: &str) -> Result<&str, DbError> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        Ok(name)
    } else {
        Err(DbError::other(format!(
            "--set {name:?}: not a parameter name"
        )))
    }
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

/// Cumulative server counters: WAL writes and syncs, commits.
pub fn counters(t: &PgTarget) -> Option<Vec<(String, f64)>> {
    let mut c = open(t).ok()?;
    let mut out = Vec::new();
    if let Ok(r) = c.query_one(
        "SELECT wal_write::float8, wal_sync::float8, wal_records::float8, wal_bytes::float8 FROM pg_stat_wal",
        &[],
    ) {
        out.push(("log_writes".into(), r.get::<_, f64>(0)));
        out.push(("log_syncs".into(), r.get::<_, f64>(1)));
        out.push(("log_records".into(), r.get::<_, f64>(2)));
        out.push(("log_bytes".into(), r.get::<_, f64>(3)));
    }
    if let Ok(r) = c.query_one(
        "SELECT xact_commit::float8 FROM pg_stat_database WHERE datname = current_database()",
        &[],
    ) {
        out.push(("server_commits".into(), r.get::<_, f64>(0)));
    }
    Some(out)
}

/// An integer parameter in the width the server inferred for its placeholder.
#[derive(Debug)]
enum Int {
    I16(i16),
    I32(i32),
    I64(i64),
}

impl ToSql for Int {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Int::I16(v) => v.to_sql(ty, out),
            Int::I32(v) => v.to_sql(ty, out),
            Int::I64(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8)
    }

    to_sql_checked!();
}

/// One connection.
pub struct PgConn {
    client: Client,
    stmts: Vec<Statement>,
    /// Reused for every call: the parameters converted to the statement's types.
    params: Vec<Int>,
}

impl PgConn {
    fn bind(&mut self, stmt: Stmt, values: &[i64]) -> Result<(), DbError> {
        self.params.clear();
        for (ty, &v) in self.stmts[stmt].params().iter().zip(values) {
            let out_of_range = || DbError::other(format!("{v} does not fit a {ty} parameter"));
            self.params.push(match *ty {
                Type::INT2 => Int::I16(v.try_into().map_err(|_| out_of_range())?),
                Type::INT4 => Int::I32(v.try_into().map_err(|_| out_of_range())?),
                _ => Int::I64(v),
            });
        }
        Ok(())
    }
}

/// The bound parameters as the crate takes them.
fn refs(params: &[Int]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A column read as an integer, whichever integer type the server sent; NULL as 0.
fn int_at(row: &postgres::Row, i: usize) -> Result<i64, DbError> {
    let ty = row.columns()[i].type_().clone();
    let v = match ty {
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map(|v| v.map(i64::from)),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|v| v.map(i64::from)),
        _ => row.try_get::<_, Option<i64>>(i),
    };
    v.map(|v| v.unwrap_or(0)).map_err(db_error)
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(db_error)
    }

    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        let s = self
            .client
            .prepare(&numbered_placeholders(sql))
            .map_err(db_error)?;
        self.stmts.push(s);
        Ok(self.stmts.len() - 1)
    }

    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.bind(stmt, params)?;
        let refs = refs(&self.params);
        self.client
            .execute(&self.stmts[stmt], &refs)
            .map_err(db_error)
    }

    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.bind(stmt, params)?;
        let refs = refs(&self.params);
        let rows = self
            .client
            .query(&self.stmts[stmt], &refs)
            .map_err(db_error)?;
        for r in &rows {
            out.push(int_at(r, 0)?);
        }
        Ok(rows.len())
    }

    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        // The simple protocol: every column as text, so sums of any width parse alike.
        for m in self.client.simple_query(sql).map_err(db_error)? {
            if let SimpleQueryMessage::Row(r) = m {
                return (0..r.len())
                    .map(|i| match r.get(i) {
                        None => Ok(0),
                        Some(s) => s
                            .parse::<i64>()
                            .map_err(|_| DbError::other(format!("{s:?} is not an integer"))),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some);
            }
        }
        Ok(None)
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        for m in self.client.simple_query(sql).map_err(db_error)? {
            if let SimpleQueryMessage::Row(r) = m {
                return Ok(r.get(0).map(str::to_string));
            }
        }
        Ok(None)
    }

    fn begin(&mut self, _writes: bool) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(db_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("COMMIT").map_err(db_error)
    }

    fn rollback(&mut self) {
        if !self.client.is_closed() {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }

    fn is_broken(&self) -> bool {
        self.client.is_closed()
    }
}
