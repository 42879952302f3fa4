//! The store's schema, kept by `refinery` (its core, `refinery_core`): the migrations are the
//! SQL files in `migrations/`, compiled in; refinery records each one applied, with its
//! checksum, in `perflab_schema_history`, and applies what is missing in order.
//!
//! refinery drives a connection through three small sync traits (`Transaction`, `Query`,
//! `Migrate`); [`Migrator`] implements them over perflab's own PostgreSQL client, so the
//! store needs no second client (and gets the same TLS, `PG*` variables and `~/.pgpass`).
//!
//! - A writer finds the store behind this perflab: it migrates it (under an advisory lock,
//!   so two writers starting at once apply each migration once).
//! - Any role finds the store ahead of this perflab (a version it does not know): it
//!   refuses in one line, exit 2, naming both versions. It never writes to such a store.
//! - A reader (`serve`) finds it behind: it refuses, naming `perflab shared init`.

use super::conn::{Address, Db, failed};
use crate::archive::ArchiveError;
use crate::sql::sql::DbError;
use refinery_core::traits::sync::{Migrate, Query, Transaction};
use refinery_core::{Migration, Runner};

/// The table refinery keeps its history in.
const HISTORY: &str = "perflab_schema_history";

/// Taken while migrating (any number, the same for every perflab): 'perflab' in ASCII.
const MIGRATION_LOCK: i64 = 0x0070_6572_666c_6162;

/// The migrations, oldest first: (refinery's name, SQL).
const MIGRATIONS: &[(&str, &str)] = &[
    (
        "V1__runs_and_tags",
        include_str!("migrations/V1__runs_and_tags.sql"),
    ),
    (
        "V2__labels_and_trends",
        include_str!("migrations/V2__labels_and_trends.sql"),
    ),
];

/// The schema version this perflab writes and reads.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// A failed statement of a migration, as refinery's traits want their errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MigrationFailed(String);

impl From<DbError> for MigrationFailed {
    fn from(e: DbError) -> Self {
        MigrationFailed(e.message)
    }
}

/// refinery's view of a connection.
pub struct Migrator<'a>(pub &'a mut Db);

impl Transaction for Migrator<'_> {
    type Error = MigrationFailed;

    /// The statements in one transaction: all of them, or none.
    fn execute<'a, T: Iterator<Item = &'a str>>(
        &mut self,
        queries: T,
    ) -> Result<usize, MigrationFailed> {
        self.0.batch("BEGIN")?;
        let mut done = 0;
        for q in queries {
            if let Err(e) = self.0.batch(q) {
                let _ = self.0.batch("ROLLBACK");
                return Err(e.into());
            }
            done += 1;
        }
        self.0.batch("COMMIT")?;
        Ok(done)
    }
}

impl Query<Vec<Migration>> for Migrator<'_> {
    /// The history's rows (version, name, applied_on, checksum) as refinery's migrations.
    fn query(&mut self, query: &str) -> Result<Vec<Migration>, MigrationFailed> {
        let bad = |what: &str| MigrationFailed(format!("{HISTORY}: a row with a bad {what}"));
        let mut out = Vec::new();
        for row in self.0.texts(query)? {
            let [version, name, applied_on, checksum] = row.as_slice() else {
                return Err(bad("shape"));
            };
            let applied_on = time::OffsetDateTime::parse(
                applied_on,
                &time::format_description::well_known::Rfc3339,
            )
            .map_err(|_| bad("applied_on"))?;
            out.push(Migration::applied(
                version.parse().map_err(|_| bad("version"))?,
                name.clone(),
                applied_on,
                checksum.parse().map_err(|_| bad("checksum"))?,
            ));
        }
        Ok(out)
    }
}

impl Migrate for Migrator<'_> {}

/// refinery's runner over perflab's migrations, up to `upto` (the latest when `None`): it
/// refuses a store whose history has a migration perflab does not have, or one it has
/// with another checksum.
fn runner(upto: Option<i64>) -> Result<Runner, ArchiveError> {
    let mut migrations = Vec::new();
    for (name, sql) in MIGRATIONS {
        let m = Migration::unapplied(name, sql)
            .map_err(|e| ArchiveError::Shared(format!("migration {name}: {e}")))?;
        if upto.is_none_or(|v| i64::from(m.version()) <= v) {
            migrations.push(m);
        }
    }
    let mut runner = Runner::new(&migrations)
        .set_abort_divergent(true)
        .set_abort_missing(true);
    runner.set_migration_table_name(HISTORY);
    Ok(runner)
}

/// The store's schema version: the last migration applied (0 for a store with no history).
fn version(db: &mut Db, address: &Address) -> Result<i64, ArchiveError> {
    let runner = runner(None)?;
    match runner.get_last_applied_migration(&mut Migrator(db)) {
        Ok(last) => Ok(last.map_or(0, |m| i64::from(m.version()))),
        Err(e) if e.to_string().contains("does not exist") => Ok(0),
        Err(e) => Err(failed(address, &DbError::other(e.to_string()))),
    }
}

/// The one line for a store made by a newer perflab.
fn newer(address: &Address, found: i64) -> ArchiveError {
    ArchiveError::SharedRefused(format!(
        "{} has schema version {found}, made by a newer perflab (this one knows up to {LATEST}); upgrade perflab",
        address.shown()
    ))
}

/// Makes sure the store's schema is this perflab's: a writer migrates an older one, a
/// reader refuses it; both refuse a newer one.
pub fn ensure(db: &mut Db, address: &Address, write: bool) -> Result<(), ArchiveError> {
    let found = version(db, address)?;
    match found {
        v if v > LATEST => Err(newer(address, v)),
        LATEST => Ok(()),
        v if !write => Err(ArchiveError::SharedRefused(format!(
            "{} has schema version {v} and this perflab reads {LATEST}: run 'perflab shared init' with a URL of the store's owner (or any writer's run migrates it)",
            address.shown()
        ))),
        _ => migrate(db, address, None),
    }
}

/// Applies the migrations the store lacks, up to `upto` (all of them when `None`), under
/// the advisory lock.
pub fn migrate(db: &mut Db, address: &Address, upto: Option<i64>) -> Result<(), ArchiveError> {
    db.batch(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
        .map_err(|e| failed(address, &e))?;
    let found = version(db, address);
    let result = match found {
        Ok(v) if v > LATEST => Err(newer(address, v)),
        Ok(_) => runner(upto)?
            .run(&mut Migrator(db))
            .map(|_| ())
            .map_err(|e| {
                ArchiveError::SharedRefused(format!(
                    "{}: cannot bring the schema to version {}: {}; run 'perflab shared init' with a URL of the store's owner (a role that may create tables and, the first time, roles)",
                    address.shown(),
                    upto.unwrap_or(LATEST),
                    error_text(&e)
                ))
            }),
        Err(e) => Err(e),
    };
    let _ = db.batch(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"));
    result
}

/// `perflab shared init`: connects and applies the migrations the store lacks, up to `upto`
/// (all of them when `None`); the store's version afterwards.
pub fn init(address: &Address, upto: Option<i64>) -> Result<i64, ArchiveError> {
    let mut db = Db::connect(address, false)?;
    migrate(&mut db, address, upto)?;
    version(&mut db, address)
}

/// refinery's error with its cause (the server's message), in one line.
fn error_text(e: &refinery_core::Error) -> String {
    use std::error::Error;
    match e.source() {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
    .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migrations_are_numbered_in_order_and_read_by_refinery() {
        for (i, (name, sql)) in MIGRATIONS.iter().enumerate() {
            let m = Migration::unapplied(name, sql).unwrap();
            assert_eq!(i64::from(m.version()), i as i64 + 1, "{name}");
        }
        assert!(runner(Some(1)).is_ok());
    }
}
