//! Scans: Gray's scan study (tables of 10 B, 100 B, 1 KB and 8 KB rows, a trivial and a
//! complex predicate, cold and warm) on SQLite, PostgreSQL and MySQL/MariaDB, and perflab's
//! own scan of the same rows in memory: the native ceiling.
//!
//! - this file: [`ScanSpec`] and its [`Workload`] impl. One op is one whole scan (one query);
//!   its items are the table's rows and its bytes the table's size as the engine stores it,
//!   so the runner's items/s and bytes/s are rows/s and MB/s. Steps sweep the table, the
//!   predicate, cold or warm, any `--set` server setting given several values, and clients.
//! - [`tables`]: the four tables, their rows and how they are loaded; [`load`]: loading them
//!   through [`crate::sql::schema`] (`perflab_meta`, drop only what perflab made).
//! - [`predicate`]: the queries on each engine and the answers they must give.
//! - [`session`]: one client's connection and scans, cold or warm; [`server`]: plans, table
//!   and cache sizes, the server's page counters.
//! - [`native`]: the native ceiling. It runs as its own run (target `native`) before the
//!   engine's, with the same tables, predicates and thread counts plus `read` (every byte,
//!   no predicate); the engine's run then sets each step against it (`native_pct`).
//!
//! The connection, URLs, passwords, TLS, `--set` and the safety rules are [`crate::sql`]'s,
//! which oltp and olap use too: one connection interface for every database workload.

pub mod args;
pub mod balance;
pub mod cmd;
pub mod kind;
pub mod load;
pub mod native;
pub mod predicate;
pub mod present;
pub mod server;
pub mod session;
pub mod tables;

pub use kind::KIND;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Check, Headline, StepResult, Trial, Warning, step_number};
use crate::sql::backend::Backend;
use crate::sql::sqlite::SqliteSettings;
use crate::stop::Stop;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use crate::workload::phases::Phases;
use native::{NativeSession, NativeTable};
use predicate::Predicate;
use serde::Serialize;
use session::{ScanQuery, ScanSession};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tables::{ScanTable, TableSize};

/// Whether a scan starts with the table in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cache {
    Cold,
    Warm,
}

impl Cache {
    pub fn parse(word: &str) -> Option<Cache> {
        match word.trim().to_ascii_lowercase().as_str() {
            "cold" => Some(Cache::Cold),
            "warm" => Some(Cache::Warm),
            _ => None,
        }
    }
}

/// Below this share of pages from storage, a cold step on a server was served from its cache.
const COLD_MIN_READ_PCT: f64 = 10.0;
/// How far above the read bandwidth over the same bytes a native trivial scan may measure
/// before its check fails (both are timed over a few seconds on a shared machine).
const READ_TOLERANCE: f64 = 1.05;

/// Native ceilings by table, predicate and threads: rows/s.
pub type Ceilings = BTreeMap<(ScanTable, Predicate, u64), f64>;

#[derive(Debug, Clone, Serialize)]
pub struct ScanSpec {
    /// `native`, or the database without secrets.
    pub target: String,
    /// How the sessions send their statements (`-M`); absent for SQLite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_mode: Option<crate::sql::query_mode::QueryMode>,
    pub table: Sweep<ScanTable>,
    pub predicate: Sweep<Predicate>,
    pub cache: Sweep<Cache>,
    /// Server settings given several values (`--set NAME=1,2`), each an axis `set.NAME`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<Sweep<String>>,
    /// How big each table is (`--size` or `--rows`).
    pub size: TableSize,
    /// SQLite's settings, when the target is SQLite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<SqliteSettings>,
    /// The server's settings as it reported them, its cache among them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub server_settings: BTreeMap<String, String>,
    /// The server's cache in bytes, for the cold-or-warm judgement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cache_bytes: Option<u64>,
    pub phases: Phases,
    pub keep: bool,
    /// The native ceiling's run, whose rows/s each step is set against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_run: Option<String>,
    /// The database (None: the native ceiling).
    #[serde(skip)]
    pub backend: Option<Arc<Backend>>,
    /// The temporary directory perflab made for the SQLite file, removed afterwards.
    #[serde(skip)]
    pub temp_dir: Option<PathBuf>,
    /// The native ceiling's rows/s, from its run.
    #[serde(skip)]
    pub ceilings: Ceilings,
    #[serde(skip)]
    state: Arc<Mutex<State>>,
}

/// What one step leaves for the next call of the runner on the same step (plan, checks) or
/// for later steps (sizes, the native rows, the read bandwidth).
#[derive(Default)]
struct State {
    native: Option<Arc<NativeTable>>,
    table_bytes: BTreeMap<ScanTable, u64>,
    plan: Option<String>,
    /// The native `read` rows/s by table and threads, for the trivial scan's check.
    read: BTreeMap<(ScanTable, u64), f64>,
    checks: Vec<Check>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").finish_non_exhaustive()
    }
}

impl ScanSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        target: String,
        table: Sweep<ScanTable>,
        predicate: Sweep<Predicate>,
        cache: Sweep<Cache>,
        set: Vec<Sweep<String>>,
        size: TableSize,
        backend: Option<Arc<Backend>>,
        phases: Phases,
    ) -> ScanSpec {
        ScanSpec {
            target,
            query_mode: None,
            table,
            predicate,
            cache,
            set,
            size,
            sqlite: None,
            server_settings: BTreeMap::new(),
            server_cache_bytes: None,
            phases,
            keep: false,
            native_run: None,
            backend,
            temp_dir: None,
            ceilings: Ceilings::new(),
            state: Arc::default(),
        }
    }

    /// The native ceiling for the same tables and predicates (plus `read`), at the same
    /// size.
    pub fn native(&self) -> ScanSpec {
        let mut predicates = vec![Predicate::Read];
        predicates.extend(self.predicate.values().iter().copied());
        ScanSpec::new(
            "native".into(),
            self.table.clone(),
            Sweep::list("predicate", predicates),
            Sweep::single("cache", Cache::Warm),
            Vec::new(),
            self.size,
            None,
            Phases::All,
        )
    }

    fn is_native(&self) -> bool {
        self.backend.is_none()
    }

    /// The database with the step's values of the swept settings added to `--set`'s.
    fn step_backend(&self, point: &StepPoint) -> Option<Arc<Backend>> {
        let b = self.backend.as_ref()?;
        Some(match self.set.is_empty() {
            true => Arc::clone(b),
            false => Arc::new(b.at_step(&self.set, point)),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The rows of one table.
    fn rows(&self, table: ScanTable) -> u64 {
        self.size.rows(table)
    }

    fn native_sessions(&self, point: &StepPoint) -> Result<SessionFactory, OpError> {
        let table = self.table.at(point);
        let predicate = self.predicate.at(point);
        let native = {
            let mut state = self.state();
            match &state.native {
                Some(n) if n.table == table => Arc::clone(n),
                _ => {
                    // One table at a time: the last one's memory goes first.
                    state.native = None;
                    let n = Arc::new(NativeTable::build(table, self.rows(table))?);
                    state.native = Some(Arc::clone(&n));
                    n
                }
            }
        };
        Ok(Arc::new(move |_, _| {
            Ok(Box::new(NativeSession::new(Arc::clone(&native), predicate)) as Box<dyn Session>)
        }))
    }

    fn database_sessions(
        &self,
        backend: Arc<Backend>,
        point: &StepPoint,
        stop: &Stop,
    ) -> Result<SessionFactory, OpError> {
        let table = self.table.at(point);
        let predicate = self.predicate.at(point);
        let mut conn = backend
            .connect_session(stop)
            .map_err(|e| OpError::db("", &e))?;
        let sql = predicate.sql(table, conn.dialect()).ok_or_else(|| {
            OpError::other(format!("{} is the native ceiling's own", predicate.name()))
        })?;
        let known = self.state().table_bytes.get(&table).copied();
        let table_bytes = match known {
            Some(b) => b,
            None => {
                let b = server::table_bytes(&mut *conn, table).map_err(|e| OpError::db("", &e))?;
                self.state().table_bytes.insert(table, b);
                b
            }
        };
        // The plan with the step's settings: a parallel plan shows here.
        let (plan, _) = server::plan(&mut *conn, &sql).map_err(|e| OpError::db("", &e))?;
        self.state().plan = Some(plan);
        let query = ScanQuery {
            predicate,
            sql,
            rows: self.rows(table),
            table_bytes,
            cold: self.cache.at(point) == Cache::Cold,
            warm_up: false,
        };
        let stop = stop.clone();
        Ok(Arc::new(move |worker, _| {
            // One warming scan fills the cache the clients share (the server's, the OS's);
            // the other clients wait for it in the setup phase.
            let mut query = query.clone();
            query.warm_up = worker == 0;
            ScanSession::open(Arc::clone(&backend), query, &stop)
                .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }
}

/// Drops the tables (and the temporary directory) when the run ends.
struct Teardown {
    backend: Option<Arc<Backend>>,
    drop_tables: bool,
    temp_dir: Option<PathBuf>,
    /// The run's token: set after Ctrl-C, which bounds the drop's waits.
    stop: Stop,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        // Not bounded by the op timeout: a scan the run gave up on may hold its table until
        // the server has stopped it, and the drop must wait for that rather than fail
        // (which left the tables behind on a loaded machine).
        if self.drop_tables
            && let Some(b) = &self.backend
            && let Ok(mut c) = b.connect(&self.stop)
        {
            let _ = crate::sql::schema::drop_ours(&mut *c, &tables::known_tables());
        }
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Workload for ScanSpec {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        let mut axes: Vec<&dyn Axis> = vec![&self.table, &self.predicate, &self.cache];
        axes.extend(self.set.iter().map(|s| s as &dyn Axis));
        axes
    }

    fn headline(&self) -> Headline {
        // An op is a scan; the headline is the rows it read per second (the runner's items/s,
        // named for what they are).
        Headline {
            metric: "rows_per_sec".into(),
            op_name: "scans".into(),
            higher_is_better: true,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        _seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        match self.step_backend(point) {
            None => self.native_sessions(point),
            Some(b) => self.database_sessions(b, point, &ctx.stop),
        }
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        let table = self.table.at(point);
        let predicate = self.predicate.at(point);
        let rows = match &self.state().native {
            Some(n) if self.is_native() => n.rows(),
            _ => self.rows(table),
        };
        trial
            .figures
            .insert("rows_per_sec".into(), trial.items_per_sec);
        let all_ops = (trial.ops + trial.errors) as f64;
        if let Some(cpu) = trial.resources.process_cpu_ns_per_op {
            trial
                .figures
                .insert("cpu_per_row_ns".into(), cpu / rows.max(1) as f64);
            if trial.elapsed_ns > 0 {
                trial.figures.insert(
                    "cpu_pct".into(),
                    cpu * all_ops / trial.elapsed_ns as f64 * 100.0,
                );
            }
        }
        if let Some(cpu) = trial.figures.remove("server_cpu_per_sec") {
            trial.figures.insert("server_cpu_pct".into(), cpu * 100.0);
            if trial.items_per_sec > 0.0 {
                trial.figures.insert(
                    "server_cpu_per_row_ns".into(),
                    cpu * 1e9 / trial.items_per_sec,
                );
            }
        }
        let read = trial
            .figures
            .remove(&format!("{}_per_sec", server::PAGES_READ));
        let asked = trial
            .figures
            .remove(&format!("{}_per_sec", server::PAGE_REQUESTS));
        if let (Some(read), Some(asked)) = (read, asked) {
            let pct = if asked > 0.0 {
                (read / asked * 100.0).min(100.0)
            } else {
                0.0
            };
            trial.figures.insert("storage_read_pct".into(), pct);
        }
        if let Some(b) = self.state().table_bytes.get(&table) {
            trial.figures.insert("table_bytes".into(), *b as f64);
        }
        let threads = trial.workers;
        if let Some(native) = self.ceilings.get(&(table, predicate, threads))
            && *native > 0.0
        {
            trial.figures.insert("native_rows_per_sec".into(), *native);
            trial
                .figures
                .insert("native_pct".into(), trial.items_per_sec / native * 100.0);
        }
        if self.is_native() {
            let mut state = self.state();
            match predicate {
                Predicate::Read => {
                    state.read.insert((table, threads), trial.bytes_per_sec);
                }
                Predicate::Trivial => {
                    if let Some(&read) = state.read.get(&(table, threads)) {
                        let scan = trial.bytes_per_sec;
                        state.checks.push(Check {
                            name: "ceiling_within_read_bandwidth".into(),
                            shard: None,
                            passed: scan <= read * READ_TOLERANCE,
                            figures: [
                                ("scan_bytes_per_sec".to_string(), scan as i64),
                                ("read_bytes_per_sec".to_string(), read as i64),
                            ]
                            .into(),
                            summary: format!(
                                "the trivial scan read {:.0} MB/s against {:.0} MB/s for reading the same bytes with no predicate ({:.0}%)",
                                scan / 1e6,
                                read / 1e6,
                                scan / read.max(1e-9) * 100.0
                            ),
                        });
                    }
                }
                Predicate::Complex => {}
            }
        }
    }

    fn server_counters(&self, ctx: &Context) -> Vec<(String, f64)> {
        let Some(b) = &self.backend else {
            return Vec::new();
        };
        if matches!(**b, Backend::Sqlite { .. }) {
            return Vec::new();
        }
        // The server's CPU (when it runs here), not its log counters: a scan writes nothing.
        let mut out: Vec<(String, f64)> = b
            .server_cpu()
            .map(|cpu| ("server_cpu".to_string(), cpu))
            .into_iter()
            .collect();
        if let Ok(mut c) = b.connect_session(&ctx.stop)
            && let Ok(pages) = server::page_counters(&mut *c)
        {
            out.extend(pages);
        }
        out
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        if let Some(dir) = &self.temp_dir {
            std::fs::create_dir(dir)
                .map_err(|e| OpError::other(format!("cannot create {}: {e}", dir.display())))?;
        }
        let teardown = Teardown {
            backend: self.backend.clone(),
            drop_tables: self.phases == Phases::All && !self.keep,
            temp_dir: self.temp_dir.clone(),
            stop: ctx.stop.clone(),
        };
        if let Some(b) = &self.backend
            && self.phases == Phases::All
        {
            let mut c = b.connect(&ctx.stop).map_err(|e| OpError::db("", &e))?;
            load::load(b, &mut *c, self.table.values(), self.size, note)
                .map_err(|e| OpError::db("loading failed", &e))?;
        }
        Ok(Box::new(teardown))
    }

    fn run_warnings(&self, _cluster: Option<&crate::record::ClusterInfo>) -> Vec<Warning> {
        let mut out = Vec::new();
        if self.is_native() {
            let big: Vec<&str> = self
                .table
                .values()
                .iter()
                .filter(|t| self.size.data_bytes(**t) > native::MAX_NATIVE_BYTES)
                .map(|t| t.name())
                .collect();
            if !big.is_empty() {
                out.push(Warning {
                    code: "native_capped".into(),
                    message: format!(
                        "the native ceiling scans the first {} of rows of {} (rows/s do not depend on the count once the rows are far larger than the caches)",
                        crate::vocab::units::format_bytes(native::MAX_NATIVE_BYTES),
                        big.join(", ")
                    ),
                    step: None,
                });
            }
        }
        out
    }

    fn devices(&self) -> Vec<String> {
        self.backend
            .as_ref()
            .map(|b| b.devices())
            .unwrap_or_default()
    }

    fn finish_step(&self, step: &mut StepResult, _ctx: &Context) {
        let mut state = self.state();
        step.plan = state.plan.take();
        step.checks.append(&mut state.checks);
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        let mut out: Vec<Warning> = step
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| Warning {
                code: "ceiling_above_bandwidth".into(),
                message: format!(
                    "step {}: {}: more than reading the same bytes allows (noise, or the read step was slowed)",
                    step_number(step.index),
                    c.summary
                ),
                step: Some(step.index),
            })
            .collect();
        let cold = step.params.get("cache").and_then(|v| v.as_str()) == Some("cold");
        let read_pct = step
            .trials
            .iter()
            .filter_map(|t| t.figures.get("storage_read_pct"))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(*v, |m| m.max(*v))));
        if cold
            && let Some(pct) = read_pct
            && pct < COLD_MIN_READ_PCT
        {
            let cache = self
                .server_settings
                .iter()
                .find(|(k, _)| *k == "shared_buffers" || *k == "innodb_buffer_pool_size")
                .map(|(k, v)| format!(" ({k} = {v})"))
                .unwrap_or_default();
            out.push(Warning {
                code: "not_cold".into(),
                message: format!(
                    "step {}: asked cold, but the server read only {pct:.1}% of its pages from storage: the table was served from the server's cache{cache}, which perflab cannot empty; use a table larger than the cache (--size) for a cold scan",
                    step_number(step.index)
                ),
                step: Some(step.index),
            });
        }
        out
    }
}
