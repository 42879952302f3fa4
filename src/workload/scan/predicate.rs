//! The two predicates of Gray's scan study, written so that every engine computes the same
//! thing, and the answers perflab expects from them.
//!
//! - **trivial**: `SELECT count(*) FROM t WHERE a = 0`: almost no work per row, so the scan
//!   runs as fast as the engine can read rows (the disks, or memory bandwidth).
//! - **complex**: the sample standard deviation of `sqrt(sin(a*pi())*sin(a*pi()) +
//!   cos(a*pi())*cos(a*pi())) - 1.0`: two sines, two cosines and a square root per row, so
//!   the scan runs as fast as the CPUs can compute. The value is zero but for rounding, on
//!   every engine.
//!
//! PostgreSQL and MySQL/MariaDB have `stddev_samp`. SQLite has no standard deviation: it is
//! computed from sums as `sqrt((sum(x*x) - sum(x)*sum(x)/n) / (n - 1))` over a subquery that
//! evaluates the expression once per row (`LIMIT -1` keeps SQLite from flattening the
//! subquery, which would compute the expression three times per row). SQLite's `sin`, `cos`,
//! `sqrt` and `pi` are perflab's C math functions registered on every connection
//! (`crate::engine::sqlite_math`), with the names and rules of the `sqlite3` shell's own.
//!
//! The native ceiling has a third predicate, **read**: every byte of the table read and
//! nothing tested, perflab's memory read kernel over the same bytes, the ceiling of the
//! ceiling.

use super::tables::{ScanTable, zeros};
use crate::sql::sql::Dialect;
use serde::Serialize;

/// Largest standard deviation accepted for the complex predicate: its exact value is zero,
/// and rounding leaves about 1e-16.
pub const COMPLEX_TOLERANCE: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Predicate {
    /// Native only: read every byte, test nothing.
    Read,
    Trivial,
    Complex,
}

impl Predicate {
    pub fn name(self) -> &'static str {
        match self {
            Predicate::Read => "read",
            Predicate::Trivial => "trivial",
            Predicate::Complex => "complex",
        }
    }

    /// `trivial` or `complex` (`read` is the native ceiling's own, not an option).
    pub fn parse(word: &str) -> Option<Predicate> {
        match word.trim().to_ascii_lowercase().as_str() {
            "trivial" => Some(Predicate::Trivial),
            "complex" => Some(Predicate::Complex),
            _ => None,
        }
    }

    /// The query on `table`, in the engine's SQL. None for `read`, which only the native
    /// ceiling runs.
    pub fn sql(self, table: ScanTable, d: Dialect) -> Option<String> {
        let t = table.sql_name();
        let x = "sqrt(sin(a * pi()) * sin(a * pi()) + cos(a * pi()) * cos(a * pi())) - 1.0";
        Some(match (self, d) {
            (Predicate::Read, _) => return None,
            (Predicate::Trivial, _) => format!("SELECT count(*) FROM {t} WHERE a = 0"),
            (Predicate::Complex, Dialect::Sqlite) => format!(
                "SELECT sqrt((sum(x * x) - sum(x) * sum(x) / count(*)) / (count(*) - 1)) FROM (SELECT {x} AS x FROM {t} LIMIT -1)"
            ),
            (Predicate::Complex, _) => format!("SELECT stddev_samp({x}) FROM {t}"),
        })
    }

    /// Checks an engine's answer (its first column as text) over a table of `rows` rows.
    pub fn check(self, answer: Option<&str>, rows: u64) -> Result<(), String> {
        match self {
            Predicate::Read => Ok(()),
            Predicate::Trivial => {
                let want = zeros(rows);
                match answer.map(|a| a.trim().parse::<u64>()) {
                    Some(Ok(got)) if got == want => Ok(()),
                    _ => Err(format!(
                        "wrong answer: count(*) where a = 0 gave {}, expected {want}",
                        answer.unwrap_or("no row")
                    )),
                }
            }
            Predicate::Complex => {
                // One row: the deviation is undefined (NULL), which is what the engines say.
                if rows < 2 && answer.is_none_or(|a| a.trim().is_empty()) {
                    return Ok(());
                }
                match answer.map(|a| a.trim().parse::<f64>()) {
                    Some(Ok(v)) if v.is_finite() && v.abs() <= COMPLEX_TOLERANCE => Ok(()),
                    _ => Err(format!(
                        "wrong answer: the complex predicate gave {}, expected 0 (within {COMPLEX_TOLERANCE:e})",
                        answer.unwrap_or("no row")
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_gets_its_own_sql() {
        let t = ScanTable::Ten;
        assert_eq!(
            Predicate::Trivial.sql(t, Dialect::Postgres).unwrap(),
            "SELECT count(*) FROM scan_ten WHERE a = 0"
        );
        assert!(
            Predicate::Complex
                .sql(t, Dialect::Mysql)
                .unwrap()
                .starts_with("SELECT stddev_samp(")
        );
        let lite = Predicate::Complex.sql(t, Dialect::Sqlite).unwrap();
        assert!(lite.contains("LIMIT -1"), "{lite}");
        assert_eq!(Predicate::Read.sql(t, Dialect::Sqlite), None);
        assert_eq!(Predicate::parse(" Complex"), Some(Predicate::Complex));
        assert_eq!(Predicate::parse("read"), None);
    }

    #[test]
    fn answers_are_checked() {
        assert!(Predicate::Trivial.check(Some("3"), 2001).is_ok());
        assert!(Predicate::Trivial.check(Some("2"), 2001).is_err());
        assert!(Predicate::Trivial.check(None, 2001).is_err());
        assert!(Predicate::Complex.check(Some("1.2e-17"), 10).is_ok());
        assert!(Predicate::Complex.check(Some("0"), 10).is_ok());
        assert!(Predicate::Complex.check(Some("0.5"), 10).is_err());
        assert!(Predicate::Complex.check(Some("NaN"), 10).is_err());
        assert!(Predicate::Complex.check(None, 1).is_ok());
    }
}
