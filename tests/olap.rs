//! `perflab olap`: the load, aggregate and query phases on SQLite (embedded) and on throwaway
//! PostgreSQL and MariaDB servers; every phase's checks, answers equal across engines, a
//! broken summary caught, the safety rules and bad inputs.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::{Results, json, stderr};
use serde_json::Value;
use std::process::Output;

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

/// Small and short: every phase finishes in well under a second.
const SMALL: [&str; 10] = [
    "--rows",
    "20k",
    "--files",
    "3",
    "--loaders",
    "2",
    "--warmup",
    "0s",
    "--duration",
    "300ms",
];

/// Sales rows plus the dimensions' (1,096 days, 1,000 products, 200 stores).
const LOADED_ROWS: u64 = 20_000 + 1096 + 1000 + 200;

fn steps(v: &Value) -> &Vec<Value> {
    v["steps"].as_array().expect("steps")
}

/// Runs `perflab olap ARGS --json`, which must succeed: its record.
fn olap(results: &Results, args: &[&str]) -> Value {
    let o = perflab(results, &[&["olap"][..], args, &["--json"][..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

fn phase(step: &Value) -> &str {
    step["params"]["phase"].as_str().expect("a phase")
}

fn kinds(step: &Value) -> Vec<String> {
    step["trials"][0]["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| g["by"] == "kind")
        .map(|g| g["key"].as_str().unwrap().to_string())
        .collect()
}

/// Every check of every step passed, and each phase did what it must: the load step loaded
/// every row of every file and gathered statistics; the aggregate step built the three
/// summaries; every query step answered each kind, all answers right. Returns the checks'
/// figures by name (the last step's), for comparing engines.
fn assert_all_phases(v: &Value, clients: &[u64]) -> Vec<(String, Value)> {
    assert_eq!(v["status"], "complete", "{}", v["warnings"]);
    let s = steps(v);
    assert_eq!(s.len(), 2 + clients.len());
    for step in s {
        let t = &step["trials"][0];
        assert_eq!(t["errors"], 0, "{}: {}", step["params"], t["error_samples"]);
        let checks = step["checks"].as_array().expect("checks");
        assert!(!checks.is_empty(), "{}: no checks", step["params"]);
        for c in checks {
            assert_eq!(c["passed"], true, "{}: {}", step["params"], c["summary"]);
        }
    }
    let load = &s[0];
    assert_eq!(phase(load), "load");
    let t = &load["trials"][0];
    // Three dimension files, three fact files, then one ANALYZE.
    assert_eq!(t["ops"], 7);
    assert_eq!(t["items"], LOADED_ROWS);
    assert_eq!(t["workers"], 2);
    assert!(t["figures"]["rows_per_sec"].as_f64().unwrap() > 0.0);
    assert!(t["bytes"].as_u64().unwrap() > 20_000 * 20);
    let mut k = kinds(load);
    k.sort();
    assert_eq!(k, ["analyze", "dimension", "fact"]);
    let agg = &s[1];
    assert_eq!(phase(agg), "aggregate");
    assert_eq!(agg["trials"][0]["ops"], 4);
    assert_eq!(agg["checks"].as_array().unwrap().len(), 3);
    for (step, n) in s[2..].iter().zip(clients) {
        assert_eq!(phase(step), "query");
        assert_eq!(step["params"]["threads"], *n);
        assert!(
            step["trials"][0]["figures"]["queries_per_min"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let mut k = kinds(step);
        k.sort();
        assert_eq!(
            k,
            ["drill", "rollup", "slice", "topn"],
            "{}",
            step["params"]
        );
        let answers = &step["checks"][0];
        assert_eq!(answers["name"], "query_answers");
        assert!(answers["figures"]["slice_checked"].as_i64().unwrap() > 0);
    }
    s.last().unwrap()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|c| {
            (
                c["summary"].as_str().unwrap().to_string(),
                c["figures"].clone(),
            )
        })
        .collect()
}

#[test]
fn sqlite_runs_the_three_phases_and_every_check_passes() {
    let r = Results::new("olap-sqlite");
    let v = olap(&r, &[&SMALL[..], &["--clients", "1,2"][..]].concat());
    assert_all_phases(&v, &[1, 2]);
    assert_eq!(v["spec"]["rows"], 20_000);
    // The temporary directory (files and database) is gone.
    let target = v["target"].as_str().unwrap();
    let db = target.trim_start_matches("sqlite://");
    assert!(!std::path::Path::new(db).exists(), "{db} left behind");
}

#[test]
fn prepare_run_cleanup_and_a_broken_summary_is_caught() {
    let r = Results::new("olap-steps");
    std::fs::create_dir_all(r.path()).unwrap();
    let db = r.path().join("olap.db");
    let url = format!("sqlite://{}", db.display());
    let files = r.path().join("files");
    let files_arg = files.display().to_string();
    let v = olap(
        &r,
        &[
            &["prepare", "--target", &url, "--files-dir", &files_arg][..],
            &SMALL[..],
        ]
        .concat(),
    );
    assert_eq!(steps(&v).len(), 2);
    // The files stay where they were asked for; a second prepare will not write over them.
    assert!(files.join("sales-0001.tsv").exists());
    assert!(files.join("date.tsv").exists());
    let o = perflab(
        &r,
        &[
            "olap",
            "prepare",
            "--target",
            &format!("sqlite://{}", r.path().join("other.db").display()),
            "--files-dir",
            &files_arg,
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not overwrite"), "{}", stderr(&o));
    // run: the query phase alone, against what prepare left, its data generated again from
    // the recorded seed.
    let run = olap(
        &r,
        &[
            "run",
            "--target",
            &url,
            "--clients",
            "1",
            "--duration",
            "300ms",
            "--seed",
            "99",
        ],
    );
    assert_eq!(steps(&run).len(), 1);
    assert_eq!(run["spec"]["data_seed"], v["spec"]["data_seed"]);
    for c in steps(&run)[0]["checks"].as_array().unwrap() {
        assert_eq!(c["passed"], true, "{}", c["summary"]);
    }
    // A summary that no longer adds up fails its check after the query phase: exit 1.
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("UPDATE olap_agg_quarter_region SET amount = amount + 1 WHERE rowid = 1")
            .unwrap();
    }
    let o = perflab(
        &r,
        &[
            "olap",
            "run",
            "--target",
            &url,
            "--clients",
            "1",
            "--duration",
            "300ms",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("check(s) failed"), "{}", stderr(&o));
    let o = perflab(&r, &["olap", "cleanup", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = rusqlite::Connection::open(&db).unwrap();
    let left: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0, "cleanup left tables");
    let o = perflab(&r, &["olap", "run", "--target", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("olap prepare"), "{}", stderr(&o));
}

#[test]
fn a_foreign_table_of_the_same_name_is_left_untouched() {
    let r = Results::new("olap-foreign");
    std::fs::create_dir_all(r.path()).unwrap();
    let path = r.path().join("theirs.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE olap_agg_year_product (x integer); INSERT INTO olap_agg_year_product VALUES (42);",
        )
        .unwrap();
    }
    let url = format!("sqlite://{}", path.display());
    for action in ["all", "prepare"] {
        let o = perflab(&r, &["olap", action, "--target", &url, "--rows", "10"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("did not create"), "{}", stderr(&o));
    }
    let c = rusqlite::Connection::open(&path).unwrap();
    let x: i64 = c
        .query_row("SELECT x FROM olap_agg_year_product", [], |r| r.get(0))
        .unwrap();
    assert_eq!(x, 42);
}

#[test]
fn bad_inputs_get_one_line_and_exit_2() {
    let r = Results::new("olap-bad");
    std::fs::create_dir_all(r.path()).unwrap();
    let a_file = r.path().join("a-file");
    std::fs::write(&a_file, "not a folder").unwrap();
    let a_file = a_file.display().to_string();
    for (args, says) in [
        (vec!["--files-dir", &a_file], "is not a directory"),
        (vec!["--rows", "0"], "sales rows"),
        (vec!["--rows", "100000M"], "sales rows"),
        (vec!["--rows", "60000M"], "fewer --rows"),
        (vec!["--files", "0"], "files"),
        (vec!["--loaders", "0"], "loaders"),
        (
            vec!["--mix", "rollup=1,pivot=2"],
            "rollup, drill, slice, topn",
        ),
        (vec!["--mix", "rollup=x"], "rollup, drill, slice, topn"),
        (vec!["--mix", "slice=0"], "rollup, drill, slice, topn"),
        (vec!["--set", "work_mem=64MB"], "--set is for servers"),
        (vec!["run"], "needs --target"),
        (vec!["cleanup"], "needs --target"),
        (vec!["--target", "redis://127.0.0.1:1/0"], "not a database"),
        (
            vec!["--target", "postgres://u@127.0.0.1:1/db"],
            "cannot connect",
        ),
    ] {
        let o = perflab(&r, &[&["olap"][..], &args[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A server gives the same totals as SQLite on the same rows and seed (the answers to every
/// query are checked by the sessions themselves; a wrong one is an error).
fn same_as_sqlite(url: &str, name: &str) -> Value {
    let r = Results::new(name);
    let v = olap(
        &r,
        &[&SMALL[..], &["--target", url, "--clients", "2"][..]].concat(),
    );
    let server = assert_all_phases(&v, &[2]);
    let r = Results::new(&format!("{name}-sqlite"));
    let lite = olap(&r, &[&SMALL[..], &["--clients", "1"][..]].concat());
    assert_eq!(server, assert_all_phases(&lite, &[1]));
    v
}

#[test]
fn postgres_loads_through_copy_and_answers_as_sqlite_does() {
    let Some(pg) = PgServer::start() else { return };
    let v = same_as_sqlite(&pg.url(), "olap-pg");
    assert!(v["spec"]["server_settings"]["shared_buffers"].is_string());
    assert!(
        steps(&v)[0]["trials"][0]["figures"]["server_cpu_pct"].is_number(),
        "{}",
        steps(&v)[0]["trials"][0]["figures"]
    );
    // Nothing left behind on the server.
    let r = Results::new("olap-pg-cleanup");
    let o = perflab(&r, &["olap", "cleanup", "--target", &pg.url()]);
    assert!(stderr(&o).contains("no OLAP tables"), "{}", stderr(&o));
}

#[test]
fn mariadb_loads_through_load_data_and_answers_as_sqlite_does() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let v = same_as_sqlite(&db.url(), "olap-maria");
    assert!(v["spec"]["server_settings"]["innodb_buffer_pool_size"].is_string());
}
