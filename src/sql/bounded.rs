//! A session's connection for statements that may run long (a scan, a bulk load, a summary
//! over a large table): when perflab stops waiting for one (the op timeout, Ctrl-C), the
//! server must stop too, or it goes on working under the next step. PostgreSQL gets
//! `statement_timeout` at the op timeout and `client_connection_check_interval` of a second
//! (PostgreSQL 14 and later notice a client that went away during a query), MariaDB
//! `max_statement_time` and MySQL `max_execution_time`; each only where the server knows it
//! and `--set` did not set it. scan and olap open their sessions with it.

use super::backend::Backend;
use super::sql::{Conn, DbError, Dialect};
use crate::stop::Stop;

/// A session's connection, with the server told to stop a statement nobody waits for.
pub fn connect(backend: &Backend, stop: &Stop) -> Result<Box<dyn Conn>, DbError> {
    let mut conn = backend.connect_session(stop)?;
    for (_, sql) in server_limits(backend, conn.dialect()) {
        // A server that does not know the setting (PostgreSQL before 14, MySQL's name on
        // MariaDB) refuses it; the session runs without.
        let _ = conn.batch(&sql);
    }
    Ok(conn)
}

/// The settings (name, statement) that make the server give up a statement at the op timeout or
/// when its client is gone, less those the user set with `--set`.
fn server_limits(backend: &Backend, d: Dialect) -> Vec<(&'static str, String)> {
    let (Backend::Postgres(t) | Backend::Mysql(t)) = backend else {
        return Vec::new();
    };
    let ms = t.op_timeout.as_millis().max(1);
    let all: Vec<(&'static str, String)> = match d {
        Dialect::Postgres => vec![
            ("statement_timeout", format!("SET statement_timeout = {ms}")),
            (
                "client_connection_check_interval",
                "SET client_connection_check_interval = 1000".into(),
            ),
        ],
        Dialect::Mysql => vec![
            (
                "max_statement_time",
                format!("SET SESSION max_statement_time = {:.3}", ms as f64 / 1000.0),
            ),
            (
                "max_execution_time",
                format!("SET SESSION max_execution_time = {ms}"),
            ),
        ],
        Dialect::Sqlite => Vec::new(),
    };
    all.into_iter()
        .filter(|(name, _)| !t.set.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::sql::ServerTarget;
    use std::time::Duration;

    #[test]
    fn servers_are_told_to_stop_at_the_op_timeout_unless_the_user_said_otherwise() {
        let target = |set: Vec<(String, String)>| ServerTarget {
            url: "postgres://u@h/db".into(),
            set,
            op_timeout: Duration::from_secs(90),
            query_mode: Default::default(),
        };
        let pg = server_limits(&Backend::Postgres(target(Vec::new())), Dialect::Postgres);
        assert_eq!(pg[0].1, "SET statement_timeout = 90000");
        assert_eq!(pg.len(), 2);
        let mine = vec![("statement_timeout".to_string(), "0".to_string())];
        let pg = server_limits(&Backend::Postgres(target(mine)), Dialect::Postgres);
        assert_eq!(pg.len(), 1);
        assert_eq!(pg[0].0, "client_connection_check_interval");
        let my = server_limits(&Backend::Mysql(target(Vec::new())), Dialect::Mysql);
        assert_eq!(my[0].1, "SET SESSION max_statement_time = 90.000");
        assert_eq!(my[1].1, "SET SESSION max_execution_time = 90000");
    }
}
