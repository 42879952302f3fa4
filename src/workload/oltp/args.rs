//! `perflab oltp`: its command-line arguments (clap), beside the shared ones.

use crate::sql::args::{SqlArgs, Words};
use crate::workload::run_args::{Action, RunArgs};
use clap::Args;

/// OLTP options (docs/options.md maps them to pgbench's and sysbench's).
#[derive(Debug, Args)]
pub struct OltpArgs {
    /// `all` (load, run, drop: the default), `prepare` (load and keep), `run` (against a
    /// prepared bank) or `cleanup` (drop what prepare made), as sysbench's steps
    #[arg(value_enum, default_value = "all")]
    pub action: Action,
    /// The transactions: debitcredit (TPC-B, pgbench's tpcb-like), orderentry (customers,
    /// orders and order lines, 90/10 read/write by statements), tpcc (TPC-C-style order
    /// processing: new-order, payment, order-status, delivery, stock-level; NOPM) or one of
    /// sysbench's OLTP tests (oltp_read_write, oltp_point_select, ... bulk_insert)
    #[arg(long, default_value = "debitcredit")]
    pub workload: String,
    /// sysbench's tests: one of their options, as sysbench names it (NAME=VALUE, repeatable:
    /// tables=4, table_size=100000, range_size, point_selects, skip_trx=on, rand_type ...;
    /// docs/options.md lists them); sysbench's own line (--tables=4) is read into these
    #[arg(long = "sysbench", value_name = "NAME=VALUE")]
    pub sysbench: Vec<String>,
    /// tpcc: warehouses (the database holds the largest; each step works on the first N);
    /// sweeps. Same as --scale for tpcc
    #[arg(long, value_name = "N|SWEEP")]
    pub warehouses: Option<String>,
    /// tpcc: throughput (no keying or think times, terminals as fast as they go) or spec
    /// (10 terminals per warehouse with the specification's keying and think times; the
    /// clients follow from --warehouses)
    #[arg(long, value_name = "throughput|spec")]
    pub mode: Option<String>,
    /// tpcc spec mode: multiply the keying and think times (a run with anything but 1 is
    /// not valid by the specification's rules, and its record says so)
    #[arg(long, value_name = "F")]
    pub wait_factor: Option<String>,
    /// The database: sqlite:///path/to/file.db (default: a temporary file),
    /// postgres://user[:password]@host[:port]/database or mysql://... (MySQL and MariaDB);
    /// passwords also from PGPASSWORD, ~/.pgpass, MYSQL_PWD, ~/.my.cnf. Repeat for shards:
    /// user i works on shard i mod N
    #[arg(long, value_name = "URL")]
    pub target: Vec<String>,
    /// Shards from one --target: SQLite files FILE-1.db ... FILE-N.db, or databases DB_1 ...
    /// DB_N on the server (made where missing, dropped if perflab made them)
    #[arg(long, value_name = "N")]
    pub shards: Option<String>,
    /// debitcredit: branches, 100,000 accounts and 10 tellers each (pgbench --scale);
    /// orderentry: thousands of customers, 10 orders of 5 lines each
    #[arg(long, value_name = "N", default_value = "1")]
    pub scale: String,
    /// Reads only: the account lookup (pgbench --select-only), or order lookups
    #[arg(long)]
    pub select_only: bool,
    /// pgbench scripts to run instead (FILE[@WEIGHT], repeatable): pgbench 15's language,
    /// on any engine (pgbench's -f)
    #[arg(long = "script", value_name = "FILE[@W]")]
    pub script: Vec<String>,
    /// pgbench's built-in scripts (NAME[@WEIGHT], repeatable; a unique prefix will do;
    /// `list` lists them): tpcb-like, simple-update, select-only (pgbench's -b)
    #[arg(long = "builtin", value_name = "NAME[@W]")]
    pub builtin: Vec<String>,
    /// A script variable (NAME=VALUE, repeatable; pgbench's -D)
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub define: Vec<String>,
    /// Scripts: tries of a transaction that hit a serialization failure or deadlock (1: no
    /// retry, pgbench's default; 0: no limit)
    #[arg(long = "max-tries", value_name = "N")]
    pub max_tries: Option<String>,
    /// Scripts: every command's latency and failures, each a group of the step (pgbench's -r)
    #[arg(long)]
    pub per_statement: bool,
    /// A new connection for every transaction, made between transactions (pgbench's -C;
    /// its time is counted apart, in connect_ms_mean)
    #[arg(long)]
    pub connect_each: bool,
    /// A client whose transaction fails for any cause but a serialization failure or a
    /// deadlock stops for the rest of the step, and the run fails: pgbench's rule (its
    /// dialect sets it). Without it the failure is counted and the client goes on
    #[arg(long)]
    pub abort_on_error: bool,
    /// Write every transaction of the measure phase to PREFIX.PID in the current folder, in
    /// pgbench's log format (pgbench's -l)
    #[arg(long)]
    pub log_transactions: bool,
    /// The log's name before .PID (pgbench's --log-prefix)
    #[arg(long, value_name = "PREFIX", default_value = "pgbench_log")]
    pub log_prefix: String,
    /// The share of transactions logged, from 0 to 1 (pgbench's --sampling-rate)
    #[arg(long, value_name = "F")]
    pub sampling_rate: Option<String>,
    /// One log line per this many seconds, pgbench's aggregated format, instead of one per
    /// transaction (pgbench's --aggregate-interval; needs --log-transactions)
    #[arg(long, value_name = "SECONDS")]
    pub aggregate_interval: Option<String>,
    /// Count the transactions slower than this as late, in late_per_client; with --rate,
    /// skip those already this late when their client is ready (schedule.skipped_ops), as
    /// pgbench's -L does
    #[arg(long, value_name = "TIME")]
    pub latency_limit: Option<String>,
    /// SQLite journal_mode: wal, delete, truncate, persist, memory, off
    #[arg(long, value_name = "MODE", default_value = "wal")]
    pub sqlite_journal_mode: String,
    /// SQLite synchronous: full, normal, off, extra
    #[arg(long, value_name = "MODE", default_value = "full")]
    pub sqlite_synchronous: String,
    #[command(flatten)]
    pub sql: SqlArgs<OltpWords>,
    #[command(flatten)]
    pub query: crate::sql::query_mode::QueryModeArg,
    #[command(flatten)]
    pub run: RunArgs,
}

/// How `perflab oltp --help` words the SQL options: a statement's timeout fails its
/// transaction, and the tables are the bank.
#[derive(Debug)]
pub enum OltpWords {}

impl Words for OltpWords {
    const SET: &'static str = "Servers: set a session parameter on every connection, e.g. \
        synchronous_commit=off (PostgreSQL) or innodb_lock_wait_timeout=5 (MySQL); several \
        values sweep (synchronous_commit=on,off; a comma inside one value is written \\,); \
        repeatable";
    const SET_ALIASES: &'static [&'static str] = &["pg-set"];
    const KEEP: &'static str = "Keep the bank after `all` (drop it later with `cleanup`)";
    const OP_TIMEOUT: &'static str = "Servers: a statement unanswered this long fails its \
        transaction as a timeout (counted apart, in timeouts_per_client) and the connection \
        is re-opened";
    const OP_TIMEOUT_DEFAULT: &'static str = "30s";
}
