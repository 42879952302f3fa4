//! `perflab oltp` on a throwaway MariaDB server started for these tests (mariadb-install-db +
//! mariadbd on a free port): both workloads, settings and log counters, secrets, bad targets,
//! and a server that dies mid-run.

mod common;

use common::servers::MariaDbServer;
use common::{Results, json, stderr};
use std::process::{Command, Output};

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

fn assert_consistent(v: &serde_json::Value) {
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["code"] != "inconsistent"),
        "{}",
        v["warnings"]
    );
}

#[test]
fn both_workloads_run_on_mariadb_and_stay_consistent() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("my-both");
    let url = db.url();
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "--clients",
            "1,3",
            "--set",
            "tx_isolation=READ-COMMITTED",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let settings = &v["spec"]["server_settings"];
    assert!(
        settings["innodb_flush_log_at_trx_commit"].is_string(),
        "{settings}"
    );
    // The session setting given on the command line is what the server reports back.
    assert_eq!(settings["tx_isolation"], "READ-COMMITTED", "{settings}");
    for s in v["steps"].as_array().unwrap() {
        let t = &s["trials"][0];
        assert!(t["ops"].as_u64().unwrap() > 0);
        assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
        assert!(
            t["figures"]["log_writes_per_txn"].as_f64().unwrap() > 0.0,
            "{}",
            t["figures"]
        );
    }
    assert_consistent(&v);

    // Order entry: both transaction types, each with its own response times; conflicts
    // between users of the same customer are retried, never errors.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--workload",
            "orderentry",
            "--json",
            "--target",
            &url,
            "--clients",
            "4",
            "--warmup",
            "0s",
            "--duration",
            "700ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
    let kinds: Vec<&str> = t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == "kind")
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"lookup") && kinds.contains(&"new_order"),
        "{kinds:?}"
    );
    assert_consistent(&v);

    // Two shards on one server: a second database, made with the real client.
    let Some(client) = common::skip::program("mariadb", "mariadb-client") else {
        return;
    };
    let made = Command::new(client)
        .args([
            "--no-defaults",
            "-h",
            "127.0.0.1",
            "-P",
            &db.port().to_string(),
            "-u",
            "root",
        ])
        .args(["-e", "CREATE DATABASE shard2"])
        .output()
        .expect("the mariadb client runs");
    assert!(
        made.status.success(),
        "the mariadb client could not create a database: {}",
        stderr(&made)
    );
    let second = url.replace("/test", "/shard2");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--workload",
            "orderentry",
            "--json",
            "--target",
            &url,
            "--target",
            &second,
            "--clients",
            "4",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["shards"].as_array().unwrap().len(), 2);
    let t = &v["steps"][0]["trials"][0];
    let shards = t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == "shard" && g["ops"].as_u64().unwrap() > 0)
        .count();
    assert_eq!(shards, 2, "{}", t["groups"]);
    assert_consistent(&v);
}

#[test]
fn passwords_stay_secret_and_bad_targets_get_one_clear_line() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("my-bad");
    let port = db.port();
    let cases = [
        (
            format!("mysql://nobody:hunter2@127.0.0.1:{port}/test"),
            "Access denied",
        ),
        (
            format!("mysql://root@127.0.0.1:{port}/no_such_db"),
            "no_such_db",
        ),
        (
            format!("mysql://root@127.0.0.1:{port}/test?colour=blue"),
            "colour",
        ),
    ];
    for (url, hint) in cases {
        let o = perflab(&r, &["oltp", "--target", &url, "--duration", "100ms"]);
        assert_eq!(o.status.code(), Some(2), "{url}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(hint), "{url}: {e}");
        assert!(!e.contains("hunter2"), "the password was printed: {e}");
    }
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &db.url(),
            "--set",
            "no such=1",
            "--duration",
            "100ms",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    drop(db);
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &format!("mysql://root@127.0.0.1:{port}/test"),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn a_mariadb_that_dies_mid_run_leaves_a_clear_message_and_a_record() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("my-dies");
    let url = db.url();
    let o = perflab(
        &r,
        &[
            "oltp",
            "prepare",
            "--workload",
            "orderentry",
            "--target",
            &url,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::run_through_crash(
        &r,
        &[
            "oltp",
            "run",
            "--workload",
            "orderentry",
            "--json",
            "--quiet",
            "--target",
            &url,
            "--clients",
            "2",
            "--warmup",
            "0s",
            "--duration",
            "2s",
        ],
        || db.kill(),
    );
    common::assert_crash_recorded(&out);
}

#[test]
fn a_server_that_requires_tls_gets_it_unless_the_url_says_otherwise() {
    let Some(db) = MariaDbServer::start_requiring_tls() else {
        return;
    };
    let r = Results::new("my-tls");
    let run = |url: &str| {
        perflab(
            &r,
            &[
                "oltp",
                "--json",
                "--target",
                url,
                "--select-only",
                "--clients",
                "1",
                "--warmup",
                "0s",
                "--duration",
                "200ms",
            ],
        )
    };
    // No ssl-mode: TLS preferred, as the MySQL 8 client does.
    let o = run(&db.url());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&format!("{}?ssl-mode=REQUIRED", db.url()));
    assert!(o.status.success(), "{}", stderr(&o));
    // Plain text asked for: the server's refusal, in one line.
    let o = run(&format!("{}?ssl-mode=DISABLED", db.url()));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

/// `-M simple` is MySQL's text protocol and `-M prepared` its binary one, as the server
/// counts them (`Com_stmt_execute` grows only for prepared statements); `-M extended`,
/// which MySQL has not, is refused in one line.
#[test]
fn query_modes_are_the_text_and_binary_protocols() {
    let Some(client) = common::skip::program("mariadb", "mariadb-client") else {
        return;
    };
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("my-modes");
    let url = db.url();
    let port = db.port().to_string();
    let executes = || -> u64 {
        let o = Command::new(&client)
            .args([
                "--no-defaults",
                "-h",
                "127.0.0.1",
                "-P",
                &port,
                "-u",
                "root",
            ])
            .args([
                "-N",
                "-B",
                "-e",
                "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'",
            ])
            .output()
            .expect("the mariadb client runs");
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let n = text.split_whitespace().nth(1).and_then(|n| n.parse().ok());
        n.unwrap_or_else(|| panic!("Com_stmt_execute: {text:?} {}", stderr(&o)))
    };
    for mode in ["simple", "prepared"] {
        let before = executes();
        let o = perflab(
            &r,
            &[
                "oltp",
                "--json",
                "--target",
                &url,
                "-M",
                mode,
                "--clients",
                "2",
                "--ops",
                "40",
                "--warmup",
                "0s",
            ],
        );
        assert!(o.status.success(), "-M {mode}: {}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["spec"]["query_mode"], mode);
        let t = &v["steps"][0]["trials"][0];
        assert_eq!(t["errors"], 0, "-M {mode}: {}", t["error_samples"]);
        assert_consistent(&v);
        let grew = executes() - before;
        match mode {
            // Each DebitCredit transaction executes five statements.
            "prepared" => assert!(grew >= 200, "-M prepared: {grew} executes"),
            _ => assert_eq!(grew, 0, "-M simple executed prepared statements"),
        }
    }
    let o = perflab(&r, &["oltp", "--target", &url, "-M", "extended"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("MySQL has no extended protocol") && err.lines().count() == 1,
        "{err}"
    );
}
