//! `perflab oltp --workload tpcc`: TPC-C-style order processing on SQLite and on throwaway
//! PostgreSQL and MariaDB servers. Load, both modes briefly, every consistency condition
//! after the load and after each step; a condition broken on purpose fails the step; tables
//! perflab did not make are left alone; bad inputs get one line and exit 2.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::{Results, json, stderr};
use serde_json::Value;
use std::process::Output;

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

/// Short steps: enough transactions of every type for the checks to mean something.
const SHORT: [&str; 4] = ["--warmup", "200ms", "--duration", "1500ms"];

fn checks(step: &Value) -> Vec<&Value> {
    step["checks"].as_array().unwrap().iter().collect()
}

/// Every check of every step passed, and the twelve conditions are all there: the first
/// step holds the after-load ones (with condition 11), every step the eleven that hold
/// after transactions.
fn assert_consistent(v: &Value, fresh_load: bool) {
    let steps = v["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    for (i, s) in steps.iter().enumerate() {
        for c in checks(s) {
            assert_eq!(c["passed"], true, "step {i}: {}", c["summary"]);
        }
        let names: Vec<&str> = checks(s)
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        for n in 1..=12 {
            let after_step = names
                .iter()
                .any(|c| c.starts_with(&format!("tpcc_{n}_")) && !c.ends_with("_after_load"));
            assert_eq!(after_step, n != 11, "step {i}, condition {n}: {names:?}");
        }
        let after_load = names.iter().filter(|c| c.ends_with("_after_load")).count();
        assert_eq!(after_load, if i == 0 && fresh_load { 12 } else { 0 });
        assert!(names.contains(&"tpcc_response_times"), "{names:?}");
    }
}

fn assert_every_type_ran(trial: &Value) {
    let groups = trial["groups"].as_array().unwrap();
    for kind in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        let g = groups
            .iter()
            .find(|g| g["by"] == "kind" && g["key"] == kind)
            .unwrap_or_else(|| panic!("no {kind} group in {groups:?}"));
        assert!(g["ops"].as_u64().unwrap() > 0, "{kind}: {g}");
    }
}

#[test]
fn tpcc_on_sqlite_loads_runs_and_keeps_every_condition() {
    let r = Results::new("tpcc-sqlite");
    let mut args = vec![
        "oltp",
        "--json",
        "--workload",
        "tpcc",
        "--warehouses",
        "1,2",
        "--clients",
        "2",
    ];
    args.extend(SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["status"], "complete");
    assert_eq!(v["headline"]["metric"], "nopm");
    let tpcc = &v["spec"]["tpcc"];
    assert_eq!(tpcc["mode"], "throughput", "{tpcc}");
    // The NURand constants are recorded, the run-time one at its distance from the load's.
    let k = &tpcc["constants"];
    let delta = k["c_last_run"].as_i64().unwrap() - k["c_last_load"].as_i64().unwrap();
    assert!((65..=119).contains(&delta.abs()) && delta.abs() != 96 && delta.abs() != 112);
    // Two steps: warehouses 1 and 2, each with its own NOPM.
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{}", v["steps"]);
    for (s, w) in steps.iter().zip([1.0, 2.0]) {
        let t = &s["trials"][0];
        assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
        assert_eq!(t["figures"]["warehouses"], w);
        assert!(
            t["figures"]["nopm"].as_f64().unwrap() > 0.0,
            "{}",
            t["figures"]
        );
        assert!(t["figures"]["tpm"].as_f64().unwrap() > t["figures"]["nopm"].as_f64().unwrap());
        assert_every_type_ran(t);
    }
    assert_consistent(&v, true);
}

#[test]
fn spec_mode_binds_ten_terminals_per_warehouse_and_checks_the_ceiling() {
    let r = Results::new("tpcc-spec");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--workload",
            "tpcc",
            "--mode",
            "spec",
            "--wait-factor",
            "0.002",
            "--warehouses",
            "1",
            "--warmup",
            "200ms",
            "--duration",
            "2s",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["workers"], 10, "ten terminals for one warehouse");
    assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
    // Paced terminals: each transaction is timed from its intended start, and how late
    // the terminals started is recorded as for an open loop.
    assert!(t["schedule"].is_object(), "{t}");
    let ceiling = v["steps"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "tpcc_spec_ceiling")
        .expect("the spec ceiling is checked");
    assert_eq!(ceiling["passed"], true, "{}", ceiling["summary"]);
    assert!(
        ceiling["figures"]["nopm"].as_i64().unwrap() > 0,
        "{ceiling}"
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "not_spec_waits"),
        "{}",
        v["warnings"]
    );
    assert_consistent(&v, true);
}

#[test]
fn a_broken_condition_fails_the_step() {
    let r = Results::new("tpcc-broken");
    std::fs::create_dir_all(r.path()).unwrap();
    let file = r.path().join("tpcc.db");
    let url = format!("sqlite://{}", file.display());
    let o = perflab(
        &r,
        &["oltp", "prepare", "--workload", "tpcc", "--target", &url],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // One warehouse's year-to-date is off by a cent: conditions 1 and 8 break.
    let c = rusqlite::Connection::open(&file).unwrap();
    c.execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", [])
        .unwrap();
    drop(c);
    let mut args = vec![
        "oltp",
        "run",
        "--json",
        "--workload",
        "tpcc",
        "--target",
        &url,
        "--clients",
        "1",
    ];
    args.extend(SHORT);
    let o = perflab(&r, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let failed: Vec<&str> = checks(&v["steps"][0])
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["tpcc_1_warehouse_ytd", "tpcc_8_warehouse_history"],
        "{}",
        v["steps"][0]["checks"]
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "inconsistent"
                && w["message"].as_str().unwrap().contains("condition 1")),
        "{}",
        v["warnings"]
    );
    let o = perflab(
        &r,
        &["oltp", "cleanup", "--workload", "tpcc", "--target", &url],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn tables_of_the_same_names_perflab_did_not_make_are_left_alone() {
    let r = Results::new("tpcc-foreign");
    std::fs::create_dir_all(r.path()).unwrap();
    let file = r.path().join("shop.db");
    let c = rusqlite::Connection::open(&file).unwrap();
    c.execute_batch(
        "CREATE TABLE stock (sku text, units integer); INSERT INTO stock VALUES ('apple', 3);",
    )
    .unwrap();
    drop(c);
    let url = format!("sqlite://{}", file.display());
    for action in ["all", "prepare", "cleanup"] {
        let o = perflab(
            &r,
            &["oltp", action, "--workload", "tpcc", "--target", &url],
        );
        if action == "cleanup" {
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(
                stderr(&o).contains("holds no tables perflab made"),
                "{}",
                stderr(&o)
            );
        } else {
            assert_eq!(o.status.code(), Some(2), "{action}: {}", stderr(&o));
            let err = stderr(&o);
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("refusing to load"), "{err}");
        }
    }
    let c = rusqlite::Connection::open(&file).unwrap();
    let rows: i64 = c
        .query_row(
            "SELECT count(*) FROM stock WHERE sku = 'apple' AND units = 3",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 1);
    let tables: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "perflab created tables beside the foreign one");
}

#[test]
fn bad_tpcc_inputs_get_one_line_and_exit_2() {
    let r = Results::new("tpcc-bad");
    for (args, says) in [
        (vec!["--warehouses", "0"], "--warehouses"),
        (vec!["--mode", "fast"], "throughput or spec"),
        (vec!["--mode", "spec", "--clients", "4"], "--warehouses"),
        (vec!["--wait-factor", "0.1"], "--mode spec"),
        (
            vec!["--mode", "spec", "--wait-factor", "0"],
            "--wait-factor",
        ),
        (vec!["--select-only"], "mix is fixed"),
    ] {
        let mut all = vec!["oltp", "--workload", "tpcc"];
        all.extend(&args);
        let o = perflab(&r, &all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // TPC-C's options on another workload.
    let o = perflab(
        &r,
        &["oltp", "--workload", "debitcredit", "--warehouses", "2"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is for --workload tpcc"),
        "{}",
        stderr(&o)
    );
}

/// Both modes on one server: load once (`prepare`), run throughput then spec against it,
/// clean up. The after-load conditions are checked by the prepare's own run of `all`
/// elsewhere; here `run` checks after every step.
fn both_modes_on(url: &str, r: &Results) {
    let o = perflab(
        r,
        &[
            "oltp",
            "prepare",
            "--workload",
            "tpcc",
            "--warehouses",
            "2",
            "--target",
            url,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut args = vec![
        "oltp",
        "run",
        "--json",
        "--workload",
        "tpcc",
        "--warehouses",
        "2",
        "--clients",
        "3",
        "--target",
        url,
    ];
    args.extend(SHORT);
    let o = perflab(r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
    assert_every_type_ran(t);
    assert!(t["figures"]["nopm"].as_f64().unwrap() > 0.0);
    // The server runs here: its CPU per new order and its log figures are beside NOPM.
    assert!(
        t["figures"]["server_cpu_us_per_new_order"].is_number(),
        "{}",
        t["figures"]
    );
    assert!(
        t["figures"]["log_writes_per_txn"].is_number(),
        "{}",
        t["figures"]
    );
    assert_consistent(&v, false);
    let o = perflab(
        r,
        &[
            "oltp",
            "run",
            "--json",
            "--workload",
            "tpcc",
            "--mode",
            "spec",
            "--wait-factor",
            "0.002",
            "--warehouses",
            "1",
            "--target",
            url,
            "--warmup",
            "200ms",
            "--duration",
            "1500ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"][0]["trials"][0]["workers"], 10);
    assert_eq!(v["steps"][0]["trials"][0]["errors"], 0);
    assert_consistent(&v, false);
    let o = perflab(
        r,
        &["oltp", "cleanup", "--workload", "tpcc", "--target", url],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn tpcc_on_postgres_in_both_modes() {
    let Some(pg) = PgServer::start() else { return };
    both_modes_on(&pg.url(), &Results::new("tpcc-pg"));
}

#[test]
fn tpcc_on_mariadb_in_both_modes() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    both_modes_on(&db.url(), &Results::new("tpcc-maria"));
}
