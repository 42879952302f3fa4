//! Gray's four scan tables, and how perflab creates, loads and measures them on every engine.
//!
//! | option | table | bytes of data per row | rows in `--size 64m` |
//! |---|---|---|---|
//! | `ten` | `scan_ten` | 10 | 6,710,886 |
//! | `hundred` | `scan_hundred` | 100 | 671,088 |
//! | `thousand` | `scan_thousand` | 1,000 | 67,108 |
//! | `page` | `scan_page` | 8,000 | 8,388 |
//!
//! A row is `a integer` (4 bytes, what the predicates read) and `pad varchar(N)` making up
//! the rest. Row `i` (from 0) has `a = ((i % 1000) * 7919) % 1000`: every value 0..999 once
//! per thousand rows, in a scattered order, and `a = 0` exactly when `i % 1000 = 0`, so the
//! trivial predicate's answer is `ceil(rows / 1000)` on every engine. The pad is text that
//! varies from row to row (hex digits), so a compressing filesystem or engine cannot shrink it
//! much.
//!
//! Why 8,000 bytes for `page` and not 8,192: the row has to stay whole in one page of each
//! engine, as Gray's 8 KB rows did in SQL Server's pages. PostgreSQL keeps at most about
//! 8,140 bytes of a row in an 8 KiB page (and the pad column is stored `PLAIN`, so it is
//! neither compressed nor moved out of line); InnoDB keeps a row of up to about 8,100 bytes in
//! its 16 KiB page before moving long columns off the page; SQLite (with the 8 KiB pages
//! perflab gives the databases it creates) keeps up to 8,157 bytes in a leaf cell before
//! overflowing.
//!
//! Sizes are counted in bytes of data (`--size` / bytes per row = rows); what the engine makes
//! of them on disk, its row headers and page slack included, is measured after loading
//! ([`table_bytes_sql`]) and is what MB/s is computed from.

use crate::sql::schema::{SEQ, Table};
use crate::sql::sql::Dialect;
use serde::Serialize;

/// One of the four tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanTable {
    Ten,
    Hundred,
    Thousand,
    Page,
}

/// How many rows share one value of `a`, and so how rare `a = 0` is.
pub const SPREAD: u64 = 1000;
/// The multiplier that scatters `a` over each thousand rows (a prime, coprime to 1000).
const SCATTER: u64 = 7919;
/// Bytes of `a`.
pub const A_BYTES: u64 = 4;
/// Rows one loading statement inserts: the helper table joined with itself.
const CHUNK: u64 = 1_000_000;

const TEN: Table = Table {
    name: "scan_ten",
    columns: "a integer NOT NULL, pad varchar(6) NOT NULL",
    key: "",
};
const HUNDRED: Table = Table {
    name: "scan_hundred",
    columns: "a integer NOT NULL, pad varchar(96) NOT NULL",
    key: "",
};
const THOUSAND: Table = Table {
    name: "scan_thousand",
    columns: "a integer NOT NULL, pad varchar(996) NOT NULL",
    key: "",
};
const PAGE: Table = Table {
    name: "scan_page",
    columns: "a integer NOT NULL, pad varchar(7996) NOT NULL",
    key: "",
};

impl ScanTable {
    pub const ALL: [ScanTable; 4] = [
        ScanTable::Ten,
        ScanTable::Hundred,
        ScanTable::Thousand,
        ScanTable::Page,
    ];

    /// The option's word (`--table ten`).
    pub fn name(self) -> &'static str {
        match self {
            ScanTable::Ten => "ten",
            ScanTable::Hundred => "hundred",
            ScanTable::Thousand => "thousand",
            ScanTable::Page => "page",
        }
    }

    pub fn parse(word: &str) -> Option<ScanTable> {
        ScanTable::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(word.trim()))
    }

    /// The table's declaration.
    pub fn table(self) -> &'static Table {
        match self {
            ScanTable::Ten => &TEN,
            ScanTable::Hundred => &HUNDRED,
            ScanTable::Thousand => &THOUSAND,
            ScanTable::Page => &PAGE,
        }
    }

    /// The SQL table's name.
    pub fn sql_name(self) -> &'static str {
        self.table().name
    }

    /// Bytes of data in one row: `a` and the pad.
    pub fn row_bytes(self) -> u64 {
        match self {
            ScanTable::Ten => 10,
            ScanTable::Hundred => 100,
            ScanTable::Thousand => 1000,
            ScanTable::Page => 8000,
        }
    }

    pub fn pad_bytes(self) -> u64 {
        self.row_bytes() - A_BYTES
    }

    /// Rows in a table of `size` bytes of data (at least one).
    pub fn rows(self, size: u64) -> u64 {
        (size / self.row_bytes()).max(1)
    }
}

/// How big each table is: bytes of row data (`--size`, rows = bytes / row size) or the same
/// number of rows in every table (`--rows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableSize {
    Bytes(u64),
    Rows(u64),
}

impl TableSize {
    pub fn rows(self, table: ScanTable) -> u64 {
        match self {
            TableSize::Bytes(b) => table.rows(b),
            TableSize::Rows(r) => r.max(1),
        }
    }

    /// Bytes of row data in `table`.
    pub fn data_bytes(self, table: ScanTable) -> u64 {
        self.rows(table).saturating_mul(table.row_bytes())
    }
}

/// `a` of row `i`.
pub fn a_of(i: u64) -> i32 {
    ((i % SPREAD) * SCATTER % SPREAD) as i32
}

/// The trivial predicate's answer over `rows` rows: how many have `a = 0`.
pub fn zeros(rows: u64) -> u64 {
    rows.div_ceil(SPREAD)
}

/// Every table perflab's scan may create, for cleanup.
pub fn known_tables() -> Vec<&'static str> {
    ScanTable::ALL.iter().map(|t| t.sql_name()).collect()
}

/// Statements that fill `table` with `rows` rows, one chunk of up to `chunk` rows (at most a
/// million: the helper table joined with itself) each, in order, with the rows each
/// inserts. The rows are generated by the server from the helper table ([`SEQ`]).
pub fn load_sql(table: ScanTable, rows: u64, d: Dialect, chunk: u64) -> Vec<(u64, String)> {
    let pad = table.pad_bytes();
    let chunk = chunk.clamp(1, CHUNK);
    let mut out = Vec::new();
    let mut base = 0;
    while base < rows {
        let n = (rows - base).min(chunk);
        let i = format!("({base} + x.n * 1000 + y.n)");
        let pad_sql = match d {
            // randomblob: text that does not compress; 2 hex digits per byte.
            Dialect::Sqlite => format!("substr(hex(randomblob({})), 1, {pad})", pad.div_ceil(2)),
            // Measured on PostgreSQL 15: left(repeat()) loads in 60% of rpad's time; on
            // MariaDB 10.11 rpad is the faster.
            Dialect::Postgres => format!("left(repeat(md5({i}::text), {}), {pad})", pad / 32 + 1),
            Dialect::Mysql => format!("rpad('', {pad}, md5({i}))"),
        };
        out.push((n, format!(
            "INSERT INTO {} (a, pad) SELECT (({i} % {SPREAD}) * {SCATTER}) % {SPREAD}, {pad_sql} FROM {SEQ} x, {SEQ} y WHERE x.n < {} AND x.n * 1000 + y.n < {n}",
            table.sql_name(),
            n.div_ceil(1000),
        )));
        base += n;
    }
    out
}

/// What to run right after creating the tables, before loading: PostgreSQL would compress
/// and move out of line a pad longer than about 2 KB; `PLAIN` keeps it in the row.
pub fn after_create_sql(table: ScanTable, d: Dialect) -> Option<String> {
    (d == Dialect::Postgres).then(|| {
        format!(
            "ALTER TABLE {} ALTER COLUMN pad SET STORAGE PLAIN",
            table.sql_name()
        )
    })
}

/// The table's size as the engine stores it (pages, row headers and slack included).
pub fn table_bytes_sql(table: ScanTable, d: Dialect) -> String {
    let name = table.sql_name();
    match d {
        Dialect::Sqlite => {
            format!("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = '{name}'")
        }
        Dialect::Postgres => format!("SELECT pg_relation_size('{name}')"),
        Dialect::Mysql => format!(
            "SELECT data_length FROM information_schema.tables WHERE table_schema = database() AND table_name = '{name}'"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_is_zero_once_per_thousand_rows_and_takes_every_value() {
        let mut seen = [0u32; 1000];
        for i in 0..1000 {
            seen[a_of(i) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!((0..10_000).filter(|&i| a_of(i) == 0).count(), 10);
        assert_eq!(zeros(1), 1);
        assert_eq!(zeros(1000), 1);
        assert_eq!(zeros(1001), 2);
        assert_eq!(
            (0..2500u64).filter(|&i| a_of(i) == 0).count() as u64,
            zeros(2500)
        );
    }

    #[test]
    fn tables_parse_and_size() {
        assert_eq!(ScanTable::parse("Page"), Some(ScanTable::Page));
        assert_eq!(ScanTable::parse("pages"), None);
        assert_eq!(ScanTable::Ten.rows(64 << 20), 6_710_886);
        assert_eq!(ScanTable::Page.rows(1), 1);
        for t in ScanTable::ALL {
            assert!(
                t.table()
                    .columns
                    .contains(&format!("varchar({})", t.pad_bytes()))
            );
        }
    }

    #[test]
    fn loading_is_chunked_and_covers_every_row() {
        let sql = load_sql(ScanTable::Ten, 2_500_001, Dialect::Sqlite, u64::MAX);
        assert_eq!(sql.len(), 3);
        assert_eq!(sql.iter().map(|c| c.0).sum::<u64>(), 2_500_001);
        assert!(sql[0].1.contains("(0 + x.n * 1000 + y.n)"));
        assert!(sql[0].1.contains("< 1000000"));
        assert!(sql[2].1.contains("(2000000 + x.n * 1000 + y.n)"));
        assert!(sql[2].1.contains("x.n < 501 AND x.n * 1000 + y.n < 500001"));
        let small = load_sql(ScanTable::Ten, 25_000, Dialect::Postgres, 10_000);
        assert_eq!(
            small.iter().map(|c| c.0).collect::<Vec<_>>(),
            [10_000, 10_000, 5_000]
        );
        assert!(small[2].1.contains("(20000 + x.n * 1000 + y.n)"));
        let pad = |d| load_sql(ScanTable::Page, 3, d, 1000)[0].1.clone();
        assert!(pad(Dialect::Mysql).contains("rpad('', 7996"));
        assert!(pad(Dialect::Postgres).contains("left(repeat(md5("));
        assert!(pad(Dialect::Sqlite).contains("hex(randomblob(3998))"));
    }
}
