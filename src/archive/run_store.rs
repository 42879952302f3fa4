//! The one interface the commands read runs through, whichever store holds them: this
//! machine's results folder ([`super::Archive`], [`super::ReadOnlyArchive`]) or a team's
//! shared store on PostgreSQL (`crate::shared_store`, a layer above, which implements it).
//!
//! ```text
//!  runs, show, export, report, compare, tag, serve, trend
//!          │  &dyn RunStore
//!          ├─► Archive / ReadOnlyArchive   <results>/runs/<id>/run.json, index.sqlite, tags.json
//!          └─► shared_store::SharedStore   perflab_runs, perflab_tags (docs/shared-store.md)
//! ```
//!
//! Queries read the same in both: an id, a unique prefix of one, a tag, `last` (the newest
//! run; in a shared store the newest of this machine's), or `last@HOST` (the newest of that
//! host's runs).

use super::{ArchiveError, RunSummary, tags::Tags};
use crate::record::RunRecord;
use std::path::PathBuf;

/// Which runs a listing wants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Only the newest this many (all when `None`).
    pub newest: Option<usize>,
    /// Only this host's runs.
    pub host: Option<String>,
}

/// One figure of a run, for a trend: the headline's estimate at the run's peak step.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendPoint {
    pub id: String,
    pub started_at: String,
    pub host: String,
    pub workload: String,
    pub metric: String,
    pub mean: f64,
    /// The 95% interval, where the step had repeats (or intervals) to give one.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// How many samples the estimate is of (the step's repeats, or its intervals).
    pub n: u32,
    /// Whether more is better (throughput) or less (a latency).
    pub higher_is_better: bool,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Which runs a trend follows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrendQuery {
    /// The headline figure's name (`ops_per_sec`, `bytes_per_sec`).
    pub metric: String,
    pub workload: Option<String>,
    /// Labels every run must carry with these values.
    pub labels: Vec<(String, String)>,
    /// The newest this many runs at most.
    pub newest: usize,
}

/// Saved runs, read and tagged; see the module's documentation.
pub trait RunStore: Send + Sync {
    /// Where the runs are, for messages and pages: a folder, or the shared store's address
    /// without its password.
    fn place(&self) -> String;

    /// The runs `listing` asks for, oldest first.
    fn list(&self, listing: &Listing) -> Result<Vec<RunSummary>, ArchiveError>;

    /// How many runs there are in all.
    fn count(&self) -> Result<u64, ArchiveError> {
        Ok(self.list(&Listing::default())?.len() as u64)
    }

    /// Turns a query (see the module's documentation) into a run's id.
    fn resolve(&self, query: &str) -> Result<String, ArchiveError>;

    /// The run a query names.
    fn load(&self, query: &str) -> Result<RunRecord, ArchiveError>;

    /// Every tag, name → run id.
    fn tags(&self) -> Result<Tags, ArchiveError>;

    /// Names run `query` `name`, moving the tag if it named another run; the run's id.
    fn tag(&self, query: &str, name: &str) -> Result<String, ArchiveError>;

    /// The newest `n` runs' records, oldest first (unreadable ones left out): a page of
    /// many runs (serve's landscape) in one read where the store can.
    fn load_newest(&self, n: usize) -> Result<Vec<RunRecord>, ArchiveError> {
        let listing = Listing {
            newest: Some(n),
            host: None,
        };
        Ok(self
            .list(&listing)?
            .iter()
            .filter_map(|r| self.load(&r.id).ok())
            .collect())
    }

    /// The runs' headline figure for a trend, oldest first.
    fn trend(&self, query: &TrendQuery) -> Result<Vec<TrendPoint>, ArchiveError> {
        trend_by_loading(self, query)
    }

    /// The run's own folder, when the store is this machine's files (its interval file,
    /// for serve's live pages); `None` in a shared store.
    fn run_dir(&self, _id: &str) -> Option<PathBuf> {
        None
    }
}

/// `last` → `Some(None)`, `last@HOST` → `Some(Some(HOST))`, anything else `None`.
pub fn last_of(query: &str) -> Option<Option<&str>> {
    match query.trim() {
        "last" => Some(None),
        q => q.strip_prefix("last@").filter(|h| !h.is_empty()).map(Some),
    }
}

/// A record or a `run.json` named by its path (a query with a `/` or ending in `.json`): a
/// record from another machine, not imported.
pub fn load_or_file(store: &dyn RunStore, query: &str) -> Result<RunRecord, ArchiveError> {
    let path = std::path::Path::new(query.trim());
    match query.contains('/') || query.ends_with(".json") {
        true if path.is_file() => super::store::read_record(path),
        true if !query.contains('/') => store.load(query),
        true => Err(ArchiveError::NotFound(format!("{query} (no such file)"))),
        false => store.load(query),
    }
}

/// The trend of a store without an index of figures: each run's record read (a results
/// folder holds few enough).
fn trend_by_loading<S: RunStore + ?Sized>(
    store: &S,
    query: &TrendQuery,
) -> Result<Vec<TrendPoint>, ArchiveError> {
    let mut out = Vec::new();
    for row in store.list(&Listing::default())? {
        if query.workload.as_ref().is_some_and(|w| *w != row.workload) {
            continue;
        }
        let Ok(record) = store.load(&row.id) else {
            continue;
        };
        if let Some(point) = TrendPoint::of(&record)
            && point.metric == query.metric
            && query
                .labels
                .iter()
                .all(|(k, v)| point.labels.get(k) == Some(v))
        {
            out.push(point);
        }
    }
    let skip = out.len().saturating_sub(query.newest);
    Ok(out.split_off(skip))
}

impl TrendPoint {
    /// The run's headline at its peak step (its only step, for most), if it has one.
    pub fn of(r: &RunRecord) -> Option<TrendPoint> {
        let step = match r.analysis.as_ref().and_then(|a| a.peak_step) {
            Some(i) => r.steps.iter().find(|s| s.index == i)?,
            None => r.steps.last()?,
        };
        let h = &step.summary.headline;
        Some(TrendPoint {
            id: r.id.clone(),
            started_at: r.started_at.clone(),
            host: r.env.hostname.clone().unwrap_or_default(),
            workload: r.workload.clone(),
            metric: r.headline.metric.clone(),
            mean: h.mean,
            low: h.ci95_low,
            high: h.ci95_high,
            n: h.n,
            higher_is_better: r.headline.higher_is_better,
            labels: r.labels.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_and_last_at_a_host() {
        assert_eq!(last_of("last"), Some(None));
        assert_eq!(last_of(" last@db1 "), Some(Some("db1")));
        assert_eq!(last_of("last@"), None);
        assert_eq!(last_of("baseline"), None);
    }
}
