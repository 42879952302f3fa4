//! Records built in code for the charts' tests: runs of known steps, so that each test can
//! say what its chart must hold without a run or a file behind it.

use crate::present::svg::{LineChart, Series};
use crate::record::histogram::{encode, new_histogram};
use crate::record::{
    Estimate, GroupResult, Headline, IntervalPoint, LatencySummary, RunRecord, StepResult,
    StepSummary, Trial,
};
use serde_json::json;

/// A run called `run` whose headline is ops per second, over these steps. Its workload names
/// no kind, so the registry adds nothing and the axes are the default ones (threads and rate
/// are loads).
pub fn run(steps: Vec<StepResult>) -> RunRecord {
    RunRecord {
        id: "run".into(),
        headline: Headline {
            metric: "ops_per_sec".into(),
            op_name: "op".into(),
            higher_is_better: true,
        },
        steps,
        ..Default::default()
    }
}

/// Step `index` at these swept values with `ops` a second, one trial whose response times
/// grow from `p50_ns`: p90 twice it, p99 four times, p99.9 eight times, the maximum sixteen.
pub fn step(index: usize, swept: &[(&str, f64)], ops: f64, p50_ns: u64) -> StepResult {
    let trial = Trial {
        latency: LatencySummary {
            count: 1000,
            mean_ns: p50_ns as f64,
            p50_ns,
            p90_ns: 2 * p50_ns,
            p99_ns: 4 * p50_ns,
            p999_ns: 8 * p50_ns,
            max_ns: 16 * p50_ns,
            ..Default::default()
        },
        ..Default::default()
    };
    StepResult {
        index,
        // Whole values as whole numbers, as a record holds thread counts and sizes.
        params: swept
            .iter()
            .map(|&(k, v)| match v.fract() == 0.0 && v >= 0.0 {
                true => (k.to_string(), json!(v as u64)),
                false => (k.to_string(), json!(v)),
            })
            .collect(),
        swept: swept.iter().map(|(k, _)| k.to_string()).collect(),
        trials: vec![trial],
        summary: StepSummary {
            headline: Estimate {
                mean: ops,
                n: 1,
                ..Default::default()
            },
            ops_per_sec: Estimate {
                mean: ops,
                n: 1,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A run of one step per thread count, with these throughputs; response times grow with the
/// threads (p50 1 µs per thread).
pub fn threads_run(ops: &[f64]) -> RunRecord {
    run(ops
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let threads = 1u64 << i;
            step(i, &[("threads", threads as f64)], v, 1000 * threads)
        })
        .collect())
}

/// The step's first trial with these response times in its histogram.
pub fn with_histogram(mut s: StepResult, values_ns: &[u64]) -> StepResult {
    let mut h = new_histogram();
    for v in values_ns {
        h.record(*v).expect("within the histogram's range");
    }
    s.trials[0].latency_hdr = encode(&h);
    s
}

/// The step's first trial with one-second intervals of these (ops a second, p99) figures.
pub fn with_intervals(mut s: StepResult, intervals: &[(f64, u64)]) -> StepResult {
    let t = &mut s.trials[0];
    t.series = intervals
        .iter()
        .enumerate()
        .map(|(i, &(ops_per_sec, p99_ns))| IntervalPoint {
            start_ns: i as u64 * 1_000_000_000,
            duration_ns: 1_000_000_000,
            ops: ops_per_sec as u64,
            ops_per_sec,
            p99_ns,
            ..Default::default()
        })
        .collect();
    t.elapsed_ns = intervals.len() as u64 * 1_000_000_000;
    s
}

/// A group of the step's ops (`by` direction, `label` read) with its percentiles from
/// `p50_ns`, as [`step`] makes them.
pub fn group(by: &str, label: &str, p50_ns: u64) -> GroupResult {
    GroupResult {
        by: by.into(),
        key: label.into(),
        label: label.into(),
        ops: 1000,
        latency: step(0, &[], 0.0, p50_ns).trials[0].latency,
        ..Default::default()
    }
}

/// A chart's series by name, in its order.
pub fn names(c: &LineChart) -> Vec<&str> {
    c.series.iter().map(|s| s.name.as_str()).collect()
}

/// A series' points as (x, y).
pub fn xy(s: &Series) -> Vec<(f64, f64)> {
    s.points.iter().map(|p| (p.x, p.y)).collect()
}

/// A series' y values.
pub fn ys(s: &Series) -> Vec<f64> {
    s.points.iter().map(|p| p.y).collect()
}
