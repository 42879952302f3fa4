//! The key-value cache kind in the registry.

use super::args::KvArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::present::breakdown::Words;
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::{Host, args, run_spec, subcommand};
use clap::ArgMatches;

/// What `perflab kv --help` says it does.
const ABOUT: &str = "Key-value caches: memcached and Redis, gets and sets over a preloaded key space, pipelined, closed or open loop (memtier_benchmark's options); with no --target, a throwaway memcached";

/// kv, as the registry sees it.
pub struct KvKind;

pub static KIND: KvKind = KvKind;

/// The tools whose flags `perflab kv` reads.
static PEERS: &[&crate::workload::peer::Peer] =
    &[&super::peer::REDIS_BENCHMARK, &super::peer::MEMTIER];

impl crate::workload::kind::Kind for KvKind {
    fn name(&self) -> &'static str {
        "kv"
    }

    fn peers(&self) -> &'static [&'static crate::workload::peer::Peer] {
        PEERS
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[
            TargetEntry {
                name: "memcached://HOST:PORT",
                description: "a memcached server, text or meta protocol (memcached:///PATH for a Unix socket; several are shards, by ketama; the kv default is a throwaway one started from PATH)",
            },
            TargetEntry {
                name: "redis://HOST:PORT/DB",
                description: "a Redis, Valkey or KeyDB server, RESP2 or RESP3 with ?protocol=3 (password from the URL or REDISCLI_AUTH; rediss:// for TLS; several nodes of a Redis Cluster as shards)",
            },
        ]
    }

    fn command(&self) -> clap::Command {
        subcommand::<KvArgs>("kv", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, _env: &Environment) -> Result<Option<RunSpec>, AppError> {
        let a: KvArgs = args(m)?;
        if a.action.is_setup() {
            return Ok(None);
        }
        Ok(Some(super::cmd::kv_spec(&a)?))
    }

    fn once_only(&self, m: &ArgMatches) -> Option<&'static str> {
        let a: KvArgs = args(m).ok()?;
        a.action.is_setup().then_some("kv prepare or cleanup")
    }

    fn execute(&self, m: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        let a: KvArgs = args(m)?;
        if a.action.is_setup() {
            return super::cmd::steps(host, &a);
        }
        run_spec(self, m, host)
    }

    fn balance_line(&self, record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        Some(super::balance::line(record))
    }

    fn words(&self) -> Words {
        Words {
            title: "by command (response times)",
            group: "command",
            group_rate: "req/s",
            shard_rate: "req/s",
        }
    }
}
