//! Suites: named lists of runs. A suite entry is a command line, so a suite runs exactly what
//! a user could type, through the same validation.
//!
//! The default suite is the machine's balance sheet: memory bandwidth, memory latency, the
//! lotto test, CPU scaling, storage (on the results filesystem, or `--io-path`) and DebitCredit
//! on embedded SQLite, Gray's scans of 10 B and 1 KB rows on embedded SQLite beside perflab's
//! own scan of the same rows (the native ceiling), and the cache study's mix on a throwaway memcached (when memcached is
//! installed; the suite says so when it is not). `--quick`
//! shortens every step so the whole suite takes under a minute on two cores; the full suite
//! takes a few minutes.
//!
//! - [`run`]: a suite's invocation: the entries checked, then run through `crate::launch`.

pub mod run;

use crate::env::Environment;
use crate::vocab::units::format_bytes;
use std::path::Path;

/// One run of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteEntry {
    /// The capability it measures, for progress lines.
    pub capability: &'static str,
    /// The command line after `perflab`.
    pub args: Vec<String>,
}

pub const SUITES: [&str; 1] = ["default"];

/// The entries of suite `name`, sized for this machine. `io_path` is where the storage
/// tests put their (temporary) files.
pub fn entries(
    name: &str,
    quick: bool,
    env: &Environment,
    io_path: &Path,
) -> Option<Vec<SuiteEntry>> {
    (name == "default").then(|| {
        let mut v = default_suite(quick, env);
        // Without io_uring (a kernel or container that refuses it) the sync engine keeps one
        // I/O in flight per worker: the same number of outstanding I/Os comes from threads.
        let queued = crate::engine::probe_uring().is_ok();
        v.extend(storage(quick, io_path, queued));
        v.push(oltp(quick));
        v.extend(scan(quick));
        if memcached_installed() {
            v.push(kv(quick));
        }
        v
    })
}

/// What suite `name` leaves out on this machine, each with the reason and the fix.
pub fn skipped(name: &str) -> Vec<String> {
    if name == "default" && !memcached_installed() {
        vec!["cache: skipped, memcached is not installed (apt-get install memcached)".into()]
    } else {
        Vec::new()
    }
}

/// Whether `perflab kv` can start its throwaway memcached here.
fn memcached_installed() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/usr/local/bin".into()])
        .any(|d: std::path::PathBuf| d.join("memcached").is_file())
}

/// The cache study's mix on a throwaway memcached over loopback: 90% gets and 10% sets
/// over three size classes, a few connection counts.
fn kv(quick: bool) -> SuiteEntry {
    let (clients, keys, warmup, duration) = if quick {
        ("1,8", "9999", "500ms", "2s")
    } else {
        ("1,4,16,50", "99999", "1s", "5s")
    };
    SuiteEntry {
        capability: "cache",
        args: [
            "kv",
            "--clients",
            clients,
            "--threads",
            "1",
            "--key-maximum",
            keys,
            "--warmup",
            warmup,
            "--duration",
            duration,
        ]
        .map(String::from)
        .to_vec(),
    }
}

/// Scans: the native ceiling, then SQLite on the same rows (warm, one client: rows/s per CPU
/// as Gray quoted them), 10 B and 1 KB rows, both predicates.
fn scan(quick: bool) -> Vec<SuiteEntry> {
    // Tables larger than a last-level cache, or the ceiling measures the cache.
    let (size, duration) = if quick { ("64m", "1s") } else { ("256m", "3s") };
    let common = [
        "--table",
        "ten,thousand",
        "--predicate",
        "trivial,complex",
        "--cache",
        "warm",
        "--threads",
        "1",
        "--size",
        size,
        "--warmup",
        "0s",
        "--duration",
        duration,
    ];
    let with = |first: &[&str]| -> Vec<String> {
        first
            .iter()
            .chain(common.iter())
            .map(|s| s.to_string())
            .collect()
    };
    vec![
        SuiteEntry {
            capability: "scan ceiling",
            args: with(&["scan", "--target", "native"]),
        },
        SuiteEntry {
            capability: "scan",
            args: with(&["scan", "--native", "off"]),
        },
    ]
}

/// The storage section: random 8 KiB reads at depths 1 and 32, random 4 KiB writes, and
/// sequential 256 KiB reads and writes at depth 2, direct I/O unless the path is on tmpfs.
/// `queued`: io_uring works here, so the outstanding I/Os are a queue depth; otherwise they
/// are as many threads, each with one I/O in flight (fio's psync with numjobs).
fn storage(quick: bool, path: &Path, queued: bool) -> Vec<SuiteEntry> {
    let (warmup, duration, size) = if quick {
        ("500ms", "2s", "256m")
    } else {
        ("1s", "5s", "1g")
    };
    let direct = match crate::env::disk::mount_of(path) {
        Some(m) if m.fs_type == "tmpfs" => "0",
        _ => "1",
    };
    let path = path.display().to_string();
    let io = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["io", "--path", &path, "--size", size, "--direct", direct]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        if !queued && let Some(at) = extra.iter().position(|a| a == "--iodepth") {
            extra[at] = "--threads".into();
            extra.extend(["--engine", "sync"].map(String::from));
        }
        v.extend(extra);
        v.extend(["--warmup", warmup, "--duration", duration].map(String::from));
        v
    };
    vec![
        SuiteEntry {
            capability: "storage random reads",
            args: io(&["--rw", "randread", "--bs", "8k", "--iodepth", "1,32"]),
        },
        SuiteEntry {
            capability: "storage random writes",
            // Written in full first, as fio lays out its files: 4 KiB writes into a file that
            // is only reserved split its extents, and removing the file afterwards then took
            // a minute or more on ext4 (and the writes measured the extent conversion).
            args: io(&[
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--iodepth",
                "32",
                "--prefill",
            ]),
        },
        SuiteEntry {
            capability: "storage sequential",
            args: io(&["--rw", "read,write", "--bs", "256k", "--iodepth", "2"]),
        },
    ]
}

/// DebitCredit on embedded SQLite in a temporary file: scale 1, a few client counts.
fn oltp(quick: bool) -> SuiteEntry {
    let (clients, warmup, duration) = if quick {
        ("1,2", "500ms", "2s")
    } else {
        ("1,2,4", "1s", "5s")
    };
    SuiteEntry {
        capability: "oltp",
        args: [
            "oltp",
            "--scale",
            "1",
            "--clients",
            clients,
            "--warmup",
            warmup,
            "--duration",
            duration,
        ]
        .map(String::from)
        .to_vec(),
    }
}

fn default_suite(quick: bool, env: &Environment) -> Vec<SuiteEntry> {
    let n = env.cpu.logical_cpus.filter(|&n| n > 0).unwrap_or(1);
    let one_and_all = if n > 1 { format!("1,{n}") } else { "1".into() };
    let llc4 = env
        .llc_total_bytes()
        .filter(|&b| b > 0)
        .map_or(128 << 20, |c| (4 * c).next_power_of_two());
    let (warmup, duration) = if quick { ("500ms", "2s") } else { ("1s", "5s") };
    let latency_sizes = if quick {
        // 16 KiB, then every 8x, then 4x the last-level cache: each cache level and DRAM.
        let mut sizes = Vec::new();
        let mut s: u64 = 16 << 10;
        while s < llc4 {
            sizes.push(s);
            s *= 8;
        }
        sizes.push(llc4);
        sizes
            .iter()
            .map(|&b| b.to_string())
            .collect::<Vec<_>>()
            .join(",")
    } else {
        format!("16k..{llc4}:x2")
    };
    let common = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(["--warmup", warmup, "--duration", duration].map(String::from));
        v
    };
    let kernels = if quick {
        "copy,triad"
    } else {
        "read,write,copy,scale,add,triad"
    };
    let lotto_size = if quick { 256 << 20 } else { 1 << 30 };
    vec![
        SuiteEntry {
            capability: "memory bandwidth",
            args: common(&["memory", "--kernel", kernels, "--threads", &one_and_all]),
        },
        SuiteEntry {
            capability: "memory latency",
            args: {
                let mut a = common(&["memory", "--kernel", "latency", "--size", &latency_sizes]);
                // Latency steps need less time: each op is thousands of loads.
                let d = if quick { "1s" } else { "2s" };
                let i = a.iter().position(|x| x == "--duration").unwrap_or(0);
                a[i + 1] = d.into();
                a
            },
        },
        SuiteEntry {
            capability: "memory lotto",
            args: common(&[
                "memory",
                "--kernel",
                "lotto",
                "--size",
                &format_bytes(lotto_size).replace(' ', ""),
                "--threads",
                &format!("1..{n}"),
            ]),
        },
        SuiteEntry {
            capability: "cpu",
            args: common(&["cpu", "--threads", &format!("1..{n}")]),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_suite_fits_the_machine() {
        let mut env = Environment::default();
        env.cpu.logical_cpus = Some(2);
        let quick = entries("default", true, &env, Path::new("/tmp")).unwrap();
        // The cache line needs memcached; without it the suite says it skipped it.
        let cache = usize::from(memcached_installed());
        assert_eq!(quick.len(), 10 + cache);
        assert_eq!(skipped("default").len(), 1 - cache);
        assert_eq!(quick[7].args[0], "oltp");
        assert_eq!(quick[8].args[..3], ["scan", "--target", "native"]);
        assert_eq!(quick[9].args[..3], ["scan", "--native", "off"]);
        assert!(quick[4].args.contains(&"1,32".to_string()));
        assert!(quick[0].args.contains(&"1,2".to_string()));
        assert!(quick[1].args.iter().any(|a| a.starts_with("16384,")));
        assert!(entries("nope", true, &env, Path::new("/tmp")).is_none());
    }

    #[test]
    fn without_io_uring_the_outstanding_ios_come_from_threads() {
        let with = storage(true, Path::new("/tmp"), true);
        assert!(with[0].args.windows(2).any(|w| w == ["--iodepth", "1,32"]));
        let without = storage(true, Path::new("/tmp"), false);
        for e in &without {
            assert!(!e.args.contains(&"--iodepth".to_string()), "{:?}", e.args);
            assert!(e.args.windows(2).any(|w| w == ["--engine", "sync"]));
        }
        assert!(
            without[0]
                .args
                .windows(2)
                .any(|w| w == ["--threads", "1,32"])
        );
        assert!(without[2].args.windows(2).any(|w| w == ["--threads", "2"]));
    }
}
