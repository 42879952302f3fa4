//! The sessions of the three phases, each on its own connection.
//!
//! - **load** and **aggregate** are steps of fixed work ([`Workload::fixed_work`]): the
//!   workers share a [`WorkQueue`] of files to load (or summary tables to build) and each
//!   takes the next when it finishes one; the worker that finishes the last item then
//!   gathers the planner's statistics on the tables, as one more op (`analyze`). A session
//!   with nothing left to take is [`Session::exhausted`].
//! - **query**: a closed (or open) loop of queries drawn from the mix, each answer checked
//!   against the truth; a wrong one is an error.
//!
//! [`Workload::fixed_work`]: crate::workload::Workload::fixed_work

use super::data::{FlatFile, Truth};
use super::queries::{self, QueryKind};
use super::schema::{self, SUMMARIES, Summary};
use crate::sql::backend::Backend;
use crate::sql::sql::Conn;
use crate::stop::Stop;
use crate::workload::rng::Rng;
use crate::workload::{OpError, OpOutcome, Session};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Items of fixed work shared by a step's workers.
pub struct WorkQueue<T> {
    items: Vec<T>,
    next: AtomicUsize,
    finished: AtomicUsize,
}

impl<T> WorkQueue<T> {
    pub fn new(items: Vec<T>) -> Self {
        WorkQueue {
            items,
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
        }
    }

    fn take(&self) -> Option<&T> {
        self.items.get(self.next.fetch_add(1, Ordering::SeqCst))
    }

    fn empty(&self) -> bool {
        self.next.load(Ordering::SeqCst) >= self.items.len()
    }

    /// Counts one item done; true for the one that finished the last.
    fn finish_one(&self) -> bool {
        self.finished.fetch_add(1, Ordering::SeqCst) + 1 == self.items.len()
    }
}

/// A session's connection: answers bounded by the op timeout, and the server told to stop a
/// statement perflab stopped waiting for (the op timeout, Ctrl-C), as a scan's is; a load or
/// a summary over a large table can take far longer than an OLTP answer.
fn connect(backend: &Backend, stop: &Stop) -> Result<Box<dyn Conn>, OpError> {
    crate::sql::bounded::connect(backend, stop).map_err(|e| OpError::db("", &e))
}

/// One loader: files until none is left, then the statistics if it loaded the last.
pub struct LoadSession {
    conn: Box<dyn Conn>,
    queue: Arc<WorkQueue<(FlatFile, u64)>>,
    analyze: bool,
    kind: &'static str,
}

impl LoadSession {
    pub fn open(
        backend: &Backend,
        queue: Arc<WorkQueue<(FlatFile, u64)>>,
        stop: &Stop,
    ) -> Result<LoadSession, OpError> {
        Ok(LoadSession {
            conn: connect(backend, stop)?,
            queue,
            analyze: false,
            kind: "",
        })
    }
}

impl Session for LoadSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        if self.analyze {
            self.analyze = false;
            self.kind = "analyze";
            let names: Vec<&str> = schema::LOADED.iter().map(|t| t.name).collect();
            for sql in schema::analyze_sql(self.conn.dialect(), &names) {
                self.conn.batch(&sql).map_err(|e| OpError::db("", &e))?;
            }
            return Ok(OpOutcome {
                kind: self.kind,
                ..OpOutcome::default()
            });
        }
        let Some((file, bytes)) = self.queue.take() else {
            return Ok(OpOutcome::default());
        };
        self.kind = if file.is_fact() { "fact" } else { "dimension" };
        let loaded = self
            .conn
            .load_file(file.table, file.columns, &file.path)
            .map_err(|e| OpError::db(&format!("loading {}", file.path.display()), &e));
        // Counted whether or not it loaded, so the statistics still run after a failure.
        self.analyze = self.queue.finish_one();
        let rows = loaded?;
        if rows != file.rows() {
            return Err(OpError::other(format!(
                "loading {}: the engine loaded {rows} rows of {}",
                file.path.display(),
                file.rows()
            )));
        }
        Ok(OpOutcome {
            bytes: *bytes,
            items: rows,
            kind: self.kind,
        })
    }

    fn exhausted(&self) -> bool {
        self.queue.empty() && !self.analyze
    }

    fn last_kind(&self) -> &'static str {
        self.kind
    }
}

/// One builder of summary tables.
pub struct AggregateSession {
    conn: Box<dyn Conn>,
    queue: Arc<WorkQueue<Summary>>,
    /// Fact rows each summary reads: the op's items.
    fact_rows: u64,
    analyze: bool,
    kind: &'static str,
}

impl AggregateSession {
    pub fn open(
        backend: &Backend,
        queue: Arc<WorkQueue<Summary>>,
        fact_rows: u64,
        stop: &Stop,
    ) -> Result<AggregateSession, OpError> {
        Ok(AggregateSession {
            conn: connect(backend, stop)?,
            queue,
            fact_rows,
            analyze: false,
            kind: "",
        })
    }
}

impl Session for AggregateSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        if self.analyze {
            self.analyze = false;
            self.kind = "analyze";
            let names: Vec<&str> = SUMMARIES.iter().map(|s| s.name).collect();
            for sql in schema::analyze_sql(self.conn.dialect(), &names) {
                self.conn.batch(&sql).map_err(|e| OpError::db("", &e))?;
            }
            return Ok(OpOutcome {
                kind: self.kind,
                ..OpOutcome::default()
            });
        }
        let Some(summary) = self.queue.take() else {
            return Ok(OpOutcome::default());
        };
        self.kind = summary.kind;
        let built = self
            .conn
            .batch(&summary.build_sql())
            .map_err(|e| OpError::db(&format!("building {}", summary.name), &e));
        self.analyze = self.queue.finish_one();
        built?;
        Ok(OpOutcome {
            bytes: 0,
            items: self.fact_rows,
            kind: self.kind,
        })
    }

    fn exhausted(&self) -> bool {
        self.queue.empty() && !self.analyze
    }

    fn last_kind(&self) -> &'static str {
        self.kind
    }
}

/// Answers a query step checked, by kind, over all its sessions.
#[derive(Debug, Default)]
pub struct Tally {
    pub checked: [AtomicU64; 4],
    pub wrong: [AtomicU64; 4],
}

impl Tally {
    fn index(kind: QueryKind) -> usize {
        QueryKind::ALL.iter().position(|k| *k == kind).unwrap_or(0)
    }
}

/// One analyst: queries from the mix, one after another.
pub struct QuerySession {
    backend: Arc<Backend>,
    conn: Box<dyn Conn>,
    truth: Arc<Truth>,
    /// The mix as cumulative weights.
    mix: Vec<(QueryKind, u64)>,
    total: u64,
    rng: Rng,
    tally: Arc<Tally>,
    kind: &'static str,
}

impl QuerySession {
    pub fn open(
        backend: Arc<Backend>,
        truth: Arc<Truth>,
        mix: &[(QueryKind, u64)],
        seed: u64,
        tally: Arc<Tally>,
        stop: &Stop,
    ) -> Result<QuerySession, OpError> {
        let conn = connect(&backend, stop)?;
        let mut cumulative = Vec::with_capacity(mix.len());
        let mut total = 0;
        for (k, w) in mix {
            total += w;
            cumulative.push((*k, total));
        }
        Ok(QuerySession {
            backend,
            conn,
            truth,
            mix: cumulative,
            total,
            rng: Rng::new(seed),
            tally,
            kind: "",
        })
    }
}

impl Session for QuerySession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let pick = self.rng.below(self.total.max(1));
        let kind = self
            .mix
            .iter()
            .find(|(_, upto)| pick < *upto)
            .map_or(QueryKind::Rollup, |(k, _)| *k);
        self.kind = kind.name();
        let q = queries::draw(kind, &mut self.rng, &self.truth);
        if self.conn.is_broken() {
            let stop = self.conn.stop().clone();
            self.conn = connect(&self.backend, &stop)?;
        }
        let answer = self
            .conn
            .query_texts(&q.sql)
            .map_err(|e| OpError::db("", &e))?;
        let i = Tally::index(kind);
        self.tally.checked[i].fetch_add(1, Ordering::Relaxed);
        if let Err(wrong) = queries::check(&q, &answer) {
            self.tally.wrong[i].fetch_add(1, Ordering::Relaxed);
            return Err(OpError::new(crate::record::ErrorKind::WrongAnswer, wrong));
        }
        Ok(OpOutcome {
            bytes: 0,
            items: 1,
            kind: self.kind,
        })
    }

    fn last_kind(&self) -> &'static str {
        self.kind
    }
}
