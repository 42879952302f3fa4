//! The OLTP kind in the registry.

use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::kind::warnings_with;

/// oltp, as the registry sees it.
pub struct OltpKind;

pub static KIND: OltpKind = OltpKind;

impl crate::workload::kind::Kind for OltpKind {
    fn name(&self) -> &'static str {
        "oltp"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &crate::sql::TARGETS
    }

    fn workers(&self) -> &'static str {
        "clients"
    }

    /// A consistency check that failed after a step (the books do not balance).
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let bad = warnings_with(record, "inconsistent");
        (bad > 0).then(|| {
            format!(
                "consistency check failed after {bad} step(s): the books do not balance (run {})",
                record.id
            )
        })
    }
}
