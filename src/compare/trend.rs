//! One figure across runs (`perflab trend`): the runs' headline estimates in time order,
//! pooled into points (each run, each day, or each value of a label such as `commit`), and
//! each point judged against the one before it by `stats::compare`'s verdicts, so a team
//! sees the build where a figure changed.
//!
//! A point's samples, as the verdicts need them:
//! - several runs (`--by`): each run's mean is one sample: run-to-run noise, the honest kind;
//! - one run whose step had repeats: samples with the mean, the 95% interval and the count
//!   the record gives (what the index keeps; the repeats themselves are in the record);
//! - one run without an interval: one sample, and the verdict is inconclusive (the note
//!   says to repeat, or to pool with `--by`).

use crate::archive::TrendPoint;
use crate::stats::compare::{Question, SampleKind, Settings, Verdict, compare_all, t975};
use serde::Serialize;

/// How runs are pooled into points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    Run,
    Day,
    Label(String),
}

impl By {
    /// `day`, or a label's name; none: each run.
    pub fn parse(text: Option<&str>) -> By {
        match text {
            None => By::Run,
            Some("day") => By::Day,
            Some(label) => By::Label(label.to_string()),
        }
    }
}

/// One point of a trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendRow {
    /// The run's id, the day, or the label's value.
    pub key: String,
    /// When its first run started.
    pub started_at: String,
    /// Its runs' ids.
    pub runs: Vec<String>,
    pub mean: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Against the point before: this point's mean over that one's, the 95% interval of
    /// the ratio, and the verdict (none for the first point).
    pub ratio: Option<f64>,
    pub ratio_ci95: Option<[f64; 2]>,
    pub verdict: Option<Verdict>,
}

/// A trend: its points, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trend {
    pub figure: String,
    pub higher_is_better: bool,
    pub rows: Vec<TrendRow>,
    /// What the reader should know (runs left out, points of one sample).
    pub notes: Vec<String>,
}

/// Pools `points` (oldest first) and judges each point against the one before.
pub fn trend(figure: &str, points: &[TrendPoint], by: &By, noise: f64) -> Trend {
    let higher_is_better = points.first().is_none_or(|p| p.higher_is_better);
    let mut groups: Vec<(String, Vec<&TrendPoint>)> = Vec::new();
    let mut unlabelled = 0;
    for p in points {
        let key = match by {
            By::Run => p.id.clone(),
            By::Day => p.started_at.get(..10).unwrap_or(&p.started_at).to_string(),
            By::Label(l) => match p.labels.get(l) {
                Some(v) => v.clone(),
                None => {
                    unlabelled += 1;
                    continue;
                }
            },
        };
        // Points follow their first run's time; a label seen again later joins its point.
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    let samples: Vec<Vec<f64>> = groups.iter().map(|(_, g)| samples_of(g)).collect();
    let questions: Vec<Question> = samples
        .windows(2)
        .map(|w| Question {
            a: &w[0],
            b: &w[1],
            higher_is_better,
            kind: SampleKind::Repeats,
        })
        .collect();
    let verdicts = compare_all(&questions, &Settings { noise, alpha: 0.05 });
    let mut rows = Vec::with_capacity(groups.len());
    for (i, (key, g)) in groups.iter().enumerate() {
        let (mean, low, high) = estimate_of(g, &samples[i]);
        let against = i.checked_sub(1).and_then(|j| verdicts.get(j));
        let before = rows.last().map(|r: &TrendRow| r.mean);
        rows.push(TrendRow {
            key: key.clone(),
            started_at: g[0].started_at.clone(),
            runs: g.iter().map(|p| p.id.clone()).collect(),
            mean,
            low,
            high,
            ratio: before.filter(|b| *b != 0.0).map(|b| mean / b),
            ratio_ci95: against.and_then(|c| c.ci95),
            verdict: against.map(|c| c.verdict),
        });
    }
    let mut notes = Vec::new();
    if unlabelled > 0 {
        notes.push(format!(
            "{unlabelled} run{} without the label left out",
            if unlabelled == 1 { "" } else { "s" }
        ));
    }
    if samples.iter().any(|s| s.len() < 3) && rows.len() > 1 {
        notes.push(
            "a point of fewer than 3 samples cannot be judged faster or slower: run with --repeat 3 or more, or pool runs with --by LABEL"
                .into(),
        );
    }
    Trend {
        figure: figure.to_string(),
        higher_is_better,
        rows,
        notes,
    }
}

/// A point's samples (see the module's documentation).
fn samples_of(g: &[&TrendPoint]) -> Vec<f64> {
    match g {
        [one] => from_interval(one),
        many => many.iter().map(|p| p.mean).collect(),
    }
}

/// `n` samples with the estimate's mean and the standard deviation its 95% interval
/// implies (`half = t975(n-1) · sd / √n`), or the mean alone.
fn from_interval(p: &TrendPoint) -> Vec<f64> {
    let (Some(low), Some(high), n) = (p.low, p.high, p.n as usize) else {
        return vec![p.mean];
    };
    if n < 2 || high <= low {
        return vec![p.mean];
    }
    let sd = (high - low) / 2.0 * (n as f64).sqrt() / t975((n - 1) as f64);
    // Pairs at mean ± c (and the mean itself when n is odd) have exactly this mean and
    // sample standard deviation.
    let pairs = n / 2;
    let c = sd * (((n - 1) as f64) / (2 * pairs) as f64).sqrt();
    let mut out = Vec::with_capacity(n);
    for _ in 0..pairs {
        out.push(p.mean - c);
        out.push(p.mean + c);
    }
    if !n.is_multiple_of(2) {
        out.push(p.mean);
    }
    out
}

/// A point's mean and 95% interval: the run's own, or over its runs' means.
fn estimate_of(g: &[&TrendPoint], samples: &[f64]) -> (f64, Option<f64>, Option<f64>) {
    match g {
        [one] => (one.mean, one.low, one.high),
        _ => {
            let e = crate::stats::estimate::estimate(samples);
            (e.mean, e.ci95_low, e.ci95_high)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: &str, day: &str, mean: f64, commit: &str) -> TrendPoint {
        TrendPoint {
            id: id.into(),
            started_at: format!("{day}T10:00:00.000Z"),
            host: "h".into(),
            workload: "null".into(),
            metric: "ops_per_sec".into(),
            mean,
            low: None,
            high: None,
            n: 1,
            higher_is_better: true,
            labels: [("commit".to_string(), commit.to_string())].into(),
        }
    }

    #[test]
    fn pooled_by_label_the_slower_build_is_found() {
        let mut points = Vec::new();
        for (i, v) in [100.0, 101.0, 99.0, 100.5].iter().enumerate() {
            points.push(point(&format!("a{i}"), "2026-12-01", *v, "aaa"));
        }
        for (i, v) in [80.0, 81.0, 79.5, 80.2].iter().enumerate() {
            points.push(point(&format!("b{i}"), "2026-12-02", *v, "bbb"));
        }
        let t = trend("ops_per_sec", &points, &By::Label("commit".into()), 0.02);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].verdict, None);
        assert_eq!(t.rows[1].verdict, Some(Verdict::Slower));
        assert!(t.rows[1].ratio.unwrap() < 0.85);
        let by_run = trend("ops_per_sec", &points, &By::Run, 0.02);
        assert_eq!(by_run.rows.len(), 8);
        assert_eq!(by_run.rows[4].verdict, Some(Verdict::Inconclusive));
        assert!(!by_run.notes.is_empty());
    }

    #[test]
    fn samples_from_an_interval_keep_its_mean_and_width() {
        let mut p = point("a", "2026-12-01", 100.0, "x");
        (p.low, p.high, p.n) = (Some(95.0), Some(105.0), 5);
        let s = from_interval(&p);
        assert_eq!(s.len(), 5);
        let e = crate::stats::estimate::estimate(&s);
        assert!((e.mean - 100.0).abs() < 1e-9);
        assert!((e.ci95_low.unwrap() - 95.0).abs() < 1e-6, "{e:?}");
    }
}
