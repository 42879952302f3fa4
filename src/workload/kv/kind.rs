//! The key-value cache kind in the registry.

use crate::target::TargetEntry;

/// kv, as the registry sees it.
pub struct KvKind;

pub static KIND: KvKind = KvKind;

impl crate::workload::kind::Kind for KvKind {
    fn name(&self) -> &'static str {
        "kv"
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
}
