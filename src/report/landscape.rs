//! The performance landscape: the seed reports' table of systems ordered by their metric,
//! with the configuration columns that tell them apart. Here: runs ordered by their best
//! headline figure, with every disclosure field whose value differs between them.

use super::Table;
use crate::compare::diff::{VOLATILE, disclosure, flatten};
use crate::record::RunRecord;
use crate::vocab::numbers::metric;

/// At most this many configuration columns; the rest are named in a note.
const MAX_COLUMNS: usize = 8;

/// The best step of a run by its headline figure: (value, `threads=4`).
fn best(r: &RunRecord) -> Option<(f64, String)> {
    let better = |a: f64, b: f64| {
        if r.headline.higher_is_better {
            a > b
        } else {
            a < b
        }
    };
    let s = r
        .steps
        .iter()
        .filter(|s| s.summary.headline.n > 0 && s.summary.headline.mean.is_finite())
        .reduce(|a, b| {
            if better(b.summary.headline.mean, a.summary.headline.mean) {
                b
            } else {
                a
            }
        })?;
    let label = crate::view::names::step_params(s);
    Some((s.summary.headline.mean, label))
}

/// The landscape of `records`: ranked within each headline figure (runs measuring different
/// things are not ranked against each other), best first.
pub fn table(records: &[RunRecord]) -> (Table, Option<String>) {
    let flat: Vec<Vec<(String, String)>> =
        records.iter().map(|r| flatten(&disclosure(r))).collect();
    // Fields in first-seen order whose values are not the same in every run.
    let mut fields: Vec<String> = Vec::new();
    for f in &flat {
        for (k, _) in f {
            if !fields.contains(k) && !VOLATILE.contains(&k.as_str()) {
                fields.push(k.clone());
            }
        }
    }
    let value = |i: usize, k: &str| -> String {
        flat[i]
            .iter()
            .find(|(f, _)| f == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "-".into())
    };
    let differing: Vec<String> = fields
        .into_iter()
        .filter(|k| (1..records.len()).any(|i| value(i, k) != value(0, k)))
        .collect();
    let note = (differing.len() > MAX_COLUMNS).then(|| {
        let rest = &differing[MAX_COLUMNS..];
        let named = rest.len().min(MAX_COLUMNS);
        format!(
            "{} more fields differ: {}{}",
            rest.len(),
            rest[..named].join(", "),
            if rest.len() > named { ", ..." } else { "" }
        )
    });
    let shown = &differing[..differing.len().min(MAX_COLUMNS)];

    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&records[a], &records[b]);
        ra.headline.metric.cmp(&rb.headline.metric).then_with(|| {
            let va = best(ra).map_or(f64::NAN, |x| x.0);
            let vb = best(rb).map_or(f64::NAN, |x| x.0);
            let ord = va.total_cmp(&vb);
            if ra.headline.higher_is_better {
                ord.reverse()
            } else {
                ord
            }
        })
    });
    let mut head: Vec<String> = ["rank", "run", "workload", "best", "at"]
        .map(String::from)
        .to_vec();
    head.extend(shown.iter().cloned());
    let mut t = Table {
        caption: Some("landscape: runs ranked by their best headline figure".into()),
        head,
        rows: Vec::new(),
    };
    let mut rank = 0;
    let mut last_metric: Option<&str> = None;
    for &i in &order {
        let r = &records[i];
        if last_metric != Some(r.headline.metric.as_str()) {
            rank = 0;
            last_metric = Some(r.headline.metric.as_str());
        }
        rank += 1;
        let (v, at) = best(r).unwrap_or((f64::NAN, "no finished step".into()));
        let mut row = vec![
            rank.to_string(),
            r.id.clone(),
            r.workload.clone(),
            metric(&r.headline.metric, v),
            at,
        ];
        row.extend(shown.iter().map(|k| value(i, k)));
        t.rows.push(row);
    }
    (t, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Estimate, Headline, StepResult, StepSummary};

    fn run(id: &str, model: &str, values: &[f64]) -> RunRecord {
        let mut r = RunRecord {
            id: id.into(),
            workload: "cpu".into(),
            headline: Headline {
                metric: "ops_per_sec".into(),
                op_name: "fractals".into(),
                higher_is_better: true,
            },
            ..Default::default()
        };
        r.env.cpu.model = Some(model.into());
        r.steps = values
            .iter()
            .enumerate()
            .map(|(i, &v)| StepResult {
                checks: Vec::new(),
                index: i,
                params: [("threads".to_string(), serde_json::json!(i + 1))].into(),
                swept: vec!["threads".into()],
                summary: StepSummary {
                    headline: Estimate {
                        mean: v,
                        n: 1,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect();
        r
    }

    #[test]
    fn runs_are_ranked_by_their_best_step_with_what_differs() {
        let runs = [
            run("a", "EPYC", &[100.0, 180.0]),
            run("b", "Xeon", &[120.0, 300.0, 250.0]),
        ];
        let (t, note) = table(&runs);
        assert!(note.is_none());
        assert_eq!(t.rows[0][..5], ["1", "b", "cpu", "300/s", "threads=2"]);
        assert_eq!(t.rows[1][1], "a");
        assert_eq!(t.head[5], "env.cpu.model");
        assert_eq!(t.rows[0][5], "Xeon");
        assert_eq!(t.head.len(), 6, "nothing else differs: {:?}", t.head);
    }
}
