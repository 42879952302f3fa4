//! Scale-out over MPI, with real `mpirun -np 2` and `-np 4` on this host (only one host is
//! available here; docs/scale-out.md says what that leaves untested). Built only with the
//! `mpi` feature: `cargo test --features mpi --test mpi` (`.ci/run` does).

#![cfg(feature = "mpi")]

mod common;

use common::Results;
use common::skip::skip_or_fail;
use perflab::record::RunRecord;
use perflab::record::histogram::decode;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One MPI job at a time: several at once on two cores would only measure each other.
static ONE_JOB: Mutex<()> = Mutex::new(());

fn mpirun_command(np: u32, results: &Results, args: &[&str]) -> Option<Command> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        skip_or_fail("mpirun is not installed", "openmpi-bin");
        return None;
    }
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--timeout",
        "120",
        "-np",
        &np.to_string(),
    ])
    .arg(env!("CARGO_BIN_EXE_perflab"))
    .args(args)
    .arg("--results")
    .arg(results.path())
    .env("NO_COLOR", "1")
    // Open MPI refuses root without these (CI runs as root).
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    // Shared memory on one host, no probing of network interfaces, and no single-copy
    // mechanism that a container's ptrace rules would refuse.
    .env("OMPI_MCA_btl", "self,vader")
    .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    .env("OMPI_MCA_plm", "isolated");
    Some(cmd)
}

fn mpirun(np: u32, results: &Results, args: &[&str]) -> Option<Output> {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let out = mpirun_command(np, results, args)?
        .output()
        .expect("mpirun runs");
    Some(out)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every record in the archive.
fn records(results: &Results) -> Vec<RunRecord> {
    let runs = results.path().join("runs");
    let Ok(dirs) = std::fs::read_dir(&runs) else {
        return Vec::new();
    };
    dirs.filter_map(|d| {
        let path = d.ok()?.path().join("run.json");
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    })
    .collect()
}

/// The run's record as saved matches docs/record.schema.json (its cluster, ranks and
/// `by: rank` parts included).
fn assert_matches_schema(results: &Results) {
    let runs = results.path().join("runs");
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&record)
        .map(|e| format!("at {}: {e}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn only_record(results: &Results, out: &Output) -> RunRecord {
    let mut all = records(results);
    assert_eq!(
        all.len(),
        1,
        "one record for the whole job; stderr: {}",
        text(&out.stderr)
    );
    all.remove(0)
}

#[test]
fn null_over_two_ranks_is_one_merged_record() {
    let results = Results::new("mpi-null");
    let Some(out) = mpirun(
        2,
        &results,
        &[
            "null",
            "--threads",
            "2",
            "--duration",
            "300ms",
            "--warmup",
            "50ms",
        ],
    ) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    // Rank 0 speaks for the run: one header, not one per rank.
    assert_eq!(text(&out.stdout).matches("perflab null: run").count(), 0);
    assert_eq!(text(&out.stderr).matches("perflab null: run").count(), 1);
    let r = only_record(&results, &out);
    let cluster = r.cluster.as_ref().expect("the record has its ranks");
    assert_eq!(cluster.ranks, 2);
    assert!(cluster.library.contains("MPI"), "{}", cluster.library);
    assert_eq!(cluster.members.len(), 2);
    assert_ne!(cluster.members[0].pid, cluster.members[1].pid);
    let t = &r.steps[0].trials[0];
    assert_eq!(t.workers, 2);
    let ranks: Vec<_> = t.groups.iter().filter(|g| g.by == "rank").collect();
    assert_eq!(ranks.len(), 2);
    assert!(ranks.iter().all(|g| g.ops > 0));
    // Merged, not averaged: the run's ops are the ranks' ops, and its histogram holds every
    // one of them.
    assert_eq!(t.ops, ranks.iter().map(|g| g.ops).sum::<u64>());
    assert_eq!(decode(&t.latency_hdr).unwrap().len(), t.ops);
    assert_eq!(t.latency.count, t.ops);
    let sync = t.ranks.expect("the trial says how the ranks kept step");
    assert_eq!((sync.ranks, sync.active), (2, 2));
    // Only loosely here: two ranks on two busy cores (docs/performance.md has the figure).
    assert!(sync.start_skew_ns < 100_000_000, "{sync:?}");
    // No histogram travels into the record beyond the run's own.
    assert!(t.groups.iter().all(|g| g.latency_hdr.is_none()));
    assert_matches_schema(&results);
}

#[test]
fn memory_over_four_ranks_merges_and_archives_once() {
    let results = Results::new("mpi-memory");
    let Some(out) = mpirun(
        4,
        &results,
        &[
            "memory",
            "--kernel",
            "triad",
            "--size",
            "4m",
            "--threads",
            "4",
            "--duration",
            "300ms",
            "--warmup",
            "50ms",
        ],
    ) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let r = only_record(&results, &out);
    assert_eq!(r.cluster.as_ref().unwrap().ranks, 4);
    let t = &r.steps[0].trials[0];
    assert_eq!(t.workers, 4);
    let ranks: Vec<_> = t.groups.iter().filter(|g| g.by == "rank").collect();
    assert_eq!(ranks.len(), 4);
    assert_eq!(t.bytes, ranks.iter().map(|g| g.bytes).sum::<u64>());
    assert!(t.bytes_per_sec > 0.0);
    // Every rank's machine is disclosed: all on this host, so none repeats rank 0's.
    let members = &r.cluster.as_ref().unwrap().members;
    assert_eq!(members.len(), 4);
    assert!(
        members
            .iter()
            .all(|m| m.host == members[0].host && m.env.is_none())
    );
}

#[test]
fn active_ranks_sweep_draws_the_curve_against_ranks() {
    let results = Results::new("mpi-active");
    let Some(out) = mpirun(
        4,
        &results,
        &[
            "null",
            "--threads",
            "1",
            "--rate-scope",
            "rank",
            "--active-ranks",
            "1,2,4",
            "--duration",
            "200ms",
            "--warmup",
            "0s",
        ],
    ) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let r = only_record(&results, &out);
    assert_eq!(r.steps.len(), 3);
    for (step, active) in r.steps.iter().zip([1u64, 2, 4]) {
        assert_eq!(step.params["active_ranks"], serde_json::json!(active));
        let t = &step.trials[0];
        // --rate-scope rank: each active rank runs --threads whole.
        assert_eq!(t.workers, active);
        assert_eq!(t.ranks.unwrap().active, active);
        let ranks = t.groups.iter().filter(|g| g.by == "rank").count() as u64;
        assert_eq!(ranks, active);
    }
    assert!(r.steps[0].swept.contains(&"active_ranks".to_string()));
    assert_matches_schema(&results);
}

#[test]
fn ops_and_rate_are_divided_over_the_ranks() {
    let results = Results::new("mpi-split");
    let Some(out) = mpirun(2, &results, &["null", "--threads", "3", "--ops", "1001"]) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let r = only_record(&results, &out);
    let t = &r.steps[0].trials[0];
    assert_eq!((t.workers, t.ops), (3, 1001));

    let results = Results::new("mpi-rate");
    let Some(out) = mpirun(
        2,
        &results,
        &[
            "null",
            "--threads",
            "2",
            "--rate",
            "2000/s",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
        ],
    ) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let r = only_record(&results, &out);
    let t = &r.steps[0].trials[0];
    let s = t.schedule.expect("open loop");
    // The run's rate, split: 1000/s on each rank.
    assert!((s.target_ops_per_sec - 2000.0).abs() < 1e-6, "{s:?}");
    let ranks: Vec<_> = t.groups.iter().filter(|g| g.by == "rank").collect();
    assert_eq!(ranks.len(), 2);
    for g in ranks {
        assert!(
            g.ops > 200 && g.ops < 800,
            "each rank near 500 ops: {}",
            g.ops
        );
    }
}

#[test]
fn a_killed_rank_ends_the_run_and_rank_0_keeps_the_finished_steps() {
    let results = Results::new("mpi-kill");
    let Some(mut cmd) = mpirun_command(
        2,
        &results,
        &[
            "null",
            "--threads",
            "2",
            "--spin",
            "0,1us,2us,3us,4us,5us",
            "--duration",
            "1s",
            "--warmup",
            "0s",
        ],
    ) else {
        return;
    };
    // Open MPI gives a rank 1 s between SIGTERM and SIGKILL when the job ends; on a loaded
    // machine that can be too short for rank 0 to save. docs/scale-out.md recommends more.
    cmd.env("OMPI_MCA_odls_base_sigkill_timeout", "5");
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun runs");
    // Once a step is saved, kill rank 1 (its pid is in the record).
    let deadline = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        assert!(
            Instant::now() < deadline,
            "no step was saved within a minute"
        );
        if let Some(r) = records(&results).pop()
            && !r.steps.is_empty()
            && let Some(m) = r.cluster.as_ref().and_then(|c| c.members.get(1))
        {
            break m.pid;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = Command::new("kill")
        .args(["-9", &victim.to_string()])
        .status();
    let out = child.wait_with_output().expect("mpirun ends");
    assert!(!out.status.success());
    let r = only_record(&results, &out);
    assert_ne!(r.status, perflab::record::Status::Complete);
    assert!(
        !r.steps.is_empty() && r.steps.len() < 6,
        "{}",
        r.steps.len()
    );
    let cut = r.cut_short.unwrap_or_else(|| {
        panic!(
            "the record says where the run stopped; stderr: {}",
            text(&out.stderr)
        )
    });
    assert!(cut.reason.contains("rank"), "{}", cut.reason);
}

#[test]
fn jobs_over_two_ranks_run_one_batch_with_every_copy_accounted() {
    let results = Results::new("mpi-jobs");
    let Some(out) = mpirun(
        2,
        &results,
        &[
            "jobs",
            "--command",
            "true",
            "--copies",
            "1,2",
            "--jobs",
            "7",
            "--placement",
            "compact",
        ],
    ) else {
        return;
    };
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let r = only_record(&results, &out);
    for (step, copies) in r.steps.iter().zip([1u64, 2]) {
        let t = &step.trials[0];
        // One batch of 7 over the run's copies, not 7 per rank.
        assert_eq!((t.workers, t.ops, t.errors), (copies, 7, 0));
        let per_copy: Vec<_> = t.groups.iter().filter(|g| g.by == "copy").collect();
        assert_eq!(per_copy.len() as u64, copies);
        assert_eq!(per_copy.iter().map(|g| g.ops).sum::<u64>(), 7);
        // Each copy pinned on its own host, from the first CPU of the order.
        assert!(
            per_copy.iter().all(|g| g.label.starts_with("CPU ")),
            "{per_copy:?}"
        );
        // Every copy's tally reached rank 0: the figures cover all of them.
        assert!(t.figures["jobs_per_hour"] > 0.0);
        assert!(t.figures.contains_key("cpu_per_job_ns"));
        for n in 1..=copies {
            assert!(
                t.figures.contains_key(&format!("copy_{n}_elapsed_ns")),
                "{:?}",
                t.figures
            );
        }
        assert!(!t.figures.keys().any(|k| k.starts_with("tally_")));
        let ranks = t.groups.iter().filter(|g| g.by == "rank").count() as u64;
        assert_eq!(ranks, copies);
    }
}

#[test]
fn a_workload_that_cannot_scale_out_is_refused_in_one_line() {
    let results = Results::new("mpi-refused");
    let Some(out) = mpirun(2, &results, &["oltp", "--duration", "1s"]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("perflab:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].contains("without mpirun"), "{err}");

    // Preparing a shared database, and the archive's commands, are done once.
    for args in [
        &["oltp", "prepare", "--target", "sqlite:///nonexistent/x.db"][..],
        &["runs"],
    ] {
        let Some(out) = mpirun(2, &results, args) else {
            return;
        };
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("perflab:")).collect();
        assert_eq!(ours.len(), 1, "{err}");
        assert!(ours[0].contains("done once"), "{err}");
    }
}

/// Ctrl-C on the launcher: Open MPI sends every rank SIGTERM, then SIGKILL a second later
/// (its default), whatever they are doing. Rank 0's workers are inside 2 s ops then, so
/// stopping them takes longer than that second; the record says where the run stopped all
/// the same, because rank 0 saves that the moment the signal comes.
#[test]
fn ctrl_c_under_open_mpi_records_where_the_run_stopped() {
    let results = Results::new("mpi-term");
    let Some(mut cmd) = mpirun_command(
        2,
        &results,
        &[
            "null",
            "--threads",
            "2",
            "--spin",
            "0,2s",
            "--duration",
            "1s",
            "--warmup",
            "0s",
        ],
    ) else {
        return;
    };
    cmd.env("OMPI_MCA_odls_base_sigkill_timeout", "1");
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "no step was saved within a minute"
        );
        if records(&results).pop().is_some_and(|r| !r.steps.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Into the second step, whose ops spin 2 s each.
    std::thread::sleep(Duration::from_millis(300));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().expect("mpirun ends");
    let r = only_record(&results, &out);
    assert_ne!(r.status, perflab::record::Status::Complete);
    assert_eq!(r.steps.len(), 1);
    let cut = r.cut_short.unwrap_or_else(|| {
        panic!(
            "the record says where the run stopped; stderr: {}",
            text(&out.stderr)
        )
    });
    assert_eq!(cut.step, 1, "{cut:?}");
    assert!(cut.reason.contains("interrupted"), "{cut:?}");
}
