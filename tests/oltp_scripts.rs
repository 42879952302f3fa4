//! pgbench's scripts (`perflab oltp -f FILE -b NAME@W -D ...`) on throwaway servers: what the
//! database holds afterwards against the transactions the record counts, each script a group
//! of its own, the same script on PostgreSQL, MariaDB and SQLite, and hostile scripts.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::{Results, json, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

/// A script file in the test's own folder.
fn script(r: &Results, name: &str, text: &str) -> PathBuf {
    let dir = r.path().join("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The text of the `-l` logs named `PREFIX.PID` in the test's folder.
fn log_text(r: &Results, prefix: &str) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(r.path()).unwrap().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!("{prefix}."))
        {
            text.push_str(&std::fs::read_to_string(e.path()).unwrap());
        }
    }
    text
}

/// psql's answer to one query on the throwaway server's database.
fn psql(pg: &PgServer, sql: &str) -> String {
    let Some(bin) = common::skip::program("psql", "postgresql-client") else {
        panic!("psql is needed to check what the database holds");
    };
    let o = Command::new(bin)
        .args(["-X", "-h", "127.0.0.1", "-p", &pg.port().to_string()])
        .args(["-U", "postgres", "-d", "postgres", "-Atc", sql])
        .output()
        .expect("psql runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn num(text: &str) -> i64 {
    text.parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a number"))
}

/// Every meta-command a transfer script needs: `\set` with an expression, `-D`, `\gset`,
/// `\if`/`\elif`/`\else`, `\sleep` with a unit, `\setshell` and `\shell`.
const TRANSFER: &str = "\\set aid random(1, 100000 * :scale)
\\set delta random(1, :top)
\\setshell two echo 2
\\shell true
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance AS bal, aid AS id FROM pgbench_accounts WHERE aid = :aid \\gset r_
\\if :r_bal = 0
-- never: every delta is at least 1
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, 0, CURRENT_TIMESTAMP);
\\elif :two = 2
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:two, 1, :r_id, :delta, CURRENT_TIMESTAMP);
\\else
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (3, 1, :aid, 0, CURRENT_TIMESTAMP);
\\endif
END;
\\sleep 100 us
";

/// Runs TRANSFER on a freshly prepared bank in each query mode and checks the books:
/// one history row per counted transaction, each by the `\elif` branch with the `\gset`
/// id, and the balances' sum equal to the deltas'.
#[test]
fn a_script_on_postgres_does_what_the_record_counts_in_every_query_mode() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-scripts");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = script(&r, "transfer.sql", TRANSFER);
    let file = file.to_str().unwrap();
    let mut counted = 0;
    for mode in ["simple", "extended", "prepared"] {
        let o = perflab(
            &r,
            &[
                "oltp", "--json", "--target", &url, "-c", "2", "-t", "30", "-M", mode, "-f", file,
                "-D", "top=100",
            ],
        );
        assert!(o.status.success(), "-M {mode}: {}", stderr(&o));
        let v = json(&o);
        let t = &v["steps"][0]["trials"][0];
        assert_eq!(t["errors"], 0, "-M {mode}: {}", t["error_samples"]);
        assert_eq!(t["ops"], 60, "-M {mode}: two clients, 30 transactions each");
        assert_eq!(t["groups"][0]["key"], file, "{}", t["groups"]);
        counted += 60;
    }
    assert_eq!(
        num(&psql(&pg, "SELECT count(*) FROM pgbench_history")),
        counted
    );
    assert_eq!(
        psql(
            &pg,
            "SELECT count(*) FROM pgbench_history WHERE tid <> 2 OR delta NOT BETWEEN 1 AND 100"
        ),
        "0",
        "every row by the \\elif branch, with -D's bound"
    );
    assert_eq!(
        psql(&pg, "SELECT sum(abalance) FROM pgbench_accounts"),
        psql(&pg, "SELECT sum(delta) FROM pgbench_history")
    );
}

/// `-b tpcb@1 -b se@3`: two scripts by prefix and weight, each a group with its own
/// figures; the writes are the tpcb-like group's, one history row each.
#[test]
fn weighted_builtins_are_groups_of_their_own() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-builtins");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = perflab(
        &r,
        &[
            "oltp", "--json", "--target", &url, "-c", "2", "-t", "100", "-b", "tpcb@1", "-b",
            "se@3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["ops"], 200);
    let group = |key: &str| {
        t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == key)
            .map(|g| g["ops"].as_i64().unwrap())
            .unwrap_or(0)
    };
    let (tpcb, select) = (
        group("<builtin: TPC-B (sort of)>"),
        group("<builtin: select only>"),
    );
    assert_eq!(tpcb + select, 200, "{}", t["groups"]);
    assert!(select > tpcb, "weights 3:1 gave {select}:{tpcb}");
    assert_eq!(
        num(&psql(&pg, "SELECT count(*) FROM pgbench_history")),
        tpcb
    );
    assert_eq!(
        psql(&pg, "SELECT sum(bbalance) FROM pgbench_branches"),
        psql(&pg, "SELECT sum(delta) FROM pgbench_history")
    );
    // `-b list` lists and runs nothing.
    let o = perflab(&r, &["oltp", "-b", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("simple-update: <builtin: simple update>"));
}

/// A portable script (no `END`, which MySQL lacks) on MariaDB and SQLite: the same rows.
#[test]
fn the_same_script_runs_on_mariadb_and_sqlite() {
    let r = Results::new("scripts-engines");
    let text = "\\set aid random(1, 100000 * :scale)
\\set delta random(1, 10)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \\gset
\\if :bal > 0
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
\\endif
COMMIT;
";
    let file = script(&r, "portable.sql", text);
    let file = file.to_str().unwrap();
    let db = r.path().join("bank.db");
    let sqlite = format!("sqlite://{}", db.display());
    let maria = MariaDbServer::start();
    let mut targets = vec![sqlite.clone()];
    if let Some(m) = &maria {
        targets.push(m.url());
    }
    for url in &targets {
        let o = perflab(&r, &["oltp", "prepare", "--target", url]);
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        let o = perflab(
            &r,
            &[
                "oltp",
                "run",
                "--json",
                "--target",
                url,
                "--clients",
                "2",
                "--ops",
                "80",
                "--warmup",
                "0s",
                "--script",
                file,
            ],
        );
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        let v = json(&o);
        let t = &v["steps"][0]["trials"][0];
        assert_eq!(t["ops"], 80, "{url}");
        assert_eq!(t["errors"], 0, "{url}: {}", t["error_samples"]);
    }
    let rows = rusqlite_count(&db, "SELECT count(*) FROM pgbench_history");
    assert_eq!(rows, 80);
    assert_eq!(
        rusqlite_count(&db, "SELECT sum(abalance) FROM pgbench_accounts"),
        rusqlite_count(&db, "SELECT sum(delta) FROM pgbench_history")
    );
}

fn rusqlite_count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Scripts pgbench refuses are refused in one line naming the file and line (exit 2);
/// errors while running are counted, named by script, line and engine.
#[test]
fn hostile_scripts_give_one_line_or_a_counted_error() {
    let r = Results::new("scripts-hostile");
    let db = r.path().join("h.db");
    let sqlite = format!("sqlite://{}", db.display());
    for (name, text, words) in [
        (
            "if.sql",
            "\\if 1\nSELECT 1;\n",
            "if.sql:1: \\if without matching \\endif",
        ),
        (
            "unit.sql",
            "\\sleep 1 min\n",
            "unit.sql:1: \\sleep: unrecognized time unit",
        ),
        (
            "cmd.sql",
            "SELECT 1;\n\\frob\n",
            "cmd.sql:2: \\frob: invalid command",
        ),
    ] {
        let f = script(&r, name, text);
        let o = perflab(
            &r,
            &["oltp", "--target", &sqlite, "--script", f.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(words), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    }
    let huge = format!("\\set x {}\nSELECT 1;\n", "1 + ".repeat(2_500_000));
    let f = script(&r, "huge.sql", &huge);
    let o = perflab(
        &r,
        &["oltp", "--target", &sqlite, "--script", f.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // At run time: division by zero and an undefined variable are counted errors, named.
    let f = script(&r, "zero.sql", "\\set x 1 / 0\nSELECT :x;\n");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &sqlite,
            "--clients",
            "1",
            "--ops",
            "3",
            "--warmup",
            "0s",
            "--script",
            f.to_str().unwrap(),
        ],
    );
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 3, "{}", stderr(&o));
    let sample = t["error_samples"].to_string();
    assert!(sample.contains("zero.sql line 1"), "{sample}");
}

/// A pipeline in both protocols that have one, `-r`'s command groups and `-C`'s
/// connections: every transaction's rows are there.
#[test]
fn pipelines_per_command_times_and_a_connection_each() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-pipelines");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = script(
        &r,
        "pipe.sql",
        "\\set aid random(1, 100000 * :scale)
\\set delta random(1, 10)
\\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
\\endpipeline
",
    );
    let file = file.to_str().unwrap();
    for mode in ["extended", "prepared"] {
        let o = perflab(
            &r,
            &[
                "oltp", "--json", "--target", &url, "-c", "2", "-t", "20", "-M", mode, "-r", "-C",
                "-f", file,
            ],
        );
        assert!(o.status.success(), "-M {mode}: {}", stderr(&o));
        let v = json(&o);
        let t = &v["steps"][0]["trials"][0];
        assert_eq!(t["errors"], 0, "-M {mode}: {}", t["error_samples"]);
        let statements: Vec<&serde_json::Value> = t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["by"] == "statement")
            .collect();
        assert_eq!(statements.len(), 8, "-r: one group per command");
        assert!(statements.iter().all(|g| g["ops"] == 40), "{statements:?}");
        assert!(t["figures"]["connect_ms_mean"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(psql(&pg, "SELECT count(*) FROM pgbench_history"), "80");
    // The simple protocol has no pipeline: refused before the run, naming the script.
    let o = perflab(
        &r,
        &["oltp", "--target", &url, "-c", "1", "-t", "1", "-f", file],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("pipe.sql: \\startpipeline: cannot use pipeline mode"),
        "{}",
        stderr(&o)
    );
}

/// pgbench's rule in its dialect: a client stops at an error it does not retry, and the run
/// fails ("Run was aborted"); perflab's own line counts the error and the client goes on.
#[test]
fn a_client_aborts_at_an_sql_error_in_pgbenchs_dialect_and_goes_on_in_perflabs() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-abort");
    let url = pg.url();
    let f = script(
        &r,
        "half.sql",
        "\\set r random(1, 10)\n\\if :r > 5\nSELECT 1/0;\n\\else\nSELECT 1;\n\\endif\n",
    );
    let f = f.to_str().unwrap();
    let o = perflab(
        &r,
        &[
            "oltp", "--json", "--target", &url, "-c", "3", "-t", "200", "-f", f,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("3 client(s) aborted"), "{err}");
    assert!(err.contains("division by zero"), "{err}");
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 3, "each client stops at its first error");
    assert!(t["ops"].as_u64().unwrap() < 597, "{}", t["ops"]);
    assert_eq!(t["figures"]["aborted_per_client"], 1.0);
    // perflab's own flags: the failures are counted and every transaction is tried.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "--clients",
            "3",
            "--ops",
            "90",
            "--warmup",
            "0s",
            "--script",
            f,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    let (ops, errors) = (t["ops"].as_u64().unwrap(), t["errors"].as_u64().unwrap());
    assert_eq!(ops + errors, 90);
    assert!(errors > 0, "{errors}");
}

/// pgbench's `-l`, per transaction and with `--aggregate-interval`: the log holds what the
/// record counts, in pgbench 15's shapes.
#[test]
fn the_transaction_log_per_transaction_and_aggregated() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-txlog");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let prefix = r.path().join("each");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "-c",
            "2",
            "-t",
            "25",
            "-S",
            "-l",
            "--log-prefix",
            prefix.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = log_text(&r, "each");
    assert_eq!(text.lines().count(), 50, "{text}");
    assert!(text.lines().all(|l| l.split(' ').count() == 6), "{text}");
    let prefix = r.path().join("agg");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "-c",
            "2",
            "-T",
            "3",
            "-S",
            "-l",
            "--aggregate-interval",
            "1",
            "--log-prefix",
            prefix.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let ops = v["steps"][0]["trials"][0]["ops"].as_u64().unwrap();
    let text = log_text(&r, "agg");
    let lines: Vec<Vec<u64>> = text
        .lines()
        .map(|l| l.split(' ').map(|f| f.parse().unwrap()).collect())
        .collect();
    assert!((3..=5).contains(&lines.len()), "{text}");
    assert!(lines.iter().all(|l| l.len() == 15), "{text}");
    assert_eq!(lines.iter().map(|l| l[1]).sum::<u64>(), ops, "{text}");
    for w in lines.windows(2) {
        assert_eq!(w[1][0], w[0][0] + 1, "consecutive seconds: {text}");
    }
    // pgbench's own refusals.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--target",
            &url,
            "-c",
            "1",
            "-T",
            "1",
            "--aggregate-interval",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--log-transactions"), "{}", stderr(&o));
}

/// pgbench's `-L` with `-R`: transactions already later than the limit are skipped, counted
/// apart, and logged as `skipped`.
#[test]
fn late_transactions_are_skipped_under_a_rate_as_pgbench_skips_them() {
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("pg-skip");
    let url = pg.url();
    let o = perflab(&r, &["oltp", "prepare", "--target", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let prefix = r.path().join("skip");
    // One client cannot keep 100,000 transactions a second: most fall more than 0.1 ms
    // behind and are skipped.
    let o = perflab(
        &r,
        &[
            "oltp",
            "--json",
            "--target",
            &url,
            "-c",
            "1",
            "-T",
            "2",
            "-S",
            "-R",
            "100000",
            "-L",
            "0.1",
            "-l",
            "--log-prefix",
            prefix.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    let skipped = t["schedule"]["skipped_ops"].as_u64().unwrap_or(0);
    let ops = t["ops"].as_u64().unwrap();
    assert!(skipped > ops, "{skipped} skipped, {ops} run");
    let lines = log_text(&r, "skip")
        .lines()
        .filter(|l| l.split(' ').nth(2) == Some("skipped"))
        .count();
    assert_eq!(lines as u64, skipped);
    let o = perflab(&r, &["show", "last"]);
    assert!(stdout(&o).contains("skipped"), "{}", stdout(&o));
}

/// A `\shell` that hangs is ended with its process group at Ctrl-C: the run stops within
/// seconds, saved as interrupted, and nothing it started is left running.
#[test]
fn ctrl_c_during_a_hanging_shell_ends_the_run_and_its_command() {
    let r = Results::new("scripts-shell-ctrl-c");
    let db = r.path().join("s.db");
    let sqlite = format!("sqlite://{}", db.display());
    let marker = format!("perflab-hang-{}", std::process::id());
    let f = script(
        &r,
        "hang.sql",
        &format!("\\shell sleep 1000; : {marker}\nSELECT 1;\n"),
    );
    let args = [
        "oltp",
        "--target",
        &sqlite,
        "--clients",
        "1",
        "--warmup",
        "0s",
        "--duration",
        "60s",
        "--script",
        f.to_str().unwrap(),
    ];
    let (mut child, rx, reader) = common::spawn_watching(&r, &args, "perflab oltp: run");
    if rx.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
        let _ = child.kill();
        panic!(
            "the run never started:\n{}",
            reader.join().unwrap_or_default()
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let running = |m: &str| {
        Command::new("pgrep")
            .args(["-f", m])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(running(&marker), "the script's \\shell runs");
    let Some((code, _)) =
        common::interrupt_and_wait(&mut child, std::time::Duration::from_secs(15))
    else {
        panic!(
            "perflab did not end within 15 s of Ctrl-C:\n{}",
            reader.join().unwrap_or_default()
        );
    };
    let err = reader.join().unwrap_or_default();
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!running(&marker), "the \\shell command was left running");
}
