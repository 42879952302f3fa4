//! `\shell` and `\setshell`: a command line run by `sh -c`, as pgbench runs it with
//! `system()` and `popen()`. A command that outlives Ctrl-C is killed with its whole
//! process group, so a hanging `\shell` never holds the run.

use crate::stop::Stop;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The most of a `\setshell` command's output read (an integer is expected).
const MAX_OUTPUT: u64 = 1 << 16;

/// Runs `line`; with `capture`, returns what it printed (else nothing). An exit status
/// other than 0 is an error, as pgbench's.
pub fn run(line: &str, stop: &Stop, capture: bool) -> Result<String, String> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(line)
        .stdin(Stdio::null())
        .process_group(0);
    if capture {
        cmd.stdout(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {line:?}: {e}"))?;
    let pgid = child.id();
    // The output is read on its own thread, so a command that prints a lot never blocks
    // on a full pipe while this one waits for it to end.
    let reader = child.stdout.take().map(|out| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = out.take(MAX_OUTPUT).read_to_string(&mut text);
            text
        })
    });
    let mut wait = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for {line:?}: {e}")),
        }
        if stop.is_set() {
            let _ = crate::engine::process::kill_group(pgid);
            let _ = child.wait();
            return Err(format!("{line:?} was killed: the run is stopping"));
        }
        stop.sleep(wait);
        wait = (wait * 2).min(Duration::from_millis(20));
    };
    let text = reader
        .map(|r| r.join().unwrap_or_default())
        .unwrap_or_default();
    match status.code() {
        Some(0) => Ok(text),
        Some(n) => Err(format!("{line:?} exited with status {n}")),
        None => Err(format!("{line:?} was ended by a signal")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_status_and_stop() {
        let stop = Stop::new();
        assert_eq!(run("echo 42", &stop, true).unwrap().trim(), "42");
        assert!(
            run("exit 3", &stop, false)
                .unwrap_err()
                .contains("status 3")
        );
        let hanging = Stop::new();
        let s = hanging.clone();
        let t = std::thread::spawn(move || run("sleep 30", &s, false));
        std::thread::sleep(Duration::from_millis(100));
        hanging.set();
        let started = std::time::Instant::now();
        assert!(t.join().unwrap().unwrap_err().contains("killed"));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
