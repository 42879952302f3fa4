//! sysbench's command line on `perflab oltp` (`crate::workload::peer`): `sysbench
//! [TEST|path/TEST.lua] [options] prepare|run|cleanup` with `sysbench` replaced by `perflab
//! oltp` runs as sysbench runs it.
//!
//! A flag only sysbench has (`--tables`, `--db-driver`, `--mysql-host`, `--report-interval`
//! ...) puts the line in sysbench's dialect, as `--like sysbench` does; then `--threads`,
//! `--rate` and `--time` mean what they mean to sysbench, and what the line does not give
//! takes sysbench's defaults: 1 thread, 10 seconds, no warm-up, the MySQL driver on
//! `localhost:3306` (its socket, as libmysqlclient reads `localhost`) as user `sbtest` in
//! database `sbtest` (PostgreSQL's driver: `localhost:5432`, the same user and database),
//! prepared statements, `--rand-type special` (1.0.20's). The test's own options become
//! perflab's `--sysbench NAME=VALUE` (read by [`super::options`]). Anything else sysbench
//! has is refused by name in one line, and where perflab reads a flag differently one note
//! says so.

use crate::workload::peer::{Flag, Peer, Reading, given, same, whole};

/// sysbench.
pub static SYSBENCH: Peer = Peer {
    name: "sysbench",
    flags: FLAGS,
    positional,
    finish,
    whole: None,
    knows: None,
    marks: Some(|word| super::test::Test::parse(word).is_some()),
};

/// perflab's own words for `oltp`'s steps; sysbench's commands are three of them.
const ACTIONS: [&str; 4] = ["all", "prepare", "run", "cleanup"];

/// A word that is not a flag: the test (a name or a script's path), else the command.
fn positional(r: &mut Reading, word: &str) -> Result<bool, String> {
    if ACTIONS.contains(&word) {
        if let Some(first) = r.kept("action") {
            return Err(format!(
                "sysbench takes one command; {first:?} and {word:?} are two"
            ));
        }
        r.keep("action", word);
        return Ok(false);
    }
    match word {
        "prewarm" => {
            return Err(
                "sysbench's prewarm (MySQL's buffer pool read in) is not available; --warmup-time=N warms up before the run is measured".into(),
            );
        }
        "help" => {
            return Err(
                "sysbench's help: 'perflab oltp --help' lists perflab's options, docs/options.md sysbench's".into(),
            );
        }
        _ => {}
    }
    if let Some(t) = super::test::Test::parse(word) {
        if let Some(first) = r.kept("test") {
            return Err(format!(
                "sysbench runs one test; {first:?} and {word:?} are two"
            ));
        }
        r.keep("test", t.name());
        return Ok(true);
    }
    let other = match word {
        "fileio" => Some("perflab io"),
        "cpu" => Some("perflab cpu"),
        "memory" => Some("perflab memory"),
        _ => None,
    };
    Err(match other {
        Some(kind) => format!("sysbench's {word} test is not an OLTP test: use '{kind}'"),
        None => format!(
            "sysbench's test {word:?} is not one perflab runs: {}",
            super::test::Test::names()
        ),
    })
}

/// A test option (`--tables=4`, `--table_size=100`): perflab's `--sysbench NAME=VALUE`.
macro_rules! option {
    ($name:literal, $under:literal, $dash:literal, $means:literal) => {
        Flag::value(&[$under, $dash], $means, |r, value| {
            r.opt("--sysbench", &format!("{}={}", $name, given(value)));
            Ok(())
        })
    };
}

/// A test switch (`--skip_trx`, `--skip_trx=off`): on when written alone.
macro_rules! switch {
    ($name:literal, $under:literal, $dash:literal, $means:literal) => {
        Flag::switch(&[$under, $dash], $means, |r, value| {
            r.opt(
                "--sysbench",
                &format!("{}={}", $name, value.unwrap_or("on")),
            );
            Ok(())
        })
    };
}

/// A value kept for [`finish`] (a user, a database).
macro_rules! slot {
    ([$($n:literal),+], $slot:literal, $means:literal) => {
        Flag::value(&[$($n),+], $means, |r, value| {
            r.keep($slot, given(value));
            Ok(())
        })
    };
}

/// A host or a socket kept for [`finish`]: sysbench takes lists of them, perflab one.
macro_rules! one_server {
    ([$($n:literal),+], $slot:literal, $means:literal) => {
        Flag::value(&[$($n),+], $means, |r, value| {
            let v = given(value);
            if v.contains(',') {
                return Err(
                    "a list of servers: give one (sysbench spreads its threads over several; perflab's shards are for debitcredit, orderentry and tpcc)"
                        .into(),
                );
            }
            r.keep($slot, v);
            Ok(())
        })
    };
}

/// A flag sysbench has and perflab cannot honour, refused with `why`.
macro_rules! refused {
    ([$($n:literal),+], $means:literal, $why:literal) => {
        Flag::value(&[$($n),+], $means, |_, _| Err($why.into()))
    };
}

/// sysbench's switches that are off by default and that perflab cannot turn on.
macro_rules! off_only {
    ([$($n:literal),+], $means:literal, $why:literal) => {
        Flag::switch(&[$($n),+], $means, |_, value| match value.map(str::to_ascii_lowercase).as_deref() {
            Some("off" | "false" | "0" | "no") => Ok(()),
            _ => Err($why.into()),
        })
    };
}

/// A whole number of seconds, or why not.
fn secs(v: &str) -> Result<u64, String> {
    whole(v).map_err(|_| "a whole number of seconds".to_string())
}

static FLAGS: &[Flag] = &[
    Flag::value(&["--threads", "--num-threads"], "--clients", |r, value| {
        let n = whole(given(value))?;
        if n == 0 {
            return Err("at least 1 thread".into());
        }
        r.keep("threads", given(value));
        r.opt("--clients", given(value));
        Ok(())
    }),
    Flag::value(
        &["--time", "--max-time"],
        "--duration (seconds without a unit)",
        |r, value| {
            secs(given(value))?;
            r.keep("time", given(value));
            Ok(())
        },
    ),
    Flag::value(
        &["--events", "--max-requests"],
        "--ops (over all threads; with --time=0)",
        |r, value| {
            whole(given(value))?;
            r.keep("events", given(value));
            Ok(())
        },
    ),
    Flag::value(
        &["--rate", "--tx-rate"],
        "--rate N/s --rate-scope total (sysbench's rate is over all threads; 0: none)",
        |r, value| {
            let n = whole(given(value))?;
            if n > 0 {
                r.opt("--rate", &format!("{n}/s"));
                r.opt("--rate-scope", "total");
                r.note(format!(
                    "sysbench's --rate={n}: {n} events a second over all threads, arriving as sysbench's do (exponential gaps; perflab's own oltp --rate is per client)"
                ));
            }
            Ok(())
        },
    ),
    Flag::value(
        &["--report-interval"],
        "--interval (seconds): a progress line every N seconds where stderr is not a terminal",
        |r, value| {
            let n = secs(given(value))?;
            if n > 0 {
                r.opt("--interval", &format!("{n}s"));
            }
            Ok(())
        },
    ),
    Flag::value(&["--warmup-time"], "--warmup (seconds)", |r, value| {
        let n = secs(given(value))?;
        r.keep("warmup", given(value));
        r.opt("--warmup", &format!("{n}s"));
        Ok(())
    }),
    Flag::value(
        &["--percentile"],
        "--sysbench percentile=N: the response time at that percentile in sysbench's statistics (0: none)",
        |r, value| {
            r.opt("--sysbench", &format!("percentile={}", given(value)));
            Ok(())
        },
    ),
    Flag::switch(
        &["--histogram"],
        "--sysbench histogram=on: each step's latency histogram after the run",
        |r, value| {
            r.opt(
                "--sysbench",
                &format!("histogram={}", value.unwrap_or("on")),
            );
            Ok(())
        },
    ),
    Flag::value(
        &["--rand-seed"],
        "--seed (0, the clock, refused)",
        |r, value| {
            match whole(given(value))? {
                0 => {
                    return Err(
                    "0 seeds from the clock; perflab's seeds are numbers, so that runs repeat: give one above 0".into(),
                );
                }
                n => r.opt("--seed", &n.to_string()),
            }
            r.keep("seed", given(value));
            Ok(())
        },
    ),
    Flag::value(
        &["--rand-type"],
        "--sysbench rand_type=uniform|gaussian|special|pareto|zipfian",
        |r, value| {
            r.opt("--sysbench", &format!("rand_type={}", given(value)));
            Ok(())
        },
    ),
    option!(
        "rand_spec_iter",
        "--rand-spec-iter",
        "--rand_spec_iter",
        "--sysbench rand_spec_iter=N"
    ),
    option!(
        "rand_spec_pct",
        "--rand-spec-pct",
        "--rand_spec_pct",
        "--sysbench rand_spec_pct=N"
    ),
    option!(
        "rand_spec_res",
        "--rand-spec-res",
        "--rand_spec_res",
        "--sysbench rand_spec_res=N"
    ),
    option!(
        "rand_pareto_h",
        "--rand-pareto-h",
        "--rand_pareto_h",
        "--sysbench rand_pareto_h=H"
    ),
    option!(
        "rand_zipfian_exp",
        "--rand-zipfian-exp",
        "--rand_zipfian_exp",
        "--sysbench rand_zipfian_exp=E (sysbench after 1.0.20)"
    ),
    Flag::value(
        &["--db-driver"],
        "mysql or pgsql: the server of the --target perflab builds",
        |r, value| {
            match given(value) {
                "mysql" | "pgsql" => r.keep("driver", given(value)),
                _ => {
                    return Err(
                        "mysql or pgsql (SQLite: perflab's --target sqlite:///FILE, without --db-driver)"
                            .into(),
                    );
                }
            }
            Ok(())
        },
    ),
    Flag::value(
        &["--db-ps-mode"],
        "--query-mode prepared (auto) or simple (disable)",
        |r, value| {
            let mode = match given(value) {
                "auto" => "prepared",
                "disable" => "simple",
                _ => return Err("auto or disable".into()),
            };
            r.keep("ps_mode", mode);
            Ok(())
        },
    ),
    one_server!(
        ["--mysql-host"],
        "mysql_host",
        "the server's host (into --target)"
    ),
    Flag::value(
        &["--mysql-port"],
        "the server's port (into --target)",
        |r, value| {
            let v = given(value);
            if v.contains(',') {
                return Err("a list of ports: give one".into());
            }
            whole(v)?;
            r.keep("mysql_port", v);
            Ok(())
        },
    ),
    one_server!(
        ["--mysql-socket"],
        "mysql_socket",
        "the server's Unix socket (into --target)"
    ),
    slot!(["--mysql-user"], "mysql_user", "the user (into --target)"),
    slot!(
        ["--mysql-password"],
        "mysql_password",
        "the password (into --target; never recorded)"
    ),
    slot!(["--mysql-db"], "mysql_db", "the database (into --target)"),
    Flag::switch(
        &["--mysql-ssl"],
        "on: TLS required (?ssl-mode=REQUIRED); off: perflab's default, TLS if the server offers it",
        |r, value| {
            match value.map(str::to_ascii_lowercase).as_deref() {
                None | Some("on" | "true" | "1" | "yes") => r.keep("mysql_ssl", "on"),
                Some("off" | "false" | "0" | "no") => {}
                Some(_) => return Err("on or off".into()),
            }
            Ok(())
        },
    ),
    Flag::value(
        &["--mysql-ignore-errors"],
        "--sysbench mysql_ignore_errors=CODES|all|none: the errors that re-run the event",
        |r, value| {
            r.opt(
                "--sysbench",
                &format!("mysql_ignore_errors={}", given(value)),
            );
            Ok(())
        },
    ),
    slot!(
        ["--pgsql-host"],
        "pgsql_host",
        "the server's host (into --target)"
    ),
    Flag::value(
        &["--pgsql-port"],
        "the server's port (into --target)",
        |r, value| {
            whole(given(value))?;
            r.keep("pgsql_port", given(value));
            Ok(())
        },
    ),
    slot!(["--pgsql-user"], "pgsql_user", "the user (into --target)"),
    slot!(
        ["--pgsql-password"],
        "pgsql_password",
        "the password (into --target; never recorded)"
    ),
    slot!(["--pgsql-db"], "pgsql_db", "the database (into --target)"),
    option!("tables", "--tables", "--tables", "--sysbench tables=N"),
    option!(
        "table_size",
        "--table-size",
        "--table_size",
        "--sysbench table_size=N"
    ),
    option!(
        "range_size",
        "--range-size",
        "--range_size",
        "--sysbench range_size=N"
    ),
    option!(
        "point_selects",
        "--point-selects",
        "--point_selects",
        "--sysbench point_selects=N"
    ),
    option!(
        "simple_ranges",
        "--simple-ranges",
        "--simple_ranges",
        "--sysbench simple_ranges=N"
    ),
    option!(
        "sum_ranges",
        "--sum-ranges",
        "--sum_ranges",
        "--sysbench sum_ranges=N"
    ),
    option!(
        "order_ranges",
        "--order-ranges",
        "--order_ranges",
        "--sysbench order_ranges=N"
    ),
    option!(
        "distinct_ranges",
        "--distinct-ranges",
        "--distinct_ranges",
        "--sysbench distinct_ranges=N"
    ),
    option!(
        "index_updates",
        "--index-updates",
        "--index_updates",
        "--sysbench index_updates=N"
    ),
    option!(
        "non_index_updates",
        "--non-index-updates",
        "--non_index_updates",
        "--sysbench non_index_updates=N"
    ),
    option!(
        "delete_inserts",
        "--delete-inserts",
        "--delete_inserts",
        "--sysbench delete_inserts=N"
    ),
    switch!(
        "range_selects",
        "--range-selects",
        "--range_selects",
        "--sysbench range_selects=on|off"
    ),
    switch!(
        "auto_inc",
        "--auto-inc",
        "--auto_inc",
        "--sysbench auto_inc=on|off"
    ),
    switch!(
        "skip_trx",
        "--skip-trx",
        "--skip_trx",
        "--sysbench skip_trx=on|off"
    ),
    switch!(
        "secondary",
        "--secondary",
        "--secondary",
        "--sysbench secondary=on|off"
    ),
    switch!(
        "create_secondary",
        "--create-secondary",
        "--create_secondary",
        "--sysbench create_secondary=on|off"
    ),
    option!(
        "mysql_storage_engine",
        "--mysql-storage-engine",
        "--mysql_storage_engine",
        "--sysbench mysql_storage_engine=NAME"
    ),
    option!(
        "random_points",
        "--random-points",
        "--random_points",
        "--sysbench random_points=N (select_random_points)"
    ),
    option!(
        "number_of_ranges",
        "--number-of-ranges",
        "--number_of_ranges",
        "--sysbench number_of_ranges=N (select_random_ranges)"
    ),
    option!(
        "delta",
        "--delta",
        "--delta",
        "--sysbench delta=N (select_random_ranges)"
    ),
    Flag::value(
        &["--thread-stack-size", "--verbosity"],
        "sysbench's own threads and output: no effect",
        same,
    ),
    Flag::switch(
        &["--debug", "--db-debug", "--mysql-debug"],
        "sysbench's own output: no effect",
        same,
    ),
    Flag::switch(
        &["--validate"],
        "no effect: sysbench's OLTP tests validate nothing; perflab checks the rows after every step",
        same,
    ),
    off_only!(
        ["--forced-shutdown"],
        "off only: perflab waits for the transactions in flight (--op-timeout bounds each)",
        "perflab ends a step by waiting for the transactions in flight, each bounded by --op-timeout (30 s by default); only --forced-shutdown=off means that"
    ),
    off_only!(
        ["--mysql-compression"],
        "off only: perflab's MySQL client does not compress",
        "perflab's MySQL client does not compress its protocol; give --mysql-compression=off"
    ),
    off_only!(
        ["--mysql-dry-run"],
        "off only: perflab runs every statement",
        "perflab runs every statement on the server; 'perflab null' measures the harness alone"
    ),
    refused!(
        ["--mysql-ssl-cipher"],
        "refused: perflab's TLS chooses its ciphers",
        "perflab's TLS (rustls) chooses its own ciphers; drop it"
    ),
    refused!(
        ["--report-checkpoints"],
        "refused: every run keeps its per-interval series; 'perflab export' writes it",
        "every run keeps its per-interval series in the record; 'perflab export last -f csv' writes them"
    ),
    refused!(
        ["--config-file"],
        "refused: give the options on the line",
        "perflab reads sysbench's options from the line; write them out there"
    ),
    refused!(
        ["--pgsql-variant", "--pgsql_variant"],
        "refused: Redshift's variant is not available",
        "Redshift's variant (IDENTITY ids, no secondary index, no deletes) is not available"
    ),
    refused!(
        ["--create-table-options", "--create_table_options"],
        "refused: sysbench's tables as 1.0.20 makes them",
        "perflab makes sysbench 1.0.20's tables; --mysql_storage_engine=NAME picks MySQL's engine"
    ),
    refused!(
        ["--reconnect"],
        "refused: each client keeps its connection",
        "each perflab client keeps its connection (and re-opens it only when it breaks)"
    ),
];

/// The run sysbench's line means: its command, its test, its server, its defaults.
fn finish(r: &mut Reading) -> Result<(), String> {
    let Some(action) = r.kept("action").map(str::to_string) else {
        return Err(
            "sysbench's line needs a command: prepare, run or cleanup (perflab's all does the three)".into(),
        );
    };
    match r.kept("test").map(str::to_string) {
        Some(test) => r.opt("--workload", &test),
        None if r.has("--workload") => {}
        None => {
            return Err(format!(
                "sysbench's line needs a test before its command: {}",
                super::test::Test::names()
            ));
        }
    }
    let server = [
        "driver",
        "mysql_host",
        "mysql_port",
        "mysql_socket",
        "mysql_user",
        "mysql_password",
        "mysql_db",
        "mysql_ssl",
        "pgsql_host",
        "pgsql_port",
        "pgsql_user",
        "pgsql_password",
        "pgsql_db",
    ]
    .iter()
    .any(|k| r.kept(k).is_some());
    if r.has("--target") {
        if server {
            return Err(
                "give --target or sysbench's --db-driver, --mysql-* and --pgsql-* options, not both"
                    .into(),
            );
        }
    } else {
        let t = super::connect::target(r)?;
        r.opt("--target", &t);
    }
    if let Some(mode) = r.kept("ps_mode").map(str::to_string)
        && !r.has("--query-mode")
    {
        r.opt("--query-mode", &mode);
    }
    // sysbench's defaults for what the line leaves out (its threads are bulk_insert's
    // tables at prepare too).
    let mut took = Vec::new();
    if !r.has("--clients") && !r.has("--threads") {
        r.opt("--clients", "1");
        took.push("1 thread".to_string());
    }
    if action == "prepare" || action == "cleanup" {
        return Ok(());
    }
    let time = r.kept("time").map(secs).transpose()?;
    let events = r.kept("events").map(whole).transpose()?.unwrap_or(0);
    if !r.has("--duration") && !r.has("--ops") {
        match (time, events) {
            (Some(0), 0) => {
                return Err(
                    "sysbench's --time=0 without --events runs without end; give --time=N or --events=N".into(),
                );
            }
            (Some(t), e) if t > 0 && e > 0 => {
                return Err(format!(
                    "sysbench stops at --events={e} or --time={t}, whichever comes first; perflab ends a step at one of them: give --time=0 with --events, or --time alone"
                ));
            }
            (_, e) if e > 0 => {
                if time.is_none() {
                    r.note(format!(
                        "sysbench's --events={e}: the step ends after {e} events over all threads (sysbench would also stop at its default --time=10; add --time=0 to say it needs not)"
                    ));
                }
                r.opt("--ops", &e.to_string());
            }
            (t, _) => {
                let t = t.unwrap_or(10);
                if time.is_none() {
                    took.push("10 s".into());
                }
                r.opt("--duration", &format!("{t}s"));
            }
        }
    }
    if !r.has("--warmup") {
        r.opt("--warmup", "0s");
        took.push("no warm-up".into());
    }
    if r.kept("seed").is_none() && !r.has("--seed") {
        took.push("seed 1 (sysbench seeds from the clock; --rand-seed=N)".into());
    }
    if !took.is_empty() {
        r.note(format!(
            "sysbench's defaults where the line gives none: {}",
            took.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::peer::{OwnFlags, translate};

    fn own() -> OwnFlags {
        OwnFlags::of(&crate::workload::kind::subcommand::<
            crate::workload::oltp::args::OltpArgs,
        >("oltp", ""))
    }

    fn tr(line: &str) -> Result<Vec<String>, String> {
        let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
        let peers: &[&Peer] = &[&crate::workload::oltp::peer::PGBENCH, &SYSBENCH];
        translate(peers, &own(), &argv).map(|t| t.args)
    }

    fn has(args: &[String], pair: &[&str]) -> bool {
        args.windows(pair.len()).any(|w| w == pair)
    }

    #[test]
    fn a_sysbench_line_is_sysbenchs_run() {
        let a = tr("oltp_read_write --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=test --tables=4 --table-size=1000 --threads=8 --time=30 run").unwrap();
        for pair in [
            &["--workload", "oltp_read_write"][..],
            &["--target", "postgres://postgres@127.0.0.1:5432/test"],
            &["--sysbench", "tables=4"],
            &["--sysbench", "table_size=1000"],
            &["--clients", "8"],
            &["--duration", "30s"],
            &["--warmup", "0s"],
        ] {
            assert!(has(&a, pair), "{pair:?} in {a:?}");
        }
        assert!(a.contains(&"run".to_string()));
    }

    #[test]
    fn sysbenchs_defaults_fill_what_the_line_leaves_out() {
        let a =
            tr("/usr/share/sysbench/oltp_point_select.lua --mysql-host=db.example run").unwrap();
        assert!(
            has(&a, &["--target", "mysql://sbtest@db.example:3306/sbtest"]),
            "{a:?}"
        );
        assert!(has(&a, &["--clients", "1"]) && has(&a, &["--duration", "10s"]));
        let a = tr("oltp_read_only --like sysbench --pgsql-user=u --pgsql-password=p@ss --db-driver=pgsql run").unwrap();
        assert!(
            has(
                &a,
                &["--target", "postgres://u:p%40ss@localhost:5432/sbtest"]
            ),
            "{a:?}"
        );
    }

    #[test]
    fn a_test_name_alone_is_sysbenchs_line_and_perflabs_workload_stays_perflabs() {
        // `sysbench oltp_point_select run`: no flag only sysbench has, the test says whose.
        let a = tr("oltp_point_select run").unwrap();
        assert!(has(&a, &["--workload", "oltp_point_select"]), "{a:?}");
        assert!(has(&a, &["--clients", "1"]) && has(&a, &["--duration", "10s"]));
        let a = tr("/usr/share/sysbench/oltp_read_only.lua --threads=4 run").unwrap();
        assert!(has(&a, &["--clients", "4"]), "{a:?}");
        // perflab's own option names the workload: not a dialect.
        let a = tr("--workload oltp_point_select run").unwrap();
        assert!(!a.contains(&"--duration".to_string()), "{a:?}");
    }

    #[test]
    fn rate_is_a_total_and_events_a_count_over_threads() {
        let a = tr("oltp_read_write --tables=1 --threads=4 --rate=100 --events=5000 --time=0 run")
            .unwrap();
        assert!(has(&a, &["--rate", "100/s"]) && has(&a, &["--rate-scope", "total"]));
        assert!(has(&a, &["--ops", "5000"]), "{a:?}");
        assert!(!a.contains(&"--duration".to_string()));
        let e = tr("oltp_read_write --tables=1 --events=10 --time=5 run").unwrap_err();
        assert!(e.contains("whichever comes first"), "{e}");
        let e = tr("oltp_read_write --tables=1 --time=0 run").unwrap_err();
        assert!(e.contains("without end"), "{e}");
    }

    #[test]
    fn what_perflab_cannot_do_is_refused_by_name() {
        for (line, says) in [
            (
                "oltp_read_write --tables=1 --report-checkpoints=10 run",
                "--report-checkpoints",
            ),
            (
                "oltp_read_write --tables=1 --forced-shutdown=5 run",
                "--forced-shutdown",
            ),
            (
                "oltp_read_write --tables=1 --mysql-host=a,b run",
                "a list of servers",
            ),
            (
                "oltp_read_write --tables=1 --db-driver=drizzle run",
                "mysql or pgsql",
            ),
            ("oltp_read_write --tables=1 --rand-seed=0 run", "clock"),
            (
                "oltp_read_write --tables=1 --pgsql_variant=redshift run",
                "Redshift",
            ),
            ("oltp_read_write --tables=1 prewarm", "prewarm"),
            ("fileio --tables=1 run", "perflab io"),
            ("oltp_read_write --tables=1", "needs a command"),
            ("--tables=1 run", "needs a test"),
            ("oltp_read_write --pgsql-host=x run", "add it"),
            (
                "oltp_read_write --tables=1 --mysql-host=x --target sqlite:///x.db run",
                "not both",
            ),
        ] {
            let e = tr(line).unwrap_err();
            assert!(e.contains("sysbench") && e.contains(says), "{line}: {e}");
        }
    }

    #[test]
    fn every_flag_reads_or_is_refused_by_name() {
        let value = |name: &str| match name {
            "--db-driver" => "pgsql",
            "--db-ps-mode" => "disable",
            "--rand-type" => "gaussian",
            "--mysql-ignore-errors" => "all",
            "--forced-shutdown" | "--mysql-compression" | "--mysql-dry-run" => "off",
            "--mysql-storage-engine" | "--mysql_storage_engine" => "myisam",
            "--rand-pareto-h" | "--rand_pareto_h" => "0.5",
            "--mysql-port" | "--pgsql-port" => "3307",
            "--mysql-ssl" => "on",
            n if n.starts_with("--pgsql") || n.starts_with("--mysql") => "x",
            _ => "1",
        };
        for flag in FLAGS {
            for name in flag.names {
                let mut line = format!("oltp_read_write --like sysbench {name}={}", value(name));
                if name.starts_with("--pgsql") {
                    line.push_str(" --db-driver=pgsql");
                }
                let read = tr(&format!("{line} run"));
                match flag.means.starts_with("refused") {
                    true => {
                        let e = read.unwrap_err();
                        assert!(e.contains(name), "{name}: {e}");
                    }
                    false => {
                        read.unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                }
            }
        }
    }

    #[test]
    fn pgbench_and_sysbench_flags_do_not_mix() {
        let e = tr("oltp_read_write --tables=2 -c 4 run").unwrap_err();
        assert!(e.contains("--like"), "{e}");
    }

    #[test]
    fn perflabs_own_options_stay_and_take_precedence_over_the_defaults() {
        let a = tr("oltp_read_write --tables=1 --clients 1,2,4 --duration 3s --target sqlite:///tmp/x.db run").unwrap();
        assert!(has(&a, &["--clients", "1,2,4"]) && has(&a, &["--duration", "3s"]));
        assert!(!has(&a, &["--clients", "1"]) && !has(&a, &["--duration", "10s"]));
        assert!(has(&a, &["--target", "sqlite:///tmp/x.db"]));
    }
}
