//! `perflab io JOB.fio` through the real binary, on real files: jobs at once as groups of one
//! step, stonewalls as steps, numjobs copies, fio's sizes and file names, when jobs start,
//! pause and end (fio's exitwhat, steadystate and waitfor examples, smaller), the refusals
//! (`FILE:LINE`, exit 2) and hostile files. Sizes are small; timings are never asserted (a
//! job that ends early is checked against its runtime, never timed).

mod common;

use common::{Results, json, stderr, stdout};
use serde_json::Value;
use std::os::unix::fs::OpenOptionsExt;
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
    // Each group runs as its jobs say, and groups of different jobs are not ranked.
    assert!(
        text.contains("each group as its jobs say (4 MiB a copy; 4 MiB a copy)"),
        "{text}"
    );
    assert!(
        !text.contains("peak:") && !text.contains("sweet spot:"),
        "{text}"
    );
    // A job that only reads is not shown again as its reads.
    assert!(!text.contains("reader read"), "{text}");
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

/// The 4 KiB blocks of `path` that hold anything but zeros, by their offset in KiB: where
/// a job that only writes wrote (perflab makes a file of zeros when nothing reads it).
fn written_kib(path: &Path) -> Vec<u64> {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .enumerate()
        .filter(|(_, b)| b.iter().any(|&x| x != 0))
        .map(|(i, _)| i as u64 * 4)
        .collect()
}

#[test]
fn each_io_goes_where_fio_puts_it() {
    let dir = Scratch::new("where");
    let file = dir.job(
        "where.fio",
        "[global]
bs=4k
rw=write

; offset=64k size=64k with 4k holes: 64k, 72k ... 120k, then the walk runs past the
; region and the job is over (fio's files are done), short of its size
[holes]
filename=DIR/holes.dat
rw=write:4k
offset=64k
size=64k

; backwards: 0, 56k, 52k ... 4k, 0 (fio never writes the last block)
[back]
stonewall
filename=DIR/back.dat
rw=write:-8k
size=64k

; two copies of one file, each from its own offset
[shared]
stonewall
filename=DIR/shared.dat
numjobs=2
size=32k
offset_increment=32k

; all the I/O in the second half
[zoned]
stonewall
filename=DIR/zoned.dat
rw=randwrite
size=256k
norandommap
random_distribution=zoned:0/50:100/50

; a random offset, then 15 sequential I/Os (wrapping at the region's end)
[every]
stonewall
filename=DIR/every.dat
rw=randwrite:16
size=1m
io_size=64k
",
    );
    let r = Results::new("jobfile-where");
    let o = perflab(&r, &["io", &file, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let job = |s: usize| groups(&v, s, "job")[0];
    let ops = |s: usize| job(s)["ops"].as_u64().unwrap();
    // holes: 8 writes of 4k, every other block of the second 64k of a 128k file (perflab
    // makes every file as long as the longest one the job file needs).
    assert_eq!(ops(0), 8, "{}", job(0));
    assert_eq!(job(0)["bytes"].as_u64(), Some(32 << 10));
    let holes = dir.path().join("holes.dat");
    assert_eq!(written_kib(&holes), vec![64, 72, 80, 88, 96, 104, 112, 120]);
    // back: 16 writes, every block but the last.
    assert_eq!(ops(1), 16);
    let back: Vec<u64> = (0..15).map(|b| b * 4).collect();
    assert_eq!(written_kib(&dir.path().join("back.dat")), back);
    // shared: two copies of 8 writes, the first half and the second.
    assert_eq!(ops(2), 16);
    let shared = written_kib(&dir.path().join("shared.dat"));
    assert_eq!(shared, (0..16).map(|b| b * 4).collect::<Vec<_>>());
    // zoned: nothing in the first half.
    let zoned = written_kib(&dir.path().join("zoned.dat"));
    assert!(
        !zoned.is_empty() && zoned.iter().all(|&k| k >= 128),
        "{zoned:?}"
    );
    // every: 16 writes in one run of 16 blocks, wrapping from the region's end to its
    // start.
    assert_eq!(ops(4), 16);
    let every = written_kib(&dir.path().join("every.dat"));
    assert_eq!(every.len(), 16, "{every:?}");
    let gaps = every.windows(2).filter(|w| w[1] != w[0] + 4).count();
    let wraps = every.first() == Some(&0) && every.last() == Some(&1020);
    assert!(gaps == 0 || (gaps == 1 && wraps), "{every:?}");
}

#[test]
fn bsrange_draws_fios_sizes_and_timeout_is_runtime() {
    let dir = Scratch::new("bsrange");
    // fio rounds LO + x (x uniform below HI) down to a multiple of LO, capped at HI:
    // 4k and 8k 40% of the time each, 10k 20%.
    let file = dir.job(
        "range.fio",
        "[range]
filename=DIR/range.dat
rw=randread
norandommap
size=8m
bsrange=4k-10k
timeout=60
",
    );
    let r = Results::new("jobfile-bsrange");
    let dry = perflab(&r, &["io", &file, "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let plan = stdout(&dry);
    assert!(plan.contains("4 KiB/8 KiB/10 KiB"), "{plan}");
    assert!(plan.contains("or after 60s"), "{plan}");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let sizes = groups(&v, 0, "block_size");
    let count = |k: &str| {
        sizes
            .iter()
            .find(|g| g["key"] == k)
            .map_or(0, |g| g["ops"].as_u64().unwrap())
    };
    let (a, b, c) = (count("4096"), count("8192"), count("10240"));
    let all = (a + b + c) as f64;
    assert_eq!(sizes.len(), 3, "{sizes:?}");
    for (n, want) in [(a, 0.4), (b, 0.4), (c, 0.2)] {
        assert!((n as f64 / all - want).abs() < 0.08, "{a} {b} {c}");
    }
    let job = groups(&v, 0, "job")[0];
    assert_eq!(
        job["bytes"].as_u64().unwrap(),
        a * 4096 + b * 8192 + c * 10240
    );
    // The job ran its size: within the last I/O of 8 MiB.
    assert!(job["bytes"].as_u64().unwrap() >= (8 << 20) - 10240, "{job}");
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
    // Trims only on the falloc engine (the job's section names the line).
    let trim = dir.job("trim.fio", "[t]\nsize=1m\ndirectory=DIR\nrw=randtrim\n");
    refused(
        &r,
        &["io", &trim],
        &["trim.fio:1", "rw", "only on ioengine=falloc"],
    );
    let unknown = dir.job("unknown.fio", "[u]\nsize=1m\nno_such_option=1\n");
    refused(&r, &["io", &unknown], &["unknown.fio:3", "no_such_option"]);
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

/// The step's groups of one job: (ops, bytes) of `job` and of each `job/direction`.
fn job_counts(v: &Value, s: usize, job: &str) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for g in groups(v, s, "job")
        .into_iter()
        .chain(groups(v, s, "job_direction"))
    {
        let key = g["key"].as_str().unwrap();
        if key == job || key.strip_prefix(job).is_some_and(|r| r.starts_with('/')) {
            out.push((
                key.to_string(),
                g["ops"].as_u64().unwrap(),
                g["bytes"].as_u64().unwrap(),
            ));
        }
    }
    out
}

#[test]
fn the_null_engine_counts_each_io_as_its_size_and_makes_no_file() {
    let dir = Scratch::new("null");
    // fio's null.fio, with io_size so that it ends soon: its 100g is never made.
    let file = dir.job(
        "null.fio",
        "[global]
bs=4k
gtod_reduce=1
directory=DIR

[null]
ioengine=null
size=100g
io_size=8m
rw=randread
norandommap
random_distribution=zipf:0.5

[deep]
stonewall
ioengine=null
size=1m
rw=randwrite
iodepth=16

; gtod_reduce's latencies on again, one by one
[timed]
stonewall
ioengine=null
size=1m
rw=read
disable_lat=0
disable_clat=0
",
    );
    let r = Results::new("jobfile-null");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // Each I/O counts its 4 KiB, as fio counts it: 8 MiB is 2048 reads.
    assert_eq!(
        job_counts(&v, 0, "null"),
        [
            ("null".to_string(), 2048, 8 << 20),
            ("null/read".to_string(), 2048, 8 << 20)
        ]
    );
    // At depth 16 with the random map, each block of 1 MiB once.
    assert_eq!(
        job_counts(&v, 1, "deep"),
        [
            ("deep".to_string(), 256, 1 << 20),
            ("deep/write".to_string(), 256, 1 << 20)
        ]
    );
    assert!(dir.left().is_empty(), "no file made: {:?}", dir.left());
    assert_eq!(v["spec"]["jobs"][0]["ioengine"], "null");
    assert_eq!(v["spec"]["jobs"][1]["engine"], "null");
    assert_eq!(v["spec"]["jobs"][1]["iodepth"], 16);
    // fio's JSON names the engine as the job file does.
    let o = perflab(&r, &["export", "last", "--format", "fio-json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fio = json(&o);
    assert_eq!(fio["jobs"][0]["job options"]["ioengine"], "null");
    assert_eq!(fio["jobs"][0]["read"]["total_ios"], 2048);
    // gtod_reduce=1: no latency, as fio keeps none; never a made-up zero.
    for (s, name) in [(0, "null"), (1, "deep")] {
        assert_eq!(v["spec"]["jobs"][s]["no_latency"], "gtod_reduce");
        assert_eq!(v["steps"][s]["trials"][0]["latency"]["count"], 0);
        assert_eq!(job(&v, s, name)["latency"]["count"], 0);
    }
    assert_eq!(fio["jobs"][0]["read"]["clat_ns"]["N"], 0);
    assert_eq!(fio["jobs"][0]["read"]["lat_ns"]["N"], 0);
    assert!(
        fio["jobs"][0]["read"]["clat_ns"]
            .get("percentile")
            .is_none()
    );
    // The series says its intervals timed nothing, where their p99 would read as 0 ns.
    for s in [0, 1] {
        for p in v["steps"][s]["trials"][0]["series"].as_array().unwrap() {
            assert_eq!(p["latency_count"], 0, "{p}");
        }
    }
    // Latencies on again: every I/O timed.
    let series = v["steps"][2]["trials"][0]["series"].as_array().unwrap();
    let timed: u64 = series
        .iter()
        .map(|p| p["latency_count"].as_u64().unwrap())
        .sum();
    let ops: u64 = series.iter().map(|p| p["ops"].as_u64().unwrap()).sum();
    assert_eq!(timed, ops);
    assert!(v["spec"]["jobs"][2].get("no_latency").is_none());
    assert_eq!(v["steps"][2]["trials"][0]["latency"]["count"], 256);
    assert_eq!(job(&v, 2, "timed")["latency"]["count"], 256);
}

#[test]
fn without_latency_the_output_says_so() {
    let dir = Scratch::new("no-latency");
    let file = dir.job(
        "quiet.fio",
        "[q]\nioengine=null\nsize=1m\nrw=read\ngtod_reduce=1\n",
    );
    let r = Results::new("jobfile-no-latency");
    let o = perflab(&r, &["io", &file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("q (gtod_reduce) keep(s) no per-I/O latency"),
        "{err}"
    );
    assert!(err.contains("no latency kept"), "{err}");
    // The tables show none: a dash where a latency would be.
    let table = stdout(&o);
    assert!(!table.contains(" 0 ns"), "{table}");
    // disable_clat alone: fio keeps the total latency, so perflab times each I/O; fio's JSON
    // has no completion latency, as fio's.
    let half = dir.job(
        "half.fio",
        "[h]\nioengine=null\nsize=1m\nrw=read\ndisable_clat=1\n",
    );
    let o = perflab(&r, &["io", &half, "--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fio = json(&o);
    let read = &fio["jobs"][0]["read"];
    assert_eq!(read["clat_ns"]["N"], 0, "{read}");
    assert_eq!(read["lat_ns"]["N"], 256, "{read}");
    // What needs each I/O's time is refused.
    let paced = dir.job(
        "paced.fio",
        "[p]\nioengine=null\nsize=1m\nrw=read\ngtod_reduce=1\nrate_iops=100\n",
    );
    refused(&r, &["io", &paced], &["paced.fio:1", "gtod_reduce", "rate"]);
}

#[test]
fn falloc_writes_allocate_and_trims_punch_holes_in_a_file_other_engines_read() {
    let dir = Scratch::new("falloc");
    // falloc.fio's shape: falloc jobs, then a sync job on the same file.
    let file = dir.job(
        "falloc.fio",
        "[global]
ioengine=falloc
directory=DIR
filename=frag.dat
size=1m

[alloc]
rw=write
bs=64k

[punch]
stonewall
rw=trim
bs=64k,64k,4k
fsync=1

[read]
stonewall
ioengine=psync
rw=read
bs=64k
",
    );
    let r = Results::new("jobfile-falloc");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        job_counts(&v, 0, "alloc"),
        [
            ("alloc".to_string(), 16, 1 << 20),
            ("alloc/write".to_string(), 16, 1 << 20)
        ]
    );
    // Trims of trims' own size (bs's third value), never synced (fio counts writes only).
    assert_eq!(
        job_counts(&v, 1, "punch"),
        [
            ("punch".to_string(), 256, 1 << 20),
            ("punch/trim".to_string(), 256, 1 << 20)
        ]
    );
    assert_eq!(v["spec"]["jobs"][1]["trims"], true);
    assert_eq!(v["spec"]["jobs"][1]["ioengine"], "falloc");
    // The read of the holes moves every byte, on the sync engine.
    assert_eq!(
        job_counts(&v, 2, "read"),
        [
            ("read".to_string(), 16, 1 << 20),
            ("read/read".to_string(), 16, 1 << 20)
        ]
    );
    assert_eq!(v["spec"]["jobs"][2]["engine"], "sync");
    let o = perflab(&r, &["export", "last", "--format", "fio-json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fio = json(&o);
    assert_eq!(fio["jobs"][1]["trim"]["total_ios"], 256);
    assert_eq!(fio["jobs"][1]["write"]["total_ios"], 0);
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn falloc_trims_leave_the_file_without_blocks() {
    use std::os::unix::fs::MetadataExt;
    let dir = Scratch::new("punch");
    let file = dir.job(
        "punch.fio",
        "[punch]
ioengine=falloc
filename=DIR/holes.dat
size=256k
rw=randtrim
bs=4k
",
    );
    let r = Results::new("jobfile-punch");
    let o = perflab(&r, &["io", &file, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = std::fs::metadata(dir.path().join("holes.dat")).unwrap();
    assert_eq!(m.len(), 256 << 10, "a punched hole keeps the length");
    assert_eq!(
        m.blocks(),
        0,
        "every block punched out (random map: each once)"
    );
}

#[test]
fn ftruncate_writes_set_the_length_to_their_offset() {
    let dir = Scratch::new("ftruncate");
    let file = dir.job(
        "ftruncate.fio",
        "[grow]
ioengine=ftruncate
filename=DIR/truncate
size=64k
bs=4k
rw=write
",
    );
    let r = Results::new("jobfile-ftruncate");
    let o = perflab(&r, &["io", &file, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        job_counts(&v, 0, "grow"),
        [
            ("grow".to_string(), 16, 64 << 10),
            ("grow/write".to_string(), 16, 64 << 10)
        ]
    );
    // Truncated to 0, 4k, ..., 60k: the last write's offset.
    let len = std::fs::metadata(dir.path().join("truncate"))
        .unwrap()
        .len();
    assert_eq!(len, 60 << 10);
    assert_eq!(v["spec"]["jobs"][0]["ioengine"], "ftruncate");
    let reads = dir.job(
        "reads.fio",
        "[r]\nioengine=ftruncate\nfilename=DIR/t2\nsize=64k\nrw=randread\n",
    );
    refused(&r, &["io", &reads], &["reads.fio:1", "rw", "only writes"]);
}

#[test]
fn filestat_stats_and_filedelete_unlinks_each_file_once_as_an_io() {
    let dir = Scratch::new("fileops");
    // fio's filestat-ioengine.fio and filedelete-ioengine.fio, fewer files.
    let file = dir.job(
        "fileops.fio",
        "[global]
directory=DIR
filesize=4k
nrfiles=20

[stat]
ioengine=filestat
thread

[delete]
stonewall
ioengine=filedelete
unlink=0
",
    );
    let r = Results::new("jobfile-fileops");
    let o = perflab(&r, &["io", &file, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        job_counts(&v, 0, "stat"),
        [
            ("stat".to_string(), 20, 20 * 4096),
            ("stat/read".to_string(), 20, 20 * 4096)
        ]
    );
    assert_eq!(
        job_counts(&v, 1, "delete"),
        [
            ("delete".to_string(), 20, 20 * 4096),
            ("delete/read".to_string(), 20, 20 * 4096)
        ]
    );
    // --keep keeps what perflab made: the stat job's files are there, the deleted are gone.
    let left = dir.left();
    assert_eq!(left.len(), 20, "{left:?}");
    assert!(left.iter().all(|n| n.starts_with("stat.0.")), "{left:?}");
    // fio acts once per file but counts every block: two blocks a file are refused.
    let two = dir.job(
        "two.fio",
        "[s]\ndirectory=DIR\nioengine=filestat\nfilesize=8k\nnrfiles=2\n",
    );
    refused(&r, &["io", &two], &["two.fio:1", "filesize", "one block"]);
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

/// Job `name`'s direction `dir` (read, write) in step `s`: its I/O count.
fn ops_of(v: &Value, s: usize, name: &str, dir: &str) -> u64 {
    groups(v, s, "job_direction")
        .into_iter()
        .find(|g| g["key"] == format!("{name}/{dir}"))
        .map_or(0, |g| g["ops"].as_u64().unwrap())
}

#[test]
fn exit_what_number_ios_thinktime_and_rates_per_direction_as_fios_exitwhat_example() {
    // fio's examples/exitwhat.fio, smaller: slow1 thinks between its reads and ends after
    // number_ios, which ends fast1 (exit_what=stonewall), a reporting group of its own
    // running at once with it, whose reads and writes each keep 300 bytes a second (one
    // 4 KiB I/O each way at its start, the next due 13 s later). Then slow2 ends everything
    // (exit_what=all), so the last step runs nothing.
    let dir = Scratch::new("exitwhat");
    let file = dir.job(
        "exitwhat.fio",
        "[global]
filename=DIR/test
filesize=4m
blocksize=4096
group_reporting
exitall=1

[slow1]
rw=read
ioengine=sync
new_group=1
thinktime=2000
number_ios=100
exit_what=stonewall

[fast1]
new_group=1
rw=randrw
numjobs=3
ioengine=libaio
iodepth=32
rate=300,300,300

[slow2]
stonewall
rw=write
thinktime=2000
number_ios=100
exit_what=all

[fast2]
rw=randrw
numjobs=3
rate=300,300,300

[never]
stonewall
rw=read
",
    );
    let r = Results::new("jobfile-exitwhat");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"].as_array().unwrap().len(), 3, "{}", v["steps"]);
    // Step 1: slow1 and fast1 at once.
    assert_eq!(ops_of(&v, 0, "slow1", "read"), 100);
    assert_eq!(ops_of(&v, 0, "slow1", "write"), 0);
    for d in ["read", "write"] {
        assert_eq!(
            ops_of(&v, 0, "fast1", d),
            3,
            "one {d} per copy: {}",
            v["steps"][0]
        );
    }
    // fast1 ended with slow1, not after its 4 MiB at 600 bytes a second: its own time is
    // slow1's (100 pauses of 2 ms at least), never its size's.
    let fast1 = job(&v, 0, "fast1")["elapsed_ns"].as_u64().unwrap();
    assert!(fast1 < 60_000_000_000, "{fast1}");
    assert!(job(&v, 0, "slow1")["elapsed_ns"].as_u64().unwrap() >= 200_000_000);
    // Step 2: slow2 and fast2 at once, and slow2's end ends fast2.
    assert_eq!(ops_of(&v, 1, "slow2", "write"), 100);
    assert_eq!(ops_of(&v, 1, "fast2", "read"), 3);
    // Step 3 never runs its I/O.
    assert_eq!(v["steps"][2]["trials"][0]["ops"].as_u64(), Some(0));
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    // fio's JSON: each job in its own reporting group.
    let out = dir.path().join("fio.json");
    let e = perflab(
        &r,
        &[
            "export",
            "last",
            "--format",
            "fio-json",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(e.status.success(), "{}", stderr(&e));
    let fio: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ids: Vec<(String, u64)> = fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        &ids[..3],
        [
            ("slow1".into(), 0),
            ("fast1".into(), 1),
            ("slow2".into(), 2)
        ]
    );
}

#[test]
fn steady_state_ends_a_job_on_dev_null_and_the_record_says_when() {
    // fio's examples/steadystate.fio, shorter: writes to /dev/null and reads of /dev/zero,
    // neither made nor removed nor limited to a size. iops:101% holds as soon as the window
    // of two samples is full (no sample is farther than its mean from the mean), so the
    // first step ends after its second interval, long before its runtime.
    let dir = Scratch::new("steady");
    let file = dir.job(
        "steady.fio",
        "[global]
group_reporting
time_based
size=128m

[ss-write]
filename=/dev/null
rw=write
bs=128k
numjobs=2
runtime=60
ss=iops:101%
ss_dur=2s

[ss-read]
stonewall
filename=/dev/zero
rw=randread
runtime=1
ss=bw_slope:0.0001%
ss_dur=5
",
    );
    let r = Results::new("jobfile-steady");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let write = job(&v, 0, "ss-write");
    let ss = &write["steady_state"];
    assert_eq!(ss["attained"], true, "{write}");
    assert_eq!(ss["criterion"], "iops:101%");
    assert_eq!(ss["iops"].as_array().unwrap().len(), 2, "{ss}");
    let after = ss["attained_after_ns"].as_u64().unwrap();
    assert!(after >= 2_000_000_000, "two whole intervals: {after}");
    let elapsed = v["steps"][0]["trials"][0]["elapsed_ns"].as_u64().unwrap();
    assert!(elapsed < 60_000_000_000, "ended by steady state: {elapsed}");
    assert!(write["ops"].as_u64().unwrap() > 0);
    // The reader ran its runtime without a full window: not attained.
    let read = job(&v, 1, "ss-read");
    assert_eq!(read["steady_state"]["attained"], false, "{read}");
    assert!(read["steady_state"].get("attained_after_ns").is_none());
    assert!(read["ops"].as_u64().unwrap() > 0);
    assert!(dir.left().is_empty(), "{:?}", dir.left());
    assert!(std::fs::metadata("/dev/null").is_ok());
    // fio's JSON has fio's steadystate object.
    let out = dir.path().join("fio.json");
    let e = perflab(
        &r,
        &[
            "export",
            "last",
            "--format",
            "fio-json",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(e.status.success(), "{}", stderr(&e));
    let fio: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ss = &fio["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops:101.000000%", "{ss}");
    assert_eq!(ss["attained"], 1);
    assert_eq!(ss["duration"], 2);
}

#[test]
fn number_ios_ends_a_job_and_ramp_time_counts_toward_a_sized_one() {
    let dir = Scratch::new("counts");
    let file = dir.job(
        "counts.fio",
        "[global]
directory=DIR
size=4m

[counted]
rw=randread
size=64m
number_ios=100
loops=2

[ramped]
stonewall
rw=randread
thinktime=1000
ramp_time=1
",
    );
    let r = Results::new("jobfile-counts");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // number_ios (per loop, as fio counts it) ends the job long before its 2 x 64 MiB.
    assert_eq!(job(&v, 0, "counted")["ops"].as_u64(), Some(200));
    // ramp_time without time_based: the I/O of the ramp counts toward the 4 MiB (fio's
    // random map reads each block once) and its figures are thrown away.
    let ramped = job(&v, 1, "ramped")["ops"].as_u64().unwrap();
    assert!(ramped > 0 && ramped < 1024, "{ramped}");
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn wait_for_holds_a_job_of_the_same_step_until_the_other_ends() {
    // fio's examples/waitfor.fio, smaller: new_group with wait_for, no stonewall, so one
    // step whose jobs start one after another.
    let dir = Scratch::new("waitfor");
    let file = dir.job(
        "waitfor.fio",
        "[global]
filename=DIR/data
filesize=2m
group_reporting

[writers]
rw=write
bs=128k
numjobs=2

[readers]
new_group
wait_for=writers
rw=randread
numjobs=2

[writers2]
new_group
wait_for=readers
rw=randwrite
startdelay=0-1
",
    );
    let r = Results::new("jobfile-waitfor");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"].as_array().unwrap().len(), 1, "{}", v["steps"]);
    assert_eq!(job(&v, 0, "writers")["ops"].as_u64(), Some(2 * 16));
    assert_eq!(job(&v, 0, "readers")["ops"].as_u64(), Some(2 * 512));
    assert_eq!(job(&v, 0, "writers2")["ops"].as_u64(), Some(512));
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn control_refusals_name_the_line() {
    let dir = Scratch::new("control-refusals");
    let r = Results::new("jobfile-control-refusals");
    let off = dir.job("off.fio", "[a]\ndirectory=DIR\nsize=1m\nexitall=0\n");
    refused(
        &r,
        &["io", &off],
        &["off.fio:4", "exitall", "remove the line"],
    );
    let nothing = dir.job("nothing.fio", "[a]\nfilename=/dev/null\nsize=1m\nrw=read\n");
    refused(
        &r,
        &["io", &nothing],
        &["nothing.fio:1", "/dev/null", "/dev/zero"],
    );
    // fio's loops ignore number_ios in a time_based job: refused, not ignored.
    let timed = dir.job(
        "timed.fio",
        "[a]\ndirectory=DIR\nsize=1m\ntime_based\nruntime=1\nnumber_ios=5\n",
    );
    refused(
        &r,
        &["io", &timed],
        &["timed.fio:1", "number_ios", "time_based"],
    );
    let direct = dir.job(
        "direct.fio",
        "[a]\nfilename=/dev/zero\nsize=1m\nrw=read\ndirect=1\n",
    );
    refused(&r, &["io", &direct], &["direct.fio:1", "O_DIRECT"]);
    let differ = dir.job(
        "differ.fio",
        "[global]\ndirectory=DIR\nsize=1m\n[a]\nss=iops:5%\nss_dur=10\n[b]\n",
    );
    refused(
        &r,
        &["io", &differ],
        &["differ.fio:7", "steadystate", "reporting group"],
    );
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

/// Job `name`'s group (by job) in the first trial of step `s`.
fn job<'a>(v: &'a Value, s: usize, name: &str) -> &'a Value {
    groups(v, s, "job")
        .into_iter()
        .find(|g| g["key"] == name)
        .unwrap_or_else(|| panic!("no job {name} in step {s}: {}", v["steps"][s]))
}

/// A log's lines as numbers, each checked to be fio's shape: `fields` comma-separated
/// integers.
fn log_lines(path: &Path, fields: usize) -> Vec<Vec<i64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let v: Vec<i64> = l
                .split(", ")
                .map(|x| {
                    x.parse()
                        .unwrap_or_else(|_| panic!("{l:?} in {}", path.display()))
                })
                .collect();
            assert_eq!(v.len(), fields, "{l:?} in {}", path.display());
            v
        })
        .collect()
}

/// Times never go backwards in a log.
fn monotone(lines: &[Vec<i64>]) -> bool {
    lines.windows(2).all(|w| w[0][0] <= w[1][0])
}

#[test]
fn fios_logs_are_written_as_fio_names_and_formats_them() {
    let dir = Scratch::new("logs");
    let file = dir.job(
        "logs.fio",
        "[global]
directory=DIR
size=1m
bs=4k

; every I/O a line, with its offset; two copies, fio's threads 1 and 2
[each]
rw=randrw
numjobs=2
write_bw_log=DIR/each
write_lat_log=DIR/each
write_iops_log=DIR/each
log_offset=1

; averaged over 100 ms windows, for a time (fio's thread 3)
[avg]
stonewall
rw=randread
time_based
runtime=1
write_bw_log=DIR/avg
write_lat_log=DIR/avg
write_iops_log=DIR/avg
log_avg_msec=100

; copies sharing one file: fio's threads 4 and 5 append to shared_iops.log
[shared]
stonewall
rw=read
numjobs=2
write_iops_log=DIR/shared
per_job_logs=0
",
    );
    let r = Results::new("jobfile-logs");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("fio's logs"), "{}", stderr(&o));
    let v = json(&o);
    let mut names = dir.left();
    names.retain(|n| n.ends_with(".log"));
    assert_eq!(
        names,
        [
            "avg_bw.3.log",
            "avg_clat.3.log",
            "avg_iops.3.log",
            "avg_lat.3.log",
            "avg_slat.3.log",
            "each_bw.1.log",
            "each_bw.2.log",
            "each_clat.1.log",
            "each_clat.2.log",
            "each_iops.1.log",
            "each_iops.2.log",
            "each_lat.1.log",
            "each_lat.2.log",
            "each_slat.1.log",
            "each_slat.2.log",
            "shared_iops.log",
        ]
    );
    let p = |n: &str| dir.path().join(n);
    // Every I/O a line: time, value, direction, bytes, offset, priority.
    let each_ops = job(&v, 0, "each")["ops"].as_u64().unwrap();
    let mut iops_sum = 0;
    for copy in [1, 2] {
        let lat = log_lines(&p(&format!("each_lat.{copy}.log")), 6);
        let clat = log_lines(&p(&format!("each_clat.{copy}.log")), 6);
        let bw = log_lines(&p(&format!("each_bw.{copy}.log")), 6);
        let iops = log_lines(&p(&format!("each_iops.{copy}.log")), 6);
        // psync submits nothing apart from its I/O: no submission latency, as fio's.
        assert!(log_lines(&p(&format!("each_slat.{copy}.log")), 6).is_empty());
        assert_eq!(lat.len(), 256, "1 MiB in 4 KiB I/Os each copy");
        assert!(monotone(&lat) && monotone(&bw) && monotone(&iops));
        for ((l, c), (b, i)) in lat.iter().zip(&clat).zip(bw.iter().zip(&iops)) {
            assert!(l[1] > 0 && (0..=1).contains(&l[2]), "{l:?}");
            assert_eq!(l[3], 4096);
            assert!(l[4] % 4096 == 0 && l[4] < 1 << 20, "{l:?}");
            assert_eq!(l[5], 0);
            // One time per I/O on a sync engine: the completion latency is the latency.
            assert_eq!(l, c);
            // Bandwidth: its bytes over its time, fio's bytes × 10⁶ / ns.
            assert_eq!(b[1], 4096 * 1_000_000 / l[1], "{b:?} {l:?}");
            assert_eq!((b[2], b[4], i[2], i[4]), (l[2], l[4], l[2], l[4]));
            assert_eq!(i[1], 1);
        }
        iops_sum += iops.iter().map(|l| l[1]).sum::<i64>() as u64;
    }
    assert_eq!(iops_sum, each_ops, "every I/O the job counted is a line");
    // Averaged: latencies each direction's mean over its window, rates over whole windows;
    // no block size or offset.
    let avg_ops = job(&v, 1, "avg")["ops"].as_u64().unwrap();
    let lat = log_lines(&p("avg_lat.3.log"), 5);
    let iops = log_lines(&p("avg_iops.3.log"), 5);
    let bw = log_lines(&p("avg_bw.3.log"), 5);
    assert!(!lat.is_empty() && !iops.is_empty() && !bw.is_empty());
    for l in lat.iter().chain(&iops).chain(&bw) {
        assert!(l[1] > 0 && l[2] == 0 && l[3] == 0 && l[4] == 0, "{l:?}");
    }
    assert!(monotone(&lat) && monotone(&iops) && monotone(&bw));
    // Rates at each window's end: 100 ms apart, the I/Os they count no more than the job's.
    assert!(iops.iter().all(|l| l[0] % 100 == 0), "{iops:?}");
    let counted: i64 = iops.iter().map(|l| l[1] / 10).sum();
    assert!(
        counted > 0 && counted as u64 <= avg_ops,
        "{counted} of {avg_ops}"
    );
    for (b, i) in bw.iter().zip(&iops) {
        assert_eq!(b[1], i[1] * 4096 / 1024, "{b:?} {i:?}");
    }
    // Both copies appended their whole log to the shared file.
    let shared = log_lines(&p("shared_iops.log"), 5);
    assert_eq!(
        shared.len() as u64,
        job(&v, 2, "shared")["ops"].as_u64().unwrap()
    );
    assert_eq!(shared.len(), 512);
}

#[test]
fn logs_perflab_cannot_write_as_fio_are_refused() {
    let dir = Scratch::new("log-refusals");
    let r = Results::new("jobfile-log-refusals");
    let hist = dir.job(
        "hist.fio",
        "[h]\ndirectory=DIR\nsize=1m\nwrite_hist_log=h\n",
    );
    refused(
        &r,
        &["io", &hist],
        &["hist.fio:1", "write_hist_log", "--hlog"],
    );
    let nowhere = dir.job(
        "nowhere.fio",
        "[n]\ndirectory=DIR\nsize=1m\nwrite_bw_log=DIR/no/such/x\n",
    );
    refused(&r, &["io", &nowhere], &["write_bw_log", "does not exist"]);
    let ok = dir.job("ok.fio", "[o]\ndirectory=DIR\nsize=1m\nwrite_iops_log\n");
    refused(
        &r,
        &["io", &ok, "--repeat", "2"],
        &["--repeat", "write_*_log"],
    );
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

/// A figure of the first trial of step `s`.
fn figure(v: &Value, s: usize, name: &str) -> Option<f64> {
    v["steps"][s]["trials"][0]["figures"][name].as_f64()
}

#[test]
fn verify_checks_what_jobs_wrote_and_a_corrupt_block_fails_the_run() {
    let dir = Scratch::new("verify");
    let r = Results::new("jobfile-verify");
    // A writer, then (stonewalled) a mixed job on the same file; both check their reads and
    // read back what they wrote. The file is kept for the read below.
    let write = dir.job(
        "write.fio",
        "[global]
filename=DIR/v.dat
size=1m
bs=4k
verify=crc32c

[w]
rw=randwrite

[rw]
stonewall
rw=randrw
verify_dump=1
verifysort=1
",
    );
    let o = perflab(&r, &["io", &write, "--keep", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("perflab's own check"), "{err}");
    assert!(err.contains("verify_dump (rw)"), "{err}");
    let v = json(&o);
    assert_eq!(job(&v, 0, "w")["errors"].as_u64(), Some(0));
    assert_eq!(figure(&v, 0, "verified_blocks_per_worker"), Some(256.0));
    // The read-back is a group of its own, and fio's JSON counts it among the job's reads.
    let back = groups(&v, 0, "job_verify");
    assert_eq!(back.len(), 1);
    assert_eq!(back[0]["key"], "w");
    assert_eq!(back[0]["ops"].as_u64(), Some(256));
    let o = perflab(&r, &["export", "last", "--format", "fio-json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fio = json(&o);
    let w = &fio["jobs"][0];
    assert_eq!(w["jobname"], "w");
    assert_eq!(w["read"]["total_ios"], 256, "{w}");
    assert_eq!(w["read"]["io_bytes"], 1 << 20);
    assert_eq!(w["write"]["total_ios"], 256);
    assert_eq!(job(&v, 1, "rw")["errors"].as_u64(), Some(0));
    assert!(figure(&v, 1, "verified_blocks_per_worker").unwrap() > 0.0);
    assert_eq!(v["spec"]["jobs"][0]["verify"]["method"], "crc32c");
    // do_verify=0: nothing is read back.
    let quiet = dir.job(
        "quiet.fio",
        "[q]\nfilename=DIR/q.dat\nsize=1m\nrw=write\nverify=md5\ndo_verify=0\n",
    );
    let o = perflab(&r, &["io", &quiet, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        figure(&json(&o), 0, "verified_blocks_per_worker"),
        Some(0.0)
    );
    // One block changed behind perflab's back: the reader finds it, counts it as its error,
    // and the run fails.
    let data = dir.path().join("v.dat");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[10 * 4096 + 100..10 * 4096 + 108].copy_from_slice(b"garbage!");
    std::fs::write(&data, bytes).unwrap();
    let read = dir.job(
        "read.fio",
        "[r]\nfilename=DIR/v.dat\nsize=1m\nbs=4k\nrw=read\nverify=crc32c\n",
    );
    let o = perflab(&r, &["io", &read, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("offset 40960") && err.contains("checksum"),
        "{err}"
    );
    assert!(err.contains("verification failed"), "{err}");
    let v = json(&o);
    let reader = job(&v, 0, "r");
    assert_eq!(reader["errors"].as_u64(), Some(1), "{reader}");
    assert_eq!(reader["ops"].as_u64(), Some(255), "{reader}");
    assert_eq!(v["steps"][0]["trials"][0]["errors"].as_u64(), Some(1));
}

#[test]
fn verify_perflab_cannot_mean_as_fio_is_refused() {
    let dir = Scratch::new("verify-refusals");
    let r = Results::new("jobfile-verify-refusals");
    for (text, wanted) in [
        (
            "bs=4k,8k\nrw=randrw\nverify=md5\n",
            &["v.fio:1", "verify", "one bs"][..],
        ),
        (
            "verify=crc32c\nverify_backlog=16\n",
            &["v.fio:6", "verify_backlog"],
        ),
        ("verify=pattern\n", &["verify", "verify_pattern"]),
        (
            "verify=crc32c\nverify_pattern=0xff\n",
            &["verify_pattern", "not a pattern"],
        ),
        (
            "verify=crc32c\nioengine=null\n",
            &["verify", "moves no data"],
        ),
        ("verify=crc32c\nrw=write:2k\n", &["rw", "whole blocks"]),
        ("verify=crc32c\noffset=2k\n", &["offset", "whole blocks"]),
    ] {
        let f = dir.job(
            "v.fio",
            &format!("[v]\nfilename=DIR/v.dat\nsize=1m\nrw=write\n{text}"),
        );
        refused(&r, &["io", &f], wanted);
    }
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn the_random_map_shortens_ios_that_meet_used_blocks_as_fios_does() {
    let dir = Scratch::new("random-map");
    let r = Results::new("jobfile-random-map");
    // 8 MiB of 4k and 64k reads on the null engine: with fio's random map a pass moves the
    // region's bytes exactly once, so I/Os that run into used blocks are cut short and there
    // are more of them than the split's mean says (fio 3.33: 20 kB a read, not 34 kB).
    let text = |extra: &str| {
        format!("[m]\nioengine=null\nsize=8m\nrw=randread\nbssplit=4k/50:64k/50\n{extra}")
    };
    let mapped = dir.job("map.fio", &text(""));
    let o = perflab(&r, &["io", &mapped, "--json", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let m = job(&v, 0, "m");
    assert_eq!(m["bytes"].as_u64(), Some(8 << 20), "{m}");
    let ops = m["ops"].as_u64().unwrap();
    assert!(ops > 300, "{ops} reads: none shortened");
    // norandommap: every I/O as drawn, blocks may repeat.
    let free = dir.job("free.fio", &text("norandommap\n"));
    let o = perflab(&r, &["io", &free, "--json", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let ops = job(&v, 0, "m")["ops"].as_u64().unwrap();
    assert!((200..300).contains(&ops), "{ops} reads of 34 kB on average");
    // A zoned job with the map on is said to run without it.
    let zoned = dir.job(
        "zoned.fio",
        &text("random_distribution=zoned:50/5:30/15:20/80\n"),
    );
    let o = perflab(&r, &["io", &zoned]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("zone-relative"), "{}", stderr(&o));
}

#[test]
fn copies_without_group_reporting_report_each_and_with_it_as_one() {
    let dir = Scratch::new("copies");
    let r = Results::new("jobfile-copies");
    for (extra, entries) in [("", 3), ("group_reporting\n", 1)] {
        let f = dir.job(
            "c.fio",
            &format!("[c]\nioengine=null\nsize=1m\nrw=read\nbs=4k\nnumjobs=3\n{extra}"),
        );
        let o = perflab(&r, &["io", &f, "--json", "-q"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v = json(&o);
        let copies = groups(&v, 0, "job_copy");
        assert_eq!(copies.len(), if entries == 3 { 3 } else { 0 }, "{extra:?}");
        for c in &copies {
            assert_eq!(c["ops"].as_u64(), Some(256), "{c}");
        }
        let o = perflab(&r, &["export", "last", "--format", "fio-json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let fio = json(&o);
        let jobs = fio["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), entries, "{extra:?}");
        for j in jobs {
            assert_eq!(j["jobname"], "c");
            let ios = j["read"]["total_ios"].as_u64().unwrap();
            assert_eq!(ios, 256 * 3 / entries as u64);
        }
    }
}

#[test]
fn a_job_below_its_rate_min_ends_in_error_and_fios_own_refusals_hold() {
    let dir = Scratch::new("rate-min");
    let r = Results::new("jobfile-rate-min");
    // A floor no file can meet: after fio's 2 s settle and one 1 s cycle the job ends, the
    // run fails (exit 1) and says why in fio's words.
    let f = dir.job(
        "floor.fio",
        "[floor]\nfilename=DIR/f.dat\nsize=1m\nrw=randread\nbs=4k\nrate_iops=200\nrate_iops_min=100\nratecycle=500\ntime_based\nruntime=30\n[slow]\nfilename=DIR/s.dat\nsize=1m\nrw=randread\nbs=4k\nrate_iops=20\nrate_iops_min=100000\ntime_based\nruntime=30\n",
    );
    let o = perflab(&r, &["io", &f, "--json", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("minimum rate exceeds the rate"),
        "{}",
        stderr(&o)
    );
    let f = dir.job(
        "floor.fio",
        "[floor]\nfilename=DIR/f.dat\nsize=1m\nrw=randread\nbs=4k\nrate_iops=50\nruntime=8\ntime_based\n[slow]\nfilename=DIR/s.dat\nsize=1m\nrw=randread\nbs=4k\nrate_iops_min=1000000000\nratecycle=500\ntime_based\nruntime=8\n",
    );
    let o = perflab(&r, &["io", &f, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("slow: rate_iops_min=1000000000 not met, got"),
        "{err}"
    );
    assert!(err.contains("fell below its rate_min"), "{err}");
    let v = json(&o);
    let slow = job(&v, 0, "slow");
    assert_eq!(slow["errors"].as_u64(), Some(1), "{slow}");
    // It ended on its own, after the settle period and a cycle, long before its runtime.
    let ran = slow["elapsed_ns"].as_u64().unwrap();
    assert!(ran < 8_000_000_000, "{ran} ns");
    assert_eq!(job(&v, 0, "floor")["errors"].as_u64(), Some(0));
    let f = dir.job(
        "both.fio",
        "[b]\nfilename=DIR/b.dat\nsize=1m\nrw=read\nrate=1m\nrate_iops=10\n",
    );
    refused(&r, &["io", &f], &["both.fio:1", "mutually exclusive"]);
}

#[test]
fn jobs_at_once_run_each_for_its_own_runtime() {
    let dir = Scratch::new("runtimes");
    let r = Results::new("jobfile-runtimes");
    let f = dir.job(
        "two.fio",
        "[global]\nioengine=null\nsize=1m\nrw=read\nbs=4k\ntime_based\nrate_iops=200\n[short]\nruntime=1\n[long]\nruntime=3\n",
    );
    let o = perflab(&r, &["io", &f, "--json", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // Each ran for its own runtime: the short job's copy ended on its own, the step lasted
    // the long one's (checked by counts at the pace asked, never by the clock).
    let short = job(&v, 0, "short");
    let long = job(&v, 0, "long");
    let (s, l) = (
        short["ops"].as_u64().unwrap(),
        long["ops"].as_u64().unwrap(),
    );
    assert!(
        (150..=210).contains(&s),
        "short did {s} I/Os at 200/s for 1 s"
    );
    assert!(
        (450..=610).contains(&l),
        "long did {l} I/Os at 200/s for 3 s"
    );
}

#[test]
fn libaio_is_linuxs_native_aio_at_its_depth_and_buffered_libaio_one_at_a_time() {
    // O_DIRECT needs a file system that takes it: the scratch folder's, or tmpfs before
    // Linux 6.6 refuses it, and then fio refuses the job too.
    let dir = Scratch::new("libaio");
    let probe = dir.path().join("probe");
    std::fs::write(&probe, [0u8; 4096]).unwrap();
    let direct_ok = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    std::fs::remove_file(&probe).unwrap();
    if !direct_ok {
        eprintln!("skipped: {} takes no O_DIRECT", dir.path().display());
        return;
    }
    let file = dir.job(
        "aio.fio",
        "[global]
directory=DIR
size=2m
bs=4k
ioengine=libaio

[direct]
rw=randread
direct=1
iodepth=8

[buffered]
stonewall
rw=randread
iodepth=8
",
    );
    let r = Results::new("jobfile-libaio");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["spec"]["jobs"][0]["ioengine"], "libaio");
    assert_eq!(v["spec"]["jobs"][0]["engine"], "libaio");
    assert_eq!(v["spec"]["jobs"][0]["iodepth"], 8);
    // Buffered native AIO runs inside io_submit: perflab's sync engine, one at a time.
    assert_eq!(v["spec"]["jobs"][1]["ioengine"], "libaio");
    assert_eq!(v["spec"]["jobs"][1]["engine"], "sync");
    // The random map: each 4 KiB block of 2 MiB once.
    for (s, name) in [(0, "direct"), (1, "buffered")] {
        assert_eq!(job(&v, s, name)["ops"].as_u64(), Some(512), "{name}");
        assert_eq!(job(&v, s, name)["errors"].as_u64(), Some(0), "{name}");
    }
    // Several reads in flight at once on the native engine, never more than its depth
    // (Little's law: the rate times the mean time each took).
    let t = &v["steps"][0]["trials"][0];
    let in_flight =
        t["ops_per_sec"].as_f64().unwrap() * t["latency"]["mean_ns"].as_f64().unwrap() / 1e9;
    assert!(in_flight > 1.0 && in_flight <= 8.0, "{in_flight}");
    assert!(dir.left().is_empty(), "{:?}", dir.left());
}

#[test]
fn each_job_ramps_from_its_own_start_and_counts_only_after() {
    // Three jobs at once, each paced at 500 I/O/s for a runtime of 1 s: one without a ramp,
    // one after a ramp of 1 s, one that starts 1 s late and then ramps 1 s. fio throws
    // away each job's I/O of its own ramp; so does perflab, whatever the others do.
    let dir = Scratch::new("ramps");
    let file = dir.job(
        "ramps.fio",
        "[global]
ioengine=null
size=1m
rw=read
time_based
runtime=1
rate_iops=500

[none]

[ramped]
ramp_time=1

[late]
startdelay=1
ramp_time=1
",
    );
    let r = Results::new("jobfile-ramps");
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    for name in ["none", "ramped", "late"] {
        let j = job(&v, 0, name);
        let ops = j["ops"].as_u64().unwrap();
        // A second's worth at 500 I/O/s, not two or three (the ramps counted).
        assert!((350..=650).contains(&ops), "{name}: {ops} I/Os: {j}");
        let elapsed = j["elapsed_ns"].as_u64().unwrap();
        assert!(
            (800_000_000..1_600_000_000).contains(&elapsed),
            "{name}: its own second, {elapsed} ns"
        );
    }
}

#[test]
fn a_sized_job_and_a_time_based_one_at_once_each_end_their_own_way() {
    // fio runs them together: the sized job until it has moved its bytes (256 reads of
    // 4 KiB at 512 a second: half a second), the time_based one for its runtime.
    let dir = Scratch::new("mixed");
    let file = dir.job(
        "mixed.fio",
        "[global]
ioengine=null
size=1m
rw=read

[sized]
rate_iops=512

[timed]
time_based
runtime=1
rate_iops=500
",
    );
    let r = Results::new("jobfile-mixed");
    let o = perflab(&r, &["io", &file, "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("sized until it has moved its bytes; timed for 1s"),
        "{}",
        stdout(&o)
    );
    let o = perflab(&r, &["io", &file, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    assert_eq!(job(&v, 0, "sized")["ops"].as_u64(), Some(256));
    let timed = job(&v, 0, "timed");
    let ops = timed["ops"].as_u64().unwrap();
    assert!((350..=650).contains(&ops), "{ops}: {timed}");
    let elapsed = timed["elapsed_ns"].as_u64().unwrap();
    assert!(
        (800_000_000..1_600_000_000).contains(&elapsed),
        "its own second: {elapsed} ns"
    );
}
