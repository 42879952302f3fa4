//! The command line: clap definitions only. Values stay text here (sweeps and units are read
//! by `crate::spec`), so that every check and every error message lives in one place.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// perflab: curves of throughput and response time for a machine's memory, CPU and storage
/// (and, coming, databases and caches), archived and comparable.
#[derive(Debug, Parser)]
#[command(name = "perflab", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Results folder (default: $PERFLAB_RESULTS, else $XDG_DATA_HOME/perflab, else ~/.local/share/perflab)
    #[arg(long, global = true, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print the record (or listing) as JSON on stdout instead of tables
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress display on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite: by default the machine balance sheet (memory, CPU and storage)
    Run(SuiteArgs),
    /// Memory bandwidth (STREAM kernels), latency (pointer chase) and the lotto test
    Memory(MemoryArgs),
    /// CPU throughput: Mandelbrot fractals per second against threads
    Cpu(CpuArgs),
    /// Storage I/O against files, directories or block devices (fio-class): IOPS, bandwidth
    /// and latency, ramps over files and queue depths, IOzone's surface
    Io(Box<IoArgs>),
    /// OLTP: DebitCredit (TPC-B, pgbench-compatible) on a database; SQLite needs no server
    Oltp(Box<OltpArgs>),
    /// Key-value caches: memcached and Redis, gets and sets over a preloaded key space,
    /// pipelined, closed or open loop (memtier_benchmark's options); with no --target, a
    /// throwaway memcached
    Kv(Box<KvArgs>),
    /// Mail, SPECmail-style: users' SMTP/LMTP submissions, IMAP checks and syncs and POP3
    /// sessions at the rate the user count implies in the peak hour; per-command response
    /// times, delivery time, every message accounted for, the quality of service per step;
    /// with no --target, a throwaway Dovecot
    Mail(Box<MailArgs>),
    /// Table scans (Gray's study): tables of 10 B, 100 B, 1 KB and 8 KB rows, a trivial and
    /// a complex predicate, cold and warm, on SQLite (default), PostgreSQL or MySQL, beside
    /// perflab's own scan of the same rows in memory (the native ceiling)
    Scan(Box<ScanArgs>),
    /// OLAP (the Essbase report's phases): a star schema loaded from flat files in parallel
    /// through the engine's bulk path, summary tables built, then roll-up, drill, slice and
    /// top-N queries as analysts are added; on SQLite (default), PostgreSQL or MySQL
    Olap(Box<OlapArgs>),
    /// Batch jobs: K copies of a command at once (or a batch of N jobs through K slots),
    /// pinned compact, spread or not; jobs per hour, elapsed and CPU per job, and the
    /// throughput relative to one copy alone
    Jobs(Box<JobsArgs>),
    /// The null target: ops that do nothing, to measure perflab itself
    Null(NullArgs),
    /// List the archived runs
    Runs,
    /// Show an archived run as tables
    Show(ShowArgs),
    /// Export an archived run
    Export(ExportArgs),
    /// Write a report of archived runs: one self-contained HTML file (or Markdown with SVG
    /// files) with curves, response-time hockey sticks, time series, latency spectra, tables
    /// and the disclosure
    Report(ReportArgs),
    /// Compare runs step by step: ratios with 95% intervals and verdicts (faster, slower,
    /// equivalent, inconclusive), and every difference in their disclosure
    Compare(CompareArgs),
    /// Name a run, e.g. as a baseline ('perflab compare baseline last')
    Tag(TagArgs),
    /// Print the disclosure of this machine
    Sysinfo,
    /// List the targets perflab can measure
    Targets,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Suite name
    #[arg(default_value = "default", value_name = "SUITE")]
    pub suite: String,
    /// Short steps: the whole suite within about a minute
    #[arg(long)]
    pub quick: bool,
    /// Directory for the storage tests' temporary files (default: the results folder)
    #[arg(long, value_name = "DIR")]
    pub io_path: Option<PathBuf>,
}

/// Options every workload shares. Numeric options sweep: `1,2,4`, `1..8`, `1..64:x2`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Worker threads (for oltp: clients, each with its own connection; alias --clients);
    /// sweeps (fio --numjobs, pgbench --clients)
    #[arg(long, short = 't', visible_alias = "clients", value_name = "N|SWEEP")]
    pub threads: Option<String>,
    /// Warm-up before each step is measured (fio --ramp_time)
    #[arg(long, value_name = "TIME")]
    pub warmup: Option<String>,
    /// Measure each step this long (fio --runtime, pgbench --time)
    #[arg(long, short = 'd', value_name = "TIME", conflicts_with = "ops")]
    pub duration: Option<String>,
    /// Measure each step for this many ops over all workers instead of a time (fio --number_ios)
    #[arg(long, value_name = "N")]
    pub ops: Option<String>,
    /// Run each step N times; steps report mean and 95% confidence interval
    #[arg(long, value_name = "N", default_value = "1")]
    pub repeat: String,
    /// Open loop: start ops at this rate (e.g. 1000/s; sweeps), timing responses from the
    /// intended start (fio --rate_iops, pgbench --rate)
    #[arg(long, value_name = "RATE|SWEEP")]
    pub rate: Option<String>,
    /// Whether --rate is for all workers together or for each worker (default: total; for
    /// oltp, worker: a rate per user, the stabilized load). Under MPI, total and worker
    /// divide --threads and --ops over the active ranks; rank gives each active rank
    /// --threads, --ops and --rate whole
    #[arg(long, value_enum)]
    pub rate_scope: Option<crate::run::RateScope>,
    /// Under MPI: how many ranks drive the load (e.g. 1..8; sweeps): the curve against
    /// client hosts. Default: every rank
    #[arg(long, value_name = "N|SWEEP")]
    pub active_ranks: Option<String>,
    /// Spacing of open-loop starts (fio --rate_process)
    #[arg(long, value_enum, default_value = "poisson", requires = "rate")]
    pub arrival: crate::run::Arrival,
    /// Closed loop: pause after each op (fio --thinktime)
    #[arg(long, value_name = "TIME", conflicts_with = "rate")]
    pub think: Option<String>,
    /// Seed of every random choice, for repeatable op streams
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,
    /// Length of one point of the per-step time series
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Read the machine's counters every interval (CPU, memory, network, disks, power);
    /// off only to measure the sampler's own cost
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub resources: crate::spec::Switch,
    /// A power meter: a command printing watts (e.g. a PDU query), run every interval; its
    /// readings are recorded as the run's power
    #[arg(long, value_name = "CMD")]
    pub power_cmd: Option<String>,
    /// SPECpower's graduated load levels, in percent of a calibrated maximum (e.g.
    /// 100..10:-10,0; 0 is active idle): calibrate at full speed, then run each level open
    /// loop at that share; reports watts and ops per watt where power is readable
    #[arg(long, value_name = "PCT,..", conflicts_with_all = ["rate", "think", "ops"])]
    pub load_levels: Option<String>,
    /// Full-speed calibration steps before the load levels; the maximum is the mean of the
    /// last two
    #[arg(long, value_name = "N", default_value = "3", requires = "load_levels")]
    pub calibrate: String,
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Kernels: read, write, copy, scale, add, triad (bandwidth); latency; lotto. A list sweeps.
    #[arg(long, short = 'k', value_name = "LIST", default_value = "copy,triad")]
    pub kernel: String,
    /// Bandwidth: bytes of each array, split over threads (default 4x the last-level cache);
    /// latency: working set (default 16k up to 4x the last-level cache); lotto: table per thread
    #[arg(long, short = 's', value_name = "SIZE|SWEEP")]
    pub size: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct CpuArgs {
    /// Pixels per side of one fractal
    #[arg(long, value_name = "N|SWEEP")]
    pub side: Option<String>,
    /// Iterations before a point counts as inside the set
    #[arg(long, value_name = "N|SWEEP")]
    pub max_iter: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Storage options, named as fio names them (docs/options.md maps each to its fio flag).
#[derive(Debug, Args)]
pub struct IoArgs {
    /// Where the I/O goes: a directory (perflab creates its files in it), an existing file, or
    /// a block device; repeat for several volumes (fio --filename, --directory)
    #[arg(long, short = 'p', value_name = "PATH", default_value = ".")]
    pub path: Vec<String>,
    /// `test` (fio-style) or `surface` (IOzone's file size x record size, buffered)
    #[arg(long, value_enum, default_value = "test")]
    pub mode: IoMode,
    /// Pattern: read, write, randread, randwrite, rw, randrw; a list sweeps (fio --rw)
    #[arg(long, value_name = "LIST", default_value = "randread")]
    pub rw: String,
    /// Block size; sweeps. In surface mode: the record sizes (default 4k..16m:x2) (fio --bs)
    #[arg(long, short = 'b', value_name = "SIZE|SWEEP")]
    pub bs: Option<String>,
    /// Weighted block sizes, e.g. 4k/60:64k/40 (fio --bssplit)
    #[arg(long, value_name = "SPLIT", conflicts_with = "bs")]
    pub bssplit: Option<String>,
    /// Percent of reads in rw and randrw; sweeps (fio --rwmixread)
    #[arg(
        long,
        visible_alias = "rwmixread",
        value_name = "PCT|SWEEP",
        default_value = "50"
    )]
    pub rwmix: String,
    /// I/Os in flight per file; sweeps (fio --iodepth)
    #[arg(long, value_name = "N|SWEEP", default_value = "1")]
    pub iodepth: String,
    /// Files (volumes), each with its own queue, spread over the paths; sweeps (fio --nrfiles)
    #[arg(long, value_name = "N|SWEEP", default_value = "1")]
    pub files: String,
    /// Bytes of each file (or device region) the test touches (default 1g, or the whole
    /// device). In surface mode: the file sizes (default 64k up to 2x RAM) (fio --size)
    #[arg(long, short = 's', value_name = "SIZE")]
    pub size: Option<String>,
    /// Where the region starts in each file or device (fio --offset)
    #[arg(long, value_name = "SIZE", default_value = "0")]
    pub offset: String,
    /// 1: O_DIRECT, bypassing the page cache (the default for characterizing storage);
    /// 0: buffered. A bare --direct means 1, as in fio (fio --direct)
    #[arg(
        long,
        value_name = "0|1",
        default_value = "1",
        num_args = 0..=1,
        default_missing_value = "1"
    )]
    pub direct: String,
    /// fsync after every N writes per file (fio --fsync)
    #[arg(long, value_name = "N", default_value = "0")]
    pub fsync: String,
    /// fdatasync after every N writes per file (fio --fdatasync)
    #[arg(long, value_name = "N", default_value = "0", conflicts_with = "fsync")]
    pub fdatasync: String,
    /// Random offsets: uniform, zipf:THETA, pareto:H or hot:ACCESS%/DATA% (fio
    /// --random_distribution)
    #[arg(
        long,
        visible_alias = "random-distribution",
        value_name = "DIST",
        default_value = "uniform"
    )]
    pub distribution: String,
    /// io_uring or sync (pread/pwrite); default io_uring where the kernel allows (fio --ioengine)
    #[arg(long, visible_alias = "ioengine", value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Write the files in full before the test (always done for reads of new files)
    #[arg(long)]
    pub prefill: bool,
    /// Write self-checking blocks and check every read, then read back all written blocks
    /// (fio --verify)
    #[arg(long)]
    pub verify: bool,
    /// Keep the test files after the run (to reuse them: pass their directory as --path)
    #[arg(long)]
    pub keep: bool,
    /// Allow writing to this device or foreign file, destroying what it holds
    #[arg(long, value_name = "PATH")]
    pub destroy_data: Option<String>,
    /// Find when each step's rate becomes steady: report the rate at the start and once steady
    /// (fio --steadystate)
    #[arg(long)]
    pub steady_state: bool,
    /// Steady state: length of the rolling window (fio --ss_dur)
    #[arg(
        long,
        value_name = "TIME",
        default_value = "10s",
        requires = "steady_state"
    )]
    pub ss_window: String,
    /// Steady state: most the rate may trend across the window, percent of its mean
    #[arg(
        long,
        value_name = "PCT",
        default_value = "10",
        requires = "steady_state"
    )]
    pub ss_slope: String,
    /// Steady state: widest the window's range may be, percent of its mean
    #[arg(
        long,
        value_name = "PCT",
        default_value = "20",
        requires = "steady_state"
    )]
    pub ss_spread: String,
    /// A file slower than this percent of the median file is flagged as a straggler
    #[arg(long, value_name = "PCT", default_value = "50")]
    pub straggler: String,
    #[command(flatten)]
    pub run: RunArgs,
}

/// OLTP options (docs/options.md maps them to pgbench's and sysbench's).
#[derive(Debug, Args)]
pub struct OltpArgs {
    /// `all` (load, run, drop: the default), `prepare` (load and keep), `run` (against a
    /// prepared bank) or `cleanup` (drop what prepare made), as sysbench's steps
    #[arg(value_enum, default_value = "all")]
    pub action: OltpAction,
    /// The transactions: debitcredit (TPC-B, pgbench's tpcb-like), orderentry (customers,
    /// orders and order lines, 90/10 read/write by statements) or tpcc (TPC-C-style order
    /// processing: new-order, payment, order-status, delivery, stock-level; NOPM)
    #[arg(long, default_value = "debitcredit")]
    pub workload: String,
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
    /// SQLite journal_mode: wal, delete, truncate, persist, memory, off
    #[arg(long, value_name = "MODE", default_value = "wal")]
    pub sqlite_journal_mode: String,
    /// SQLite synchronous: full, normal, off, extra
    #[arg(long, value_name = "MODE", default_value = "full")]
    pub sqlite_synchronous: String,
    /// Servers: set a session parameter on every connection, e.g. synchronous_commit=off
    /// (PostgreSQL) or innodb_lock_wait_timeout=5 (MySQL); repeatable
    #[arg(long, visible_alias = "pg-set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Keep the bank after `all` (drop it later with `cleanup`)
    #[arg(long)]
    pub keep: bool,
    /// Servers: a statement unanswered this long fails its transaction as a timeout
    /// (counted apart, in timeouts_per_client) and the connection is re-opened
    #[arg(long, value_name = "TIME", default_value = "30s")]
    pub op_timeout: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OltpAction {
    All,
    Prepare,
    Run,
    Cleanup,
}

/// `perflab kv`. Threads are worker threads here; `--clients` are connections.
#[derive(Debug, Args)]
#[command(mut_arg("threads", |a| a
    .visible_alias(None)
    .help("Worker threads (memtier --threads), each serving its share of the connections on one event loop; sweeps")))]
pub struct KvArgs {
    /// `all` (load, run, delete: the default), `prepare` (load and keep), `run` (against
    /// loaded keys) or `cleanup` (delete perflab's keys), as oltp's steps
    #[arg(value_enum, default_value = "all")]
    pub action: KvAction,
    /// The cache: memcached://host:11211, memcached:///path.sock, redis://[user:pass@]host:6379/0
    /// (?protocol=3 for RESP3; password also from REDISCLI_AUTH). Default: a throwaway
    /// memcached on 127.0.0.1, started from PATH
    #[arg(long, value_name = "URL")]
    pub target: Vec<String>,
    /// memcached protocol: text (get/set, every server and peer) or meta (mg/ms with opaque
    /// tokens, memcached 1.6+)
    #[arg(long, value_name = "text|meta", default_value = "text")]
    pub protocol: String,
    /// Connections, over all threads (memtier's threads × clients); sweeps
    #[arg(long, short = 'c', value_name = "N|SWEEP")]
    pub clients: Option<String>,
    /// Requests in flight per connection (memtier --pipeline, redis-benchmark -P); sweeps
    #[arg(long, value_name = "N|SWEEP", default_value = "1")]
    pub pipeline: String,
    /// SET:GET ratio (memtier --ratio): 1:9 is 10% sets
    #[arg(long, value_name = "SET:GET", default_value = "1:9")]
    pub ratio: String,
    /// Lowest key index (memtier --key-minimum)
    #[arg(long, value_name = "N", default_value = "0")]
    pub key_minimum: String,
    /// Highest key index (memtier --key-maximum); every key is loaded before the first step
    #[arg(long, value_name = "N", default_value = "99999")]
    pub key_maximum: String,
    /// Text before each key's index; cleanup deletes only these keys
    #[arg(long, value_name = "TEXT", default_value = "perflab:")]
    pub key_prefix: String,
    /// Key choice: uniform, sequential, zipf, gaussian (memtier's R, S, Z, G)
    #[arg(long, value_name = "PATTERN", default_value = "uniform")]
    pub key_pattern: String,
    /// Zipf exponent for --key-pattern zipf (memtier --key-zipf-exp)
    #[arg(long, value_name = "X")]
    pub key_zipf_exp: Option<String>,
    /// Gaussian key choice: standard deviation (default: the range / 6)
    #[arg(long, value_name = "N")]
    pub key_stddev: Option<String>,
    /// Gaussian key choice: median (default: the middle of the range)
    #[arg(long, value_name = "N")]
    pub key_median: Option<String>,
    /// Value sizes: 100, weighted ranges 4-100:1,1k-2k:1,5k-20k:1 (the default, the cache
    /// study's three classes), or etc (Facebook's ETC distribution); each key's size is fixed
    #[arg(long, value_name = "SIZES")]
    pub value_size: Option<String>,
    /// memtier's spelling of a size range: MIN-MAX
    #[arg(long, value_name = "MIN-MAX", conflicts_with_all = ["value_size", "data_size_list"])]
    pub data_size_range: Option<String>,
    /// memtier's spelling of exact sizes with weights: SIZE:WEIGHT,...
    #[arg(long, value_name = "SIZE:WEIGHT,...", conflicts_with = "value_size")]
    pub data_size_list: Option<String>,
    /// Expiry of the values set, in seconds (0: never)
    #[arg(long, value_name = "SECS", default_value = "0")]
    pub ttl: String,
    /// Compare every value a get returns with the bytes perflab set (not only its size)
    #[arg(long)]
    pub verify: bool,
    /// Throwaway memcached: its worker threads (-t), restarted and reloaded per value; sweeps
    #[arg(long, value_name = "N|SWEEP")]
    pub server_threads: Option<String>,
    /// Throwaway memcached: its item memory (-m)
    #[arg(long, value_name = "SIZE", default_value = "1g")]
    pub server_memory: String,
    /// Keep the keys after `all` (delete them later with `cleanup`)
    #[arg(long)]
    pub keep: bool,
    /// The Redis target must be a Redis Cluster node (slots from CLUSTER SLOTS, MOVED and ASK
    /// followed); without it a cluster is still detected from INFO
    #[arg(long)]
    pub cluster: bool,
    /// A request unanswered this long fails its connection (counted in timeouts), which is
    /// opened again
    #[arg(long, value_name = "TIME", default_value = "10s")]
    pub op_timeout: String,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `perflab mail` (docs/options.md). Threads are the sessions that may be open at once.
#[derive(Debug, Args)]
#[command(mut_arg("threads", |a| a
    .visible_alias(None)
    .help("Sessions open at once at most (each on its own thread and connections); the users' arrivals are shared among them; sweeps")))]
pub struct MailArgs {
    /// The IMAP server: imap://host[:143], or imaps://host[:993] for TLS. Default: a
    /// throwaway Dovecot on 127.0.0.1, started from PATH, with its users and mailboxes made
    /// for the run
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Where messages are submitted: smtp://host[:25], smtps://host[:465] (TLS) or
    /// lmtp://host[:24] (default with --target: lmtp on the IMAP host, port 24)
    #[arg(long, value_name = "URL")]
    pub smtp: Option<String>,
    /// The POP3 server: pop3://host[:110] or pop3s://host[:995] (default with --target: the
    /// IMAP host, port 110, or pop3s on 995 when --target is imaps://)
    #[arg(long, value_name = "URL")]
    pub pop3: Option<String>,
    /// TLS on the throwaway Dovecot: a self-signed certificate made for the run, sessions on
    /// IMAPS and POP3S, LMTP upgraded by STARTTLS (with --target, give imaps:// pop3s://
    /// smtps:// URLs instead)
    #[arg(long, conflicts_with = "starttls")]
    pub tls: bool,
    /// Upgrade every plain connection (imap://, pop3://, smtp://, lmtp://) by STARTTLS (STLS
    /// for POP3); without --target the throwaway Dovecot gets a self-signed certificate
    #[arg(long)]
    pub starttls: bool,
    /// Users at each step; sweeps (100..3200:x2)
    #[arg(
        long,
        short = 'u',
        value_name = "N|SWEEP",
        default_value = "1000,2000,4000,8000"
    )]
    pub users: String,
    /// The user profile: office (enterprise IMAP users) or isp (POP3 users, SPECmail2001's
    /// day); the options below change its numbers
    #[arg(long, value_name = "NAME", default_value = "office")]
    pub profile: String,
    /// Messages a user sends a day
    #[arg(long, value_name = "N")]
    pub sent_per_day: Option<String>,
    /// Recipients of each message: N or MIN-MAX (uniform)
    #[arg(long, value_name = "N|MIN-MAX")]
    pub recipients: Option<String>,
    /// Short IMAP checks an IMAP user makes a day
    #[arg(long, value_name = "N")]
    pub imap_checks_per_day: Option<String>,
    /// Caching-client IMAP syncs an IMAP user makes a day
    #[arg(long, value_name = "N")]
    pub imap_syncs_per_day: Option<String>,
    /// POP3 sessions a POP3 user makes a day
    #[arg(long, value_name = "N")]
    pub pop3_per_day: Option<String>,
    /// Share of the users who read by POP3 (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub pop3_users: Option<String>,
    /// Share of the day's activity in the peak hour (SPECmail2001: 0.15)
    #[arg(long, value_name = "SHARE")]
    pub peak_share: Option<String>,
    /// Bodies a short IMAP check reads at most
    #[arg(long, value_name = "N")]
    pub check_bodies: Option<String>,
    /// Share of the new messages a short IMAP check deletes (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub check_deletes: Option<String>,
    /// Most messages a POP3 session retrieves (rabid -c)
    #[arg(long, value_name = "N")]
    pub pop3_retrieve: Option<String>,
    /// Share of the messages a POP3 session retrieves that it deletes (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub pop3_deletes: Option<String>,
    /// Messages in every mailbox before the first step (throwaway server)
    #[arg(long, value_name = "N")]
    pub mailbox_messages: Option<String>,
    /// Message sizes with weights, SIZE:WEIGHT,...; larger than 8k are multipart with an
    /// attachment
    #[arg(
        long,
        value_name = "SIZES",
        default_value = "1k:35,3k:30,8k:20,32k:12,256k:3"
    )]
    pub message_size: String,
    /// Users whose INBOX an IDLE-ing reader watches all step: their messages' delivery time
    /// is measured
    #[arg(long, value_name = "N", default_value = "8")]
    pub watchers: String,
    /// Share of the messages that go to a watched user (in place of one recipient), so
    /// delivery is timed on enough messages at any user count
    #[arg(long, value_name = "SHARE", default_value = "0.1")]
    pub watched_share: String,
    /// Check every step against the quality of service: each command within
    /// --command-limit for 95%, delivery within --delivery-limit for 95%, under 1% errors
    #[arg(long)]
    pub qos: bool,
    /// Find the users supported: the largest of --users's values (a range, e.g.
    /// 100..6400:+100) that passes the quality of service at 100%, 120% and 80% of its load,
    /// SPECmail's qualification; implies --qos
    #[arg(long)]
    pub search_users: bool,
    /// Quality of service: a command's limit
    #[arg(long, value_name = "TIME", default_value = "5s")]
    pub command_limit: String,
    /// Quality of service: a message's delivery limit
    #[arg(long, value_name = "TIME", default_value = "60s")]
    pub delivery_limit: String,
    /// User names with a target: a pattern where %d is the user's number from 1
    #[arg(long, value_name = "PATTERN", default_value = "user%d")]
    pub user_pattern: String,
    /// Passwords with a target: a pattern where %d is the user's number (the text is never
    /// printed or archived); default: $PERFLAB_MAIL_PASSWORD, the same for every user
    #[arg(long, value_name = "PATTERN")]
    pub password_pattern: Option<String>,
    /// Users with a target, one NAME:PASSWORD per line (instead of the patterns)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["user_pattern", "password_pattern"])]
    pub users_file: Option<std::path::PathBuf>,
    /// The domain of the users' addresses
    #[arg(long, value_name = "DOMAIN", default_value = "perflab.test")]
    pub domain: String,
    /// POP3 sessions send each RETR with its DELE when the server advertises PIPELINING
    /// (RFC 2449); off: one command at a time, as rabid does
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub pipelining: crate::spec::Switch,
    /// A command unanswered this long fails its session
    #[arg(long, value_name = "TIME", default_value = "30s")]
    pub op_timeout: String,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `perflab scan` (docs/options.md). Clients each have their own connection and run one
/// whole scan per op.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// `all` (load, run, drop: the default), `prepare` (load and keep), `run` (against
    /// prepared tables) or `cleanup` (drop what prepare made), as oltp's steps
    #[arg(value_enum, default_value = "all")]
    pub action: OltpAction,
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
    pub native: crate::spec::Switch,
    /// Servers: a session parameter on every connection; several values sweep, e.g.
    /// max_parallel_workers_per_gather=0,2,4; repeatable
    #[arg(long, value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Keep the tables after `all` (drop them later with `cleanup`)
    #[arg(long)]
    pub keep: bool,
    /// Servers: a scan unanswered this long fails (counted as an error) and its connection
    /// is opened again
    #[arg(long, value_name = "TIME", default_value = "10m")]
    pub op_timeout: String,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `perflab olap` (docs/options.md). Loaders and analysts each have their own connection.
#[derive(Debug, Args)]
pub struct OlapArgs {
    /// `all` (load, aggregate, query, drop: the default), `prepare` (the load and aggregate
    /// phases, timed, and keep the tables), `run` (the query phase against prepared tables) or
    /// `cleanup` (drop what perflab made)
    #[arg(value_enum, default_value = "all")]
    pub action: OltpAction,
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
    /// Servers: a session parameter on every connection, e.g. work_mem=64MB; repeatable
    #[arg(long, value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Keep the tables after `all` (drop them later with `cleanup`)
    #[arg(long)]
    pub keep: bool,
    /// Servers: an answer not received in this long fails its query (counted as an error)
    #[arg(long, value_name = "TIME", default_value = "10m")]
    pub op_timeout: String,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `perflab jobs`: only the shared options that mean something for steps of fixed work.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// The job: a program and its arguments, split as a shell splits words ('...', "...",
    /// backslashes) but run without a shell; repeat for a mixed batch
    #[arg(long, value_name = "CMD ARGS")]
    pub command: Vec<String>,
    /// Run each --command through `sh -c` (pipes, redirections, loops)
    #[arg(long)]
    pub shell: bool,
    /// Each command's share of a mixed batch, in --command order, e.g. 3,1 (default: equal)
    #[arg(long, value_name = "W,..")]
    pub weights: Option<String>,
    /// Each command's short name (its op kind), in --command order (default: the program's
    /// name, or with --shell the script's first word)
    #[arg(long, value_name = "NAME,..")]
    pub name: Option<String>,
    /// Copies running at once (the batch's slots); sweeps, e.g. 1,2,4,8 (default: 1 and one
    /// per CPU)
    #[arg(long, value_name = "N|SWEEP")]
    pub copies: Option<String>,
    /// A batch of N jobs through the copies, each copy taking the next job when its last one
    /// ends; the step's time is the time to finish the batch (default: one job per copy)
    #[arg(long, value_name = "N")]
    pub jobs: Option<String>,
    /// Pin each copy to one CPU: compact (fill a NUMA node and its cores' SMT siblings first)
    /// or spread (round-robin over nodes, physical cores before siblings); none: not pinned
    #[arg(long, value_name = "none|compact|spread", default_value = "none")]
    pub placement: String,
    /// Run each step N times; steps report mean and 95% confidence interval
    #[arg(long, value_name = "N", default_value = "1")]
    pub repeat: String,
    /// Seed of the order of a mixed batch
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,
    /// Length of one point of the per-step time series
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Read the machine's counters every interval (and perflab's own CPU); off only to
    /// measure the sampler's own cost
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub resources: crate::spec::Switch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KvAction {
    All,
    Prepare,
    Run,
    Cleanup,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoMode {
    Test,
    Surface,
}

#[derive(Debug, Args)]
pub struct NullArgs {
    /// Busy time per op (0: none); sweeps
    #[arg(long, value_name = "TIME|SWEEP", default_value = "0")]
    pub spin: String,
    /// Make every Nth op of each worker fail, to test error accounting
    #[arg(long, value_name = "N", default_value = "0")]
    pub fail_every: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id, a unique prefix of one, or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id, a unique prefix of one, or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
    #[arg(long, short = 'f', value_enum, default_value = "json")]
    pub format: crate::export::ExportFormat,
    /// Write to FILE instead of stdout (refuses to replace a file that exists)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Runs: ids, unique prefixes, tags or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub runs: Vec<String>,
    /// Every run of the suite invocation that RUN belongs to (e.g. the balance sheet of
    /// 'perflab run'), in order
    #[arg(long)]
    pub suite: bool,
    /// Write to FILE (default: <results>/reports/<run>.html; refuses to replace a file)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html (one self-contained file) or md (Markdown; its SVG charts go in FILE's folder,
    /// in <name>-files/); default from the extension of --output, else html
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<ReportFormat>,
    /// Start with the landscape: the runs ranked by their best headline figure, with the
    /// settings that differ between them
    #[arg(long)]
    pub landscape: bool,
    /// Mark the highest throughput that meets a response-time objective, e.g. p99<10ms
    #[arg(long, value_name = "FIGURE<TIME")]
    pub slo: Option<String>,
    /// The report's title
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Md,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline, then one or more candidates: ids, unique prefixes, tags or `last`
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<String>,
    /// Ratios within this band are "equivalent" (default 2%)
    #[arg(long, value_name = "PCT", default_value = "2%")]
    pub noise: String,
    /// Set the headline ratio against a naive expectation: `clock` (the CPUs' clock ratio)
    /// or a factor such as 2x
    #[arg(long, value_name = "clock|FACTOR")]
    pub expect: Option<String>,
    /// Exit with code 3 when any figure of a candidate is slower beyond the noise
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOn>,
    /// Also write the comparison as a report (HTML, or Markdown by extension)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Regression,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    /// The run: an id, a unique prefix, `last` or another tag
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The name: starts with a letter; letters, digits, '-', '_', '.'
    #[arg(value_name = "NAME")]
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
