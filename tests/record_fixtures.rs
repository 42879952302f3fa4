//! Records kept in tests/fixtures/records/ (real ones, written by perflab) must keep loading and
//! keep matching docs/record.schema.json; old records missing fields must load; records from a
//! newer perflab must be refused. The schema itself must reject broken records.

use perflab::archive::parse_record;
use perflab::env::Environment;
use perflab::record::{RunRecord, Status};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records")
}

/// Every file of the fixtures folder, sorted, with its text.
fn fixtures() -> Vec<(PathBuf, String)> {
    let dir = fixtures_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

fn fixture(name: &str) -> (PathBuf, Value) {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, value)
}

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!(
            "the schema is not a valid JSON Schema: {e} at {}",
            e.instance_path
        );
    }
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("the schema does not compile: {e}"))
}

/// Every schema error of `instance`, one line each.
fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("  at {}: {e} (schema {})", e.instance_path, e.schema_path))
        .collect()
}

fn load(value: &Value) -> Result<RunRecord, String> {
    parse_record(Path::new("test.json"), &value.to_string()).map_err(|e| e.to_string())
}

#[test]
fn every_fixture_loads_and_matches_the_schema() {
    let validator = validator();
    let all = fixtures();
    assert!(
        all.len() >= 2,
        "expected record fixtures in {}",
        fixtures_dir().display()
    );
    let mut statuses = Vec::new();
    for (path, text) in &all {
        let name = path.display();
        let record =
            parse_record(path, text).unwrap_or_else(|e| panic!("{name} does not load: {e}"));
        statuses.push(record.status);
        let value: Value = serde_json::from_str(text).expect("a loaded record is JSON");
        let errors = schema_errors(&validator, &value);
        assert!(
            errors.is_empty(),
            "{name} does not match the schema:\n{}",
            errors.join("\n")
        );
        // Saving what was loaded must write the same format.
        let resaved = serde_json::to_value(&record).expect("a record serializes");
        let errors = schema_errors(&validator, &resaved);
        assert!(
            errors.is_empty(),
            "{name}, loaded and saved again, does not match:\n{}",
            errors.join("\n")
        );
        assert_eq!(
            resaved.as_object().map(|o| o.len()),
            value.as_object().map(|o| o.len()),
            "{name}: fields lost or gained on a round trip"
        );
    }
    assert!(
        statuses.contains(&Status::Complete),
        "no complete record among the fixtures"
    );
    assert!(
        statuses.contains(&Status::Incomplete),
        "no incomplete record among the fixtures"
    );
}

#[test]
fn an_interrupted_record_keeps_its_finished_steps() {
    let (path, value) = fixture("v1-null-incomplete.json");
    let record = parse_record(&path, &value.to_string()).expect("the fixture loads");
    assert_eq!(record.status, Status::Incomplete);
    assert!(record.warnings.iter().any(|w| w.code == "interrupted"));
    assert!(!record.steps.is_empty());
    assert!(record.steps.iter().all(|s| !s.trials.is_empty()));
}

#[test]
fn old_records_missing_optional_fields_still_load() {
    let (_, mut value) = fixture("v1-null-complete.json");
    let top = value.as_object_mut().expect("a record is an object");
    for key in [
        "analysis",
        "warnings",
        "env",
        "finished_at",
        "suite",
        "headline",
        "tool",
    ] {
        top.remove(key);
    }
    for step in top["steps"].as_array_mut().expect("steps") {
        let step = step.as_object_mut().expect("a step");
        step.remove("swept");
        step["summary"]
            .as_object_mut()
            .expect("a summary")
            .remove("headline");
        for trial in step["trials"].as_array_mut().expect("trials") {
            let trial = trial.as_object_mut().expect("a trial");
            for key in [
                "service_latency",
                "schedule",
                "series",
                "figures",
                "resources",
                "error_samples",
                "service_latency_hdr",
                "items_per_sec",
            ] {
                trial.remove(key);
            }
            trial["latency"]
                .as_object_mut()
                .expect("latency")
                .remove("p999_ns");
        }
    }
    let ops = value["steps"][0]["trials"][0]["ops"].as_u64();
    let record = load(&value)
        .unwrap_or_else(|e| panic!("a record missing optional fields does not load: {e}"));
    assert_eq!(record.analysis, None);
    assert!(record.warnings.is_empty());
    assert_eq!(record.env, Environment::default());
    assert_eq!(record.finished_at, None);
    assert_eq!(record.status, Status::Complete);
    assert_eq!(record.steps.len(), 2);
    assert_eq!(Some(record.steps[0].trials[0].ops), ops);
    assert_eq!(record.steps[0].trials[0].latency.p999_ns, 0);
    assert!(record.steps[0].trials[0].series.is_empty());

    // The least a version 1 record can be.
    let bare = load(&json!({ "schema_version": 1 })).expect("a bare version 1 record loads");
    assert_eq!(bare.status, Status::Incomplete);
    assert!(bare.steps.is_empty());
}

#[test]
fn records_from_a_newer_perflab_are_refused() {
    let (_, mut value) = fixture("v1-null-complete.json");
    value["schema_version"] = json!(99);
    let e = load(&value).expect_err("schema_version 99 must be refused");
    assert!(
        e.contains("newer"),
        "the error should say the record is newer: {e}"
    );
    assert!(e.contains("99"), "the error should name the version: {e}");

    value
        .as_object_mut()
        .expect("an object")
        .remove("schema_version");
    let e = load(&value).expect_err("a record without schema_version must be refused");
    assert!(e.contains("schema_version"), "{e}");
}

/// What is broken, the record to break, and how.
type BrokenRecord = (&'static str, Value, fn(&mut Value));

#[test]
fn the_schema_rejects_broken_records() {
    let validator = validator();
    let (_, good) = fixture("v1-null-complete.json");
    assert!(schema_errors(&validator, &good).is_empty());
    let (_, open) = fixture("v1-null-incomplete.json");
    // Each breaks one rule; the schema must catch every one.
    let cases: Vec<BrokenRecord> = vec![
        ("unknown status", good.clone(), |r| {
            r["status"] = json!("done")
        }),
        ("schema_version 4", good.clone(), |r| {
            r["schema_version"] = json!(4)
        }),
        ("an unknown kind of error", good.clone(), |r| {
            r["steps"][0]["trials"][0]["errors_by_kind"] = json!({ "gremlins": 1 })
        }),
        ("an unknown top-level field", good.clone(), |r| {
            r["extra"] = json!(1)
        }),
        ("a missing required field", good.clone(), |r| {
            if let Some(trial) = r["steps"][0]["trials"][0].as_object_mut() {
                trial.remove("ops");
            }
        }),
        ("a count that is not whole", good.clone(), |r| {
            r["steps"][0]["trials"][0]["ops"] = json!(1.5)
        }),
        ("a NaN throughput (written as null)", good.clone(), |r| {
            r["steps"][0]["trials"][0]["ops_per_sec"] = Value::Null
        }),
        ("a NaN estimate (written as null)", good.clone(), |r| {
            r["steps"][0]["summary"]["headline"]["mean"] = Value::Null
        }),
        ("a histogram that is not HDR", good.clone(), |r| {
            r["steps"][0]["trials"][0]["latency_hdr"] = json!("bm90IGhkcg==")
        }),
        ("service time in a closed loop", good.clone(), |r| {
            let latency = r["steps"][0]["trials"][0]["latency"].clone();
            r["steps"][0]["trials"][0]["service_latency"] = latency;
        }),
        ("an open loop without service time", open.clone(), |r| {
            r["steps"][0]["trials"][0]["service_latency"] = Value::Null
        }),
        ("a confidence interval from one repeat", open.clone(), |r| {
            r["steps"][0]["summary"]["ops_per_sec"]["ci95_low"] = json!(1.0)
        }),
        (
            "no confidence interval from two repeats",
            good.clone(),
            |r| r["steps"][0]["summary"]["ops_per_sec"]["ci95_high"] = Value::Null,
        ),
        ("errors without samples", good.clone(), |r| {
            r["steps"][0]["trials"][0]["errors"] = json!(3);
            r["steps"][0]["trials"][0]["error_samples"] = json!([]);
        }),
        ("a complete run without analysis", good.clone(), |r| {
            r["analysis"] = Value::Null
        }),
        ("a failed run without step_failed", good.clone(), |r| {
            r["status"] = json!("failed")
        }),
        ("a local timestamp", good.clone(), |r| {
            r["started_at"] = json!("2026-11-22T04:35:07.123+01:00")
        }),
        ("a stop with two conditions", good.clone(), |r| {
            r["spec"]["stop"]["ops"] = json!(10)
        }),
        ("an unknown load model", good.clone(), |r| {
            r["spec"]["load"]["model"] = json!("bursty")
        }),
        ("zero threads", good.clone(), |r| {
            r["spec"]["threads"] = json!(0)
        }),
        ("a percent above 100", good.clone(), |r| {
            r["steps"][0]["trials"][0]["resources"]["cpu"]["busy_pct"] = json!(100.5)
        }),
        ("a string figure", good.clone(), |r| {
            r["steps"][0]["trials"][0]["figures"]["x_ns"] = json!("1")
        }),
    ];
    let mut accepted = Vec::new();
    for (what, mut record, breaks) in cases {
        breaks(&mut record);
        if schema_errors(&validator, &record).is_empty() {
            accepted.push(what);
        }
    }
    assert!(
        accepted.is_empty(),
        "the schema accepts broken records: {accepted:?}"
    );
}
