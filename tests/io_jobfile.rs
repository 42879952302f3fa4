//! `perflab io JOB.fio` through the real binary, on real files: jobs at once as groups of one
//! step, stonewalls as steps, numjobs copies, fio's sizes and file names, when jobs start,
//! pause and end (fio's exitwhat, steadystate and waitfor examples, smaller), the refusals
//! (`FILE:LINE`, exit 2) and hostile files. Sizes are small; timings are never asserted (a
//! job that ends early is checked against its runtime, never timed).

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
    let slow = dir.job(
        "slow.fio",
        "[global]\ndirectory=DIR\nsize=1m\n\n[paced]\nrw=read\nrate_min=1m\n",
    );
    refused(&r, &["io", &slow], &["slow.fio:5", "rate_min"]);
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

/// Job `name`'s group (by job) in the first trial of step `s`.
fn job<'a>(v: &'a Value, s: usize, name: &str) -> &'a Value {
    groups(v, s, "job")
        .into_iter()
        .find(|g| g["key"] == name)
        .unwrap_or_else(|| panic!("no job {name} in step {s}: {}", v["steps"][s]))
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
