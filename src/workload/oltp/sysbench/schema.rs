//! sysbench's tables: `sbtest1` ... `sbtestN` with sysbench's DDL on each engine, loaded as
//! sysbench's prepare loads them, found as `sysbench prepare` or perflab left them, and
//! dropped only where perflab made them.
//!
//! The DDL (`oltp_common.lua`'s `create_table`): `id` is MySQL's `INTEGER NOT NULL
//! AUTO_INCREMENT`, PostgreSQL's `SERIAL` (`INTEGER NOT NULL` with `--auto_inc=off`), then
//! `k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT ''
//! NOT NULL, PRIMARY KEY (id)` (`KEY xid (id)` instead with `--secondary`), MySQL's table
//! with `/*! ENGINE = innodb */`; then `CREATE INDEX k_N ON sbtestN(k)` unless
//! `--create_secondary=off`. sysbench's `KEY xid` is MySQL's syntax alone: on PostgreSQL and
//! SQLite perflab makes the same index with `CREATE INDEX xid_N ON sbtestN(id)`. SQLite's
//! `INTEGER` key is its rowid, which numbers rows left without an id.
//!
//! The rows: `k = rand.default(1, table_size)`, c ten groups of eleven random digits joined
//! by `-`, pad five, sent as multi-row INSERTs of up to 512 KiB (ids 1..N by the server with
//! auto_inc, by the client without). oltp_insert without auto_inc starts from empty tables
//! (as sysbench's does: its ids would collide with the loaded ones); bulk_insert's tables
//! are `(id, k)`, one per client, empty.
//!
//! perflab lists what it made in its `perflab_meta` table (`crate::sql::schema`), with the
//! options it loaded them with; tables of these names that it did not list are sysbench's
//! (or someone's) and are never written to by `prepare` nor dropped by `cleanup`.

use super::client::BULK_BYTES;
use super::options::SysbenchOptions;
use super::rand::{C_GROUPS, Dist, PAD_GROUPS, digit_groups};
use super::test::Test;
use crate::sql::schema::{self, SEQ};
use crate::sql::sql::{Conn, DbError, Dialect, META, count_tables, stopped};
use crate::workload::rng::Rng;

/// The workload name perflab records beside sysbench's tables.
pub const WORKLOAD: &str = "sysbench";

/// Whether `name` is one of sysbench's tables (`sbtest` and a number).
pub fn is_sbtest(name: &str) -> bool {
    name.strip_prefix("sbtest")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The CREATE statements of table `n`.
pub fn create(d: Dialect, n: u32, o: &SysbenchOptions) -> Vec<String> {
    if o.test.bulk() {
        return vec![format!(
            "CREATE TABLE IF NOT EXISTS sbtest{n} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id))"
        )];
    }
    let id = match (d, o.auto_inc) {
        (Dialect::Mysql, true) => "INTEGER NOT NULL AUTO_INCREMENT",
        (Dialect::Postgres, true) => "SERIAL",
        _ => "INTEGER NOT NULL",
    };
    let key = match (d, o.secondary) {
        (_, false) => ",\n  PRIMARY KEY (id)".to_string(),
        (Dialect::Mysql, true) => ",\n  KEY xid (id)".to_string(),
        (_, true) => String::new(),
    };
    let engine = match d {
        Dialect::Mysql => format!(" /*! ENGINE = {} */", o.mysql_storage_engine),
        _ => String::new(),
    };
    let mut out = vec![format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}\n){engine}"
    )];
    if o.secondary && d != Dialect::Mysql {
        out.push(format!("CREATE INDEX xid_{n} ON sbtest{n}(id)"));
    }
    out
}

/// The secondary index on k, made after the rows as sysbench makes it.
fn k_index(n: u32) -> String {
    format!("CREATE INDEX k_{n} ON sbtest{n}(k)")
}

/// Rows a table gets at prepare: none for bulk_insert, nor for oltp_insert without
/// auto_inc.
pub fn rows_loaded(o: &SysbenchOptions) -> u32 {
    match o.test {
        Test::BulkInsert => 0,
        Test::OltpInsert if !o.auto_inc => 0,
        _ => o.table_size,
    }
}

/// Creates and fills table `n`, drawing k, c and pad from `rng`.
fn load_table(
    conn: &mut dyn Conn,
    n: u32,
    o: &SysbenchOptions,
    rng: &mut Rng,
) -> Result<(), DbError> {
    let d = conn.dialect();
    for sql in create(d, n, o) {
        conn.batch(&sql)?;
    }
    let rows = rows_loaded(o);
    let head = match o.auto_inc {
        true => format!("INSERT INTO sbtest{n}(k, c, pad) VALUES"),
        false => format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES"),
    };
    let mut dist = Dist::new(&o.rand);
    let mut sql = String::with_capacity(BULK_BYTES + 256);
    let mut row = String::with_capacity(256);
    let mut in_sql = 0u64;
    // SQLite commits once for all the table's rows: one sync, not one per statement.
    let sqlite = d == Dialect::Sqlite;
    if sqlite && rows > 0 {
        conn.begin(true)?;
    }
    for i in 1..=rows {
        let k = dist.draw(rng, 1, o.table_size);
        row.clear();
        row.push('(');
        if !o.auto_inc {
            row.push_str(&i.to_string());
            row.push_str(", ");
        }
        row.push_str(&k.to_string());
        row.push_str(", '");
        digit_groups(rng, C_GROUPS, &mut row);
        row.push_str("', '");
        digit_groups(rng, PAD_GROUPS, &mut row);
        row.push_str("')");
        if in_sql > 0 && sql.len() + row.len() + 1 > BULK_BYTES {
            conn.batch(&sql)?;
            stopped(conn)?;
            in_sql = 0;
        }
        if in_sql == 0 {
            sql.clear();
            sql.push_str(&head);
        } else {
            sql.push(',');
        }
        sql.push_str(&row);
        in_sql += 1;
    }
    if in_sql > 0 {
        conn.batch(&sql)?;
    }
    if sqlite && rows > 0 {
        conn.commit()?;
    }
    if o.create_secondary && !o.test.bulk() {
        conn.batch(&k_index(n))?;
    }
    Ok(())
}

/// The options the tables were loaded with, as perflab records them (`tables=4,...`).
fn shape(o: &SysbenchOptions) -> String {
    format!(
        "test={};tables={};table_size={};auto_inc={};secondary={};create_secondary={}",
        o.test.name(),
        o.table_names().len(),
        o.table_size,
        o.auto_inc,
        o.secondary,
        o.create_secondary
    )
}

/// sysbench's prepare: perflab's earlier tables dropped, then each table created and
/// filled (k, c and pad drawn from `seed`), all listed as perflab's before the first row.
pub fn prepare(
    conn: &mut dyn Conn,
    o: &SysbenchOptions,
    seed: u64,
    note: &dyn Fn(&str),
) -> Result<(), DbError> {
    drop_ours(conn)?;
    schema::create(conn, WORKLOAD, u64::from(o.table_size), &[])?;
    let names = o.table_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    schema::list(conn, &refs)?;
    schema::record(conn, "sysbench", &shape(o))?;
    for (i, name) in names.iter().enumerate() {
        let n = i as u32 + 1;
        let rows = rows_loaded(o);
        note(&match rows {
            0 => format!("prepare: creating table '{name}'"),
            r => format!("prepare: creating table '{name}' and inserting {r} records"),
        });
        let mut rng = Rng::new(seed ^ (u64::from(n) << 32) ^ 0x7362_7465_7374);
        load_table(conn, n, o, &mut rng)?;
        stopped(conn)?;
    }
    conn.batch(&format!("DROP TABLE {SEQ}"))?;
    schema::record(conn, "complete", "yes")
}

/// Drops the tables perflab listed as its own here (sysbench's among them), and its meta
/// table; nothing else. Returns whether there was anything of perflab's.
pub fn drop_ours(conn: &mut dyn Conn) -> Result<bool, DbError> {
    let known = known_tables(conn)?;
    let refs: Vec<&str> = known.iter().map(String::as_str).collect();
    schema::drop_ours(conn, &refs)
}

/// Every table perflab may drop here: every workload's fixed tables, and the `sbtestN`
/// tables perflab listed as its own.
pub fn known_tables(conn: &mut dyn Conn) -> Result<Vec<String>, DbError> {
    let mut known: Vec<String> = super::super::Mix::known_tables()
        .into_iter()
        .map(String::from)
        .collect();
    if let Some(listed) = schema::recorded(conn, "tables")? {
        known.extend(listed.split(',').filter(|t| is_sbtest(t)).map(String::from));
    }
    Ok(known)
}

/// What a database holds of a test's tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The test's tables present, in order (`sbtest1`...), and those missing.
    pub present: Vec<String>,
    pub missing: Vec<String>,
    /// Of those present, the ones perflab listed as its own.
    pub ours: Vec<String>,
    /// Whether perflab's load of them finished.
    pub complete: bool,
    /// What perflab recorded of the load (`test=...;tables=...`), when it made them.
    pub shape: Option<String>,
}

impl Found {
    /// Present tables perflab did not make (sysbench's own, or anyone's).
    pub fn foreign(&self) -> Vec<&str> {
        self.present
            .iter()
            .filter(|t| !self.ours.contains(t))
            .map(String::as_str)
            .collect()
    }
}

/// Looks at the database without changing it.
pub fn found(conn: &mut dyn Conn, o: &SysbenchOptions) -> Result<Found, DbError> {
    let names = o.table_names();
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for n in &names {
        match count_tables(conn, &[n])? {
            0 => missing.push(n.clone()),
            _ => present.push(n.clone()),
        }
    }
    let meta = count_tables(conn, &[META])? > 0;
    let (listed, complete, shape) = match meta {
        true => (
            schema::recorded(conn, "tables")?.unwrap_or_default(),
            schema::recorded(conn, "complete")?.is_some(),
            schema::recorded(conn, "sysbench")?,
        ),
        false => (String::new(), false, None),
    };
    let ours = present
        .iter()
        .filter(|t| listed.split(',').any(|l| l == t.as_str()))
        .cloned()
        .collect();
    Ok(Found {
        present,
        missing,
        ours,
        complete,
        shape,
    })
}

/// `a, b, c` or `a ... z` for a long list.
pub fn names(list: &[&str]) -> String {
    match list {
        [] => String::new(),
        [one] => one.to_string(),
        [first, .., last] if list.len() > 4 => format!("{first} ... {last}"),
        _ => list.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ddl_is_sysbenchs_on_each_engine() {
        let o = SysbenchOptions::new(Test::OltpReadWrite);
        let my = create(Dialect::Mysql, 3, &o);
        assert_eq!(
            my,
            [
                "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
            ]
        );
        let pg = create(Dialect::Postgres, 1, &o);
        assert!(pg[0].contains("id SERIAL,") && pg[0].contains("PRIMARY KEY (id)"));
        let mut o = SysbenchOptions::new(Test::OltpReadWrite);
        o.auto_inc = false;
        o.secondary = true;
        let my = create(Dialect::Mysql, 1, &o);
        assert!(my[0].contains("id INTEGER NOT NULL,") && my[0].contains("KEY xid (id)"));
        let pg = create(Dialect::Postgres, 2, &o);
        assert!(!pg[0].contains("KEY"), "{}", pg[0]);
        assert_eq!(pg[1], "CREATE INDEX xid_2 ON sbtest2(id)");
        assert_eq!(k_index(2), "CREATE INDEX k_2 ON sbtest2(k)");
        let bulk = create(
            Dialect::Postgres,
            1,
            &SysbenchOptions::new(Test::BulkInsert),
        );
        assert!(bulk[0].starts_with("CREATE TABLE IF NOT EXISTS sbtest1 (id INTEGER NOT NULL, k"));
    }

    #[test]
    fn sysbench_tables_are_told_from_others() {
        assert!(is_sbtest("sbtest1") && is_sbtest("sbtest250"));
        assert!(!is_sbtest("sbtest") && !is_sbtest("sbtest1x") && !is_sbtest("pgbench_accounts"));
        assert_eq!(names(&["sbtest1"]), "sbtest1");
        assert_eq!(names(&["sbtest1", "sbtest2"]), "sbtest1, sbtest2");
        let many = ["sbtest1", "sbtest2", "sbtest3", "sbtest4", "sbtest5"];
        assert_eq!(names(&many), "sbtest1 ... sbtest5");
    }

    #[test]
    fn insert_without_auto_inc_and_bulk_insert_start_empty() {
        let mut o = SysbenchOptions::new(Test::OltpInsert);
        assert_eq!(rows_loaded(&o), 10_000);
        o.auto_inc = false;
        assert_eq!(rows_loaded(&o), 0);
        assert_eq!(rows_loaded(&SysbenchOptions::new(Test::BulkInsert)), 0);
    }
}
