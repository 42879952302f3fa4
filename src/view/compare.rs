//! A comparison in words, as `perflab compare` prints it and reports show it: ratios and
//! their intervals, the verdicts (with "too few samples" where that is why there is none),
//! one row per matched step and figure, the tally and the headline line.

use crate::compare::{PairComparison, Row};
use crate::present::table::Table;
use crate::stats::compare::Verdict;
use crate::vocab::numbers::{metric, sig3};

/// `1.23x`, `0.870x`.
pub fn ratio(v: f64) -> String {
    if !v.is_finite() || v <= 0.0 {
        "-".into()
    } else if v < 1.0 {
        format!("{v:.3}x")
    } else {
        format!("{}x", sig3(v))
    }
}

/// `0.98x – 1.04x`.
pub fn interval(r: &Row) -> String {
    r.result
        .ci95
        .map(|[lo, hi]| format!("{} – {}", ratio(lo), ratio(hi)))
        .unwrap_or_else(|| "-".into())
}

/// Fewer samples a side than a test needs to decide (`crate::stats::compare`).
const DECIDING_SAMPLES: usize = 3;

/// Whether a row is inconclusive for want of samples rather than for its spread.
fn too_few(r: &Row) -> bool {
    r.result.verdict == Verdict::Inconclusive && r.result.n_a.min(r.result.n_b) < DECIDING_SAMPLES
}

/// The verdict as the table says it: "too few samples" where that is why there is none.
pub fn verdict_text(r: &Row) -> String {
    match too_few(r) {
        true => "too few samples".into(),
        false => r.result.verdict.as_str().to_string(),
    }
}

/// The headline ratio, saying that it has no interval of its own.
pub fn headline_line(p: &PairComparison) -> Option<String> {
    let s = p.headline_speedup?;
    let steps = p
        .rows
        .iter()
        .map(|r| r.step.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    Some(format!(
        "headline: the candidate is {} the baseline (geometric mean of the headline figure's ratios over {steps} matched step{}; it has no interval of its own: each step's is in the table)",
        ratio(s),
        if steps == 1 { "" } else { "s" }
    ))
}

/// `throughput`, `mean latency` ...: the figure as a reader names it.
pub fn figure_name(name: &str, op_name: &str) -> String {
    match name {
        "latency_mean_ns" => "mean response".into(),
        "latency_p99_ns" => "p99 response".into(),
        other => super::names::header(other, op_name),
    }
}

/// `p=0.003 (Holm)`, or why there is none.
pub fn p_text(r: &Row) -> String {
    let text = |p: f64| {
        if p < 0.001 {
            "<0.001".to_string()
        } else {
            format!("{p:.3}")
        }
    };
    match (r.result.p_value, r.result.p_adjusted) {
        (_, Some(adj)) => text(adj),
        (Some(p), None) => text(p),
        _ => "-".into(),
    }
}

/// One row per matched step and figure; `verdict` says each row's verdict (the terminal
/// paints it, a report cannot).
pub fn rows_table(p: &PairComparison, verdict: impl Fn(&Row) -> String) -> Table {
    let mut t = Table::new(
        [
            "step",
            "figure",
            "baseline",
            "candidate",
            "ratio",
            "95% interval",
            "verdict",
            "p (Holm)",
            "n",
            "samples",
        ]
        .map(String::from)
        .to_vec(),
    );
    for r in &p.rows {
        t.row(vec![
            r.step.clone(),
            figure_name(&r.figure, &p.op_name),
            metric(&r.figure, r.result.mean_a),
            metric(&r.figure, r.result.mean_b),
            ratio(r.result.ratio),
            interval(r),
            verdict(r),
            p_text(r),
            format!("{}/{}", r.result.n_a, r.result.n_b),
            samples_word(r),
        ]);
    }
    t
}

/// `repeats` or `intervals`.
pub fn samples_word(r: &Row) -> String {
    if r.result.test.contains("interval") {
        "intervals".into()
    } else if r.result.test.contains("repeat") {
        "repeats".into()
    } else {
        "-".into()
    }
}

/// `3 faster, 1 slower, 6 equivalent, 2 inconclusive (12 comparisons, noise ±2%, Holm-corrected)`.
pub fn summary_line(p: &PairComparison) -> String {
    let t = &p.tally;
    let few = p.rows.iter().filter(|r| too_few(r)).count();
    format!(
        "{} faster, {} slower, {} equivalent, {} inconclusive{} ({} comparisons; noise band ±{}%; Welch t on log values, {}-corrected at α={})",
        t.faster,
        t.slower,
        t.equivalent,
        t.inconclusive,
        match few {
            0 => String::new(),
            n if n == t.inconclusive => " (all for too few samples)".to_string(),
            n => format!(" ({n} of them for too few samples)"),
        },
        p.rows.len(),
        trimmed(p.noise * 100.0),
        p.correction,
        p.alpha
    )
}

/// `2`, `0.5`: a number without trailing zeros.
fn trimmed(v: f64) -> String {
    let t = format!("{v:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}
