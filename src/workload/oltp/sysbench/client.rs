//! One sysbench thread as an OLTP [`Client`]: its statements prepared on every table, one
//! event per op, and the queries counted as sysbench counts them.
//!
//! **Counting.** sysbench sorts each query by its answer (`drv_mysql.c`, `drv_pgsql.c`): one
//! that returns a result set is a read (even an empty one), one that changed rows a write,
//! anything else other (BEGIN, COMMIT, an UPDATE or DELETE that matched nothing). The counts
//! cover the measure phase, as perflab's own figures do.
//!
//! **Errors.** An error sysbench ignores re-runs the whole event: on PostgreSQL a deadlock,
//! a serialization failure or a unique violation (after a ROLLBACK); on MySQL the codes of
//! `--mysql-ignore-errors` (1213, 1020 and 1205 by default, or `all`); on SQLite (perflab's
//! addition) a busy or locked database. The event counts once, its latency spans the
//! re-runs, and the ignored errors are counted. The queries before the error stay counted,
//! as in sysbench. Any other error fails the op (sysbench ends its run there; perflab counts
//! it and goes on), and a lost connection is the session's to re-open.

use super::checks::Books;
use super::options::SysbenchOptions;
use super::rand::{C_GROUPS, Dist, PAD_GROUPS, digit_groups, uniform};
use super::test::Test;
use crate::sql::sql::{Answer, Conn, DbError, DbErrorKind, Dialect, Param, Stmt};
use crate::workload::oltp::client::Client;
use crate::workload::rng::Rng;
use std::sync::Arc;

/// sysbench's buffer for multi-row INSERTs (`BULK_PACKET_SIZE`): prepare's load and
/// bulk_insert send a statement when the next row would not fit.
pub const BULK_BYTES: usize = 512 * 1024;

/// Re-runs of one event before its error counts (sysbench has no limit; a run that ignores
/// `all` errors and meets one that always comes back would never end).
const MAX_RESTARTS: u32 = 1000;

/// A statement not prepared on this connection (the test does not use it).
const NONE: Stmt = usize::MAX;

/// One table's statements, sysbench's `stmt_defs`.
#[derive(Debug, Clone, Copy)]
struct Statements {
    point: Stmt,
    simple: Stmt,
    sum: Stmt,
    order: Stmt,
    distinct: Stmt,
    index: Stmt,
    non_index: Stmt,
    delete: Stmt,
    insert: Stmt,
}

impl Statements {
    const NONE: Statements = Statements {
        point: NONE,
        simple: NONE,
        sum: NONE,
        order: NONE,
        distinct: NONE,
        index: NONE,
        non_index: NONE,
        delete: NONE,
        insert: NONE,
    };
}

/// What one event did to the rows and to k, until it is known to have happened.
#[derive(Debug, Default, Clone, Copy)]
struct Effect {
    rows: i64,
    k: i64,
    k_unknown: bool,
}

/// Queries by answer, and the errors ignored.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    reads: u64,
    writes: u64,
    other: u64,
    ignored: u64,
}

pub struct Sysbench {
    o: Arc<SysbenchOptions>,
    test: Test,
    rng: Rng,
    dist: Dist,
    /// This client's number (sysbench's thread id) and how many there are.
    worker: u32,
    workers: u32,
    dialect: Dialect,
    tables: Vec<Statements>,
    /// select_random_*'s one statement.
    one: Stmt,
    counts: Counts,
    /// The event in hand's effect on the rows (inside a transaction: until COMMIT).
    effect: Effect,
    /// Whether statements commit one by one (no BEGIN ... COMMIT around the event).
    autocommit: bool,
    books: Arc<Books>,
    // Scratch space, reused by every event.
    c: String,
    pad: String,
    sql: String,
    out: Vec<i64>,
    answer: Answer,
    params: Vec<Param<'static>>,
    /// bulk_insert: the last id given, and the INSERT being filled with its rows.
    bulk_id: u64,
    bulk: String,
    bulk_rows: u64,
}

impl Sysbench {
    /// Client `worker` of `workers`, its draws from `seed`.
    pub fn new(o: &Arc<SysbenchOptions>, worker: usize, workers: usize, seed: u64) -> Sysbench {
        Sysbench {
            o: Arc::clone(o),
            test: o.test,
            rng: Rng::new(seed),
            dist: Dist::new(&o.rand),
            worker: worker as u32,
            workers: workers.max(1) as u32,
            dialect: Dialect::Sqlite,
            tables: Vec::new(),
            one: NONE,
            counts: Counts::default(),
            effect: Effect::default(),
            autocommit: !o.test.transactional() || o.skip_trx,
            books: Arc::clone(&o.books),
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            sql: String::new(),
            out: Vec::new(),
            answer: Answer::default(),
            params: Vec::new(),
            bulk_id: 0,
            bulk: String::new(),
            bulk_rows: 0,
        }
    }

    /// `rand.default(1, table_size)`: an id, or a k.
    fn id(&mut self) -> i64 {
        i64::from(self.dist.draw(&mut self.rng, 1, self.o.table_size.max(1)))
    }

    /// `rand.uniform(1, tables)`: the table a group of statements works on (0-based).
    fn table(&mut self) -> usize {
        (uniform(&mut self.rng, 1, self.o.tables) - 1) as usize
    }

    /// The statements of the table a group of statements works on.
    fn pick(&mut self) -> Statements {
        let t = self.table();
        self.tables[t]
    }

    /// A query with a result set: a read, however many rows it returned.
    fn select(
        &mut self,
        conn: &mut dyn Conn,
        stmt: Stmt,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        conn.fetch(stmt, params, 0, &mut self.out)?;
        self.out.clear();
        self.counts.reads += 1;
        Ok(())
    }

    /// A statement that changes rows: a write if it changed any, else other.
    fn changed(&mut self, n: u64) {
        match n {
            0 => self.counts.other += 1,
            _ => self.counts.writes += 1,
        }
    }

    /// Rows and k changed by a statement: at once when it committed by itself, else with
    /// the event's COMMIT.
    fn did(&mut self, rows: i64, k: i64, k_unknown: bool) {
        match self.autocommit {
            true => self.books.add(rows, k, k_unknown),
            false => {
                self.effect.rows += rows;
                self.effect.k += k;
                self.effect.k_unknown |= k_unknown;
            }
        }
    }

    fn point_selects(&mut self, conn: &mut dyn Conn, count: u32) -> Result<(), DbError> {
        let st = self.pick();
        for _ in 0..count {
            let id = self.id();
            self.select(conn, st.point, &[Param::Int(id)])?;
        }
        Ok(())
    }

    fn ranges(
        &mut self,
        conn: &mut dyn Conn,
        which: fn(&Statements) -> Stmt,
        count: u32,
    ) -> Result<(), DbError> {
        let stmt = which(&self.pick());
        for _ in 0..count {
            let id = self.id();
            let end = id + i64::from(self.o.range_size) - 1;
            self.select(conn, stmt, &[Param::Int(id), Param::Int(end)])?;
        }
        Ok(())
    }

    fn index_updates(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let st = self.pick();
        for _ in 0..self.o.index_updates {
            let id = self.id();
            let n = conn.exec(st.index, &[id])?;
            self.changed(n);
            self.did(0, n as i64, false);
        }
        Ok(())
    }

    fn non_index_updates(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let st = self.pick();
        for _ in 0..self.o.non_index_updates {
            self.c.clear();
            digit_groups(&mut self.rng, C_GROUPS, &mut self.c);
            let id = self.id();
            self.answer.reset(false);
            conn.answer(
                st.non_index,
                &[Param::Text(&self.c), Param::Int(id)],
                &mut self.answer,
            )?;
            self.changed(self.answer.changed);
        }
        Ok(())
    }

    fn delete_inserts(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let st = self.pick();
        for _ in 0..self.o.delete_inserts {
            let id = self.id();
            let k = self.id();
            self.c.clear();
            digit_groups(&mut self.rng, C_GROUPS, &mut self.c);
            self.pad.clear();
            digit_groups(&mut self.rng, PAD_GROUPS, &mut self.pad);
            let gone = conn.exec(st.delete, &[id])?;
            self.changed(gone);
            self.did(-(gone as i64), 0, true);
            self.answer.reset(false);
            conn.answer(
                st.insert,
                &[
                    Param::Int(id),
                    Param::Int(k),
                    Param::Text(&self.c),
                    Param::Text(&self.pad),
                ],
                &mut self.answer,
            )?;
            let added = self.answer.changed;
            self.changed(added);
            self.did(added as i64, 0, true);
        }
        Ok(())
    }

    /// oltp_insert: one unprepared INSERT, its id as sysbench chooses it.
    fn insert(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let table = uniform(&mut self.rng, 1, self.o.tables);
        let k = self.id();
        self.c.clear();
        digit_groups(&mut self.rng, C_GROUPS, &mut self.c);
        self.pad.clear();
        digit_groups(&mut self.rng, PAD_GROUPS, &mut self.pad);
        self.sql.clear();
        use std::fmt::Write;
        // The server numbers the row: PostgreSQL's SERIAL and SQLite's rowid when the id is
        // left out, MySQL's AUTO_INCREMENT when it is 0.
        let _ = match (self.o.auto_inc, self.dialect) {
            (true, Dialect::Postgres | Dialect::Sqlite) => write!(
                self.sql,
                "INSERT INTO sbtest{table} (k, c, pad) VALUES ({k}, '{}', '{}')",
                self.c, self.pad
            ),
            (auto, _) => {
                let id = match auto {
                    true => 0,
                    // A 32-bit unsigned value as SQL's signed INTEGER.
                    false => i64::from(self.o.unique.next()) - (1 << 31),
                };
                write!(
                    self.sql,
                    "INSERT INTO sbtest{table} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                    self.c, self.pad
                )
            }
        };
        self.answer.reset(false);
        conn.simple(&self.sql, &mut self.answer)?;
        let added = self.answer.changed;
        self.changed(added);
        self.did(added as i64, 0, true);
        Ok(())
    }

    /// select_random_*: the bounds of this client's slice of k (`table_size / threads`
    /// each, as sysbench cuts it, in floating point).
    fn slice(&self) -> (u32, u32) {
        let len = f64::from(self.o.table_size) / f64::from(self.workers);
        let low = len * f64::from(self.worker % self.workers);
        (low as u32, (low + len) as u32)
    }

    fn random_points(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let (low, high) = self.slice();
        self.params.clear();
        for _ in 0..self.o.random_points {
            let v = self.dist.draw(&mut self.rng, low, high);
            self.params.push(Param::Int(i64::from(v)));
        }
        let params = std::mem::take(&mut self.params);
        let r = self.select(conn, self.one, &params);
        self.params = params;
        r
    }

    fn random_ranges(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let (low, high) = self.slice();
        self.params.clear();
        for _ in 0..self.o.number_of_ranges {
            let v = i64::from(self.dist.draw(&mut self.rng, low, high));
            self.params.push(Param::Int(v));
            self.params.push(Param::Int(v + i64::from(self.o.delta)));
        }
        let params = std::mem::take(&mut self.params);
        let r = self.select(conn, self.one, &params);
        self.params = params;
        r
    }

    /// bulk_insert: this event's row into the INSERT being filled, which is sent first if
    /// the row would not fit.
    fn bulk_row(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        self.bulk_id += 1;
        let row = format!("({0},{0})", self.bulk_id);
        if self.bulk_rows > 0 && self.bulk.len() + row.len() + 1 > BULK_BYTES {
            self.flush(conn)?;
        }
        if self.bulk_rows == 0 {
            self.bulk.clear();
            self.bulk
                .push_str(&format!("INSERT INTO sbtest{} VALUES", self.worker + 1));
        } else {
            self.bulk.push(',');
        }
        self.bulk.push_str(&row);
        self.bulk_rows += 1;
        Ok(())
    }

    /// Sends the multi-row INSERT filled so far.
    fn flush(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        if self.bulk_rows == 0 {
            return Ok(());
        }
        self.answer.reset(false);
        conn.simple(&self.bulk, &mut self.answer)?;
        self.bulk_rows = 0;
        let added = self.answer.changed;
        self.changed(added);
        self.books.add(added as i64, 0, true);
        Ok(())
    }

    /// One event of the test, from its first statement to its last.
    fn event(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let o = Arc::clone(&self.o);
        let trx = !self.autocommit;
        if trx {
            conn.begin(!self.test.reads_only())?;
            self.counts.other += 1;
        }
        match self.test {
            Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly => {
                if self.test != Test::OltpWriteOnly {
                    self.point_selects(conn, o.point_selects)?;
                    if o.range_selects {
                        self.ranges(conn, |s| s.simple, o.simple_ranges)?;
                        self.ranges(conn, |s| s.sum, o.sum_ranges)?;
                        self.ranges(conn, |s| s.order, o.order_ranges)?;
                        self.ranges(conn, |s| s.distinct, o.distinct_ranges)?;
                    }
                }
                if self.test != Test::OltpReadOnly {
                    self.index_updates(conn)?;
                    self.non_index_updates(conn)?;
                    self.delete_inserts(conn)?;
                }
            }
            Test::OltpPointSelect => self.point_selects(conn, 1)?,
            Test::OltpUpdateIndex => self.index_updates(conn)?,
            Test::OltpUpdateNonIndex => self.non_index_updates(conn)?,
            Test::OltpDelete => {
                let st = self.pick();
                let id = self.id();
                let gone = conn.exec(st.delete, &[id])?;
                self.changed(gone);
                self.did(-(gone as i64), 0, true);
            }
            Test::OltpInsert => self.insert(conn)?,
            Test::SelectRandomPoints => self.random_points(conn)?,
            Test::SelectRandomRanges => self.random_ranges(conn)?,
            Test::BulkInsert => self.bulk_row(conn)?,
        }
        if trx {
            conn.commit()?;
            self.counts.other += 1;
            let e = std::mem::take(&mut self.effect);
            self.books.add(e.rows, e.k, e.k_unknown);
        }
        Ok(())
    }

    /// Whether sysbench ignores this error and runs the event again.
    fn ignorable(&self, e: &DbError) -> bool {
        match e.kind {
            // The connection is gone or its state unknown: the session re-opens it.
            DbErrorKind::Broken
            | DbErrorKind::Protocol
            | DbErrorKind::TimedOut
            | DbErrorKind::Unsupported => false,
            _ => match self.dialect {
                Dialect::Mysql => mysql_code(&e.message).is_some_and(|c| self.o.ignored.ignores(c)),
                // sysbench's PostgreSQL driver: deadlock, serialization failure, unique
                // violation (perflab's conflicts, with a lock_timeout's lock not available).
                Dialect::Postgres | Dialect::Sqlite => e.kind == DbErrorKind::Conflict,
            },
        }
    }
}

/// The code of a MySQL error as perflab's client words it (`ERROR 1213 (40001): ...`).
pub fn mysql_code(message: &str) -> Option<u16> {
    let rest = message.strip_prefix("ERROR ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// sysbench's statement texts (`oltp_common.lua`), for table `t`.
fn statements(
    conn: &mut dyn Conn,
    test: Test,
    t: u32,
    o: &SysbenchOptions,
) -> Result<Statements, DbError> {
    let mut s = Statements::NONE;
    let reads = matches!(
        test,
        Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpPointSelect
    );
    let writes = matches!(test, Test::OltpReadWrite | Test::OltpWriteOnly);
    if reads {
        s.point = conn.prepare(&format!("SELECT c FROM sbtest{t} WHERE id=?"))?;
    }
    if reads && test != Test::OltpPointSelect && o.range_selects {
        s.simple = conn.prepare(&format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"))?;
        s.sum = conn.prepare(&format!(
            "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"
        ))?;
        s.order = conn.prepare(&format!(
            "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"
        ))?;
        s.distinct = conn.prepare(&format!(
            "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"
        ))?;
    }
    if writes || test == Test::OltpUpdateIndex {
        s.index = conn.prepare(&format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"))?;
    }
    if writes || test == Test::OltpUpdateNonIndex {
        s.non_index = conn.prepare(&format!("UPDATE sbtest{t} SET c=? WHERE id=?"))?;
    }
    if writes || test == Test::OltpDelete {
        s.delete = conn.prepare(&format!("DELETE FROM sbtest{t} WHERE id=?"))?;
    }
    if writes {
        s.insert = conn.prepare(&format!(
            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"
        ))?;
    }
    Ok(s)
}

/// `n` placeholders joined by `sep` around `each`: `k IN (?, ?, ?)`'s list.
fn repeated(each: &str, sep: &str, n: u32) -> String {
    vec![each; n as usize].join(sep)
}

impl Client for Sysbench {
    fn prepare(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        self.dialect = conn.dialect();
        self.tables.clear();
        match self.test {
            Test::SelectRandomPoints => {
                let list = repeated("?", ", ", self.o.random_points);
                self.one = conn.prepare(&format!(
                    "SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({list})"
                ))?;
            }
            Test::SelectRandomRanges => {
                let ors = repeated("k BETWEEN ? AND ?", " OR ", self.o.number_of_ranges);
                self.one = conn.prepare(&format!("SELECT count(k) FROM sbtest1 WHERE {ors}"))?;
            }
            Test::BulkInsert => {
                // Ids go on from the table's last (sysbench starts at 1 on the empty table
                // its prepare made; a step after the first, or a second run, carries on).
                let t = self.worker + 1;
                let last = conn
                    .query_row(&format!("SELECT max(id) FROM sbtest{t}"))?
                    .and_then(|r| r.first().copied())
                    .unwrap_or(0);
                self.bulk_id = self.bulk_id.max(last.max(0) as u64);
            }
            Test::OltpInsert => {}
            test => {
                for t in 1..=self.o.tables {
                    self.tables.push(statements(conn, test, t, &self.o)?);
                }
            }
        }
        Ok(())
    }

    fn draw(&mut self) -> &'static str {
        self.test.name()
    }

    fn run(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let mut restarts = 0;
        loop {
            self.effect = Effect::default();
            let e = match self.event(conn) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if !self.ignorable(&e) || restarts >= MAX_RESTARTS || conn.stop().is_set() {
                return Err(e);
            }
            // The server undid the transaction, or is told to (PostgreSQL's driver in
            // sysbench sends ROLLBACK; MySQL's lock wait timeout undoes only the statement).
            if !self.autocommit {
                conn.rollback();
            }
            self.counts.ignored += 1;
            restarts += 1;
        }
    }

    /// The session re-runs nothing: an error sysbench ignores was run again here.
    fn max_retries(&self) -> u32 {
        0
    }

    fn measuring(&mut self) {
        self.counts = Counts::default();
    }

    fn finish(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        // bulk_insert's last rows, as sysbench's thread_done sends them.
        self.flush(conn)
    }

    fn figures(&self) -> Vec<(&'static str, f64)> {
        let c = self.counts;
        vec![
            ("sb_reads_per_client", c.reads as f64),
            ("sb_writes_per_client", c.writes as f64),
            ("sb_other_per_client", c.other as f64),
            ("sb_ignored_errors_per_client", c.ignored as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_error_codes_are_read_from_the_message() {
        assert_eq!(
            mysql_code("ERROR 1213 (40001): Deadlock found when trying to get lock"),
            Some(1213)
        );
        assert_eq!(mysql_code("connection lost: reset"), None);
    }

    #[test]
    fn each_client_draws_from_its_own_slice_of_k() {
        let o = Arc::new(SysbenchOptions::new(Test::SelectRandomPoints));
        let slices: Vec<(u32, u32)> = (0..4).map(|w| Sysbench::new(&o, w, 4, 1).slice()).collect();
        assert_eq!(
            slices,
            [(0, 2500), (2500, 5000), (5000, 7500), (7500, 10000)]
        );
        let mut odd = SysbenchOptions::new(Test::SelectRandomPoints);
        odd.table_size = 10;
        let odd = Arc::new(odd);
        assert_eq!(Sysbench::new(&odd, 1, 3, 1).slice(), (3, 6));
    }

    #[test]
    fn placeholders_repeat_as_sysbench_writes_them() {
        assert_eq!(repeated("?", ", ", 3), "?, ?, ?");
        assert_eq!(
            repeated("k BETWEEN ? AND ?", " OR ", 2),
            "k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
    }
}
