//! The consistency checks after every step, and the ledger of commits they need.
//!
//! After each step perflab checks, on every shard, the workload's own rule: DebitCredit's
//! four sums agree (accounts, tellers, branches, history deltas), order entry's counts add up.
//! A commit lost whole keeps the books balanced, and so does one applied twice: so for
//! DebitCredit the history, which gains one row per committed transaction, must also have
//! grown by exactly the transactions the clients saw commit since the last check (warmups
//! included). A transaction whose connection broke or timed out may or may not have
//! committed; those widen the allowed growth by their number, and the check says so.
//!
//! Every check is written into the step ([`Check`]) with what it counted, passed or not.

use super::OltpSpec;
use super::debitcredit;
use super::mix::Mix;
use super::orderentry;
use super::tpcc;
use crate::record::Check;
use crate::stop::Stop;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the clients saw happen, between two checks.
#[derive(Debug, Default)]
pub struct Ledger {
    committed: AtomicU64,
    /// Transactions cut off by a broken connection or a timeout: committed or not.
    unknown: AtomicU64,
    /// History rows over all shards at the last check (or after loading).
    history_rows: Mutex<Option<i64>>,
    /// Checks made after loading, written into the first step.
    after_load: Mutex<Vec<Check>>,
}

impl Ledger {
    pub fn commit(&self) {
        self.committed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn unknown(&self) {
        self.unknown.fetch_add(1, Ordering::Relaxed);
    }

    /// Starts counting afresh from `rows` history rows (after loading, or at a check).
    fn reset(&self, rows: Option<i64>) -> (u64, u64, Option<i64>) {
        let before = std::mem::replace(
            &mut *self.history_rows.lock().unwrap_or_else(|p| p.into_inner()),
            rows,
        );
        (
            self.committed.swap(0, Ordering::Relaxed),
            self.unknown.swap(0, Ordering::Relaxed),
            before,
        )
    }
}

/// Takes the ledger's starting point once the tables are there. TPC-C's twelve conditions
/// are checked here after a fresh load (a load that breaks one fails the run before any
/// step) and go into the first step's checks.
pub fn baseline(spec: &OltpSpec, stop: &Stop, note: &dyn Fn(&str)) -> Result<(), String> {
    // A user's scripts keep books perflab does not know: nothing to check them against.
    if spec.scripts.is_some() {
        return Ok(());
    }
    // sysbench's tests: the rows (and k's sum) they hold now.
    if let Some(o) = &spec.sysbench {
        spec.ledger.reset(None);
        if let Some(b) = spec.backends.first() {
            super::sysbench::checks::baseline(o, b, stop);
        }
        return Ok(());
    }
    let rows = if spec.mix == Mix::Debitcredit {
        history_rows(spec, stop)
    } else {
        None
    };
    spec.ledger.reset(rows);
    // After `oltp run` on tables loaded earlier, the first step's checks say it.
    if spec.mix == Mix::Tpcc && spec.phases == crate::workload::phases::Phases::All {
        let fresh = true;
        note("prepare: checking the twelve consistency conditions");
        let several = spec.backends.len() > 1;
        let mut all = Vec::new();
        for (i, b) in spec.backends.iter().enumerate() {
            let found = b
                .connect_session(stop)
                .and_then(|mut c| {
                    tpcc::consistency::check(&mut *c, fresh, several.then_some(i + 1))
                })
                .map_err(|e| format!("the consistency check could not run: {e}"))?;
            all.extend(found);
        }
        if let Some(bad) = all.iter().find(|c| !c.passed) {
            return Err(format!(
                "the loaded database is inconsistent: {}",
                bad.summary
            ));
        }
        *spec
            .ledger
            .after_load
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = all;
    }
    Ok(())
}

/// History rows over all shards; None when any shard cannot say.
fn history_rows(spec: &OltpSpec, stop: &Stop) -> Option<i64> {
    spec.backends
        .iter()
        .map(|b| {
            let mut c = b.connect_session(stop).ok()?;
            debitcredit::books(&mut *c).ok().map(|b| b.history_rows)
        })
        .sum()
}

/// Every check after a step, in order: each shard's rule, then (DebitCredit) the history's
/// growth over all shards.
pub fn after_step(spec: &OltpSpec, stop: &Stop) -> Vec<Check> {
    if spec.scripts.is_some() {
        return Vec::new();
    }
    if let Some(o) = &spec.sysbench {
        // The events of unknown outcome since the last check widen what the rows may be.
        let (_, unknown, _) = spec.ledger.reset(None);
        return (spec.backends.first())
            .map(|b| super::sysbench::checks::after_step(o, b, unknown, stop))
            .unwrap_or_default();
    }
    let several = spec.backends.len() > 1;
    let mut checks = std::mem::take(
        &mut *spec
            .ledger
            .after_load
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    );
    let mut rows: Option<i64> = Some(0);
    for (i, b) in spec.backends.iter().enumerate() {
        let shard = several.then_some(i + 1);
        let name = match spec.mix {
            Mix::Debitcredit => "books_balance",
            Mix::Orderentry => "order_counts",
            Mix::Tpcc => {
                checks.extend(tpcc_conditions(b, shard, stop));
                continue;
            }
            // Checked above, from its own books.
            Mix::Sysbench => continue,
        };
        let mut history = 0;
        let found = retrying(stop, || {
            b.connect_session(stop).and_then(|mut c| match spec.mix {
                Mix::Debitcredit => debitcredit::books(&mut *c).map(|books| {
                    history = books.history_rows;
                    books_check(books)
                }),
                Mix::Orderentry => orderentry::check(&mut *c).map(order_check),
                Mix::Tpcc | Mix::Sysbench => Err(crate::sql::sql::DbError::other("checked above")),
            })
        });
        if found.is_ok() {
            rows = rows.map(|r| r + history);
        }
        let check = match found {
            Ok((passed, figures, summary)) => Check {
                name: name.into(),
                shard,
                passed,
                figures,
                summary,
            },
            Err(e) => {
                rows = None;
                Check {
                    name: name.into(),
                    shard,
                    passed: false,
                    figures: BTreeMap::new(),
                    summary: format!("could not run: {e}"),
                }
            }
        };
        checks.push(check);
    }
    let (committed, unknown, before) = spec.ledger.reset(rows);
    if spec.mix == Mix::Debitcredit
        && let (Some(before), Some(after)) = (before, rows)
    {
        let (committed, unknown) = if spec.select_only {
            (0, 0)
        } else {
            (committed as i64, unknown as i64)
        };
        checks.push(growth_check(before, after, committed, unknown));
    }
    checks
}

type Found = (bool, BTreeMap<String, i64>, String);

/// Runs a check, again after a connection lost, garbled or unanswered (a network that drops
/// one connection should not leave the database unchecked): three tries, a moment apart.
fn retrying<T>(
    stop: &Stop,
    mut check: impl FnMut() -> Result<T, crate::sql::sql::DbError>,
) -> Result<T, crate::sql::sql::DbError> {
    use crate::sql::sql::DbErrorKind as K;
    let mut tries = 0;
    loop {
        match check() {
            Err(e)
                if tries < 2
                    && !stop.is_set()
                    && matches!(e.kind, K::Broken | K::Protocol | K::TimedOut) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// TPC-C's conditions on one shard, or one failed check saying why they could not run.
fn tpcc_conditions(
    b: &crate::sql::backend::Backend,
    shard: Option<usize>,
    stop: &Stop,
) -> Vec<Check> {
    match b
        .connect_session(stop)
        .and_then(|mut c| tpcc::consistency::check(&mut *c, false, shard))
    {
        Ok(found) => found,
        Err(e) => vec![Check {
            name: "tpcc_consistency".into(),
            shard,
            passed: false,
            figures: BTreeMap::new(),
            summary: format!("could not run: {e}"),
        }],
    }
}

fn books_check(b: debitcredit::Books) -> Found {
    let figures = BTreeMap::from([
        ("accounts".to_string(), b.accounts),
        ("tellers".to_string(), b.tellers),
        ("branches".to_string(), b.branches),
        ("history".to_string(), b.history),
    ]);
    let summary = if b.balanced() {
        format!("the books balance: every sum is {}", b.accounts)
    } else {
        format!("the books do not balance ({b})")
    };
    (b.balanced(), figures, summary)
}

fn order_check(c: orderentry::Counts) -> Found {
    let figures = BTreeMap::from([
        ("customers".to_string(), c.customers),
        ("orders".to_string(), c.orders),
        ("lines".to_string(), c.lines),
        ("customers_uneven".to_string(), c.uneven),
        ("order_totals".to_string(), c.order_totals),
        ("line_amounts".to_string(), c.line_amounts),
    ]);
    let summary = if c.consistent() {
        format!(
            "the counts add up: {} customers, {} orders, {} lines, totals match",
            c.customers, c.orders, c.lines
        )
    } else {
        format!("the counts do not add up ({c})")
    };
    (c.consistent(), figures, summary)
}

/// The history grew by the committed transactions, give or take those of unknown outcome.
fn growth_check(before: i64, after: i64, committed: i64, unknown: i64) -> Check {
    let growth = after - before;
    let passed = growth >= committed && growth <= committed + unknown;
    let unsure = if unknown > 0 {
        format!(" (+ up to {unknown} of unknown outcome)")
    } else {
        String::new()
    };
    let summary = if passed {
        format!("the history grew by {growth} rows for {committed} commits{unsure}")
    } else if growth < committed {
        format!(
            "the history grew by {growth} rows but clients saw {committed} commits{unsure}: {} committed transactions were lost",
            committed - growth
        )
    } else {
        format!(
            "the history grew by {growth} rows but clients saw {committed} commits{unsure}: {} rows more than committed",
            growth - committed - unknown
        )
    };
    Check {
        name: "history_growth".into(),
        shard: None,
        passed,
        figures: BTreeMap::from([
            ("rows_before".to_string(), before),
            ("rows_after".to_string(), after),
            ("committed".to_string(), committed),
            ("unknown_outcome".to_string(), unknown),
        ]),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_must_match_the_commits_within_the_unknown() {
        assert!(growth_check(100, 150, 50, 0).passed);
        assert!(growth_check(100, 152, 50, 2).passed);
        let lost = growth_check(100, 149, 50, 0);
        assert!(!lost.passed);
        assert!(
            lost.summary.contains("1 committed transactions were lost"),
            "{}",
            lost.summary
        );
        let doubled = growth_check(100, 151, 50, 0);
        assert!(!doubled.passed);
        assert!(
            doubled.summary.contains("1 rows more"),
            "{}",
            doubled.summary
        );
        assert_eq!(growth_check(0, 7, 7, 0).figures["committed"], 7);
    }
}
