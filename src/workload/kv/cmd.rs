//! `perflab kv [all|prepare|run|cleanup]`: gets and sets on memcached or Redis, against a
//! `--target` or a throwaway memcached.
//!
//! Several `--target`s are shards: memcached servers get the keys by consistent hashing
//! (ketama, as libmemcached places them); a Redis target whose server is in cluster mode
//! (`INFO`: `cluster_enabled:1`) is a seed of a Redis Cluster, whose masters (from
//! `CLUSTER SLOTS`) become the shards. Several Redis servers that are not a cluster are
//! refused: Redis clients shard only as a cluster.

use super::args::KvArgs;
use crate::error::AppError;
use crate::target::url::{Backend, TargetUrl};
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::{parse_count, parse_duration, parse_size};
use crate::vocab::{SpecError, Sweep};
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::kind::Host;
use crate::workload::kv::KvSpec;
use crate::workload::kv::cluster;
use crate::workload::kv::command::{Family, Template};
use crate::workload::kv::endpoint::{Control, Endpoint};
use crate::workload::kv::keys::{KeyPattern, KeySpace, ValueSizes, Values};
use crate::workload::kv::load;
use crate::workload::kv::mix::{Choice, Mix};
use crate::workload::kv::protocol::{Command, Protocol};
use crate::workload::kv::redis_tests;
use crate::workload::kv::server::Throwaway;
use crate::workload::kv::session::Plan;
use crate::workload::kv::shard::{Ketama, Router, ketama_name};
use crate::workload::phases::Phases;
use crate::workload::run_args::Action;
use crate::workload::{RateScope, RunSpec};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most connections in one step: more is a typo (and more file descriptors than a default
/// limit allows).
const MAX_CLIENTS: u64 = 16384;
/// Deepest pipeline.
const MAX_PIPELINE: u64 = 4096;
/// Largest key space loaded before a run: 100 million keys is a day of loading.
const MAX_KEYS: u64 = 100_000_000;
/// How long the checks before a run wait for the server.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// The default connections: the curve from one connection to the peers' default of 50.
const DEFAULT_CLIENTS: &str = "1,2,4,8,16,32,50";

/// The servers named by `--target` (or found from them), or a throwaway memcached.
struct Server {
    /// In shard order; one when the keys are not sharded.
    shards: Vec<Endpoint>,
    router: Router,
    /// The `--target` URLs without secrets (the throwaway's own).
    shown: String,
    throwaway: Option<Throwaway>,
}

fn meta(args: &KvArgs) -> Result<bool, SpecError> {
    match args.protocol.to_ascii_lowercase().as_str() {
        "text" | "classic" | "ascii" => Ok(false),
        "meta" => Ok(true),
        _ => Err(SpecError::new(
            "protocol",
            &args.protocol,
            "use text or meta (memcached); Redis takes ?protocol=3 in the URL",
        )),
    }
}

fn server(args: &KvArgs, start: bool, first_threads: Option<u64>) -> Result<Server, AppError> {
    let meta = meta(args)?;
    if args.target.is_empty() {
        if args.tls.any() {
            return Err(AppError::Usage(
                "--cacert, --insecure, --cert and --key are for a rediss:// --target; the throwaway memcached has no TLS".into(),
            ));
        }
        let memory = parse_size("server-memory", &args.server_memory)? / (1 << 20);
        if memory < 8 {
            return Err(SpecError::new(
                "server-memory",
                &args.server_memory,
                "give the throwaway memcached at least 8m",
            )
            .into());
        }
        let (endpoint, throwaway) = if start {
            let threads = first_threads.unwrap_or(4) as u32;
            let t = Throwaway::start(threads, memory).map_err(AppError::Usage)?;
            (t.endpoint(meta), Some(t))
        } else {
            (Endpoint::local_memcached(11211, meta), None)
        };
        return Ok(Server {
            shown: endpoint.shown.clone(),
            shards: vec![endpoint],
            router: Router::Single,
            throwaway,
        });
    }
    if args.server_threads.is_some() {
        return Err(AppError::Usage(
            "--server-threads is for the throwaway memcached; a --target server keeps its own threads".into(),
        ));
    }
    let mut endpoints = Vec::with_capacity(args.target.len());
    let mut names = Vec::with_capacity(args.target.len());
    for url in &args.target {
        let parsed: TargetUrl = url.parse().map_err(|e| {
            AppError::Usage(format!("--target {}: {e}", crate::target::url::redact(url)))
        })?;
        let parsed = parsed.with_password_from_environment(
            &|k| std::env::var(k).ok(),
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .as_deref(),
        );
        if parsed.backend != Backend::Rediss && args.tls.any() {
            return Err(AppError::Usage(format!(
                "--cacert, --insecure, --cert and --key are for TLS; --target {} is not rediss://",
                parsed.redacted()
            )));
        }
        let endpoint = Endpoint::from_url(&parsed, meta, &args.tls.trust())
            .map_err(|e| AppError::Usage(e.to_string()))?;
        if let Some(twice) = endpoints
            .iter()
            .find(|e: &&Endpoint| e.address == endpoint.address)
        {
            return Err(AppError::Usage(format!(
                "--target {} and {} are the same server; give each shard once",
                twice.shown, endpoint.shown
            )));
        }
        // The name ketama hashes: the host as the user wrote it, as libmemcached does.
        names.push(match (&parsed.path, &parsed.host) {
            (Some(path), _) => path.to_string_lossy().into_owned(),
            (None, host) => ketama_name(
                host.as_deref().unwrap_or("127.0.0.1"),
                parsed.port.or(parsed.backend.default_port()).unwrap_or(0),
            ),
        });
        endpoints.push(endpoint);
    }
    let shown = endpoints
        .iter()
        .map(|e| e.shown.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let memcache = endpoints[0].protocol.is_memcache();
    if endpoints
        .iter()
        .any(|e| e.protocol.is_memcache() != memcache)
    {
        return Err(AppError::Usage(format!(
            "--target {shown}: memcached and Redis servers mixed; the shards of a run are all one kind"
        )));
    }
    if memcache && args.cluster {
        return Err(AppError::Usage(format!(
            "--cluster: {shown} is memcached, whose servers are sharded by ketama without it; drop --cluster"
        )));
    }
    if memcache {
        let router = if endpoints.len() > 1 {
            Router::Ketama(Ketama::new(&names))
        } else {
            Router::Single
        };
        return Ok(Server {
            shards: endpoints,
            router,
            shown,
            throwaway: None,
        });
    }
    if !in_cluster_mode(&endpoints[0])? {
        if args.cluster {
            return Err(AppError::Usage(format!(
                "--cluster: {} is not a Redis Cluster node (INFO says cluster_enabled:0); drop --cluster, or give a node of the cluster",
                endpoints[0].shown
            )));
        }
        if endpoints.len() > 1 {
            return Err(AppError::Usage(format!(
                "--target {shown}: several Redis servers that are not a Redis Cluster (INFO says cluster_enabled:0); perflab shards Redis as a cluster does: give one server, or a cluster's nodes"
            )));
        }
        return Ok(Server {
            shards: endpoints,
            router: Router::Single,
            shown,
            throwaway: None,
        });
    }
    let (nodes, map) = cluster::discover(&endpoints, CHECK_TIMEOUT)
        .map_err(|e| AppError::Usage(format!("reading the cluster's slots: {e}")))?;
    Ok(Server {
        shards: nodes,
        router: Router::Cluster(map),
        shown,
        throwaway: None,
    })
}

/// Whether a Redis server runs in cluster mode: its keys are then spread over the cluster's
/// masters, and a plain client would be answered `MOVED` for most of them.
fn in_cluster_mode(endpoint: &Endpoint) -> Result<bool, AppError> {
    let mut c =
        Control::open(endpoint, CHECK_TIMEOUT).map_err(|e| AppError::Usage(e.to_string()))?;
    let stats = c.stats().map_err(|e| AppError::Usage(e.to_string()))?;
    Ok(stats.get("cluster_enabled").is_some_and(|v| v == "1"))
}

/// `--ratio SET:GET` as the share of sets.
fn set_share(text: &str) -> Result<f64, SpecError> {
    let bad = || {
        SpecError::new(
            "ratio",
            text,
            "give SET:GET, e.g. 1:9 (10% sets) or 0:1 (gets only)",
        )
    };
    let (s, g) = text.split_once(':').ok_or_else(bad)?;
    let s: f64 = s.trim().parse().map_err(|_| bad())?;
    let g: f64 = g.trim().parse().map_err(|_| bad())?;
    if !(s >= 0.0 && g >= 0.0 && s + g > 0.0 && s.is_finite() && g.is_finite()) {
        return Err(bad());
    }
    Ok(s / (s + g))
}

fn sizes(args: &KvArgs) -> Result<(ValueSizes, String), SpecError> {
    let (option, text) = match (
        &args.value_size,
        &args.data_size_range,
        &args.data_size_list,
    ) {
        (Some(v), _, _) => ("value-size", v.clone()),
        (None, Some(r), _) => ("data-size-range", format!("{r}:1")),
        (None, None, Some(l)) => ("data-size-list", l.clone()),
        (None, None, None) => ("value-size", "4-100:1,1k-2k:1,5k-20k:1".to_string()),
    };
    let sizes: ValueSizes = text
        .parse()
        .map_err(|e: String| SpecError::new(option, &text, &e))?;
    let shown = sizes.to_string();
    Ok((sizes, shown))
}

fn pattern(args: &KvArgs) -> Result<KeyPattern, SpecError> {
    let mut p: KeyPattern = args
        .key_pattern
        .parse()
        .map_err(|e: String| SpecError::new("key-pattern", &args.key_pattern, &e))?;
    let number = |option: &'static str, text: &str| -> Result<f64, SpecError> {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| SpecError::new(option, text, "give a number above 0"))
    };
    match &mut p {
        KeyPattern::Zipf { exp } => {
            if let Some(t) = &args.key_zipf_exp {
                *exp = number("key-zipf-exp", t)?;
            }
        }
        KeyPattern::Gaussian { median, stddev } => {
            if let Some(t) = &args.key_stddev {
                *stddev = Some(number("key-stddev", t)?);
            }
            if let Some(t) = &args.key_median {
                *median = Some(parse_count("key-median", t)?);
            }
        }
        _ => {}
    }
    let stray = [
        (
            "key-zipf-exp",
            args.key_zipf_exp.is_some() && !matches!(p, KeyPattern::Zipf { .. }),
        ),
        (
            "key-stddev",
            args.key_stddev.is_some() && !matches!(p, KeyPattern::Gaussian { .. }),
        ),
        (
            "key-median",
            args.key_median.is_some() && !matches!(p, KeyPattern::Gaussian { .. }),
        ),
    ];
    if let Some((option, _)) = stray.iter().find(|(_, s)| *s) {
        return Err(SpecError::new(
            option,
            "",
            &format!(
                "--{option} goes with --key-pattern {}",
                if *option == "key-zipf-exp" {
                    "zipf"
                } else {
                    "gaussian"
                }
            ),
        ));
    }
    Ok(p)
}

fn key_space(args: &KvArgs) -> Result<KeySpace, SpecError> {
    let minimum = parse_count("key-minimum", &args.key_minimum)?;
    let maximum = parse_count("key-maximum", &args.key_maximum)?;
    if maximum < minimum {
        return Err(SpecError::new(
            "key-maximum",
            &args.key_maximum,
            "the highest key must not be below --key-minimum",
        ));
    }
    if maximum - minimum >= MAX_KEYS {
        return Err(SpecError::new(
            "key-maximum",
            &args.key_maximum,
            "at most 100 million keys are loaded before a run",
        ));
    }
    if args.key_prefix.is_empty()
        || args.key_prefix.len() > 200
        || args
            .key_prefix
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(SpecError::new(
            "key-prefix",
            &args.key_prefix,
            "a prefix of 1 to 200 characters without spaces (memcached keys have none)",
        ));
    }
    Ok(KeySpace {
        prefix: args.key_prefix.clone(),
        minimum,
        maximum,
    })
}

/// Everything but the server: checked before anything is started.
struct Stream {
    keys: KeySpace,
    pattern: KeyPattern,
    sizes: ValueSizes,
    sizes_shown: String,
    set_share: f64,
    ttl: u32,
    op_timeout: Duration,
}

fn stream(args: &KvArgs) -> Result<Stream, AppError> {
    let (sizes, sizes_shown) = sizes(args)?;
    let ttl = parse_count("ttl", &args.ttl)?;
    if ttl > 30 * 24 * 3600 {
        // memcached reads larger numbers as a Unix time.
        return Err(SpecError::new("ttl", &args.ttl, "at most 30 days (2592000 seconds)").into());
    }
    let op_timeout = parse_duration("op-timeout", &args.op_timeout)?;
    if op_timeout < Duration::from_millis(1) || op_timeout > Duration::from_secs(3600) {
        return Err(SpecError::new("op-timeout", &args.op_timeout, "a time from 1ms to 1h").into());
    }
    Ok(Stream {
        keys: key_space(args)?,
        pattern: pattern(args)?,
        sizes,
        sizes_shown,
        set_share: set_share(&args.ratio)?,
        ttl: ttl as u32,
        op_timeout,
    })
}

/// Refuses a key space the throwaway memcached cannot hold, before starting it: memcached
/// stores each item in a slab chunk up to 25% larger than the item (its growth factor), and
/// each item carries about 56 bytes of header besides its key.
fn fits_throwaway(args: &KvArgs, s: &Stream) -> Result<(), AppError> {
    let memory = parse_size("server-memory", &args.server_memory)?;
    let per_item = 56 + s.keys.prefix.len() as u64 + 20;
    let need = (s.sizes.total(&s.keys) + s.keys.count() * per_item) * 5 / 4;
    if need > memory {
        let suggest = need.div_ceil(1 << 30);
        return Err(AppError::Usage(format!(
            "the key space needs about {} in memcached, more than --server-memory {}: give --server-memory {suggest}g, or fewer keys (--key-maximum)",
            crate::vocab::units::format_bytes(need),
            args.server_memory
        )));
    }
    Ok(())
}

/// The request stream on the servers.
fn plan(srv: &Server, s: &Stream, verify: bool) -> Plan {
    Plan {
        shards: srv.shards.clone(),
        router: srv.router.clone(),
        keys: s.keys.clone(),
        pattern: s.pattern.clone(),
        sizes: s.sizes.clone(),
        values: Arc::new(Values::new(s.sizes.max())),
        set_share: s.set_share,
        ttl: s.ttl,
        verify,
        op_timeout: s.op_timeout,
    }
}

fn sweep(option: &'static str, text: &str, max: u64) -> Result<Sweep<u64>, SpecError> {
    let s = parse_u64(option, text, parse_count)?;
    if let Some(&bad) = s.values().iter().find(|&&v| v == 0 || v > max) {
        return Err(SpecError::new(
            option,
            &bad.to_string(),
            &format!("from 1 to {max}"),
        ));
    }
    Ok(s)
}

/// Checks that the server answers and says what it is, in one line if not.
fn introduce(endpoint: &Endpoint) -> Result<String, AppError> {
    let mut c =
        Control::open(endpoint, CHECK_TIMEOUT).map_err(|e| AppError::Usage(e.to_string()))?;
    let version = c.version().map_err(|e| AppError::Usage(e.to_string()))?;
    let name = if endpoint.protocol.is_memcache() {
        "memcached"
    } else {
        let stats = c.stats().map_err(|e| AppError::Usage(e.to_string()))?;
        if stats.contains_key("valkey_version") {
            "valkey"
        } else {
            "redis"
        }
    };
    Ok(format!("{name} {version}"))
}

/// Every shard introduced: what they are, each different one once (`memcached 1.6.18`).
fn introduce_all(shards: &[Endpoint]) -> Result<Vec<String>, AppError> {
    let mut versions: Vec<String> = Vec::new();
    for e in shards {
        let v = introduce(e)?;
        if !versions.contains(&v) {
            versions.push(v);
        }
    }
    Ok(versions)
}

/// The run specification for `all` and `run`; starts the throwaway memcached when there is
/// no `--target` (it stops when the spec is dropped).
pub fn kv_spec(args: &KvArgs) -> Result<RunSpec, AppError> {
    let s = stream(args)?;
    let m = mixes(args, &s)?;
    let clients = sweep(
        "clients",
        args.clients.as_deref().unwrap_or(DEFAULT_CLIENTS),
        MAX_CLIENTS,
    )?;
    let pipeline = sweep("pipeline", &args.pipeline, MAX_PIPELINE)?;
    let server_threads = args
        .server_threads
        .as_deref()
        .map(|t| sweep("server-threads", t, 256).map(|s| s.named("server_threads")))
        .transpose()?;
    let default_threads = {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let fewest = clients.values().iter().copied().min().unwrap_or(1);
        (cpus / 2).clamp(1, fewest).to_string()
    };
    let threads_text = args.run.threads.clone().unwrap_or(default_threads.clone());
    let threads = parse_u64("threads", &threads_text, parse_count)?;
    let most_threads = threads.values().iter().copied().max().unwrap_or(1);
    let fewest_clients = clients.values().iter().copied().min().unwrap_or(1);
    if most_threads > fewest_clients {
        return Err(AppError::Usage(format!(
            "--threads {threads_text} with --clients {}: every thread needs a connection; give at least as many clients as threads",
            args.clients.as_deref().unwrap_or(DEFAULT_CLIENTS)
        )));
    }
    let phases = match args.action {
        Action::Run => {
            if args.target.is_empty() {
                return Err(AppError::Usage(
                    "kv run needs --target: the server 'kv prepare --target ...' loaded".into(),
                ));
            }
            Phases::Run
        }
        _ => Phases::All,
    };
    if args.target.is_empty() && m.mixes.is_empty() {
        fits_throwaway(args, &s)?;
    }
    let first_threads = server_threads.as_ref().map(|t| t.first());
    let srv = server(args, true, first_threads)?;
    if !m.mixes.is_empty() && srv.shards.len() > 1 {
        return Err(AppError::Usage(format!(
            "--command and --tests run on one server; {} is {} servers (a cluster's keys are not routed per command); give one server",
            srv.shown,
            srv.shards.len()
        )));
    }
    let versions = introduce_all(&srv.shards)?;
    let value_bytes = s.sizes.total(&s.keys);
    let protocol = srv.shards[0].protocol;
    if protocol == Protocol::MemcacheMeta
        && let Some(old) = versions
            .iter()
            .find(|v| !v.starts_with("memcached 1.6") && !v.starts_with("memcached 1.7"))
    {
        return Err(AppError::Usage(format!(
            "--protocol meta needs memcached 1.6 or later; {} is {old}",
            srv.shown
        )));
    }
    let plan = plan(&srv, &s, args.verify);
    let sharded = srv.shards.len() > 1;
    let spec = KvSpec {
        target: srv.shown.clone(),
        tls: srv.shards[0].tls.as_ref().map(|t| t.trust.describe()),
        sharding: if sharded { srv.router.name() } else { None },
        shards: if sharded {
            srv.shards.iter().map(|e| e.shown.clone()).collect()
        } else {
            Vec::new()
        },
        protocol,
        server: versions.join(", "),
        throwaway: args.target.is_empty(),
        clients,
        pipeline,
        server_threads,
        server_memory_mb: args
            .target
            .is_empty()
            .then(|| parse_size("server-memory", &args.server_memory).map(|b| b >> 20))
            .transpose()?,
        ratio: args.ratio.clone(),
        test: m.test,
        commands: m.shown,
        keyspacelen: m.keyspacelen,
        mixes: m.mixes,
        key_prefix: s.keys.prefix.clone(),
        key_minimum: s.keys.minimum,
        key_maximum: s.keys.maximum,
        key_pattern: s.pattern.to_string(),
        value_size: s.sizes_shown,
        value_bytes,
        ttl: s.ttl,
        verify: args.verify,
        op_timeout_ns: s.op_timeout.as_nanos() as u64,
        phases,
        keep: args.keep,
        plan: Arc::new(Mutex::new(Arc::new(plan))),
        throwaway_server: srv.throwaway.map(|t| Arc::new(Mutex::new(t))),
        control: Arc::new(Mutex::new(Vec::new())),
    };
    let mut run = args.run.clone();
    run.threads = Some(threads_text);
    Ok(build_spec(
        &run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: default_threads,
            warmup: "1s",
            duration: "5s",
            rate_scope: RateScope::Total,
        },
    )?)
}

/// `prepare` and `cleanup`: set or delete every key, no measurement.
pub fn steps(host: &dyn Host, args: &KvArgs) -> Result<(), AppError> {
    if args.target.is_empty() {
        return Err(AppError::Usage(
            "kv prepare and cleanup need --target, e.g. memcached://127.0.0.1:11211 (a throwaway server is gone after its run)".into(),
        ));
    }
    if args.tests.is_some() || !args.command.is_empty() {
        return Err(AppError::Usage(
            "kv prepare and cleanup set and delete perflab's keys; --tests and --command load nothing (their commands make their own keys): drop them, or run 'perflab kv' with them".into(),
        ));
    }
    let s = stream(args)?;
    let srv = server(args, false, None)?;
    introduce_all(&srv.shards)?;
    let note = |text: &str| {
        if !host.quiet() {
            eprintln!("{text}");
        }
    };

    let plan = plan(&srv, &s, args.verify);
    let command = if args.action == Action::Prepare {
        Command::Set
    } else {
        Command::Delete
    };
    let verb = if command == Command::Set {
        "setting"
    } else {
        "deleting"
    };
    note(&format!(
        "{}: {verb} {} keys on {}",
        if command == Command::Set {
            "prepare"
        } else {
            "cleanup"
        },
        s.keys.count(),
        plan.shown()
    ));
    let progress = |share: f64| note(&format!("  {:.0}%", share * 100.0));
    let done = load::every_key(&plan, command, s.op_timeout, &progress, &host.stop())
        .map_err(|e| AppError::Failed(e.to_string()))?;
    match command {
        Command::Set if done.refused > 0 => Err(AppError::Failed(format!(
            "prepare: the server refused {} of {} sets, e.g. {}",
            done.refused,
            done.keys,
            done.first_refusal.unwrap_or_default()
        ))),
        Command::Set => {
            note(&format!(
                "prepare: {} keys, {} in {:.1}s",
                done.keys,
                crate::vocab::units::format_bytes(done.bytes),
                done.elapsed.as_secs_f64()
            ));
            Ok(())
        }
        _ => {
            note(&format!(
                "cleanup: deleted {} of perflab's keys ({} were not there)",
                done.keys - done.refused,
                done.refused
            ));
            Ok(())
        }
    }
}

/// The commands' protocol family, from the target's scheme (before any server is asked).
fn family(args: &KvArgs) -> Result<Family, AppError> {
    let redis = args
        .target
        .first()
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("redis"));
    Ok(match (redis, meta(args)?) {
        (true, _) => Family::Redis,
        (false, true) => Family::MemcacheMeta,
        (false, false) => Family::MemcacheText,
    })
}

/// What the run sends instead of gets and sets: redis-benchmark's tests (each a step) or the
/// `--command`s (one mix).
#[derive(Default)]
struct Mixes {
    test: Option<Sweep<String>>,
    mixes: Vec<Arc<Mix>>,
    /// The commands as the record shows them.
    shown: Vec<String>,
    keyspacelen: Option<u64>,
}

fn mixes(args: &KvArgs, s: &Stream) -> Result<Mixes, AppError> {
    let keyspacelen = args
        .keyspacelen
        .as_deref()
        .map(|t| parse_count("keyspacelen", t))
        .transpose()?;
    if keyspacelen == Some(0) {
        return Err(SpecError::new("keyspacelen", "0", "give at least 1").into());
    }
    if args.tests.is_some() || !args.command.is_empty() {
        // What shapes gets and sets alone, refused by name rather than ignored.
        let stray = [
            ("--verify", args.verify, "it checks the values gets return"),
            (
                "--ttl",
                s.ttl > 0,
                "it is the expiry of perflab's sets (give EX in the command)",
            ),
            ("--keep", args.keep, "commands delete nothing anyway"),
        ];
        if let Some((option, _, why)) = stray.iter().find(|(_, on, _)| *on) {
            return Err(AppError::Usage(format!(
                "{option} does not go with --tests or --command: {why}; drop it"
            )));
        }
    }
    if let Some(list) = &args.tests {
        return tests(list, args, s, keyspacelen);
    }
    if args.command.is_empty() {
        if keyspacelen.is_some() {
            return Err(AppError::Usage(
                "--keyspacelen is for __rand_int__ in --tests or --command; gets and sets draw keys from --key-minimum..--key-maximum".into(),
            ));
        }
        return Ok(Mixes::default());
    }
    let family = family(args)?;
    let n = args.command.len();
    let weights = match &args.command_ratio {
        None => vec![1; n],
        Some(text) => list_of(text, "command-ratio", n, |t| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| "a whole number".to_string())
        })?,
    };
    if weights.iter().all(|&w| w == 0) {
        return Err(SpecError::new(
            "command-ratio",
            args.command_ratio.as_deref().unwrap_or_default(),
            "give at least one command a weight above 0",
        )
        .into());
    }
    let patterns = match &args.command_key_pattern {
        None => vec![s.pattern.clone(); n],
        Some(text) => list_of(text, "command-key-pattern", n, |t| t.parse::<KeyPattern>())?,
    };
    let mut commands = Vec::with_capacity(n);
    for text in &args.command {
        let t = Template::parse(text, family, None, keyspacelen.is_some())
            .map_err(|e| AppError::Usage(format!("--command {text:?}: {e}")))?;
        commands.push(t);
    }
    name_apart(&mut commands);
    let shown = commands
        .iter()
        .zip(&weights)
        .map(|(c, w)| match n {
            1 => c.text.clone(),
            _ => format!("{} (weight {w})", c.text),
        })
        .collect();
    let mix = Mix {
        commands,
        weights,
        patterns,
        choice: if args.command_blocks {
            Choice::Blocks
        } else {
            Choice::Weighted
        },
        keyspacelen,
    };
    Ok(Mixes {
        test: None,
        mixes: vec![Arc::new(mix)],
        shown,
        keyspacelen,
    })
}

/// Commands of one mix with the same first word are told apart by their place (`hset`,
/// `hset#2`): each is a group of its own.
fn name_apart(commands: &mut [Template]) {
    for i in 1..commands.len() {
        if commands[..i].iter().any(|c| c.name == commands[i].name) {
            let name = format!("{}#{}", commands[i].name, i + 1);
            commands[i].name = Box::leak(name.into_boxed_str());
        }
    }
}

/// A comma-separated list with one entry per command.
fn list_of<T>(
    text: &str,
    option: &'static str,
    n: usize,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, AppError> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != n {
        return Err(SpecError::new(
            option,
            text,
            &format!("give one value per --command ({n}), separated by commas"),
        )
        .into());
    }
    parts
        .iter()
        .map(|p| parse(p).map_err(|e| SpecError::new(option, p, &e).into()))
        .collect()
}

/// redis-benchmark's tests named by `--tests` (`all`: its default suite), each a step.
fn tests(
    list: &str,
    args: &KvArgs,
    s: &Stream,
    keyspacelen: Option<u64>,
) -> Result<Mixes, AppError> {
    if family(args)? != Family::Redis {
        return Err(AppError::Usage(
            "--tests are redis-benchmark's tests of Redis; give a redis:// --target (memcached takes --command)".into(),
        ));
    }
    let selected = if list.eq_ignore_ascii_case("all") {
        redis_tests::select(None)
    } else {
        if let Some(bad) = list
            .split(',')
            .find(|w| !redis_tests::known(&w.to_ascii_lowercase()))
        {
            return Err(SpecError::new(
                "tests",
                bad,
                &format!(
                    "not one of redis-benchmark's tests: {}, or all",
                    redis_tests::names()
                ),
            )
            .into());
        }
        redis_tests::select(Some(list))
    };
    let mut mixes = Vec::with_capacity(selected.len());
    let mut shown = Vec::with_capacity(selected.len());
    for name in &selected {
        let t = redis_tests::template(name, keyspacelen.is_some()).map_err(AppError::Usage)?;
        shown.push(t.text.clone());
        mixes.push(Arc::new(Mix::one(t, keyspacelen, s.pattern.clone())));
    }
    let names = selected.iter().map(|n| n.to_string()).collect();
    Ok(Mixes {
        test: Some(Sweep::list("test", names)),
        mixes,
        shown,
        keyspacelen,
    })
}
