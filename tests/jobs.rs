//! `perflab jobs`: K copies of a command and batches of N jobs through K slots, pinned or
//! not; failing jobs, and bad inputs. Only behaviour is asserted (jobs done, figures present
//! and sane), never timings: the machine may be shared.

mod common;

use common::{Results, json, stderr};
use serde_json::Value;
use std::process::Output;

fn perflab(results: &Results, args: &[&str]) -> Output {
    let mut all = vec!["jobs"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "--quiet"]);
    common::run(results, &all)
}

/// Runs `perflab jobs ARGS --json`, which must succeed: its record.
fn jobs(results: &Results, args: &[&str]) -> Value {
    let o = perflab(results, args);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

/// A CPU-bound job of a few tens of milliseconds that every POSIX system has.
const BUSY: &str = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";

fn figure(trial: &Value, name: &str) -> f64 {
    trial["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no figure {name}: {}", trial["figures"]))
}

fn copies(trial: &Value) -> Vec<&Value> {
    let mut c: Vec<&Value> = trial["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| g["by"] == "copy")
        .collect();
    c.sort_by_key(|g| g["key"].as_str().unwrap().parse::<u64>().unwrap());
    c
}

#[test]
fn copies_of_a_cpu_bound_job_each_run_once_and_scale_against_one_copy() {
    let r = Results::new("jobs-copies");
    let v = jobs(
        &r,
        &[
            "--shell",
            "--command",
            BUSY,
            "--name",
            "busy",
            "--copies",
            "1,2",
        ],
    );
    assert_eq!(v["workload"], "jobs");
    assert_eq!(v["headline"]["metric"], "jobs_per_hour");
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    for (step, k) in steps.iter().zip([1u64, 2]) {
        assert_eq!(step["params"]["threads"], k);
        let t = &step["trials"][0];
        assert_eq!(t["ops"], k, "each copy ran exactly one job");
        assert_eq!(t["errors"], 0);
        assert!(figure(t, "jobs_per_hour") > 0.0);
        assert!(
            figure(t, "cpu_per_job_ns") > 0.0,
            "the kernel's CPU account"
        );
        assert!(figure(t, "max_rss_bytes") > 0.0);
        assert!(figure(t, "elapsed_min_ns") <= figure(t, "elapsed_max_ns"));
        let c = copies(t);
        assert_eq!(c.len() as u64, k);
        for (i, g) in c.iter().enumerate() {
            assert_eq!(g["ops"], 1);
            assert_eq!(g["label"], "not pinned");
            assert!(figure(t, &format!("copy_{}_cpu_ns", i + 1)) > 0.0);
        }
        // The op kind is the command's name.
        assert!(
            t["groups"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["by"] == "kind" && g["key"] == "busy")
        );
    }
    // Relative throughput: the analysis' scaling of jobs per hour against one copy.
    let scaling = v["analysis"]["scaling"].as_array().expect("scaling");
    let two = scaling
        .iter()
        .find(|s| s["step"] == 1)
        .expect("step 1 scales against step 0");
    let speedup = two["speedup"].as_f64().unwrap();
    // Its value is a timing (a busy machine starves one step more than the other), so only
    // that it was worked out is asserted.
    assert!(speedup.is_finite() && speedup > 0.0, "{speedup}");
    // The table says it in copies.
    let o = common::run(&r, &["show", "last"]);
    let text = common::stdout(&o);
    assert!(
        text.contains("throughput relative to 1 copy: 2 copies"),
        "{text}"
    );
    assert!(text.contains("each copy"), "{text}");
}

#[test]
fn a_batch_of_n_jobs_through_k_slots_finishes_exactly_n() {
    let r = Results::new("jobs-batch");
    let v = jobs(&r, &["--command", "true", "--jobs", "7", "--copies", "3"]);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["ops"], 7);
    assert_eq!(t["errors"], 0);
    assert_eq!(v["spec"]["jobs"], 7);
    let done: u64 = copies(t).iter().map(|g| g["ops"].as_u64().unwrap()).sum();
    assert_eq!(done, 7);
    assert!(figure(t, "seconds") > 0.0);
}

#[test]
fn a_mixed_batch_follows_the_weights() {
    let r = Results::new("jobs-mix");
    let v = jobs(
        &r,
        &[
            "--command",
            "true",
            "--command",
            "sh -c 'exit 0'",
            "--weights",
            "3,1",
            "--jobs",
            "8",
            "--copies",
            "2",
        ],
    );
    let t = &v["steps"][0]["trials"][0];
    let kind = |k: &str| {
        t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["by"] == "kind" && g["key"] == k)
            .map(|g| g["ops"].as_u64().unwrap())
    };
    assert_eq!(kind("true"), Some(6));
    assert_eq!(kind("sh"), Some(2));
}

#[test]
fn a_failing_job_is_an_error_with_its_status_and_stderr() {
    let r = Results::new("jobs-fail");
    let o = perflab(
        &r,
        &[
            "--shell",
            "--command",
            "echo boom >&2; exit 3",
            "--copies",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["errors"], 2);
    assert_eq!(t["ops"], 0);
    let sample = t["error_samples"][0].as_str().expect("an error sample");
    assert!(sample.contains("exit status 3"), "{sample}");
    assert!(sample.contains("boom"), "{sample}");
    assert!(stderr(&o).contains("job(s) failed"), "{}", stderr(&o));

    let o = perflab(&r, &["--command", "false", "--copies", "1"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert!(
        v["steps"][0]["trials"][0]["error_samples"][0]
            .as_str()
            .unwrap()
            .contains("false: exit status 1")
    );
}

/// `--placement compact,spread` sweeps: every copy count each way, and the scaling line is
/// given per placement.
#[test]
fn a_sweep_of_placements_runs_every_copy_count_each_way() {
    let r = Results::new("jobs-placement-sweep");
    let o = common::run(
        &r,
        &[
            "jobs",
            "--shell",
            "--command",
            BUSY,
            "--copies",
            "1,2",
            "--placement",
            "compact,spread",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    for p in ["compact", "spread"] {
        assert!(
            out.contains(&format!(
                "throughput relative to 1 copy (placement={p}): 2 copies"
            )),
            "{out}"
        );
    }
    assert!(out.contains("pinned compact, then pinned spread"), "{out}");
    let v = jobs(
        &r,
        &[
            "--command",
            "true",
            "--copies",
            "1,2",
            "--placement",
            "spread,compact",
        ],
    );
    let seen: Vec<(String, u64)> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["params"]["placement"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                s["params"]["threads"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("spread".to_string(), 1),
            ("spread".to_string(), 2),
            ("compact".to_string(), 1),
            ("compact".to_string(), 2)
        ]
    );
    let o = perflab(&r, &["--command", "true", "--placement", "compact,tight"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a list such as compact,spread"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn placement_discloses_each_copys_cpu() {
    let r = Results::new("jobs-placement");
    for placement in ["compact", "spread"] {
        let v = jobs(
            &r,
            &[
                "--command",
                "true",
                "--copies",
                "2",
                "--placement",
                placement,
            ],
        );
        assert_eq!(v["spec"]["placement"], placement);
        let order: Vec<u64> = v["spec"]["cpu_order"]
            .as_array()
            .expect("cpu_order")
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert!(!order.is_empty());
        let t = &v["steps"][0]["trials"][0];
        for (i, g) in copies(t).iter().enumerate() {
            let cpu = order[i % order.len()];
            assert_eq!(g["label"], format!("CPU {cpu}"), "{placement}");
        }
    }
}

#[test]
fn more_copies_than_cpus_are_allowed_but_warned_about() {
    let r = Results::new("jobs-over");
    let v = jobs(&r, &["--command", "true", "--copies", "16"]);
    let available = v["spec"]["cpus_available"]
        .as_u64()
        .expect("cpus_available");
    assert_eq!(v["steps"][0]["trials"][0]["ops"], 16);
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "oversubscribed");
    assert_eq!(warned, available < 16, "{}", v["warnings"]);
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let r = Results::new("jobs-bad");
    let cases: [(&[&str], &str); 10] = [
        (&[], "--command"),
        (&["--command", ""], "empty"),
        (&["--command", "   "], "empty"),
        (&["--command", "echo 'a"], "single quote"),
        (&["--command", "perflab-no-such-program x"], "not on PATH"),
        (&["--command", "true", "--copies", "0"], "--copies"),
        (&["--command", "true", "--jobs", "0"], "--jobs"),
        (
            &["--command", "true", "--command", "false", "--weights", "1"],
            "one weight per --command",
        ),
        (
            &["--command", "true", "--placement", "packed"],
            "compact or spread",
        ),
        (&["--command", "true", "--weights", "x"], "--weights"),
    ];
    for (args, says) in cases {
        let o = perflab(&r, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
