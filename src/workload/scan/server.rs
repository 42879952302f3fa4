//! What perflab asks an engine about a scan besides the scan itself: the query plan, how big
//! the table is as stored, how big the server's cache is, and how many of the pages it read
//! came from storage.
//!
//! | | SQLite | PostgreSQL | MySQL / MariaDB |
//! |---|---|---|---|
//! | plan | `EXPLAIN QUERY PLAN` | `EXPLAIN` (nodes, workers planned) | `EXPLAIN FORMAT=JSON` (access type) |
//! | table bytes | `dbstat` | `pg_relation_size` | `information_schema.tables.data_length` |
//! | cache | the OS page cache | `shared_buffers` | `innodb_buffer_pool_size` |
//! | pages from storage / all | (the device's counters) | `pg_statio_user_tables`: `heap_blks_read` / `heap_blks_read + heap_blks_hit` | `Innodb_buffer_pool_reads` / `Innodb_buffer_pool_read_requests` |
//!
//! PostgreSQL's table statistics reach `pg_statio_user_tables` when a backend reports them,
//! at most once a second, so a step's share of pages read from storage is a little behind
//! on short steps.

use super::tables::ScanTable;
use crate::sql::sql::{Conn, DbError, Dialect};

/// The counters around each measure phase: pages the server read from storage, and all the
/// pages it asked its cache for (reads included).
pub const PAGES_READ: &str = "server_pages_read";
pub const PAGE_REQUESTS: &str = "server_page_requests";

/// A one-line description of the engine's plan for `sql`, and the parallel workers it
/// planned (PostgreSQL's `Workers Planned`, 0 without a Gather).
pub fn plan(conn: &mut dyn Conn, sql: &str) -> Result<(String, Option<u64>), DbError> {
    match conn.dialect() {
        Dialect::Sqlite => {
            let rows = conn.query_texts(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            let steps: Vec<String> = rows.into_iter().filter_map(|r| r.last().cloned()).collect();
            Ok((steps.join("; "), None))
        }
        Dialect::Postgres => {
            let rows = conn.query_texts(&format!("EXPLAIN {sql}"))?;
            let lines: Vec<String> = rows
                .into_iter()
                .filter_map(|r| r.into_iter().next())
                .collect();
            Ok(postgres_plan(&lines))
        }
        Dialect::Mysql => {
            let json = conn
                .query_text(&format!("EXPLAIN FORMAT=JSON {sql}"))?
                .unwrap_or_default();
            Ok((mysql_plan(&json), None))
        }
    }
}

/// `Finalize Aggregate > Gather > Partial Aggregate > Parallel Seq Scan on scan_ten`, and
/// the workers planned, from `EXPLAIN`'s text.
fn postgres_plan(lines: &[String]) -> (String, Option<u64>) {
    let mut nodes = Vec::new();
    let mut workers = 0;
    for (i, line) in lines.iter().enumerate() {
        let text = line.trim();
        if let Some(n) = text.strip_prefix("Workers Planned:") {
            workers += n.trim().parse::<u64>().unwrap_or(0);
        } else if i == 0 || text.starts_with("->") {
            let node = text.trim_start_matches("->").trim();
            let node = node.split("  (cost=").next().unwrap_or(node);
            nodes.push(node.split(" (cost=").next().unwrap_or(node).to_string());
        }
    }
    let mut text = nodes.join(" > ");
    if workers > 0 {
        text.push_str(&format!(" ({workers} workers planned)"));
    }
    (text, Some(workers))
}

/// `scan_ten: ALL (full table scan)` from `EXPLAIN FORMAT=JSON`: each table's access type.
fn mysql_plan(json: &str) -> String {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let (Some(t), Some(a)) = (
                    map.get("table_name").and_then(|t| t.as_str()),
                    map.get("access_type").and_then(|a| a.as_str()),
                ) {
                    let what = if a == "ALL" { " (full table scan)" } else { "" };
                    out.push(format!("{t}: {a}{what}"));
                }
                map.values().for_each(|v| walk(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v) => walk(&v, &mut out),
        Err(_) => return json.split_whitespace().collect::<Vec<_>>().join(" "),
    }
    out.join("; ")
}

/// The table's size as the engine stores it.
pub fn table_bytes(conn: &mut dyn Conn, table: ScanTable) -> Result<u64, DbError> {
    let sql = super::tables::table_bytes_sql(table, conn.dialect());
    Ok(conn
        .query_row(&sql)?
        .and_then(|r| r.first().copied())
        .unwrap_or(0)
        .max(0) as u64)
}

/// The server's own cache, as `(setting, value as the server shows it, bytes)`; None for
/// SQLite, whose cache is the OS's.
pub fn cache(conn: &mut dyn Conn) -> Result<Option<(String, String, u64)>, DbError> {
    Ok(match conn.dialect() {
        Dialect::Sqlite => None,
        Dialect::Postgres => {
            let shown = conn.query_text("SHOW shared_buffers")?.unwrap_or_default();
            let bytes = conn
                .query_row(
                    "SELECT setting::bigint * (SELECT setting::bigint FROM pg_settings WHERE name = 'block_size') FROM pg_settings WHERE name = 'shared_buffers'",
                )?
                .and_then(|r| r.first().copied())
                .unwrap_or(0)
                .max(0) as u64;
            Some(("shared_buffers".into(), shown, bytes))
        }
        Dialect::Mysql => {
            let bytes = conn
                .query_row("SELECT @@innodb_buffer_pool_size")?
                .and_then(|r| r.first().copied())
                .unwrap_or(0)
                .max(0) as u64;
            Some((
                "innodb_buffer_pool_size".into(),
                crate::vocab::units::format_bytes(bytes),
                bytes,
            ))
        }
    })
}

/// The server's page counters ([`PAGES_READ`], [`PAGE_REQUESTS`]) over perflab's scan
/// tables (PostgreSQL) or the whole buffer pool (InnoDB).
pub fn page_counters(conn: &mut dyn Conn) -> Result<Vec<(String, f64)>, DbError> {
    match conn.dialect() {
        Dialect::Sqlite => Ok(Vec::new()),
        Dialect::Postgres => {
            let r = conn
                .query_row(
                    "SELECT coalesce(sum(heap_blks_read), 0)::bigint, coalesce(sum(heap_blks_read + heap_blks_hit), 0)::bigint FROM pg_statio_user_tables WHERE relname LIKE 'scan\\_%'",
                )?
                .unwrap_or_default();
            Ok(vec![
                (PAGES_READ.into(), r.first().copied().unwrap_or(0) as f64),
                (PAGE_REQUESTS.into(), r.get(1).copied().unwrap_or(0) as f64),
            ])
        }
        Dialect::Mysql => {
            let rows = conn.query_texts("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read%'")?;
            let get = |name: &str| {
                rows.iter()
                    .find(|r| r.first().is_some_and(|n| n.eq_ignore_ascii_case(name)))
                    .and_then(|r| r.get(1))
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            Ok(vec![
                (PAGES_READ.into(), get("Innodb_buffer_pool_reads")),
                (
                    PAGE_REQUESTS.into(),
                    get("Innodb_buffer_pool_read_requests"),
                ),
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_plans_read_as_one_line() {
        let lines: Vec<String> = [
            "Finalize Aggregate  (cost=10633.55..10633.56 rows=1 width=8)",
            "  ->  Gather  (cost=10633.33..10633.54 rows=2 width=8)",
            "        Workers Planned: 2",
            "        ->  Partial Aggregate  (cost=9633.33..9633.34 rows=1 width=8)",
            "              ->  Parallel Seq Scan on scan_ten  (cost=0.00..9633.33 rows=417 width=0)",
            "                    Filter: (a = 0)",
        ]
        .map(String::from)
        .into();
        let (text, workers) = postgres_plan(&lines);
        assert_eq!(
            text,
            "Finalize Aggregate > Gather > Partial Aggregate > Parallel Seq Scan on scan_ten (2 workers planned)"
        );
        assert_eq!(workers, Some(2));
        let (text, workers) = postgres_plan(&[
            "Aggregate  (cost=1.0..1.0 rows=1 width=8)".into(),
            "  ->  Seq Scan on scan_page  (cost=0.00..1.0 rows=1 width=0)".into(),
        ]);
        assert_eq!(text, "Aggregate > Seq Scan on scan_page");
        assert_eq!(workers, Some(0));
    }

    #[test]
    fn mysql_plans_name_the_access_type() {
        let json = r#"{"query_block": {"select_id": 1, "table": {"table_name": "scan_ten", "access_type": "ALL", "rows": 1000, "attached_condition": "scan_ten.a = 0"}}}"#;
        assert_eq!(mysql_plan(json), "scan_ten: ALL (full table scan)");
        assert_eq!(mysql_plan("not json"), "not json");
    }
}
