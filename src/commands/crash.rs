//! What a panic that slipped through looks like: one line on stderr, the details in a file.
//!
//! A panic is a bug in perflab, never the user's fault, and a backtrace on the terminal helps
//! nobody at the moment it appears. [`install`] replaces Rust's default panic message with a
//! hook that writes everything a bug report needs (the message, where it happened, the thread,
//! perflab's version and a full backtrace) to a new file in the system's temporary folder,
//! `perflab-crash-<pid>-<time>.txt` (created new, never over an existing file), and prints one
//! line:
//!
//! ```text
//! perflab: bug: <message> at <file:line>; details in <path>; please report it
//! ```
//!
//! On the main thread the process then exits with code 1 (the run failed). On any other thread
//! (the workers, `perflab-worker-N`) the hook returns and the unwind goes on: the trial joins
//! the worker, counts the step as failed, saves the record and exits with code 1 as for any
//! failed step.
//!
//! For tests only, `PERFLAB_TEST_PANIC=main` makes `perflab` panic on purpose once the hook is
//! installed ([`test_panic`]), and `PERFLAB_TEST_PANIC=worker` makes the null workload's
//! sessions panic on their first op, so the integration tests can check both paths.

pub use crate::error::{TEST_PANIC_VAR, test_panic_requested};
use std::backtrace::Backtrace;
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::PanicHookInfo;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// Replaces the default panic output with perflab's (see the module doc).
pub fn install() {
    std::panic::set_hook(Box::new(hook));
}

/// Panics on purpose when `PERFLAB_TEST_PANIC=main` (for tests only).
pub fn test_panic() {
    if test_panic_requested("main") {
        panic!("deliberate panic for tests ({TEST_PANIC_VAR}=main)");
    }
}

fn hook(info: &PanicHookInfo<'_>) {
    let thread = std::thread::current();
    let thread_name = thread.name().unwrap_or("<unnamed>").to_string();
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".into());
    let location = info
        .location()
        .map(|l| format!("{}:{}", l.file(), l.line()))
        .unwrap_or_else(|| "an unknown place".into());
    let backtrace = Backtrace::force_capture();
    let details = details(&message, info, &thread_name, &backtrace);
    let saved = match write_report(&details) {
        Ok(path) => format!("details in {}", path.display()),
        Err(e) => format!("the details could not be saved ({e})"),
    };
    // One line, whatever the message holds.
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    // Writing to stderr must not panic inside the hook (that would abort).
    let _ = writeln!(
        std::io::stderr().lock(),
        "perflab: bug: {one_line} at {location}; {saved}; please report it"
    );
    if thread_name == "main" {
        std::process::exit(1);
    }
}

/// The crash file's text.
fn details(message: &str, info: &PanicHookInfo<'_>, thread: &str, backtrace: &Backtrace) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "perflab {} crashed: a bug in perflab, please report it with this file.\n",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(text, "message:  {message}");
    match info.location() {
        Some(l) => {
            let _ = writeln!(text, "location: {}:{}:{}", l.file(), l.line(), l.column());
        }
        None => {
            let _ = writeln!(text, "location: unknown");
        }
    }
    let _ = writeln!(text, "thread:   {thread}");
    let _ = writeln!(text, "version:  {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        text,
        "os:       {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    let args: Vec<String> = std::env::args().collect();
    let _ = writeln!(
        text,
        "command:  {}",
        crate::target::url::redact_command_line(&args).join(" ")
    );
    let _ = writeln!(text, "\nbacktrace:\n{backtrace}");
    text
}

/// Writes `text` to a new file in the temporary folder and returns its path; never replaces
/// a file (a second crash in the same millisecond gets a suffix).
fn write_report(text: &str) -> std::io::Result<PathBuf> {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let stem = format!(
        "perflab-crash-{}-{}{:03}",
        std::process::id(),
        since.as_secs(),
        since.subsec_millis()
    );
    let dir = std::env::temp_dir();
    let mut last = None;
    for n in 0..100 {
        let name = match n {
            0 => format!("{stem}.txt"),
            n => format!("{stem}-{n}.txt"),
        };
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(text.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_new_files_never_overwritten() {
        let a = write_report("first").unwrap();
        let b = write_report("second").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "first");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "second");
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(&format!("perflab-crash-{}-", std::process::id())));
        let _ = std::fs::remove_file(a);
        let _ = std::fs::remove_file(b);
    }
}
