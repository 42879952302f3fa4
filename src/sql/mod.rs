//! The SQL clients every SQL workload shares: oltp (DebitCredit, order entry, TPC-C), scan
//! and olap write their statements once over [`sql::Conn`], and run them on SQLite,
//! PostgreSQL and MySQL/MariaDB alike.
//!
//! - [`sql`]: the connection interface (prepare, exec, query, fetch, bulk load; errors sorted
//!   into conflict, broken, timed out, cancelled, other) and the server target (URL, `--set`,
//!   op timeout); [`counted`], a connection that counts the statements it sends.
//! - [`sqlite`], [`postgres`] (TLS from [`crate::target::tls`]), [`mysql`]: the backends;
//!   PostgreSQL's and MySQL's wire protocols are perflab's own ([`mysql_wire`], its rows
//!   read in place by [`mysql_row`]);
//!   [`query_mode`], how sessions send statements (`-M simple|extended|prepared`).
//! - [`backend`]: which one a run uses, its settings, log counters and server CPU;
//!   [`bounded`], a session's connection whose long statements the server stops when perflab
//!   stops waiting (scan's and olap's).
//! - [`schema`]: tables, fast server-side loading, perflab's record of what it created.
//! - [`shard_db`]: the databases `--shards N` makes on one server.
//! - [`args`]: `--set`, `--keep` and `--op-timeout`, flattened into each SQL kind's
//!   arguments and worded by it.
//! - [`target`]: a `--target` URL read into a backend with its settings and op timeout,
//!   opened with one line that says why not, and settings that sweep.
//! - [`throwaway`]: a PostgreSQL of perflab's own for studies given none; restarts cold.
//!
//! It sits below the workloads and above `target` (URLs, passwords, TLS).

pub mod args;
pub mod backend;
pub mod bounded;
pub mod cancel;
pub mod counted;
pub mod mysql;
pub mod mysql_row;
pub mod mysql_wire;
pub mod postgres;
pub mod query_mode;
pub mod schema;
pub mod shard_db;
#[allow(clippy::module_inception)]
pub mod sql;
pub mod sqlite;
pub mod target;
pub mod throwaway;

use crate::target::TargetEntry;

/// The databases every SQL kind (oltp, scan, olap) measures.
pub static TARGETS: [TargetEntry; 3] = [
    TargetEntry {
        name: "sqlite:///PATH",
        description: "an SQLite database file (embedded, bundled; the oltp, scan and olap default is a temporary one)",
    },
    TargetEntry {
        name: "postgres://USER@HOST/DB",
        description: "a PostgreSQL server (password from the URL, PGPASSWORD or ~/.pgpass)",
    },
    TargetEntry {
        name: "mysql://USER@HOST/DB",
        description: "a MySQL or MariaDB server (password from the URL, MYSQL_PWD or ~/.my.cnf; TLS with ?ssl-mode=REQUIRED)",
    },
];
