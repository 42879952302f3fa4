//! `perflab io` through the real binary: engines on a regular filesystem and on tmpfs,
//! sweeps, verification catching corrupted blocks, the safety refusals, the device's own
//! counters, IOzone's surface. Sizes are small; timings are never asserted.
//!
//! Queue depths above 1 and `--engine io_uring` need io_uring; where the host refuses it (the
//! `kernel.io_uring_disabled` sysctl, a container's seccomp filter) those tests, or their
//! io_uring halves, say SKIPPED with perflab's reason (`common::io_uring_allowed`), and
//! `without_io_uring_the_default_engine_falls_back_to_sync` checks what perflab does there.

mod common;

use common::{Results, json, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn perflab(results: &Results, args: &[&str]) -> Output {
    common::run(results, args)
}

/// A scratch directory on a regular (block-device backed) filesystem, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(base: &Path, name: &str) -> Self {
        let dir = base.join(format!("perflab-iotest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn on_disk(name: &str) -> Self {
        // /var/tmp is on disk on Debian even where /tmp is tmpfs.
        Scratch::new(Path::new("/var/tmp"), name)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    fn s(&self) -> &str {
        self.0.to_str().unwrap()
    }
    /// Whatever is left in the directory.
    fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tmpfs directory, if the machine has one mounted at /dev/shm.
fn tmpfs() -> Option<Scratch> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/dev/shm") && l.contains(" tmpfs "))
        .then(|| Scratch::new(Path::new("/dev/shm"), "tmpfs"))
}

const SHORT: [&str; 4] = ["--warmup", "0s", "--duration", "300ms"];

fn io(results: &Results, args: &[&str]) -> Output {
    let mut all = vec!["io", "--json"];
    all.extend_from_slice(args);
    if !args.contains(&"--ops") && !args.contains(&"--duration") {
        all.extend_from_slice(&SHORT);
    }
    perflab(results, &all)
}

fn steps(v: &Value) -> &Vec<Value> {
    v["steps"].as_array().expect("steps")
}

fn trial(step: &Value) -> &Value {
    &step["trials"][0]
}

#[test]
fn both_engines_run_direct_io_on_a_regular_filesystem() {
    let r = Results::new("io-disk");
    let d = Scratch::on_disk("engines");
    for engine in ["io_uring", "sync"] {
        if engine == "io_uring" && !common::io_uring_allowed("the io_uring half") {
            continue;
        }
        let depth = if engine == "sync" { "1" } else { "1,8" };
        let o = io(
            &r,
            &[
                "--path",
                d.s(),
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--iodepth",
                depth,
                "--size",
                "8m",
                "--engine",
                engine,
            ],
        );
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["status"], "complete");
        assert_eq!(v["spec"]["engine"], engine);
        for s in steps(&v) {
            let t = trial(s);
            assert!(t["ops"].as_u64().unwrap() > 0, "{engine}: no I/O done");
            assert_eq!(t["errors"], 0);
            assert_eq!(
                t["bytes"].as_u64().unwrap(),
                t["ops"].as_u64().unwrap() * 4096
            );
            assert!(t["figures"]["cpu_ns_per_io"].as_f64().unwrap() > 0.0);
            let read = t["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["by"] == "direction" && g["key"] == "read")
                .expect("a read group");
            assert_eq!(read["ops"], t["ops"]);
        }
    }
    // The work directory and its files are gone; the scratch directory is as it was.
    assert!(d.entries().is_empty(), "left behind: {:?}", d.entries());
}

/// Where the kernel refuses io_uring (forced here by perflab's test-only switch
/// `PERFLAB_TEST_NO_URING=1`, which makes its probe fail as such a kernel does, so this runs
/// on any host): a run that leaves the engine to perflab completes on the sync engine and the
/// record says why; one that insists on io_uring, or on a queue only io_uring keeps, is
/// refused in one line with the reason.
#[test]
fn without_io_uring_the_default_engine_falls_back_to_sync() {
    let r = Results::new("io-fallback");
    let d = Scratch::on_disk("fallback");
    let no_uring = |args: &[&str]| -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
            .args(["io", "--path", d.s(), "--rw", "randread", "--bs", "4k"])
            .args(["--size", "1m", "--direct", "0"])
            .args(args)
            .args(SHORT)
            .arg("--results")
            .arg(r.path())
            .env("NO_COLOR", "1")
            .env("PERFLAB_TEST_NO_URING", "1")
            .output()
            .expect("the perflab binary runs")
    };
    let why = |text: &str| {
        text.contains("io_uring is not available") && text.contains("PERFLAB_TEST_NO_URING")
    };

    let o = no_uring(&["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["status"], "complete");
    assert_eq!(v["spec"]["engine"], "sync");
    let note = v["spec"]["engine_note"].as_str().expect("an engine note");
    assert!(
        why(note) && note.contains("using the sync engine"),
        "{note}"
    );
    let t = trial(&steps(&v)[0]);
    assert!(t["ops"].as_u64().unwrap() > 0);
    assert_eq!(t["errors"], 0);
    let fallback: Vec<&Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "engine_fallback")
        .collect();
    assert_eq!(fallback.len(), 1, "{}", v["warnings"]);
    assert_eq!(fallback[0]["message"].as_str(), Some(note));
    // The archived record says the same, and so do the tables of `show`.
    let id = v["id"].as_str().unwrap();
    let saved = json(&perflab(&r, &["show", id, "--json"]));
    assert_eq!(saved["spec"]["engine"], "sync");
    assert_eq!(saved["spec"]["engine_note"].as_str(), Some(note));
    let shown = perflab(&r, &["show", id]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = format!("{}{}", common::stdout(&shown), stderr(&shown));
    assert!(why(&text), "show does not say why: {text}");

    // Asking for io_uring by name: refused, not silently replaced.
    let o = no_uring(&["--engine", "io_uring"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(why(&e) && e.contains("--engine sync"), "{e}");
    // A queue depth the sync engine cannot keep: refused, naming the fallback.
    let o = no_uring(&["--iodepth", "8"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(why(&e) && e.contains("sync engine"), "{e}");
    assert!(d.entries().is_empty(), "left behind: {:?}", d.entries());
}

#[test]
fn the_device_counts_what_direct_io_moved() {
    if !common::io_uring_allowed("--iodepth 4") {
        return;
    }
    let r = Results::new("io-device");
    let d = Scratch::on_disk("device");
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "read",
            "--bs",
            "128k",
            "--iodepth",
            "4",
            "--size",
            "32m",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = trial(&steps(&v)[0]);
    let Some(dev) = t["devices"].as_array().and_then(|d| d.first()) else {
        common::skip::skip_host(
            "no block device under /var/tmp here (overlay or network filesystem?), nothing to reconcile",
        );
        return;
    };
    // Little's law: never more in flight than the queue holds (4 deep, one worker).
    let in_flight = t["figures"]["ios_in_flight"].as_f64().unwrap();
    assert!(in_flight > 0.0 && in_flight <= 4.0 * 1.05, "{in_flight}");
    let ours = t["bytes_per_sec"].as_f64().unwrap();
    let theirs = dev["activity"]["read_bytes_per_sec"].as_f64().unwrap();
    // Direct reads must reach the device; others' I/O can only add to its count.
    assert!(
        theirs >= 0.5 * ours,
        "device {theirs} B/s vs perflab {ours} B/s"
    );
}

/// `--cold` in test mode: buffered reads of a file far smaller than memory come from the
/// device, for its pages are dropped as it is opened and after every pass (fio's
/// `invalidate`); and no warning says they measure the page cache.
#[test]
fn cold_buffered_reads_reach_the_device() {
    let r = Results::new("io-cold");
    let d = Scratch::on_disk("cold");
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "read",
            "--bs",
            "64k",
            "--direct",
            "0",
            "--size",
            "8m",
            "--cold",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert!(
        !v.to_string().contains("measure the page cache"),
        "a cold run is not warned as cached"
    );
    let t = trial(&steps(&v)[0]);
    let Some(dev) = t["devices"].as_array().and_then(|d| d.first()) else {
        common::skip::skip_host(
            "no block device under /var/tmp here (overlay or network filesystem?), nothing to reconcile",
        );
        return;
    };
    let ours = t["bytes_per_sec"].as_f64().unwrap();
    let theirs = dev["activity"]["read_bytes_per_sec"].as_f64().unwrap();
    // An 8 MB file read over and over for 300 ms: warm, it would be read from the device
    // once at most; cold, every pass is.
    assert!(
        theirs >= 0.5 * ours,
        "device {theirs} B/s vs perflab {ours} B/s"
    );
    // --all-records stays surface mode's.
    let o = io(&r, &["--path", d.s(), "--all-records"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("surface mode"), "{}", stderr(&o));
}

#[test]
fn engines_run_buffered_on_tmpfs() {
    let Some(d) = tmpfs() else {
        common::skip::skip_host("no tmpfs mounted at /dev/shm");
        return;
    };
    let r = Results::new("io-tmpfs");
    for engine in ["io_uring", "sync"] {
        if engine == "io_uring" && !common::io_uring_allowed("the io_uring half") {
            continue;
        }
        let o = io(
            &r,
            &[
                "--path",
                d.s(),
                "--rw",
                "randrw",
                "--rwmix",
                "70",
                "--bs",
                "4k",
                "--size",
                "4m",
                "--direct",
                "0",
                "--engine",
                engine,
            ],
        );
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        let v = json(&o);
        let t = trial(&steps(&v)[0]);
        assert_eq!(t["errors"], 0);
        let dirs: Vec<&str> = t["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["by"] == "direction")
            .map(|g| g["key"].as_str().unwrap())
            .collect();
        assert_eq!(dirs, ["read", "write"], "{engine}");
        assert!(
            t["devices"].as_array().unwrap().is_empty(),
            "tmpfs has no device"
        );
    }
    assert!(d.entries().is_empty());
}

#[test]
fn a_sweep_over_files_and_block_sizes_reports_every_file() {
    if !common::io_uring_allowed("--iodepth 2") {
        return;
    }
    let r = Results::new("io-sweep");
    let d = Scratch::on_disk("sweep");
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "randwrite",
            "--files",
            "1,3",
            "--bs",
            "4k,16k",
            "--iodepth",
            "2",
            "--size",
            "2m",
            "--fdatasync",
            "8",
            "--threads",
            "2",
            "--warmup",
            "100ms",
            "--duration",
            "300ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(steps(&v).len(), 4);
    for s in steps(&v) {
        let t = trial(s);
        let files = s["params"]["files"].as_u64().unwrap();
        let groups = t["groups"].as_array().unwrap();
        let per_file = groups.iter().filter(|g| g["by"] == "file").count() as u64;
        assert_eq!(per_file, if files > 1 { files } else { 0 });
        assert!(
            groups.iter().any(|g| g["key"] == "sync"),
            "fdatasync every 8 writes"
        );
        assert_eq!(t["errors"], 0);
        // Groups count the measured I/Os only, not the warmup's, whichever worker did them.
        let sum = |by: &str| -> u64 {
            groups
                .iter()
                .filter(|g| g["by"] == by && g["key"] != "sync")
                .map(|g| g["ops"].as_u64().unwrap())
                .sum()
        };
        assert_eq!(sum("direction"), t["ops"].as_u64().unwrap());
        if files > 1 {
            assert_eq!(sum("file"), t["ops"].as_u64().unwrap());
        }
    }
}

#[test]
fn verification_passes_on_good_blocks_and_names_corrupted_ones() {
    if !common::io_uring_allowed("--iodepth 8") {
        return;
    }
    let r = Results::new("io-verify");
    let d = Scratch::on_disk("verify");
    // Mixed random I/O, checked on every read and read back in full afterwards.
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--size",
            "1m",
            "--verify",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = trial(&steps(&v)[0]);
    assert_eq!(t["errors"], 0, "{:?}", t["error_samples"]);
    assert!(t["figures"]["verified_blocks_per_worker"].as_f64().unwrap() > 0.0);

    // Write every block once, keep the files, damage two blocks, read them back.
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "256k",
            "--verify",
            "--keep",
            "--ops",
            "64",
            "--warmup",
            "0s",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let workdir = d.path().join(
        d.entries()
            .into_iter()
            .find(|e| e.starts_with("perflab-io-"))
            .expect("the kept work directory"),
    );
    let data = workdir.join("data0");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[2 * 4096 + 100] ^= 0xff; // torn: a flipped byte in block 2
    let block0 = bytes[..4096].to_vec();
    bytes[5 * 4096..6 * 4096].copy_from_slice(&block0); // misplaced: block 0 copied to block 5
    std::fs::write(&data, &bytes).unwrap();
    let o = io(
        &r,
        &[
            "--path",
            workdir.to_str().unwrap(),
            "--rw",
            "read",
            "--bs",
            "4k",
            "--size",
            "256k",
            "--verify",
            "--ops",
            "64",
            "--warmup",
            "0s",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "corruption must fail the run: {}",
        stderr(&o)
    );
    let v = json(&o);
    let t = trial(&steps(&v)[0]);
    assert_eq!(t["errors"], 2, "{:?}", t["error_samples"]);
    let samples = t["error_samples"].to_string();
    assert!(
        samples.contains("8192") && samples.contains("torn"),
        "{samples}"
    );
    assert!(samples.contains("20480"), "{samples}");
    assert!(stderr(&o).contains("verif"), "{}", stderr(&o));
    // The reused directory was removed after the run (no --keep this time).
    assert!(!workdir.exists());
}

#[test]
fn foreign_files_and_signatures_are_never_written() {
    let r = Results::new("io-safety");
    let d = Scratch::on_disk("safety");
    // A file that looks like an ext4 filesystem: its superblock magic at 1080.
    let img = d.path().join("disk.img");
    let mut content = vec![0u8; 1 << 20];
    content[1080] = 0x53;
    content[1081] = 0xef;
    std::fs::write(&img, &content).unwrap();
    let img_s = img.to_str().unwrap();
    for rw in ["write", "randrw"] {
        let o = io(
            &r,
            &[
                "--path", img_s, "--rw", rw, "--size", "64k", "--direct", "0",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert!(e.contains("refusing to write") && e.contains("ext"), "{e}");
        assert!(e.contains("--destroy-data"), "{e}");
    }
    // --prefill writes too.
    let o = io(
        &r,
        &[
            "--path",
            img_s,
            "--rw",
            "read",
            "--prefill",
            "--size",
            "64k",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&img).unwrap(),
        content,
        "the file was changed"
    );

    // Reading a foreign file is harmless and allowed.
    let o = io(
        &r,
        &[
            "--path", img_s, "--rw", "randread", "--size", "64k", "--direct", "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&img).unwrap(), content);

    // A plain foreign file is refused for writing as well.
    let plain = d.path().join("notes.txt");
    std::fs::write(&plain, vec![b'x'; 65536]).unwrap();
    let o = io(
        &r,
        &[
            "--path",
            plain.to_str().unwrap(),
            "--rw",
            "write",
            "--size",
            "64k",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did not create"), "{}", stderr(&o));

    // Naming it in --destroy-data allows it, and the file stays (perflab did not create it).
    let flag = format!("--destroy-data={img_s}");
    let o = io(
        &r,
        &[
            "--path", img_s, "--rw", "write", "--size", "64k", "--direct", "0", &flag,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(img.exists());
    assert_ne!(std::fs::read(&img).unwrap(), content);
}

#[test]
fn a_test_larger_than_the_free_space_is_refused_before_writing() {
    let r = Results::new("io-full");
    let d = Scratch::on_disk("full");
    let o = io(&r, &["--path", d.s(), "--rw", "write", "--size", "1000t"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    assert!(d.entries().is_empty(), "nothing written: {:?}", d.entries());
}

#[test]
fn bad_io_options_get_one_line_and_exit_code_2() {
    let r = Results::new("io-bad");
    let d = Scratch::on_disk("bad");
    let cases: [(&[&str], &str); 6] = [
        (&["--rw", "sideways"], "randread"),
        (&["--iodepth", "8", "--engine", "sync"], "io_uring"),
        (&["--verify", "--bs", "4k,8k"], "one block size"),
        (&["--think", "1ms"], "--rate"),
        (&["--bs", "1000"], "512"),
        (&["--distribution", "zipf"], "zipf"),
    ];
    for (args, hint) in cases {
        let mut all = vec!["--path", d.s(), "--size", "1m"];
        all.extend_from_slice(args);
        let o = io(&r, &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(hint), "{args:?}: {e}");
    }
    assert!(d.entries().is_empty());
}

#[test]
fn open_loop_io_keeps_its_schedule_and_steady_state_is_reported() {
    let r = Results::new("io-open");
    let d = Scratch::on_disk("open");
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "randread",
            "--size",
            "4m",
            "--direct",
            "0",
            "--rate",
            "400/s",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--interval",
            "100ms",
            "--steady-state",
            "--ss-window",
            "300ms",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = trial(&steps(&v)[0]);
    let ops = t["ops"].as_u64().unwrap();
    assert!((200..=600).contains(&ops), "{ops} I/Os at 400/s for 1 s");
    assert!(t["schedule"]["target_ops_per_sec"].as_f64().unwrap() > 0.0);
    assert!(
        t["figures"]["initial_iops"].as_f64().is_some(),
        "{}",
        t["figures"]
    );
}

#[test]
fn the_surface_mode_sweeps_file_and_record_sizes() {
    let r = Results::new("io-surface");
    let d = Scratch::on_disk("surface");
    let o = perflab(
        &r,
        &[
            "io",
            "--json",
            "--mode",
            "surface",
            "--path",
            d.s(),
            "--size",
            "64k,256k",
            "--bs",
            "4k,64k,128k",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    // 128k records do not fit a 64k file: five points, not six.
    assert_eq!(steps(&v).len(), 5);
    for s in steps(&v) {
        let f = &trial(s)["figures"];
        for test in ["write", "rewrite", "read", "reread"] {
            assert!(
                f[format!("{test}_bytes_per_sec")].as_f64().unwrap() > 0.0,
                "{test}: {f}"
            );
        }
    }
    assert!(d.entries().is_empty(), "{:?}", d.entries());
}

#[test]
fn kept_files_are_marked_and_reused() {
    let r = Results::new("io-keep");
    let d = Scratch::on_disk("keep");
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "randwrite",
            "--size",
            "1m",
            "--files",
            "2",
            "--keep",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let entries = d.entries();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let workdir = d.path().join(&entries[0]);
    let marker = std::fs::read_to_string(workdir.join(".perflab-io")).unwrap();
    assert!(
        marker.contains("data0") && marker.contains("data1"),
        "{marker}"
    );
    let o = io(
        &r,
        &[
            "--path",
            workdir.to_str().unwrap(),
            "--rw",
            "randread",
            "--size",
            "1m",
            "--files",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!workdir.exists(), "removed after the run without --keep");
}

#[test]
fn an_interrupted_io_run_removes_its_files() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    if !common::io_uring_allowed("--iodepth 1..8") {
        return;
    }
    let r = Results::new("io-interrupt");
    let d = Scratch::on_disk("interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args([
            "io",
            "--path",
            d.s(),
            "--rw",
            "randread",
            "--size",
            "4m",
            "--direct",
            "0",
            "--iodepth",
            "1,2,3,4,5,6,7,8",
            "--duration",
            "300ms",
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let steps_saved = || -> usize {
        let Ok(mut dirs) = std::fs::read_dir(r.path().join("runs")) else {
            return 0;
        };
        let Some(Ok(dir)) = dirs.next() else { return 0 };
        std::fs::read_to_string(dir.path().join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["steps"].as_array().map(|s| s.len()))
            .unwrap_or(0)
    };
    while steps_saved() < 1 {
        assert!(Instant::now() < deadline, "no step was ever saved");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !d.entries().is_empty(),
        "the work directory exists while running"
    );
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(d.entries().is_empty(), "left behind: {:?}", d.entries());
}

#[test]
fn verification_handles_odd_block_sizes_exact_op_counts_and_unknown_content() {
    if !common::io_uring_allowed("--iodepth 4 and 16") {
        return;
    }
    let r = Results::new("io-verify-edges");
    let d = Scratch::on_disk("verify-edges");
    // Blocks that do not divide the prefill's 1 MiB pieces, and blocks larger than them.
    for (bs, size) in [("3k", "3m"), ("2m", "8m")] {
        let o = io(
            &r,
            &[
                "--path",
                d.s(),
                "--rw",
                "randrw",
                "--bs",
                bs,
                "--size",
                size,
                "--direct",
                "0",
                "--verify",
                "--iodepth",
                "4",
            ],
        );
        assert!(o.status.success(), "{bs}: {}", stderr(&o));
        assert_eq!(trial(&steps(&json(&o))[0])["errors"], 0, "{bs}");
    }
    // Busy blocks never swallow an admitted I/O: --ops is exact.
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--size",
            "64k",
            "--iodepth",
            "16",
            "--verify",
            "--ops",
            "2000",
            "--warmup",
            "0s",
            "--direct",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(trial(&steps(&json(&o))[0])["ops"], 2000);
    // Files kept from a run without --verify hold no verify blocks: nothing to check, no error.
    let o = io(
        &r,
        &[
            "--path",
            d.s(),
            "--rw",
            "write",
            "--size",
            "256k",
            "--keep",
            "--direct",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let workdir = d.path().join(&d.entries()[0]);
    let o = io(
        &r,
        &[
            "--path",
            workdir.to_str().unwrap(),
            "--rw",
            "randread",
            "--size",
            "256k",
            "--verify",
            "--direct",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(trial(&steps(&json(&o))[0])["errors"], 0);
}

/// `--size` sweeps in test mode: the files are made at the largest size and each step keeps
/// its I/O to the first SIZE bytes of each (Gray's 10 GB of a 400 GB volume).
#[test]
fn a_size_sweep_keeps_each_steps_io_to_its_region() {
    let r = Results::new("io-size-sweep");
    let dir = Scratch::on_disk("size-sweep");
    let o = io(
        &r,
        &[
            "--path",
            dir.s(),
            "--size",
            "1m,8m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--direct",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let sizes: Vec<u64> = steps(&v)
        .iter()
        .map(|s| s["params"]["size_bytes"].as_u64().expect("size_bytes"))
        .collect();
    assert_eq!(sizes, [1 << 20, 8 << 20]);
    assert_eq!(
        v["spec"]["size_bytes"],
        8 << 20,
        "the files are the largest size"
    );
    // One size stays out of the steps' parameters, as before.
    let o = io(&r, &["--path", dir.s(), "--size", "1m", "--direct", "0"]);
    assert!(steps(&json(&o))[0]["params"].get("size_bytes").is_none());
    let o = perflab(
        &r,
        &["io", "--path", dir.s(), "--size", "1m,2m", "--verify"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `--each-volume`: each path alone with one file on it, then the files ramp over all of them
/// (Gray's "each disk alone, then the array").
#[test]
fn each_volume_alone_then_together() {
    let r = Results::new("io-each-volume");
    let a = Scratch::on_disk("vol-a");
    let b = Scratch::on_disk("vol-b");
    let o = io(
        &r,
        &[
            "--path",
            a.s(),
            "--path",
            b.s(),
            "--each-volume",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "1m",
            "--direct",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let got: Vec<(u64, String)> = steps(&v)
        .iter()
        .map(|s| {
            (
                s["params"]["files"].as_u64().unwrap(),
                s["params"]["volume"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, a.s().to_string()),
            (1, b.s().to_string()),
            (1, "all".to_string()),
            (2, "all".to_string())
        ]
    );
    // The second step's one file is on the second volume.
    let groups = trial(&steps(&v)[1])["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let files: Vec<&Value> = groups.iter().filter(|g| g["by"] == "file").collect();
    assert_eq!(files.len(), 1, "{groups:?}");
    assert!(
        files[0]["label"].as_str().unwrap_or("").contains(b.s())
            || files[0]["key"].as_str().unwrap_or("").contains(b.s()),
        "{files:?}"
    );
    // The ramp must reach every volume.
    let o = perflab(
        &r,
        &[
            "io",
            "--path",
            a.s(),
            "--path",
            b.s(),
            "--each-volume",
            "--files",
            "1",
        ],
    );
    assert!(
        o.status.success() || o.status.code() == Some(2),
        "{}",
        stderr(&o)
    );
    let o = perflab(
        &r,
        &["io", "--path", a.s(), "--path", a.s(), "--each-volume"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
