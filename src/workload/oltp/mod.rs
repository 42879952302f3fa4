//! OLTP on real databases: DebitCredit (TPC-B) today, on SQLite and PostgreSQL; MySQL/MariaDB
//! and order entry are being built (issue 4).
//!
//! - this file: [`OltpSpec`] and its [`Workload`] impl: one client per worker, each with its own
//!   connection; the bank is loaded before the first step and its books checked after every
//!   step ([`debitcredit::Books`]); a step whose books do not balance is an `inconsistent`
//!   warning, and the command exits 1.
//! - [`debitcredit`]: the transaction, pgbench's schema and scale, the books.
//! - [`sqlite`]: the embedded backend.
//! - [`postgres`]: PostgreSQL, with its WAL counters and durability settings.
//!
//! Log syncs beside throughput: the database file's block device is sampled around every
//! measure phase like an I/O test's, and `device_flushes_per_txn` and `device_writes_per_txn`
//! show how many flushes and writes each transaction cost — the figure that explains where
//! throughput stops growing (one log force per commit, or group commit).

pub mod debitcredit;
pub mod postgres;
pub mod sqlite;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Headline, StepResult, Trial, Warning};
use crate::spec::{Axis, StepPoint};
use postgres::{PgSession, PgTarget};
use serde::Serialize;
use sqlite::{SqliteSession, SqliteSettings};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What a command does with the bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phases {
    /// Load, run, drop (the default): a self-contained measurement.
    All,
    /// Run against a bank loaded earlier by `perflab oltp prepare`.
    Run,
}

#[derive(Debug, Clone, Serialize)]
pub struct OltpSpec {
    /// `debitcredit`.
    pub transaction: &'static str,
    /// The select-only variant (`pgbench -S`).
    pub select_only: bool,
    /// Branches; 100,000 accounts and 10 tellers each.
    pub scale: u64,
    /// The target, without secrets.
    pub target: String,
    /// SQLite's settings, when the target is SQLite.
    pub sqlite: Option<SqliteSettings>,
    /// The server's settings that decide durability and group commit, as it reported them.
    pub server_settings: BTreeMap<String, String>,
    pub phases: Phases,
    pub keep: bool,
    /// The database file.
    #[serde(skip)]
    pub path: PathBuf,
    /// The temporary directory perflab made for the database, removed afterwards.
    #[serde(skip)]
    pub temp_dir: Option<PathBuf>,
    /// PostgreSQL: how to connect (password included; never serialized).
    #[serde(skip)]
    pub pg: Option<PgTarget>,
}

impl OltpSpec {
    /// The four sums, from whichever database this is.
    fn books(&self) -> Result<debitcredit::Books, String> {
        match (&self.pg, &self.sqlite) {
            (Some(t), _) => postgres::connect(t).and_then(|mut c| postgres::books(&mut c)),
            (None, Some(s)) => sqlite::connect(&self.path, s)
                .map_err(|e| e.to_string())
                .and_then(|c| sqlite::books(&c)),
            (None, None) => Err("no database".into()),
        }
    }
}

/// Drops the tables (and the temporary directory) when the run ends.
struct Teardown {
    spec: OltpSpec,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        if self.spec.keep || self.spec.phases != Phases::All {
            return;
        }
        match (&self.spec.pg, &self.spec.sqlite) {
            (Some(t), _) => {
                if let Ok(mut c) = postgres::connect(t) {
                    let _ = postgres::drop_bank(&mut c);
                }
            }
            (None, Some(s)) => {
                if let Ok(conn) = sqlite::connect(&self.spec.path, s) {
                    let _ = sqlite::drop_bank(&conn);
                }
            }
            (None, None) => {}
        }
        if let Some(dir) = &self.spec.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Workload for OltpSpec {
    fn name(&self) -> &'static str {
        "oltp"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        Vec::new()
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "transactions".into(),
            higher_is_better: true,
        }
    }

    fn sessions(&self, _point: &StepPoint, seed: u64) -> Result<SessionFactory, OpError> {
        let (path, settings, pg) = (self.path.clone(), self.sqlite.clone(), self.pg.clone());
        let (scale, select_only) = (self.scale, self.select_only);
        Ok(Arc::new(move |worker, _| {
            let seed = seed ^ (worker as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            match (&pg, &settings) {
                (Some(t), _) => PgSession::open(t, scale, select_only, seed)
                    .map(|s| Box::new(s) as Box<dyn Session>),
                (None, Some(s)) => SqliteSession::open(&path, s, scale, select_only, seed)
                    .map(|s| Box::new(s) as Box<dyn Session>),
                (None, None) => Err(OpError("no database".into())),
            }
        }))
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        if trial.ops_per_sec > 0.0 && !trial.devices.is_empty() {
            let (flushes, writes) = trial.devices.iter().fold((0.0, 0.0), |(f, w), d| {
                (
                    f + d.activity.flushes_per_sec,
                    w + d.activity.writes_per_sec,
                )
            });
            trial
                .figures
                .insert("device_flushes_per_txn".into(), flushes / trial.ops_per_sec);
            trial
                .figures
                .insert("device_writes_per_txn".into(), writes / trial.ops_per_sec);
        }
        if trial.ops_per_sec > 0.0 {
            for (name, per_txn) in [
                ("wal_syncs_per_sec", "wal_syncs_per_txn"),
                ("wal_writes_per_sec", "wal_writes_per_txn"),
            ] {
                if let Some(&v) = trial.figures.get(name) {
                    trial.figures.insert(per_txn.into(), v / trial.ops_per_sec);
                }
            }
        }
    }

    fn server_counters(&self) -> Vec<(String, f64)> {
        self.pg
            .as_ref()
            .and_then(postgres::counters)
            .unwrap_or_default()
    }

    fn prepare(&self, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        if let Some(dir) = &self.temp_dir {
            std::fs::create_dir(dir)
                .map_err(|e| OpError(format!("cannot create {}: {e}", dir.display())))?;
        }
        // Tear down whatever this run made, even if loading fails halfway.
        let teardown = Teardown { spec: self.clone() };
        if self.phases == Phases::All {
            match (&self.pg, &self.sqlite) {
                (Some(t), _) => postgres::prepare(t, self.scale, note).map_err(OpError)?,
                (None, Some(s)) => {
                    sqlite::prepare(&self.path, s, self.scale, note).map_err(OpError)?
                }
                (None, None) => {}
            }
        }
        Ok(Box::new(teardown))
    }

    fn devices(&self) -> Vec<String> {
        if self.pg.is_some() {
            return Vec::new();
        }
        self.path
            .parent()
            .and_then(crate::env::disk::device_of)
            .map(|d| vec![d.name])
            .unwrap_or_default()
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        if self.select_only {
            return Vec::new();
        }
        match self.books() {
            Ok(b) if b.balanced() => Vec::new(),
            Ok(b) => vec![Warning {
                code: "inconsistent".into(),
                message: format!(
                    "INCONSISTENT after step {}: the books do not balance ({b}); the database lost or duplicated updates",
                    step.index
                ),
                step: Some(step.index),
            }],
            Err(e) => vec![Warning {
                code: "inconsistent".into(),
                message: format!(
                    "the consistency check after step {} could not run: {e}",
                    step.index
                ),
                step: Some(step.index),
            }],
        }
    }
}
