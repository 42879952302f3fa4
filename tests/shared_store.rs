//! The shared results store on a real, throwaway PostgreSQL (never a mock): eight hosts
//! writing at once, a writer cut off mid-upload by the fault relay, the server down during a
//! run, the roles, the schema's versions, and the trend query of docs/shared-store.md run
//! with psql. A test that cannot start its server fails under PERFLAB_REQUIRE_SERVERS and
//! says it skipped otherwise (`PgServer::start`).

mod common;

use common::pki::Pki;
use common::proxy::{Fault, FaultProxy, Faults};
use common::servers::{PgServer, pg_program};
use common::skip::{skip_host, skip_or_fail};
use common::{Results, run_through_crash, stderr, stdout};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

/// `perflab ARGS --results DIR --shared URL`.
fn perflab(results: &Results, shared: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .arg("--results")
        .arg(results.path())
        .args(["--shared", shared])
        .env("NO_COLOR", "1")
        .env_remove("PERFLAB_SHARED")
        .output()
        .expect("the perflab binary runs")
}

/// A quick run of the null target.
const QUICK: &[&str] = &["null", "--duration", "20ms", "--warmup", "0s", "-q"];

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

/// `sql` through psql as the server's superuser: its rows, `|`-separated.
fn psql(pg: &PgServer, sql: &str) -> Vec<String> {
    let psql = pg_program("psql").expect("psql beside the server");
    let o = Command::new(psql)
        .args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            &pg.url(),
            "-c",
            sql,
        ])
        .output()
        .expect("psql runs");
    assert!(o.status.success(), "psql: {}", stderr(&o));
    stdout(&o).lines().map(str::to_string).collect()
}

/// The queued runs of a results folder.
fn queued(results: &Results) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(results.path().join("shared-queue"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    ids.sort();
    ids
}

/// The run ids in a results folder.
fn local_ids(results: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(results.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("run.json").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    ids.sort();
    ids
}

fn init(pg: &PgServer, work: &Results) {
    ok(&perflab(work, &pg.url(), &["shared", "init"]));
}

/// Eight machines (each its own host name and machine id, as tests/hosts.rs makes them)
/// send 50 runs each at once: every run is in the store once, none lost, none twice, and
/// every queue is empty.
#[test]
fn eight_hosts_writing_at_once_lose_and_double_nothing() {
    if Command::new("unshare").arg("--version").output().is_err() {
        skip_or_fail("unshare is not installed", "util-linux");
        return;
    }
    let Some(pg) = PgServer::start() else { return };
    let work = Results::new("shared-eight");
    init(&pg, &work);
    std::fs::create_dir_all(work.path()).unwrap();
    // Can this host make namespaces? (A container without CAP_SYS_ADMIN cannot.)
    let probe = Command::new("unshare")
        .args(["--uts", "--mount", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_host("this host cannot make UTS and mount namespaces (unshare)");
        return;
    }
    const WRITERS: usize = 8;
    const RUNS: usize = 50;
    let url = pg.url();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let dir = work.path().join(format!("host{w}"));
            std::fs::create_dir_all(&dir).unwrap();
            let id_file = dir.join("machine-id");
            std::fs::write(&id_file, format!("{:032x}\n", 0xfeed_0000 + w)).unwrap();
            let results = dir.join("results");
            let mut line = vec![format!("'{}'", env!("CARGO_BIN_EXE_perflab"))];
            line.extend(QUICK.iter().map(|a| format!("'{a}'")));
            line.push(format!("--results '{}'", results.display()));
            line.push(format!("--shared '{url}' --label writer={w}"));
            let script = format!(
                "hostname perflab-writer-{w} && mount --bind '{}' /etc/machine-id && i=0 && while [ $i -lt {RUNS} ]; do {} >/dev/null || exit 1; i=$((i+1)); done",
                id_file.display(),
                line.join(" ")
            );
            let handle = std::thread::spawn(move || {
                Command::new("unshare")
                    .args(["--uts", "--mount", "sh", "-c", &script])
                    .env("NO_COLOR", "1")
                    .env_remove("PERFLAB_SHARED")
                    .output()
                    .expect("unshare runs")
            });
            (w, results, handle)
        })
        .collect();
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (w, results, handle) in writers {
        let o = handle.join().unwrap();
        assert!(o.status.success(), "writer {w}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("queued"),
            "writer {w} queued runs: {}",
            stderr(&o)
        );
        let ids = local_ids(&results);
        assert_eq!(ids.len(), RUNS, "writer {w}'s own folder");
        let q = std::fs::read_dir(results.join("shared-queue"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(q, 0, "writer {w}'s queue is empty");
        expected.insert(format!("perflab-writer-{w}"), ids);
    }
    // Every local run is in the store once: under its id, or (another host's run took the
    // id) under ID-HOST-MACHINE; its record names it so.
    let rows = psql(
        &pg,
        "SELECT id, host, record ->> 'id', labels ->> 'writer' FROM perflab_runs ORDER BY id",
    );
    assert_eq!(rows.len(), WRITERS * RUNS, "none lost, none twice");
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for row in &rows {
        let cols: Vec<&str> = row.split('|').collect();
        let [id, host, record_id, writer] = cols.as_slice() else {
            panic!("{row}")
        };
        assert_eq!(id, record_id, "the stored record names itself by its id");
        assert_eq!(*host, format!("perflab-writer-{writer}"));
        let local = expected[*host]
            .iter()
            .find(|l| *id == l.as_str() || id.starts_with(&format!("{l}-{host}-")))
            .unwrap_or_else(|| panic!("{id} of {host} is none of its runs"));
        assert!(seen.insert((host.to_string(), local.clone())), "{id} twice");
    }
    // Sending again is a no-op.
    let again = Results::new("shared-eight-again");
    let o = perflab(&again, &url, &["runs", "--newest", "5", "--json"]);
    ok(&o);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 5);
}

/// The fault relay cuts the connection in the middle of the answer to the upload's INSERT,
/// after the server committed it: the writer cannot know the run arrived, so it stays queued;
/// `shared sync` sends it again, and the store, holding that very record, keeps it once.
#[test]
fn a_writer_cut_off_mid_upload_queues_its_run_and_the_sync_keeps_it_once() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-cut-insert");
    init(&pg, &here);
    let relay = FaultProxy::start(
        ([127, 0, 0, 1], pg.port()).into(),
        Faults {
            one_in: 1,
            kinds: vec![Fault::ResetMid],
            only_in: Some(b"INSERT 0 1".to_vec()),
            ..Faults::default()
        },
    );
    let through = format!("postgres://postgres@127.0.0.1:{}/postgres", relay.port());
    relay.arm();
    let o = perflab(&here, &through, QUICK);
    ok(&o);
    assert_eq!(relay.total(), 1, "the INSERT's answer was cut");
    let waiting = queued(&here);
    assert_eq!(waiting, local_ids(here.path()), "queued: {}", stderr(&o));
    assert_eq!(
        psql(&pg, "SELECT id FROM perflab_runs"),
        waiting,
        "committed all the same"
    );
    relay.disarm();
    let o = perflab(&here, &through, &["shared", "sync"]);
    ok(&o);
    assert!(
        stdout(&o).contains(&format!("{} is in the shared store already", waiting[0])),
        "{}",
        stdout(&o)
    );
    assert!(queued(&here).is_empty());
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);
}

/// The fault relay cuts the store's connection in the middle of the server's first reply:
/// the run is saved and queued; once the network is back, `shared sync` sends it, once.
#[test]
fn a_writer_cut_off_mid_upload_queues_its_run_and_syncs_it_later() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-cut");
    init(&pg, &here);
    let relay = FaultProxy::start(
        ([127, 0, 0, 1], pg.port()).into(),
        Faults {
            one_in: 1,
            kinds: vec![Fault::ResetMid, Fault::Truncate],
            ..Faults::default()
        },
    );
    let through = format!("postgres://postgres@127.0.0.1:{}/postgres", relay.port());
    relay.arm();
    let o = perflab(&here, &through, QUICK);
    ok(&o);
    assert!(relay.total() > 0, "the relay cut the upload");
    assert!(
        stderr(&o).contains("queued for the shared store") && stderr(&o).contains("shared sync"),
        "{}",
        stderr(&o)
    );
    let waiting = queued(&here);
    assert_eq!(
        waiting,
        local_ids(here.path()),
        "the run waits in the queue"
    );
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["0"]);
    // The network is back.
    relay.disarm();
    let o = perflab(&here, &through, &["shared", "sync"]);
    ok(&o);
    assert!(
        stdout(&o).contains(&format!("sent {}", waiting[0])),
        "{}",
        stdout(&o)
    );
    assert!(queued(&here).is_empty());
    assert_eq!(
        psql(&pg, "SELECT id FROM perflab_runs"),
        waiting,
        "sent once"
    );
    // Nothing left to send; a record sent twice is a no-op.
    let o = perflab(&here, &through, &["shared", "sync"]);
    ok(&o);
    assert!(stderr(&o).contains("no runs queued"), "{}", stderr(&o));
    std::fs::write(here.path().join("shared-queue").join(&waiting[0]), b"").unwrap();
    let o = perflab(&here, &pg.url(), &["shared", "sync"]);
    ok(&o);
    assert!(
        stdout(&o).contains("in the shared store already"),
        "{}",
        stdout(&o)
    );
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);
}

/// The server goes down while a run measures: the run completes and is saved here, stays
/// queued, and the next run (the server back) sends both.
#[test]
fn with_the_server_down_during_a_run_the_run_completes_and_is_sent_later() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-down");
    init(&pg, &here);
    let args = [
        "null",
        "--duration",
        "1500ms",
        "--warmup",
        "0s",
        "-q",
        "--shared",
        &pg.url(),
    ];
    let o = run_through_crash(&here, &args, || pg.kill());
    ok(&o);
    let first = local_ids(here.path());
    assert_eq!(first.len(), 1);
    assert_eq!(queued(&here), first, "queued: {}", stderr(&o));
    assert!(stderr(&o).contains("cannot reach"), "{}", stderr(&o));
    pg.start_again();
    ok(&perflab(&here, &pg.url(), QUICK));
    assert!(queued(&here).is_empty());
    let stored = psql(&pg, "SELECT id FROM perflab_runs ORDER BY started_at");
    assert_eq!(
        stored,
        local_ids(here.path()),
        "both runs, the queued one first"
    );
    // `last` is this machine's newest, read from the store.
    let o = perflab(&here, &pg.url(), &["show", "last", "--json"]);
    ok(&o);
    let shown: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(shown["id"], stored[1].as_str());
}

/// A member of perflab_reader reads and cannot write: no tag, no upload (its run queued);
/// `serve` over the store answers; a member of perflab_writer uploads and tags.
#[test]
fn the_read_only_role_cannot_write() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-roles");
    init(&pg, &here);
    psql(
        &pg,
        "CREATE ROLE ci LOGIN IN ROLE perflab_writer; CREATE ROLE viewer LOGIN IN ROLE perflab_reader",
    );
    let writer = format!("postgres://ci@127.0.0.1:{}/postgres", pg.port());
    let reader = format!("postgres://viewer@127.0.0.1:{}/postgres", pg.port());
    let o = perflab(&here, &writer, QUICK);
    ok(&o);
    assert!(!stderr(&o).contains("queued"), "{}", stderr(&o));
    ok(&perflab(&here, &writer, &["tag", "last", "baseline"]));
    assert_eq!(psql(&pg, "SELECT tagged_by FROM perflab_tags"), ["ci"]);

    let o = perflab(&here, &reader, &["tag", "last", "other"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = stderr(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("perflab_writer"), "{line}");
    let o = perflab(&here, &reader, QUICK);
    ok(&o);
    assert!(stderr(&o).contains("queued"), "{}", stderr(&o));
    assert_eq!(queued(&here).len(), 1);
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);
    // The reader lists the team's runs.
    let o = perflab(&here, &reader, &["runs", "--json"]);
    ok(&o);
    assert!(stdout(&o).contains("\"host\""));

    // serve as the reader: the runs page from the store.
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--shared",
            &reader,
            "--results",
        ])
        .arg(here.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut first).unwrap();
    }
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let page = http_get(&addr, "/");
    let stored = psql(&pg, "SELECT id FROM perflab_runs");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(&stored[0]), "the page lists the stored run");
    let record = http_get(&addr, &format!("/runs/{}/run.json", stored[0]));
    assert!(record.starts_with("HTTP/1.1 200"), "{record}");
    let _ = child.kill();
    let _ = child.wait();
}

fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A store made by a newer perflab (a migration this one does not know) is refused in one
/// line, exit 2; a store of an older schema is migrated by the next writer.
#[test]
fn an_older_perflab_refuses_a_newer_schema_and_a_newer_one_migrates_an_older() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-schema");
    // An older perflab's store: schema 1 only, with one of its runs.
    let address = perflab::shared_store::Address::parse(&pg.url()).unwrap();
    assert_eq!(
        perflab::shared_store::schema::init(&address, Some(1)).unwrap(),
        1
    );
    assert_eq!(
        psql(&pg, "SELECT max(version) FROM perflab_schema_history"),
        ["1"]
    );
    ok(&perflab(&here, &pg.url(), QUICK));
    assert_eq!(
        psql(&pg, "SELECT max(version) FROM perflab_schema_history"),
        ["2"],
        "the writer migrated the store"
    );
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);

    // A newer perflab has been here since.
    psql(
        &pg,
        "INSERT INTO perflab_schema_history (version, name, applied_on, checksum) VALUES (3, 'from_the_future', '2027-01-01T00:00:00Z', '1')",
    );
    let o = perflab(&here, &pg.url(), &["runs"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = stderr(&o);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains("schema version 3") && line.contains("upgrade perflab"),
        "{line}"
    );
    // A run is saved here all the same, and waits for a perflab that can send it.
    let o = perflab(&here, &pg.url(), QUICK);
    ok(&o);
    assert_eq!(queued(&here).len(), 1, "{}", stderr(&o));
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);
}

/// The trend query docs/shared-store.md gives for psql runs, and says what `perflab trend
/// --by commit` says.
#[test]
fn the_documented_trend_query_runs_in_psql() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-trend");
    init(&pg, &here);
    for commit in ["aaa", "aaa", "bbb", "bbb", "ccc"] {
        let mut args = QUICK.to_vec();
        args.extend(["--label", "branch=main", "--label"]);
        let label = format!("commit={commit}");
        args.push(&label);
        ok(&perflab(&here, &pg.url(), &args));
    }
    ok(&perflab(
        &here,
        &pg.url(),
        &[
            QUICK,
            &["--label", "branch=other", "--label", "commit=zzz"][..],
        ]
        .concat(),
    ));
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/shared-store.md"))
        .unwrap();
    let start = doc
        .find("```sql\n-- trend:")
        .expect("the trend query in the docs")
        + 7;
    let query = &doc[start..start + doc[start..].find("```").unwrap()];
    let rows = psql(&pg, query);
    let commits: Vec<&str> = rows.iter().map(|r| r.split('|').next().unwrap()).collect();
    assert_eq!(commits, ["aaa", "bbb", "ccc"], "{rows:?}");
    let runs: Vec<&str> = rows.iter().map(|r| r.split('|').nth(2).unwrap()).collect();
    assert_eq!(runs, ["2", "2", "1"]);

    let o = perflab(
        &here,
        &pg.url(),
        &[
            "trend",
            "ops_per_sec",
            "--where",
            "branch=main",
            "--by",
            "commit",
            "--json",
        ],
    );
    ok(&o);
    let t: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let keys: Vec<&str> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["aaa", "bbb", "ccc"]);
    let chart = here.path().join("trend.html");
    let o = perflab(
        &here,
        &pg.url(),
        &["trend", "ops_per_sec", "-o", chart.to_str().unwrap()],
    );
    ok(&o);
    let html = std::fs::read_to_string(&chart).unwrap();
    assert!(html.contains("<svg") && html.contains("ops_per_sec"));
}

/// The CI recipe: the first machine's run becomes `baseline`; another machine's (another
/// results folder, the same store) is compared with it there, by scripts/ci-gate.sh.
#[test]
fn the_ci_gate_finds_the_baseline_in_the_shared_store() {
    let Some(pg) = PgServer::start() else { return };
    let first = Results::new("shared-gate-first");
    let second = Results::new("shared-gate-second");
    init(&pg, &first);
    let gate = |results: &Results, commit: &str| {
        Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ci-gate.sh"))
            .args(["--", "null", "--duration", "300ms", "--warmup", "0s"])
            .env("PERFLAB", env!("CARGO_BIN_EXE_perflab"))
            .env("PERFLAB_SHARED", pg.url())
            .env("PERFLAB_RESULTS", results.path())
            .env("GATE_COMMIT", commit)
            .env("GATE_BRANCH", "main")
            .env("NO_COLOR", "1")
            .output()
            .expect("the gate script runs")
    };
    let o = gate(&first, "aaa");
    ok(&o);
    assert!(stdout(&o).contains("is now"), "{}", stdout(&o));
    let baseline = psql(
        &pg,
        "SELECT run_id FROM perflab_tags WHERE name = 'baseline'",
    );
    assert_eq!(baseline.len(), 1);
    let o = gate(&second, "bbb");
    // 0 (no figure slower) or 3 (one slower): either way a comparison was made.
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "exit {:?}: {}",
        o.status.code(),
        stderr(&o)
    );
    assert!(stdout(&o).contains(&baseline[0]), "{}", stdout(&o));
    assert_eq!(
        psql(
            &pg,
            "SELECT labels ->> 'commit' FROM perflab_runs ORDER BY started_at"
        ),
        ["aaa", "bbb"]
    );
}

/// A password in the store's address reaches no record (here or in the store), no line on
/// the terminal and no page.
#[test]
fn no_password_in_a_record_a_line_or_a_page() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-password");
    init(&pg, &here);
    let secret = "s3cret-Pw";
    let with = format!(
        "postgres://postgres:{secret}@127.0.0.1:{}/postgres",
        pg.port()
    );
    let o = perflab(&here, &with, QUICK);
    ok(&o);
    assert!(!stderr(&o).contains(secret));
    let o = perflab(&here, &with, &["show", "last", "--json"]);
    ok(&o);
    assert!(
        stdout(&o).contains("postgres:***@"),
        "the command line, redacted"
    );
    assert!(!stdout(&o).contains(secret));
    for id in local_ids(here.path()) {
        let file = here.path().join("runs").join(id).join("run.json");
        assert!(!std::fs::read_to_string(file).unwrap().contains(secret));
    }
    assert_eq!(
        psql(
            &pg,
            &format!("SELECT count(*) FROM perflab_runs WHERE record::text LIKE '%{secret}%'")
        ),
        ["0"]
    );
    // A store that cannot be reached is named without the password.
    let down = format!("postgres://postgres:{secret}@127.0.0.1:1/postgres");
    let o = perflab(&here, &down, &["runs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("postgres:***@127.0.0.1:1"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains(secret));
}

/// The store over TLS with `verify-full`, as a `--target` is reached: the right CA and host
/// name pass, the wrong name is refused (and its run queued, saved here all the same).
#[test]
fn the_store_is_reached_over_tls_verified_in_full() {
    let Some(pki) = Pki::make("shared") else {
        return;
    };
    let Some(pg) = PgServer::start_tls(&pki) else {
        return;
    };
    let here = Results::new("shared-tls");
    let ca = pki.path("ca.pem").display().to_string();
    let url = |host: &str| {
        format!(
            "postgres://postgres@{host}:{}/postgres?sslmode=verify-full&sslrootcert={ca}",
            pg.port()
        )
    };
    ok(&perflab(&here, &url("localhost"), &["shared", "init"]));
    let o = perflab(&here, &url("localhost"), QUICK);
    ok(&o);
    assert!(queued(&here).is_empty(), "{}", stderr(&o));
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["1"]);
    // The certificate is for localhost, not 127.0.0.1.
    let o = perflab(&here, &url("127.0.0.1"), QUICK);
    ok(&o);
    assert_eq!(queued(&here).len(), 1, "{}", stderr(&o));
    let o = perflab(&here, &url("127.0.0.1"), &["runs"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("127.0.0.1"), "{}", stderr(&o));
}

/// Another host's run under an id the store already holds joins as `ID-HOST-MACHINE` (the
/// record renamed, as `perflab import` names it); this machine's newer version of its own
/// run replaces it; the same record again changes nothing.
#[test]
fn a_taken_id_joins_as_import_names_it_and_a_newer_version_replaces_its_own() {
    let Some(pg) = PgServer::start() else { return };
    let here = Results::new("shared-ids-here");
    let there = Results::new("shared-ids-there");
    init(&pg, &here);
    ok(&perflab(&here, &pg.url(), QUICK));
    let id = local_ids(here.path()).remove(0);
    let file = |r: &Results| r.path().join("runs").join(&id).join("run.json");
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file(&here)).unwrap()).unwrap();

    // The same id, made on another host.
    record["env"]["hostname"] = "elsewhere".into();
    record["env"]["machine"] = "abcdef0123456789".into();
    std::fs::create_dir_all(file(&there).parent().unwrap()).unwrap();
    std::fs::write(file(&there), serde_json::to_vec_pretty(&record).unwrap()).unwrap();
    std::fs::create_dir_all(there.path().join("shared-queue")).unwrap();
    std::fs::write(there.path().join("shared-queue").join(&id), b"").unwrap();
    let o = perflab(&there, &pg.url(), &["shared", "sync"]);
    ok(&o);
    let joined = format!("{id}-elsewhere-abcdef");
    assert!(
        stdout(&o).contains(&format!("sent {id} as {joined}")),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        psql(
            &pg,
            "SELECT id, host, record ->> 'id' FROM perflab_runs ORDER BY id"
        ),
        [
            format!(
                "{id}|{}|{id}",
                psql(
                    &pg,
                    &format!("SELECT host FROM perflab_runs WHERE id = '{id}'")
                )[0]
            ),
            format!("{joined}|elsewhere|{joined}")
        ]
    );
    // Sent again from there: already in the store, under its new id.
    std::fs::write(there.path().join("shared-queue").join(&id), b"").unwrap();
    let o = perflab(&there, &pg.url(), &["shared", "sync"]);
    ok(&o);
    assert!(
        stdout(&o).contains(&format!("{joined} is in the shared store already")),
        "{}",
        stdout(&o)
    );

    // This machine's own run, changed (a newer version), replaces the stored one.
    let mut mine: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file(&here)).unwrap()).unwrap();
    mine["warnings"] = serde_json::json!([{"code": "test", "message": "a newer version"}]);
    std::fs::write(file(&here), serde_json::to_vec_pretty(&mine).unwrap()).unwrap();
    std::fs::create_dir_all(here.path().join("shared-queue")).unwrap();
    std::fs::write(here.path().join("shared-queue").join(&id), b"").unwrap();
    ok(&perflab(&here, &pg.url(), &["shared", "sync"]));
    assert_eq!(psql(&pg, "SELECT count(*) FROM perflab_runs"), ["2"]);
    assert_eq!(
        psql(
            &pg,
            &format!(
                "SELECT record -> 'warnings' -> 0 ->> 'message' FROM perflab_runs WHERE id = '{id}'"
            )
        ),
        ["a newer version"]
    );
}

/// A study's automatic `STUDY.LEG` tag is the team's too; where another host ran the same
/// leg, its tag names the host.
#[test]
fn a_study_leg_run_on_two_hosts_keeps_a_tag_each() {
    let Some(pg) = PgServer::start() else { return };
    let work = Results::new("shared-study");
    init(&pg, &work);
    std::fs::create_dir_all(work.path()).unwrap();
    let probe = Command::new("unshare").args(["--uts", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_host("this host cannot make UTS namespaces (unshare)");
        return;
    }
    let study = work.path().join("legs.toml");
    std::fs::write(
        &study,
        "[study]\nname = \"legs\"\ntitle = \"One leg on two hosts\"\n\n[defaults]\ncommand = \"null\"\nthreads = \"1\"\nwarmup = \"0s\"\nduration = \"100ms\"\n\n[[leg]]\nname = \"one\"\n",
    )
    .unwrap();
    let study = study.display().to_string();
    let here = Results::new("shared-study-here");
    ok(&perflab(&here, &pg.url(), &["study", &study, "-q"]));
    let there = Results::new("shared-study-there");
    let o = Command::new("unshare")
        .args(["--uts", "sh", "-c"])
        .arg(format!(
            "hostname perflab-study-host && exec '{}' study '{study}' -q --results '{}' --shared '{}'",
            env!("CARGO_BIN_EXE_perflab"),
            there.path().display(),
            pg.url()
        ))
        .env_remove("PERFLAB_SHARED")
        .output()
        .unwrap();
    ok(&o);
    let tags = psql(
        &pg,
        "SELECT t.name, r.host = 'perflab-study-host' FROM perflab_tags t JOIN perflab_runs r ON r.id = t.run_id ORDER BY t.name",
    );
    assert_eq!(
        tags,
        ["legs.one|f", "legs.one.perflab-study-host|t"],
        "{}",
        stderr(&o)
    );
}
