//! What the integration tests share: a results folder of their own, and running the binary.

#![allow(dead_code)] // each test file uses a part

pub mod browser;
pub mod pki;
pub mod prometheus;
pub mod proxy;
pub mod servers;
pub mod skip;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A results folder of its own under the system's temporary folder, removed afterwards.
pub struct Results(PathBuf);

impl Results {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "perflab-test-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Results(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Results {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the perflab binary with `args` on `results`, without colour.
pub fn run(results: &Results, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("the perflab binary runs")
}

/// Runs the perflab binary with `args` on `results`, calls `crash` (kill a server) after
/// 700 ms, and returns the output once perflab ends, which must be within a minute.
pub fn run_through_crash(results: &Results, args: &[&str], crash: impl FnOnce()) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the perflab binary runs");
    std::thread::sleep(std::time::Duration::from_millis(700));
    crash();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().expect("perflab ends");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    out
}

/// What a JSON run whose database server died mid-step must show: a failed exit, the work
/// before the crash kept, the loss counted as connection errors, the check's failure said.
pub fn assert_crash_recorded(out: &Output) {
    assert_ne!(out.status.code(), Some(0), "{}", stderr(out));
    let v = json(out);
    let t = &v["steps"][0]["trials"][0];
    assert!(
        t["ops"].as_u64().unwrap() > 0,
        "work before the crash is kept"
    );
    assert!(t["errors"].as_u64().unwrap() > 0);
    assert!(
        t["error_samples"].to_string().contains("connection"),
        "{}",
        t["error_samples"]
    );
    assert!(stderr(out).contains("consistency check"), "{}", stderr(out));
}

/// What the command printed on stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the command printed on stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stdout parsed as JSON; the test fails showing both streams if it is not.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Why this host refuses io_uring, or `None` when it allows it, as the binary under test
/// reports it: a one-I/O run asking for `--engine io_uring`, which perflab refuses with its
/// probe's reason (disabled by the `kernel.io_uring_disabled` sysctl, a seccomp filter, an
/// old kernel, or `PERFLAB_TEST_NO_URING=1`) where io_uring does not work. Asked once per
/// test process; any other outcome of that run fails the test.
pub fn io_uring_refusal() -> Option<String> {
    static REFUSAL: OnceLock<Option<String>> = OnceLock::new();
    REFUSAL
        .get_or_init(|| {
            let r = Results::new("uring-probe");
            let dir = r.path().join("io");
            std::fs::create_dir_all(&dir).expect("a scratch folder");
            let o = run(
                &r,
                &[
                    "io",
                    "--path",
                    dir.to_str().unwrap(),
                    "--engine",
                    "io_uring",
                    "--rw",
                    "read",
                    "--bs",
                    "4k",
                    "--size",
                    "64k",
                    "--direct",
                    "0",
                    "--ops",
                    "1",
                    "--warmup",
                    "0s",
                    "--quiet",
                ],
            );
            let err = stderr(&o);
            match o.status.code() {
                Some(0) => None,
                Some(2) if err.contains("io_uring is not available") => {
                    Some(err.trim().to_string())
                }
                _ => panic!("the io_uring probe run failed: {}\n{err}", o.status),
            }
        })
        .clone()
}

/// For a test, or a part of one (`what`), that needs io_uring: true where the kernel allows
/// it, else false after saying SKIPPED with perflab's reason. A host limit, so a skip even
/// under `PERFLAB_REQUIRE_SERVERS` (perflab itself falls back to the sync engine there).
pub fn io_uring_allowed(what: &str) -> bool {
    match io_uring_refusal() {
        None => true,
        Some(why) => {
            skip::skip_host(&format!("{what} needs io_uring; perflab says: {why}"));
            false
        }
    }
}

/// Sends SIGINT to `child` (as Ctrl-C in a terminal would) and waits for it to exit, at most
/// `limit`; returns its exit code and how long it took, or None (the child killed) when it
/// did not exit in time.
pub fn interrupt_and_wait(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<(Option<i32>, std::time::Duration)> {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let asked = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            return Some((status.code(), asked.elapsed()));
        }
        if asked.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Starts the perflab binary with `args` on `results` (no colour, stdout discarded) and reads
/// its stderr on a thread: the receiver hears once a line containing `marker` is printed, and
/// the thread returns all of stderr when the process ends.
pub fn spawn_watching(
    results: &Results,
    args: &[&str],
    marker: &str,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<()>,
    std::thread::JoinHandle<String>,
) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the perflab binary runs");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().expect("stderr is piped");
    let marker = marker.to_string();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(&marker) {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (child, rx, reader)
}
