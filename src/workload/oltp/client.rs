//! One simulated user: a [`Client`] (the workload's transactions and random choices) on one
//! connection, as a [`Session`] the runner times.
//!
//! The session owns what every workload needs around a transaction: a conflict (serialization
//! failure, deadlock, busy database, duplicate key) rolls back and runs the same transaction
//! again, counted in `retries_per_client`; a broken connection is re-opened with backoff,
//! counted in `reconnects_per_client`, and the transaction in flight is an error (its outcome
//! is unknown) — the run goes on, and if the server stays away every op fails loudly.

use super::checks::Ledger;
use super::txlog::{Ended, Logged, TxLog};
use crate::record::ErrorKind as Kind;
use crate::sql::backend::Backend;
use crate::sql::counted::Counted;
use crate::sql::sql::{Conn, DbError, DbErrorKind, Dialect};
use crate::stop::Stop;
use crate::workload::{Figures, OpError, OpOutcome, Session};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Retries of one transaction before it counts as failed.
const MAX_RETRIES: u32 = 100;
/// How long a client keeps trying to reconnect before the transaction in hand fails.
const RECONNECT_FOR: Duration = Duration::from_secs(10);
/// Longest wait between attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A workload's side of one user.
pub trait Client: Send {
    /// Prepares the statements on a (new) connection.
    fn prepare(&mut self, conn: &mut dyn Conn) -> Result<(), DbError>;
    /// Draws the next transaction's inputs; returns its kind, for the per-type breakdown.
    fn draw(&mut self) -> &'static str;
    /// Runs the drawn transaction once, from begin to commit. On an error the caller rolls
    /// back, and may call again to retry the same transaction.
    fn run(&mut self, conn: &mut dyn Conn) -> Result<(), DbError>;
    /// Whether the user waits between transactions by its own rules ([`Client::pause`]).
    fn paces(&self) -> bool {
        false
    }
    /// After [`Client::draw`], how long the user waits before the drawn transaction
    /// starts (the last one's think time and this one's keying time).
    fn pause(&mut self) -> Duration {
        Duration::ZERO
    }
    /// How often a transaction that conflicted is run again before it counts as failed.
    fn max_retries(&self) -> u32 {
        MAX_RETRIES
    }
    /// Whether a conflict of this cause ([`conflict_cause`]) is retried at all.
    fn retries(&self, _cause: &str) -> bool {
        true
    }
    /// Which of the run's scripts the drawn transaction is (pgbench's script_no), for `-l`.
    fn script_index(&self) -> usize {
        0
    }
    /// The measure phase begins: figures kept by the client start again.
    fn measuring(&mut self) {}
    /// Figures by group the client keeps itself (a script's statements under `-r`).
    fn groups(&mut self) -> Vec<crate::workload::session::GroupTotals> {
        Vec::new()
    }
    /// The workload's own per-user counts, as `<name>_per_client` figures.
    fn figures(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// The step's work is over: what the user still holds goes to the server (sysbench's
    /// bulk_insert sends its last rows, as its `thread_done` does).
    fn finish(&mut self, _conn: &mut dyn Conn) -> Result<(), DbError> {
        Ok(())
    }
}

/// One client's side of pgbench's `-l` log.
struct TxLogging {
    log: Arc<TxLog>,
    client: u64,
    /// Transactions of the measure phase so far (pgbench's transaction_no).
    txns: u64,
    /// In the measure phase.
    on: bool,
    /// The sampling draw's state.
    sample: u64,
}

/// Why a transaction conflicted, from the engine's message: deadlocks and serialization
/// failures are told apart from lock timeouts, busy databases and duplicate keys.
pub fn conflict_cause(message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("deadlock") {
        "deadlock"
    } else if m.contains("serializ") || m.contains("40001") {
        "serialization"
    } else if m.contains("lock wait timeout") || m.contains("lock timeout") {
        "lock_timeout"
    } else if m.contains("duplicate") || m.contains("unique") {
        "duplicate_key"
    } else if m.contains("locked") || m.contains("busy") {
        "busy"
    } else {
        "other"
    }
}

pub struct OltpSession {
    backend: Arc<Backend>,
    /// The run's stop token, for every connection the session opens.
    stop: Stop,
    /// The connection, counting its statements (`statements_per_sec`).
    conn: Counted,
    /// Its count when the measure phase began.
    statements_at_start: u64,
    client: Box<dyn Client>,
    /// The shard this user works on (numbered from 1), when there are several.
    shard: Option<usize>,
    /// The type of the transaction last drawn.
    kind: &'static str,
    /// A transaction drawn ahead by [`Session::pace`], run by the next `execute`.
    drawn: Option<&'static str>,
    /// Conflicts retried, by transaction type and cause.
    conflicts: Vec<(&'static str, &'static str, u64)>,
    retries: u64,
    /// The last transaction's retries (for `-l`).
    last_tries: u64,
    reconnects: u64,
    /// Transactions that failed because a statement went unanswered for `--op-timeout`.
    timeouts: u64,
    /// Where commits and transactions of unknown outcome are counted, for the checks.
    ledger: Arc<Ledger>,
    /// `-C`: a new connection for every transaction, made between transactions (untimed,
    /// as pgbench leaves it out of the latency) and counted apart.
    connect_each: bool,
    /// `-l`: where and how this client logs its transactions.
    log: Option<TxLogging>,
    /// `-L`: transactions slower than this are counted as late.
    late_limit: Option<Duration>,
    late: u64,
    /// When the op about to run was due ([`Session::scheduled`]).
    due: Option<Instant>,
    /// Server sessions ended after their statement timed out.
    ended: u64,
    /// `--abort-on-error` (pgbench's rule): a transaction that fails for any cause but a
    /// serialization failure or a deadlock ends this client for the step.
    abort_on_error: bool,
    aborted: bool,
    connects: u64,
    connect_time: Duration,
}

impl OltpSession {
    pub fn open(
        backend: Arc<Backend>,
        mut client: Box<dyn Client>,
        shard: Option<usize>,
        ledger: Arc<Ledger>,
        stop: &Stop,
    ) -> Result<Self, OpError> {
        let mut conn = backend
            .connect_session(stop)
            .map_err(|e| OpError::db("", &e))?;
        client
            .prepare(&mut *conn)
            .map_err(|e| OpError::db("cannot prepare the statements", &e))?;
        Ok(OltpSession {
            backend,
            stop: stop.clone(),
            conn: Counted::new(conn, 0),
            statements_at_start: 0,
            client,
            shard,
            kind: "",
            drawn: None,
            conflicts: Vec::new(),
            retries: 0,
            last_tries: 0,
            reconnects: 0,
            timeouts: 0,
            ledger,
            connect_each: false,
            log: None,
            late_limit: None,
            late: 0,
            due: None,
            ended: 0,
            abort_on_error: false,
            aborted: false,
            connects: 0,
            connect_time: Duration::ZERO,
        })
    }

    /// `-L`: count the transactions slower than `limit`, as pgbench's latency limit.
    pub fn late_after(mut self, limit: Option<Duration>) -> Self {
        self.late_limit = limit;
        self
    }

    /// `--abort-on-error`: the client stops at its first failure that is not a
    /// serialization failure or a deadlock, as pgbench's does.
    pub fn abort_on_error(mut self, on: bool) -> Self {
        self.abort_on_error = on;
        self
    }

    /// `-C`: every transaction on a connection of its own.
    pub fn connect_each(mut self, on: bool) -> Self {
        self.connect_each = on;
        self
    }

    fn count_conflict(&mut self, kind: &'static str, cause: &'static str) {
        match self
            .conflicts
            .iter_mut()
            .find(|(k, c, _)| *k == kind && *c == cause)
        {
            Some(entry) => entry.2 += 1,
            None => self.conflicts.push((kind, cause, 1)),
        }
    }

    /// Ends the server's session `pid` (a connection given up after a timeout) from the
    /// new connection: `pg_terminate_backend` or `KILL`. Whether it was ended.
    fn end_session(&mut self, pid: i64) -> bool {
        let sql = match self.conn.dialect() {
            Dialect::Postgres => format!("SELECT pg_terminate_backend({pid})::int"),
            Dialect::Mysql => format!("KILL {pid}"),
            Dialect::Sqlite => return false,
        };
        match self.conn.dialect() {
            Dialect::Postgres => {
                matches!(self.conn.query_row(&sql), Ok(Some(v)) if v.first() == Some(&1))
            }
            _ => self.conn.batch(&sql).is_ok(),
        }
    }

    /// Re-opens a broken connection, waiting longer after each failure.
    fn reconnect(&mut self) -> Result<(), DbError> {
        // Not once the run is stopping: a new connection would start new work on the server.
        if self.stop.is_set() {
            return Err(DbError::other("the run is stopping (Ctrl-C)"));
        }
        let mut wait = Duration::from_millis(100);
        let deadline = Instant::now() + RECONNECT_FOR;
        loop {
            self.reconnects += 1;
            let attempt = self.backend.connect_session(&self.stop).and_then(|mut c| {
                self.client.prepare(&mut *c)?;
                Ok(c)
            });
            match attempt {
                Ok(c) => {
                    self.conn = Counted::new(c, self.conn.statements());
                    return Ok(());
                }
                // A refusal (a pooler that does not keep named statements) refuses again.
                Err(e) if Instant::now() >= deadline || e.kind == DbErrorKind::Unsupported => {
                    return Err(e);
                }
                Err(_) => {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

impl OltpSession {
    /// `-l`: every transaction of the measure phase in pgbench's log.
    pub fn log_to(mut self, log: Option<Arc<TxLog>>, client: u64, seed: u64) -> Self {
        self.log = log.map(|l| TxLogging {
            log: l,
            client,
            txns: 0,
            on: false,
            sample: seed | 1,
        });
        self
    }

    /// One transaction, retried on conflicts as the client allows.
    fn transaction(&mut self) -> Result<OpOutcome, OpError> {
        let kind = self.drawn.take().unwrap_or_else(|| self.client.draw());
        self.kind = kind;
        let mut tries = 0;
        self.last_tries = 0;
        loop {
            let e = match self.client.run(&mut self.conn) {
                Ok(()) => {
                    self.ledger.commit();
                    return Ok(OpOutcome {
                        bytes: 0,
                        items: 1,
                        kind,
                    });
                }
                Err(e) => e,
            };
            let lost = matches!(
                e.kind,
                DbErrorKind::TimedOut | DbErrorKind::Broken | DbErrorKind::Protocol
            ) || self.conn.is_broken();
            if lost {
                // The connection is given up (a timed-out statement may still run on the
                // server; its state is unknown). Lost after COMMIT of a transaction that
                // wrote was sent, the outcome is unknown: in doubt, and the checks allow
                // for exactly these. Lost before, the server rolls the transaction back.
                let doubt = self.conn.in_doubt();
                let (what, kind_of) = match e.kind {
                    DbErrorKind::TimedOut => {
                        self.timeouts += 1;
                        let limit = self.backend.op_timeout().unwrap_or_default();
                        (
                            format!("{kind} timed out: no answer within {limit:?} (--op-timeout)"),
                            Kind::Timeout,
                        )
                    }
                    DbErrorKind::Protocol => (format!("{kind}: {e}"), Kind::Protocol),
                    _ if e.message.starts_with("connection lost") => (e.message, Kind::Reset),
                    _ => (format!("connection lost: {e}"), Kind::Reset),
                };
                let (message, kind_of) = match doubt {
                    true => {
                        self.ledger.unknown();
                        (
                            format!("{what}, after COMMIT was sent: the outcome is unknown"),
                            Kind::InDoubt,
                        )
                    }
                    false => (what, kind_of),
                };
                // A statement that timed out may still run on the server, holding its
                // locks until TCP notices the connection gone: end its session there, so
                // the other clients are not held behind it.
                let stuck = match e.kind {
                    DbErrorKind::TimedOut => self.conn.server_pid(),
                    _ => None,
                };
                self.reconnect().map_err(|r| {
                    OpError::new(
                        Kind::Refused,
                        format!("{message}; reconnecting failed: {r}"),
                    )
                })?;
                if let Some(pid) = stuck
                    && self.end_session(pid)
                {
                    self.ended += 1;
                }
                return Err(OpError::new(kind_of, message));
            }
            self.conn.rollback();
            let cause = conflict_cause(&e.message);
            if e.kind == DbErrorKind::Conflict
                && tries < self.client.max_retries()
                && self.client.retries(cause)
            {
                tries += 1;
                self.last_tries = u64::from(tries);
                self.retries += 1;
                self.count_conflict(kind, cause);
                continue;
            }
            return Err(OpError::db(&format!("{kind} failed"), &e));
        }
    }

    /// How a transaction ended, for the log.
    fn ended(r: &Result<OpOutcome, OpError>, due: Instant) -> Ended<'static> {
        match r {
            Ok(_) => Ended::Done(due.elapsed()),
            Err(e) => Ended::Failed(match conflict_cause(&e.message) {
                c @ ("serialization" | "deadlock") => Some(c),
                _ => None,
            }),
        }
    }

    /// `-l`: the transaction's line in pgbench's log (measure phase only; sampled).
    fn log_transaction(
        &mut self,
        ended: Ended<'static>,
        due: Instant,
        started: Instant,
    ) -> Result<(), OpError> {
        let script = self.client.script_index();
        let Some(l) = &mut self.log else {
            return Ok(());
        };
        if !l.on {
            return Ok(());
        }
        l.txns += 1;
        // --sampling-rate: a share of the transactions, drawn per client.
        if l.log.sampling < 1.0 {
            l.sample ^= l.sample << 13;
            l.sample ^= l.sample >> 7;
            l.sample ^= l.sample << 17;
            if (l.sample >> 11) as f64 / (1u64 << 53) as f64 >= l.log.sampling {
                return Ok(());
            }
        }
        let lag = started.saturating_duration_since(due);
        l.log
            .write(&Logged {
                client: l.client,
                txn: l.txns,
                ended,
                script,
                at: SystemTime::now(),
                lag: Some(lag),
                retries: self.last_tries,
            })
            .map_err(OpError::other)
    }
}

impl Session for OltpSession {
    fn scheduled(&mut self, due: Instant) {
        self.due = Some(due);
    }

    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let started = Instant::now();
        let due = self.due.take().unwrap_or(started);
        let r = self.transaction();
        if let Err(e) = &r
            && self.abort_on_error
            && !matches!(conflict_cause(&e.message), "serialization" | "deadlock")
        {
            self.aborted = true;
        }
        if let Some(limit) = self.late_limit
            && r.is_ok()
            && due.elapsed() > limit
        {
            self.late += 1;
        }
        if self.log.is_some() {
            self.log_transaction(Self::ended(&r, due), due, started)?;
        }
        r
    }

    fn last_kind(&self) -> &'static str {
        self.kind
    }

    fn aborted(&self) -> bool {
        self.aborted
    }

    /// `-L` with `-R`: pgbench skips a transaction already later than the limit.
    fn skip_late(&self) -> Option<Duration> {
        self.late_limit
    }

    fn skipped(&mut self, due: Instant) {
        // The transaction drawn for this turn is not run: the next turn draws afresh.
        self.drawn = None;
        self.last_tries = 0;
        if self.log.is_some() {
            let _ = self.log_transaction(Ended::Skipped, due, Instant::now());
        }
    }

    fn paces(&self) -> bool {
        self.client.paces()
    }

    fn pace(&mut self) -> Duration {
        self.drawn = Some(self.client.draw());
        self.client.pause()
    }

    fn group(&self) -> Option<(&'static str, String)> {
        self.shard.map(|s| ("shard", s.to_string()))
    }

    fn measuring(&mut self) {
        if let Some(l) = &mut self.log {
            l.on = true;
        }
        self.late = 0;
        self.statements_at_start = self.conn.statements();
        self.client.measuring();
        self.connects = 0;
        self.connect_time = Duration::ZERO;
    }

    fn wants_between(&self) -> bool {
        self.connect_each
    }

    /// `-C`: the last transaction's connection closed, the next one's opened. A failure
    /// to connect leaves the old one broken, so the next transaction reconnects (counted
    /// in reconnects) or fails.
    fn between(&mut self) {
        let started = Instant::now();
        let opened = self.backend.connect_session(&self.stop).and_then(|mut c| {
            self.client.prepare(&mut *c)?;
            Ok(c)
        });
        if let Ok(c) = opened {
            self.conn = Counted::new(c, self.conn.statements());
            self.connects += 1;
            self.connect_time += started.elapsed();
        }
    }

    fn groups(&mut self) -> Vec<crate::workload::session::GroupTotals> {
        self.client.groups()
    }

    fn finish(&mut self) -> Figures {
        if let Some(l) = &mut self.log {
            l.log.flush();
            l.on = false;
        }
        let mut f = Figures::new();
        // Its failure shows here, and in the checks of what the server holds.
        if self.client.finish(&mut self.conn).is_err() {
            f.insert("finish_errors_per_client".into(), 1.0);
        }
        // Summed over the workers in `derive` (figures are averaged over them).
        f.insert(
            "statements".into(),
            (self.conn.statements() - self.statements_at_start) as f64,
        );
        f.insert("retries_per_client".into(), self.retries as f64);
        f.insert("reconnects_per_client".into(), self.reconnects as f64);
        f.insert("timeouts_per_client".into(), self.timeouts as f64);
        f.insert("sessions_ended_per_client".into(), self.ended as f64);
        if self.abort_on_error {
            // Averaged over the clients: the share of them that aborted.
            f.insert(
                "aborted_per_client".into(),
                f64::from(u8::from(self.aborted)),
            );
        }
        if self.late_limit.is_some() {
            f.insert("late_per_client".into(), self.late as f64);
        }
        if self.connect_each && self.connects > 0 {
            f.insert(
                "connect_ms_mean".into(),
                self.connect_time.as_secs_f64() * 1e3 / self.connects as f64,
            );
        }
        for (kind, cause, n) in &self.conflicts {
            let name = match kind.is_empty() {
                true => format!("conflicts_{cause}_per_client"),
                false => format!("conflicts_{kind}_{cause}_per_client"),
            };
            f.insert(name, *n as f64);
        }
        for (name, v) in self.client.figures() {
            f.insert(name.to_string(), v);
        }
        f
    }
}
