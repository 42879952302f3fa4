//! What the database must hold after each step of a sysbench test, against what the
//! clients saw their statements do: the rows of the test's tables grew by the rows its
//! inserts added less those its deletes removed, in the events whose outcome is known; and
//! where only the index updates change k (oltp_update_index, or any test without deletes and
//! inserts), the sum of k grew by exactly the updates that changed a row.
//!
//! An event whose connection was lost after its commit (or an autocommit statement) was
//! sent may or may not have happened: each widens the allowed difference by the most rows an
//! event can add or remove, and the check says so.

use super::options::SysbenchOptions;
use super::test::Test;
use crate::record::Check;
use crate::sql::backend::Backend;
use crate::sql::sql::{Conn, DbError};
use crate::stop::Stop;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// The run's counts between two checks.
#[derive(Debug, Default)]
pub struct Books {
    /// Rows added less rows removed by what the clients saw happen.
    rows: AtomicI64,
    /// k added by index updates that changed a row.
    k: AtomicI64,
    /// Whether something else changed k (a delete or an insert), so its sum proves nothing.
    k_unknown: AtomicBool,
    /// The rows and the sum of k at the last check (or after loading).
    at_check: Mutex<Option<(i64, i64)>>,
}

impl Books {
    /// What one event (or one autocommitted statement) did, now that it is known to have
    /// happened.
    pub fn add(&self, rows: i64, k: i64, k_unknown: bool) {
        if rows != 0 {
            self.rows.fetch_add(rows, Ordering::Relaxed);
        }
        if k != 0 {
            self.k.fetch_add(k, Ordering::Relaxed);
        }
        if k_unknown {
            self.k_unknown.store(true, Ordering::Relaxed);
        }
    }

    /// Starts counting afresh from what the database holds now.
    fn reset(&self, now: Option<(i64, i64)>) -> (i64, i64, bool, Option<(i64, i64)>) {
        let before = std::mem::replace(
            &mut *self.at_check.lock().unwrap_or_else(|p| p.into_inner()),
            now,
        );
        (
            self.rows.swap(0, Ordering::Relaxed),
            self.k.swap(0, Ordering::Relaxed),
            self.k_unknown.swap(false, Ordering::Relaxed),
            before,
        )
    }
}

/// The rows and the sum of k over the test's tables.
fn totals(conn: &mut dyn Conn, o: &SysbenchOptions) -> Result<(i64, i64), DbError> {
    let mut rows = 0;
    let mut k = 0;
    for t in o.table_names() {
        let row = conn
            .query_row(&format!("SELECT count(*), sum(k) FROM {t}"))?
            .unwrap_or_default();
        rows += row.first().copied().unwrap_or(0);
        k += row.get(1).copied().unwrap_or(0);
    }
    Ok((rows, k))
}

fn read(b: &Backend, o: &SysbenchOptions, stop: &Stop) -> Result<(i64, i64), DbError> {
    let mut c = b.connect_session(stop)?;
    totals(&mut *c, o)
}

/// After loading (or before the first step of `run`): where the counts start.
pub fn baseline(o: &SysbenchOptions, b: &Backend, stop: &Stop) {
    o.books.reset(read(b, o, stop).ok());
}

/// The most rows one event can add or remove: how far one of unknown outcome can move the
/// count.
fn rows_per_event(o: &SysbenchOptions) -> i64 {
    match o.test {
        Test::OltpReadWrite | Test::OltpWriteOnly => i64::from(o.delete_inserts),
        Test::OltpInsert | Test::OltpDelete => 1,
        // A flush of the 512 KiB buffer: rows of at least `(1,1),` each.
        Test::BulkInsert => (super::client::BULK_BYTES / 6) as i64,
        _ => 0,
    }
}

/// The checks after a step; `unknown` events of unknown outcome since the last one.
pub fn after_step(o: &SysbenchOptions, b: &Backend, unknown: u64, stop: &Stop) -> Vec<Check> {
    let now = read(b, o, stop);
    let (rows, k, k_unknown, before) = o.books.reset(now.as_ref().ok().copied());
    let (now, before) = match (now, before) {
        (Ok(now), Some(before)) => (now, before),
        (Err(e), _) => return vec![not_run(&format!("could not run: {e}"))],
        (_, None) => {
            return vec![not_run(
                "could not run: the counts before the step were not read",
            )];
        }
    };
    let slack = unknown as i64 * rows_per_event(o);
    let grew = now.0 - before.0;
    let passed = grew >= rows - slack && grew <= rows + slack;
    let unsure = match unknown {
        0 => String::new(),
        n => format!(" (give or take {slack}: {n} events of unknown outcome)"),
    };
    let tables = o.table_names().len();
    let summary = match passed {
        true => format!(
            "the {tables} table(s) changed by {grew:+} rows, as the clients' inserts and deletes say{unsure}"
        ),
        false => format!(
            "the {tables} table(s) changed by {grew:+} rows, but the clients' inserts and deletes say {rows:+}{unsure}: rows were lost or written twice"
        ),
    };
    let mut checks = vec![Check {
        name: "sysbench_rows".into(),
        shard: None,
        passed,
        figures: BTreeMap::from([
            ("rows_before".to_string(), before.0),
            ("rows_after".to_string(), now.0),
            ("rows_by_clients".to_string(), rows),
            ("unknown_outcome".to_string(), unknown as i64),
        ]),
        summary,
    }];
    // k's sum proves something only where index updates alone changed it.
    if !k_unknown && !o.test.bulk() {
        let k_grew = now.1 - before.1;
        let slack = unknown as i64 * i64::from(o.index_updates);
        let passed = k_grew >= k - slack && k_grew <= k + slack;
        checks.push(Check {
            name: "sysbench_k_sum".into(),
            shard: None,
            passed,
            figures: BTreeMap::from([
                ("k_sum_before".to_string(), before.1),
                ("k_sum_after".to_string(), now.1),
                ("index_updates".to_string(), k),
            ]),
            summary: match passed {
                true => format!(
                    "the sum of k grew by {k_grew}, as the {k} index updates that changed a row say"
                ),
                false => format!(
                    "the sum of k grew by {k_grew}, but {k} index updates changed a row: updates were lost or applied twice"
                ),
            },
        });
    }
    checks
}

fn not_run(summary: &str) -> Check {
    Check {
        name: "sysbench_rows".into(),
        shard: None,
        passed: false,
        figures: BTreeMap::new(),
        summary: summary.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_books_hand_over_what_happened_since_the_last_check() {
        let b = Books::default();
        b.reset(Some((100, 5000)));
        b.add(3, 0, true);
        b.add(-1, 2, false);
        let (rows, k, unknown_k, before) = b.reset(Some((102, 5010)));
        assert_eq!(
            (rows, k, unknown_k, before),
            (2, 2, true, Some((100, 5000)))
        );
        let (rows, _, unknown_k, before) = b.reset(None);
        assert_eq!((rows, unknown_k, before), (0, false, Some((102, 5010))));
    }
}
