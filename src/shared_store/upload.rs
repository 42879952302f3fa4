//! A record into the shared store, as `perflab import` brings one into a folder:
//!
//! ```text
//!  id free ─────────────────────────────► inserted                         Imported::New
//!  id held by this run, same record ────► nothing                          Imported::AlreadyHere
//!  id held by this machine's run ───────► replaced (a newer version of it)  Imported::New
//!  id held by another host's run ───────► joins as ID-HOST-MACHINE (archive::id_beside),
//!                                         the same rules again under that id
//! ```
//!
//! One statement does the usual case (an upsert that replaces only this machine's own run
//! and only when it changed), so eight machines sending at once never wait on each other
//! beyond their rows.

use super::conn::{Db, opt};
use crate::archive::{Imported, RunSummary, TrendPoint, id_beside};
use crate::record::RunRecord;
use crate::sql::sql::{DbError, Param};

const UPSERT: &str = "INSERT INTO perflab_runs AS r (id, host, machine, started_at, status, workload, target, suite, steps, headline_metric, peak_value, command, settings, record, labels, headline_mean, headline_low, headline_high, headline_n, higher_is_better) \
VALUES (?, ?, ?, COALESCE(NULLIF(?, '')::timestamptz, now()), ?, ?, ?, ?, ?::integer, ?, ?::float8, ?, ?, ?::jsonb, ?::jsonb, ?::float8, ?::float8, ?::float8, ?::integer, ?::boolean) \
ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, machine = EXCLUDED.machine, started_at = EXCLUDED.started_at, status = EXCLUDED.status, workload = EXCLUDED.workload, target = EXCLUDED.target, suite = EXCLUDED.suite, steps = EXCLUDED.steps, headline_metric = EXCLUDED.headline_metric, peak_value = EXCLUDED.peak_value, command = EXCLUDED.command, settings = EXCLUDED.settings, record = EXCLUDED.record, labels = EXCLUDED.labels, headline_mean = EXCLUDED.headline_mean, headline_low = EXCLUDED.headline_low, headline_high = EXCLUDED.headline_high, headline_n = EXCLUDED.headline_n, higher_is_better = EXCLUDED.higher_is_better, uploaded_at = now(), uploaded_by = current_user \
WHERE r.host = EXCLUDED.host AND r.machine IS NOT DISTINCT FROM EXCLUDED.machine AND r.record <> EXCLUDED.record";

const SAME: &str = "SELECT (record = ?::jsonb)::text FROM perflab_runs WHERE id = ?";

/// A finite number as text, for a `float8` parameter (PostgreSQL reads no `inf`).
fn number(v: Option<f64>) -> Option<String> {
    v.filter(|v| v.is_finite()).map(|v| v.to_string())
}

/// Sends `record`; see the module's documentation.
pub fn upload(db: &mut Db, record: &RunRecord) -> Result<Imported, DbError> {
    let host = record.env.hostname.clone().unwrap_or_default();
    let json = serde_json::to_string(record).map_err(|e| DbError::other(e.to_string()))?;
    match send(db, &record.id, record, &json)? {
        Placed::Stored => Ok(Imported::New {
            id: record.id.clone(),
            host,
        }),
        Placed::Same => Ok(Imported::AlreadyHere(record.id.clone())),
        Placed::Theirs => {
            // The record names itself by its new id, as an imported one does.
            let mut renamed = record.clone();
            renamed.id = id_beside(record);
            let id = renamed.id.clone();
            let json =
                serde_json::to_string(&renamed).map_err(|e| DbError::other(e.to_string()))?;
            match send(db, &id, &renamed, &json)? {
                Placed::Stored => Ok(Imported::New { id, host }),
                Placed::Same => Ok(Imported::AlreadyHere(id)),
                Placed::Theirs => Err(DbError::other(format!(
                    "run {} is taken by another host's run, and so is {id}",
                    record.id
                ))),
            }
        }
    }
}

/// What became of a record sent under one id.
enum Placed {
    /// Inserted, or this machine's own run replaced by its newer version.
    Stored,
    /// The store holds this very record.
    Same,
    /// Another host's run holds the id.
    Theirs,
}

fn send(db: &mut Db, id: &str, record: &RunRecord, json: &str) -> Result<Placed, DbError> {
    let s = RunSummary::of(record);
    let t = TrendPoint::of(record);
    let labels = serde_json::to_string(&record.labels).unwrap_or_else(|_| "{}".into());
    let steps = s.steps.to_string();
    let n = t.as_ref().map(|t| t.n.to_string());
    let (peak, mean, low, high) = (
        number(s.peak_value),
        number(t.as_ref().map(|t| t.mean)),
        number(t.as_ref().and_then(|t| t.low)),
        number(t.as_ref().and_then(|t| t.high)),
    );
    let params = [
        Param::Text(id),
        Param::Text(&s.host),
        opt(s.machine.as_deref()),
        Param::Text(&s.started_at),
        Param::Text(&s.status),
        Param::Text(&s.workload),
        Param::Text(&s.target),
        opt(s.suite.as_deref()),
        Param::Text(&steps),
        Param::Text(&s.peak_metric),
        opt(peak.as_deref()),
        Param::Text(&s.command),
        Param::Text(&s.settings),
        Param::Text(json),
        Param::Text(&labels),
        opt(mean.as_deref()),
        opt(low.as_deref()),
        opt(high.as_deref()),
        opt(n.as_deref()),
        Param::Text(if record.headline.higher_is_better {
            "true"
        } else {
            "false"
        }),
    ];
    if db.run(UPSERT, &params)?.1 == 1 {
        return Ok(Placed::Stored);
    }
    let rows = db.run(SAME, &[Param::Text(json), Param::Text(id)])?.0;
    let same = rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .is_some_and(|v| v == "true");
    // Not replaced and not the same: another host's, or this host's from another machine.
    Ok(if same { Placed::Same } else { Placed::Theirs })
}
