//! A connection that counts the statements it sends: what `statements_per_sec` is made of
//! (sysbench's queries, the BestPerf MySQL report's statements per second), the same for every
//! backend because it wraps the connection interface rather than each client.

use super::sql::{Conn, DbError, Dialect, Param, Stmt};
use crate::stop::Stop;

/// `inner`, counting every statement sent through it: each prepared execution or query,
/// each unprepared query or batch, and each `BEGIN`, `COMMIT` and `ROLLBACK`.
pub struct Counted {
    inner: Box<dyn Conn>,
    statements: u64,
}

impl Counted {
    /// Wraps `inner`, starting the count at `from` (a re-opened connection carries on).
    pub fn new(inner: Box<dyn Conn>, from: u64) -> Counted {
        Counted {
            inner,
            statements: from,
        }
    }

    /// Statements sent so far.
    pub fn statements(&self) -> u64 {
        self.statements
    }
}

impl Conn for Counted {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.statements += 1;
        self.inner.batch(sql)
    }
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.inner.prepare(sql)
    }
    #[inline]
    fn exec(&mut self, stmt: Stmt, params: &[i64]) -> Result<u64, DbError> {
        self.statements += 1;
        self.inner.exec(stmt, params)
    }
    #[inline]
    fn query(&mut self, stmt: Stmt, params: &[i64], out: &mut Vec<i64>) -> Result<usize, DbError> {
        self.statements += 1;
        self.inner.query(stmt, params, out)
    }
    fn fetch(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        width: usize,
        out: &mut Vec<i64>,
    ) -> Result<usize, DbError> {
        self.statements += 1;
        self.inner.fetch(stmt, params, width, out)
    }
    fn query_row(&mut self, sql: &str) -> Result<Option<Vec<i64>>, DbError> {
        self.statements += 1;
        self.inner.query_row(sql)
    }
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.statements += 1;
        self.inner.query_text(sql)
    }
    fn query_texts(&mut self, sql: &str) -> Result<Vec<Vec<String>>, DbError> {
        self.statements += 1;
        self.inner.query_texts(sql)
    }
    #[inline]
    fn begin(&mut self, writes: bool) -> Result<(), DbError> {
        self.statements += 1;
        self.inner.begin(writes)
    }
    #[inline]
    fn commit(&mut self) -> Result<(), DbError> {
        self.statements += 1;
        self.inner.commit()
    }
    fn rollback(&mut self) {
        self.statements += 1;
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
        assert_eq!(out, [1]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
