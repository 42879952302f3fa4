//! `perflab export --format fio-json | fio-jsonplus` through the real binary: a tiny io run
//! exported in fio's JSON shape, checked with python3's json for the keys fio-plot reads and
//! fed (json+) to a real consumer of fio's output, Debian's `fio_jsonplus_clat2csv` (package
//! fio, which .ci/run installs; without it the test skips, or fails under
//! PERFLAB_REQUIRE_SERVERS). A run of another kind is refused with one line and exit 2.

mod common;

use common::{Results, skip, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory on disk (/var/tmp is on disk on Debian even where /tmp is tmpfs).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = Path::new("/var/tmp").join(format!("perflab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The keys fio-plot reads from each job, and fio's own shape, checked by python3.
const CHECK: &str = r#"
import json, sys
d = json.load(open(sys.argv[1]))
plus = sys.argv[2] == "plus"
for k in ("fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs"):
    assert k in d, k
assert len(d["jobs"]) == 2, len(d["jobs"])
for i, job in enumerate(d["jobs"]):
    assert job["groupid"] == i
    opts = {**job["job options"], **d["global options"]}
    for k in ("rw", "bs", "iodepth", "numjobs"):
        int(opts[k]) if k != "rw" else opts[k]
    for k in ("latency_ns", "latency_us", "latency_ms", "usr_cpu", "sys_cpu"):
        assert k in job, k
    r = job["read"]
    assert isinstance(r["bw"], int) and r["bw"] > 0, r["bw"]
    assert r["bw"] == r["bw_bytes"] // 1024
    assert isinstance(r["iops"], float) and r["iops"] > 0
    assert r["lat_ns"]["mean"] > 0 and "iops_stddev" in r
    p = r["clat_ns"]["percentile"]
    assert "99.000000" in p and p["99.000000"] > 0, p
    assert "percentile" not in r["lat_ns"]
    assert r["slat_ns"]["N"] == 0 and "percentile" not in r["slat_ns"]
    for k in ("write", "trim", "sync"):
        assert k in job, k
    assert ("bins" in r["clat_ns"]) == (plus and job["job options"]["rw"] == "randread")
# Step 1 is randread (no writes: zeros, no percentile), step 2 randrw.
assert d["jobs"][0]["write"]["total_ios"] == 0
assert "percentile" not in d["jobs"][0]["write"]["clat_ns"]
assert d["jobs"][1]["write"]["total_ios"] > 0
print("ok")
"#;

#[test]
fn an_io_runs_fio_json_is_read_by_fios_own_tools() {
    let Some(clat2csv) = skip::program("fio_jsonplus_clat2csv", "fio") else {
        return;
    };
    // fio's package depends on python3, which runs fio_jsonplus_clat2csv.
    let Some(python) = skip::program("python3", "fio") else {
        return;
    };
    let results = Results::new("fio-json");
    let scratch = Scratch::new("fio-json");
    let run = common::run(
        &results,
        &[
            "io",
            "--path",
            scratch.0.to_str().unwrap(),
            "--size",
            "8M",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--rw",
            "randread,randrw",
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let out = results.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for (format, file, kind) in [
        ("fio-json", "fio.json", "plain"),
        ("fio-jsonplus", "fio-plus.json", "plus"),
    ] {
        let path = out.join(file);
        let o = common::run(
            &results,
            &[
                "export",
                "last",
                "--format",
                format,
                "-o",
                path.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let checked = Command::new(&python)
            .args(["-c", CHECK])
            .arg(&path)
            .arg(kind)
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "{format}: {}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    // fio_jsonplus_clat2csv writes one CSV per job: the randread step's has a row per fio
    // bucket; the randrw step's directions carry no histogram of their own (records keep
    // only the trial's), so its CSV holds the header alone.
    let csv = out.join("clat.csv");
    let o = Command::new(&python)
        .arg(&clat2csv)
        .arg(out.join("fio-plus.json"))
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let job0 = std::fs::read_to_string(out.join("clat_job0.csv")).unwrap();
    let rows: Vec<&str> = job0
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(rows.len() > 5, "{job0}");
    // nsec, then read_slat (empty), read_clat count: a number in every row.
    let counted: u64 = rows
        .iter()
        .filter_map(|r| r.split(',').nth(4)?.trim().parse::<u64>().ok())
        .sum();
    assert!(counted > 100, "{job0}");
    assert!(out.join("clat_job1.csv").exists());
    // And its own check: the CSV matches the bins it came from.
    let v = Command::new(&python)
        .arg(&clat2csv)
        .arg(out.join("fio-plus.json"))
        .arg(&csv)
        .arg("--validate")
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));

    // A run of another kind: one line, exit 2.
    let null = common::run(&results, &["null", "--duration", "200ms", "--warmup", "0s"]);
    assert!(null.status.success(), "{}", stderr(&null));
    let refused = common::run(&results, &["export", "last", "--format", "fio-json"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("io runs only"), "{err}");
}
