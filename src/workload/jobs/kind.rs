//! The batch jobs kind in the registry.

use crate::target::TargetEntry;

/// jobs, as the registry sees it.
pub struct JobsKind;

pub static KIND: JobsKind = JobsKind;

impl crate::workload::kind::Kind for JobsKind {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "COMMAND",
            description: "any program (--command), run as K copies at once or a batch of N jobs through K slots",
        }]
    }

    fn workers(&self) -> &'static str {
        "copies"
    }
}
