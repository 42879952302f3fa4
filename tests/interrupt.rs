//! Ctrl-C always works: a run whose database server stops answering mid-step (SIGSTOP, so
//! nothing is closed and every statement just waits) still ends at once on Ctrl-C, exits
//! 130, keeps its record with the step marked cut short and the stuck workers counted.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::{Results, json};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `perflab oltp` against `url`; once the run has started and measured a while, calls
/// `freeze`, then sends SIGINT. Returns the exit code and how long perflab took to exit
/// after the SIGINT.
fn interrupt_while_frozen(
    results: &Results,
    url: &str,
    freeze: impl FnOnce(),
) -> (Option<i32>, Duration) {
    // The progress line "perflab oltp: run ID (1 step)" comes once the bank is loaded and
    // the sessions are about to open.
    let args = ["oltp", "--target", url, "--clients", "2", "--warmup", "0s"];
    let args = [&args[..], &["--duration", "120s"]].concat();
    let (mut child, rx, reader) = common::spawn_watching(results, &args, "perflab oltp: run");
    if rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let _ = child.kill();
        panic!(
            "the run never started:\n{}",
            reader.join().unwrap_or_default()
        );
    }
    std::thread::sleep(Duration::from_millis(1500));
    freeze();
    // Long enough for every client to be inside a statement the server will not answer.
    std::thread::sleep(Duration::from_millis(1000));
    let Some((code, took)) = common::interrupt_and_wait(&mut child, Duration::from_secs(30)) else {
        panic!(
            "perflab did not exit within 30 s of Ctrl-C:\n{}",
            reader.join().unwrap_or_default()
        );
    };
    let err = reader.join().unwrap_or_default();
    eprintln!("perflab exited {code:?} {took:?} after Ctrl-C; its stderr:\n{err}");
    assert!(err.contains("interrupted"), "{err}");
    (code, took)
}

/// The record of the interrupted run: incomplete, the step cut short during measure with
/// its stuck workers counted.
fn assert_cut_short(results: &Results) {
    let o = common::run(results, &["show", "last", "--json"]);
    let v = json(&o);
    assert_eq!(v["status"], "incomplete", "{v}");
    let cut = &v["cut_short"];
    assert_eq!(cut["step"], 0, "{cut}");
    assert_eq!(cut["phase"], "measure", "{cut}");
    assert_eq!(cut["reason"], "interrupted (Ctrl-C)", "{cut}");
    assert_eq!(cut["workers"], 2, "{cut}");
    assert!(cut["stuck_workers"].as_u64().unwrap() >= 1, "{cut}");
    let shown = common::stdout(&common::run(results, &["show", "last"]));
    assert!(shown.contains("cut short: step 1"), "{shown}");
    assert!(shown.contains("stuck in an op"), "{shown}");
}

#[test]
fn ctrl_c_ends_a_run_on_a_stopped_postgresql() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let r = Results::new("int-pg");
    let (code, took) = interrupt_while_frozen(&r, &pg.url(), || pg.freeze(false));
    pg.freeze(true);
    assert_eq!(code, Some(130));
    // The goal is 2 s; the bound only catches a hang on a loaded machine.
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_cut_short(&r);
}

#[test]
fn ctrl_c_ends_a_run_on_a_stopped_mariadb() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let r = Results::new("int-my");
    let (code, took) = interrupt_while_frozen(&r, &db.url(), || db.freeze(false));
    db.freeze(true);
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_cut_short(&r);
}

/// Without Ctrl-C, a server that stops answering costs each transaction at most
/// `--op-timeout`: they fail as timeouts, with their time on the record, and the run ends.
fn times_out_while_frozen(url: &str, name: &str, freeze: impl FnOnce(), thaw: impl FnOnce()) {
    let results = Results::new(name);
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["oltp", "--target", url, "--clients", "1", "--warmup", "0s"])
        .args(["--duration", "4s", "--op-timeout", "1s", "--json"])
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the perflab binary runs");
    // Loading scale 1 takes a moment; freeze once the measure phase is under way.
    let rec = results.path().join("runs");
    let started = Instant::now();
    while !std::fs::read_dir(&rec).is_ok_and(|mut d| d.next().is_some())
        && started.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
    freeze();
    let out = child.wait_with_output().expect("perflab ends");
    thaw();
    let v = json(&out);
    let t = &v["steps"][0]["trials"][0];
    assert!(t["errors"].as_u64().unwrap() >= 1, "{t}");
    assert!(
        t["error_samples"].to_string().contains("timed out"),
        "{}",
        t["error_samples"]
    );
    assert!(
        t["figures"]["timeouts_per_client"].as_f64().unwrap() >= 1.0,
        "{t}"
    );
    // Each failure took the timeout, not an instant.
    assert!(
        t["error_latency"]["max_ns"].as_u64().unwrap() >= 900_000_000,
        "{t}"
    );
}

#[test]
fn a_stopped_postgresql_costs_each_transaction_the_op_timeout() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    times_out_while_frozen(&pg.url(), "to-pg", || pg.freeze(false), || pg.freeze(true));
}

#[test]
fn a_stopped_mariadb_costs_each_transaction_the_op_timeout() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    times_out_while_frozen(&db.url(), "to-my", || db.freeze(false), || db.freeze(true));
}
