//! `perflab oltp` on SQLite through the real binary: the embedded default, sysbench-style
//! steps, the consistency check, refusals. (PostgreSQL and MariaDB come with their servers.)

mod common;

use common::{Results, json, stderr};
use std::path::{Path, PathBuf};
use std::process::Output;

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

const SHORT: [&str; 4] = ["--warmup", "0s", "--duration", "300ms"];

/// A scratch directory, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let d =
            std::env::temp_dir().join(format!("perflab-oltptest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn db(&self) -> PathBuf {
        self.0.join("bank.db")
    }
    fn url(&self) -> String {
        format!("sqlite://{}", self.db().display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sum(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .unwrap_or(0)
}

#[test]
fn debitcredit_runs_on_a_temporary_sqlite_database_and_balances() {
    let r = Results::new("oltp-default");
    let mut args = vec!["oltp", "--json", "--clients", "1,2"];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["workload"], "oltp");
    assert_eq!(v["spec"]["sqlite"]["journal_mode"], "wal");
    assert_eq!(v["spec"]["sqlite"]["synchronous"], "full");
    assert!(!v["target"].as_str().unwrap().is_empty());
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        let t = &s["trials"][0];
        assert!(t["ops"].as_u64().unwrap() > 0);
        assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
        // Statements beside transactions: BEGIN, three UPDATEs, a SELECT, an INSERT and
        // COMMIT, as pgbench's tpcb-like sends them.
        let per_txn = t["figures"]["statements_per_txn"].as_f64().unwrap();
        assert!((6.5..=7.5).contains(&per_txn), "{}", t["figures"]);
        assert!(t["figures"]["statements_per_sec"].as_f64().unwrap() > 0.0);
        assert!(
            t["figures"].get("statements").is_none(),
            "the raw count is not kept"
        );
        // The checks that passed are on the record, with what they counted.
        let checks = s["checks"].as_array().unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["books_balance", "history_growth"],
            "{}",
            s["checks"]
        );
        assert!(
            checks.iter().all(|c| c["passed"] == true),
            "{}",
            s["checks"]
        );
        let growth = &checks[1]["figures"];
        // Warmup commits count too; at least the measured ones are there.
        assert!(growth["committed"].as_i64().unwrap() >= t["ops"].as_i64().unwrap());
        assert_eq!(
            growth["rows_after"].as_i64().unwrap() - growth["rows_before"].as_i64().unwrap(),
            growth["committed"].as_i64().unwrap()
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
    // The temporary database and its directory are gone.
    let db = v["target"]
        .as_str()
        .unwrap()
        .trim_start_matches("sqlite://")
        .to_string();
    let dir = Path::new(&db).parent().unwrap();
    assert!(dir.starts_with(std::env::temp_dir()), "{db}");
    assert!(!dir.exists(), "{} was left behind", dir.display());
}

#[test]
fn prepare_run_and_cleanup_are_separate_steps() {
    let r = Results::new("oltp-steps");
    let d = Scratch::new("steps");
    let url = d.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url, "--scale", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sum(&d.db(), "SELECT count(*) FROM pgbench_accounts"),
        100_000
    );
    assert_eq!(sum(&d.db(), "SELECT count(*) FROM pgbench_tellers"), 10);

    let mut args = vec!["oltp", "run", "--json", "--target", &url, "--clients", "2"];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let ops = json(&o)["steps"][0]["trials"][0]["ops"].as_u64().unwrap();
    assert!(ops > 0);
    // Every committed transaction left one history row (warmup ones too: none here).
    assert!(sum(&d.db(), "SELECT count(*) FROM pgbench_history") as u64 >= ops);
    assert_eq!(
        sum(&d.db(), "SELECT sum(abalance) FROM pgbench_accounts"),
        sum(&d.db(), "SELECT sum(delta) FROM pgbench_history")
    );

    // The select-only variant runs against the same bank.
    let mut args = vec!["oltp", "run", "--json", "--target", &url, "--select-only"];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = perflab(&r, &["oltp", "cleanup", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sum(
            &d.db(),
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'pgbench_%'"
        ),
        0
    );
    let o = perflab(&r, &["oltp", "run", "--target", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("oltp prepare"), "{}", stderr(&o));

    // A prepare that did not finish (as a crash mid-load leaves it) is not run against.
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    rusqlite::Connection::open(d.db())
        .unwrap()
        .execute("DELETE FROM perflab_meta WHERE name = 'complete'", [])
        .unwrap();
    let o = perflab(&r, &["oltp", "run", "--target", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not finish"), "{}", stderr(&o));
}

#[test]
fn a_history_that_grows_by_more_than_the_commits_fails_though_the_books_balance() {
    let r = Results::new("oltp-doubled");
    let d = Scratch::new("doubled");
    let url = d.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A commit applied twice, as far as the history shows it: one more row per transaction,
    // with delta 0, so every sum still agrees and only the count can tell.
    rusqlite::Connection::open(d.db())
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER twice AFTER INSERT ON pgbench_history WHEN NEW.delta <> 0
             BEGIN INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
                   VALUES (NEW.tid, NEW.bid, NEW.aid, 0, NEW.mtime); END;",
        )
        .unwrap();
    let mut args = vec!["oltp", "run", "--json", "--target", &url];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let checks = v["steps"][0]["checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], "books_balance");
    assert_eq!(checks[0]["passed"], true, "{}", checks[0]);
    assert_eq!(checks[1]["name"], "history_growth");
    assert_eq!(checks[1]["passed"], false, "{}", checks[1]);
    assert!(
        checks[1]["summary"]
            .as_str()
            .unwrap()
            .contains("rows more than committed"),
        "{}",
        checks[1]
    );
    let _ = perflab(&r, &["oltp", "cleanup", "--target", &url]);
}

#[test]
fn books_that_do_not_balance_fail_the_run_loudly() {
    let r = Results::new("oltp-books");
    let d = Scratch::new("books");
    let url = d.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A lost update, as a broken database would leave it.
    rusqlite::Connection::open(d.db())
        .unwrap()
        .execute("UPDATE pgbench_branches SET bbalance = bbalance + 1", [])
        .unwrap();
    let mut args = vec!["oltp", "run", "--json", "--target", &url];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("consistency check failed"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "inconsistent"
                && w["message"].as_str().unwrap().contains("INCONSISTENT")),
        "{}",
        v["warnings"]
    );
}

/// A load that fails (another connection holds the database's write lock, past the busy
/// handler's 10 s) fails the run before any step: "prepare failed", not "step 1 failed",
/// with the run saved as failed and cut short in its prepare.
#[test]
fn a_load_that_fails_says_prepare_failed() {
    let r = Results::new("oltp-prepare-fails");
    let d = Scratch::new("prepare-fails");
    // WAL, so perflab can still read the file (its checks before the run), but not write.
    let holder = rusqlite::Connection::open(d.db()).unwrap();
    holder
        .execute_batch(
            "PRAGMA journal_mode = wal; CREATE TABLE unrelated (x INTEGER); \
             BEGIN IMMEDIATE; INSERT INTO unrelated VALUES (1);",
        )
        .unwrap();
    let url = d.url();
    let mut args = vec!["oltp", "--target", &url];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    holder.execute_batch("ROLLBACK").unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("perflab: prepare failed: loading failed: database is locked (run "),
        "{err}"
    );
    assert!(!err.contains("step 1 failed"), "{err}");
    let v = json(&perflab(&r, &["show", "last", "--json"]));
    assert_eq!(v["status"], "failed", "{v}");
    assert_eq!(v["cut_short"]["phase"], "prepare", "{v}");
}

#[test]
fn foreign_tables_and_bad_targets_are_refused() {
    let r = Results::new("oltp-refuse");
    let d = Scratch::new("refuse");
    // Somebody's own pgbench tables: perflab must not touch them.
    let c = rusqlite::Connection::open(d.db()).unwrap();
    c.execute_batch("CREATE TABLE pgbench_accounts (aid INTEGER PRIMARY KEY, abalance INTEGER); INSERT INTO pgbench_accounts VALUES (1, 42);")
        .unwrap();
    drop(c);
    let before = std::fs::read(d.db()).unwrap();
    let url = d.url();
    for action in ["prepare", "all"] {
        let o = perflab(&r, &["oltp", action, "--target", &url]);
        assert_eq!(o.status.code(), Some(2), "{action}: {}", stderr(&o));
        assert!(stderr(&o).contains("did not create"), "{}", stderr(&o));
    }
    // Cleanup finds nothing of perflab's there and leaves the file alone.
    let o = perflab(&r, &["oltp", "cleanup", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds no tables"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(d.db()).unwrap(),
        before,
        "the file was changed"
    );

    let cases: [(&[&str], &str); 6] = [
        (&["--target", "oracle://u:secret@host/db"], "unknown scheme"),
        (
            &["--target", "postgres://u:secret@127.0.0.1:1/db"],
            "cannot connect",
        ),
        (&["--target", "sqlite://"], "names no file"),
        (&["--scale", "0"], "scale"),
        (&["--sqlite-synchronous", "sometimes"], "full"),
        (&["--workload", "tpcx"], "orderentry"),
    ];
    for (args, hint) in cases {
        let mut all = vec!["oltp"];
        all.extend_from_slice(args);
        let o = perflab(&r, &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(hint), "{args:?}: {e}");
        assert!(!e.contains("secret"), "a password was printed: {e}");
    }
}

#[test]
fn order_entry_keeps_its_counts_and_reports_each_transaction_type() {
    let r = Results::new("oltp-oe");
    let d = Scratch::new("oe");
    let url = d.url();
    let oe = ["--workload", "orderentry"];
    let mut args = vec!["oltp", "prepare", "--target", &url, "--scale", "2"];
    args.extend_from_slice(&oe);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sum(&d.db(), "SELECT count(*) FROM oe_customer"), 2_000);
    assert_eq!(sum(&d.db(), "SELECT count(*) FROM oe_order"), 20_000);
    assert_eq!(sum(&d.db(), "SELECT count(*) FROM oe_order_line"), 100_000);
    assert_eq!(
        sum(&d.db(), "SELECT sum(o_total) FROM oe_order"),
        sum(&d.db(), "SELECT sum(ol_amount) FROM oe_order_line")
    );
    // A DebitCredit run finds no bank there.
    let o = perflab(&r, &["oltp", "run", "--target", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("prepare --workload debitcredit"),
        "{}",
        stderr(&o)
    );

    let mut args = vec!["oltp", "run", "--json", "--target", &url, "--clients", "2"];
    args.extend_from_slice(&oe);
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["mix"], "orderentry");
    assert_eq!(v["spec"]["scale"], 2);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 0, "{}", t["error_samples"]);
    let kinds: Vec<(&str, u64)> = t["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == "kind")
        .map(|g| (g["key"].as_str().unwrap(), g["ops"].as_u64().unwrap()))
        .collect();
    let ops: u64 = kinds.iter().map(|k| k.1).sum();
    assert_eq!(ops, t["ops"].as_u64().unwrap(), "{kinds:?}");
    let new_orders = kinds.iter().find(|k| k.0 == "new_order").map_or(0, |k| k.1);
    assert!(new_orders > 0 && new_orders < ops / 4, "{kinds:?}");
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["code"] != "inconsistent"),
        "{}",
        v["warnings"]
    );
    // The human report has a table by transaction type.
    let mut args = vec!["oltp", "run", "--target", &url];
    args.extend_from_slice(&oe);
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    assert!(
        out.contains("by transaction type") && out.contains("new_order"),
        "{out}"
    );

    // New orders that the database refuses are errors of their own type; lookups go on.
    let c = rusqlite::Connection::open(d.db()).unwrap();
    c.execute_batch("CREATE TRIGGER refuse BEFORE INSERT ON oe_order_line BEGIN SELECT RAISE(ABORT, 'no new lines'); END;")
        .unwrap();
    let mut args = vec!["oltp", "run", "--json", "--target", &url];
    args.extend_from_slice(&oe);
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    let v = json(&o);
    let groups = v["steps"][0]["trials"][0]["groups"]
        .as_array()
        .unwrap()
        .clone();
    let errors = |kind: &str| {
        groups
            .iter()
            .find(|g| g["by"] == "kind" && g["key"] == kind)
            .map_or(0, |g| g["errors"].as_u64().unwrap())
    };
    assert!(errors("new_order") > 0, "{groups:?}");
    assert_eq!(errors("lookup"), 0, "{groups:?}");
    c.execute_batch("DROP TRIGGER refuse").unwrap();
    drop(c);

    // An order that lost a line, as a broken database would leave it.
    rusqlite::Connection::open(d.db())
        .unwrap()
        .execute(
            "DELETE FROM oe_order_line WHERE ol_c_id = 1 AND ol_number = 1",
            [],
        )
        .unwrap();
    let mut args = vec!["oltp", "run", "--json", "--target", &url];
    args.extend_from_slice(&oe);
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert!(
        v["warnings"].as_array().unwrap().iter().any(
            |w| w["code"] == "inconsistent" && w["message"].as_str().unwrap().contains("lines")
        ),
        "{}",
        v["warnings"]
    );

    let mut args = vec!["oltp", "cleanup", "--target", &url];
    args.extend_from_slice(&oe);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sum(
            &d.db(),
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'oe_%' OR name LIKE 'perflab_%'"
        ),
        0
    );
}

/// `--shards 1,2` sweeps: both shards are prepared, and each step's users work on its first N
/// (zipped with the clients, as the sharding study added users with instances).
#[test]
fn a_sweep_of_shards_uses_the_first_n_at_each_step() {
    let r = Results::new("oltp-shard-sweep");
    let d = Scratch::new("shard-sweep");
    let url = d.url();
    let mut args = vec![
        "oltp",
        "--json",
        "--workload",
        "orderentry",
        "--target",
        &url,
        "--shards",
        "1,2",
        "--clients",
        "1,2",
        "--zip",
        "threads,shards",
    ];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (s, n) in steps.iter().zip([1u64, 2]) {
        assert_eq!(s["params"]["shards"], n, "{}", s["params"]);
        assert_eq!(s["params"]["threads"], n, "{}", s["params"]);
        let shards = s["trials"][0]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["by"] == "shard")
            .count();
        // One shard is not labelled as a shard; two are.
        assert_eq!(shards, if n == 1 { 0 } else { 2 }, "step {n}");
    }
    let o = perflab(&r, &["oltp", "--target", &url, "--shards", "0,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("from 1 to 256 shards"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn shards_each_get_a_database_and_their_own_figures() {
    let r = Results::new("oltp-shards");
    let d = Scratch::new("shards");
    let url = d.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url, "--shards", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 1..=3 {
        let db = d.0.join(format!("bank-{i}.db"));
        assert_eq!(sum(&db, "SELECT count(*) FROM pgbench_accounts"), 100_000);
    }
    assert!(!d.db().exists(), "the unsharded file was made");

    let mut args = vec![
        "oltp",
        "run",
        "--json",
        "--target",
        &url,
        "--shards",
        "3",
        "--clients",
        "3,6",
    ];
    args.extend_from_slice(&SHORT);
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["shards"].as_array().unwrap().len(), 3);
    for s in v["steps"].as_array().unwrap() {
        let t = &s["trials"][0];
        let shards: Vec<(&str, u64)> = t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["by"] == "shard")
            .map(|g| (g["key"].as_str().unwrap(), g["ops"].as_u64().unwrap()))
            .collect();
        assert_eq!(shards.len(), 3, "{shards:?}");
        assert!(shards.iter().all(|s| s.1 > 0), "{shards:?}");
        let ops: u64 = shards.iter().map(|s| s.1).sum();
        assert_eq!(ops, t["ops"].as_u64().unwrap());
    }
    // Every shard's books balance on their own, and each took transactions.
    for i in 1..=3 {
        let db = d.0.join(format!("bank-{i}.db"));
        assert!(sum(&db, "SELECT count(*) FROM pgbench_history") > 0);
        assert_eq!(
            sum(&db, "SELECT sum(abalance) FROM pgbench_accounts"),
            sum(&db, "SELECT sum(delta) FROM pgbench_history")
        );
    }
    let o = perflab(&r, &["oltp", "cleanup", "--target", &url, "--shards", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = d.0.join("bank-2.db");
    assert_eq!(
        sum(
            &db,
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'pgbench_%'"
        ),
        0
    );

    // Sharding mistakes get one line and exit 2.
    let cases: [(&[&str], &str); 3] = [
        (
            &["--target", "postgres://u@127.0.0.1:1", "--shards", "2"],
            "must name a database",
        ),
        (&["--target", &url, "--target", &url], "twice"),
        (&["--shards", "0"], "shards"),
    ];
    for (args, hint) in cases {
        let mut all = vec!["oltp"];
        all.extend_from_slice(args);
        let o = perflab(&r, &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(hint), "{args:?}: {e}");
    }
}
