//! Storage faults: a disk that fills (ENOSPC, from a size-capped tmpfs) and one that fails
//! (EIO, from device-mapper's `error` target). Each ends as counted errors of kind `io`, or,
//! before anything runs, as one clear line, with the files perflab made removed. Both need
//! root (to mount, to make a device); the EIO test also needs device-mapper in the kernel.
//! Without them the tests say they skipped and why.

mod common;

use common::skip::skip_host;
use common::{Results, json, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A tmpfs of `size` mounted on a folder of its own, unmounted on drop.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(name: &str, size: &str) -> Result<SmallDisk, String> {
        let dir = std::env::temp_dir().join(format!("perflab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            let _ = std::fs::remove_dir(&dir);
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(SmallDisk(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn free_kib(&self) -> u64 {
        let out = Command::new("df").arg("-k").arg(&self.0).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_full_disk_is_one_line_before_the_run_and_counted_io_errors_during_it() {
    if !is_root() {
        skip_host("mounting a small tmpfs needs root");
        return;
    }
    let small = match SmallDisk::mount("enospc", "12m") {
        Ok(d) => d,
        Err(e) => {
            skip_host(&format!("cannot mount a tmpfs here: {e}"));
            return;
        }
    };
    let r = Results::new("storage-enospc");
    let db = format!("sqlite://{}/bank.db", small.path().display());
    // The bank does not fit: one line, and the file this prepare made is gone.
    let o = common::run(&r, &["oltp", "prepare", "--target", &db]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    let last = e.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("disk is full") && last.contains("was removed"),
        "{e}"
    );
    let left: Vec<_> = std::fs::read_dir(small.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "perflab's files are removed: {left:?}");
    // Room for the bank, then the disk fills up under the run: every transaction that
    // cannot grow the history fails, each an io error, and the run goes on to its end.
    drop(small);
    let small = SmallDisk::mount("enospc", "24m").unwrap();
    let db = format!("sqlite://{}/bank.db", small.path().display());
    let o = common::run(&r, &["oltp", "prepare", "--target", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let filler = small.path().join("filler");
    let keep = 200;
    let fill = small.free_kib().saturating_sub(keep);
    let made = Command::new("dd")
        .args(["if=/dev/zero", "bs=1k"])
        .arg(format!("of={}", filler.display()))
        .arg(format!("count={fill}"))
        .output()
        .unwrap();
    assert!(made.status.success());
    let o = common::run(
        &r,
        &[
            "oltp",
            "run",
            "--json",
            "--target",
            &db,
            "--clients",
            "2",
            "--warmup",
            "0s",
            "--duration",
            "1s",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let t = &v["steps"][0]["trials"][0];
    let errors = t["errors"].as_u64().unwrap();
    assert!(errors > 0, "the full disk shows: {t}");
    assert_eq!(
        t["errors_by_kind"]["io"].as_u64(),
        Some(errors),
        "{}",
        t["errors_by_kind"]
    );
    assert!(stderr(&o).contains("disk is full"), "{}", stderr(&o));
}

#[test]
fn a_failing_device_gives_counted_io_errors() {
    if !is_root() {
        skip_host("device-mapper needs root");
        return;
    }
    if !Path::new("/dev/mapper/control").exists() {
        skip_host("no device-mapper here (/dev/mapper/control is missing: the kernel has no dm)");
        return;
    }
    let name = format!("perflab-eio-{}", std::process::id());
    // 64 MiB of a device whose every read and write fails with EIO.
    let made = Command::new("dmsetup")
        .args(["create", &name, "--table", "0 131072 error"])
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            skip_host(&format!(
                "no device-mapper here: dmsetup create failed: {why}"
            ));
            return;
        }
        Err(e) => {
            skip_host(&format!("dmsetup cannot run: {e}"));
            return;
        }
    }
    struct Remove(String);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = Command::new("dmsetup").args(["remove", &self.0]).status();
        }
    }
    let _remove = Remove(name.clone());
    let device = format!("/dev/mapper/{name}");
    let r = Results::new("storage-eio");
    let o = common::run(
        &r,
        &[
            "io",
            "--json",
            "--filename",
            &device,
            "--rw",
            "randread",
            "--size",
            "16m",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
        ],
    );
    let e = stderr(&o);
    assert!(!e.contains("panicked"), "{e}");
    if o.status.success() {
        let v = json(&o);
        let t = &v["steps"][0]["trials"][0];
        let errors = t["errors"].as_u64().unwrap();
        assert!(errors > 0, "{t}");
        assert_eq!(t["errors_by_kind"]["io"].as_u64(), Some(errors), "{t}");
    } else {
        // Refused before the run: one line that says the device failed.
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("Input/output error") || e.contains("EIO"), "{e}");
    }
}
