//! Says how the binary was built, for `perflab --version` and every record's `tool` block
//! (the commit it was built from and the CPU level it was compiled for), and compiles
//! perflab's SQL math functions for SQLite (`src/engine/sqlite_math.c`) against the bundled
//! SQLite's header, so that any build has them: `cargo install` reads no `.cargo/config.toml`.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A new commit, a checkout or a staged change moves these.
    for path in [".git/HEAD", ".git/index"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-env-changed=PERFLAB_COMMIT");
    println!("cargo:rustc-env=PERFLAB_COMMIT={}", commit());
    println!("cargo:rustc-env=PERFLAB_TARGET_CPU={}", target_cpu());
    sqlite_math();
}

fn sqlite_math() {
    println!("cargo:rerun-if-changed=src/engine/sqlite_math.c");
    let mut build = cc::Build::new();
    build.file("src/engine/sqlite_math.c").warnings(true);
    // libsqlite3-sys's folder holding sqlite3.h, which it hands its direct dependents.
    if let Ok(dir) = std::env::var("DEP_SQLITE3_INCLUDE") {
        build.include(dir);
    }
    build.compile("perflab_sqlite_math");
}

/// `git describe`'s commit (12 hex digits, `-dirty` with uncommitted changes to tracked
/// files), `PERFLAB_COMMIT` when set (a packager's), else `unknown` (a source tarball).
fn commit() -> String {
    if let Ok(c) = std::env::var("PERFLAB_COMMIT")
        && !c.trim().is_empty()
    {
        return c.trim().to_string();
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{hash}-dirty") } else { hash }
        }
        _ => "unknown".into(),
    }
}

/// The x86-64 microarchitecture level the compiler may assume (`x86-64-v3`), from the
/// target features it was given, and the `target-cpu` named, if any: `native (x86-64-v3)`.
fn target_cpu() -> String {
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let has = |f: &str| features.split(',').any(|x| x == f);
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let level = match arch.as_str() {
        "x86_64" if has("avx512f") && has("avx512bw") && has("avx512vl") => "x86-64-v4",
        "x86_64" if has("avx2") && has("fma") && has("bmi2") => "x86-64-v3",
        "x86_64" if has("sse4.2") && has("popcnt") => "x86-64-v2",
        "x86_64" => "x86-64",
        other => other,
    }
    .to_string();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let named = flags
        .split('\u{1f}')
        .flat_map(|f| f.split_whitespace())
        .filter_map(|f| f.strip_prefix("target-cpu="))
        .next_back()
        .map(str::to_string);
    match named {
        Some(cpu) if cpu != level => format!("{cpu} ({level})"),
        _ => level,
    }
}
