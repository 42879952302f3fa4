//! Loading and clearing one shard of an OLTP database (`--shards N`): the databases
//! themselves are [`crate::sql::shard_db`]'s.

use super::Mix;
use crate::sql::backend::Backend;
use crate::sql::schema;
use crate::sql::shard_db::{ShardDatabases, created_here, drop_database};
use crate::sql::sql::{Conn, DbError};
use crate::stop::Stop;

/// Loads one shard after dropping perflab's earlier tables there, keeping the mark that
/// perflab created its database (the mark lives in the meta table the drop removes).
pub fn load(
    conn: &mut dyn Conn,
    mix: Mix,
    scale: u64,
    note: &dyn Fn(&str),
    created_now: bool,
    constants: &super::tpcc::input::Constants,
) -> Result<(), DbError> {
    let made = created_now || created_here(conn);
    super::sysbench::schema::drop_ours(conn)?;
    mix.load(conn, scale, note, constants)?;
    if made {
        schema::record(conn, "database", "created")?;
    }
    Ok(())
}

/// Drops perflab's tables from a shard, and the shard's database if perflab created it.
/// Returns whether there were tables to drop.
pub fn clear(
    shard: &Backend,
    databases: Option<(&ShardDatabases, usize)>,
    stop: &Stop,
) -> Result<bool, DbError> {
    // Look first without changing anything (an SQLite file opened for writing gets its
    // journal mode set): a database where perflab made nothing is left as it is.
    if shard.is_new_file() || schema::recorded(&mut *shard.inspect(stop)?, "workload")?.is_none() {
        return Ok(false);
    }
    // Bounded like a session: after a run whose server stopped answering, cleanup must give
    // up rather than hang.
    let mut c = shard.connect_session(stop)?;
    let made = created_here(&mut *c);
    // sysbench's tables too, where perflab listed them.
    let dropped = super::sysbench::schema::drop_ours(&mut *c)?;
    drop(c);
    if let Some((dbs, i)) = databases
        && made
        && let Some(name) = dbs.names.get(i)
    {
        drop_database(&dbs.creator, name, stop)?;
    }
    Ok(dropped)
}
