//! The CPU kind in the registry.

use crate::target::TargetEntry;

/// cpu, as the registry sees it.
pub struct CpuKind;

pub static KIND: CpuKind = CpuKind;

impl crate::workload::kind::Kind for CpuKind {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "cpu",
            description: "the processors: Mandelbrot fractals (half integer, half floating point)",
        }]
    }
}
