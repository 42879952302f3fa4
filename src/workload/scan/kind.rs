//! The table scan kind in the registry.

use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::kind::wrong_answers;

/// The databases the SQL kinds share, then the native ceiling.
static SCAN_TARGETS: [TargetEntry; 4] = [
    crate::sql::TARGETS[0],
    crate::sql::TARGETS[1],
    crate::sql::TARGETS[2],
    TargetEntry {
        name: "native",
        description: "the native ceiling: perflab's own scan of the scan tables' rows from memory, every byte read",
    },
];

/// scan, as the registry sees it.
pub struct ScanKind;

pub static KIND: ScanKind = ScanKind;

impl crate::workload::kind::Kind for ScanKind {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &SCAN_TARGETS
    }

    fn workers(&self) -> &'static str {
        "clients"
    }

    /// A scan that gave a wrong answer (a count or sum that is not the table's).
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let wrong = wrong_answers(record);
        (wrong > 0).then(|| {
            format!(
                "{wrong} scan(s) gave a wrong answer (run {}; the errors say which)",
                record.id
            )
        })
    }
}
