//! The stop token reaches every wait: with a table locked by another session (so perflab's
//! statements wait on the server, where perflab cannot look), Ctrl-C still ends the run in
//! about a second with exit 130, the run saved as incomplete, and nothing of perflab's left
//! running on the server. The op timeout is 60 s in these runs, so an end that waited for it
//! (the behaviour before the token) cannot pass. Also: a running job is killed with its
//! process group.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::{Results, json};
use perflab::sql::sql::{Conn, ServerTarget};
use perflab::stop::Stop;
use std::process::{Child, Command};
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A bound that only a hang reaches: the token ends waits in about a second (the cancel's
/// grace), and a loaded CI machine gets room. Far below the runs' 60 s op timeout.
const ENDS_WITHIN: Duration = Duration::from_secs(10);

/// Sends SIGINT and waits for the exit; returns the code, how long it took and the stderr.
fn ctrl_c(child: &mut Child, reader: JoinHandle<String>) -> (Option<i32>, Duration, String) {
    let Some((code, took)) = common::interrupt_and_wait(child, Duration::from_secs(90)) else {
        panic!(
            "perflab did not exit within 90 s of Ctrl-C:\n{}",
            reader.join().unwrap_or_default()
        );
    };
    let err = reader.join().unwrap_or_default();
    eprintln!("perflab exited {code:?} {took:?} after Ctrl-C; its stderr:\n{err}");
    (code, took, err)
}

fn wait_for(rx: &Receiver<()>, child: &mut Child, what: &str) {
    if rx.recv_timeout(Duration::from_secs(180)).is_err() {
        let _ = child.kill();
        panic!("{what} never came");
    }
}

fn target(url: &str) -> ServerTarget {
    ServerTarget {
        url: url.to_string(),
        set: Vec::new(),
        op_timeout: Duration::from_secs(30),
        query_mode: Default::default(),
    }
}

/// The record of the last run: its status and the phase it was cut short in.
fn last_run(results: &Results) -> serde_json::Value {
    json(&common::run(results, &["show", "last", "--json"]))
}

/// Statements of perflab's running on PostgreSQL (its sessions name themselves; the test's
/// lock holder, perflab's client too, is idle in its transaction).
fn pg_perflab_active(pg: &PgServer) -> Vec<Vec<String>> {
    let mut c =
        perflab::sql::postgres::connect(&target(&pg.url()), &Stop::new()).expect("connects");
    c.query_texts(
        "SELECT pid::text, state, coalesce(wait_event_type, ''), query FROM pg_stat_activity \
         WHERE application_name = 'perflab' AND state = 'active' AND pid <> pg_backend_pid()",
    )
    .expect("pg_stat_activity")
}

/// Waits up to 3 s for `ok` to hold (the server takes a moment to end what was cancelled).
fn eventually<T: std::fmt::Debug>(probe: impl FnMut() -> T, ok: impl Fn(&T) -> bool) -> T {
    within(Duration::from_secs(3), probe, ok)
}

/// Probes every 100 ms until `ok` holds or `limit` has passed; returns the last probe.
fn within<T>(limit: Duration, mut probe: impl FnMut() -> T, ok: impl Fn(&T) -> bool) -> T {
    let until = Instant::now() + limit;
    loop {
        let v = probe();
        if ok(&v) || Instant::now() > until {
            return v;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Another session that takes the table every DebitCredit transaction updates, and keeps it
/// until its transaction ends.
fn pg_hold_accounts(url: &str) -> perflab::sql::postgres::PgConn {
    let mut holder = perflab::sql::postgres::connect(&target(url), &Stop::new()).expect("connects");
    holder.batch("BEGIN").unwrap();
    holder
        .batch("LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    holder
}

/// Ctrl-C: perflab exits 130 well within the op timeout, and its statements were cancelled
/// on the server, not left waiting for the lock.
fn ctrl_c_leaves_postgresql_clean(pg: &PgServer, child: &mut Child, reader: JoinHandle<String>) {
    let (code, took, err) = ctrl_c(child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < ENDS_WITHIN, "took {took:?}");
    let left = eventually(|| pg_perflab_active(pg), |rows| rows.is_empty());
    assert!(left.is_empty(), "still running on the server: {left:?}");
}

/// Prepares the bank on `url`, starts `oltp run` on it (two clients, a 60 s op timeout) and
/// returns once the step has run a moment.
fn step_under_way(r: &Results, url: &str) -> (Child, JoinHandle<String>) {
    let prepared = common::run(r, &["oltp", "prepare", "--target", url]);
    assert!(prepared.status.success(), "{}", common::stderr(&prepared));
    let mut args = vec![
        "oltp",
        "run",
        "--target",
        url,
        "--clients",
        "2",
        "--warmup",
        "0s",
    ];
    args.extend(["--duration", "120s", "--op-timeout", "60s"]);
    let (mut child, rx, reader) = common::spawn_watching(r, &args, "perflab oltp: run");
    wait_for(&rx, &mut child, "the run's start");
    std::thread::sleep(Duration::from_millis(1500));
    (child, reader)
}

/// Starts `oltp` in one go on `url` (its load first drops the tables an earlier prepare
/// left, which waits for a lock the caller holds) and returns once `waits` sees perflab's
/// statement waiting on the server. Nothing is printed before that drop: the server says.
fn load_waiting(
    r: &Results,
    url: &str,
    mut waits: impl FnMut() -> bool,
) -> (Child, JoinHandle<String>) {
    let args = [
        "oltp",
        "--target",
        url,
        "--clients",
        "1",
        "--duration",
        "5s",
        "--op-timeout",
        "60s",
    ];
    let (child, _rx, reader) = common::spawn_watching(r, &args, "perflab oltp: run");
    let blocked = within(Duration::from_secs(60), &mut waits, |b| *b);
    assert!(blocked, "the load should wait on the lock");
    (child, reader)
}

#[test]
fn ctrl_c_ends_a_step_whose_statements_wait_on_a_postgresql_lock() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let url = pg.url();
    let r = Results::new("stop-pg-step");
    let (mut child, reader) = step_under_way(&r, &url);
    // Another session takes the table every transaction updates, and keeps it.
    let mut holder = pg_hold_accounts(&url);
    std::thread::sleep(Duration::from_millis(1000));
    let waiting = pg_perflab_active(&pg);
    assert!(
        waiting.iter().any(|row| row[2] == "Lock"),
        "perflab's statements should be waiting on the lock: {waiting:?}"
    );
    ctrl_c_leaves_postgresql_clean(&pg, &mut child, reader);
    holder.batch("ROLLBACK").unwrap();
    let v = last_run(&r);
    assert_eq!(v["status"], "incomplete", "{v}");
    assert_eq!(v["cut_short"]["phase"], "measure", "{v}");
    let cleaned = common::run(&r, &["oltp", "cleanup", "--target", &url]);
    assert!(cleaned.status.success(), "{}", common::stderr(&cleaned));
}

#[test]
fn ctrl_c_during_a_load_that_waits_on_a_postgresql_lock_saves_the_run_incomplete() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let url = pg.url();
    let r = Results::new("stop-pg-load");
    let prepared = common::run(&r, &["oltp", "prepare", "--target", &url]);
    assert!(prepared.status.success(), "{}", common::stderr(&prepared));
    // A run in one go drops perflab's earlier tables first: that waits for this lock.
    let mut holder = pg_hold_accounts(&url);
    let (mut child, reader) = load_waiting(&r, &url, || {
        pg_perflab_active(&pg).iter().any(|row| row[2] == "Lock")
    });
    ctrl_c_leaves_postgresql_clean(&pg, &mut child, reader);
    holder.batch("ROLLBACK").unwrap();
    let v = last_run(&r);
    assert_eq!(v["status"], "incomplete", "{v}");
    assert_eq!(v["cut_short"]["phase"], "prepare", "{v}");
    assert_eq!(v["cut_short"]["reason"], "interrupted (Ctrl-C)", "{v}");
}

#[test]
fn ctrl_c_during_a_cleanup_that_waits_on_a_postgresql_lock_exits_130() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let url = pg.url();
    let r = Results::new("stop-pg-cleanup");
    let prepared = common::run(&r, &["oltp", "prepare", "--target", &url]);
    assert!(prepared.status.success(), "{}", common::stderr(&prepared));
    // Dropping the tables waits for this lock.
    let mut holder = pg_hold_accounts(&url);
    let (mut child, _rx, reader) =
        common::spawn_watching(&r, &["oltp", "cleanup", "--target", &url], "cleanup:");
    let blocked = within(
        Duration::from_secs(60),
        || pg_perflab_active(&pg),
        |rows| rows.iter().any(|row| row[2] == "Lock"),
    );
    assert!(
        blocked.iter().any(|row| row[2] == "Lock"),
        "the cleanup should wait on the lock: {blocked:?}"
    );
    let (code, took, err) = ctrl_c(&mut child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < ENDS_WITHIN, "took {took:?}");
    assert!(err.contains("interrupted"), "{err}");
    let left = eventually(|| pg_perflab_active(&pg), |rows| rows.is_empty());
    assert!(left.is_empty(), "still running on the server: {left:?}");
    holder.batch("ROLLBACK").unwrap();
    // Nothing was dropped halfway: the cleanup runs to its end once the lock is gone.
    let cleaned = common::run(&r, &["oltp", "cleanup", "--target", &url]);
    assert!(cleaned.status.success(), "{}", common::stderr(&cleaned));
    assert!(
        common::stderr(&cleaned).contains("dropped perflab's tables"),
        "{}",
        common::stderr(&cleaned)
    );
}

/// Statements of other sessions on MariaDB that wait (perflab's, since the holder is idle).
fn mysql_waiting(db: &MariaDbServer) -> Vec<Vec<String>> {
    let mut c = perflab::sql::mysql::connect(&target(&db.url()), &Stop::new()).expect("connects");
    c.query_texts(
        "SELECT id, command, coalesce(state, ''), coalesce(info, '') FROM information_schema.processlist \
         WHERE command IN ('Query', 'Execute') AND id <> connection_id()",
    )
    .expect("processlist")
}

#[test]
fn ctrl_c_ends_a_step_whose_statements_wait_on_a_mariadb_lock() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let url = db.url();
    let r = Results::new("stop-my-step");
    let (mut child, reader) = step_under_way(&r, &url);
    let mut holder = perflab::sql::mysql::connect(&target(&url), &Stop::new()).expect("connects");
    holder.batch("LOCK TABLES pgbench_accounts WRITE").unwrap();
    let waiting = eventually(|| mysql_waiting(&db), |rows| !rows.is_empty());
    assert!(
        !waiting.is_empty(),
        "perflab's statements should wait on the lock"
    );
    let (code, took, err) = ctrl_c(&mut child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < ENDS_WITHIN, "took {took:?}");
    let left = eventually(|| mysql_waiting(&db), |rows| rows.is_empty());
    assert!(left.is_empty(), "still running on the server: {left:?}");
    holder.batch("UNLOCK TABLES").unwrap();
    assert_eq!(last_run(&r)["status"], "incomplete");
}

#[test]
fn ctrl_c_during_a_load_that_waits_on_a_mariadb_lock_saves_the_run_incomplete() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let url = db.url();
    let r = Results::new("stop-my-load");
    let prepared = common::run(&r, &["oltp", "prepare", "--target", &url]);
    assert!(prepared.status.success(), "{}", common::stderr(&prepared));
    // A run in one go drops perflab's earlier tables first: that waits for this lock.
    let mut holder = perflab::sql::mysql::connect(&target(&url), &Stop::new()).expect("connects");
    holder.batch("LOCK TABLES pgbench_accounts WRITE").unwrap();
    // Waiting on the lock, not any statement of perflab's (connecting runs some): MariaDB's
    // state says "Waiting for table metadata lock".
    let (mut child, reader) = load_waiting(&r, &url, || {
        mysql_waiting(&db).iter().any(|row| row[2].contains("lock"))
    });
    let (code, took, err) = ctrl_c(&mut child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < ENDS_WITHIN, "took {took:?}");
    let left = eventually(|| mysql_waiting(&db), |rows| rows.is_empty());
    assert!(left.is_empty(), "still running on the server: {left:?}");
    holder.batch("UNLOCK TABLES").unwrap();
    let v = last_run(&r);
    assert_eq!(v["status"], "incomplete", "{v}");
    assert_eq!(v["cut_short"]["phase"], "prepare", "{v}");
}

#[test]
fn ctrl_c_ends_a_step_whose_transactions_wait_on_an_sqlite_lock() {
    let r = Results::new("stop-sqlite-step");
    std::fs::create_dir_all(r.path()).unwrap();
    let file = r.path().join("bank.db");
    let url = format!("sqlite://{}", file.display());
    let prepared = common::run(&r, &["oltp", "prepare", "--target", &url]);
    assert!(prepared.status.success(), "{}", common::stderr(&prepared));
    let args = [
        "oltp",
        "run",
        "--target",
        &url,
        "--clients",
        "2",
        "--warmup",
        "0s",
        "--duration",
        "120s",
    ];
    let (mut child, rx, reader) = common::spawn_watching(&r, &args, "perflab oltp: run");
    wait_for(&rx, &mut child, "the run's start");
    std::thread::sleep(Duration::from_millis(1500));
    // Another connection takes the database's write lock and keeps it: every writer waits in
    // the busy handler (up to 10 s a try, then retries).
    let holder = rusqlite::Connection::open(&file).expect("opens");
    holder.busy_timeout(Duration::from_secs(30)).unwrap();
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("takes the lock");
    std::thread::sleep(Duration::from_millis(1000));
    let (code, took, err) = ctrl_c(&mut child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        took < Duration::from_secs(8),
        "took {took:?}: longer than a busy wait can be cut"
    );
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(last_run(&r)["status"], "incomplete");
}

#[test]
fn ctrl_c_kills_a_running_job_with_its_process_group() {
    let r = Results::new("stop-jobs");
    // A job that starts a child of its own: both must go. The sleep's length marks them, with
    // this test process's whole id in it: other test runs on the machine (another worktree's
    // `cargo test`) run this test at the same time, and their jobs are not ours to count.
    let marker = format!("sleep 3000.{}", std::process::id());
    let script = format!("{marker} & {marker}; wait");
    let args = ["jobs", "--command", &script, "--shell", "--copies", "1"];
    let (mut child, rx, reader) = common::spawn_watching(&r, &args, "perflab jobs: run");
    wait_for(&rx, &mut child, "the run's start");
    let running = eventually(
        || {
            Command::new("pgrep")
                .args(["-f", &marker])
                .output()
                .unwrap()
                .stdout
        },
        |o| !o.is_empty(),
    );
    assert!(!running.is_empty(), "the job should be running");
    let (code, took, err) = ctrl_c(&mut child, reader);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < ENDS_WITHIN, "took {took:?}");
    // Killed with SIGKILL, so gone as soon as the kernel gets to them: seconds of room for a
    // loaded machine, polled so that a quick exit costs nothing.
    let left = within(
        Duration::from_secs(10),
        || {
            Command::new("pgrep")
                .args(["-f", &marker])
                .output()
                .unwrap()
                .stdout
        },
        |o| o.is_empty(),
    );
    assert!(
        left.is_empty(),
        "the job outlived the run: {}",
        String::from_utf8_lossy(&left)
    );
}
