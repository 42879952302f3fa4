//! The search for the largest value of an option that passes, SPECmail's way of finding the
//! users a server supports: a candidate qualifies when its steps pass their checks (mail: its
//! quality of service and its accounting) at every share of its load, 100%, 120% and 80%.
//!
//! 1. **Gallop** up the candidates (the sweep's values) from the smallest, doubling the
//!    stride, at 100% then 120% of each one's load, until one fails or the top passes.
//! 2. **Bisect** between the largest that passed and the smallest that failed.
//! 3. **Qualify** the largest that passed at the shares below 100% (80%). Passing at 120%
//!    makes 80% all but certain, so it is run once, at the end; if it fails anyway (a
//!    stall, a noisy neighbour), that candidate is out and the search goes on below it.
//!
//! Every step is a step of the record, saved as it finishes, with the record's `search`
//! summary updated after each. Results are kept per candidate and share, so nothing runs
//! twice. The search assumes that more load never passes where less failed; a step that
//! contradicts it (a pass above a failure) is reported as it is, not hidden.

use super::runner::{RunError, Steps};
use crate::record::StepResult;
use crate::record::search::{Probe, Search};
use crate::vocab::{Axis, SearchSpec, StepPoint, sweep::step_params};
use crate::workload::{LoadSpec, RunSpec};
use serde_json::json;

/// Runs the search over `points`, the grid of the one swept option, in the order of its values.
pub(super) fn run(
    spec: &RunSpec,
    search: &SearchSpec,
    axes: &[&dyn Axis],
    points: &[StepPoint],
    steps: &mut Steps,
) -> Result<(), RunError> {
    let candidates: Vec<f64> = points
        .iter()
        .map(|p| value(&step_params(axes, p), search.axis))
        .collect();
    let mut summary = Search {
        method: method(search),
        axis: search.axis.to_string(),
        candidates,
        loads_pct: search.loads_pct.clone(),
        verdict: "searching".into(),
        ..Default::default()
    };
    refresh(&summary, steps)?;
    let arrival = match &spec.load {
        LoadSpec::Offered { arrival, .. } | LoadSpec::Open { arrival, .. } => *arrival,
        LoadSpec::Closed { .. } => crate::workload::Arrival::Poisson,
    };
    let swept = vec![search.axis.to_string(), "load_pct".to_string()];
    let supported = find::<RunError>(points.len(), &search.loads_pct, |i, pct| {
        let at = RunSpec {
            load: LoadSpec::Offered {
                arrival,
                load_pct: pct,
            },
            search: None,
            ..spec.clone()
        };
        let mut params = step_params(axes, &points[i]);
        // `load_pct=120`, not `120.0`, in labels.
        let shown = if pct.fract() == 0.0 {
            json!(pct as u64)
        } else {
            json!(pct)
        };
        params.push(("load_pct".into(), shown));
        steps.run(&at, &points[i], params, &swept)?;
        let Some(step) = steps.record.steps.last() else {
            return Ok(false);
        };
        let (passed, failed) = verdict(step);
        summary.probes.push(Probe {
            step: step.index,
            value: summary.candidates[i],
            load_pct: pct,
            passed,
            failed,
        });
        refresh(&summary, steps)?;
        Ok(passed)
    })?;
    let n = points.len();
    let c = &summary.candidates;
    summary.verdict = match supported {
        None => format!(
            "no {} in the range passes at every share of its load: try smaller values",
            search.axis
        ),
        Some(i) if i + 1 == n => format!(
            "{} {} passes at {} of its load, and it is the top of the range: the server may support more; widen the range",
            c[i],
            search.axis,
            shares(search)
        ),
        Some(i) => format!(
            "{} {} supported: the largest that passes at {} of its load",
            c[i],
            search.axis,
            shares(search)
        ),
    };
    summary.supported = supported.map(|i| c[i]);
    summary.supported_step = supported.and_then(|i| {
        summary
            .probes
            .iter()
            .find(|p| p.value == c[i] && p.load_pct == search.loads_pct[0])
            .map(|p| p.step)
    });
    steps.note(&summary.verdict);
    refresh(&summary, steps)
}

/// Puts the summary in the record and saves it.
fn refresh(summary: &Search, steps: &mut Steps) -> Result<(), RunError> {
    steps.record.search = Some(summary.clone());
    steps.save()
}

/// The shares in words: `100%, 120% and 80%`.
fn shares(search: &SearchSpec) -> String {
    let all: Vec<String> = search.loads_pct.iter().map(|p| format!("{p}%")).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

fn method(search: &SearchSpec) -> String {
    format!(
        "SPECmail's qualification: the largest {axis} whose steps pass their checks at {shares} of its load; candidates are the sweep's values; gallop up from the smallest (stride doubling), bisect between the last pass and the first failure at 100% and the higher shares, then run the lower shares once, at the best candidate (if it fails there, the search goes on below it)",
        axis = search.axis,
        shares = shares(search)
    )
}

/// A step parameter as a number (the candidate's value).
fn value(params: &[(String, serde_json::Value)], name: &str) -> f64 {
    params
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.as_f64())
        .unwrap_or(f64::NAN)
}

/// Whether a step passed: it has checks, and every one passed.
fn verdict(step: &StepResult) -> (bool, Vec<String>) {
    if step.checks.is_empty() {
        return (
            false,
            vec!["no checks: nothing to judge the step by".into()],
        );
    }
    let failed: Vec<String> = step
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: {}", c.name, c.summary))
        .collect();
    (failed.is_empty(), failed)
}

/// The search itself, apart from running steps: the largest of `n` candidates (by index)
/// that passes at every share of `loads_pct`, asking `probe(candidate, share)` at most once
/// for each pair.
pub fn find<E>(
    n: usize,
    loads_pct: &[f64],
    probe: impl FnMut(usize, f64) -> Result<bool, E>,
) -> Result<Option<usize>, E> {
    let mut s = Searcher {
        loads_pct,
        results: vec![Vec::new(); n],
        probe,
    };
    let mut hi = n;
    let mut lo = None;
    loop {
        let Some(best) = s.largest_passing(lo, hi)? else {
            return Ok(None);
        };
        if s.qualifies(best)? {
            return Ok(Some(best));
        }
        // Out: the largest candidate below it that passed is where the search goes on.
        hi = best;
        lo = (0..best).rev().find(|&i| s.primary_known(i) == Some(true));
    }
}

struct Searcher<'a, P> {
    loads_pct: &'a [f64],
    /// Per candidate: (share, passed) of the probes run.
    results: Vec<Vec<(f64, bool)>>,
    probe: P,
}

impl<E, P: FnMut(usize, f64) -> Result<bool, E>> Searcher<'_, P> {
    /// Candidate `i` at `pct` of its load, probed once.
    fn probe(&mut self, i: usize, pct: f64) -> Result<bool, E> {
        if let Some(&(_, passed)) = self.results[i].iter().find(|r| r.0 == pct) {
            return Ok(passed);
        }
        let passed = (self.probe)(i, pct)?;
        self.results[i].push((pct, passed));
        Ok(passed)
    }

    /// Whether candidate `i` passes at its load and the higher shares (in order, up to the
    /// first failure).
    fn primary(&mut self, i: usize) -> Result<bool, E> {
        let shares: Vec<f64> = self
            .loads_pct
            .iter()
            .copied()
            .filter(|&p| p >= 100.0)
            .collect();
        for pct in shares {
            if !self.probe(i, pct)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// What is known of `primary(i)` without probing.
    fn primary_known(&self, i: usize) -> Option<bool> {
        let r = &self.results[i];
        if r.iter().any(|&(p, ok)| p >= 100.0 && !ok) {
            return Some(false);
        }
        self.loads_pct
            .iter()
            .filter(|&&p| p >= 100.0)
            .all(|p| r.iter().any(|x| x.0 == *p))
            .then_some(true)
    }

    /// Whether candidate `i` also passes at the shares below 100%.
    fn qualifies(&mut self, i: usize) -> Result<bool, E> {
        let lower: Vec<f64> = self
            .loads_pct
            .iter()
            .copied()
            .filter(|&p| p < 100.0)
            .collect();
        for pct in lower {
            if !self.probe(i, pct)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The largest candidate below `hi` that passes at 100% and up, given that `lo` (if
    /// any) does: galloping up from `lo` (from the smallest without one), then bisecting.
    fn largest_passing(
        &mut self,
        mut lo: Option<usize>,
        mut hi: usize,
    ) -> Result<Option<usize>, E> {
        let mut stride = 1;
        loop {
            let next = match lo {
                None => 0,
                Some(l) => (l + stride).min(hi.saturating_sub(1)),
            };
            if next >= hi || Some(next) == lo {
                break;
            }
            if self.primary(next)? {
                // Strides 1, 2, 4 ... from the first pass: candidates 0, 1, 3, 7 ...
                if lo.is_some() {
                    stride *= 2;
                }
                lo = Some(next);
            } else {
                hi = next;
                break;
            }
        }
        while let Some(l) = lo
            && hi - l > 1
        {
            let mid = l + (hi - l) / 2;
            if self.primary(mid)? {
                lo = Some(mid);
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that passes up to `limit` users at 100% (so up to limit/1.2 at 120%), with
    /// candidates 0..n standing for 100, 200, ... users; returns the answer and the probes.
    fn search(n: usize, limit: f64, flaky_80: &[usize]) -> (Option<usize>, Vec<(usize, f64)>) {
        let mut probes = Vec::new();
        let found = find::<()>(n, &[100.0, 120.0, 80.0], |i, pct| {
            probes.push((i, pct));
            let load = (i + 1) as f64 * 100.0 * pct / 100.0;
            Ok(load <= limit && !(pct < 100.0 && flaky_80.contains(&i)))
        })
        .unwrap();
        (found, probes)
    }

    #[test]
    fn finds_the_largest_candidate_that_qualifies() {
        // 1,000 users pass at 100%; at 120% only up to 833: 800 users (index 7) qualifies.
        let (found, probes) = search(64, 1000.0, &[]);
        assert_eq!(found, Some(7));
        // No pair probed twice, and far fewer steps than candidates.
        let mut seen = probes.clone();
        seen.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        seen.dedup();
        assert_eq!(seen.len(), probes.len());
        assert!(probes.len() <= 20, "{probes:?}");
        // 80% runs once, at the answer.
        assert_eq!(probes.iter().filter(|p| p.1 == 80.0).count(), 1);
        assert_eq!(probes.last(), Some(&(7, 80.0)));
    }

    #[test]
    fn none_passes_and_the_top_passes() {
        let (found, probes) = search(10, 50.0, &[]);
        assert_eq!(found, None);
        assert_eq!(probes, vec![(0, 100.0)]);
        let (found, _) = search(10, 1e9, &[]);
        assert_eq!(found, Some(9));
        let (found, probes) = search(1, 1e9, &[]);
        assert_eq!((found, probes.len()), (Some(0), 3));
    }

    #[test]
    fn a_failure_at_80_percent_moves_the_search_below() {
        // 800 users fails at 80% (a stall): the answer is the next that qualifies.
        let (found, probes) = search(64, 1000.0, &[7]);
        assert_eq!(found, Some(6));
        assert!(probes.contains(&(7, 80.0)) && probes.contains(&(6, 80.0)));
        // Two stalls in a row, down to the smallest.
        let (found, _) = search(64, 1000.0, &(1..8).collect::<Vec<_>>());
        assert_eq!(found, Some(0));
        let (found, _) = search(64, 1000.0, &(0..8).collect::<Vec<_>>());
        assert_eq!(found, None);
    }
}
