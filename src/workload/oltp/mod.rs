//! OLTP on real databases: DebitCredit (TPC-B) and order entry, on SQLite, PostgreSQL and
//! MySQL/MariaDB, each workload written once over a small connection interface.
//!
//! - this file: [`OltpSpec`] and its [`Workload`] impl: one client per worker, each with its
//!   own connection; the tables are loaded before the first step and checked after every step
//!   ([`checks`]: each check is written into the step, passed or not); a step that fails a
//!   check gets an `inconsistent` warning, and the command exits 1.
//! - [`mix`]: the workloads by name; [`debitcredit`], [`orderentry`] and [`tpcc`] (TPC-C-style
//!   order processing, in its own directory): schema, loading, transactions and checks of each.
//! - [`client`]: one user as a runner session: retries of conflicts, reconnects.
//! - [`shards`]: loading and clearing one shard of `--shards N`.
//!
//! The connection interface, the backends, schema helpers and shard databases are
//! [`crate::sql`]'s: scan and olap use them too.
//!
//! Why throughput stops growing, per step: the database's own log counters (PostgreSQL's
//! WAL writes and syncs, InnoDB's log writes and fsyncs, as `log_syncs_per_txn` and
//! `log_writes_per_txn`), the server's CPU when it runs here
//! (`server_cpu_per_txn`), and for SQLite the file's block device (`device_flushes_per_txn`):
//! one log force per commit, or group commit.

pub mod args;
pub mod balance;
pub mod checks;
pub mod client;
pub mod cmd;
pub mod debitcredit;
pub mod kind;
pub mod mix;
pub mod orderentry;
pub mod peer;
pub mod script;
pub mod shards;
pub mod sysbench;
pub mod tpcc;
pub mod txlog;

pub use kind::KIND;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Headline, StepResult, Trial, Warning, step_number};
use crate::sql::backend::{self, Backend};
use crate::sql::shard_db;
use crate::sql::sqlite::SqliteSettings;
use crate::stop::Stop;
use crate::vocab::Sweep;
use crate::vocab::{Axis, StepPoint};
use crate::workload::Context;
use crate::workload::phases::Phases;
use client::OltpSession;
pub use mix::Mix;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct OltpSpec {
    /// The transactions (`--workload`; `workload` in the record is the family, `oltp`).
    pub mix: Mix,
    /// Reads only: `pgbench -S` for DebitCredit, lookups only for order entry.
    pub select_only: bool,
    /// In the workload's units ([`Mix::unit`]).
    pub scale: u64,
    /// The target, without secrets (the first shard's, with several).
    pub target: String,
    /// What the connection's TLS verified (a server's; absent for SQLite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// How the sessions send their statements (`-M`); absent for SQLite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_mode: Option<crate::sql::query_mode::QueryMode>,
    /// With several shards, every shard's target, without secrets; user `i` works on shard
    /// `i % shards`, and each shard holds a whole database at `scale`.
    pub shards: Vec<String>,
    /// `--shards 1,2,4`: how many of the shards each step uses (the first N; users spread
    /// over those); absent when the shards do not sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards_in_play: Option<Sweep<u64>>,
    /// SQLite's settings, when the target is SQLite.
    pub sqlite: Option<SqliteSettings>,
    /// The server's settings that decide durability and group commit, as it reported them.
    pub server_settings: BTreeMap<String, String>,
    /// Who made the tables, when not perflab (`pgbench -i`): `oltp run` on a pgbench
    /// database works on its tables as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables_of: Option<String>,
    pub phases: Phases,
    pub keep: bool,
    /// How to connect to each shard (passwords included; never serialized).
    #[serde(skip)]
    pub backends: Vec<Arc<Backend>>,
    /// `--shards N` on one server: the databases perflab made or found for them.
    #[serde(skip)]
    pub shard_databases: Option<shard_db::ShardDatabases>,
    /// The temporary directory perflab made for the database, removed afterwards.
    #[serde(skip)]
    pub temp_dir: Option<PathBuf>,
    /// The commits the clients saw, for the checks after each step.
    #[serde(skip)]
    pub ledger: Arc<checks::Ledger>,
    /// TPC-C's mode, warehouses in play and NURand constants (`--workload tpcc` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<tpcc::TpccOptions>,
    /// sysbench's test and its options (`--workload oltp_read_write` and the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<Arc<sysbench::SysbenchOptions>>,
    /// pgbench scripts run instead of the workload's own transactions (`--script`,
    /// `--builtin`): their names and weights for the record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub script_names: Vec<String>,
    /// `-L`: transactions slower than this are counted as late (`late_per_client`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_limit: Option<std::time::Duration>,
    /// `-l`: pgbench's per-transaction log.
    #[serde(skip)]
    pub txlog: Option<Arc<txlog::TxLog>>,
    /// `-C`: a new connection for every transaction.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub connect_each: bool,
    /// A client stops at a failure other than a serialization failure or a deadlock
    /// (pgbench's rule; its dialect sets it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub abort_on_error: bool,
    /// The scripts themselves, shared by the clients.
    #[serde(skip)]
    pub scripts: Option<Arc<script::client::ScriptSet>>,
    /// Server settings given several values (`--set NAME=A,B`), each an axis `set.NAME`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<Sweep<String>>,
}

/// Drops the tables (and the temporary directory) when the run ends.
struct Teardown {
    spec: OltpSpec,
    /// The run's token: set when the run was interrupted, which bounds the cleanup's waits.
    stop: Stop,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        if !self.spec.keep && self.spec.phases == Phases::All {
            for (i, b) in self.spec.backends.iter().enumerate() {
                let dbs = self.spec.shard_databases.as_ref().map(|d| (d, i));
                let _ = shards::clear(b, dbs, &self.stop);
            }
        }
        if let Some(dir) = &self.spec.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Workload for OltpSpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        match self
            .backends
            .iter()
            .any(|b| matches!(b.as_ref(), backend::Backend::Sqlite { .. }))
        {
            // Every rank would open its own file: one run over ranks needs one server.
            true => crate::workload::ScaleOut::Unsupported(
                "SQLite is a file on one host; give a postgres:// or mysql:// --target",
            ),
            false => crate::workload::ScaleOut::SharedTarget,
        }
    }

    fn name(&self) -> &'static str {
        "oltp"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn settings(&self) -> Vec<crate::record::Setting> {
        use crate::record::Setting;
        let mut s = vec![Setting::new(
            "workload",
            match (self.select_only, self.script_names.is_empty()) {
                (_, false) => format!("scripts: {}", self.script_names.join(", ")),
                (true, true) => format!("{} (select only)", self.mix.name()),
                (false, true) => self.mix.name().to_string(),
            },
        )];
        match &self.sysbench {
            Some(o) => s = o.settings(),
            None => s.push(Setting::new("scale", self.scale.to_string())),
        }
        if let Some(by) = &self.tables_of {
            s.push(Setting::new("tables", format!("{by}'s")));
        }
        if self.shards.len() > 1 {
            s.push(Setting::new("shards", self.shards.len().to_string()));
        }
        if let Some(tls) = &self.tls {
            s.push(Setting::new("tls", tls));
        }
        if let Some(mode) = self.query_mode {
            let mysql = matches!(
                self.backends.first().map(|b| b.as_ref()),
                Some(Backend::Mysql(_))
            );
            s.push(Setting::new("query mode", mode.describe(mysql)));
        }
        // The server and what decides its durability and group commit, as it reported them.
        for key in [
            "server_version",
            "version",
            "synchronous_commit",
            "fsync",
            "shared_buffers",
            "wal_sync_method",
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "innodb_buffer_pool_size",
        ] {
            if let Some(v) = self.server_settings.get(key) {
                s.push(Setting::new(key, v));
            }
        }
        if let Some(q) = &self.sqlite
            && let Ok(serde_json::Value::Object(m)) = serde_json::to_value(q)
        {
            for (k, v) in m {
                let text = v.as_str().map_or_else(|| v.to_string(), String::from);
                s.push(Setting::new(&format!("sqlite {k}"), text));
            }
        }
        for set in &self.set {
            s.push(Setting::new(set.name(), set.text(String::clone)));
        }
        s
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        let mut axes: Vec<&dyn Axis> = match &self.tpcc {
            // Spec mode sweeps terminals (ten per warehouse) on the threads axis instead.
            Some(t) if t.mode == tpcc::Mode::Throughput => vec![&t.warehouses],
            _ => Vec::new(),
        };
        if let Some(n) = &self.shards_in_play {
            axes.push(n);
        }
        axes.extend(self.set.iter().map(|s| s as &dyn Axis));
        axes
    }

    fn headline(&self) -> Headline {
        match self.tpcc {
            Some(_) => Headline {
                metric: "nopm".into(),
                op_name: "transactions".into(),
                higher_is_better: true,
            },
            None => Headline {
                metric: "ops_per_sec".into(),
                op_name: "transactions".into(),
                higher_is_better: true,
            },
        }
    }

    fn run_warnings(&self, _cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        match &self.tpcc {
            Some(t) if t.mode == tpcc::Mode::Spec && t.wait_factor != 1.0 => vec![Warning {
                code: "not_spec_waits".into(),
                message: format!(
                    "keying and think times are {}x the specification's (--wait-factor): the run is not valid by its rules",
                    t.wait_factor
                ),
                step: None,
            }],
            _ => Vec::new(),
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        // The step's values of the swept settings, on every shard.
        let mut backends: Vec<Arc<Backend>> = match self.set.is_empty() {
            true => self.backends.clone(),
            false => (self.backends.iter())
                .map(|b| Arc::new(b.at_step(&self.set, point)))
                .collect(),
        };
        // `--shards 1,2,4`: the step's first N shards (all were prepared).
        if let Some(n) = &self.shards_in_play {
            backends.truncate((n.at(point) as usize).max(1));
        }
        let stop = ctx.stop.clone();
        let (mix, scale, select_only) = (self.mix, self.scale, self.select_only);
        let ledger = Arc::clone(&self.ledger);
        let tpcc = self.tpcc.clone();
        let scripts = self.scripts.clone();
        let sysbench = self.sysbench.clone();
        let connect_each = self.connect_each;
        let abort_on_error = self.abort_on_error;
        let txlog = self.txlog.clone();
        let late_limit = self.latency_limit;
        let in_play = tpcc.as_ref().map(|t| t.warehouses.at(point));
        Ok(Arc::new(move |worker, workers| {
            let seed = seed ^ (worker as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            // Application partitioning: each user works on the shard that owns its keys.
            let shard = worker % backends.len().max(1);
            let label = (backends.len() > 1).then_some(shard + 1);
            let backend = backends
                .get(shard)
                .ok_or_else(|| OpError::other("no database"))?;
            let client = match (&tpcc, &scripts) {
                (_, Some(set)) => Box::new(script::client::ScriptClient::new(
                    Arc::clone(set),
                    worker as u64,
                    workers,
                )) as Box<dyn client::Client>,
                (Some(t), None) => {
                    let warehouses = match t.mode {
                        tpcc::Mode::Spec => workers as u64 / tpcc::TERMINALS_PER_WAREHOUSE,
                        tpcc::Mode::Throughput => in_play.unwrap_or(scale),
                    };
                    Box::new(tpcc::Tpcc::new(t, warehouses, worker as u64, seed))
                        as Box<dyn client::Client>
                }
                (None, None) if let Some(o) = &sysbench => {
                    Box::new(sysbench::client::Sysbench::new(o, worker, workers, seed))
                        as Box<dyn client::Client>
                }
                (None, None) => mix
                    .client(scale, select_only, seed)
                    .ok_or_else(|| OpError::other(format!("{} needs its options", mix.name())))?,
            };
            OltpSession::open(
                Arc::clone(backend),
                client,
                label,
                Arc::clone(&ledger),
                &stop,
            )
            .map(|s| {
                let s = s
                    .connect_each(connect_each)
                    .abort_on_error(abort_on_error)
                    .late_after(late_limit)
                    .log_to(txlog.clone(), worker as u64, seed);
                Box::new(s) as Box<dyn Session>
            })
        }))
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        // Every client is done: `--aggregate-interval`'s open interval is written.
        if let Some(log) = &self.txlog {
            log.end_step();
        }
        if let Some(t) = &self.tpcc {
            tpcc::figures::derive(t, point, trial);
        }
        if let Some(o) = &self.sysbench {
            sysbench::figures::derive(o.percentile, trial);
        }
        // Statements: each worker's count over the measure phase, averaged like every
        // session figure; the step's total is the mean times the workers.
        if let Some(per_worker) = trial.figures.remove("statements") {
            let seconds = trial.elapsed_ns as f64 / 1e9;
            if seconds > 0.0 {
                let per_sec = per_worker * trial.workers as f64 / seconds;
                trial.figures.insert("statements_per_sec".into(), per_sec);
                if trial.ops_per_sec > 0.0 {
                    let per_txn = per_sec / trial.ops_per_sec;
                    trial.figures.insert("statements_per_txn".into(), per_txn);
                }
            }
        }
        let tps = trial.ops_per_sec;
        if tps <= 0.0 {
            return;
        }
        if !trial.devices.is_empty() {
            let (flushes, writes) = trial.devices.iter().fold((0.0, 0.0), |(f, w), d| {
                (
                    f + d.activity.flushes_per_sec,
                    w + d.activity.writes_per_sec,
                )
            });
            trial
                .figures
                .insert("device_flushes_per_txn".into(), flushes / tps);
            trial
                .figures
                .insert("device_writes_per_txn".into(), writes / tps);
        }
        // The server's counters per transaction. Of the rates, only log syncs per second
        // stay beside tps (the log-force ceiling); the others say more per transaction.
        for (rate, per_txn, factor, keep_rate) in [
            ("log_syncs_per_sec", "log_syncs_per_txn", 1.0, true),
            ("log_writes_per_sec", "log_writes_per_txn", 1.0, false),
            ("log_bytes_per_sec", "log_bytes_per_txn", 1.0, false),
            ("log_records_per_sec", "", 1.0, false),
            ("server_commits_per_sec", "", 1.0, false),
            ("data_syncs_per_sec", "data_syncs_per_txn", 1.0, false),
            ("server_cpu_per_sec", "server_cpu_us_per_txn", 1e6, false),
            ("binlog_commits_per_sec", "", 1.0, false),
            (
                "binlog_group_commits_per_sec",
                "binlog_group_commits_per_txn",
                1.0,
                false,
            ),
        ] {
            let Some(v) = (if keep_rate {
                trial.figures.get(rate).copied()
            } else {
                trial.figures.remove(rate)
            }) else {
                continue;
            };
            // The binary log's figures are zero when it is off: no news.
            if !(per_txn.is_empty() || v == 0.0 && rate.starts_with("binlog")) {
                trial.figures.insert(per_txn.into(), v * factor / tps);
            }
        }
    }

    fn server_counters(&self, ctx: &Context) -> Vec<(String, f64)> {
        // Cumulative counters add up over shards; the CPU of the servers on this machine is
        // read once, whichever shard asked.
        // The log counters are the whole server's (pg_stat_wal, GLOBAL STATUS): several
        // databases of one server as shards are read once.
        let mut sum: BTreeMap<String, f64> = BTreeMap::new();
        let mut cpu_read = false;
        let mut servers = std::collections::BTreeSet::new();
        for b in &self.backends {
            if let Some(key) = b.server_key()
                && !servers.insert(key)
            {
                continue;
            }
            for (name, v) in b.counters(!cpu_read, &ctx.stop) {
                cpu_read |= name == "server_cpu";
                *sum.entry(name).or_default() += v;
            }
        }
        sum.into_iter().collect()
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        if let Some(dir) = &self.temp_dir {
            std::fs::create_dir(dir)
                .map_err(|e| OpError::other(format!("cannot create {}: {e}", dir.display())))?;
        }
        // Tear down whatever this run made, even if loading fails halfway.
        let mut spec = self.clone();
        if self.phases == Phases::All
            && let Some(dbs) = &mut spec.shard_databases
        {
            dbs.created = shard_db::ensure(&dbs.creator, &dbs.names, &ctx.stop)
                .map_err(|e| OpError::other(format!("cannot create the shard databases: {e}")))?;
        }
        let teardown = Teardown {
            spec,
            stop: ctx.stop.clone(),
        };
        let created = |i: usize| {
            teardown
                .spec
                .shard_databases
                .as_ref()
                .is_some_and(|d| d.names.get(i).is_some_and(|n| d.created.contains(n)))
        };
        if self.phases == Phases::All {
            for (i, b) in self.backends.iter().enumerate() {
                if self.backends.len() > 1 {
                    note(&format!(
                        "prepare: shard {} of {}",
                        i + 1,
                        self.backends.len()
                    ));
                }
                let mut c = b.connect(&ctx.stop).map_err(|e| OpError::db("", &e))?;
                let constants = self.tpcc.as_ref().map(|t| t.constants).unwrap_or_default();
                match &self.sysbench {
                    Some(o) => sysbench::schema::prepare(&mut *c, o, o.seed, note),
                    None => {
                        shards::load(&mut *c, self.mix, self.scale, note, created(i), &constants)
                    }
                }
                .map_err(|e| OpError::db("loading failed", &e))?;
            }
        }
        checks::baseline(self, &ctx.stop, note).map_err(OpError::other)?;
        Ok(Box::new(teardown))
    }

    fn devices(&self) -> Vec<String> {
        let mut all: Vec<String> = self.backends.iter().flat_map(|b| b.devices()).collect();
        all.sort();
        all.dedup();
        all
    }

    fn finish_step(&self, step: &mut StepResult, ctx: &Context) {
        step.checks = checks::after_step(self, &ctx.stop);
        if let Some(t) = &self.tpcc {
            step.checks.extend(tpcc::figures::step_checks(t, step));
        }
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        step.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| {
                if let Some(w) = tpcc::figures::warning(c, step.index) {
                    return w;
                }
                let shard = c.shard.map(|s| format!(" on shard {s}")).unwrap_or_default();
                // A check that could not run proves nothing either way: a warning of its
                // own, not a claim that the books are wrong.
                let (code, message) = if c.summary.starts_with("could not run") {
                    (
                        "check_not_run",
                        format!(
                            "the consistency check after step {}{shard} {}; the database's consistency is not known",
                            step_number(step.index),
                            c.summary
                        ),
                    )
                } else {
                    (
                        "inconsistent",
                        format!(
                            "INCONSISTENT after step {}{shard}: {}; the database lost or duplicated updates",
                            step_number(step.index),
                            c.summary
                        ),
                    )
                };
                Warning {
                    code: code.into(),
                    message,
                    step: Some(step.index),
                }
            })
            .collect()
    }
}
