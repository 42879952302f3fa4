//! DebitCredit on PostgreSQL, through the `postgres` crate (the extended protocol, statements
//! prepared once per connection).
//!
//! - Loading follows `pgbench -i -I dtGvp`: tables created, rows generated on the server
//!   (`generate_series`, no round trip per row), then `VACUUM ANALYZE`, then primary keys —
//!   indexes after the load.
//! - A transaction that fails with a serialization failure or a deadlock is retried and
//!   counted; a broken connection is re-opened with backoff and counted, and the transaction
//!   in flight is an error (its outcome is unknown).
//! - `--pg-set NAME=VALUE` sets server parameters per session (`SET`), e.g.
//!   `synchronous_commit=off`; the settings that decide durability and group commit are
//!   read back and recorded.
//! - Log flushes: `pg_stat_wal`'s `wal_write` and `wal_sync` and `pg_stat_database`'s commits
//!   are sampled around every measure phase.

use super::debitcredit::{ACCOUNTS_PER_SCALE, Books, TABLES, TELLERS_PER_SCALE, Txn};
use crate::workload::rng::Rng;
use crate::workload::{Figures, OpError, OpOutcome, Session};
use postgres::error::SqlState;
use postgres::{Client, NoTls, Statement};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Server settings recorded with every run: durability, group commit, the WAL.
pub const DISCLOSED: [&str; 10] = [
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
];
/// Retries of one transaction before it counts as failed.
const MAX_RETRIES: u32 = 100;
/// How long a client keeps trying to reconnect before the transaction in hand fails.
const RECONNECT_FOR: Duration = Duration::from_secs(10);
/// Longest wait between attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

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

fn err(e: postgres::Error) -> String {
    // The server's message when there is one (wrong password, missing database ...).
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// The connection settings: the URL, with the password from `PGPASSWORD` or `~/.pgpass`
/// when the URL has none (as libpq does; the `postgres` crate reads neither). The lookup is
/// the target module's, shared by every backend.
fn config(t: &PgTarget) -> Result<postgres::Config, String> {
    let mut cfg: postgres::Config = t
        .url
        .parse()
        .map_err(|e: postgres::Error| format!("bad URL: {e}"))?;
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

/// Connects and applies the session settings.
pub fn connect(t: &PgTarget) -> Result<Client, String> {
    let mut c = config(t)?.connect(NoTls).map_err(err)?;
    for (name, value) in &t.set {
        c.batch_execute(&format!(
            "SET {} = '{}'",
            ident(name)?,
            value.replace('\'', "''")
        ))
        .map_err(err)?;
    }
    Ok(c)
}

/// A parameter name as given, checked to be a plain identifier (it is spliced into SQL).
fn ident(name: &str) -> Result<&str, String> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        Ok(name)
    } else {
        Err(format!("--pg-set {name:?}: not a parameter name"))
    }
}

/// The recorded settings, as the server reports them for a session with `--pg-set` applied.
pub fn settings(c: &mut Client) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for name in DISCLOSED {
        let row = c.query_one(&format!("SHOW {name}"), &[]).map_err(err)?;
        out.insert(name.to_string(), row.get::<_, String>(0));
    }
    Ok(out)
}

/// Whether the bank's tables exist, and whether perflab made them.
pub fn existing(c: &mut Client) -> Result<(bool, bool), String> {
    let count = |c: &mut Client, names: &[&str]| -> Result<i64, String> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        c.query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)",
            &[&names],
        )
        .map(|r| r.get(0))
        .map_err(err)
    };
    Ok((count(c, &TABLES)? > 0, count(c, &["perflab_meta"])? > 0))
}

/// The scale of a bank perflab made, if there is one.
pub fn scale_of(c: &mut Client) -> Result<Option<u64>, String> {
    if !existing(c)?.1 {
        return Ok(None);
    }
    let row = c
        .query_one("SELECT value FROM perflab_meta WHERE key = 'scale'", &[])
        .map_err(err)?;
    Ok(row.get::<_, String>(0).parse().ok())
}

/// Creates and loads the bank (server-side generation, keys after the load).
pub fn prepare(t: &PgTarget, scale: u64, note: &dyn Fn(&str)) -> Result<(), String> {
    let mut c = connect(t)?;
    match existing(&mut c)? {
        (true, false) => {
            return Err(
                "the database already holds pgbench tables that perflab did not create; use another database, or drop them yourself"
                    .into(),
            );
        }
        (true, true) => drop_bank(&mut c)?,
        _ => {}
    }
    let started = Instant::now();
    let accounts = ACCOUNTS_PER_SCALE * scale;
    note(&format!(
        "prepare: generating scale {scale} ({accounts} accounts) on the server"
    ));
    c.batch_execute(
        "CREATE TABLE perflab_meta (key text PRIMARY KEY, value text);
         CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88));
         CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84));
         CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84));
         CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));",
    )
    .map_err(err)?;
    let s = scale as i64;
    c.execute(
        "INSERT INTO perflab_meta VALUES ('scale', $1::bigint::text), ('tables', $2)",
        &[&s, &TABLES.join(",")],
    )
    .map_err(err)?;
    c.execute(
        "INSERT INTO pgbench_branches (bid, bbalance) SELECT b, 0 FROM generate_series(1, $1::bigint) b",
        &[&s],
    )
    .map_err(err)?;
    c.execute(
        "INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT t, (t - 1) / $2::bigint + 1, 0 FROM generate_series(1, $1::bigint) t",
        &[&((TELLERS_PER_SCALE * scale) as i64), &(TELLERS_PER_SCALE as i64)],
    )
    .map_err(err)?;
    c.execute(
        "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT a, (a - 1) / $2::bigint + 1, 0, '' FROM generate_series(1, $1::bigint) a",
        &[&(accounts as i64), &(ACCOUNTS_PER_SCALE as i64)],
    )
    .map_err(err)?;
    note("prepare: vacuum, then primary keys");
    // VACUUM must run on its own: several statements in one batch form a transaction.
    c.batch_execute(
        "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history",
    )
    .map_err(err)?;
    c.batch_execute(
        "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
         ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
         ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid);",
    )
    .map_err(err)?;
    let secs = started.elapsed().as_secs_f64();
    note(&format!(
        "prepare: done in {secs:.1} s ({:.0} accounts/s)",
        accounts as f64 / secs.max(1e-9)
    ));
    Ok(())
}

/// Drops the tables perflab created (and only those).
pub fn drop_bank(c: &mut Client) -> Result<(), String> {
    if !existing(c)?.1 {
        return Ok(());
    }
    let listed: String = c
        .query_one("SELECT value FROM perflab_meta WHERE key = 'tables'", &[])
        .map_err(err)?
        .get(0);
    for t in listed.split(',').filter(|t| TABLES.contains(t)) {
        c.batch_execute(&format!("DROP TABLE IF EXISTS {t}"))
            .map_err(err)?;
    }
    c.batch_execute("DROP TABLE perflab_meta").map_err(err)
}

/// The four sums that must agree.
pub fn books(c: &mut Client) -> Result<Books, String> {
    let row = c
        .query_one(
            "SELECT (SELECT coalesce(sum(abalance), 0)::bigint FROM pgbench_accounts),
                    (SELECT coalesce(sum(tbalance), 0)::bigint FROM pgbench_tellers),
                    (SELECT coalesce(sum(bbalance), 0)::bigint FROM pgbench_branches),
                    (SELECT coalesce(sum(delta), 0)::bigint FROM pgbench_history)",
            &[],
        )
        .map_err(err)?;
    Ok(Books {
        accounts: row.get(0),
        tellers: row.get(1),
        branches: row.get(2),
        history: row.get(3),
    })
}

/// Cumulative server counters: WAL writes and syncs, commits.
pub fn counters(t: &PgTarget) -> Option<Vec<(String, f64)>> {
    let mut c = config(t).ok()?.connect(NoTls).ok()?;
    let mut out = Vec::new();
    if let Ok(r) = c.query_one(
        "SELECT wal_write::float8, wal_sync::float8, wal_records::float8 FROM pg_stat_wal",
        &[],
    ) {
        out.push(("wal_writes".into(), r.get::<_, f64>(0)));
        out.push(("wal_syncs".into(), r.get::<_, f64>(1)));
        out.push(("wal_records".into(), r.get::<_, f64>(2)));
    }
    if let Ok(r) = c.query_one(
        "SELECT xact_commit::float8 FROM pg_stat_database WHERE datname = current_database()",
        &[],
    ) {
        out.push(("server_commits".into(), r.get::<_, f64>(0)));
    }
    Some(out)
}

struct Prepared {
    account: Statement,
    select: Statement,
    teller: Statement,
    branch: Statement,
    history: Statement,
}

fn prepare_statements(c: &mut Client) -> Result<Prepared, postgres::Error> {
    Ok(Prepared {
        account: c.prepare("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2")?,
        select: c.prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1")?,
        teller: c.prepare("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2")?,
        branch: c.prepare("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2")?,
        history: c.prepare(
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
        )?,
    })
}

/// One client.
pub struct PgSession {
    target: PgTarget,
    client: Client,
    stmts: Prepared,
    rng: Rng,
    scale: u64,
    select_only: bool,
    retries: u64,
    reconnects: u64,
}

impl PgSession {
    pub fn open(t: &PgTarget, scale: u64, select_only: bool, seed: u64) -> Result<Self, OpError> {
        let mut client = connect(t).map_err(OpError)?;
        let stmts = prepare_statements(&mut client).map_err(|e| OpError(err(e)))?;
        Ok(PgSession {
            target: t.clone(),
            client,
            stmts,
            rng: Rng::new(seed),
            scale,
            select_only,
            retries: 0,
            reconnects: 0,
        })
    }

    fn transaction(&mut self, t: &Txn) -> Result<(), postgres::Error> {
        let (aid, bid, tid, delta) = (t.aid as i32, t.bid as i32, t.tid as i32, t.delta as i32);
        let s = &self.stmts;
        if self.select_only {
            self.client.query_one(&s.select, &[&aid])?;
            return Ok(());
        }
        let mut tx = self.client.transaction()?;
        tx.execute(&s.account, &[&delta, &aid])?;
        tx.query_one(&s.select, &[&aid])?;
        tx.execute(&s.teller, &[&delta, &tid])?;
        tx.execute(&s.branch, &[&delta, &bid])?;
        tx.execute(&s.history, &[&tid, &bid, &aid, &delta])?;
        tx.commit()
    }

    /// Re-opens a broken connection, waiting longer after each failure.
    fn reconnect(&mut self) -> Result<(), String> {
        let mut wait = Duration::from_millis(100);
        let deadline = Instant::now() + RECONNECT_FOR;
        loop {
            self.reconnects += 1;
            match connect(&self.target).and_then(|mut c| {
                let s = prepare_statements(&mut c).map_err(err)?;
                Ok((c, s))
            }) {
                Ok((c, s)) => {
                    self.client = c;
                    self.stmts = s;
                    return Ok(());
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

impl Session for PgSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let t = Txn::draw(&mut self.rng, self.scale);
        let mut tries = 0;
        loop {
            match self.transaction(&t) {
                Ok(()) => return Ok(OpOutcome { bytes: 0, items: 1 }),
                Err(e) if retryable(&e) && tries < MAX_RETRIES => {
                    tries += 1;
                    self.retries += 1;
                }
                Err(e) if self.client.is_closed() => {
                    let message = format!("connection lost: {}", err(e));
                    self.reconnect()
                        .map_err(|r| OpError(format!("{message}; reconnecting failed: {r}")))?;
                    return Err(OpError(message));
                }
                Err(e) => return Err(OpError(format!("transaction failed: {}", err(e)))),
            }
        }
    }

    fn finish(&mut self) -> Figures {
        let mut f = Figures::new();
        f.insert("retries_per_client".into(), self.retries as f64);
        f.insert("reconnects_per_client".into(), self.reconnects as f64);
        f
    }
}
