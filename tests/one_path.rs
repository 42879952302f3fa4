//! One path for every run: a kind's own command, a study's leg (`perflab study FILE.toml`,
//! `perflab run FILE.toml`) and a suite's entry are judged by one exit rule. A run whose
//! checks fail exits 1 whichever way it was started, after the other legs have run, naming
//! the leg; the summary says so.

mod common;

use common::browser::tempdir;
use common::servers::PgServer;
use common::{Results, stderr, stdout};
use std::process::Command;

/// Books that do not balance, on purpose: a trigger that moves a teller's balance on every
/// history insert. `perflab oltp`, the same line as a study's leg, and the study file run by
/// `perflab run` all exit 1; the study's other leg runs all the same.
#[test]
fn books_that_do_not_balance_fail_the_kind_the_study_and_the_run_alike() {
    let Some(psql_bin) = common::skip::program("psql", "postgresql-client") else {
        return;
    };
    let Some(pg) = PgServer::start() else { return };
    let r = Results::new("one-path-books");
    let url = pg.url();
    // perflab makes its bank afresh for each run: an event trigger arms the unbalancing
    // trigger on every history table it makes.
    let trigger = "
        CREATE FUNCTION unbalance() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = NEW.tid;
            RETURN NEW;
        END $$;
        CREATE FUNCTION arm() RETURNS event_trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF to_regclass('pgbench_history') IS NOT NULL AND NOT EXISTS
                (SELECT 1 FROM pg_trigger WHERE tgname = 'unbalance') THEN
                CREATE TRIGGER unbalance AFTER INSERT ON pgbench_history
                    FOR EACH ROW EXECUTE FUNCTION unbalance();
            END IF;
        END $$;
        CREATE EVENT TRIGGER arm ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
            EXECUTE FUNCTION arm();";
    let made = Command::new(&psql_bin)
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p"])
        .arg(pg.port().to_string())
        .args(["-U", "postgres", "-d", "postgres", "-c", trigger])
        .output()
        .expect("psql runs");
    assert!(made.status.success(), "{}", stderr(&made));

    let line = [
        "oltp",
        "--target",
        &url,
        "--clients",
        "1",
        "--warmup",
        "0s",
        "--duration",
        "300ms",
    ];
    let o = common::run(&r, &line);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("consistency check failed"),
        "{}",
        stderr(&o)
    );

    let dir = tempdir("one-path-books");
    let file = dir.join("books.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[study]
title = "Books that do not balance"

[[leg]]
name = "harness"
command = "null"
threads = "1"
warmup = "0s"
duration = "200ms"

[[leg]]
name = "bank"
command = "oltp"
target = "{url}"
clients = "1"
warmup = "0s"
duration = "300ms"

[[leg]]
name = "after"
command = "null"
threads = "1"
warmup = "0s"
duration = "200ms"
"#
        ),
    )
    .unwrap();
    let f = file.display().to_string();
    for how in [&["study", f.as_str()][..], &["run", f.as_str()][..]] {
        let o = common::run(&r, how);
        assert_eq!(o.status.code(), Some(1), "{how:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("1 of 3 legs failed (the others ran): bank: consistency check failed"),
            "{how:?}: {e}"
        );
        // The leg after the failing one ran, and the summary names the failure.
        assert!(e.contains("== leg after (3/3)"), "{how:?}: {e}");
        let out = stdout(&o);
        assert!(
            out.contains("FAILED leg bank: consistency check failed"),
            "{out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A leg whose step fails (here a session that cannot open) fails the study, exit 1, with
/// the step named; the study's report is still written.
#[test]
fn a_leg_whose_step_fails_fails_the_study() {
    let r = Results::new("one-path-step");
    let dir = tempdir("one-path-step");
    let file = dir.join("step.toml");
    std::fs::write(
        &file,
        r#"
[study]
title = "A step that fails"

[defaults]
command = "null"
warmup = "0s"
duration = "200ms"

[[leg]]
name = "one"
threads = "2"
"#,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["study", &file.display().to_string(), "--results"])
        .arg(r.path())
        .env("PERFLAB_TEST_PANIC", "open")
        .output()
        .expect("perflab runs");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("1 of 1 legs failed: one: step 1 failed"), "{e}");
    assert!(stdout(&o).contains("report: "), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
