//! `--shards N` on one server: databases `<db>_1` ... `<db>_N` beside the one the URL names.
//!
//! perflab creates the ones that do not exist (through a connection to the URL's own
//! database), marks each it created in its `perflab_meta` (`database = created`), and drops a
//! database only when that mark says perflab made it: after `all` without `--keep`, or at
//! `cleanup`. Databases that were there before are used and left in place.

use super::backend::Backend;
use super::schema;
use super::sql::{Conn, DbError, Dialect};
use crate::stop::Stop;
use std::sync::Arc;

/// The shard databases of one server, and the connection that creates and drops them.
#[derive(Debug, Clone)]
pub struct ShardDatabases {
    /// The database the URL names: where `CREATE DATABASE` and `DROP DATABASE` run.
    pub creator: Arc<Backend>,
    /// `<db>_1` ... `<db>_N`, in shard order.
    pub names: Vec<String>,
    /// The ones this command created.
    pub created: Vec<String>,
}

/// The URL with its database replaced by `<db>_<i>`; None when the URL names no database or
/// a name that is not a plain identifier (it is spliced into `CREATE DATABASE`).
pub fn shard_url(url: &str, database: &str, i: u64) -> Option<String> {
    if database.is_empty()
        || !database
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let rest = url.find("://")? + 3;
    let end = url[rest..].find('?').map_or(url.len(), |q| rest + q);
    let path = url[rest..end].rfind('/')? + rest + 1;
    (url[path..end] == *database).then(|| format!("{}{database}_{i}{}", &url[..path], &url[end..]))
}

fn exists(c: &mut dyn Conn, name: &str) -> Result<bool, DbError> {
    let sql = match c.dialect() {
        Dialect::Postgres => format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        Dialect::Mysql => {
            format!("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '{name}'")
        }
        Dialect::Sqlite => return Ok(true),
    };
    Ok(c.query_row(&sql)?.map(|r| r[0]).unwrap_or(0) > 0)
}

/// The databases that do not exist yet.
pub fn missing(creator: &Backend, names: &[String], stop: &Stop) -> Result<Vec<String>, DbError> {
    let mut c = creator.connect(stop)?;
    let mut out = Vec::new();
    for name in names {
        if !exists(&mut *c, name)? {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// Creates the databases that do not exist; returns the names it created.
pub fn ensure(creator: &Backend, names: &[String], stop: &Stop) -> Result<Vec<String>, DbError> {
    let mut c = creator.connect(stop)?;
    let mut created = Vec::new();
    for name in names {
        if !exists(&mut *c, name)? {
            c.batch(&format!("CREATE DATABASE {name}"))?;
            created.push(name.clone());
        }
    }
    Ok(created)
}

/// Whether perflab created the database this connection is in.
pub fn created_here(conn: &mut dyn Conn) -> bool {
    matches!(schema::recorded(conn, "database"), Ok(Some(v)) if v == "created")
}

/// Drops a database perflab created (the caller has checked the mark).
pub fn drop_database(creator: &Backend, name: &str, stop: &Stop) -> Result<(), DbError> {
    creator
        .connect(stop)?
        .batch(&format!("DROP DATABASE {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_replaced_and_nothing_else() {
        assert_eq!(
            shard_url("postgres://u:p@h:5432/bench?sslmode=disable", "bench", 2).as_deref(),
            Some("postgres://u:p@h:5432/bench_2?sslmode=disable")
        );
        assert_eq!(
            shard_url("mysql://root@127.0.0.1/test", "test", 10).as_deref(),
            Some("mysql://root@127.0.0.1/test_10")
        );
        assert_eq!(shard_url("postgres://u@h", "u", 1), None);
        assert_eq!(shard_url("postgres://u@h/a-b", "a-b", 1), None);
    }
}
