//! Key-value caches: memcached (text and meta protocols) and Redis (RESP2, RESP3), driven
//! the way the cache study in the reports did (a preloaded key space, 90% gets and 10%
//! sets over three size classes) and the way memtier_benchmark users expect (its option
//! names), timed without coordinated omission.
//!
//! - this file: [`KvSpec`] and its [`Workload`] impl: the options that sweep (`--clients`,
//!   `--pipeline`, `--server-threads`), loading before the first step, the server's
//!   counters around every measure phase and the check that they agree with perflab's
//!   (`counters_match`), the figures derived from them (hit ratio, server CPU per request,
//!   perflab's own CPU per request and how busy its threads were), and warnings.
//! - [`session`]: one worker's connections, event-driven ([`crate::engine::poll`]), with
//!   `--pipeline` requests in flight on each: the shared queued-session mechanism of storage
//!   I/O, so open loop, groups and recording are the runner's.
//! - [`protocol`]: the interface of the codecs; [`memcache`] and [`resp`]: the codecs.
//! - [`keys`]: key space, key choice, value sizes (ranges, lists, Facebook's ETC) and value
//!   bytes.
//! - [`command`]: a command as a user writes it (`--command 'HSET h:{key} f {data}'`,
//!   memtier's `__key__`, redis-benchmark's `__rand_int__`), encoded per request; [`mix`]:
//!   a step's commands and how each request chooses one; [`redis_tests`]:
//!   redis-benchmark's tests (`--tests`), each a step of its own.
//!
//! A run of commands (a mix) loads and deletes nothing: its commands make their own keys,
//! and leave them as redis-benchmark and memtier do. Each command is a group of the step
//! (the runner's breakdown by kind) with its own requests/s, latency and errors. The
//! server's count of those commands (Redis's `INFO commandstats` calls, memcached's `stats`
//! counters of their verbs) is checked against perflab's.
//! - [`endpoint`]: where a server listens, connecting and the handshake, and the blocking
//!   control connection (`stats`, `INFO`; `rediss://` over the shared
//!   [`crate::target::tls_stream`]); [`load`]: setting or deleting every key;
//!   [`server`]: the throwaway memcached.
//! - [`shard`]: several servers, the keys spread over them as clients spread them: ketama
//!   for memcached, and the [`Router`](shard::Router) sessions and loaders ask;
//!   [`cluster`]: Redis Cluster's slots, `CLUSTER SLOTS`, `MOVED` and `ASK`.
//!
//! With several shards, loading puts each key on its shard, the server counters are summed
//! over the shards (one control connection each) before they are compared with perflab's
//! count, and every step breaks its requests down by shard. A cluster's map is read again
//! before every step, so a step starts with the slots where they are.

pub mod args;
pub mod balance;
pub mod cluster;
pub mod cmd;
pub mod command;
pub mod endpoint;
pub mod keys;
pub mod kind;
pub mod load;
pub mod memcache;
pub mod mix;
pub mod peer;
pub mod protocol;
pub mod redis_tests;
pub mod resp;
pub mod server;
pub mod session;
pub mod shard;

pub use kind::KIND;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Check, Headline, StepResult, Trial, Warning, step_number};
use crate::stop::Stop;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use crate::workload::phases::Phases;
use endpoint::Control;
use protocol::{Command, Protocol};
use serde::Serialize;
use session::{KvSession, Plan};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Share of perflab's CPU time, over its worker threads, above which the client itself may
/// be what limits the step.
const CLIENT_BUSY_WARN: f64 = 0.90;
/// Disagreement allowed between perflab's request count and the server's, beyond the
/// requests that may straddle the edges of the measure phase.
const COUNT_TOLERANCE: f64 = 0.005;

#[derive(Debug, Clone, Serialize)]
pub struct KvSpec {
    /// The server, without secrets; several are separated by commas (the seeds of a cluster).
    pub target: String,
    /// What `rediss://`'s TLS verified; absent without TLS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// How the keys are spread over several servers: `ketama` (memcached) or `cluster`
    /// (Redis Cluster); absent with one server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharding: Option<&'static str>,
    /// The servers the keys were spread over, in shard order (a cluster's masters as it
    /// named them when the run started); absent with one server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<String>,
    pub protocol: Protocol,
    /// The server's name and version as it reported them (`memcached 1.6.18`).
    pub server: String,
    /// Whether perflab started the server for this run (and stops it after).
    pub throwaway: bool,
    /// Connections over all worker threads (memtier's threads × clients).
    pub clients: Sweep<u64>,
    /// Requests in flight per connection.
    pub pipeline: Sweep<u64>,
    /// The throwaway memcached's `-t`, restarted (and loaded again) when it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_threads: Option<Sweep<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_memory_mb: Option<u64>,
    /// `--ratio SET:GET`, as given.
    pub ratio: String,
    /// redis-benchmark's tests, one a step (`--tests`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<Sweep<String>>,
    /// `--command`s, as given, with their weights and key patterns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// redis-benchmark's `-r` (`--keyspacelen`): `__rand_int__` below it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyspacelen: Option<u64>,
    pub key_prefix: String,
    pub key_minimum: u64,
    pub key_maximum: u64,
    pub key_pattern: String,
    pub value_size: String,
    /// Exact bytes of all values of the key space.
    pub value_bytes: u64,
    pub ttl: u32,
    pub verify: bool,
    pub op_timeout_ns: u64,
    pub phases: Phases,
    pub keep: bool,
    /// The request stream and the server, shared by every session (passwords inside: never
    /// serialized).
    #[serde(skip)]
    pub plan: Arc<Mutex<Arc<Plan>>>,
    /// The commands of each test (one per value of `test`), or the `--command`s' mix
    /// (one); empty for gets and sets.
    #[serde(skip)]
    pub mixes: Vec<Arc<mix::Mix>>,
    /// The throwaway memcached, when there is one.
    #[serde(skip)]
    pub throwaway_server: Option<Arc<Mutex<server::Throwaway>>>,
    /// The connections that read the servers' counters, one per shard (each opened on
    /// first use).
    #[serde(skip)]
    pub control: Arc<Mutex<Vec<Option<Control>>>>,
}

impl KvSpec {
    /// Whether the run sends a mix of commands rather than gets and sets.
    fn mixed(&self) -> bool {
        !self.mixes.is_empty()
    }

    /// The mix of the step at `point`.
    fn mix_at(&self, point: &StepPoint) -> Option<Arc<mix::Mix>> {
        let i = self
            .test
            .as_ref()
            .and_then(|t| point.index_of(t.name()))
            .unwrap_or(0);
        self.mixes.get(i).map(Arc::clone)
    }

    /// The counters a memcached mix's requests are counted in, once each (checked on
    /// memcached 1.6.18: `get`/`mg` one `cmd_get` per key, every storing command one
    /// `cmd_set` whatever its answer, `gat` one `cmd_touch`...); `None` when some command is
    /// not counted once per request (a `get` of several keys).
    fn memcache_counters(&self) -> Option<Vec<&'static str>> {
        const HITS: &[&str] = &["delete_hits", "delete_misses"];
        const ARITH: &[&str] = &["incr_hits", "incr_misses", "decr_hits", "decr_misses"];
        let mut out: Vec<&'static str> = Vec::new();
        for c in self.mixes.iter().flat_map(|m| m.commands.iter()) {
            let verb = c.text.split_whitespace().next()?.to_ascii_lowercase();
            let counters: &[&str] = match (verb.as_str(), c.word_count()) {
                ("get" | "gets", 2) | ("mg", _) => &["cmd_get"],
                ("gat" | "gats", 3) | ("touch", _) => &["cmd_touch"],
                ("set" | "add" | "replace" | "append" | "prepend" | "cas" | "ms", _) => {
                    &["cmd_set"]
                }
                ("delete" | "md", _) => HITS,
                ("incr" | "decr" | "ma", _) => ARITH,
                _ => return None,
            };
            for k in counters {
                if !out.contains(k) {
                    out.push(k);
                }
            }
        }
        Some(out)
    }

    /// The names `INFO commandstats` counts the mixes' commands under (`cmdstat_lpush`), or
    /// for memcached the `stats` counters that count them ([`KvSpec::memcache_counters`]).
    fn command_names(&self) -> Vec<String> {
        if self.protocol.is_memcache() {
            return self
                .memcache_counters()
                .unwrap_or_default()
                .into_iter()
                .map(String::from)
                .collect();
        }
        let mut names: Vec<String> = Vec::new();
        for m in &self.mixes {
            for c in &m.commands {
                let first = c.text.split_whitespace().next().unwrap_or_default();
                let name = first.to_ascii_lowercase();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    fn plan(&self) -> Arc<Plan> {
        Arc::clone(&self.plan.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Reads a cluster's slots again before a step, so the step starts with them where they
    /// are (a reshard between steps costs no redirections). Other targets: nothing.
    fn refresh_cluster(&self) -> Result<(), OpError> {
        let plan = self.plan();
        let shard::Router::Cluster(old) = &plan.router else {
            return Ok(());
        };
        let (nodes, map) =
            cluster::refresh(&plan.shards, plan.op_timeout.min(Duration::from_secs(5)))
                .map_err(|e| OpError::other(format!("reading the cluster's slots: {e}")))?;
        if nodes.len() != plan.shards.len() || &map != old {
            let next = plan.clone_with_shards(nodes, shard::Router::Cluster(map));
            *self.plan.lock().unwrap_or_else(|e| e.into_inner()) = next;
        }
        Ok(())
    }

    /// Sets every key, with a progress note, and checks what the server holds.
    fn load(&self, stop: &Stop, note: &dyn Fn(&str)) -> Result<(), OpError> {
        let plan = self.plan();
        let before = self.stat_numbers();
        note(&format!(
            "prepare: setting {} keys ({}) on {}",
            plan.keys.count(),
            crate::vocab::units::format_bytes(self.value_bytes),
            plan.shown()
        ));
        let say = |share: f64| note(&format!("prepare: {:.0}%", share * 100.0));
        let loaded = load::every_key(&plan, Command::Set, plan.op_timeout, &say, stop)
            .map_err(|e| OpError::other(format!("loading failed: {e}")))?;
        if loaded.refused > 0 {
            return Err(OpError::other(format!(
                "loading failed: the server refused {} of {} sets, e.g. {}; give it more memory or load fewer keys (--key-maximum)",
                loaded.refused,
                loaded.keys,
                loaded.first_refusal.unwrap_or_default()
            )));
        }
        let after = self.stat_numbers();
        let evicted = counter(&after, "server_evictions") - counter(&before, "server_evictions");
        if evicted > 0.0 {
            return Err(OpError::other(format!(
                "loading evicted {evicted:.0} items: the key space ({}) does not fit in the server's memory; {}",
                crate::vocab::units::format_bytes(self.value_bytes),
                if self.throwaway {
                    "give --server-memory more, or fewer keys (--key-maximum)"
                } else {
                    "give the server more memory (memcached -m, Redis maxmemory) or load fewer keys (--key-maximum)"
                }
            )));
        }
        let items = after.get("server_items").copied().unwrap_or(f64::NAN);
        note(&format!(
            "prepare: {} keys, {} in {:.1}s; the {} {} items",
            loaded.keys,
            crate::vocab::units::format_bytes(loaded.bytes),
            loaded.elapsed.as_secs_f64(),
            if plan.shards.len() > 1 {
                "servers hold"
            } else {
                "server holds"
            },
            if items.is_nan() {
                "?".to_string()
            } else {
                format!("{items:.0}")
            }
        ));
        if self.throwaway && items.is_finite() && (items as u64) != loaded.keys {
            return Err(OpError::other(format!(
                "after loading, memcached holds {items:.0} items, not the {} perflab set",
                loaded.keys
            )));
        }
        Ok(())
    }

    /// The servers' counters, by perflab's names (see [`server_numbers`]), summed over the
    /// shards. Empty when any shard does not answer: a sum that misses a shard would be
    /// compared with all of perflab's requests.
    fn stat_numbers(&self) -> BTreeMap<String, f64> {
        let mut guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        let plan = self.plan();
        guard.resize_with(plan.shards.len(), || None);
        let mut sum = BTreeMap::new();
        let names = self.command_names();
        for (endpoint, control) in plan.shards.iter().zip(guard.iter_mut()) {
            let Some(numbers) = shard_numbers(endpoint, control, plan.op_timeout, &names) else {
                return BTreeMap::new();
            };
            for (k, v) in numbers {
                *sum.entry(k).or_insert(0.0) += v;
            }
        }
        sum
    }
}

/// One server's counters over its control connection, opened (again) when needed.
fn shard_numbers(
    endpoint: &endpoint::Endpoint,
    control: &mut Option<Control>,
    op_timeout: Duration,
    commands: &[String],
) -> Option<BTreeMap<String, f64>> {
    for _ in 0..2 {
        if control.is_none() {
            *control = Control::open(endpoint, op_timeout.min(Duration::from_secs(5))).ok();
        }
        let c = control.as_mut()?;
        match c.stats() {
            Ok(stats) => {
                let mut numbers = server_numbers(endpoint.protocol, &stats);
                if !commands.is_empty() {
                    let calls = match endpoint.protocol.is_memcache() {
                        true => memcache_calls(&stats, commands),
                        false => command_calls(&stats, commands),
                    };
                    numbers.insert("server_commands".into(), calls);
                }
                return Some(numbers);
            }
            // A connection that broke (a restarted server): open another once.
            Err(_) => *control = None,
        }
    }
    None
}

/// The calls `INFO commandstats` counts for `commands` (lower-case names), summed.
fn command_calls(stats: &BTreeMap<String, String>, commands: &[String]) -> f64 {
    commands
        .iter()
        .filter_map(|c| stats.get(&format!("cmdstat_{c}")))
        .filter_map(|v| {
            v.split(',')
                .find_map(|kv| kv.strip_prefix("calls="))
                .and_then(|n| n.parse::<f64>().ok())
        })
        .sum()
}

/// memcached's `stats` counters `counters`, summed.
fn memcache_calls(stats: &BTreeMap<String, String>, counters: &[String]) -> f64 {
    counters
        .iter()
        .filter_map(|c| stats.get(c))
        .filter_map(|v| v.parse::<f64>().ok())
        .sum()
}

/// A named figure, 0 when absent.
fn counter(map: &BTreeMap<String, f64>, name: &str) -> f64 {
    map.get(name).copied().unwrap_or(0.0)
}

/// The server's own counters under perflab's names, whichever server it is:
/// `server_gets`, `server_sets`, `server_hits`, `server_misses`, `server_evictions`,
/// `server_cpu` (seconds, user + system), `server_items`, `server_bytes`,
/// `server_connections`.
pub fn server_numbers(
    protocol: Protocol,
    stats: &BTreeMap<String, String>,
) -> BTreeMap<String, f64> {
    let num = |k: &str| stats.get(k).and_then(|v| v.parse::<f64>().ok());
    let mut out = BTreeMap::new();
    let mut put = |name: &str, v: Option<f64>| {
        if let Some(v) = v {
            out.insert(name.to_string(), v);
        }
    };
    if protocol.is_memcache() {
        put("server_gets", num("cmd_get"));
        put("server_sets", num("cmd_set"));
        put("server_hits", num("get_hits"));
        put("server_misses", num("get_misses"));
        put("server_evictions", num("evictions"));
        put(
            "server_cpu",
            num("rusage_user")
                .zip(num("rusage_system"))
                .map(|(u, s)| u + s),
        );
        put("server_items", num("curr_items"));
        put("server_bytes", num("bytes"));
        put("server_connections", num("curr_connections"));
    } else {
        // INFO commandstats: cmdstat_get:calls=N,usec=...
        let calls = |cmd: &str| {
            stats.get(&format!("cmdstat_{cmd}")).and_then(|v| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix("calls="))
                    .and_then(|n| n.parse::<f64>().ok())
            })
        };
        put("server_gets", Some(calls("get").unwrap_or(0.0)));
        put("server_sets", Some(calls("set").unwrap_or(0.0)));
        put("server_hits", num("keyspace_hits"));
        put("server_misses", num("keyspace_misses"));
        put("server_evictions", num("evicted_keys"));
        put(
            "server_cpu",
            num("used_cpu_user")
                .zip(num("used_cpu_sys"))
                .map(|(u, s)| u + s),
        );
        // db0:keys=N,expires=...
        let keys: f64 = stats
            .iter()
            .filter(|(k, _)| k.starts_with("db") && k[2..].chars().all(|c| c.is_ascii_digit()))
            .filter_map(|(_, v)| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix("keys="))
                    .and_then(|n| n.parse::<f64>().ok())
            })
            .sum();
        put("server_items", Some(keys));
        put("server_bytes", num("used_memory"));
        put("server_connections", num("connected_clients"));
    }
    out
}

/// Deletes perflab's keys when the run ends (unless kept); a throwaway server just stops.
struct Teardown {
    spec: KvSpec,
    /// The run's token: set after Ctrl-C, when the deletes stop at once.
    stop: Stop,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        // A mix's commands made their own keys, which stay, as its peers leave them.
        if self.spec.keep
            || self.spec.phases != Phases::All
            || self.spec.throwaway
            || self.spec.mixed()
        {
            return;
        }
        let plan = self.spec.plan();
        // After Ctrl-C the loader stops at once; what remains stays (a later
        // `perflab kv cleanup` deletes it).
        let _ = load::every_key(
            &plan,
            Command::Delete,
            plan.op_timeout.min(Duration::from_secs(5)),
            &|_| {},
            &self.stop,
        );
    }
}

impl Workload for KvSpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::SharedTarget
    }

    fn name(&self) -> &'static str {
        "kv"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn settings(&self) -> Vec<crate::record::Setting> {
        use crate::record::Setting;
        let protocol = serde_json::to_value(self.protocol)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut s = vec![
            Setting::new("server", &self.server),
            Setting::new("protocol", protocol),
            Setting::new("clients", self.clients.text(u64::to_string)),
            Setting::new("pipeline", self.pipeline.text(u64::to_string)),
        ];
        if let Some(t) = &self.test {
            s.push(Setting::new("tests", t.text(String::clone)));
        } else if !self.commands.is_empty() {
            s.push(Setting::new("commands", self.commands.join("; ")));
        } else {
            s.push(Setting::new("ratio", format!("{} (set:get)", self.ratio)));
        }
        if let Some(n) = self.keyspacelen {
            s.push(Setting::new("__rand_int__", format!("below {n}")));
        }
        if !self.mixed()
            || self
                .mixes
                .iter()
                .any(|m| m.commands.iter().any(|c| c.draws_keys()))
        {
            s.push(Setting::new(
                "keys",
                format!(
                    "{}..{} {}",
                    self.key_minimum, self.key_maximum, self.key_pattern
                ),
            ));
        }
        s.push(Setting::new("value size", &self.value_size));
        if let Some(t) = &self.server_threads {
            s.push(Setting::new("server threads", t.text(u64::to_string)));
        }
        if let Some(tls) = &self.tls {
            s.push(Setting::new("tls", tls));
        }
        if self.ttl > 0 {
            s.push(Setting::new("ttl", format!("{} s", self.ttl)));
        }
        s
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        let mut axes: Vec<&dyn Axis> = Vec::new();
        if let Some(t) = &self.test {
            axes.push(t);
        }
        axes.extend([&self.clients as &dyn Axis, &self.pipeline]);
        if let Some(t) = &self.server_threads {
            axes.push(t);
        }
        axes
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "requests".into(),
            higher_is_better: true,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        if let (Some(threads), Some(server)) = (&self.server_threads, &self.throwaway_server) {
            let want = threads.at(point) as u32;
            let mut s = server.lock().unwrap_or_else(|e| e.into_inner());
            if s.threads != want {
                s.restart(want).map_err(OpError::other)?;
                let endpoint = s.endpoint(self.protocol == Protocol::MemcacheMeta);
                drop(s);
                {
                    let mut plan = self.plan.lock().unwrap_or_else(|e| e.into_inner());
                    let mut next = Plan::clone_with_endpoint(&plan, endpoint);
                    std::mem::swap(&mut *plan, &mut next);
                }
                self.control
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clear();
                self.load(&ctx.stop, &|_| {})?;
            }
        }
        self.refresh_cluster()?;
        let plan = self.plan();
        let mix = self.mix_at(point);
        let clients = self.clients.at(point) as usize;
        let pipeline = self.pipeline.at(point) as usize;
        let stop = ctx.stop.clone();
        Ok(Arc::new(move |worker, workers| {
            let workers = workers.max(1);
            let mine = clients / workers + usize::from(worker < clients % workers);
            let seed = seed ^ (worker as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            KvSession::open(
                Arc::clone(&plan),
                mix.clone(),
                mine,
                pipeline,
                (worker, workers),
                seed,
                stop.clone(),
            )
            .map(|s| Box::new(s) as Box<dyn Session>)
        }))
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        if self.phases == Phases::All && !self.mixed() {
            self.load(&ctx.stop, note)?;
        }
        Ok(Box::new(Teardown {
            spec: self.clone(),
            stop: ctx.stop.clone(),
        }))
    }

    fn server_counters(&self, _ctx: &Context) -> Vec<(String, f64)> {
        self.stat_numbers()
            .into_iter()
            // Levels, not counters: a rate of them means nothing.
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "server_items" | "server_bytes" | "server_connections"
                )
            })
            .collect()
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        let workers = trial.workers.max(1) as f64;
        let clients = self.clients.at(point).max(1) as f64;
        let f = &mut trial.figures;
        // The sessions' counts arrive as means over workers: totals are mean × workers.
        let mut total = |name: &str| f.remove(name).map_or(0.0, |v| v * workers);
        let gets = total("gets");
        let hits = total("get_hits");
        let _misses = total("get_misses");
        let _sets = total("sets");
        let failures = total("connection_failures");
        let timeouts = total("timeouts");
        if gets > 0.0 {
            f.insert("hit_pct".into(), hits / gets * 100.0);
        }
        // Trouble per connection; shown only in steps that had some.
        f.insert("reconnects_per_client".into(), failures / clients);
        f.insert("timeouts_per_client".into(), timeouts / clients);
        // A cluster's redirections: MOVED means the client's map was stale (a reshard),
        // ASK that a slot was being migrated.
        let moved = f.remove("moved").map(|v| v * workers);
        let asked = f.remove("asked").map(|v| v * workers);
        if let (Some(moved), Some(asked)) = (moved, asked) {
            f.insert("moved_per_client".into(), moved / clients);
            f.insert("asked_per_client".into(), asked / clients);
        }
        // The server's counters: its request count beside perflab's, its CPU per request.
        let gets_and_sets = ["server_gets_per_sec", "server_sets_per_sec"]
            .iter()
            .filter_map(|k| f.remove(*k))
            .fold(None, |a: Option<f64>, v| Some(a.unwrap_or(0.0) + v));
        // A mix counts its own commands: Redis's calls of them, memcached's counters of
        // their verbs (none, and no check, when a command is not counted once: a get of
        // several keys).
        let commands = f.remove("server_commands_per_sec");
        let server_ops = if self.mixed() {
            commands
        } else {
            gets_and_sets
        };
        for k in ["server_hits_per_sec", "server_misses_per_sec"] {
            f.remove(k);
        }
        if let Some(v) = server_ops {
            f.insert("server_ops_per_sec".into(), v);
        }
        let ops = trial.ops_per_sec;
        if let Some(cpu) = f.remove("server_cpu_per_sec")
            && ops > 0.0
        {
            f.insert("server_cpu_per_op_ns".into(), cpu * 1e9 / ops);
        }
        if let Some(ns) = trial.resources.process_cpu_ns_per_op {
            let all_ops = (trial.ops + trial.errors) as f64;
            f.insert("client_cpu_per_op_ns".into(), ns);
            f.insert(
                "client_busy_pct".into(),
                ns * all_ops / trial.elapsed_ns.max(1) as f64 / workers * 100.0,
            );
        }
    }

    fn finish_step(&self, step: &mut StepResult, _ctx: &Context) {
        let mut ours = 0.0;
        let mut theirs = 0.0;
        let mut slack = 0.0;
        let clients = step
            .params
            .get("clients")
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        let pipeline = step
            .params
            .get("pipeline")
            .and_then(|v| v.as_f64())
            .unwrap_or(1.0);
        // Each client has a connection to every shard.
        let connections = clients * self.plan().shards.len() as f64;
        for t in &step.trials {
            let secs = t.elapsed_ns as f64 / 1e9;
            let Some(server) = t.figures.get("server_ops_per_sec") else {
                return;
            };
            ours += (t.ops + t.errors) as f64;
            theirs += server * secs;
            // Requests in flight when the counters were read, at either edge of the phase,
            // and what the server counted between the two readings around its start.
            slack += 2.0 * connections * pipeline;
            slack += ["server_gets", "server_sets", "server_commands"]
                .iter()
                .filter_map(|k| t.server_start_window.get(*k))
                .sum::<f64>();
        }
        let diff = (theirs - ours).abs();
        let passed = diff <= slack + COUNT_TOLERANCE * ours;
        let mut figures = BTreeMap::new();
        figures.insert("perflab_requests".into(), ours.round() as i64);
        figures.insert("server_requests".into(), theirs.round() as i64);
        step.checks.push(Check {
            name: "counters_match".into(),
            shard: None,
            passed,
            figures,
            summary: format!(
                "perflab counted {ours:.0} {}, the {} {theirs:.0} ({:+.2}%)",
                if self.mixed() {
                    "requests of its commands"
                } else {
                    "gets and sets"
                },
                if connections > clients {
                    "servers"
                } else {
                    "server"
                },
                if ours > 0.0 {
                    (theirs - ours) / ours * 100.0
                } else {
                    0.0
                }
            ),
        });
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        let mut out = Vec::new();
        for c in step.checks.iter().filter(|c| !c.passed) {
            out.push(Warning {
                code: "server_disagrees".into(),
                message: format!(
                    "step {}: {}; another client may be using the server, or it lost requests",
                    step_number(step.index),
                    c.summary
                ),
                step: Some(step.index),
            });
        }
        let busy = step
            .trials
            .iter()
            .filter_map(|t| t.figures.get("client_busy_pct"))
            .fold(0.0f64, |a, &b| a.max(b));
        if busy > CLIENT_BUSY_WARN * 100.0 {
            out.push(Warning {
                code: "client_bound".into(),
                message: format!(
                    "step {}: perflab's threads were {:.0}% busy: the client may be what limits this step; add --threads or run perflab on another machine",
                    step_number(step.index),
                    busy
                ),
                step: Some(step.index),
            });
        }
        let evicted: f64 = step
            .trials
            .iter()
            .filter_map(|t| t.figures.get("server_evictions_per_sec"))
            .sum();
        if evicted > 0.0 {
            out.push(Warning {
                code: "evictions".into(),
                message: format!(
                    "step {}: the server evicted items ({evicted:.0}/s): the key space does not fit, and gets miss",
                    step_number(step.index)
                ),
                step: Some(step.index),
            });
        }
        out
    }
}
