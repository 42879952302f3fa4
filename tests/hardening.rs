//! Hardening: what a bug looks like when it slips through (one line, details in a file, exit
//! 1), io paths that do not exist are refused, fio's bare `--direct`, and the bad inputs the
//! property tests (tests/fuzz.rs) found, each pinned down by name.

mod common;

use common::{Results, stderr};
use perflab::env::Environment;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A folder of its own, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("perflab-hard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Scratch(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read scratch")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary with `args` on `results`, its temporary folder set to `tmp` (where crash
/// files go), and `PERFLAB_TEST_PANIC` as given.
fn perflab_in(results: &Results, tmp: &Path, panic: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args(args)
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp)
        .env_remove("PERFLAB_TEST_PANIC");
    if let Some(p) = panic {
        c.env("PERFLAB_TEST_PANIC", p);
    }
    c.output().expect("the perflab binary runs")
}

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

/// The crash files in `tmp`.
fn crash_files(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .expect("read tmp")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("perflab-crash-"))
        })
        .collect()
}

/// The `details in PATH;` of a bug line.
fn details_path(line: &str) -> PathBuf {
    let after = line
        .split_once("; details in ")
        .unwrap_or_else(|| panic!("no details path in {line:?}"))
        .1;
    PathBuf::from(
        after
            .split_once("; please report it")
            .expect("the ending")
            .0,
    )
}

/// Exit code 2 and exactly one line on stderr, naming the fix.
fn assert_refused(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("perflab: "), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in {err}");
}

// ---------------------------------------------------------------------------------------
// A panic that slips through.

#[test]
fn a_panic_on_the_main_thread_is_one_line_a_crash_file_and_exit_code_1() {
    let r = Results::new("crash-main");
    let tmp = Scratch::new("crash-main");
    let o = perflab_in(&r, tmp.path(), Some("main"), &["runs"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "one line, no backtrace: {err}");
    assert!(
        err.starts_with("perflab: bug: deliberate panic for tests (PERFLAB_TEST_PANIC=main) at src/commands/crash.rs:"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("; please report it"), "{err}");
    assert!(
        !err.contains("panicked at") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    let path = details_path(err.trim_end());
    assert!(
        path.starts_with(tmp.path()),
        "in the temporary folder: {path:?}"
    );
    assert_eq!(crash_files(tmp.path()), vec![path.clone()]);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("perflab-crash-") && name.ends_with(".txt"),
        "{name}"
    );
    let details = std::fs::read_to_string(&path).expect("the crash file");
    for needle in [
        "message:  deliberate panic for tests (PERFLAB_TEST_PANIC=main)",
        "location: src/commands/crash.rs:",
        "thread:   main",
        &format!("version:  {}", env!("CARGO_PKG_VERSION")),
        "backtrace:",
        "crash::hook",
    ] {
        assert!(
            details.contains(needle),
            "{needle:?} missing from {details}"
        );
    }
    // A second crash gets a file of its own.
    let o = perflab_in(&r, tmp.path(), Some("main"), &["runs"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(crash_files(tmp.path()).len(), 2);
}

#[test]
fn a_panic_on_a_worker_fails_the_step_and_saves_the_record() {
    let r = Results::new("crash-worker");
    let tmp = Scratch::new("crash-worker");
    let o = perflab_in(
        &r,
        tmp.path(),
        Some("worker"),
        &["null", "--duration", "200ms", "--warmup", "0s", "--quiet"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.contains("panicked at"),
        "no default panic message: {err}"
    );
    let bug: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("perflab: bug: "))
        .collect();
    assert_eq!(bug.len(), 1, "one bug line: {err}");
    assert!(
        bug[0].contains("(PERFLAB_TEST_PANIC=worker) at src/workload/null/mod.rs:"),
        "{err}"
    );
    let details = std::fs::read_to_string(details_path(bug[0])).expect("the crash file");
    assert!(details.contains("thread:   perflab-worker-0"), "{details}");
    assert!(err.contains("step 1 failed"), "{err}");
    // The record is saved, as for any failed step.
    let runs = perflab(&r, &["runs", "--json"]);
    let v = common::json(&runs);
    assert_eq!(v[0]["status"], "failed", "{v}");
}

#[test]
fn a_panic_while_a_session_opens_fails_the_step_instead_of_hanging() {
    let r = Results::new("crash-open");
    let tmp = Scratch::new("crash-open");
    // Worker 0 dies before it counts itself as open; worker 1 opens and waits for it.
    let o = perflab_in(
        &r,
        tmp.path(),
        Some("open"),
        &["null", "--threads", "2", "--duration", "200ms", "--quiet"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("(PERFLAB_TEST_PANIC=open)"), "{err}");
    assert!(err.contains("step 1 failed"), "{err}");
    let v = common::json(&perflab(&r, &["runs", "--json"]));
    assert_eq!(v[0]["status"], "failed", "{v}");
}

// ---------------------------------------------------------------------------------------
// io --path.

#[test]
fn io_refuses_a_path_that_does_not_exist_and_creates_nothing() {
    let r = Results::new("io-missing");
    let base = Scratch::new("io-missing");
    let before = base.entries();
    for missing in ["typo", "no/such/dir"] {
        let p = base.path().join(missing);
        let o = perflab(
            &r,
            &[
                "io",
                "--path",
                p.to_str().unwrap(),
                "--size",
                "1m",
                "--duration",
                "100ms",
                "--warmup",
                "0s",
            ],
        );
        assert_refused(&o, "does not exist");
        assert!(stderr(&o).contains(missing), "{}", stderr(&o));
        assert!(!p.exists(), "{} was created", p.display());
    }
    // Also in surface mode and with several paths, one of them missing.
    let good = base.path().to_str().unwrap().to_string();
    let bad = base.path().join("typo").display().to_string();
    let o = perflab(&r, &["io", "--mode", "surface", "--path", &bad]);
    assert_refused(&o, "existing directory");
    let o = perflab(&r, &["io", "--path", &good, "--path", &bad, "--size", "1m"]);
    assert_refused(&o, "does not exist");
    assert_eq!(base.entries(), before, "nothing created");
}

#[test]
fn io_still_makes_its_own_files_in_an_existing_directory() {
    let r = Results::new("io-existing");
    let base = Scratch::new("io-existing");
    let o = perflab(
        &r,
        &[
            "io",
            "--path",
            base.path().to_str().unwrap(),
            "--size",
            "1m",
            "--rw",
            "write",
            "--direct",
            "0",
            "--engine",
            "sync",
            "--duration",
            "100ms",
            "--warmup",
            "0s",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        base.entries().is_empty(),
        "its files are removed afterwards"
    );
}

// ---------------------------------------------------------------------------------------
// fio-style bare --direct.

fn io_args(extra: &[&str]) -> perflab::workload::io::args::IoArgs {
    perflab::workload::kind::parse(&perflab::workload::io::KIND, extra).expect("parses")
}

#[test]
fn a_bare_direct_means_direct_1() {
    assert_eq!(io_args(&[]).direct, "1", "the default");
    assert_eq!(io_args(&["--direct"]).direct, "1", "bare, last");
    assert_eq!(io_args(&["--direct", "0"]).direct, "0");
    assert_eq!(io_args(&["--direct", "1"]).direct, "1");
    assert_eq!(io_args(&["--direct=0"]).direct, "0");
    assert_eq!(io_args(&["--direct=1"]).direct, "1");
    let a = io_args(&["--direct", "--rw", "read"]);
    assert_eq!(
        (a.direct.as_str(), a.rw.as_str()),
        ("1", "read"),
        "bare, then an option"
    );
    let a = io_args(&["--direct", "--prefill"]);
    assert_eq!(a.direct, "1");
    assert!(a.prefill);
}

#[test]
fn a_bare_direct_reaches_the_spec() {
    let base = Scratch::new("direct-spec");
    let dir = base.path().to_str().unwrap().to_string();
    let mut env = Environment::default();
    env.memory.available_bytes = Some(8 << 30);
    for (args, want) in [
        (vec!["--direct"], true),
        (vec!["--direct", "--rw", "read"], true),
        (vec!["--direct", "0"], false),
        (vec!["--direct=0"], false),
    ] {
        let mut all = vec!["perflab", "io", "--path", &dir, "--size", "1m"];
        all.extend(&args);
        let cli = perflab::cli::parse(&all).expect("parses");
        let spec = perflab::commands::workload_spec(&cli.what, &env)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .expect("a workload");
        let Some(io) = spec.workload.get::<perflab::workload::io::IoSpec>() else {
            panic!("not io")
        };
        assert_eq!(io.direct, want, "{args:?}");
    }
    assert!(base.entries().is_empty(), "building a spec writes nothing");
}

#[test]
fn direct_takes_one_value_not_a_sweep() {
    let r = Results::new("direct-bad");
    let o = perflab(&r, &["io", "--direct", "0,1"]);
    assert_refused(&o, "--direct \"0,1\": use 1 or 0");
    let o = perflab(&r, &["io", "--direct", "2"]);
    assert_refused(&o, "use 1 or 0");
}

// ---------------------------------------------------------------------------------------
// Bad inputs found by the property tests and by reading the parsers, one test each.

#[test]
fn durations_beyond_a_year_are_refused() {
    let r = Results::new("long");
    for (option, value) in [
        ("--duration", "99999999999999999999"),
        ("--warmup", "9000000000000000000"),
        ("--think", "8761h"),
        ("--interval", "1e9999"),
    ] {
        let o = perflab(&r, &["null", option, value]);
        assert_eq!(o.status.code(), Some(2), "{option} {value}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    let o = perflab(&r, &["null", "--spin", "9000000000000000000"]);
    assert_refused(&o, "at most a year");
    let o = perflab(&r, &["null", "--warmup", "9000000000000000000"]);
    assert_refused(&o, "at most a year");
}

#[test]
fn rates_outside_what_can_be_kept_are_refused() {
    let r = Results::new("rates");
    let o = perflab(&r, &["null", "--rate", "0.0000000001/h"]);
    assert_refused(&o, "too low");
    // 1e300 is a finite number; a million of them a millisecond is not.
    let huge = format!("{}M/ms", "9".repeat(300));
    let o = perflab(&r, &["null", "--rate", &huge]);
    assert_refused(&o, "too high");
}

#[test]
fn sweeps_with_nan_or_infinite_factors_or_too_many_steps_are_refused() {
    let r = Results::new("sweeps");
    for threads in ["1..8:xNaN", "1..8:xinf"] {
        let o = perflab(&r, &["null", "--threads", threads]);
        assert_refused(&o, "factor above 1");
    }
    let many = vec!["1"; 5000].join(",");
    let o = perflab(&r, &["null", "--threads", &many]);
    assert_refused(&o, "too many values");
    let o = perflab(
        &r,
        &["null", "--threads", "1..4000", "--spin", "1ns..4000ns"],
    );
    assert_refused(&o, "steps");
}

#[test]
fn sizes_and_counts_past_u64_are_refused_not_saturated() {
    let r = Results::new("sizes");
    let o = perflab(&r, &["io", "--size", "16777216t"]);
    assert_refused(&o, "too large");
    let o = perflab(&r, &["null", "--seed", "18446744073709551616"]);
    assert_refused(&o, "too large");
}

#[test]
fn output_files_in_a_missing_folder_are_refused_with_exit_code_2() {
    let r = Results::new("output");
    let base = Scratch::new("output");
    let o = perflab(&r, &["null", "--ops", "1k", "--warmup", "0s", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let missing = base.path().join("missing");
    for args in [
        vec!["export", "last", "-o"],
        vec!["report", "last", "-o"],
        vec!["compare", "last", "last", "-o"],
    ] {
        for name in ["out.json", "out.md"] {
            let target = missing.join(name);
            let mut all = args.clone();
            let t = target.display().to_string();
            all.push(&t);
            let o = perflab(&r, &all);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
            let last = err.lines().last().unwrap_or_default();
            assert!(last.contains("does not exist; create it first"), "{err}");
        }
    }
    assert!(!missing.exists(), "no folder was created");
}

#[test]
fn a_record_whose_series_ends_past_u64_renders() {
    // tests/fuzz.rs found this: `start_ns + duration_ns` overflowed in the time-series chart.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records/v1-null-complete.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let series = v["steps"][0]["trials"][0]["series"]
        .as_array_mut()
        .expect("a series");
    let last = series.last_mut().expect("a point");
    last["start_ns"] = serde_json::json!(u64::MAX);
    let record = perflab::archive::parse_record(&path, &v.to_string()).expect("loads");
    let html = perflab::report::to_html(&[record], &perflab::report::Options::default());
    assert!(html.contains("<svg"));
}

#[test]
fn a_missing_argument_is_named_on_its_one_line() {
    // Found by tests/fuzz.rs: clap lists missing arguments on the lines after its heading,
    // and the one-line error kept only "the following required arguments were not provided:".
    let r = Results::new("missing-args");
    let o = perflab(&r, &["tag"]);
    assert_refused(&o, "not provided: <RUN>, <NAME>");
    let o = perflab(&r, &["tag", "last"]);
    assert_refused(&o, "not provided: <NAME>");
}

#[test]
fn a_file_given_as_the_results_folder_is_refused_with_exit_code_2() {
    // Found by tests/fuzz.rs: `--results FILE` ended with exit code 1, as a failed run.
    let base = Scratch::new("results-file");
    let file = base.path().join("file");
    std::fs::write(&file, b"not a folder").unwrap();
    for results in [file.clone(), file.join("below")] {
        for args in [vec!["runs"], vec!["null", "--ops", "1k"]] {
            let o = Command::new(env!("CARGO_BIN_EXE_perflab"))
                .args(&args)
                .arg("--results")
                .arg(&results)
                .env("NO_COLOR", "1")
                .output()
                .expect("the perflab binary runs");
            assert_refused(&o, "not a folder");
        }
    }
}
