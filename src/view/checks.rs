//! The consistency checks after the steps, in lines: how many passed, what the last step's
//! found, and every failure.

use crate::record::{Check, RunRecord, step_number};

/// The consistency checks after the steps: how many passed, what the last step's found, and
/// every failure. Empty when the workload checks nothing.
pub fn check_lines(r: &RunRecord) -> Vec<String> {
    let all: Vec<(usize, &Check)> = r
        .steps
        .iter()
        .flat_map(|s| s.checks.iter().map(move |c| (s.index, c)))
        .collect();
    if all.is_empty() {
        return Vec::new();
    }
    let passed = all.iter().filter(|(_, c)| c.passed).count();
    let mut out = vec![format!(
        "checks after each step: {passed} of {} passed",
        all.len()
    )];
    let last = all.last().map(|(i, _)| *i);
    for (step, c) in &all {
        if !c.passed || Some(*step) == last {
            let shard = c.shard.map(|s| format!(" shard {s}")).unwrap_or_default();
            let mark = if c.passed { "ok" } else { "FAILED" };
            out.push(format!(
                "  step {}{shard}: {mark}: {}",
                step_number(*step),
                c.summary
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::StepResult;

    /// Every failure is listed, and the last step's check whatever it found; steps read from
    /// one.
    #[test]
    fn failures_and_the_last_step() {
        let check = |passed| Check {
            name: "books_balance".into(),
            passed,
            summary: "the books balance".into(),
            ..Default::default()
        };
        let mut r = RunRecord::default();
        for (index, passed) in [(0, false), (1, true)] {
            r.steps.push(StepResult {
                index,
                checks: vec![check(passed)],
                ..Default::default()
            });
        }
        assert_eq!(
            check_lines(&r),
            [
                "checks after each step: 1 of 2 passed",
                "  step 1: FAILED: the books balance",
                "  step 2: ok: the books balance",
            ]
        );
    }
}
