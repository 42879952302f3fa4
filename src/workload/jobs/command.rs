//! One job: a command line split into arguments (no shell unless asked), run to its end as a
//! child process, reaped with the kernel's account of its CPU and memory.
//!
//! - [`split`]: a small quoting-aware splitter (single quotes, double quotes, backslashes),
//!   so `--command "grep -c 'a b' file"` runs `grep` with three arguments, as a shell would,
//!   but without one: no globs, no variables, no pipes. `--shell` hands the text to `sh -c`
//!   instead.
//! - [`find_program`]: a plain program name must be on PATH, a path must be an executable
//!   file, both checked before the run (exit 2), not discovered as N failed jobs.
//! - [`Runner`]: spawns a job (stdin and stdout on /dev/null, stderr into a temporary file
//!   perflab made and unlinked, so a chatty child never blocks on a full pipe and nothing is
//!   left behind), blocks in `wait4` until it ends (no polling: perflab's own CPU per job
//!   stays far below the job's), and reads the last [`STDERR_TAIL`] bytes of stderr when it
//!   failed.

use crate::engine::process::{Exit, Rusage, kill_group, wait_child};
use crate::stop::Stop;
use serde::Serialize;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a failed job's stderr its error keeps: the end, where the reason usually is.
pub const STDERR_TAIL: u64 = 2048;

/// Splits a command line into arguments as a POSIX shell would for plain words: blanks
/// separate; `'...'` keeps everything literally; `"..."` keeps everything but `\"` and `\\`
/// (a backslash before anything else stays); outside quotes a backslash makes the next
/// character literal. An unbalanced quote or a trailing backslash is an error.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    // A word exists once anything (even empty quotes) was seen.
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a single quote (') is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a double quote (\") is not closed".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a double quote (\") is not closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("the command ends with a lone backslash".into()),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    Ok(out)
}

/// Where `program` is: a name with a `/` as given (it must be an executable file); a plain
/// name looked up on PATH, as `execvp` will.
pub fn find_program(program: &str) -> Result<PathBuf, String> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return if executable(&p) {
            Ok(p)
        } else if p.exists() {
            Err(format!("{program} is not an executable file"))
        } else {
            Err(format!("{program} does not exist"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| format!("{program} is not on PATH; give its full path, or install it"))
}

/// One command of a batch, as the record shows it.
#[derive(Debug, Clone, Serialize)]
pub struct JobCommand {
    /// Its short name: the op kind its jobs are counted under.
    pub name: &'static str,
    /// What is executed: the program and its arguments (`sh`, `-c`, TEXT with `--shell`).
    pub argv: Vec<String>,
    /// Its share of a mixed batch.
    pub weight: u64,
}

/// What one finished job did.
#[derive(Debug, Clone, Copy)]
pub struct JobRun {
    pub exit: Exit,
    pub usage: Rusage,
    /// From just before the spawn to the reaping.
    pub elapsed: Duration,
}

/// Runs jobs one after another on the calling thread, with one stderr file for all of them.
pub struct Runner {
    stderr: File,
}

impl Runner {
    /// A runner whose jobs' stderr goes to a new file in `dir`, unlinked at once (the open
    /// file lives on until the runner is dropped, and nothing is left if perflab dies).
    pub fn new(dir: &Path, tag: &str) -> io::Result<Runner> {
        let path = dir.join(format!("perflab-jobs-{}-{tag}.stderr", std::process::id()));
        let stderr = std::fs::OpenOptions::new()
            .read(true)
            // Append: the child's writes land at the end even after the file is emptied.
            .append(true)
            .create_new(true)
            .open(&path)?;
        let _ = std::fs::remove_file(&path);
        Ok(Runner { stderr })
    }

    /// Runs `argv` to its end. Err: it could not be started or waited for.
    ///
    /// The job leads a process group of its own, so that when `stop` is set (Ctrl-C) the job
    /// and everything it started are killed at once: a terminal's Ctrl-C reaches perflab's
    /// group only, and a batch must not run on after perflab stopped.
    pub fn run(&mut self, argv: &[String], stop: &Stop) -> io::Result<JobRun> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        self.stderr.set_len(0)?;
        // Nothing new once the run is stopping (Ctrl-C between two jobs).
        if stop.is_set() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the run is stopping (Ctrl-C)",
            ));
        }
        let start = Instant::now();
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(self.stderr.try_clone()?))
            .process_group(0)
            .spawn()?;
        let group = child.id();
        // Withdrawn as soon as the job is reaped (the group's id may then be reused).
        let kill = stop.on_stop(move || {
            let _ = kill_group(group);
        });
        // A Ctrl-C between the spawn and the registration ran the token's actions without
        // this one: kill the group here, or the job outlives perflab (which gives up on a
        // worker stuck in its op and exits).
        if stop.is_set() {
            let _ = kill_group(group);
        }
        // wait4 reaps it: `child` is dropped without `wait` (std never waits on drop).
        let waited = wait_child(child.id());
        drop(kill);
        let (exit, usage) = waited?;
        let elapsed = start.elapsed();
        drop(child);
        Ok(JobRun {
            exit,
            usage,
            elapsed,
        })
    }

    /// The last [`STDERR_TAIL`] bytes the last job wrote to stderr, as text, trimmed.
    pub fn stderr_tail(&self) -> String {
        let len = self.stderr.metadata().map(|m| m.len()).unwrap_or(0);
        let from = len.saturating_sub(STDERR_TAIL);
        let mut buf = vec![0u8; (len - from) as usize];
        let n = self.stderr.read_at(&mut buf, from).unwrap_or(0);
        buf.truncate(n);
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if from > 0 {
            format!("...{text}")
        } else {
            text.to_string()
        }
    }

    /// For tests: writes to the stderr file as a job would.
    #[cfg(test)]
    fn write_stderr(&mut self, bytes: &[u8]) {
        std::io::Write::write_all(&mut self.stderr, bytes).expect("write");
    }
}

/// The error of a failed job: its name, how it ended, and the end of its stderr.
pub fn failure(name: &str, exit: Exit, stderr: &str) -> String {
    if stderr.is_empty() {
        format!("{name}: {exit} (no stderr)")
    } else {
        format!("{name}: {exit}; stderr: {stderr}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split(text).expect("splits")
    }

    #[test]
    fn splitting_follows_shell_quoting() {
        assert_eq!(words("  a  b\tc "), ["a", "b", "c"]);
        assert_eq!(words("grep -c 'a b' f"), ["grep", "-c", "a b", "f"]);
        assert_eq!(words(r#"echo "x \"y\" \\ \n""#), ["echo", r#"x "y" \ \n"#]);
        assert_eq!(words(r"a\ b c\'d"), ["a b", "c'd"]);
        assert_eq!(words("'' x"), ["", "x"]);
        assert_eq!(words("a'b'\"c\""), ["abc"]);
        assert!(words("   ").is_empty());
    }

    #[test]
    fn unbalanced_quotes_are_bad_input() {
        assert!(split("echo 'a").unwrap_err().contains("single quote"));
        assert!(split("echo \"a").unwrap_err().contains("double quote"));
        assert!(split("echo \"a\\").is_err());
        assert!(split("echo a\\").unwrap_err().contains("backslash"));
    }

    #[test]
    fn programs_are_found_on_path_or_refused() {
        assert!(find_program("sh").is_ok());
        assert!(
            find_program("perflab-no-such-program")
                .unwrap_err()
                .contains("not on PATH")
        );
        assert!(
            find_program("/no/such/file")
                .unwrap_err()
                .contains("does not exist")
        );
        let plain = std::env::temp_dir().join(format!("perflab-jobs-{}-plain", std::process::id()));
        std::fs::write(&plain, "not a program").expect("write");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let refused = find_program(plain.to_str().expect("utf-8"));
        let _ = std::fs::remove_file(&plain);
        assert!(refused.unwrap_err().contains("not an executable file"));
    }

    #[test]
    fn a_failing_job_keeps_the_tail_of_its_stderr() {
        let mut r = Runner::new(&std::env::temp_dir(), "unit").expect("runner");
        let argv: Vec<String> = ["sh", "-c", "echo first >&2; echo boom >&2; exit 3"]
            .map(String::from)
            .to_vec();
        let run = r.run(&argv, &Stop::new()).expect("runs");
        assert_eq!(run.exit, Exit::Code(3));
        assert_eq!(r.stderr_tail(), "first\nboom");
        // The next job starts with an empty file.
        let ok = r.run(&["true".to_string()], &Stop::new()).expect("runs");
        assert!(ok.exit.success());
        assert_eq!(r.stderr_tail(), "");
        r.write_stderr(&vec![b'x'; 3000]);
        assert_eq!(r.stderr_tail().len(), STDERR_TAIL as usize + 3);
        assert!(failure("sh", run.exit, "boom").contains("exit status 3; stderr: boom"));
    }

    #[test]
    fn no_job_starts_once_the_run_is_stopping() {
        let mut r = Runner::new(&std::env::temp_dir(), "unit-stopped").expect("runner");
        let stop = Stop::new();
        stop.set();
        let marker = std::env::temp_dir().join(format!("perflab-jobs-{}-ran", std::process::id()));
        let argv: Vec<String> = ["touch", marker.to_str().expect("utf-8")]
            .map(String::from)
            .to_vec();
        let e = r.run(&argv, &stop).expect_err("refused");
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        assert!(!marker.exists(), "the job ran");
    }
}
