//! Comparing saved runs: `perflab compare A B [C ...]`, each later run against the first.
//!
//! - Steps are matched by the values of the options either run swept (a run that did not
//!   sweep an option still has its value), so `--threads 1,2,4` on two disks lines up step by
//!   step, and a one-step run matches the step of a sweep with its settings.
//! - Per matched step, four figures: the headline, throughput (when the headline is another
//!   figure), mean and p99 response time. Samples are the step's repeats; when either run has
//!   a single repeat, the step's per-interval values stand in (labelled: they leave out
//!   run-to-run noise).
//! - The statistics (ratio, 95% interval, verdict, Holm's correction over all the pair's
//!   comparisons) are [`crate::stats::compare`]'s; this module only chooses what to compare.
//! - [`diff`] lists every difference in the disclosure (machine, settings, options);
//!   `--expect` sets the headline ratio against a naive expectation (the clock, or a factor).
//!
//! Everything here works from saved records, so old runs compare the same way forever.

pub mod diff;
pub mod trend;

/// A noise band as given (`2%`, `2` meaning percent, `0.5%`): the fraction, 0 to 0.5.
pub fn parse_noise(text: &str) -> Result<f64, crate::vocab::SpecError> {
    let bad =
        || crate::vocab::SpecError::new("noise", text, "give a percentage from 0 to 50, e.g. 2%");
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| bad())?;
    if !(0.0..=50.0).contains(&v) {
        return Err(bad());
    }
    Ok(v / 100.0)
}

use crate::record::{IntervalPoint, RunRecord, StepResult, Trial};
use crate::stats::compare::{self as stat, Comparison, Question, SampleKind, Settings, Verdict};
use crate::workload::kind::label_in_kind;
use serde::Serialize;
use serde_json::Value;

/// What a user asked for beyond the runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Ratios inside ±noise are "equivalent" (0.02 = 2%).
    pub noise: f64,
    pub expect: Option<Expectation>,
}

/// The naive expectation a ratio is set against (`--expect clock`, `--expect 2x`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expectation {
    /// The ratio of the CPUs' clock frequencies (maximum if known, else current).
    Clock,
    Factor(f64),
}

impl Expectation {
    /// `clock`, `2x`, `1.14`.
    pub fn parse(text: &str) -> Result<Expectation, crate::vocab::SpecError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("clock") {
            return Ok(Expectation::Clock);
        }
        match t.trim_end_matches(['x', 'X']).parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 => Ok(Expectation::Factor(f)),
            _ => Err(crate::vocab::SpecError::new(
                "expect",
                text,
                "give 'clock' (the ratio of the CPUs' clocks) or a factor such as 2x",
            )),
        }
    }
}

/// One run as the comparison names it.
#[derive(Debug, Clone, Serialize)]
pub struct RunRef {
    pub id: String,
    pub workload: String,
    pub target: String,
    pub started_at: String,
    pub status: String,
}

impl RunRef {
    fn of(r: &RunRecord) -> Self {
        RunRef {
            id: r.id.clone(),
            workload: r.workload.clone(),
            target: r.target.clone(),
            started_at: r.started_at.clone(),
            status: r.status.as_str().to_string(),
        }
    }
}

/// One figure of one matched step.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `threads=4`, or `(one step)` when neither run swept anything.
    pub step: String,
    pub baseline_step: usize,
    pub candidate_step: usize,
    /// The figure's record name, with its unit (`ops_per_sec`, `latency_p99_ns`).
    pub figure: String,
    pub higher_is_better: bool,
    #[serde(flatten)]
    pub result: Comparison,
}

/// How many of each verdict.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Tally {
    pub faster: usize,
    pub slower: usize,
    pub equivalent: usize,
    pub inconclusive: usize,
}

/// `--expect` worked out.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectationResult {
    /// `clock` or `2x`.
    pub basis: String,
    pub expected: f64,
    /// The geometric mean of the headline speedups (higher is better, whatever the figure).
    pub measured: f64,
    /// measured / expected.
    pub relative: f64,
}

/// One candidate against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct PairComparison {
    pub baseline: RunRef,
    pub candidate: RunRef,
    /// What one op of the baseline is called (`transactions`, `I/Os`).
    pub op_name: String,
    pub noise: f64,
    pub alpha: f64,
    /// The correction over the pair's comparisons.
    pub correction: String,
    pub differences: Vec<diff::Difference>,
    pub rows: Vec<Row>,
    /// Steps of either run with no partner, by label.
    pub unmatched: Vec<String>,
    pub tally: Tally,
    /// Geometric mean over matched steps of the headline speedup (>1: the candidate is better).
    pub headline_speedup: Option<f64>,
    pub expectation: Option<ExpectationResult>,
    pub warnings: Vec<String>,
}

/// The whole answer of `perflab compare`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub pairs: Vec<PairComparison>,
}

impl Report {
    /// Whether any figure got worse beyond the noise (for `--fail-on regression`).
    pub fn has_regression(&self) -> bool {
        self.pairs.iter().any(|p| p.tally.slower > 0)
    }
}

/// Compares every run after the first with the first.
pub fn compare(runs: &[RunRecord], options: &Options) -> Report {
    let Some((base, rest)) = runs.split_first() else {
        return Report { pairs: Vec::new() };
    };
    Report {
        pairs: rest
            .iter()
            .map(|c| compare_pair(base, c, options))
            .collect(),
    }
}

/// The options either run swept, in the baseline's order, then the candidate's others.
fn match_keys(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for s in a.steps.first().into_iter().chain(b.steps.first()) {
        for k in &s.swept {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}

fn step_key(s: &StepResult, keys: &[String]) -> Vec<Value> {
    keys.iter()
        .map(|k| s.params.get(k).cloned().unwrap_or(Value::Null))
        .collect()
}

/// `threads=4 kernel=triad`, with sizes and times in units.
pub fn step_label(s: &StepResult, keys: &[String]) -> String {
    if keys.is_empty() {
        return "(one step)".into();
    }
    keys.iter()
        .map(|k| {
            let v = s.params.get(k).unwrap_or(&Value::Null);
            format!("{}={}", k, crate::vocab::numbers::param(k, v))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a figure from one trial (None when the trial has no such figure).
type OfTrial = Box<dyn Fn(&Trial) -> Option<f64>>;

/// A figure compared per step: its name, direction, and how to read it from a trial and
/// from an interval (when intervals can stand in for repeats).
struct Figure {
    name: String,
    higher_is_better: bool,
    of_trial: OfTrial,
    of_interval: Option<fn(&IntervalPoint) -> f64>,
}

fn figures(r: &RunRecord) -> Vec<Figure> {
    let h = r.headline.clone();
    let mut v = Vec::new();
    let interval_of = |name: &str| -> Option<fn(&IntervalPoint) -> f64> {
        match name {
            "ops_per_sec" => Some(|p| p.ops_per_sec),
            "bytes_per_sec" => Some(|p| p.bytes_per_sec),
            _ => None,
        }
    };
    let name = h.metric.clone();
    v.push(Figure {
        name: h.metric.clone(),
        higher_is_better: h.higher_is_better,
        of_interval: interval_of(&h.metric),
        of_trial: Box::new(move |t| t.metric(&name)),
    });
    if h.metric != "ops_per_sec" {
        v.push(Figure {
            name: "ops_per_sec".into(),
            higher_is_better: true,
            of_interval: interval_of("ops_per_sec"),
            of_trial: Box::new(|t| Some(t.ops_per_sec)),
        });
    }
    v.push(Figure {
        name: "latency_mean_ns".into(),
        higher_is_better: false,
        of_interval: None,
        of_trial: Box::new(|t| (t.latency.count > 0).then_some(t.latency.mean_ns)),
    });
    v.push(Figure {
        name: "latency_p99_ns".into(),
        higher_is_better: false,
        of_interval: Some(|p| p.p99_ns as f64),
        of_trial: Box::new(|t| (t.latency.count > 0).then_some(t.latency.p99_ns as f64)),
    });
    // A job file's jobs (groups `by: job`): each its own rate and response time, beside the
    // step's total, in the baseline's order.
    let mut jobs: Vec<String> = Vec::new();
    for g in r
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .flat_map(|t| &t.groups)
    {
        if g.by == "job" && !jobs.contains(&g.key) {
            jobs.push(g.key.clone());
        }
    }
    for job in jobs {
        let name = job.clone();
        let of = move |t: &Trial| {
            t.groups
                .iter()
                .find(|g| g.by == "job" && g.key == job)
                .cloned()
        };
        let rate = of.clone();
        v.push(Figure {
            name: format!("job {name}: ops_per_sec"),
            higher_is_better: true,
            of_interval: None,
            of_trial: Box::new(move |t| rate(t).map(|g| g.ops_per_sec)),
        });
        v.push(Figure {
            name: format!("job {name}: latency_mean_ns"),
            higher_is_better: false,
            of_interval: None,
            of_trial: Box::new(move |t| {
                of(t)
                    .filter(|g| g.latency.count > 0)
                    .map(|g| g.latency.mean_ns)
            }),
        });
    }
    v
}

/// The intervals of a step that ran their full length (the last one of a phase may be a
/// sliver whose rate says little), over all its trials.
fn full_intervals(s: &StepResult) -> Vec<&IntervalPoint> {
    let longest = s
        .trials
        .iter()
        .flat_map(|t| &t.series)
        .map(|p| p.duration_ns)
        .max()
        .unwrap_or(0);
    s.trials
        .iter()
        .flat_map(|t| &t.series)
        .filter(|p| p.duration_ns as f64 >= 0.9 * longest as f64 && p.ops > 0)
        .collect()
}

struct Sampled {
    a: Vec<f64>,
    b: Vec<f64>,
    kind: SampleKind,
}

fn samples(f: &Figure, sa: &StepResult, sb: &StepResult) -> Sampled {
    let by_trial =
        |s: &StepResult| -> Vec<f64> { s.trials.iter().filter_map(&f.of_trial).collect() };
    let (a, b) = (by_trial(sa), by_trial(sb));
    if a.len() >= 2 && b.len() >= 2 {
        return Sampled {
            a,
            b,
            kind: SampleKind::Repeats,
        };
    }
    if let Some(of) = f.of_interval {
        let ia: Vec<f64> = full_intervals(sa).into_iter().map(of).collect();
        let ib: Vec<f64> = full_intervals(sb).into_iter().map(of).collect();
        if ia.len() >= 2 && ib.len() >= 2 {
            return Sampled {
                a: ia,
                b: ib,
                kind: SampleKind::Intervals,
            };
        }
    }
    Sampled {
        a,
        b,
        kind: SampleKind::Repeats,
    }
}

fn compare_pair(a: &RunRecord, b: &RunRecord, options: &Options) -> PairComparison {
    let settings = Settings {
        noise: options.noise,
        ..Settings::default()
    };
    let keys = match_keys(a, b);
    let mut warnings = run_warnings(a, b);
    let (pairs, unmatched) = pair_steps(a, b, &keys);
    if pairs.is_empty() && !(a.steps.is_empty() && b.steps.is_empty()) {
        warnings.push(format!(
            "no step of one run has the settings of a step of the other (matched on {}); compare runs of the same sweep",
            if keys.is_empty() { "nothing".to_string() } else { keys.join(", ") }
        ));
    }

    let figs = figures(a);
    let mut meta: Vec<(String, usize, usize, String, bool)> = Vec::new();
    let mut sampled: Vec<Sampled> = Vec::new();
    for (sa, sb) in &pairs {
        for f in &figs {
            let s = samples(f, sa, sb);
            if s.a.is_empty() && s.b.is_empty() {
                continue;
            }
            meta.push((
                label_in_kind(a, &step_label(sa, &keys)),
                sa.index,
                sb.index,
                f.name.clone(),
                f.higher_is_better,
            ));
            sampled.push(s);
        }
    }
    let questions: Vec<Question> = sampled
        .iter()
        .zip(&meta)
        .map(|(s, m)| Question {
            a: &s.a,
            b: &s.b,
            higher_is_better: m.4,
            kind: s.kind,
        })
        .collect();
    let results = stat::compare_all(&questions, &settings);
    let rows: Vec<Row> = meta
        .into_iter()
        .zip(results)
        .map(|((step, i, j, figure, hib), result)| Row {
            step,
            baseline_step: i,
            candidate_step: j,
            figure,
            higher_is_better: hib,
            result,
        })
        .collect();
    let mut tally = Tally::default();
    for r in &rows {
        match r.result.verdict {
            Verdict::Faster => tally.faster += 1,
            Verdict::Slower => tally.slower += 1,
            Verdict::Equivalent => tally.equivalent += 1,
            Verdict::Inconclusive => tally.inconclusive += 1,
        }
    }
    if rows.iter().any(|r| r.result.n_a < 3 || r.result.n_b < 3) {
        warnings.push(
            "some figures have fewer than 3 samples a side, too few for a verdict: run both with --repeat 5 or more".into(),
        );
    }
    if rows.iter().any(|r| r.result.test.contains("interval")) {
        warnings.push(
            "single runs were compared by their per-interval figures, which leave out run-to-run noise: treat their verdicts as indicative, or repeat both runs (--repeat 5)".into(),
        );
    }
    let headline_speedup = speedup(&rows, &a.headline.metric);
    let expectation = options.expect.and_then(|e| {
        let measured = headline_speedup?;
        let (basis, expected) = match e {
            Expectation::Factor(f) => {
                let text = format!("{f:.3}");
                (format!("{}x", text.trim_end_matches('0').trim_end_matches('.')), f)
            }
            Expectation::Clock => {
                let clock = |r: &RunRecord| r.env.cpu.max_mhz.or(r.env.cpu.mhz);
                match (clock(a), clock(b)) {
                    (Some(x), Some(y)) if x > 0.0 && y > 0.0 => ("clock".to_string(), y / x),
                    _ => {
                        warnings.push(
                            "--expect clock: a run's disclosure has no CPU clock; give a factor instead, e.g. --expect 1.14x".into(),
                        );
                        return None;
                    }
                }
            }
        };
        Some(ExpectationResult {
            basis,
            expected,
            measured,
            relative: measured / expected,
        })
    });
    PairComparison {
        baseline: RunRef::of(a),
        candidate: RunRef::of(b),
        op_name: a.headline.op_name.clone(),
        noise: settings.noise,
        alpha: settings.alpha,
        correction: "Holm-Bonferroni".into(),
        differences: diff::differences(a, b),
        rows,
        unmatched,
        tally,
        headline_speedup,
        expectation,
        warnings,
    }
}

/// What the reader should know about the two runs before their figures: different workloads
/// or headline figures, unfinished runs, debug builds.
fn run_warnings(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    let mut warnings = Vec::new();
    if a.workload != b.workload {
        warnings.push(format!(
            "the runs measure different workloads ({} and {}): only steps with the same settings are set side by side",
            a.workload, b.workload
        ));
    }
    if a.headline.metric != b.headline.metric {
        warnings.push(format!(
            "the runs rank steps by different figures ({} and {}); the baseline's is used",
            a.headline.metric, b.headline.metric
        ));
    }
    for r in [a, b] {
        if r.status.as_str() != "complete" {
            warnings.push(format!(
                "run {} is {}: only its finished steps are compared",
                r.id,
                r.status.as_str()
            ));
        }
        if r.tool.profile == "debug" {
            warnings.push(format!(
                "run {} was measured by a debug build: its figures are not comparable",
                r.id
            ));
        }
    }
    warnings
}

/// Each baseline step with the candidate step of the same settings (each used once), and
/// the steps of either run that have no partner.
fn pair_steps<'r>(
    a: &'r RunRecord,
    b: &'r RunRecord,
    keys: &[String],
) -> (Vec<(&'r StepResult, &'r StepResult)>, Vec<String>) {
    // Pair up steps; each candidate step is used once.
    let mut pairs: Vec<(&StepResult, &StepResult)> = Vec::new();
    let mut used = vec![false; b.steps.len()];
    let mut unmatched = Vec::new();
    for sa in &a.steps {
        let key = step_key(sa, keys);
        match b
            .steps
            .iter()
            .enumerate()
            .find(|(i, sb)| !used[*i] && step_key(sb, keys) == key)
        {
            Some((i, sb)) => {
                used[i] = true;
                pairs.push((sa, sb));
            }
            None => unmatched.push(format!(
                "{} (baseline only)",
                label_in_kind(a, &step_label(sa, keys))
            )),
        }
    }
    for (i, sb) in b.steps.iter().enumerate() {
        if !used[i] {
            unmatched.push(format!(
                "{} (candidate only)",
                label_in_kind(b, &step_label(sb, keys))
            ));
        }
    }
    (pairs, unmatched)
}

/// The geometric mean, over matched steps, of the headline's speedup (a ratio turned so that
/// above 1 means better).
fn speedup(rows: &[Row], headline: &str) -> Option<f64> {
    let logs: Vec<f64> = rows
        .iter()
        .filter(|r| r.figure == headline && r.result.ratio.is_finite() && r.result.ratio > 0.0)
        .map(|r| {
            let l = r.result.ratio.ln();
            if r.higher_is_better { l } else { -l }
        })
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

#[cfg(test)]
mod tests;
