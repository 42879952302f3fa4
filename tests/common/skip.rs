//! The one place a test decides to skip, so no test passes silently for lack of something.
//!
//! ```text
//!  what is missing                          PERFLAB_REQUIRE_SERVERS set (CI)   unset
//!  software CI installs (servers, clients,  the test fails                     "SKIPPED test: why, install pkg"
//!    Chromium, openssl): skip_or_fail                                          on stderr, the test returns
//!  something of the host no package gives   "SKIPPED test: why" on stderr, the test returns
//!    (io_uring allowed by the kernel, a
//!    block device, tmpfs): skip_host
//! ```
//!
//! `.ci/run` installs every package the tests name and then sets `PERFLAB_REQUIRE_SERVERS`,
//! so in CI a missing server is a broken machine, not a reason to skip. A host limit (a
//! container's seccomp filter refusing io_uring, a results folder on overlayfs) cannot be
//! installed away, so it is a skip everywhere, but a loud one. Only std: this file is
//! compiled into every test binary.

/// Set by CI once it has installed what the tests need.
pub const REQUIRE_SERVERS: &str = "PERFLAB_REQUIRE_SERVERS";

/// Whether missing software fails the test (CI) rather than skipping it.
pub fn servers_required() -> bool {
    std::env::var_os(REQUIRE_SERVERS).is_some()
}

/// The running test's name: libtest names each test's thread after it. Threads a test
/// spawns itself are unnamed unless it names them (see [`named_thread`]).
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("<unnamed test thread>")
        .to_string()
}

/// The test cannot run here because `reason` (software that `package` provides). Under
/// `PERFLAB_REQUIRE_SERVERS` this panics; otherwise it says "SKIPPED" on stderr and the
/// caller returns.
#[track_caller]
pub fn skip_or_fail(reason: &str, package: &str) {
    let test = test_name();
    if servers_required() {
        panic!(
            "{test}: {reason}; {REQUIRE_SERVERS} is set, so this is a failure, not a skip (install {package}, as .ci/run does)"
        );
    }
    say(&format!("SKIPPED {test}: {reason}, install {package}"));
}

/// The test (or the part of it the caller names in `reason`) cannot run on this host, for a
/// reason no package fixes. Always a skip, said on stderr; the caller returns or moves on.
pub fn skip_host(reason: &str) {
    say(&format!("SKIPPED {}: {reason}", test_name()));
}

/// One line on the process's real stderr. Not `eprintln!`: libtest captures that for tests
/// that pass and shows it only for failures, so a skip would be as silent as a pass.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Spawns `f` on a thread named after the calling test, so a skip inside it names the test.
pub fn named_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::Builder::new()
        .name(test_name())
        .spawn(f)
        .expect("a thread can be spawned")
}

/// `name` on PATH, or in the sbin folders that a non-login root PATH may lack; `None`, after
/// [`skip_or_fail`], when it is not there.
pub fn program(name: &str, package: &str) -> Option<std::path::PathBuf> {
    let found = find_program(name);
    if found.is_none() {
        skip_or_fail(
            &format!("{name} not found (looked in PATH and the sbin folders)"),
            package,
        );
    }
    found
}

/// `name` on PATH, or in the sbin folders that a non-login root PATH may lack.
pub fn find_program(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(std::path::PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
