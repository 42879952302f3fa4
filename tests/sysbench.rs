//! sysbench's OLTP tests on `perflab oltp`, with sysbench's own command lines: on throwaway
//! PostgreSQL and MariaDB servers, each test prepared, run and cleaned up, with what the
//! database holds afterwards checked against the counts the record gives; the queries per
//! event as sysbench counts them; a database the real `sysbench prepare` made, run by
//! perflab, and one perflab prepared, run by the real `sysbench`; and the lines perflab
//! refuses, each in one line.

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::skip::skip_or_fail;
use common::{Results, json, stderr};
use perflab::sql::query_mode::QueryMode;
use perflab::sql::sql::Conn;
use perflab::sql::sqlite::SqliteSettings;
use perflab::stop::Stop;
use std::process::{Command, Output};

/// `perflab oltp` with a sysbench line's words (a `{}` in the line is the server's options).
fn sb(r: &Results, line: &str) -> Output {
    let words: Vec<&str> = std::iter::once("oltp")
        .chain(line.split_whitespace())
        .collect();
    common::run(r, &words)
}

/// A server the tests run on: perflab's URL and sysbench's options for it.
struct Server {
    url: String,
    options: String,
}

impl Server {
    fn pg(pg: &PgServer) -> Server {
        Server {
            url: pg.url(),
            options: format!(
                "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port={} --pgsql-user=postgres --pgsql-db=postgres",
                pg.port()
            ),
        }
    }

    fn maria(db: &MariaDbServer) -> Server {
        Server {
            url: db.url(),
            options: format!(
                "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port={} --mysql-user=root --mysql-db=test",
                db.port()
            ),
        }
    }

    fn line(&self, line: &str) -> String {
        line.replace("{}", &self.options)
    }

    fn conn(&self) -> Box<dyn Conn> {
        let settings = SqliteSettings {
            journal_mode: "wal".into(),
            synchronous: "full".into(),
            page_size: None,
        };
        perflab::sql::target::database(
            &self.url,
            Vec::new(),
            std::time::Duration::from_secs(30),
            &settings,
            QueryMode::Prepared,
        )
        .expect("a target")
        .open(false, &Stop::new())
        .expect("connects")
    }

    /// Rows and the sum of k in `table`, read here, not by perflab's checks.
    fn held(&self, table: &str) -> (i64, i64) {
        let row = self
            .conn()
            .query_row(&format!("SELECT count(*), sum(k) FROM {table}"))
            .expect("the table is there")
            .unwrap_or_default();
        (row[0], row.get(1).copied().unwrap_or(0))
    }

    fn tables(&self, names: &[&str]) -> i64 {
        perflab::sql::sql::count_tables(&mut *self.conn(), names).expect("counts")
    }
}

/// Runs a line that must succeed, and returns its record.
fn ok(r: &Results, line: &str) -> serde_json::Value {
    let o = sb(r, line);
    assert!(o.status.success(), "{line}\n{}", stderr(&o));
    match line.split_whitespace().any(|w| w == "--json") {
        true => json(&o),
        false => serde_json::Value::Null,
    }
}

/// The first trial's figure.
fn figure(v: &serde_json::Value, name: &str) -> f64 {
    v["steps"][0]["trials"][0]["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} in {}", v["steps"][0]["trials"][0]["figures"]))
}

fn ops(v: &serde_json::Value) -> u64 {
    v["steps"][0]["trials"][0]["ops"].as_u64().unwrap()
}

/// Every check after every step passed.
fn checks_pass(v: &serde_json::Value) {
    for s in v["steps"].as_array().unwrap() {
        let checks = s["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "no checks: {s}");
        for c in checks {
            assert_eq!(c["passed"], true, "{c}");
        }
    }
}

/// Each test prepared, run for a count of events on one client, and cleaned up: the
/// queries of each event as sysbench counts them (its table in the research notes), and
/// what the database holds against the record.
fn every_test(s: &Server, r: &Results) {
    // (test, reads, writes, other) per event with the defaults, on one client.
    for (test, per_event) in [
        ("oltp_read_write", Some((14.0, 4.0, 2.0))),
        ("oltp_read_only", Some((14.0, 0.0, 2.0))),
        ("oltp_write_only", Some((0.0, 4.0, 2.0))),
        ("oltp_point_select", Some((1.0, 0.0, 0.0))),
        ("oltp_update_index", Some((0.0, 1.0, 0.0))),
        ("oltp_update_non_index", Some((0.0, 1.0, 0.0))),
        ("oltp_insert", Some((0.0, 1.0, 0.0))),
        ("oltp_delete", None),
        ("select_random_points", Some((1.0, 0.0, 0.0))),
        ("select_random_ranges", Some((1.0, 0.0, 0.0))),
        ("bulk_insert", None),
    ] {
        let size = "--table-size=2000";
        ok(r, &s.line(&format!("{test} {{}} {size} prepare")));
        let table = "sbtest1";
        let before = s.held(table);
        let loaded = match test {
            "bulk_insert" => 0,
            _ => 2000,
        };
        assert_eq!(before.0, loaded, "{test}: rows after prepare");
        let v = ok(
            r,
            &s.line(&format!(
                "{test} {{}} {size} --events=300 --time=0 --json run"
            )),
        );
        assert_eq!(ops(&v), 300, "{test}");
        assert_eq!(v["steps"][0]["trials"][0]["errors"], 0, "{test}");
        checks_pass(&v);
        let (reads, writes, other) = (
            figure(&v, "sb_reads"),
            figure(&v, "sb_writes"),
            figure(&v, "sb_other"),
        );
        if let Some((rr, ww, oo)) = per_event {
            assert_eq!(
                (reads, writes, other),
                (rr * 300.0, ww * 300.0, oo * 300.0),
                "{test}: read/write/other"
            );
            assert_eq!(figure(&v, "sb_reads_per_txn"), rr, "{test}");
        }
        if test == "oltp_read_write" {
            // Without transactions: no BEGIN and COMMIT; with the parameters written into
            // the text (no prepared statements): the same queries.
            for (extra, other) in [("--skip_trx=on", 0.0), ("--db-ps-mode=disable", 2.0)] {
                let v = ok(
                    r,
                    &s.line(&format!(
                        "{test} {{}} {size} {extra} --events=50 --time=0 --json run"
                    )),
                );
                checks_pass(&v);
                let counts = (
                    figure(&v, "sb_reads"),
                    figure(&v, "sb_writes"),
                    figure(&v, "sb_other"),
                );
                assert_eq!(counts, (700.0, 200.0, other * 50.0), "{test} {extra}");
            }
            let v = spec(&s.line(&format!("{test} {{}} --db-ps-mode=disable run")));
            assert_eq!(v["query_mode"], "simple", "{}", v["query_mode"]);
        }
        let after = s.held(table);
        match test {
            // Each insert is a row more; each delete that found its row one less.
            "oltp_insert" => assert_eq!(after.0, 2300, "{test}"),
            "oltp_delete" => {
                assert_eq!(writes + other, 300.0, "{test}");
                assert_eq!(after.0, 2000 - writes as i64, "{test}");
            }
            // Every event is a row; the last ones go with the client's last INSERT.
            "bulk_insert" => assert_eq!(after.0, 300, "{test}"),
            // Each index update adds one to k; a delete and insert keep the rows.
            "oltp_update_index" => assert_eq!(after, (2000, before.1 + 300), "{test}"),
            _ => assert_eq!(after.0, 2000, "{test}"),
        }
        if test == "oltp_read_only" || test.starts_with("select") || test == "oltp_point_select" {
            assert_eq!(after, before, "{test} only reads");
        }
        ok(r, &s.line(&format!("{test} {{}} cleanup")));
        assert_eq!(s.tables(&["sbtest1", "perflab_meta"]), 0, "{test}: cleanup");
    }
}

#[test]
fn every_test_on_postgres_holds_what_its_counts_say() {
    let Some(pg) = PgServer::start() else { return };
    every_test(&Server::pg(&pg), &Results::new("sb-pg"));
}

#[test]
fn every_test_on_mariadb_holds_what_its_counts_say() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    every_test(&Server::maria(&db), &Results::new("sb-my"));
}

/// Four clients on five rows: deadlocks and (PostgreSQL) unique violations, which sysbench
/// ignores and re-runs; no event fails, the ignored errors are counted, the rows add up.
/// `fast`: perflab's own option that makes the server find deadlocks at once
/// (PostgreSQL's `deadlock_timeout` is a second).
fn conflicts(s: &Server, r: &Results, fast: &str) {
    ok(r, &s.line("oltp_write_only {} --table-size=5 prepare"));
    let v = ok(
        r,
        &s.line(&format!(
            "oltp_write_only {{}} --table-size=5 --threads=4 --events=400 --time=0 --rand-type=uniform {fast} --json run"
        )),
    );
    assert_eq!(ops(&v), 400);
    assert_eq!(v["steps"][0]["trials"][0]["errors"], 0);
    checks_pass(&v);
    assert!(
        figure(&v, "sb_ignored_errors") > 0.0,
        "{}",
        v["steps"][0]["trials"][0]["figures"]
    );
    assert_eq!(s.held("sbtest1").0, 5);
    ok(r, &s.line("oltp_write_only {} cleanup"));
}

#[test]
fn conflicts_are_ignored_and_rerun_as_sysbench_does_on_postgres() {
    let Some(pg) = PgServer::start() else { return };
    conflicts(
        &Server::pg(&pg),
        &Results::new("sb-pg-conflicts"),
        "--set deadlock_timeout=10ms",
    );
}

#[test]
fn conflicts_are_ignored_and_rerun_as_sysbench_does_on_mariadb() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    conflicts(&Server::maria(&db), &Results::new("sb-my-conflicts"), "");
}

/// The real sysbench, or a skip (a failure where the servers are required).
fn sysbench() -> Option<String> {
    let found = Command::new("sysbench").arg("--version").output();
    match found {
        Ok(o) if o.status.success() => Some("sysbench".into()),
        _ => {
            skip_or_fail("sysbench is not installed", "sysbench");
            None
        }
    }
}

/// The real sysbench with a line's words; it must succeed. Returns its report.
fn real(line: &str) -> String {
    let o = Command::new("sysbench")
        .args(line.split_whitespace())
        .output()
        .expect("sysbench runs");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "sysbench {line}\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A number from sysbench's report: `transactions:    763    (253 per sec.)`.
fn reported(report: &str, label: &str) -> u64 {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{label} in\n{report}"))
}

/// sysbench's database run by perflab as it is, and perflab's run by sysbench.
fn with_the_real_sysbench(s: &Server, r: &Results) {
    // sysbench prepares; perflab runs on its tables, refuses to prepare over them or drop
    // them, and sysbench cleans up.
    real(&s.line("oltp_read_write {} --tables=2 --table-size=1000 prepare"));
    let o = sb(
        r,
        &s.line("oltp_read_write {} --tables=2 --table-size=1000 --events=200 --time=0 --json run"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("made by sysbench prepare"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(ops(&v), 200);
    checks_pass(&v);
    assert_eq!(figure(&v, "sb_reads_per_txn"), 14.0);
    assert_eq!(s.held("sbtest1").0 + s.held("sbtest2").0, 2000);
    for action in ["prepare", "cleanup"] {
        let o = sb(
            r,
            &s.line(&format!("oltp_read_write {{}} --tables=2 {action}")),
        );
        assert_eq!(o.status.code(), Some(2), "{action}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("perflab did not make"),
            "{}",
            stderr(&o)
        );
    }
    real(&s.line("oltp_read_write {} --tables=2 cleanup"));
    // perflab prepares; sysbench runs on its tables; perflab cleans up.
    ok(
        r,
        &s.line("oltp_read_write {} --tables=2 --table-size=1000 prepare"),
    );
    let report =
        real(&s.line("oltp_read_write {} --tables=2 --table-size=1000 --events=100 --time=0 run"));
    assert_eq!(reported(&report, "transactions:"), 100, "{report}");
    assert_eq!(reported(&report, "read:"), 1400, "{report}");
    assert_eq!(s.held("sbtest1").0 + s.held("sbtest2").0, 2000);
    ok(r, &s.line("oltp_read_write {} --tables=2 cleanup"));
    assert_eq!(s.tables(&["sbtest1", "sbtest2"]), 0);
}

#[test]
fn sysbench_and_perflab_run_on_each_others_tables_on_postgres() {
    let Some(pg) = PgServer::start() else { return };
    if sysbench().is_none() {
        return;
    }
    with_the_real_sysbench(&Server::pg(&pg), &Results::new("sb-pg-real"));
}

#[test]
fn sysbench_and_perflab_run_on_each_others_tables_on_mariadb() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    if sysbench().is_none() {
        return;
    }
    with_the_real_sysbench(&Server::maria(&db), &Results::new("sb-my-real"));
}

/// The record's `spec` a command line stands for.
fn spec(line: &str) -> serde_json::Value {
    let words: Vec<String> = ["perflab", "oltp"]
        .into_iter()
        .map(String::from)
        .chain(line.split_whitespace().map(String::from))
        .collect();
    let cli = perflab::cli::parse(words).unwrap_or_else(|e| panic!("{line}: {e}"));
    let spec = perflab::commands::workload_spec(&cli.what, &perflab::env::Environment::default())
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .expect("a run");
    serde_json::to_value(&spec).expect("serializes")
}

#[test]
fn a_sysbench_line_reads_as_perflabs_own_spelling() {
    let dir = tempdir("sb-lines");
    let db = format!("sqlite://{}/sb.db", dir.display());
    for (theirs, ours) in [
        (
            format!(
                "oltp_read_write --tables=4 --table_size=500 --threads=8 --time=30 --rate=100 --target {db} all"
            ),
            format!(
                "all --workload oltp_read_write --sysbench tables=4 --sysbench table_size=500 --clients 8 --duration 30s --rate 100/s --rate-scope total --warmup 0s --target {db}"
            ),
        ),
        (
            format!(
                "/usr/share/sysbench/oltp_point_select.lua --like sysbench --events=1000 --time=0 --warmup-time=2 --rand-type=pareto --rand-seed=7 --target {db} all"
            ),
            format!(
                "all --workload oltp_point_select --ops 1000 --warmup 2s --sysbench rand_type=pareto --seed 7 --clients 1 --target {db}"
            ),
        ),
        (
            format!(
                "oltp_read_only --skip_trx --range_selects=off --percentile=99 --histogram --report-interval=2 --target {db} all"
            ),
            format!(
                "all --workload oltp_read_only --sysbench skip_trx=on --sysbench range_selects=off --sysbench percentile=99 --sysbench histogram=on --interval 2s --clients 1 --duration 10s --warmup 0s --target {db}"
            ),
        ),
    ] {
        assert_eq!(
            spec(&theirs),
            spec(&ours),
            "\n{theirs}\nreads differently from\n{ours}"
        );
    }
    let v = spec(&format!("oltp_read_write --tables=2 --target {db} all"));
    assert_eq!(v["sysbench"]["test"], "oltp_read_write");
    assert_eq!(v["sysbench"]["tables"], 2);
    assert_eq!(v["sysbench"]["table_size"], 10000);
    assert_eq!(v["sysbench"]["rand"]["type"], "special");
    assert_eq!(v["threads"], 1, "{}", v["threads"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("perflab-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn lines_perflab_cannot_honour_are_one_line_and_exit_2() {
    let r = Results::new("sb-refusals");
    for (line, says) in [
        (
            "oltp_read_write --tables=2 --report-checkpoints=5 run",
            "--report-checkpoints",
        ),
        (
            "oltp_read_write --tables=2 --forced-shutdown=1 run",
            "--forced-shutdown",
        ),
        (
            "oltp_read_write --tables=2 --mysql-host=a,b run",
            "a list of servers",
        ),
        (
            "oltp_read_write --tables=2 --config-file=x.cfg run",
            "--config-file",
        ),
        (
            "oltp_read_write --tables=2 --db-driver=attachsql run",
            "mysql or pgsql",
        ),
        (
            "oltp_read_write --tables=2 --events=10 --time=5 run",
            "whichever comes first",
        ),
        ("oltp_read_write --tables=2 --time=0 run", "without end"),
        (
            "oltp_read_write --tables=0 --target sqlite:///tmp/x.db run",
            "at least 1",
        ),
        (
            "select_random_points --tables=2 --target sqlite:///tmp/x.db all",
            "sbtest1 alone",
        ),
        (
            "oltp_read_write --tables=2 --rand-type=normal --target sqlite:///tmp/x.db all",
            "rand_type",
        ),
        (
            "oltp_read_write --tables=2 --reconnect=10 run",
            "--reconnect",
        ),
        ("oltp_read_write --tables=2 prewarm", "prewarm"),
        ("fileio --file-num=4 --tables=2 run", "perflab io"),
        ("oltp_read_write --pgsql-host=db run", "--db-driver=pgsql"),
        (
            "--workload debitcredit --sysbench tables=2 --target sqlite:///tmp/x.db",
            "--sysbench is for",
        ),
    ] {
        let o = sb(&r, line);
        assert_eq!(o.status.code(), Some(2), "{line}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(says), "{line}: {err}");
        assert_eq!(
            err.lines()
                .filter(|l| l.starts_with("perflab:") && !l.contains("note:"))
                .count(),
            1,
            "{line}: one line\n{err}"
        );
    }
}

#[test]
fn the_sysbench_dialect_is_told_by_its_own_flags() {
    // perflab's own --rate is per client; sysbench's, with a flag only sysbench has, total.
    let dir = tempdir("sb-dialect");
    let db = format!("sqlite://{}/d.db", dir.display());
    let ours = spec(&format!(
        "all --workload oltp_point_select --clients 2 --rate 100/s --target {db}"
    ));
    assert_eq!(ours["load"]["scope"], "worker", "{}", ours["load"]);
    let theirs = spec(&format!(
        "oltp_point_select --table-size=100 --threads=2 --rate=100 --target {db} all"
    ));
    assert_eq!(theirs["load"]["scope"], "total", "{}", theirs["load"]);
    let like = spec(&format!(
        "oltp_point_select --like sysbench --threads=2 --rate=100 --target {db} all"
    ));
    assert_eq!(like["load"]["scope"], "total");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sqlite_runs_sysbenchs_tests_as_perflabs_addition() {
    let r = Results::new("sb-sqlite");
    let dir = tempdir("sb-sqlite");
    let db = format!("sqlite://{}/sb.db", dir.display());
    let v = ok(
        &r,
        &format!(
            "oltp_read_write --like sysbench --tables=2 --table-size=500 --threads=2 --events=200 --time=0 --target {db} --json all"
        ),
    );
    assert_eq!(ops(&v), 200);
    checks_pass(&v);
    assert!((figure(&v, "sb_writes_per_txn") - 4.0).abs() < 0.01);
    // After a warm-up the counts are the measured events' alone; sysbench's report shows
    // the percentile asked for and, with --histogram, each step's histogram.
    let v = ok(
        &r,
        &format!(
            "oltp_read_only --like sysbench --table-size=500 --warmup-time=1 --time=1 --percentile=99 --histogram --target {db} --json all"
        ),
    );
    assert_eq!(figure(&v, "sb_reads"), 14.0 * ops(&v) as f64);
    assert!(figure(&v, "sb_latency_pct_ns") > 0.0);
    let shown = common::run(&r, &["show", "last"]);
    let text = common::stdout(&shown);
    assert!(
        text.contains("sysbench's statistics") && text.contains("99th ms"),
        "{text}"
    );
    assert!(text.contains("latency histogram of step 1"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
