//! The star schema's tables, the summary tables the aggregate phase builds, and the checks
//! that compare what the database holds with the [`Truth`].
//!
//! The dimensions carry their primary keys from the start (they are small); the fact table
//! has none (a warehouse's fact table is appended to in bulk, and no query looks a sale up by
//! its number). The summary tables are built with `CREATE TABLE ... AS SELECT`, the same SQL
//! on every engine.

use super::data::{self, Totals, Truth};
use crate::record::Check;
use crate::sql::schema::Table;
use crate::sql::sql::{Conn, DbError, Dialect};

pub const DATE: Table = Table {
    name: "olap_date",
    columns: "date_id integer NOT NULL PRIMARY KEY, year integer NOT NULL, quarter integer NOT NULL, month integer NOT NULL, day integer NOT NULL",
    key: "",
};
pub const PRODUCT: Table = Table {
    name: "olap_product",
    columns: "product_id integer NOT NULL PRIMARY KEY, category_id integer NOT NULL, brand_id integer NOT NULL, price integer NOT NULL, name varchar(32) NOT NULL",
    key: "",
};
pub const STORE: Table = Table {
    name: "olap_store",
    columns: "store_id integer NOT NULL PRIMARY KEY, region_id integer NOT NULL, city_id integer NOT NULL, name varchar(32) NOT NULL",
    key: "",
};
pub const SALES: Table = Table {
    name: "olap_sales",
    columns: "sale_id bigint NOT NULL, date_id integer NOT NULL, product_id integer NOT NULL, store_id integer NOT NULL, quantity integer NOT NULL, amount bigint NOT NULL",
    key: "",
};

/// The tables the load phase fills, dimensions first.
pub const LOADED: [Table; 4] = [DATE, PRODUCT, STORE, SALES];

/// The column names of a loaded table, in its files' order.
pub fn columns(t: &Table) -> &'static [&'static str] {
    match t.name {
        "olap_date" => &["date_id", "year", "quarter", "month", "day"],
        "olap_product" => &["product_id", "category_id", "brand_id", "price", "name"],
        "olap_store" => &["store_id", "region_id", "city_id", "name"],
        _ => &[
            "sale_id",
            "date_id",
            "product_id",
            "store_id",
            "quantity",
            "amount",
        ],
    }
}

/// A summary table of the aggregate phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub name: &'static str,
    /// The kind of op that builds it.
    pub kind: &'static str,
    select: &'static str,
}

pub const SUMMARIES: [Summary; 3] = [
    Summary {
        name: "olap_agg_quarter_region",
        kind: "quarter_region",
        select: "SELECT d.year, d.quarter, t.region_id, count(*) AS sales, sum(s.quantity) AS quantity, sum(s.amount) AS amount \
                 FROM olap_sales s JOIN olap_date d ON d.date_id = s.date_id JOIN olap_store t ON t.store_id = s.store_id \
                 GROUP BY d.year, d.quarter, t.region_id",
    },
    Summary {
        name: "olap_agg_month_category",
        kind: "month_category",
        select: "SELECT d.year, d.month, p.category_id, count(*) AS sales, sum(s.quantity) AS quantity, sum(s.amount) AS amount \
                 FROM olap_sales s JOIN olap_date d ON d.date_id = s.date_id JOIN olap_product p ON p.product_id = s.product_id \
                 GROUP BY d.year, d.month, p.category_id",
    },
    Summary {
        name: "olap_agg_year_product",
        kind: "year_product",
        select: "SELECT d.year, s.product_id, count(*) AS sales, sum(s.quantity) AS quantity, sum(s.amount) AS amount \
                 FROM olap_sales s JOIN olap_date d ON d.date_id = s.date_id \
                 GROUP BY d.year, s.product_id",
    },
];

impl Summary {
    pub fn build_sql(&self) -> String {
        format!("CREATE TABLE {} AS {}", self.name, self.select)
    }

    /// The cells of the truth this table holds, one row per non-empty cell.
    fn cells<'t>(&self, truth: &'t Truth) -> &'t [Totals] {
        match self.kind {
            "quarter_region" => &truth.quarter_region,
            "month_category" => &truth.month_category,
            _ => &truth.year_product,
        }
    }
}

/// Statistics for the planner after a table is filled or built.
pub fn analyze_sql(d: Dialect, tables: &[&str]) -> Vec<String> {
    match d {
        Dialect::Postgres => vec![format!("ANALYZE {}", tables.join(", "))],
        Dialect::Mysql => vec![format!("ANALYZE TABLE {}", tables.join(", "))],
        Dialect::Sqlite => tables.iter().map(|t| format!("ANALYZE {t}")).collect(),
    }
}

/// Empties the loaded tables (and drops the summaries built from them), for a load to start
/// from nothing.
pub fn empty_loaded(conn: &mut dyn Conn) -> Result<(), DbError> {
    drop_summaries(conn)?;
    for t in LOADED {
        match conn.dialect() {
            Dialect::Sqlite => conn.batch(&format!("DELETE FROM {}", t.name))?,
            _ => conn.batch(&format!("TRUNCATE TABLE {}", t.name))?,
        }
    }
    Ok(())
}

pub fn drop_summaries(conn: &mut dyn Conn) -> Result<(), DbError> {
    for s in SUMMARIES {
        if crate::sql::sql::count_tables(conn, &[s.name])? > 0 {
            conn.batch(&format!("DROP TABLE {}", s.name))?;
        }
    }
    Ok(())
}

/// Every table name the workload may create: what cleanup may drop when perflab listed it.
pub fn known_tables() -> Vec<&'static str> {
    LOADED
        .iter()
        .map(|t| t.name)
        .chain(SUMMARIES.iter().map(|s| s.name))
        .collect()
}

fn totals_check(name: &str, what: String, got: [i64; 4], want: [i64; 4]) -> Check {
    let labels = ["rows", "sales", "quantity", "amount"];
    let mut figures = std::collections::BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        figures.insert(l.to_string(), got[i]);
        figures.insert(format!("expected_{l}"), want[i]);
    }
    let passed = got == want;
    let summary = if passed {
        format!(
            "{what}: {} rows, {} sales, amount {}",
            got[0], got[1], got[3]
        )
    } else {
        let diff: Vec<String> = labels
            .iter()
            .enumerate()
            .filter(|(i, _)| got[*i] != want[*i])
            .map(|(i, l)| format!("{l} {} (expected {})", got[i], want[i]))
            .collect();
        format!("{what}: {}", diff.join(", "))
    };
    Check {
        name: name.into(),
        shard: None,
        passed,
        figures,
        summary,
    }
}

/// After the load: every table's row count, and the fact table's sums.
pub fn check_load(conn: &mut dyn Conn, truth: &Truth) -> Result<Check, DbError> {
    let mut dims = Vec::new();
    for (t, want) in [
        (DATE, truth.days.len() as i64),
        (PRODUCT, data::PRODUCTS as i64),
        (STORE, data::STORES as i64),
    ] {
        let got = conn
            .query_row(&format!("SELECT count(*) FROM {}", t.name))?
            .map_or(0, |r| r[0]);
        if got != want {
            dims.push(format!("{} has {got} rows, expected {want}", t.name));
        }
    }
    let r = conn
        .query_row("SELECT count(*), sum(quantity), sum(amount) FROM olap_sales")?
        .unwrap_or_default();
    let get = |i: usize| r.get(i).copied().unwrap_or(0);
    let t = truth.total;
    let mut check = totals_check(
        "load_totals",
        "olap_sales".into(),
        [get(0), get(0), get(1), get(2)],
        [t.sales, t.sales, t.quantity, t.amount],
    );
    if !dims.is_empty() {
        check.passed = false;
        check.summary = format!("{}; {}", dims.join(", "), check.summary);
    }
    Ok(check)
}

/// After the aggregates: each summary table's rows (one per non-empty cell) and sums.
pub fn check_summaries(conn: &mut dyn Conn, truth: &Truth) -> Result<Vec<Check>, DbError> {
    let mut out = Vec::new();
    for s in SUMMARIES {
        let r = conn
            .query_row(&format!(
                "SELECT count(*), sum(sales), sum(quantity), sum(amount) FROM {}",
                s.name
            ))?
            .unwrap_or_default();
        let get = |i: usize| r.get(i).copied().unwrap_or(0);
        let cells = s.cells(truth);
        let rows = cells.iter().filter(|c| c.sales > 0).count() as i64;
        let t = truth.total;
        out.push(totals_check(
            "aggregate_totals",
            s.name.into(),
            [get(0), get(1), get(2), get(3)],
            [rows, t.sales, t.quantity, t.amount],
        ));
    }
    Ok(out)
}
