//! `perflab scan`: its command-line arguments (clap), beside the shared ones.

use crate::sql::args::{SqlArgs, Words};
use crate::workload::run_args::Action;
use crate::workload::run_args::RunArgs;
use clap::Args;

/// `perflab scan` (docs/options.md). Clients each have their own connection and run one
/// whole scan per op.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// `all` (load, run, drop: the default), `prepare` (load and keep), `run` (against
    /// prepared tables) or `cleanup` (drop what prepare made), as oltp's steps
    #[arg(value_enum, default_value = "all")]
    pub action: Action,
    /// The database: sqlite:///path/to/file.db (default: a temporary file),
    /// postgres://user[:password]@host[:port]/database or mysql://...; or `native` for the
    /// native ceiling alone
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Tables: ten, hundred, thousand, page (10 B, 100 B, 1 KB and 8 KB rows); sweeps
    #[arg(
        long,
        value_name = "NAME,..",
        default_value = "ten,hundred,thousand,page"
    )]
    pub table: String,
    /// Predicates: trivial (count(*) where a = 0) and complex (stdev of a trigonometric
    /// expression per row); sweeps
    #[arg(long, value_name = "NAME,..", default_value = "trivial,complex")]
    pub predicate: String,
    /// cold (each scan reads from storage: SQLite's file dropped from the page cache; a
    /// server's own cache reported) and warm (a repeat); sweeps
    /// (default: both; the native ceiling: warm)
    #[arg(long, value_name = "cold,warm")]
    pub cache: Option<String>,
    /// Bytes of row data per table (rows = size / row size)
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "64m",
        conflicts_with = "rows"
    )]
    pub size: String,
    /// Rows per table, instead of --size (the same count in every table)
    #[arg(long, value_name = "N")]
    pub rows: Option<String>,
    /// The native ceiling before the engine's run: perflab's own scan of the same rows in
    /// memory, at the same thread counts
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub native: crate::vocab::Switch,
    #[command(flatten)]
    pub sql: SqlArgs<ScanWords>,
    #[command(flatten)]
    pub query: crate::sql::query_mode::QueryModeArg,
    #[command(flatten)]
    pub run: RunArgs,
}

/// How `perflab scan --help` words the SQL options: one scan can take minutes.
#[derive(Debug)]
pub enum ScanWords {}

impl Words for ScanWords {
    const SET: &'static str = "Servers: a session parameter on every connection; several \
        values sweep, e.g. max_parallel_workers_per_gather=0,2,4 (a comma inside one value is \
        written \\,); repeatable";
    const OP_TIMEOUT: &'static str = "Servers: a scan unanswered this long fails (counted as an \
        error) and its connection is opened again";
    const OP_TIMEOUT_DEFAULT: &'static str = "10m";
}
