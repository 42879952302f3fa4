//! The registry of targets (systems under test), for `perflab targets` and for checking a
//! `--target` URL. Adding a target kind is adding a line to [`registry`] and its file.
//!
//! - [`url`]: `--target` URLs (sqlite, postgres, mysql/mariadb): parsing, redaction of
//!   passwords for the record and the terminal, and passwords from the environment and the
//!   clients' files (`PGPASSWORD`, `~/.pgpass`, `MYSQL_PWD`, `~/.my.cnf`).
//! - [`tls`]: the TLS settings of PostgreSQL, Redis and mail connections (encrypted,
//!   unverified).
//! - [`tls_stream`]: TLS over a TCP socket, blocking or not, for the clients that encrypt a
//!   stream themselves (Redis's `rediss://`, the mail clients' IMAPS, POP3S, SMTPS and
//!   STARTTLS).

pub mod tls;
pub mod tls_stream;
pub mod url;

use serde::Serialize;

/// One kind of target and what it can do.
#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    /// How it is named on the command line (`memory`, `postgres://...`).
    pub name: &'static str,
    /// The commands that measure it.
    pub workloads: &'static [&'static str],
    pub description: &'static str,
    /// Whether this build can use it now.
    pub available: bool,
}

pub fn registry() -> Vec<TargetInfo> {
    vec![
        TargetInfo {
            name: "memory",
            workloads: &["memory"],
            description: "main memory and caches: STREAM bandwidth, pointer-chase latency, lotto",
            available: true,
        },
        TargetInfo {
            name: "cpu",
            workloads: &["cpu"],
            description: "the processors: Mandelbrot fractals (half integer, half floating point)",
            available: true,
        },
        TargetInfo {
            name: "PATH",
            workloads: &["io"],
            description: "storage: a directory (perflab creates its files there), a file, or a block device",
            available: true,
        },
        TargetInfo {
            name: "sqlite:///PATH",
            workloads: &["oltp", "scan", "olap"],
            description: "an SQLite database file (embedded, bundled; the oltp, scan and olap default is a temporary one)",
            available: true,
        },
        TargetInfo {
            name: "postgres://USER@HOST/DB",
            workloads: &["oltp", "scan", "olap"],
            description: "a PostgreSQL server (password from the URL, PGPASSWORD or ~/.pgpass)",
            available: true,
        },
        TargetInfo {
            name: "mysql://USER@HOST/DB",
            workloads: &["oltp", "scan", "olap"],
            description: "a MySQL or MariaDB server (password from the URL, MYSQL_PWD or ~/.my.cnf; TLS with ?ssl-mode=REQUIRED)",
            available: true,
        },
        TargetInfo {
            name: "memcached://HOST:PORT",
            workloads: &["kv"],
            description: "a memcached server, text or meta protocol (memcached:///PATH for a Unix socket; several are shards, by ketama; the kv default is a throwaway one started from PATH)",
            available: true,
        },
        TargetInfo {
            name: "redis://HOST:PORT/DB",
            workloads: &["kv"],
            description: "a Redis, Valkey or KeyDB server, RESP2 or RESP3 with ?protocol=3 (password from the URL or REDISCLI_AUTH; rediss:// for TLS; several nodes of a Redis Cluster as shards)",
            available: true,
        },
        TargetInfo {
            name: "native",
            workloads: &["scan"],
            description: "the native ceiling: perflab's own scan of the scan tables' rows from memory, every byte read",
            available: true,
        },
        TargetInfo {
            name: "null",
            workloads: &["null"],
            description: "does nothing: measures perflab's own overhead per op",
            available: true,
        },
    ]
}
