//! DebitCredit on SQLite (rusqlite, bundled): the embedded default, no server needed.
//!
//! Each client has its own connection. Writers take the database's write lock at `BEGIN
//! IMMEDIATE`, so two writers never deadlock on a lock upgrade; waiting for the lock is part
//! of the response time (`busy_timeout`), and a transaction that still finds it busy is rolled
//! back and retried, counted in the `retries` figure. The durability settings that decide how
//! often the log is synced (`journal_mode`, `synchronous`) are set on every connection and
//! recorded in the spec.
//!
//! Safety: perflab creates its tables only where none of that name exist, and records what it
//! created in a `perflab_meta` table; cleanup drops only tables listed there.

use super::debitcredit::{ACCOUNTS_PER_SCALE, Books, TABLES, TELLERS_PER_SCALE, Txn};
use crate::workload::rng::Rng;
use crate::workload::{OpError, OpOutcome, Session};
use rusqlite::{Connection, ErrorCode, params};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for the write lock before its transaction is retried.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// A transaction busy this many times in a row fails instead of retrying forever.
const MAX_RETRIES: u32 = 100;
/// Rows per insert statement batch while loading.
const LOAD_PROGRESS: u64 = 1_000_000;

/// The settings that decide durability and log syncs, as SQLite names them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SqliteSettings {
    /// `wal`, `delete`, `truncate`, `persist`, `memory` or `off`.
    pub journal_mode: String,
    /// `full`, `normal`, `off` or `extra`.
    pub synchronous: String,
}

impl SqliteSettings {
    pub const JOURNAL_MODES: [&'static str; 6] =
        ["wal", "delete", "truncate", "persist", "memory", "off"];
    pub const SYNCHRONOUS: [&'static str; 4] = ["full", "normal", "off", "extra"];
}

/// Opens a connection with the run's settings.
pub fn connect(path: &Path, s: &SqliteSettings) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The values were checked against the lists above, so they are plain keywords.
    conn.query_row(
        &format!("PRAGMA journal_mode = {}", s.journal_mode),
        [],
        |_| Ok(()),
    )?;
    conn.execute_batch(&format!("PRAGMA synchronous = {}", s.synchronous))?;
    Ok(conn)
}

/// Opens a database read-only, changing nothing (not even its journal mode): to look at a
/// file before deciding whether perflab may write to it.
pub fn inspect(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

fn err(e: rusqlite::Error) -> String {
    e.to_string()
}

/// Whether the bank's tables exist, and whether perflab made them.
pub fn existing(conn: &Connection) -> Result<(bool, bool), String> {
    let count = |name: &str| -> Result<i64, String> {
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get(0),
        )
        .map_err(err)
    };
    let any = TABLES
        .iter()
        .map(|t| count(t))
        .collect::<Result<Vec<_>, _>>()?
        .iter()
        .any(|&n| n > 0);
    Ok((any, count("perflab_meta")? > 0))
}

/// The scale of a bank perflab made, if there is one.
pub fn scale_of(conn: &Connection) -> Result<Option<u64>, String> {
    if !existing(conn)?.1 {
        return Ok(None);
    }
    conn.query_row(
        "SELECT value FROM perflab_meta WHERE key = 'scale'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|s| Some(s as u64))
    .map_err(err)
}

/// Creates and loads the bank: tables first, rows in one transaction, in key order.
/// Refuses if tables of the same names exist that perflab did not create.
pub fn prepare(
    path: &Path,
    settings: &SqliteSettings,
    scale: u64,
    note: &dyn Fn(&str),
) -> Result<(), String> {
    let mut conn = connect(path, settings).map_err(err)?;
    match existing(&conn)? {
        (true, false) => {
            return Err(format!(
                "{} already holds pgbench tables that perflab did not create; use another --target, or drop them yourself",
                path.display()
            ));
        }
        (true, true) => {
            drop_bank(&conn)?;
        }
        _ => {}
    }
    let started = Instant::now();
    let accounts = ACCOUNTS_PER_SCALE * scale;
    note(&format!(
        "prepare: loading scale {scale} ({accounts} accounts, {} tellers, {scale} branches) into {}",
        TELLERS_PER_SCALE * scale,
        path.display()
    ));
    let tx = conn.transaction().map_err(err)?;
    tx.execute_batch(
        "CREATE TABLE perflab_meta (key TEXT PRIMARY KEY, value);
         CREATE TABLE pgbench_branches (bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE pgbench_tellers (tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE pgbench_accounts (aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler TEXT);
         CREATE TABLE pgbench_history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime INTEGER, filler TEXT);",
    )
    .map_err(err)?;
    tx.execute(
        "INSERT INTO perflab_meta (key, value) VALUES ('scale', ?1), ('tables', ?2)",
        params![scale as i64, TABLES.join(",")],
    )
    .map_err(err)?;
    {
        let mut b = tx
            .prepare("INSERT INTO pgbench_branches (bid, bbalance) VALUES (?1, 0)")
            .map_err(err)?;
        for bid in 1..=scale {
            b.execute([bid as i64]).map_err(err)?;
        }
        let mut t = tx
            .prepare("INSERT INTO pgbench_tellers (tid, bid, tbalance) VALUES (?1, ?2, 0)")
            .map_err(err)?;
        for tid in 1..=TELLERS_PER_SCALE * scale {
            let bid = (tid - 1) / TELLERS_PER_SCALE + 1;
            t.execute([tid as i64, bid as i64]).map_err(err)?;
        }
        // pgbench pads accounts to about 100 bytes a row with an 84-character filler.
        let filler = " ".repeat(84);
        let mut a = tx
            .prepare(
                "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (?1, ?2, 0, ?3)",
            )
            .map_err(err)?;
        for aid in 1..=accounts {
            let bid = (aid - 1) / ACCOUNTS_PER_SCALE + 1;
            a.execute(params![aid as i64, bid as i64, filler])
                .map_err(err)?;
            if aid % LOAD_PROGRESS == 0 {
                note(&format!("prepare: {aid} of {accounts} accounts"));
            }
            if aid % 65_536 == 0 && crate::run::interrupt::is_interrupted() {
                return Err("interrupted while loading".into());
            }
        }
    }
    tx.commit().map_err(err)?;
    let secs = started.elapsed().as_secs_f64();
    note(&format!(
        "prepare: done in {secs:.1} s ({:.0} accounts/s)",
        accounts as f64 / secs.max(1e-9)
    ));
    Ok(())
}

/// Drops the tables perflab created (and only those).
pub fn drop_bank(conn: &Connection) -> Result<(), String> {
    if !existing(conn)?.1 {
        return Ok(());
    }
    let listed: String = conn
        .query_row(
            "SELECT value FROM perflab_meta WHERE key = 'tables'",
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    for t in listed.split(',').filter(|t| TABLES.contains(t)) {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {t}"))
            .map_err(err)?;
    }
    conn.execute_batch("DROP TABLE perflab_meta").map_err(err)
}

/// The four sums that must agree.
pub fn books(conn: &Connection) -> Result<Books, String> {
    let sum = |sql: &str| -> Result<i64, String> {
        conn.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .map(|v| v.unwrap_or(0))
            .map_err(err)
    };
    Ok(Books {
        accounts: sum("SELECT sum(abalance) FROM pgbench_accounts")?,
        tellers: sum("SELECT sum(tbalance) FROM pgbench_tellers")?,
        branches: sum("SELECT sum(bbalance) FROM pgbench_branches")?,
        history: sum("SELECT sum(delta) FROM pgbench_history")?,
    })
}

/// One client.
pub struct SqliteSession {
    conn: Connection,
    rng: Rng,
    scale: u64,
    select_only: bool,
    retries: u64,
}

impl SqliteSession {
    pub fn open(
        path: &Path,
        settings: &SqliteSettings,
        scale: u64,
        select_only: bool,
        seed: u64,
    ) -> Result<Self, OpError> {
        let conn = connect(path, settings)
            .map_err(|e| OpError(format!("cannot open {}: {e}", path.display())))?;
        Ok(SqliteSession {
            conn,
            rng: Rng::new(seed),
            scale,
            select_only,
            retries: 0,
        })
    }

    fn transaction(&mut self, t: &Txn) -> rusqlite::Result<()> {
        let c = &self.conn;
        if self.select_only {
            let mut s = c.prepare_cached("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?;
            let _: i64 = s.query_row([t.aid], |r| r.get(0))?;
            return Ok(());
        }
        c.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        let body = || -> rusqlite::Result<()> {
            c.prepare_cached(
                "UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2",
            )?
            .execute([t.delta, t.aid])?;
            let _: i64 = c
                .prepare_cached("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?
                .query_row([t.aid], |r| r.get(0))?;
            c.prepare_cached("UPDATE pgbench_tellers SET tbalance = tbalance + ?1 WHERE tid = ?2")?
                .execute([t.delta, t.tid])?;
            c.prepare_cached(
                "UPDATE pgbench_branches SET bbalance = bbalance + ?1 WHERE bid = ?2",
            )?
            .execute([t.delta, t.bid])?;
            c.prepare_cached(
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?1, ?2, ?3, ?4, strftime('%s','now'))",
            )?
            .execute([t.tid, t.bid, t.aid, t.delta])?;
            c.prepare_cached("COMMIT")?.execute([])?;
            Ok(())
        };
        let outcome = body();
        if outcome.is_err() && !c.is_autocommit() {
            let _ = c.execute_batch("ROLLBACK");
        }
        outcome
    }
}

fn busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

impl Session for SqliteSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let t = Txn::draw(&mut self.rng, self.scale);
        let mut tries = 0;
        loop {
            match self.transaction(&t) {
                Ok(()) => return Ok(OpOutcome { bytes: 0, items: 1 }),
                Err(e) if busy(&e) && tries < MAX_RETRIES => {
                    tries += 1;
                    self.retries += 1;
                }
                Err(e) => return Err(OpError(format!("transaction failed: {e}"))),
            }
        }
    }

    fn finish(&mut self) -> crate::workload::Figures {
        let mut f = crate::workload::Figures::new();
        f.insert("retries_per_client".into(), self.retries as f64);
        f
    }
}
