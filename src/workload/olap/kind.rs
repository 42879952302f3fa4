//! The OLAP kind in the registry.

use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::kind::wrong_answers;

/// olap, as the registry sees it.
pub struct OlapKind;

pub static KIND: OlapKind = OlapKind;

impl crate::workload::kind::Kind for OlapKind {
    fn name(&self) -> &'static str {
        "olap"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &crate::sql::TARGETS
    }

    fn workers(&self) -> &'static str {
        "analysts"
    }

    /// A check of the loaded rows or the summaries that failed, then a query that gave a
    /// wrong answer.
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let failed: Vec<String> = record
            .steps
            .iter()
            .flat_map(|s| s.checks.iter().filter(|c| !c.passed).map(move |c| (s, c)))
            .map(|(s, c)| format!("step {} {}: {}", s.index, c.name, c.summary))
            .collect();
        if let Some(first) = failed.first() {
            return Some(format!(
                "{} check(s) failed (run {}); the first: {first}",
                failed.len(),
                record.id
            ));
        }
        let wrong = wrong_answers(record);
        (wrong > 0).then(|| {
            format!(
                "{wrong} quer(ies) gave a wrong answer (run {}; the errors say which)",
                record.id
            )
        })
    }
}
