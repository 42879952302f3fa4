//! [`SharedStore`]: the shared store read (and tagged) as [`RunStore`] says, each query one
//! indexed statement: the newest runs by `perflab_runs_newest`, a prefix of an id as a range
//! of the primary key, a trend by `perflab_runs_trend` without reading a record.

use super::Access;
use super::conn::{Address, Db, failed, opt};
use crate::archive::{
    ArchiveError, Listing, RunStore, RunSummary, TrendPoint, TrendQuery, last_of, parse_record,
    tags,
};
use crate::record::RunRecord;
use crate::sql::sql::{DbError, Param};
use std::sync::Mutex;

/// An opened shared store: its address and the connections not in use (`serve` answers
/// requests on several threads; a command uses one).
pub struct SharedStore {
    address: Address,
    access: Access,
    idle: Mutex<Vec<Db>>,
}

const LIST_ALL: &str = "SELECT id, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), status, workload, target, suite, steps, headline_metric, peak_value, command, host, machine, settings FROM perflab_runs ORDER BY started_at DESC, id DESC LIMIT ?::bigint";
const LIST_HOST: &str = "SELECT id, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), status, workload, target, suite, steps, headline_metric, peak_value, command, host, machine, settings FROM perflab_runs WHERE host = ? ORDER BY started_at DESC, id DESC LIMIT ?::bigint";
const NEWEST_OF_HOST: &str =
    "SELECT id FROM perflab_runs WHERE host = ? ORDER BY started_at DESC, id DESC LIMIT 1";
const TAGGED: &str = "SELECT run_id FROM perflab_tags WHERE name = ?";
const EXACT: &str = "SELECT id FROM perflab_runs WHERE id = ?";
const PREFIXED: &str =
    "SELECT id FROM perflab_runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 11";
const RECORD: &str = "SELECT record::text FROM perflab_runs WHERE id = ?";
const NEWEST_RECORDS: &str =
    "SELECT id, record::text FROM perflab_runs ORDER BY started_at DESC, id DESC LIMIT ?::bigint";
const HOST_OF_TAGGED: &str =
    "SELECT r.host FROM perflab_tags t JOIN perflab_runs r ON r.id = t.run_id WHERE t.name = ?";
const STORED_AS: &str =
    "SELECT id FROM perflab_runs WHERE id IN (?, ?) AND host = ? ORDER BY id = ? DESC LIMIT 1";
const TAGS: &str = "SELECT name, run_id FROM perflab_tags ORDER BY name";
const COUNT: &str = "SELECT count(*) FROM perflab_runs";
const TAG: &str = "INSERT INTO perflab_tags (name, run_id) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET run_id = EXCLUDED.run_id, tagged_at = now(), tagged_by = current_user";
const TREND: &str = "SELECT id, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), host, workload, headline_metric, headline_mean, headline_low, headline_high, headline_n, higher_is_better::text, labels::text FROM perflab_runs WHERE headline_metric = ? AND headline_mean IS NOT NULL AND (?::text IS NULL OR workload = ?) AND labels @> ?::jsonb ORDER BY started_at DESC, id DESC LIMIT ?::bigint";

impl SharedStore {
    /// Connects and makes sure the schema is this perflab's ([`super::schema::ensure`]).
    pub fn open(address: &Address, access: Access) -> Result<SharedStore, ArchiveError> {
        let mut db = Db::connect(address, access == Access::Read)?;
        super::schema::ensure(&mut db, address, access == Access::Write)?;
        Ok(SharedStore {
            address: address.clone(),
            access,
            idle: Mutex::new(vec![db]),
        })
    }

    pub fn address(&self) -> &Address {
        &self.address
    }

    /// `f` on a connection: an idle one, else a new one; kept for the next call unless it
    /// broke.
    pub fn with_db<T>(
        &self,
        f: impl FnOnce(&mut Db) -> Result<T, DbError>,
    ) -> Result<T, ArchiveError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut db = match idle {
            Some(db) => db,
            None => Db::connect(&self.address, self.access == Access::Read)?,
        };
        let result = f(&mut db).map_err(|e| failed(&self.address, &e));
        if !db.is_broken() {
            self.idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(db);
        }
        result
    }

    /// Tags `record` (as the store holds it: under its id, or its `ID-HOST-MACHINE`) `name`,
    /// unless another host's run holds that tag: then `NAME.HOST`, so two hosts that ran the
    /// same study leg keep a tag each. The tag set.
    pub fn tag_as_host(&self, record: &RunRecord, name: &str) -> Result<String, ArchiveError> {
        let host = record.env.hostname.clone().unwrap_or_default();
        let beside = crate::archive::id_beside(record);
        let id = self
            .one_id(
                STORED_AS,
                &[
                    Param::Text(&record.id),
                    Param::Text(&beside),
                    Param::Text(&host),
                    Param::Text(&record.id),
                ],
            )?
            .ok_or_else(|| ArchiveError::NotFound(format!("{} (not sent yet)", record.id)))?;
        let held_by = self.one_id(HOST_OF_TAGGED, &[Param::Text(name)])?;
        let name = match held_by {
            Some(other) if other != host => {
                let safe: String = host
                    .chars()
                    .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
                        true => c,
                        false => '-',
                    })
                    .collect();
                format!("{name}.{safe}")
            }
            _ => name.to_string(),
        };
        self.tag(&id, &name)?;
        Ok(name)
    }

    /// The one id a statement found, if any.
    fn one_id(
        &self,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Option<String>, ArchiveError> {
        let rows = self.with_db(|db| db.run(sql, params))?.0;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }
}

/// A listing's row as `perflab runs` shows it.
fn summary(row: Vec<Option<String>>) -> RunSummary {
    let mut c = row.into_iter();
    let mut next = || c.next().flatten();
    RunSummary {
        id: next().unwrap_or_default(),
        started_at: next().unwrap_or_default(),
        status: next().unwrap_or_default(),
        workload: next().unwrap_or_default(),
        target: next().unwrap_or_default(),
        suite: next(),
        steps: next().and_then(|s| s.parse().ok()).unwrap_or(0),
        peak_metric: next().unwrap_or_default(),
        peak_value: next().and_then(|s| s.parse().ok()),
        command: next().unwrap_or_default(),
        host: next().unwrap_or_default(),
        machine: next(),
        settings: next().unwrap_or_default(),
    }
}

/// A trend's row.
fn point(row: Vec<Option<String>>) -> Option<TrendPoint> {
    let mut c = row.into_iter();
    let mut next = || c.next().flatten();
    Some(TrendPoint {
        id: next()?,
        started_at: next()?,
        host: next().unwrap_or_default(),
        workload: next().unwrap_or_default(),
        metric: next().unwrap_or_default(),
        mean: next()?.parse().ok()?,
        low: next().and_then(|s| s.parse().ok()),
        high: next().and_then(|s| s.parse().ok()),
        n: next().and_then(|s| s.parse().ok()).unwrap_or(1),
        higher_is_better: next().is_none_or(|s| s == "true"),
        labels: next()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default(),
    })
}

/// `prefix` for LIKE, its wildcards taken literally.
fn like_prefix(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl RunStore for SharedStore {
    fn place(&self) -> String {
        format!("the shared store {}", self.address.shown())
    }

    fn list(&self, listing: &Listing) -> Result<Vec<RunSummary>, ArchiveError> {
        let limit = listing.newest.map(|n| n.to_string());
        let limit = opt(limit.as_deref());
        let rows = match &listing.host {
            None => self.with_db(|db| db.run(LIST_ALL, &[limit]))?.0,
            Some(h) => {
                self.with_db(|db| db.run(LIST_HOST, &[Param::Text(h), limit]))?
                    .0
            }
        };
        let mut out: Vec<RunSummary> = rows.into_iter().map(summary).collect();
        out.reverse();
        Ok(out)
    }

    fn count(&self) -> Result<u64, ArchiveError> {
        let rows = self.with_db(|db| db.run(COUNT, &[]))?.0;
        Ok(rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    }

    fn resolve(&self, query: &str) -> Result<String, ArchiveError> {
        let query = query.trim();
        if let Some(host) = last_of(query) {
            let this = crate::env::machine::this_host().unwrap_or_default();
            let host = host.unwrap_or(&this);
            return self
                .one_id(NEWEST_OF_HOST, &[Param::Text(host)])?
                .ok_or_else(|| {
                    ArchiveError::NotFound(format!(
                        "{query} (no run of host {host:?} in {}; name another host with last@HOST)",
                        self.place()
                    ))
                });
        }
        if tags::invalid_name(query).is_none()
            && let Some(id) = self.one_id(TAGGED, &[Param::Text(query)])?
        {
            return Ok(id);
        }
        if let Some(id) = self.one_id(EXACT, &[Param::Text(query)])? {
            return Ok(id);
        }
        if query.is_empty() {
            return Err(ArchiveError::NotFound(query.to_string()));
        }
        let pattern = like_prefix(query);
        let rows = self
            .with_db(|db| db.run(PREFIXED, &[Param::Text(&pattern)]))?
            .0;
        let mut ids: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        match ids.len() {
            0 => Err(ArchiveError::NotFound(format!(
                "{query} (in {})",
                self.place()
            ))),
            1 => Ok(ids.remove(0)),
            _ => Err(ArchiveError::Ambiguous {
                query: query.to_string(),
                candidates: ids,
            }),
        }
    }

    fn load(&self, query: &str) -> Result<RunRecord, ArchiveError> {
        let id = self.resolve(query)?;
        let text = self
            .one_id(RECORD, &[Param::Text(&id)])?
            .ok_or_else(|| ArchiveError::NotFound(id.clone()))?;
        let name = format!("{}: run {id}", self.place());
        parse_record(std::path::Path::new(&name), &text)
    }

    fn load_newest(&self, n: usize) -> Result<Vec<RunRecord>, ArchiveError> {
        let limit = n.to_string();
        let rows = self
            .with_db(|db| db.run(NEWEST_RECORDS, &[Param::Text(&limit)]))?
            .0;
        let place = self.place();
        let mut out: Vec<RunRecord> = rows
            .into_iter()
            .filter_map(|r| {
                let mut c = r.into_iter();
                let (id, text) = (c.next().flatten()?, c.next().flatten()?);
                let name = format!("{place}: run {id}");
                parse_record(std::path::Path::new(&name), &text).ok()
            })
            .collect();
        out.reverse();
        Ok(out)
    }

    fn tags(&self) -> Result<tags::Tags, ArchiveError> {
        let rows = self.with_db(|db| db.run(TAGS, &[]))?.0;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut c = r.into_iter();
                Some((c.next().flatten()?, c.next().flatten()?))
            })
            .collect())
    }

    fn tag(&self, query: &str, name: &str) -> Result<String, ArchiveError> {
        if let Some(reason) = tags::invalid_name(name) {
            return Err(ArchiveError::BadTag {
                name: name.to_string(),
                reason,
            });
        }
        if self.access == Access::Read {
            return Err(ArchiveError::ReadOnly(self.place()));
        }
        let id = self.resolve(query)?;
        self.with_db(|db| db.run(TAG, &[Param::Text(name), Param::Text(&id)]))?;
        Ok(id)
    }

    fn trend(&self, query: &TrendQuery) -> Result<Vec<TrendPoint>, ArchiveError> {
        let labels: serde_json::Map<String, serde_json::Value> = query
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        let labels = serde_json::Value::Object(labels).to_string();
        let limit = query.newest.to_string();
        let workload = query.workload.as_deref();
        let rows = self
            .with_db(|db| {
                db.run(
                    TREND,
                    &[
                        Param::Text(&query.metric),
                        opt(workload),
                        opt(workload),
                        Param::Text(&labels),
                        Param::Text(&limit),
                    ],
                )
            })?
            .0;
        let mut out: Vec<TrendPoint> = rows.into_iter().filter_map(point).collect();
        out.reverse();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_take_wildcards_literally() {
        assert_eq!(like_prefix("2026_1%"), "2026\\_1\\%%");
    }
}
