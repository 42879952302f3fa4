//! Crash safety of the archive: real `perflab null` sweeps killed with SIGKILL (no handler,
//! no cleanup) at different moments, then every reading command on that archive.
//!
//! ```text
//!  kill  when                                                  what it exercises
//!  1     as soon as step 0 is saved                            a kill at the start of a step
//!  2     40 ms into a later step                               a kill mid-measurement
//!  3     100 ms into a later step                              a kill near a step's end
//!  4     the moment run.json.tmp appears (after step 0)        a kill while the record is written
//!  5     the moment run.json is replaced (after step 0)        a kill between the rename and the index
//! ```
//!
//! Each killed run must stay a record: listed by `perflab runs` as incomplete with the steps
//! its file holds, shown, exported (json and csv) and reported like any other, its steps whole.
//! A half-written temporary file may stay in the run's folder (nothing removes it), but it
//! is never read as a record.

mod common;

use common::{Results, json, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Steps of each sweep: more than any kill lets finish.
const STEPS: usize = 10;

fn perflab(results: &Results, args: &[&str]) -> std::process::Output {
    common::run(results, args)
}

/// A `perflab null` sweep of [`STEPS`] steps of 150 ms on one thread, running in the background.
fn start_sweep(results: &Results) -> Child {
    let spins: Vec<String> = (0..STEPS).map(|i| format!("{i}us")).collect();
    Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["null", "--threads", "1", "--spin", &spins.join(",")])
        .args([
            "--duration",
            "150ms",
            "--warmup",
            "0s",
            "--interval",
            "50ms",
        ])
        .arg("--quiet")
        .arg("--results")
        .arg(results.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the perflab binary runs")
}

/// The run folders now in the archive.
fn run_dirs(results: &Results) -> BTreeSet<PathBuf> {
    std::fs::read_dir(results.path().join("runs"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Steps in the record at `dir`, if it parses (a reader may race the rename: it sees the old
/// file or the new one, both whole).
fn steps_saved(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["steps"].as_array().map(|s| s.len()))
        .unwrap_or(0)
}

/// How each run is killed.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// This long after step 0 is saved.
    After(Duration),
    /// As soon as a temporary record file exists: mid-write.
    DuringWrite,
    /// As soon as run.json is a new file (a rename happened): before the index is updated.
    AfterRename,
}

/// Runs a sweep and SIGKILLs it at `moment`; returns its run folder and whether the moment
/// was caught (the tight polls can miss a short window on a busy machine).
fn kill_at(results: &Results, moment: Moment) -> (PathBuf, bool) {
    let before = run_dirs(results);
    let mut child = start_sweep(results);
    let deadline = Instant::now() + Duration::from_secs(60);
    let waiting = |child: &mut Child, what: &str| {
        assert!(
            Instant::now() < deadline,
            "{moment:?}: {what} never happened"
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{moment:?}: perflab ended ({status}) before {what}");
        }
    };
    // The run's folder, then its first step on disk.
    let dir = loop {
        if let Some(d) = run_dirs(results).difference(&before).next() {
            break d.clone();
        }
        waiting(&mut child, "a run folder");
        std::thread::sleep(Duration::from_millis(2));
    };
    while steps_saved(&dir) < 1 {
        waiting(&mut child, "the first saved step");
        std::thread::sleep(Duration::from_millis(2));
    }
    let record = dir.join("run.json");
    let tmp = dir.join("run.json.tmp");
    let caught = match moment {
        Moment::After(delay) => {
            std::thread::sleep(delay);
            true
        }
        Moment::DuringWrite => poll(&mut child, deadline, || tmp.exists()),
        Moment::AfterRename => {
            let inode = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).ok();
            let first = inode(&record);
            poll(&mut child, deadline, || {
                inode(&record).is_some_and(|i| Some(i) != first)
            })
        }
    };
    child.kill().expect("SIGKILL"); // std's kill is SIGKILL: no handler runs
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "{moment:?}: perflab ended before the kill ({status})"
    );
    (dir, caught)
}

/// Spins until `seen` (true) or the child ends or the deadline passes (false).
fn poll(child: &mut Child, deadline: Instant, mut seen: impl FnMut() -> bool) -> bool {
    while Instant::now() < deadline {
        if seen() {
            return true;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        std::hint::spin_loop();
    }
    false
}

#[test]
fn runs_killed_at_any_moment_stay_readable_records() {
    let r = Results::new("sigkill");
    let moments = [
        Moment::After(Duration::ZERO),
        Moment::After(Duration::from_millis(40 + 150)),
        Moment::After(Duration::from_millis(100 + 300)),
        Moment::DuringWrite,
        Moment::AfterRename,
    ];
    let mut killed = Vec::new();
    for moment in moments {
        let (dir, caught) = kill_at(&r, moment);
        let leftovers: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        eprintln!(
            "{moment:?}: {} (moment caught: {caught}), {} steps on disk, folder holds {leftovers:?}",
            dir.display(),
            steps_saved(&dir)
        );
        // Only the record, after a kill mid-write its temporary file, and the interval file
        // the run appends to, whose every whole line is an event.
        assert!(
            leftovers
                .iter()
                .all(|f| f == "run.json" || f == "run.json.tmp" || f == "intervals.jsonl"),
            "{moment:?}: {leftovers:?}"
        );
        let intervals = std::fs::read_to_string(dir.join("intervals.jsonl")).unwrap_or_default();
        for l in intervals
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
        {
            let event: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{moment:?}: {e}: {l}"));
            assert!(event["event"].is_string(), "{moment:?}: {l}");
        }
        killed.push((moment, dir));
    }

    // `perflab runs`: every killed run, incomplete, with the steps its file holds.
    let listed = perflab(&r, &["runs", "--json"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let listed = json(&listed);
    let listed = listed.as_array().expect("a list of runs");
    assert_eq!(listed.len(), killed.len(), "{listed:?}");
    let table = perflab(&r, &["runs"]);
    assert!(table.status.success(), "{}", stderr(&table));
    assert_eq!(stdout(&table).matches("incomplete").count(), killed.len());

    // Inside the results folder, so it goes with it even when the test fails.
    let reports = r.path().join("test-reports");
    std::fs::create_dir_all(&reports).unwrap();
    for (moment, dir) in &killed {
        let id = dir.file_name().unwrap().to_str().unwrap();
        let row = listed
            .iter()
            .find(|row| row["id"] == id)
            .unwrap_or_else(|| panic!("{moment:?}: {id} is not listed"));
        assert_eq!(row["status"], "incomplete", "{moment:?}");

        let shown = perflab(&r, &["show", id, "--json"]);
        assert!(shown.status.success(), "{moment:?}: {}", stderr(&shown));
        let record = json(&shown);
        assert_eq!(record["status"], "incomplete", "{moment:?}");
        let steps = record["steps"].as_array().unwrap();
        assert!(
            (1..STEPS).contains(&steps.len()),
            "{moment:?}: {} steps",
            steps.len()
        );
        assert_eq!(
            row["steps"].as_u64(),
            Some(steps.len() as u64),
            "{moment:?}: `perflab runs` and the record disagree on the steps"
        );
        // The finished steps, whole and in order.
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(s["index"].as_u64(), Some(i as u64), "{moment:?}");
            assert_eq!(s["params"]["spin_ns"].as_u64(), Some(i as u64 * 1000));
            let t = &s["trials"][0];
            assert!(t["ops"].as_u64().unwrap() > 0, "{moment:?}: step {i}");
            assert!(
                t["latency_hdr"].as_str().is_some_and(|h| !h.is_empty()),
                "{moment:?}: step {i} has no histogram"
            );
        }

        let text = perflab(&r, &["show", id]);
        assert!(text.status.success(), "{moment:?}: {}", stderr(&text));
        assert!(stdout(&text).contains("incomplete"), "{}", stdout(&text));

        let exported = perflab(&r, &["export", id]);
        assert!(exported.status.success(), "{}", stderr(&exported));
        assert_eq!(
            json(&exported),
            record,
            "{moment:?}: export differs from show"
        );
        let csv = perflab(&r, &["export", id, "--format", "csv"]);
        assert!(csv.status.success(), "{}", stderr(&csv));
        assert_eq!(
            stdout(&csv).lines().count(),
            steps.len() + 1,
            "{moment:?}: header and one row per step"
        );

        let html = reports.join(format!("{id}.html"));
        let report = perflab(&r, &["report", id, "-o", html.to_str().unwrap()]);
        assert!(report.status.success(), "{moment:?}: {}", stderr(&report));
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains(id) && page.trim_end().ends_with("</html>"));
    }

    // The archive still takes new runs, and `last` is the newest.
    let o = perflab(
        &r,
        &[
            "null",
            "--threads",
            "1",
            "--duration",
            "100ms",
            "--json",
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let newest = json(&o)["id"].as_str().unwrap().to_string();
    let listed = json(&perflab(&r, &["runs", "--json"]));
    assert_eq!(listed.as_array().unwrap().len(), killed.len() + 1);
    let last = json(&perflab(&r, &["show", "last", "--json"]));
    assert_eq!(last["id"].as_str(), Some(newest.as_str()));
    assert_eq!(last["status"], "complete");
}

/// What a kill during a save leaves (`run.json.tmp`, beside a record or alone in a run's
/// folder) is removed by the next run's first save once it is a minute old; a younger one
/// may be another process's save in progress and stays.
#[test]
fn leftovers_of_killed_saves_are_swept_by_the_next_save() {
    let r = Results::new("archive-leftovers");
    let runs = r.path().join("runs");
    let alone = runs.join("20260101-000000-dead");
    let beside = runs.join("20260101-000001-beef");
    let young = runs.join("20260101-000002-cafe");
    for dir in [&alone, &beside, &young] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("run.json.tmp"), b"{\"schema_version\": 1").unwrap();
    }
    std::fs::write(beside.join("notes.txt"), b"not perflab's").unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for dir in [&alone, &beside] {
        let f = std::fs::File::options()
            .write(true)
            .open(dir.join("run.json.tmp"))
            .unwrap();
        f.set_modified(old).unwrap();
    }
    let o = perflab(&r, &["null", "--duration", "100ms", "--warmup", "0s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!alone.exists(), "a folder with only a leftover goes");
    assert!(!beside.join("run.json.tmp").exists());
    assert!(
        beside.join("notes.txt").exists(),
        "what is not perflab's stays"
    );
    assert!(
        young.join("run.json.tmp").exists(),
        "a save maybe in progress stays"
    );
}
