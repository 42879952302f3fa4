//! What every client of a system under test shares: `--target` URLs, passwords and TLS, and
//! the [`TargetEntry`] each workload kind lists for `perflab targets`.
//!
//! - [`url`]: `--target` URLs (sqlite, postgres, mysql/mariadb): parsing, redaction of
//!   passwords for the record and the terminal, and passwords from the environment and the
//!   clients' files (`PGPASSWORD`, `~/.pgpass`, `MYSQL_PWD`, `~/.my.cnf`).
//! - [`conninfo`]: PostgreSQL connections as libpq resolves them (`key=value` strings, the
//!   `PG*` variables, `sslmode` and the certificate files).
//! - [`tls`]: how far a TLS connection trusts its server ([`tls::Trust`]: verified in full,
//!   the chain only, or not at all; the roots; the client's certificate), shared by
//!   PostgreSQL, MySQL, Redis and mail, and the one-line refusals of a failed verification.
//! - [`tls_args`]: `--cacert`, `--insecure`, `--cert`, `--key` for Redis and mail.
//! - [`tls_stream`]: TLS over a TCP socket, blocking or not, for the clients that encrypt a
//!   stream themselves (Redis's `rediss://`, the mail clients' IMAPS, POP3S, SMTPS and
//!   STARTTLS).

pub mod conninfo;
pub mod tls;
pub mod tls_args;
pub mod tls_stream;
pub mod url;

use serde::Serialize;

/// A kind of system under test, as `perflab targets` lists it. Each workload kind names the
/// targets it measures (`crate::workload::kind`); the SQL kinds share theirs
/// (`crate::sql::TARGETS`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TargetEntry {
    /// How it is named on the command line (`memory`, `postgres://...`).
    pub name: &'static str,
    pub description: &'static str,
}
