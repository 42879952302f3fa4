//! The shared store's address and one connection to it: perflab's own PostgreSQL client
//! ([`crate::sql::postgres::PgConn`]), so the store is reached as every PostgreSQL target is:
//! a URL or libpq's `key=value` string, the `PG*` variables, `~/.pgpass`, `sslmode` up to
//! `verify-full` ([`crate::target::conninfo`]). The address is never printed with its
//! password: messages and pages name [`Address::shown`].

use crate::archive::ArchiveError;
use crate::sql::postgres::{self, PgConn};
use crate::sql::query_mode::QueryMode;
use crate::sql::sql::{Answer, Conn, DbError, Param, ServerTarget, Stmt};
use crate::stop::Stop;
use crate::target::url::{Backend, TargetUrl, redact};
use std::collections::HashMap;
use std::time::Duration;

/// How long one statement may wait for its answer: a store that stops answering must not
/// hold a run's end (its upload) or a page for long.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the shared store is.
#[derive(Clone)]
pub struct Address {
    url: String,
}

impl std::fmt::Debug for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Address({})", self.shown())
    }
}

impl Address {
    /// `text` (`--shared` or `PERFLAB_SHARED`), checked to name a PostgreSQL server.
    pub fn parse(text: &str) -> Result<Address, ArchiveError> {
        let bad = |why: String| {
            ArchiveError::SharedRefused(format!(
                "{}: {why}; give --shared (or PERFLAB_SHARED) a postgres:// URL or a libpq 'host=... dbname=...' string",
                redact(text)
            ))
        };
        let url: TargetUrl = text.trim().parse().map_err(|e| bad(format!("{e}")))?;
        if url.backend != Backend::Postgres {
            return Err(bad("not a PostgreSQL address".into()));
        }
        Ok(Address {
            url: text.trim().to_string(),
        })
    }

    /// The address without its password, for messages and pages.
    pub fn shown(&self) -> String {
        redact(&self.url)
    }
}

/// A statement's rows, every column as text (NULL as `None`).
pub type Rows = Vec<Vec<Option<String>>>;

/// One connection, with the statements it prepared, by their text.
pub struct Db {
    conn: PgConn,
    stmts: HashMap<&'static str, Stmt>,
    answer: Answer,
}

/// A statement's failure as the store's error, naming the store (never its password).
pub fn failed(address: &Address, e: &DbError) -> ArchiveError {
    let refused =
        e.message.contains("permission denied") || e.message.contains("read-only transaction");
    let text = format!("{}: {}", address.shown(), e.message);
    match refused {
        true => ArchiveError::SharedRefused(format!(
            "{text} (this role may not write here: upload with a member of perflab_writer)"
        )),
        false => ArchiveError::Shared(text),
    }
}

impl Db {
    /// Connects; with `read_only`, every transaction of the session is read-only, whatever
    /// the role may do (what `serve` asks for).
    pub fn connect(address: &Address, read_only: bool) -> Result<Db, ArchiveError> {
        let target = ServerTarget {
            url: address.url.clone(),
            set: Vec::new(),
            op_timeout: ANSWER_TIMEOUT,
            query_mode: QueryMode::Prepared,
        };
        // A token of its own: the store is reached after a run's Ctrl-C too (its upload).
        let conn =
            postgres::connect_with(&target, Some(ANSWER_TIMEOUT), &Stop::new()).map_err(|e| {
                ArchiveError::Shared(format!("cannot reach {}: {}", address.shown(), e.message))
            })?;
        let mut db = Db {
            conn,
            stmts: HashMap::new(),
            answer: Answer::default(),
        };
        // Each statement planned for its values: a generic plan for `LIMIT $1` guesses a
        // tenth of the table and may sort it all (serve reuses its statements). A server
        // before 12 lacks the setting; its plans are what they were.
        let _ = db.batch("SET plan_cache_mode = force_custom_plan");
        if read_only {
            db.batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(|e| failed(address, &e))?;
        }
        Ok(db)
    }

    /// Statements without parameters or answers (a migration's, a transaction's).
    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.batch(sql)
    }

    /// Every row of a statement without parameters, every column as text.
    pub fn texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.conn.query_texts(sql)
    }

    /// `sql` (with `?` placeholders), prepared once per connection, run with `params`: its
    /// rows (columns as text, NULL as `None`) and the rows it changed.
    pub fn run(&mut self, sql: &'static str, params: &[Param<'_>]) -> Result<(Rows, u64), DbError> {
        let stmt = match self.stmts.get(sql) {
            Some(s) => *s,
            None => {
                let s = self.conn.prepare(sql)?;
                self.stmts.insert(sql, s);
                s
            }
        };
        self.answer.reset(true);
        self.conn.answer(stmt, params, &mut self.answer)?;
        Ok((std::mem::take(&mut self.answer.rows), self.answer.changed))
    }

    pub fn is_broken(&self) -> bool {
        self.conn.is_broken()
    }
}

/// A text parameter, or NULL.
pub fn opt(v: Option<&str>) -> Param<'_> {
    v.map_or(Param::Null, Param::Text)
}
