//! `perflab olap`: its command-line arguments (clap), beside the shared ones.

use crate::sql::args::{SqlArgs, Words};
use crate::workload::run_args::Action;
use crate::workload::run_args::RunArgs;
use clap::Args;
use std::path::PathBuf;

/// `perflab olap` (docs/options.md). Loaders and analysts each have their own connection.
#[derive(Debug, Args)]
pub struct OlapArgs {
    /// `all` (load, aggregate, query, drop: the default), `prepare` (the load and aggregate
    /// phases, timed, and keep the tables), `run` (the query phase against prepared tables) or
    /// `cleanup` (drop what perflab made)
    #[arg(value_enum, default_value = "all")]
    pub action: Action,
    /// The database: sqlite:///path/to/file.db (default: a temporary file),
    /// postgres://user[:password]@host[:port]/database or mysql://...
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Rows of the fact table (sales)
    #[arg(long, value_name = "N", default_value = "1m")]
    pub rows: String,
    /// Flat files the sales are split over (each dimension has one more)
    #[arg(long, value_name = "N", default_value = "8")]
    pub files: String,
    /// Workers of the load and aggregate phases, each with its own connection (default: one
    /// per CPU)
    #[arg(long, value_name = "N")]
    pub loaders: Option<String>,
    /// Write the flat files here and keep them (default: a temporary directory, removed
    /// afterwards); perflab creates the directory and will not overwrite files in it
    #[arg(long, value_name = "DIR")]
    pub files_dir: Option<PathBuf>,
    /// The query mix: kinds and weights, from rollup, drill, slice and topn
    #[arg(
        long,
        value_name = "KIND=W,..",
        default_value = "rollup=1,drill=1,slice=1,topn=1"
    )]
    pub mix: String,
    #[command(flatten)]
    pub sql: SqlArgs<OlapWords>,
    #[command(flatten)]
    pub query: crate::sql::query_mode::QueryModeArg,
    #[command(flatten)]
    pub run: RunArgs,
}

/// How `perflab olap --help` words the SQL options: a load or a summary can take minutes.
#[derive(Debug)]
pub enum OlapWords {}

impl Words for OlapWords {
    const SET: &'static str =
        "Servers: a session parameter on every connection, e.g. work_mem=64MB; repeatable";
    const OP_TIMEOUT: &'static str =
        "Servers: an answer not received in this long fails its query (counted as an error)";
    const OP_TIMEOUT_DEFAULT: &'static str = "10m";
}
