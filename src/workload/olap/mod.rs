//! OLAP as the Essbase report measured it: a star schema loaded from flat files, aggregated
//! into summary tables, then queried by a growing number of analysts; on SQLite, PostgreSQL
//! and MySQL/MariaDB.
//!
//! - this file: [`OlapSpec`] and its [`Workload`] impl. The steps sweep the `phase` (load,
//!   aggregate, query) and, in the query phase, the clients (analysts). Load and aggregate are
//!   steps of fixed work ([`Workload::fixed_work`]): `--loaders` workers share the files (or
//!   the summary tables) and the step lasts until the last is done; an op is one file loaded
//!   (its items the rows) or one summary built (its items the fact rows it read). In the query
//!   phase an op is one query, its kind (`rollup`, `drill`, `slice`, `topn`) named so each gets
//!   its own response times.
//! - [`data`]: the generator, the flat files and the [`Truth`] perflab computes from them.
//! - [`schema`]: the tables, the summary tables' SQL, the checks of row counts and totals.
//! - [`queries`]: the query mix, each query's SQL and expected answer.
//! - [`session`]: the sessions of the three phases.
//!
//! Checks after every phase, against the truth: after the load, every table's rows and the
//! fact table's sums; after the aggregates, each summary's rows and sums; after the queries,
//! every answer (each op compares its rows; a wrong one is an error) and the tables again.
//!
//! The connection, URLs, passwords, TLS, `--set` and the safety rules are `oltp`'s.

pub mod args;
pub mod cmd;
pub mod data;
pub mod kind;
pub mod present;
pub mod queries;
pub mod schema;
pub mod session;

pub use kind::KIND;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Check, Headline, StepResult, Trial, Warning, step_number};
use crate::sql::backend::Backend;
use crate::sql::sqlite::SqliteSettings;
use crate::stop::Stop;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use data::{FlatFile, Truth};
use queries::QueryKind;
use serde::Serialize;
use session::{AggregateSession, LoadSession, QuerySession, Tally, WorkQueue};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The `workload` perflab records beside the tables.
pub const WORKLOAD: &str = "olap";

/// The three phases, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Load,
    Aggregate,
    Query,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Aggregate => "aggregate",
            Phase::Query => "query",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OlapSpec {
    /// The database without secrets.
    pub target: String,
    /// How the sessions send their statements (`-M`); absent for SQLite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_mode: Option<crate::sql::query_mode::QueryMode>,
    pub phase: Sweep<Phase>,
    /// Rows of the fact table.
    pub rows: u64,
    /// Flat files the fact rows are split over (and one per dimension).
    pub files: u64,
    /// Workers of the load and aggregate phases.
    pub loaders: u64,
    /// The query mix: kinds and weights.
    pub mix: Vec<(QueryKind, u64)>,
    /// The generator's seed: the data, and so every answer.
    pub data_seed: u64,
    /// SQLite's settings, when the target is SQLite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<SqliteSettings>,
    /// The server's settings as it reported them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub server_settings: BTreeMap<String, String>,
    /// Keep the tables after the run.
    pub keep: bool,
    #[serde(skip)]
    pub backend: Arc<Backend>,
    /// A temporary directory perflab made (the flat files, the SQLite file), removed
    /// afterwards.
    #[serde(skip)]
    pub temp_dir: PathBuf,
    /// Where the flat files go and stay (`--files-dir`); None: in `temp_dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_dir: Option<PathBuf>,
    #[serde(skip)]
    state: Arc<Mutex<State>>,
}

/// What prepare leaves for the steps, and what a step leaves for its record.
#[derive(Default)]
struct State {
    truth: Option<Arc<Truth>>,
    /// The flat files and their sizes in bytes.
    files: Vec<(FlatFile, u64)>,
    tally: Option<Arc<Tally>>,
    checks: Vec<Check>,
    /// The run's stop token, from the last call that handed one over (the checks after a
    /// trial run in `derive`, which gets none).
    stop: Stop,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").finish_non_exhaustive()
    }
}

impl OlapSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        target: String,
        phases: Vec<Phase>,
        rows: u64,
        files: u64,
        loaders: u64,
        mix: Vec<(QueryKind, u64)>,
        data_seed: u64,
        backend: Arc<Backend>,
        temp_dir: PathBuf,
    ) -> OlapSpec {
        OlapSpec {
            target,
            query_mode: None,
            phase: Sweep::list("phase", phases),
            rows,
            files,
            loaders,
            mix,
            data_seed,
            sqlite: None,
            server_settings: BTreeMap::new(),
            keep: false,
            backend,
            temp_dir,
            files_dir: None,
            state: Arc::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn has(&self, p: Phase) -> bool {
        self.phase.values().contains(&p)
    }

    fn truth(&self) -> Result<Arc<Truth>, OpError> {
        self.state()
            .truth
            .clone()
            .ok_or_else(|| OpError::other("the truth was not computed (prepare did not run)"))
    }

    fn conn(&self) -> Result<Box<dyn crate::sql::sql::Conn>, OpError> {
        let stop = self.state().stop.clone();
        let mut c = self
            .backend
            .connect(&stop)
            .map_err(|e| OpError::db("", &e))?;
        c.set_answer_timeout(None);
        Ok(c)
    }

    /// Writes the flat files, in parallel.
    fn write_files(&self, note: &dyn Fn(&str)) -> Result<Vec<(FlatFile, u64)>, OpError> {
        let dir = match &self.files_dir {
            Some(d) => d.clone(),
            None => self.temp_dir.join("files"),
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| OpError::other(format!("cannot create {}: {e}", dir.display())))?;
        let plan = data::plan_files(&dir, self.rows, self.files);
        // Never over a file perflab did not write in this run.
        if let Some(f) = plan.iter().find(|f| f.path.exists()) {
            return Err(OpError::other(format!(
                "{} exists: give --files-dir a new or empty directory",
                f.path.display()
            )));
        }
        note(&format!(
            "prepare: writing {} flat files ({} sales rows) in {}",
            plan.len(),
            self.rows,
            dir.display()
        ));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let seed = self.data_seed;
        let stop = self.state().stop.clone();
        let stop = &stop;
        let written: Vec<Result<Vec<(usize, u64)>, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads.min(plan.len()))
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::SeqCst);
                            let Some(f) = plan.get(i) else {
                                return Ok(mine);
                            };
                            if stop.is_set() {
                                return Err("interrupted while writing the flat files".into());
                            }
                            let bytes = data::write_file(f, seed)
                                .map_err(|e| format!("cannot write {}: {e}", f.path.display()))?;
                            mine.push((i, bytes));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a file writer panicked".into()))
                })
                .collect()
        });
        let mut sizes = vec![0u64; plan.len()];
        for part in written {
            for (i, bytes) in part.map_err(OpError::other)? {
                sizes[i] = bytes;
            }
        }
        let total: u64 = sizes.iter().sum();
        note(&format!(
            "prepare: {} of flat files written",
            crate::vocab::units::format_bytes(total)
        ));
        Ok(plan.into_iter().zip(sizes).collect())
    }

    fn load_sessions(&self) -> Result<SessionFactory, OpError> {
        // Untimed: every load starts from empty tables (a repeat loads again).
        schema::empty_loaded(&mut *self.conn()?).map_err(|e| OpError::db("", &e))?;
        let queue = Arc::new(WorkQueue::new(self.state().files.clone()));
        let backend = Arc::clone(&self.backend);
        let stop = self.state().stop.clone();
        Ok(Arc::new(move |_, _| {
            LoadSession::open(&backend, Arc::clone(&queue), &stop)
                .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    fn aggregate_sessions(&self) -> Result<SessionFactory, OpError> {
        schema::drop_summaries(&mut *self.conn()?).map_err(|e| OpError::db("", &e))?;
        let queue = Arc::new(WorkQueue::new(schema::SUMMARIES.to_vec()));
        let backend = Arc::clone(&self.backend);
        let rows = self.rows;
        let stop = self.state().stop.clone();
        Ok(Arc::new(move |_, _| {
            AggregateSession::open(&backend, Arc::clone(&queue), rows, &stop)
                .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    fn query_sessions(&self, seed: u64) -> Result<SessionFactory, OpError> {
        let truth = self.truth()?;
        let tally = Arc::new(Tally::default());
        self.state().tally = Some(Arc::clone(&tally));
        let backend = Arc::clone(&self.backend);
        let mix = self.mix.clone();
        let stop = self.state().stop.clone();
        Ok(Arc::new(move |worker, _| {
            let seed = seed ^ (worker as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            QuerySession::open(
                Arc::clone(&backend),
                Arc::clone(&truth),
                &mix,
                seed,
                Arc::clone(&tally),
                &stop,
            )
            .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    /// The checks after a trial of `phase`, against the truth.
    fn checks(&self, phase: Phase) -> Vec<Check> {
        let failed = |what: &str, e: String| Check {
            name: format!("{what}_totals"),
            shard: None,
            passed: false,
            figures: BTreeMap::new(),
            summary: format!("the check could not run: {e}"),
        };
        let Ok(truth) = self.truth() else {
            return Vec::new();
        };
        let mut c = match self.conn() {
            Ok(c) => c,
            Err(e) => return vec![failed(phase.name(), e.message)],
        };
        let mut out = Vec::new();
        let load = |c: &mut dyn crate::sql::sql::Conn| {
            schema::check_load(c, &truth).unwrap_or_else(|e| failed("load", e.message))
        };
        let summaries = |c: &mut dyn crate::sql::sql::Conn| {
            schema::check_summaries(c, &truth)
                .unwrap_or_else(|e| vec![failed("aggregate", e.message)])
        };
        match phase {
            Phase::Load => out.push(load(&mut *c)),
            Phase::Aggregate => {
                out.extend(summaries(&mut *c));
                // A database whose aggregates are in place and right can be queried by
                // `olap run`.
                if out.iter().all(|c| c.passed)
                    && crate::sql::schema::recorded(&mut *c, "complete")
                        .ok()
                        .flatten()
                        .is_none()
                {
                    let _ = crate::sql::schema::record(&mut *c, "complete", "yes");
                }
            }
            Phase::Query => {
                out.push(self.answers_check());
                // Queries change nothing: the tables still hold what was loaded and built.
                out.push(load(&mut *c));
                out.extend(summaries(&mut *c));
            }
        }
        out
    }

    /// How many answers the step checked, and how many were wrong, by kind.
    fn answers_check(&self) -> Check {
        let tally = self.state().tally.clone().unwrap_or_default();
        let mut figures = BTreeMap::new();
        let mut parts = Vec::new();
        let mut wrong_total = 0;
        for (i, k) in QueryKind::ALL.iter().enumerate() {
            let checked = tally.checked[i].load(Ordering::Relaxed) as i64;
            let wrong = tally.wrong[i].load(Ordering::Relaxed) as i64;
            if checked == 0 {
                continue;
            }
            figures.insert(format!("{}_checked", k.name()), checked);
            figures.insert(format!("{}_wrong", k.name()), wrong);
            wrong_total += wrong;
            parts.push(format!("{} {checked}", k.name()));
        }
        Check {
            name: "query_answers".into(),
            shard: None,
            passed: wrong_total == 0,
            figures,
            summary: if wrong_total == 0 {
                format!("answers checked, all right: {}", parts.join(", "))
            } else {
                format!(
                    "{wrong_total} wrong answers (answers checked: {})",
                    parts.join(", ")
                )
            },
        }
    }
}

/// Drops the tables and removes the temporary directory when the run ends.
struct Teardown {
    backend: Arc<Backend>,
    drop_tables: bool,
    temp_dir: PathBuf,
    /// Whether perflab made `temp_dir` (and so may remove all of it).
    made_dir: bool,
    /// The run's token: set after Ctrl-C, which bounds the drop's waits.
    stop: Stop,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        if self.drop_tables
            && let Ok(mut c) = self.backend.connect(&self.stop)
        {
            let _ = crate::sql::schema::drop_ours(&mut *c, &schema::known_tables());
        }
        if self.made_dir {
            let _ = std::fs::remove_dir_all(&self.temp_dir);
        }
    }
}

impl Workload for OlapSpec {
    fn name(&self) -> &'static str {
        "olap"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.phase]
    }

    fn headline(&self) -> Headline {
        // Files loaded, summaries built or queries answered per second: in the query phase,
        // queries/s (and the figure queries_per_min); in a phase of fixed work, the inverse of
        // its time, so a ratio between two runs is a ratio of speeds.
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "ops".into(),
            higher_is_better: true,
        }
    }

    fn skip(&self, point: &StepPoint) -> bool {
        // Loading and aggregating run once, with --loaders workers: not per client count.
        self.phase.at(point) != Phase::Query && point.index_of("threads").unwrap_or(0) > 0
    }

    fn fixed_work(&self, point: &StepPoint) -> Option<usize> {
        let loaders = self.loaders.max(1) as usize;
        match self.phase.at(point) {
            Phase::Load => Some(loaders.min(self.state().files.len().max(1))),
            Phase::Aggregate => Some(loaders.min(schema::SUMMARIES.len())),
            Phase::Query => None,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        self.state().stop = ctx.stop.clone();
        match self.phase.at(point) {
            Phase::Load => self.load_sessions(),
            Phase::Aggregate => self.aggregate_sessions(),
            Phase::Query => self.query_sessions(seed),
        }
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        let phase = self.phase.at(point);
        let f = &mut trial.figures;
        match phase {
            Phase::Load | Phase::Aggregate => {
                f.insert("rows_per_sec".into(), trial.items_per_sec);
                f.insert("seconds".into(), trial.elapsed_ns as f64 / 1e9);
            }
            Phase::Query => {
                f.insert("queries_per_min".into(), trial.ops_per_sec * 60.0);
            }
        }
        if let Some(cpu) = f.remove("server_cpu_per_sec") {
            f.insert("server_cpu_pct".into(), cpu * 100.0);
        }
        let checks = self.checks(phase);
        self.state().checks.extend(checks);
    }

    fn server_counters(&self, _ctx: &Context) -> Vec<(String, f64)> {
        self.backend
            .server_cpu()
            .map(|cpu| ("server_cpu".to_string(), cpu))
            .into_iter()
            .collect()
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        self.state().stop = ctx.stop.clone();
        let made_dir = !self.temp_dir.exists();
        std::fs::create_dir_all(&self.temp_dir).map_err(|e| {
            OpError::other(format!("cannot create {}: {e}", self.temp_dir.display()))
        })?;
        let loads = self.has(Phase::Load);
        let teardown = Teardown {
            backend: Arc::clone(&self.backend),
            drop_tables: loads && !self.keep,
            temp_dir: self.temp_dir.clone(),
            made_dir,
            stop: ctx.stop.clone(),
        };
        if loads {
            let mut c = self.conn()?;
            let t = |e: crate::sql::sql::DbError| OpError::db("", &e);
            use crate::sql::schema as s;
            s::drop_ours(&mut *c, &schema::known_tables()).map_err(t)?;
            s::create(&mut *c, WORKLOAD, self.rows, &schema::LOADED).map_err(t)?;
            // The summaries are perflab's too, though built later; the helper table of
            // oltp's loads is not needed.
            s::list(&mut *c, &schema::SUMMARIES.map(|s| s.name)).map_err(t)?;
            c.batch(&format!("DROP TABLE {}", s::SEQ)).map_err(t)?;
            s::record(&mut *c, "seed", &self.data_seed.to_string()).map_err(t)?;
            let files = self.write_files(note)?;
            self.state().files = files;
        }
        note("prepare: computing the answers from the generated data");
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let truth = Truth::compute(self.data_seed, self.rows, threads);
        self.state().truth = Some(Arc::new(truth));
        Ok(Box::new(teardown))
    }

    fn finish_step(&self, step: &mut StepResult, _ctx: &Context) {
        step.checks.append(&mut self.state().checks);
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        step.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| Warning {
                code: "check_failed".into(),
                message: format!(
                    "step {}: {} failed: {}",
                    step_number(step.index),
                    c.name,
                    c.summary
                ),
                step: Some(step.index),
            })
            .collect()
    }
}
