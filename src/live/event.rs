//! The lines of a run's interval file and of `--live`: one JSON object per line, each named
//! by its `event`, written as the run goes (docs/output-format.md lists every field).
//!
//! - `run`: the run began (id, workload, target, steps, interval).
//! - `trial`: a trial of a step began, with its swept parameters.
//! - `interval`: one interval of the measure phase closed (the record's series point, with
//!   p90, p99.9 and the mean from its histogram where the histogram is at hand).
//! - `resources`: the sampler's reading over one interval (the record's resource point).
//! - `trial_end`: the trial's totals, as the record has them (errors by kind too).
//! - `step_end`, `warning`, `end`.
//!
//! Steps are the record's indexes (from 0), as are repeats.

use super::Cursor;
use crate::env::resources::ResourcePoint;
use crate::record::histogram::LatencyHistogram;
use crate::record::{IntervalPoint, RunRecord, StepResult, Trial, Warning};
use serde_json::{Map, Value, json};

/// `value` (an object) with `event`, `step` and `repeat` in front.
fn at(event: &str, cursor: &Cursor, value: Value) -> Value {
    let mut out = Map::new();
    out.insert("event".into(), json!(event));
    out.insert("run".into(), json!(cursor.run));
    out.insert("step".into(), json!(cursor.step));
    out.insert("repeat".into(), json!(cursor.repeat));
    if let Value::Object(m) = value {
        out.extend(m);
    }
    Value::Object(out)
}

pub fn run(record: &RunRecord, steps: usize, repeat: u32) -> Value {
    json!({
        "event": "run",
        "run": record.id,
        "workload": record.workload,
        "target": record.target,
        "started_at": record.started_at,
        "interval_ns": record.spec.get("interval_ns"),
        "steps": steps,
        "repeat": repeat,
        "headline": record.headline.metric,
        "op_name": record.headline.op_name,
    })
}

pub fn trial(cursor: &Cursor) -> Value {
    let params: Map<String, Value> = cursor
        .swept
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    at("trial", cursor, json!({ "params": params }))
}

pub fn interval(cursor: &Cursor, p: &IntervalPoint, h: Option<&LatencyHistogram>) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    if let (Some(h), Value::Object(m)) = (h.filter(|h| !h.is_empty()), &mut v) {
        m.insert("mean_ns".into(), json!(h.mean()));
        m.insert("p90_ns".into(), json!(h.value_at_quantile(0.90)));
        m.insert("p999_ns".into(), json!(h.value_at_quantile(0.999)));
    }
    at("interval", cursor, v)
}

pub fn resources(cursor: &Cursor, p: &ResourcePoint) -> Value {
    at(
        "resources",
        cursor,
        serde_json::to_value(p).unwrap_or_default(),
    )
}

pub fn trial_end(cursor: &Cursor, t: &Trial) -> Value {
    at(
        "trial_end",
        cursor,
        json!({
            "elapsed_ns": t.elapsed_ns,
            "ops": t.ops,
            "items": t.items,
            "bytes": t.bytes,
            "errors": t.errors,
            "errors_by_kind": t.errors_by_kind,
            "ops_per_sec": t.ops_per_sec,
            "latency": t.latency,
        }),
    )
}

pub fn step_end(cursor: &Cursor, s: &StepResult) -> Value {
    at(
        "step_end",
        cursor,
        json!({ "params": s.params, "summary": s.summary }),
    )
}

pub fn warning(cursor: &Cursor, w: &Warning) -> Value {
    at(
        "warning",
        cursor,
        json!({ "code": w.code, "message": w.message }),
    )
}

pub fn end(record: &RunRecord) -> Value {
    json!({
        "event": "end",
        "run": record.id,
        "status": record.status,
        "finished_at": record.finished_at,
    })
}
