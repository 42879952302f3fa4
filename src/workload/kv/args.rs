//! `perflab kv`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::{Action, RunArgs};
use clap::Args;

/// `perflab kv`. Threads are worker threads here; `--clients` are connections.
#[derive(Debug, Args)]
#[command(mut_arg("threads", |a| a
    .visible_alias(None)
    .help("Worker threads (memtier --threads), each serving its share of the connections on one event loop; sweeps")))]
pub struct KvArgs {
    /// `all` (load, run, delete: the default), `prepare` (load and keep), `run` (against
    /// loaded keys) or `cleanup` (delete perflab's keys), as oltp's steps
    #[arg(value_enum, default_value = "all")]
    pub action: Action,
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
    /// redis-benchmark's tests (its -t names: ping_inline, ping_mbulk, set, get, incr, lpush,
    /// rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin, lrange_100..600, mset, xadd; ping,
    /// lrange; all): each a step, in redis-benchmark's order, on its keys; Redis only
    #[arg(long, value_name = "NAME,...", conflicts_with_all = ["ratio", "command"])]
    pub tests: Option<String>,
    /// A command to send instead of gets and sets, e.g. 'HSET h:{key} f {data}' ({key}: a key
    /// of the key space, {data}: a value; memtier's __key__ and __data__ too); repeat for a
    /// mix, each command a group with its own figures. Nothing is loaded or deleted
    #[arg(long, value_name = "COMMAND", conflicts_with = "ratio")]
    pub command: Vec<String>,
    /// Weights of the --commands, in order (default 1 each): each request draws its command
    #[arg(long, value_name = "W,...", requires = "command")]
    pub command_ratio: Option<String>,
    /// Key patterns of the --commands, in order (default --key-pattern)
    #[arg(long, value_name = "PATTERN,...", requires = "command")]
    pub command_key_pattern: Option<String>,
    /// In --tests and --command: __rand_int__ becomes a number below N, 12 digits, drawn per
    /// occurrence (redis-benchmark -r); without it, __rand_int__ is sent as written
    #[arg(long, value_name = "N")]
    pub keyspacelen: Option<String>,
    /// The --commands in round-robin blocks of their weights, in order (memtier's way),
    /// rather than each request drawing its command
    #[arg(long, requires = "command")]
    pub command_blocks: bool,
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
    pub tls: crate::target::tls_args::TlsArgs,
    #[command(flatten)]
    pub run: RunArgs,
}
