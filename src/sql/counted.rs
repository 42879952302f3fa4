//! A connection that counts the statements it sends: what `statements_per_sec` is made of
//! (sysbench's queries, the BestPerf MySQL report's statements per second), the same for every
//! backend because it wraps the connection interface rather than each client.
//!
//! It also knows where a transaction stands, so that a connection lost under it is judged
//! rightly ([`Counted::in_doubt`]): lost before `COMMIT` was sent, the server rolls the
//! transaction back and the outcome is known (nothing happened); lost after, it may or may
//! not have committed.

use super::sql::{Conn, DbError, Dialect, Param, Stmt};
use crate::stop::Stop;

/// `inner`, counting every statement sent through it: each prepared execution or query,
/// each unprepared query or batch, and each `BEGIN`, `COMMIT` and `ROLLBACK`.
pub struct Counted {
    inner: Box<dyn Conn>,
    statements: u64,
    stage: Stage,
}

/// Where the connection's work stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No transaction open, nothing unanswered.
    Idle,
    /// Inside `BEGIN`, `COMMIT` not yet sent; `writes` as `begin` was told.
    Open { writes: bool },
    /// `COMMIT` sent, its answer not yet read.
    Committing { writes: bool },
    /// A statement outside any transaction sent (the server commits it by itself), its
    /// answer not yet read.
    Loose,
}

impl Counted {
    /// Wraps `inner`, starting the count at `from` (a re-opened connection carries on).
    pub fn new(inner: Box<dyn Conn>, from: u64) -> Counted {
        Counted {
            inner,
            statements: from,
            stage: Stage::Idle,
        }
    }

    /// Whether work of the last transaction (or statement) may have been committed although
    /// its answer never came: `COMMIT` of a transaction that wrote was sent, or a statement
    /// outside any transaction was. A read-only transaction, or one lost before its
    /// `COMMIT` left, is not in doubt: the server undoes it.
    pub fn in_doubt(&self) -> bool {
        matches!(
            self.stage,
            Stage::Committing { writes: true } | Stage::Loose
        )
    }

    /// Notes a statement that may write about to be sent (`exec`, `batch`): outside a
    /// transaction, it is loose until answered.
    #[inline]
    fn sending(&mut self) {
        self.statements += 1;
        if self.stage == Stage::Idle {
            self.stage = Stage::Loose;
        }
    }

    /// Notes a query about to be sent: queries read (perflab's workloads write only through
    /// `exec` and `batch`), so one lost outside a transaction leaves nothing in doubt.
    #[inline]
    fn reading(&mut self) {
        self.statements += 1;
    }

    /// The answer to a statement came (a result, or the server's own error): a loose one is
    /// settled. A connection lost or given up is no answer.
    #[inline]
    fn answered<T>(&mut self, r: Result<T, DbError>) -> Result<T, DbError> {
        if self.stage == Stage::Loose && settled(&r) {
            self.stage = Stage::Idle;
        }
        r
    }

    /// Statements sent so far.
    pub fn statements(&self) -> u64 {
        self.statements
    }
}

/// Whether `r` is the server's answer: a result, or an error it sent (the transaction did not
/// commit), rather than a connection lost, garbled or given up.
fn settled<T>(r: &Result<T, DbError>) -> bool {
    use super::sql::DbErrorKind as K;
    match r {
        Ok(_) => true,
        Err(e) => !matches!(e.kind, K::Broken | K::Protocol | K::TimedOut),
    }
}

impl Conn for Counted {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.sending();
        let r = self.inner.batch(sql);
        self.answered(r)
    }
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.inner.prepare(sql)
    }
    #[inline]
    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.sending();
        let r = self.inner.exec(stmt, params);
        self.answered(r)
    }
    #[inline]
    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.reading();
        let r = self.inner.query(stmt, params, out);
        self.answered(r)
    }
    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        self.reading();
        let r = self.inner.fetch(stmt, params, width, out);
        self.answered(r)
    }
    /// A script's statement may write whatever it says: counted as a write.
    fn answer(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        out: &mut super::sql::Answer,
    ) -> Result<(), DbError> {
        self.sending();
        let r = self.inner.answer(stmt, params, out);
        self.answered(r)
    }
    fn simple(&mut self, sql: &str, out: &mut super::sql::Answer) -> Result<(), DbError> {
        self.sending();
        let r = self.inner.simple(sql, out);
        self.answered(r)
    }
    fn in_transaction(&self) -> Option<bool> {
        self.inner.in_transaction()
    }
    fn server_pid(&self) -> Option<i64> {
        self.inner.server_pid()
    }
    fn pipeline_begin(&mut self) -> Result<(), DbError> {
        self.inner.pipeline_begin()
    }
    fn pipeline_end(&mut self) -> Result<(), DbError> {
        self.sending();
        let r = self.inner.pipeline_end();
        self.answered(r)
    }
    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        self.reading();
        let r = self.inner.query_row(sql);
        self.answered(r)
    }
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.reading();
        let r = self.inner.query_text(sql);
        self.answered(r)
    }
    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.reading();
        let r = self.inner.query_texts(sql);
        self.answered(r)
    }
    #[inline]
    fn begin(&mut self, writes: bool) -> Result<(), DbError> {
        self.statements += 1;
        self.stage = Stage::Open { writes };
        self.inner.begin(writes)
    }
    #[inline]
    fn commit(&mut self) -> Result<(), DbError> {
        self.statements += 1;
        if let Stage::Open { writes } = self.stage {
            self.stage = Stage::Committing { writes };
        }
        let r = self.inner.commit();
        if settled(&r) {
            self.stage = Stage::Idle;
        }
        r
    }
    fn rollback(&mut self) {
        self.statements += 1;
        self.stage = Stage::Idle;
        self.inner.rollback()
    }
    fn is_broken(&self) -> bool {
        self.inner.is_broken()
    }
    fn load_file(
        &mut self,
        table: &str,
        columns: &[&str],
        path: &std::path::Path,
    ) -> Result<u64, DbError> {
        self.statements += 1;
        self.inner.load_file(table, columns, path)
    }
    fn set_answer_timeout(&mut self, limit: Option<std::time::Duration>) {
        self.inner.set_answer_timeout(limit)
    }
    fn stop(&self) -> &Stop {
        self.inner.stop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::sqlite::{self, SqliteSettings};

    #[test]
    fn every_statement_counts_once() {
        let dir = std::env::temp_dir().join(format!("perflab-counted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let settings = SqliteSettings {
            journal_mode: "wal".into(),
            synchronous: "normal".into(),
            page_size: None,
        };
        let conn = sqlite::connect(&dir.join("c.db"), &settings, &Stop::new()).expect("opens");
        let mut c = Counted::new(Box::new(conn), 0);
        c.batch("CREATE TABLE t (a INTEGER)").unwrap();
        let ins = c.prepare("INSERT INTO t VALUES (?)").unwrap();
        let sel = c.prepare("SELECT a FROM t WHERE a = ?").unwrap();
        c.begin(true).unwrap();
        c.exec(ins, &[1]).unwrap();
        let mut out = Vec::new();
        c.query(sel, &[1], &mut out).unwrap();
        c.commit().unwrap();
        // CREATE, BEGIN, INSERT, SELECT, COMMIT: preparing is not a statement.
        assert_eq!(c.statements(), 5);
        assert!(!c.in_doubt());
        // A write of a transaction not yet committed is not in doubt: lost, it is undone.
        c.begin(true).unwrap();
        c.exec(ins, &[2]).unwrap();
        assert!(!c.in_doubt());
        c.rollback();
        // A statement the server refused was answered: nothing in doubt.
        assert!(c.batch("INSERT INTO nowhere VALUES (1)").is_err());
        assert!(!c.in_doubt());
        assert_eq!(out, [1]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
