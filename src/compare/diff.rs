//! Every difference between two runs' disclosures: the machine (`env`), the tool, the target
//! and the exact specification, as dotted paths (`env.cpu.model`, `spec.threads`).
//!
//! A comparison is only as good as what else changed: the seed reports stated the
//! configuration beside each ratio, so this list is printed with every comparison.

use crate::record::RunRecord;
use serde::Serialize;
use serde_json::Value;

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// `env.cpu.model`, `spec.threads`, `target`.
    pub field: String,
    /// The value as JSON text; absent when only the other run has the field.
    pub baseline: Option<String>,
    pub candidate: Option<String>,
}

/// Fields that change from run to run on the same machine and say nothing about it.
pub const VOLATILE: [&str; 3] = [
    "env.load_average",
    "env.memory.available_bytes",
    "env.cpu.mhz",
];

/// The disclosure of a run as one JSON object.
pub fn disclosure(r: &RunRecord) -> Value {
    serde_json::json!({
        "tool": { "version": r.tool.version, "profile": r.tool.profile },
        "workload": r.workload,
        "target": r.target,
        "spec": r.spec,
        "env": serde_json::to_value(&r.env).unwrap_or(Value::Null),
    })
}

/// Leaves of a JSON value as (dotted path, value text), in order. Arrays of scalars stay
/// whole (`spec.threads = [1,2,4]` reads better than three entries).
pub fn flatten(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                walk(x, join(k), out);
            }
        }
        Value::Array(items) if items.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, x) in items.iter().enumerate() {
                walk(x, join(&i.to_string()), out);
            }
        }
        Value::Null => {}
        other => out.push((path, text(other))),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The fields whose values differ, in the baseline's order, then fields only the candidate has.
pub fn differences(a: &RunRecord, b: &RunRecord) -> Vec<Difference> {
    let fa = flatten(&disclosure(a));
    let fb = flatten(&disclosure(b));
    let volatile = |f: &str| VOLATILE.contains(&f);
    let mut out = Vec::new();
    for (field, va) in &fa {
        if volatile(field) {
            continue;
        }
        match fb.iter().find(|(f, _)| f == field) {
            Some((_, vb)) if vb == va => {}
            found => out.push(Difference {
                field: field.clone(),
                baseline: Some(va.clone()),
                candidate: found.map(|(_, v)| v.clone()),
            }),
        }
    }
    for (field, vb) in &fb {
        if !volatile(field) && !fa.iter().any(|(f, _)| f == field) {
            out.push(Difference {
                field: field.clone(),
                baseline: None,
                candidate: Some(vb.clone()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_changed_added_and_removed_fields_but_not_volatile_ones() {
        let mut a = RunRecord {
            spec: serde_json::json!({"threads": [1, 2], "size_bytes": 1024, "seed": 1}),
            ..Default::default()
        };
        a.env.cpu.model = Some("EPYC".into());
        a.env.load_average = Some([1.0, 1.0, 1.0]);
        let mut b = a.clone();
        b.spec = serde_json::json!({"threads": [1, 2, 4], "size_bytes": 1024, "direct": true});
        b.env.cpu.model = Some("Xeon".into());
        b.env.load_average = Some([3.0, 1.0, 1.0]);
        let d = differences(&a, &b);
        let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
        // Fields come in the disclosure's (sorted) order.
        assert_eq!(
            fields,
            ["env.cpu.model", "spec.seed", "spec.threads", "spec.direct"]
        );
        assert_eq!(d[2].baseline.as_deref(), Some("[1,2]"));
        assert_eq!(d[2].candidate.as_deref(), Some("[1,2,4]"));
        assert_eq!(d[1].candidate, None);
        assert_eq!(d[3].baseline, None);
        assert!(differences(&a, &a).is_empty());
    }
}
