//! Nothing missed at the edges of a phase: in an open loop, ops that fell due but never
//! started before the measure phase ended are counted as missed and kept in the response
//! times with their delay so far; failed ops keep their own response times.

mod common;

use common::{Results, json, run};

#[test]
fn an_open_loop_that_falls_behind_counts_its_missed_ops() {
    let r = Results::new("edges-missed");
    // Each op spins 2 ms, so one worker can start at most 500 of the 2,000 ops/s asked:
    // the rest are still waiting when the phase ends, however fast the machine is.
    let o = run(
        &r,
        &[
            "null",
            "--rate",
            "2000/s",
            "--spin",
            "2ms",
            "--threads",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "1s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    let missed = t["schedule"]["missed_ops"].as_u64().unwrap();
    let ops = t["ops"].as_u64().unwrap();
    assert!(missed > ops, "missed {missed}, ops {ops}");
    // The missed ops are in the response times (their delay so far), not in the ops.
    assert_eq!(t["latency"]["count"].as_u64().unwrap(), ops + missed);
    let last = t["series"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["missed"].as_u64().unwrap(), missed, "{last}");
    // The slowest of them waited most of the phase.
    assert!(
        t["latency"]["max_ns"].as_u64().unwrap() > 500_000_000,
        "{t}"
    );
    let shown = common::stdout(&run(&r, &["show", "last"]));
    assert!(shown.contains("missed"), "{shown}");
}

#[test]
fn an_open_loop_that_keeps_up_misses_nothing() {
    let r = Results::new("edges-kept");
    let o = run(
        &r,
        &[
            "null",
            "--rate",
            "200/s",
            "--threads",
            "2",
            "--warmup",
            "0s",
            "--duration",
            "1s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let t = &json(&o)["steps"][0]["trials"][0];
    // A busy machine may leave one op per worker due at the very end; never a backlog.
    assert!(t["schedule"]["missed_ops"].as_u64().unwrap() <= 2, "{t}");
}

#[test]
fn the_end_of_the_warmup_loses_no_open_loop_start() {
    let r = Results::new("edges-warmup");
    // 32 workers at 24 evenly spaced starts a second in all: each worker's next start is
    // well over a second away when the warmup ends, and each used to be dropped there
    // (88 of the step's 120 starts ran). Every one of them must run now.
    let o = run(
        &r,
        &[
            "null",
            "--rate",
            "24/s",
            "--arrival",
            "uniform",
            "--threads",
            "32",
            "--warmup",
            "1s",
            "--duration",
            "5s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let t = &json(&o)["steps"][0]["trials"][0];
    let started = t["ops"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
    // 120 due; a start at each edge of the phase may fall either side of it.
    assert!(
        (118..=122).contains(&started),
        "{started} of 120 started: {t}"
    );
}

#[test]
fn failed_ops_keep_their_own_response_times() {
    let r = Results::new("edges-errors");
    let o = run(
        &r,
        &[
            "null",
            "--fail-every",
            "2",
            "--spin",
            "100us",
            "--threads",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let t = &json(&o)["steps"][0]["trials"][0];
    let errors = t["errors"].as_u64().unwrap();
    assert!(errors > 0);
    let el = &t["error_latency"];
    assert_eq!(el["count"].as_u64().unwrap(), errors, "{el}");
    // Each failed op spun too, so failing took time, and the record says how long.
    assert!(el["p50_ns"].as_u64().unwrap() >= 100_000, "{el}");
    assert!(
        t["error_latency_hdr"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    // Only successful ops are in the response times.
    assert_eq!(
        t["latency"]["count"].as_u64().unwrap(),
        t["ops"].as_u64().unwrap()
    );
    let shown = common::stdout(&run(&r, &["show", "last"]));
    assert!(shown.contains("err p99"), "{shown}");
}

/// A warmup shorter than one op: the op started in the warmup finishes (thrown away) before
/// the measure phase begins, so it takes none of the measure phase's time. With one op of
/// 2 s measured, the phase lasts about 2 s; had the warmup op run on into it (it started
/// 0.1 s before the phase), the phase would last about 3.9 s.
#[test]
fn a_warmup_op_never_runs_into_the_measure_phase() {
    let r = Results::new("edges-settle");
    let o = run(
        &r,
        &[
            "null",
            "--spin",
            "2s",
            "--threads",
            "1",
            "--warmup",
            "100ms",
            "--ops",
            "1",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["ops"], 1);
    let elapsed = t["elapsed_ns"].as_f64().unwrap() / 1e9;
    // Halfway between the two: a second of slack for a loaded machine either way.
    assert!(elapsed < 3.0, "the measure phase lasted {elapsed} s");
}
