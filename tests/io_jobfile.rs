//! `perflab io JOB.fio` through the real binary, on real files: jobs at once as groups of one
//! step, stonewalled groups as steps, numjobs copies, fio's sizes and file names, the
//! refusals (`FILE:LINE`, exit 2) and hostile files. Sizes are small; timings are never
//! asserted.

mod common;

use common::{Results, json, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A folder for the job file and the files its jobs make, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("perflab-jobfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    /// Writes `text` (with `DIR` replaced by the folder) as `name`; returns its path.
    fn job(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text.replace("DIR", self.0.to_str().unwrap())).unwrap();
        p.to_string_lossy().into_owned()
    }
    /// The files in the folder other than job files.
    fn left(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".fio"))
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn perflab(r: &Results, args: &[&str]) -> Output {
    common::run(r, args)
}

/// The groups of the first trial of step `s` divided `by`.
fn groups<'a>(v: &'a Value, s: usize, by: &str) -> Vec<&'a Value> {
    v["steps"][s]["trials"][0]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["by"] == by)
        .collect()
}

#[test]
fn jobs_at_once_are_groups_of_one_step_and_a_stonewall_starts_the_next() {
    let dir = Scratch::new("groups");
    let file = dir.job(
        "two.fio",
        "; a reader and a writer at once, then a stonewalled reader of a named file
[global]
directory=DIR
size=4m
bs=4k

[reader]
rw=randread
numjobs=2

[writer]
rw=write
bs=64k

[after]
stonewall
filename=named.dat
rw=read
",
    );
    let r = Results::new("jobfile-groups");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"].as_array().unwrap().len(), 2, "{}", v["steps"]);
    // Step 1: both jobs, each with its own figures; the reader's two copies each moved
    // their 4 MiB (fio's size is the job's, each copy's own files).
    let jobs = groups(&v, 0, "job");
    let names: Vec<&str> = jobs.iter().map(|g| g["key"].as_str().unwrap()).collect();
    assert_eq!(names, ["reader", "writer"], "{jobs:?}");
    let reader = jobs[0];
    assert_eq!(reader["bytes"].as_u64(), Some(2 * (4 << 20)), "{reader}");
    assert_eq!(reader["ops"].as_u64(), Some(2 * 1024), "{reader}");
    assert!(
        reader["latency_hdr"].is_string(),
        "jobs keep their histograms"
    );
    assert!(reader["elapsed_ns"].as_u64().unwrap() > 0);
    let writer = jobs[1];
    assert_eq!(writer["bytes"].as_u64(), Some(4 << 20), "{writer}");
    assert_eq!(writer["ops"].as_u64(), Some(64), "{writer}");
    let dirs = groups(&v, 0, "job_direction");
    let keys: Vec<&str> = dirs.iter().map(|g| g["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["reader/read", "writer/write"]);
    // The step's total is the jobs' sum; three workers ran it.
    let t = &v["steps"][0]["trials"][0];
    assert_eq!(t["ops"].as_u64(), Some(2 * 1024 + 64), "{t}");
    assert_eq!(t["workers"].as_u64(), Some(3), "{t}");
    // Step 2: the named file, made for the run.
    let after = groups(&v, 1, "job");
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["key"], "after");
    assert_eq!(after[0]["bytes"].as_u64(), Some(4 << 20));
    // fio's defaults, said once.
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("fio_default"), "{warnings}");
    // Everything perflab made is gone.
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    // The record shows the groups and the jobs.
    let shown = perflab(&r, &["show", "last"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    assert!(text.contains("reader") && text.contains("writer"), "{text}");
}

#[test]
fn time_based_jobs_run_for_their_runtime_and_reads_and_writes_take_their_own_sizes() {
    let dir = Scratch::new("timed");
    let file = dir.job(
        "mixed.fio",
        "[mix]
filename=DIR/mix.dat
size=8m
rw=randrw
rwmixread=70
bs=4k,64k
time_based
runtime=1
",
    );
    let r = Results::new("jobfile-timed");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    let elapsed = t["elapsed_ns"].as_u64().unwrap();
    assert!((900_000_000..3_000_000_000).contains(&elapsed), "{elapsed}");
    let sizes: Vec<&str> = groups(&v, 0, "block_size")
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(sizes, ["4096", "65536"], "reads 4k, writes 64k");
    let dirs = groups(&v, 0, "job_direction");
    let read = dirs.iter().find(|g| g["key"] == "mix/read").unwrap();
    let write = dirs.iter().find(|g| g["key"] == "mix/write").unwrap();
    assert_eq!(
        read["bytes"].as_u64().unwrap(),
        read["ops"].as_u64().unwrap() * 4096
    );
    assert_eq!(
        write["bytes"].as_u64().unwrap(),
        write["ops"].as_u64().unwrap() * 65536
    );
    let share = read["ops"].as_f64().unwrap()
        / (read["ops"].as_f64().unwrap() + write["ops"].as_f64().unwrap());
    assert!((0.6..0.8).contains(&share), "{share}");
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn dry_run_prints_the_plan_and_makes_nothing() {
    let dir = Scratch::new("dry");
    let file = dir.job(
        "plan.fio",
        "[global]
directory=DIR
size=1m
[a]
rw=read
numjobs=2
[b]
new_group
rw=write
",
    );
    let r = Results::new("jobfile-dry");
    let o = perflab(&r, &["io", &file, "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("a x2"), "{text}");
    assert!(
        text.contains("a.0.0 (made)") && text.contains("a.1.0 (made)"),
        "{text}"
    );
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    assert!(!r.path().join("runs").exists() || std::fs::read_dir(r.path()).unwrap().count() == 0);
}

/// One line on stderr naming what is wrong, exit 2.
fn refused(r: &Results, args: &[&str], wanted: &[&str]) {
    let o = perflab(r, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    for w in wanted {
        assert!(err.contains(w), "{args:?}: wanted {w:?} in {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn what_perflab_cannot_honour_is_refused_by_file_line_and_option() {
    let dir = Scratch::new("refusals");
    let r = Results::new("jobfile-refusals");
    let trim = dir.job("trim.fio", "[t]\nsize=1m\ndirectory=DIR\nrw=randtrim\n");
    refused(&r, &["io", &trim], &["trim.fio:4", "rw", "trim"]);
    let think = dir.job(
        "think.fio",
        "[global]\ndirectory=DIR\nsize=1m\n\n[paced]\nrw=read\nthinktime=100\n",
    );
    refused(&r, &["io", &think], &["think.fio:5", "thinktime"]);
    let unknown = dir.job("unknown.fio", "[u]\nsize=1m\nno_such_option=1\n");
    refused(&r, &["io", &unknown], &["unknown.fio:3", "no_such_option"]);
    // Jobs at once that end differently.
    let mixed = dir.job(
        "mixed.fio",
        "[global]\ndirectory=DIR\nsize=1m\n[a]\nrw=read\n[b]\nrw=read\ntime_based\nruntime=1\n",
    );
    refused(&r, &["io", &mixed], &["mixed.fio:6", "time_based"]);
    // perflab's own test flags beside a job file.
    let ok = dir.job("ok.fio", "[a]\ndirectory=DIR\nsize=1m\nrw=read\n");
    refused(&r, &["io", &ok, "--rw", "write"], &["--rw", "job file"]);
    // A file perflab did not make is not written.
    std::fs::write(dir.path().join("theirs.dat"), vec![7u8; 1 << 20]).unwrap();
    let theirs = dir.job(
        "theirs.fio",
        "[w]\nfilename=DIR/theirs.dat\nsize=1m\nrw=write\n",
    );
    refused(&r, &["io", &theirs], &["theirs.dat", "--destroy-data"]);
    assert_eq!(
        std::fs::read(dir.path().join("theirs.dat")).unwrap(),
        vec![7u8; 1 << 20]
    );
    // A folder that does not exist is not made.
    let nowhere = dir.job(
        "nowhere.fio",
        "[w]\nfilename=DIR/no/such/folder/f.dat\nsize=1m\nrw=write\n",
    );
    refused(&r, &["io", &nowhere], &["does not exist"]);
    assert!(!dir.path().join("no").exists());
}

#[test]
fn hostile_job_files_get_one_line_and_exit_2() {
    let dir = Scratch::new("hostile");
    let r = Results::new("jobfile-hostile");
    let long = dir.job(
        "long.fio",
        &format!("[a]\nsize=1m\nname={}\n", "x".repeat(1 << 20)),
    );
    refused(&r, &["io", &long], &["long.fio"]);
    let own = dir.path().join("self.fio");
    std::fs::write(&own, format!("include {}\n[a]\nsize=1m\n", own.display())).unwrap();
    refused(&r, &["io", own.to_str().unwrap()], &["self.fio", "include"]);
    let missing = dir.job(
        "missing.fio",
        "include DIR/nothing-here.fio\n[a]\nsize=1m\n",
    );
    refused(&r, &["io", &missing], &["nothing-here.fio"]);
    let huge = dir.job("huge.fio", "[a]\ndirectory=DIR\nsize=999999999T\nrw=read\n");
    refused(&r, &["io", &huge], &["huge.fio:3", "size"]);
    let none = dir.job("none.fio", "[global]\nsize=1m\n");
    refused(&r, &["io", &none], &["no jobs"]);
    refused(
        &r,
        &["io", "/nonexistent/job.fio"],
        &["/nonexistent/job.fio"],
    );
    // Two [global] sections are fio's, and fine: each applies to the jobs after it.
    let two = dir.job(
        "two.fio",
        "[global]\ndirectory=DIR\nsize=1m\n[a]\nrw=read\n[global]\nbs=8k\n[b]\nrw=read\n",
    );
    let o = perflab(&r, &["io", &two, "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("a x1") && text.contains("read 4 KiB"),
        "{text}"
    );
    assert!(
        text.contains("b x1") && text.contains("read 8 KiB"),
        "{text}"
    );
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn compare_sets_each_job_of_two_runs_side_by_side() {
    let dir = Scratch::new("compare");
    let file = dir.job(
        "pair.fio",
        "[global]\ndirectory=DIR\nsize=2m\n[reader]\nrw=randread\n[writer]\nrw=write\n",
    );
    let r = Results::new("jobfile-compare");
    for _ in 0..2 {
        let o = perflab(&r, &["io", &file]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let runs = perflab(&r, &["runs", "--json"]);
    let ids: Vec<String> = json(&runs)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let o = perflab(&r, &["compare", &ids[0], &ids[1], "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let figures = json(&o).to_string();
    for f in ["job reader: ops_per_sec", "job writer: latency_mean_ns"] {
        assert!(figures.contains(f), "{f} in {figures}");
    }
}

#[test]
fn a_fio_line_is_its_job_file_with_rates_per_copy() {
    let dir = Scratch::new("line");
    let r = Results::new("jobfile-line");
    let d = dir.path().to_str().unwrap().to_string();
    let o = perflab(
        &r,
        &[
            "io",
            &format!("--directory={d}"),
            "--size=1m",
            "--name=paced",
            "--rw=randread",
            "--rate_iops=100",
            "--numjobs=2",
            "--time_based",
            "--runtime=1",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["job_files"][0], "fio's command line");
    let paced = groups(&v, 0, "job")[0];
    // Two copies at 100 I/Os a second each, for a second: about 200, never the device's rate.
    let ops = paced["ops"].as_u64().unwrap();
    assert!((100..=300).contains(&ops), "{ops}: {paced}");
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    // perflab's own test flags in a fio line are refused, naming fio's spelling.
    refused(
        &r,
        &["io", "--name=a", "--size=1m", "--duration", "1s"],
        &["--duration", "--runtime"],
    );
}

/// The bytes of a file perflab made and was told to keep.
fn kept(dir: &Scratch, name: &str) -> Vec<u8> {
    std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn writes_carry_what_fios_buffer_options_say() {
    let dir = Scratch::new("contents");
    let file = dir.job(
        "contents.fio",
        "[global]
directory=DIR
size=1m
bs=4k
rw=write

[default]

[zero]
zero_buffers

[half]
buffer_compress_percentage=50

[dedupe]
dedupe_percentage=50

[pattern]
buffer_pattern=\"ab\"0x01
",
    );
    let r = Results::new("jobfile-contents");
    let o = perflab(&r, &["io", &file, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    for g in groups(&v, 0, "job") {
        assert_eq!(g["bytes"].as_u64(), Some(1 << 20), "{g}");
    }
    // fio's default: random bytes, scrambled before each write: no two blocks alike, and
    // each 512-byte sector carries its own offset at the start of one of its cache lines.
    let default = kept(&dir, "default.0.0");
    let blocks: std::collections::HashSet<&[u8]> = default.chunks(4096).collect();
    assert_eq!(blocks.len(), 256);
    for (i, sector) in default.chunks(512).enumerate() {
        let offset = (i as u64 * 512).to_le_bytes();
        assert!(
            (0..8).any(|l| sector[l * 64..l * 64 + 8] == offset),
            "sector {i} carries its offset"
        );
    }
    assert!(kept(&dir, "zero.0.0").iter().all(|&b| b == 0));
    // 50% compressible in 512-byte chunks: each chunk random, then zeros.
    for (i, chunk) in kept(&dir, "half.0.0").chunks(512).enumerate() {
        assert!(chunk[256..].iter().all(|&b| b == 0), "chunk {i}");
        assert!(
            chunk[..256].iter().filter(|&&b| b == 0).count() < 16,
            "chunk {i}"
        );
    }
    // Half of the writes repeat another's buffer.
    let dedupe = kept(&dir, "dedupe.0.0");
    let distinct: std::collections::HashSet<&[u8]> = dedupe.chunks(4096).collect();
    let repeated = 1.0 - distinct.len() as f64 / 256.0;
    assert!((0.35..0.65).contains(&repeated), "{repeated}");
    // The pattern, from the start of each write's buffer, never scrambled.
    let want: Vec<u8> = b"ab\x01".iter().copied().cycle().take(4096).collect();
    for block in kept(&dir, "pattern.0.0").chunks(4096) {
        assert_eq!(block, &want[..]);
    }
}

#[test]
fn sync_opens_and_end_fsync_syncs_as_fio_does() {
    let dir = Scratch::new("syncs");
    let file = dir.job(
        "syncs.fio",
        "[global]
directory=DIR
size=64k
bs=4k
rw=write

[periodic]
sync=1
fsync=4
end_fsync=1

[passes]
stonewall
sync=dsync
nrfiles=2
loops=2
fsync_on_close=1
",
    );
    let r = Results::new("jobfile-syncs");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let jobs = v["spec"]["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["open_sync"], "full");
    assert_eq!(jobs[1]["open_sync"], "data");
    assert_eq!(jobs[0]["end_fsync_every"].as_u64(), Some(64 << 10));
    // 16 writes with an fsync every 4: fio issues 3 (none after the last write; the end
    // fsync is not counted among them), then one end fsync.
    let periodic = groups(&v, 0, "job_direction");
    let sync = periodic
        .iter()
        .find(|g| g["key"] == "periodic/sync")
        .unwrap();
    assert_eq!(sync["ops"].as_u64(), Some(3), "{sync}");
    let figures = &v["steps"][0]["trials"][0]["figures"];
    assert_eq!(
        figures["end_fsyncs_per_worker"].as_f64(),
        Some(1.0),
        "{figures}"
    );
    // Two passes over two files: an fsync of each file after each pass.
    let figures = &v["steps"][1]["trials"][0]["figures"];
    assert_eq!(
        figures["end_fsyncs_per_worker"].as_f64(),
        Some(4.0),
        "{figures}"
    );
    assert_eq!(
        groups(&v, 1, "job")[0]["bytes"].as_u64(),
        Some(2 * (64 << 10))
    );
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    // After a time_based job's runtime there is no step left to time the sync in.
    let timed = dir.job(
        "timed.fio",
        "[t]\ndirectory=DIR\nsize=64k\nrw=write\ntime_based\nruntime=1\nend_fsync=1\n",
    );
    refused(
        &r,
        &["io", &timed],
        &["timed.fio:1", "end_fsync", "time_based"],
    );
}

#[test]
fn flows_keep_their_jobs_shares_of_the_io() {
    let dir = Scratch::new("flow");
    let file = dir.job(
        "flow.fio",
        "[global]
directory=DIR
size=1m
rw=randread
norandommap

[light]
time_based
runtime=1
flow=1

[heavy]
time_based
runtime=1
flow=4

[small]
stonewall
flow_id=2
flow=1
flow_sleep=100

[big]
flow_id=2
flow=4
flow_sleep=100
",
    );
    let r = Results::new("jobfile-flow");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // While both run, heavy issues 4 I/Os for each of light's, as in fio.
    let jobs = groups(&v, 0, "job");
    let ops = |k: &str| {
        jobs.iter().find(|g| g["key"] == k).unwrap()["ops"]
            .as_f64()
            .unwrap()
    };
    let ratio = ops("heavy") / ops("light");
    assert!((3.5..4.5).contains(&ratio), "{ratio}: {jobs:?}");
    // Jobs of a fixed size: once big has moved its bytes it leaves the flow, and small,
    // held back until then, moves all of its own.
    for g in groups(&v, 1, "job") {
        assert_eq!(g["bytes"].as_u64(), Some(1 << 20), "{g}");
    }
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    // A flow shared across groups: fio would hold the first group back for ever.
    let across = dir.job(
        "across.fio",
        "[global]\ndirectory=DIR\nsize=64k\n[a]\nflow=1\n[b]\nstonewall\nflow=2\n",
    );
    refused(&r, &["io", &across], &["across.fio:6", "flow", "for ever"]);
}
