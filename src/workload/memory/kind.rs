//! The memory kind in the registry.

use crate::target::TargetEntry;

/// memory, as the registry sees it.
pub struct MemoryKind;

pub static KIND: MemoryKind = MemoryKind;

impl crate::workload::kind::Kind for MemoryKind {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "memory",
            description: "main memory and caches: STREAM bandwidth, pointer-chase latency, lotto",
        }]
    }
}
