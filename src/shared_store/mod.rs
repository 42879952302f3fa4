//! A team's shared results store on PostgreSQL, beside each machine's results folder.
//!
//! ```text
//!  a run ─► archive (run.json, the write-ahead copy) ─► queue::enqueue ─► queue::send ─► perflab_runs
//!                                                        <results>/shared-queue/<id>      (upload)
//!  perflab shared sync ─────────────────────────────────► queue::send
//!  runs, show, export, report, compare, tag, trend, serve ─► SharedStore: archive::RunStore
//! ```
//!
//! - [`conn`]: the address (`--shared`, `PERFLAB_SHARED`) and one connection through
//!   perflab's own PostgreSQL client, with its prepared statements.
//! - [`schema`]: the tables, migrated by refinery over that client; the roles.
//! - [`upload`]: a record into the store, idempotent, joining under another id as `import`
//!   does when its id is another host's.
//! - [`queue`]: runs waiting to be sent, one empty file each in the results folder.
//! - [`read`]: [`SharedStore`] as an [`archive::RunStore`], so the commands read it as they
//!   read a folder.
//!
//! It sits above `sql` (it uses its PostgreSQL client) and below the commands, `serve` and
//! `launch` (docs/architecture.md). The tables are documented for people who query them
//! directly in docs/shared-store.md.

pub mod conn;
pub mod queue;
pub mod read;
pub mod schema;
pub mod upload;

use crate::archive::{self, ArchiveError, RunStore};
pub use conn::Address;
pub use read::SharedStore;
use std::path::Path;

/// The environment variable naming the shared store when `--shared` does not.
pub const ENV: &str = "PERFLAB_SHARED";

/// What a command does with the runs it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads and tags (a writer's role).
    Write,
    /// Reads only: every transaction read-only (`serve`).
    Read,
}

/// The store a command reads: the shared store when one is named (`--shared`, else
/// `PERFLAB_SHARED`) and `--local` is not given, else the results folder (`serve` opens its
/// folder read-only).
pub fn open(
    results: Option<&Path>,
    shared: Option<&str>,
    local: bool,
    access: Access,
) -> Result<Box<dyn RunStore>, ArchiveError> {
    match (shared, local) {
        (Some(text), false) => Ok(Box::new(SharedStore::open(&Address::parse(text)?, access)?)),
        _ => match access {
            Access::Write => Ok(Box::new(archive::Archive::open(results)?)),
            Access::Read => Ok(Box::new(archive::ReadOnlyArchive::open(results)?)),
        },
    }
}

/// The shared store's address as given: `--shared`, else `PERFLAB_SHARED` (empty is unset).
pub fn address_given(flag: Option<&str>) -> Option<String> {
    flag.map(str::to_string)
        .or_else(|| std::env::var(ENV).ok())
        .filter(|s| !s.trim().is_empty())
}
