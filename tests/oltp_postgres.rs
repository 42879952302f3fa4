//! `perflab oltp` on a throwaway PostgreSQL server started for these tests (initdb + pg_ctl on
//! a free port): DebitCredit, settings, WAL counters, secrets, bad URLs, a server that dies.

mod common;

use common::servers::PgServer;
use common::{Results, json, stderr};
use std::process::{Command, Output};

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

#[test]
fn debitcredit_on_postgres_balances_and_records_the_wal() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-dc");
    // Trust authentication accepts any password: this one must never show anywhere.
    let url = pg.url().replace("postgres@", "postgres:hunter2@");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "--clients",
            "1,2",
            "--pg-set",
            "synchronous_commit=off",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["status"], "complete");
    assert_eq!(v["spec"]["server_settings"]["synchronous_commit"], "off");
    assert!(v["spec"]["server_settings"]["server_version"].is_string());
    for s in v["steps"].as_array().unwrap() {
        let t = &s["trials"][0];
        assert!(t["ops"].as_u64().unwrap() > 0);
        assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
        assert!(
            t["figures"]["log_syncs_per_sec"].is_number(),
            "{}",
            t["figures"]
        );
        // Every transaction writes WAL; the server runs here, so its CPU is measured.
        assert!(t["figures"]["log_bytes_per_txn"].as_f64().unwrap() > 0.0);
        // (A number, not necessarily above zero: the kernel counts CPU time in 10 ms ticks.)
        assert!(
            t["figures"]["server_cpu_us_per_txn"].is_number(),
            "{}",
            t["figures"]
        );
    }
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["code"] != "inconsistent"),
        "{}",
        v["warnings"]
    );
    // The password is in neither the output nor the archive.
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!all.contains("hunter2"), "the password was printed");
    for entry in walk(r.path()) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains("hunter2"),
            "the password is in {}",
            entry.display()
        );
    }
    // The bank was dropped after the run.
    let o = perflab(&r, &["oltp", "run", "--target", &pg.url()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_server_setting_given_several_values_sweeps() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-set-sweep");
    // commit_delay needs a superuser: the throwaway server's user is one.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &pg.url(),
            "--clients",
            "2",
            "--set",
            "synchronous_commit=on,off",
            "--set",
            "commit_delay=0,1000",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "two settings of two values each");
    let mut seen: Vec<(String, String)> = steps
        .iter()
        .map(|s| {
            assert_eq!(
                s["trials"][0]["errors"], 0,
                "{}",
                s["trials"][0]["error_samples"]
            );
            (
                s["params"]["set.synchronous_commit"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                s["params"]["set.commit_delay"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("off".into(), "0".into()),
            ("off".into(), "1000".into()),
            ("on".into(), "0".into()),
            ("on".into(), "1000".into())
        ]
    );
    // A value the server refuses stops the run before anything is loaded, in one line.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &pg.url(),
            "--set",
            "synchronous_commit=on,sometimes",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("synchronous_commit=sometimes"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn bad_postgres_targets_get_one_clear_line() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-bad");
    let missing_db = format!("postgres://postgres@127.0.0.1:{}/nope", pg.port());
    let o = perflab(&r, &["oltp", "--target", &missing_db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("cannot connect") && e.contains("nope"), "{e}");
    // The throwaway server offers no TLS: `prefer` (libpq's default) connects in plain text,
    // `require` is refused in one line.
    let plain = format!("postgres://postgres@127.0.0.1:{}/postgres", pg.port());
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &format!("{plain}?sslmode=require"),
            "--duration",
            "100ms",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("TLS"), "{e}");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &format!("{plain}?sslmode=prefer"),
            "--select-only",
            "--clients",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "100ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Nobody listens on the port of a stopped server.
    let port = pg.port();
    drop(pg);
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn a_server_that_dies_mid_run_leaves_a_clear_message_and_a_record() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-dies");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::run_through_crash(
        &r,
        &[
            "oltp",
            "run",
            "--json",
            "--quiet",
            "--target",
            &url,
            "--clients",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "2s",
        ],
        || pg.kill(),
    );
    common::assert_crash_recorded(&out);
}

#[test]
fn passwords_are_checked_with_scram_and_md5_and_never_shown() {
    let Some(psql_bin) = common::skip::program("psql", "postgresql-client") else {
        return;
    };
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-auth");
    let port = pg.port();
    // Two users with passwords, the server asking for them by SCRAM and by MD5.
    let sql = "SET password_encryption = 'scram-sha-256'; CREATE USER scram_user PASSWORD 'open sesame' SUPERUSER;
               SET password_encryption = 'md5'; CREATE USER md5_user PASSWORD 'open sesame' SUPERUSER;";
    let psql = |sql: &str| {
        Command::new(&psql_bin)
            .args([
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
    };
    let made = psql(sql).expect("psql runs");
    assert!(
        made.status.success(),
        "psql could not create the users: {}",
        stderr(&made)
    );
    let hba = pg.dir().join("data").join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!(
            "host all scram_user 127.0.0.1/32 scram-sha-256\nhost all md5_user 127.0.0.1/32 md5\n{old}"
        ),
    )
    .unwrap();
    assert!(psql("SELECT pg_reload_conf()").unwrap().status.success());
    for user in ["scram_user", "md5_user"] {
        let url = format!("postgres://{user}:open%20sesame@127.0.0.1:{port}/postgres");
        let o = perflab(
            &r,
            &[
                "oltp",
                "--target",
                &url,
                "--select-only",
                "--clients",
                "1",
                "--warmup",
                "0s",
                "--duration",
                "100ms",
            ],
        );
        assert!(o.status.success(), "{user}: {}", stderr(&o));
        let wrong = format!("postgres://{user}:guess@127.0.0.1:{port}/postgres");
        let o = perflab(&r, &["oltp", "--target", &wrong]);
        assert_eq!(o.status.code(), Some(2), "{user}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("password authentication failed"), "{user}: {e}");
        assert!(!e.contains("guess") && !e.contains("sesame"), "{e}");
        // No password at all: one line naming where to give it.
        let none = format!("postgres://{user}@127.0.0.1:{port}/postgres");
        let o = Command::new(env!("CARGO_BIN_EXE_perflab"))
            .args(["oltp", "--target", &none])
            .env_remove("PGPASSWORD")
            .env("HOME", pg.dir())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("PGPASSWORD"), "{}", stderr(&o));
    }
}

#[test]
fn shards_on_one_server_are_databases_perflab_makes_and_drops() {
    let Some(psql_bin) = common::skip::program("psql", "postgresql-client") else {
        return;
    };
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-shards");
    let port = pg.port().to_string();
    let psql = |db: &str, sql: &str| {
        Command::new(&psql_bin)
            .args([
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                db,
            ])
            .args(["-Atc", sql])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let databases = || {
        psql(
            "postgres",
            "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE 'postgres_%'",
        )
    };
    let before = databases().expect("psql runs");
    assert_eq!(before, "");
    // Somebody's own database of a shard's name: used, never dropped.
    psql("postgres", "CREATE DATABASE postgres_2").unwrap();
    let url = pg.url();
    let shards = ["--target", url.as_str(), "--shards", "3"];
    let mut args = vec!["oltp", "prepare"];
    args.extend_from_slice(&shards);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(databases().unwrap(), "postgres_1,postgres_2,postgres_3");
    assert_eq!(
        psql("postgres_3", "SELECT count(*) FROM pgbench_accounts").unwrap(),
        "100000"
    );

    let mut args = vec!["oltp", "run", "--json", "--clients", "3"];
    args.extend_from_slice(&shards);
    args.extend_from_slice(&["--warmup", "0s", "--duration", "300ms"]);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["shards"].as_array().unwrap().len(), 3);
    assert!(!o.stdout.is_empty());

    let mut args = vec!["oltp", "cleanup"];
    args.extend_from_slice(&shards);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // perflab's databases are gone; the one it found stays, emptied of perflab's tables.
    assert_eq!(databases().unwrap(), "postgres_2");
    assert_eq!(
        psql(
            "postgres_2",
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgbench_%'"
        )
        .unwrap(),
        "0"
    );

    // All at once: made, measured, dropped.
    let mut args = vec!["oltp", "--clients", "2", "--workload", "orderentry"];
    args.extend_from_slice(&shards);
    args.extend_from_slice(&["--warmup", "0s", "--duration", "300ms"]);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(databases().unwrap(), "postgres_2");
}

/// `-M` as pgbench means it, seen in the real server's statement log: named statements
/// executed (prepared), the unnamed one parsed and executed every time (extended), the
/// parameters written into the text of one query (simple). Every mode's bank balances.
#[test]
fn query_modes_send_statements_as_pgbench_does() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-modes");
    let url = pg.url();
    let log = pg.dir().join("server.log");
    for mode in ["prepared", "extended", "simple"] {
        let seen = std::fs::read(&log).map(|b| b.len()).unwrap_or(0);
        let o = perflab(
            &r,
            &[
                "oltp",
                "--json",
                "--target",
                &url,
                "-M",
                mode,
                // The test's server runs as its own superuser, who may log every statement.
                "--set",
                "log_statement=all",
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
        assert!(
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["code"] != "inconsistent"),
            "-M {mode}: {}",
            v["warnings"]
        );
        let text = std::fs::read(&log).unwrap_or_default();
        let lines = String::from_utf8_lossy(&text[seen..]).to_string();
        let count = |needle: &str| lines.lines().filter(|l| l.contains(needle)).count();
        let named = count("execute perflab_");
        let unnamed = count("execute <unnamed>: UPDATE pgbench_accounts");
        let inline = count("statement: UPDATE pgbench_accounts SET abalance = abalance + ");
        match mode {
            "prepared" => assert!(named >= 40 && unnamed == 0 && inline == 0, "{lines}"),
            "extended" => assert!(named == 0 && unnamed >= 40 && inline == 0, "{lines}"),
            _ => assert!(named == 0 && unnamed == 0 && inline >= 40, "{lines}"),
        }
    }
    // pgbench's line without -M means pgbench's default, simple, and says so.
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let port = pg.port().to_string();
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-c",
            "1",
            "-t",
            "5",
            "postgres",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["spec"]["query_mode"], "simple");
    assert!(
        stderr(&o).contains("-M simple, pgbench's default"),
        "{}",
        stderr(&o)
    );
}
