//! CLI transcripts through the real binary, on the null target (no hardware, no servers).

mod common;

use common::{Results, json, stderr, stdout};
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

#[test]
fn a_null_sweep_prints_a_table_and_archives_the_run() {
    let r = Results::new("sweep");
    let o = perflab(
        &r,
        &[
            "null",
            "--threads",
            "1,2",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("threads") && out.contains("ops/s") && out.contains("p99"),
        "{out}"
    );
    assert!(out.contains("peak:"), "{out}");
    assert!(
        out.lines()
            .filter(|l| l.trim_start().starts_with(['1', '2']))
            .count()
            >= 2,
        "{out}"
    );

    let runs = perflab(&r, &["runs"]);
    assert!(runs.status.success());
    assert!(stdout(&runs).contains("complete"), "{}", stdout(&runs));

    let shown = perflab(&r, &["show", "last"]);
    assert!(shown.status.success());
    assert!(stdout(&shown).contains("peak:"));

    let csv = perflab(&r, &["export", "last", "--format", "csv"]);
    assert!(csv.status.success());
    let text = stdout(&csv);
    assert_eq!(
        text.lines().count(),
        3,
        "header and one row per step: {text}"
    );
    assert!(text.starts_with("run_id,workload,step,"));
}

#[test]
fn json_output_is_the_record() {
    let r = Results::new("json");
    let o = perflab(
        &r,
        &[
            "null",
            "--ops",
            "10k",
            "--threads",
            "2",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rec = json(&o);
    assert_eq!(rec["schema_version"], 3);
    assert_eq!(rec["status"], "complete");
    let trial = &rec["steps"][0]["trials"][0];
    assert_eq!(trial["ops"], 10_000, "--ops counts exactly");
    assert_eq!(trial["latency"]["count"], 10_000);
    assert!(trial["latency_hdr"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(rec["env"]["cpu"].is_object());
}

#[test]
fn failed_ops_are_counted_not_hidden() {
    let r = Results::new("errors");
    let o = perflab(
        &r,
        &[
            "null",
            "--ops",
            "1000",
            "--fail-every",
            "10",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rec = json(&o);
    let trial = &rec["steps"][0]["trials"][0];
    assert_eq!(trial["errors"], 100);
    assert_eq!(trial["ops"], 900);
    // Counted by kind too, in the trial and the step: null's failures are not sorted further.
    assert_eq!(trial["errors_by_kind"], serde_json::json!({ "other": 100 }));
    assert_eq!(
        rec["steps"][0]["summary"]["errors_by_kind"],
        serde_json::json!({ "other": 100 })
    );
    assert!(
        trial["error_samples"][0]
            .as_str()
            .unwrap()
            .contains("deliberate")
    );
    assert!(
        rec["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "errors")
    );
}

#[test]
fn open_loop_keeps_its_rate_and_reports_the_schedule() {
    let r = Results::new("open");
    let o = perflab(
        &r,
        &[
            "null",
            "--rate",
            "2000/s",
            "--arrival",
            "uniform",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rec = json(&o);
    let trial = &rec["steps"][0]["trials"][0];
    let ops = trial["ops"].as_f64().unwrap();
    assert!(
        (1800.0..=2200.0).contains(&ops),
        "about 2000 ops in 1s at 2000/s, got {ops}"
    );
    assert_eq!(trial["schedule"]["target_ops_per_sec"], 2000.0);
    assert!(trial["service_latency"].is_object());
    assert_eq!(rec["spec"]["load"]["model"], "open");
}

#[test]
fn think_time_slows_a_closed_loop() {
    let r = Results::new("think");
    let o = perflab(
        &r,
        &[
            "null",
            "--think",
            "10ms",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ops = json(&o)["steps"][0]["trials"][0]["ops"].as_u64().unwrap();
    assert!(
        (20..=55).contains(&ops),
        "about 50 ops in 500ms with 10ms think, got {ops}"
    );
}

/// Each bad input: exit code 2 and one line on stderr that names the fix.
#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let r = Results::new("bad");
    let cases: &[(&[&str], &str)] = &[
        (&["null", "--threads", "0"], "between 1 and"),
        (&["null", "--duration", "5x"], "unit"),
        (&["null", "--threads", "8..1"], "upwards"),
        (&["null", "--bogus"], "--bogus"),
        (&["memory", "--kernel", "bogus"], "unknown kernel"),
        (&["memory", "--kernel", "latency,triad"], "separately"),
        (&["memory", "--size", "100t"], "lower --size"),
        (&["show", "no-such-run"], "perflab runs"),
        (&["run", "no-such-suite"], "suites are"),
        (&["null", "--rate", "0/s"], "above zero"),
        (
            &["null", "--think", "1ms", "--rate", "10/s"],
            "cannot be used with",
        ),
        // -M means a wire protocol: SQLite has none to choose.
        (&["oltp", "-M", "simple"], "SQLite prepares every statement"),
        (&["scan", "--query-mode", "extended"], "leave -M out"),
        (&["olap", "-M", "fast"], "simple, extended or prepared"),
    ];
    for (args, hint) in cases {
        let o = perflab(&r, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?} should print one line: {err}"
        );
        assert!(err.starts_with("perflab: "), "{args:?}: {err}");
        assert!(
            err.contains(hint),
            "{args:?} should mention {hint:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn export_never_overwrites_a_file() {
    let r = Results::new("export");
    assert!(
        perflab(&r, &["null", "--ops", "100", "--warmup", "0s"])
            .status
            .success()
    );
    let file = r.path().join("existing.csv");
    std::fs::write(&file, "precious").unwrap();
    let o = perflab(
        &r,
        &[
            "export",
            "last",
            "--format",
            "csv",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    let fresh = r.path().join("fresh.csv");
    let o = perflab(
        &r,
        &[
            "export",
            "last",
            "--format",
            "csv",
            "-o",
            fresh.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&fresh)
            .unwrap()
            .starts_with("run_id,")
    );
}

#[test]
fn info_commands_work() {
    let r = Results::new("info");
    let o = perflab(&r, &["sysinfo"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("cpu"));
    let o = perflab(&r, &["sysinfo", "--json"]);
    assert!(json(&o)["cpu"].is_object());
    let o = perflab(&r, &["targets"]);
    assert!(stdout(&o).contains("null") && stdout(&o).contains("memory"));
    let o = perflab(&r, &["runs"]);
    assert!(o.status.success(), "an empty archive is not an error");
}

/// Ctrl-C during a sweep: the finished steps are archived, the run is marked incomplete, and
/// it shows and exports like any other.
#[test]
fn an_interrupted_run_keeps_its_finished_steps() {
    let r = Results::new("interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args([
            "null",
            "--spin",
            "0,1us,2us,3us,4us,5us,6us,7us",
            "--duration",
            "400ms",
            "--warmup",
            "0s",
            "--quiet",
        ])
        .arg("--results")
        .arg(r.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until two steps are saved, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(30);
    let steps_saved = || -> usize {
        let runs = r.path().join("runs");
        let Ok(mut dirs) = std::fs::read_dir(&runs) else {
            return 0;
        };
        let Some(Ok(dir)) = dirs.next() else { return 0 };
        std::fs::read_to_string(dir.path().join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["steps"].as_array().map(|s| s.len()))
            .unwrap_or(0)
    };
    while steps_saved() < 2 {
        assert!(Instant::now() < deadline, "two steps were never saved");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));

    let shown = perflab(&r, &["show", "last", "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let rec = json(&shown);
    assert_eq!(rec["status"], "incomplete");
    let steps = rec["steps"].as_array().unwrap().len();
    assert!(
        (2..8).contains(&steps),
        "finished steps kept, the rest not run: {steps}"
    );
    assert!(
        rec["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "interrupted")
    );
    let runs = perflab(&r, &["runs"]);
    assert!(stdout(&runs).contains("incomplete"));
}

/// Each memory kernel class and the CPU workload, on tiny sizes: they run, count their work
/// and report their figures (the figures themselves are for benchmarks, not tests).
#[test]
fn memory_and_cpu_workloads_run_on_small_sizes() {
    let r = Results::new("workloads");
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--warmup", "0s", "--duration", "200ms", "--json", "--quiet"]);
        let o = perflab(&r, &all);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        json(&o)
    };
    let bw = run(&[
        "memory",
        "--kernel",
        "copy,triad",
        "--size",
        "1m",
        "--threads",
        "1,2",
    ]);
    assert_eq!(bw["steps"].as_array().unwrap().len(), 4);
    let t = &bw["steps"][3]["trials"][0];
    assert_eq!(bw["steps"][3]["params"]["kernel"], "triad");
    // Triad moves 24 bytes per element: 1 MiB arrays hold 131072 elements.
    assert_eq!(t["bytes"].as_u64().unwrap() % (131_072 / 2 * 24), 0);
    assert!(t["bytes_per_sec"].as_f64().unwrap() > 0.0);

    let lat = run(&["memory", "--kernel", "latency", "--size", "16k,64k"]);
    assert_eq!(lat["headline"]["metric"], "ns_per_load");
    assert_eq!(lat["steps"][1]["params"]["size_bytes"], 65536);
    assert!(
        lat["steps"][0]["trials"][0]["figures"]["ns_per_load"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let lotto = run(&[
        "memory",
        "--kernel",
        "lotto",
        "--size",
        "1m",
        "--threads",
        "2",
    ]);
    assert!(
        lotto["steps"][0]["trials"][0]["figures"]["alloc_ns"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let cpu = run(&["cpu", "--threads", "1,2", "--side", "16"]);
    let t = &cpu["steps"][1]["trials"][0];
    assert_eq!(
        t["items"].as_u64().unwrap(),
        t["ops"].as_u64().unwrap() * 256,
        "16x16 pixels per fractal"
    );
    assert!(
        cpu["analysis"]["scaling"][1]["efficiency"]
            .as_f64()
            .is_some()
    );
}

#[test]
fn compare_takes_a_record_file_by_its_path() {
    let r = Results::new("compare-file");
    let args = [
        "null",
        "--duration",
        "100ms",
        "--warmup",
        "0s",
        "--json",
        "--quiet",
    ];
    let first = json(&perflab(&r, &args));
    let o = perflab(&r, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // The first run's file, copied out of the archive as a record from elsewhere would be.
    let id = first["id"].as_str().unwrap();
    let copy = r.path().join("elsewhere.json");
    std::fs::copy(r.path().join("runs").join(id).join("run.json"), &copy).unwrap();
    let o = perflab(&r, &["compare", copy.to_str().unwrap(), "last"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(id), "{}", stdout(&o));
    let o = perflab(&r, &["compare", "./missing.json", "last"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.json"), "{}", stderr(&o));
}

#[test]
fn records_from_another_machine_are_imported_once_and_compared() {
    let elsewhere = Results::new("import-from");
    let here = Results::new("import-to");
    let args = [
        "null",
        "--duration",
        "100ms",
        "--warmup",
        "0s",
        "--json",
        "--quiet",
    ];
    let theirs = json(&perflab(&elsewhere, &args));
    let id = theirs["id"].as_str().unwrap().to_string();
    let ours = json(&perflab(&here, &args));
    // A whole results folder: its run.json files are found below it.
    let o = perflab(&here, &["import", elsewhere.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("imported {id}")),
        "{}",
        stdout(&o)
    );
    // The same record again changes nothing.
    let o = perflab(&here, &["import", elsewhere.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("in the archive already"),
        "{}",
        stdout(&o)
    );
    // It takes part like any run here.
    let o = perflab(&here, &["compare", &id, ours["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = perflab(&here, &["runs"]);
    assert!(stdout(&o).contains(&id), "{}", stdout(&o));
    // A clone of this machine (the same host name, another machine id) with a run of the
    // same id: it joins beside ours, named by host and machine, and `runs` says which is which.
    let mut clone = ours.clone();
    clone["env"]["machine"] = serde_json::json!("abcdef012345");
    clone["steps"] = serde_json::json!([]);
    let file = here.path().join("clone.json");
    std::fs::write(&file, serde_json::to_string(&clone).unwrap()).unwrap();
    let o = perflab(&here, &["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let host = ours["env"]["hostname"].as_str().unwrap_or("unknown-host");
    let ours_id = ours["id"].as_str().unwrap();
    assert!(
        stdout(&o).contains(&format!("imported {ours_id}-")) && stdout(&o).contains("-abcdef"),
        "{}",
        stdout(&o)
    );
    let o = perflab(&here, &["runs"]);
    assert!(stdout(&o).contains("host"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!("{host} (abcdef)")),
        "{}",
        stdout(&o)
    );
    // What is not a record is one line, exit 2, and nothing joins.
    let junk = here.path().join("junk");
    std::fs::create_dir_all(&junk).unwrap();
    let o = perflab(&here, &["import", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::write(junk.join("run.json"), "{}").unwrap();
    let o = perflab(&here, &["import", junk.join("run.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn zipped_options_step_together_in_the_record() {
    let r = Results::new("zip");
    let o = perflab(
        &r,
        &[
            "null",
            "--threads",
            "1,2",
            "--spin",
            "1ns,2ns",
            "--zip",
            "threads,spin",
            "--duration",
            "100ms",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The progress names every zipped axis, not only the group's first.
    assert!(
        stderr(&o).contains("step 2/2 threads=2 spin_ns=2"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(
        v["spec"]["zip"],
        serde_json::json!([["threads", "spin_ns"]])
    );
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "two steps, not four");
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["swept"], serde_json::json!(["threads"]), "{s}");
        assert_eq!(s["params"]["threads"], i as u64 + 1);
        assert_eq!(s["params"]["spin_ns"], i as u64 + 1);
    }
}

/// The manual page and the completion scripts come from the command line's own
/// definitions: every command and each of its options is in them, and docs/perflab.1 is what
/// `perflab man` prints (`PERFLAB_BLESS=1 cargo test --test cli man_page` writes it anew).
#[test]
fn man_page_and_completions_are_in_step_with_the_cli() {
    let r = Results::new("man");
    let run = |args: &[&str]| {
        let o = perflab(&r, args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    let man = run(&["man"]);
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/perflab.1");
    if std::env::var_os("PERFLAB_BLESS").is_some() {
        std::fs::write(&committed, &man).unwrap();
    }
    assert!(
        std::fs::read_to_string(&committed).is_ok_and(|c| c == man),
        "docs/perflab.1 is not what 'perflab man' prints: PERFLAB_BLESS=1 cargo test --test cli man_page"
    );
    let bash = run(&["completions", "bash"]);
    let zsh = run(&["completions", "zsh"]);
    let fish = run(&["completions", "fish"]);
    let cli = perflab::cli::command();
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        assert!(
            man.contains(&format!(".SH \"PERFLAB {}\"", name.to_uppercase())),
            "{name}"
        );
        assert!(
            bash.contains(name) && zsh.contains(name) && fish.contains(name),
            "{name}"
        );
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            let what = format!("perflab {name} --{long}");
            assert!(
                man.contains(&format!("\\-\\-{}", long.replace('-', "\\-"))),
                "man: {what}"
            );
            assert!(bash.contains(&format!("--{long}")), "bash: {what}");
            assert!(zsh.contains(&format!("--{long}")), "zsh: {what}");
            assert!(fish.contains(&format!("-l {long}")), "fish: {what}");
        }
    }
    // The completions know the values an option takes from a fixed list.
    assert!(
        bash.contains("bash zsh fish"),
        "the shells of 'completions'"
    );
}

#[test]
fn every_command_says_what_it_does_in_the_help() {
    let r = Results::new("cli-help");
    let o = perflab(&r, &["--help"]);
    assert!(o.status.success());
    let text = common::stdout(&o);
    // Each command's own line, not one borrowed from a shared option group.
    for (command, words) in [("io", "Storage"), ("memory", "emory"), ("study", "tud")] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("no {command} line in {text}"));
        assert!(line.contains(words), "{command}: {line}");
    }
    assert!(!text.contains("live outputs' options"), "{text}");
}
