//! Command sources, IPMI and `--power-cmd`: their output read as watts ([`parse_watts`],
//! [`parse_ipmi`]), a run with a timeout and its process group killed, and the thread that
//! samples every interval and integrates, extrapolated from between samples.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::{PowerError, trapezoid};

/// `ipmitool`'s arguments for one reading.
const IPMI_ARGS: [&str; 3] = ["dcmi", "power", "reading"];
/// A run of a command is killed after max(interval, this).
const MIN_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest sleep of the command thread between looks at its stop flag.
const SLEEP_SLICE: Duration = Duration::from_millis(100);
/// How often a running command is checked for its end (and the stop flag).
const POLL: Duration = Duration::from_millis(5);
/// Bytes kept of a command's stdout or stderr; the rest is read and dropped.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// The watts in a command's output: its first number, integer or decimal (an exponent is
/// allowed), so `42.5`, `123 W` and `power=230.1` all read. Digits inside a word do not count
/// (`PSU1: 230 W` is 230). `None` when there is no number, or when the first one is negative
/// or not finite: that is no reading of watts.
pub fn parse_watts(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let digit_at = |i: usize| at(i).is_some_and(|b| b.is_ascii_digit());
    let mut i = 0;
    while i < bytes.len() {
        let starts = digit_at(i) || (at(i) == Some(b'.') && digit_at(i + 1));
        let before = i.checked_sub(1).and_then(at);
        let before2 = i.checked_sub(2).and_then(at);
        let alnum = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
        // Digits after a letter, `_`, `.` or a hyphen inside a word (`rail-5`) are part of it.
        let in_word = alnum(before)
            || matches!(before, Some(b'_' | b'.'))
            || (before == Some(b'-') && alnum(before2));
        if !starts || in_word {
            i += 1;
            continue;
        }
        let negative = before == Some(b'-');
        let mut end = i;
        while digit_at(end) {
            end += 1;
        }
        if at(end) == Some(b'.') {
            end += 1;
            while digit_at(end) {
                end += 1;
            }
        }
        if matches!(at(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(at(end + 1), Some(b'+' | b'-')));
            if digit_at(end + 1 + sign) {
                end += 1 + sign;
                while digit_at(end) {
                    end += 1;
                }
            }
        }
        let watts: f64 = text.get(i..end)?.parse().ok()?;
        return (!negative && watts.is_finite()).then_some(watts);
    }
    None
}

/// The watts of `ipmitool dcmi power reading`'s output: the number of its line
/// `Instantaneous power reading:   220 Watts`. `None` without that line, or when the BMC says
/// `Power reading state is: deactivated` and reads 0 W (it measures nothing then).
pub fn parse_ipmi(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| {
        l.trim_start()
            .to_ascii_lowercase()
            .starts_with("instantaneous power reading")
    })?;
    let watts = parse_watts(line.split_once(':')?.1)?;
    let deactivated = text.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("power reading state") && l.contains("deactivated")
    });
    (!(deactivated && watts == 0.0)).then_some(watts)
}

/// How long a run of a command may take before it is killed.
pub(super) fn command_timeout(interval: Duration) -> Duration {
    interval.max(MIN_COMMAND_TIMEOUT)
}

/// A command whose output is watts.
#[derive(Debug, Clone)]
pub(super) enum CommandSource {
    /// The user's `--power-cmd`, run with `sh -c`.
    Shell(String),
    /// `ipmitool dcmi power reading`, by the path found.
    Ipmi(PathBuf),
}

impl CommandSource {
    fn command(&self) -> Command {
        match self {
            CommandSource::Shell(cmd) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(cmd);
                c
            }
            CommandSource::Ipmi(exe) => {
                let mut c = Command::new(exe);
                c.args(IPMI_ARGS);
                c
            }
        }
    }

    pub(super) fn command_line(&self) -> String {
        match self {
            CommandSource::Shell(cmd) => format!("sh -c '{cmd}'"),
            CommandSource::Ipmi(exe) => format!("{} {}", exe.display(), IPMI_ARGS.join(" ")),
        }
    }

    fn parse(&self, stdout: &str) -> Option<f64> {
        match self {
            CommandSource::Shell(_) => parse_watts(stdout),
            CommandSource::Ipmi(_) => parse_ipmi(stdout),
        }
    }
}

/// A finished run.
#[derive(Debug)]
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Why a run gave no output to parse.
#[derive(Debug)]
pub(super) enum RunError {
    Spawn(io::Error),
    Wait(io::Error),
    TimedOut,
    Stopped,
}

/// Why a run gave no watts.
#[derive(Debug)]
pub(super) enum SampleError {
    Run(RunError),
    Exit { status: ExitStatus, stderr: String },
    NotANumber(String),
}

impl SampleError {
    /// For a note: `failed (exit status: 1): Could not open device`.
    pub(super) fn describe(&self) -> String {
        match self {
            SampleError::Run(RunError::Spawn(e)) => format!("cannot be started: {e}"),
            SampleError::Run(RunError::Wait(e)) => format!("cannot be waited for: {e}"),
            SampleError::Run(RunError::TimedOut | RunError::Stopped) => {
                "no answer in time: killed".into()
            }
            SampleError::Exit { status, stderr } => {
                format!("failed ({status}){}", stderr_suffix(stderr))
            }
            SampleError::NotANumber(out) => {
                format!("printed {}, no power reading", quote_output(out))
            }
        }
    }

    pub(super) fn into_power_error(self, command: &str, timeout: Duration) -> PowerError {
        let command = command.to_owned();
        match self {
            SampleError::Run(RunError::Spawn(source)) => PowerError::Spawn { command, source },
            SampleError::Run(RunError::Wait(e)) => PowerError::Failed {
                command,
                status: format!("cannot wait for it: {e}"),
                stderr: String::new(),
            },
            SampleError::Run(RunError::TimedOut | RunError::Stopped) => {
                PowerError::TimedOut { command, timeout }
            }
            SampleError::Exit { status, stderr } => PowerError::Failed {
                command,
                status: status.to_string(),
                stderr,
            },
            SampleError::NotANumber(printed) => PowerError::NotANumber { command, printed },
        }
    }
}

/// A command's output for a message: `'abc'` (one line, at most 80 characters) or `nothing`.
pub(super) fn quote_output(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return "nothing".into();
    }
    let joined = words.join(" ");
    let mut shown: String = joined.chars().take(80).collect();
    if shown.len() < joined.len() {
        shown.push('…');
    }
    format!("'{shown}'")
}

/// `: ` and the first line of stderr, or nothing.
pub(super) fn stderr_suffix(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(String::new, |l| format!(": {l}"))
}

/// Runs a command once and reads its watts.
pub(super) fn sample(
    source: &CommandSource,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<f64, SampleError> {
    let ran = run(source.command(), timeout, stop).map_err(SampleError::Run)?;
    if !ran.status.success() {
        return Err(SampleError::Exit {
            status: ran.status,
            stderr: ran.stderr,
        });
    }
    source
        .parse(&ran.stdout)
        .ok_or(SampleError::NotANumber(ran.stdout))
}

/// Runs `command` with stdin null, stdout and stderr captured, in a process group of its own,
/// until it exits and closes its output. Past `timeout`, or when `stop` is set, the group is
/// killed (the shell and whatever it started).
/// How long the pipes may stay open after the command exits before its process group is
/// ended.
const EXIT_GRACE: Duration = Duration::from_millis(200);

fn run(mut command: Command, timeout: Duration, stop: &AtomicBool) -> Result<Ran, RunError> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let deadline = Instant::now() + timeout;
    let mut child = command.spawn().map_err(RunError::Spawn)?;

    // Each pipe is drained by a thread, so neither can fill and stall the command.
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let mut pending = 0;
    if let Some(out) = child.stdout.take() {
        pending += usize::from(drain(out, true, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        pending += usize::from(drain(err, false, tx.clone()));
    }
    drop(tx);

    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut status = None;
    let mut exited: Option<Instant> = None;
    let mut ended = false;
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(s) => status = s,
                Err(e) => {
                    kill_group(&mut child);
                    return Err(RunError::Wait(e));
                }
            }
        }
        if let Some(status) = status
            && pending == 0
        {
            return Ok(Ran {
                status,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
            });
        }
        // The command has exited but something it started still holds its output open
        // (`meter; sleep 60 &`): end its process group, which closes the pipes, and take
        // what it printed rather than wait for the timeout and lose a good reading.
        if status.is_some() && pending > 0 && !ended {
            let at = *exited.get_or_insert_with(Instant::now);
            if at.elapsed() >= EXIT_GRACE {
                kill_group(&mut child);
                ended = true;
            }
        }
        if stop.load(Ordering::Relaxed) {
            kill_group(&mut child);
            return Err(RunError::Stopped);
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(&mut child);
            return Err(RunError::TimedOut);
        }
        let slice = POLL.min(deadline - now);
        if pending == 0 {
            thread::sleep(slice);
            continue;
        }
        match rx.recv_timeout(slice) {
            Ok((is_stdout, bytes)) => {
                pending -= 1;
                if is_stdout {
                    stdout = bytes;
                } else {
                    stderr = bytes;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => pending = 0,
        }
    }
}

/// Starts a thread reading `pipe` to its end and sending what it kept; false if it could
/// not be started (the pipe is then closed unread).
fn drain<R: Read + Send + 'static>(
    mut pipe: R,
    is_stdout: bool,
    tx: mpsc::Sender<(bool, Vec<u8>)>,
) -> bool {
    thread::Builder::new()
        .name("perflab-power-pipe".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = OUTPUT_LIMIT.saturating_sub(kept.len());
                        if let Some(part) = buf.get(..n.min(room)) {
                            kept.extend_from_slice(part);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send((is_stdout, kept));
        })
        .is_ok()
}

/// Kills the child's process group (it leads one: `process_group(0)`), then the child, and
/// reaps it. The group is killed with the shell's `kill` builtin, std having no call for it.
fn kill_group(child: &mut Child) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -s KILL -- -{}", child.id()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// What the command thread publishes.
#[derive(Debug, Clone, Copy)]
struct Published {
    /// Integrated up to `at`.
    joules: f64,
    /// When the last good sample was taken.
    at: Instant,
    /// The last good sample.
    watts: f64,
    errors: u64,
}

#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    state: Mutex<Published>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Published> {
        // The thread never panics holding the lock; if it did, the figures are still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn published(&self) -> Published {
        *self.lock()
    }
}

/// A command source: the thread that runs it, and what it published.
#[derive(Debug)]
pub(super) struct CommandReader {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// A last sample older than this is not extrapolated from.
    stale_after: Duration,
    /// The most `energy_j` has answered: it never answers less.
    reported: f64,
}

impl CommandReader {
    /// Starts the thread, `first` (watts) being the sample just taken.
    pub(super) fn start(
        source: CommandSource,
        first: f64,
        interval: Duration,
        timeout: Duration,
    ) -> Result<CommandReader, PowerError> {
        let now = Instant::now();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(Published {
                joules: 0.0,
                at: now,
                watts: first,
                errors: 0,
            }),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name("perflab-power".into())
            .spawn(move || sample_loop(&source, &thread_shared, now + interval, interval, timeout))
            .map_err(PowerError::Thread)?;
        Ok(CommandReader {
            shared,
            thread: Some(thread),
            stale_after: interval + 2 * timeout,
            reported: 0.0,
        })
    }

    pub(super) fn energy_j(&mut self) -> Option<f64> {
        let joules = extrapolate(&self.shared.published(), Instant::now(), self.stale_after)?;
        self.reported = self.reported.max(joules);
        Some(self.reported)
    }

    /// Failed samples so far.
    pub(super) fn errors(&self) -> u64 {
        self.shared.published().errors
    }
}

impl Drop for CommandReader {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The joules at `now`: the integral to the last sample plus its watts since, unless the last
/// sample is older than `stale_after`.
fn extrapolate(p: &Published, now: Instant, stale_after: Duration) -> Option<f64> {
    let since = now.saturating_duration_since(p.at);
    (since <= stale_after).then_some(p.joules + p.watts * since.as_secs_f64())
}

/// The command thread: a run every `interval` from `next`, until the stop flag is set.
fn sample_loop(
    source: &CommandSource,
    shared: &Shared,
    mut next: Instant,
    interval: Duration,
    timeout: Duration,
) {
    while sleep_until(next, &shared.stop) {
        next = Instant::now() + interval;
        let watts = sample(source, timeout, &shared.stop);
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let at = Instant::now();
        let mut p = shared.lock();
        match watts {
            Ok(watts) => {
                p.joules += trapezoid(p.watts, watts, at.saturating_duration_since(p.at));
                p.at = at;
                p.watts = watts;
            }
            Err(_) => p.errors += 1,
        }
    }
}

/// Sleeps until `when` in slices of at most 100 ms; false as soon as `stop` is set.
fn sleep_until(when: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= when {
            return true;
        }
        thread::sleep((when - now).min(SLEEP_SLICE));
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::env::disk::test_support::TempDir;
    use crate::env::power::test_support::{IPMI_OUTPUT, close, names, probe};
    use crate::env::power::{PowerMeter, discover_in};

    /// A BMC whose power measurement is switched off.
    const IPMI_DEACTIVATED: &str = "
    Instantaneous power reading:                     0 Watts
    Minimum during sampling period:                  0 Watts
    Maximum during sampling period:                  0 Watts
    Average power reading over sample period:        0 Watts
    IPMI timestamp:                           Thu Jan  1 00:00:00 1970
    Sampling period:                          00000000 Seconds.
    Power reading state is:                   deactivated
";

    #[test]
    fn watts_are_the_first_number() {
        assert_eq!(parse_watts("42.5\n"), Some(42.5));
        assert_eq!(parse_watts("123 W"), Some(123.0));
        assert_eq!(parse_watts("123W"), Some(123.0));
        assert_eq!(parse_watts("power=230.1 watts"), Some(230.1));
        assert_eq!(parse_watts("PSU1: 230 W, PSU2: 210 W"), Some(230.0));
        assert_eq!(parse_watts("rail-5: 40 W"), Some(40.0));
        assert_eq!(parse_watts("  .5\n"), Some(0.5));
        assert_eq!(parse_watts("1.2e3"), Some(1200.0));
        assert_eq!(parse_watts("12 W 1.2.3"), Some(12.0));
        assert_eq!(parse_watts("v1.2 reads 40"), Some(40.0));
        assert_eq!(parse_watts("abc"), None);
        assert_eq!(parse_watts(""), None);
        assert_eq!(parse_watts("-5 W"), None);
        assert_eq!(parse_watts("1e999"), None);
    }

    #[test]
    fn ipmi_reading_is_the_instantaneous_line() {
        assert_eq!(parse_ipmi(IPMI_OUTPUT), Some(220.0));
        assert_eq!(
            parse_ipmi("Instantaneous power reading: 187.5 Watts\n"),
            Some(187.5)
        );
        assert_eq!(parse_ipmi(IPMI_DEACTIVATED), None);
        assert_eq!(
            parse_ipmi("Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0\n"),
            None
        );
        assert_eq!(parse_ipmi("Instantaneous power reading: n/a\n"), None);
    }

    #[test]
    fn a_command_that_leaves_a_process_holding_its_output_still_counts() {
        // The meter prints its watts and exits; what it started in the background keeps the
        // pipe open. The reading is taken when the command exits, not lost at the timeout.
        // Waiting for the pipe would take the background sleep's 30 s (the timeout is longer
        // still), so 20 s tells the two apart with room for a loaded machine.
        let started = Instant::now();
        let ran = run(
            CommandSource::Shell("echo 42.5; sleep 30 &".into()).command(),
            Duration::from_secs(60),
            &AtomicBool::new(false),
        )
        .expect("a reading");
        assert_eq!(parse_watts(&ran.stdout), Some(42.5));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn extrapolation_stops_when_stale() {
        let at = Instant::now();
        let p = Published {
            joules: 10.0,
            at,
            watts: 100.0,
            errors: 0,
        };
        let stale = Duration::from_secs(1);
        let half = extrapolate(&p, at + Duration::from_millis(500), stale).expect("fresh");
        assert!(close(half, 60.0), "{half}");
        assert_eq!(extrapolate(&p, at + Duration::from_secs(2), stale), None);
        assert_eq!(extrapolate(&p, at, stale), Some(10.0));
    }

    #[test]
    fn command_watts_are_integrated_in_the_background() {
        let tmp = TempDir::new("power-cmd");
        let started = Instant::now();
        let mut meter =
            PowerMeter::open_in(&probe(&tmp.0), Some("echo 42.5"), Duration::from_millis(50))
                .expect("open")
                .expect("a meter");
        let m = meter.method().clone();
        assert_eq!(m.kind, "command");
        assert_eq!(m.domains, ["echo 42.5"]);
        assert!(m.wall_power && !m.from_counters);
        assert!(m.note.contains("taken for wall power"), "{}", m.note);
        thread::sleep(Duration::from_millis(300));
        let e = meter.energy_j().expect("energy");
        let watts = e / started.elapsed().as_secs_f64();
        assert!((30.0..60.0).contains(&watts), "{e} J: {watts} W");
        assert_eq!(meter.errors(), 0);
        // Dropping stops the thread without waiting out anything long (a hung command's
        // case is below); seconds, not milliseconds, so a loaded machine does not fail it.
        let dropping = Instant::now();
        drop(meter);
        assert!(dropping.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_command_that_prints_no_number_is_an_error() {
        let tmp = TempDir::new("power-cmd-nan");
        let open =
            |cmd: &str| PowerMeter::open_in(&probe(&tmp.0), Some(cmd), Duration::from_secs(1));
        let err = open("echo abc").expect_err("not a number");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'echo abc' printed 'abc', not a number of watts"
        );
        let err = open("true").expect_err("nothing");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'true' printed nothing, not a number of watts"
        );
        let err = open("echo 12; echo no meter >&2; exit 3").expect_err("failed");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'echo 12; echo no meter >&2; exit 3' failed (exit status: 3): no meter"
        );

        let found = discover_in(&probe(&tmp.0), Some("echo abc"));
        assert_eq!(names(&found), ["echo abc"]);
        assert!(!found[0].readable);
        assert!(
            found[0]
                .note
                .as_deref()
                .is_some_and(|n| n.contains("not a number"))
        );
    }

    #[test]
    fn command_failures_are_counted_and_a_hung_command_does_not_hold_drop() {
        let tmp = TempDir::new("power-cmd-hang");
        let fail = tmp.0.join("fail");
        let hang = tmp.0.join("hang");
        let cmd = format!(
            "if [ -e '{}' ]; then exec sleep 10; fi; if [ -e '{}' ]; then exit 1; fi; echo 10",
            hang.display(),
            fail.display()
        );
        let mut meter = PowerMeter::open_in(&probe(&tmp.0), Some(&cmd), Duration::from_millis(50))
            .expect("open")
            .expect("a meter");
        fs::write(&fail, "").expect("flag");
        let waiting = Instant::now();
        while meter.errors() == 0 && waiting.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(meter.errors() > 0);
        // Failed samples leave the last watts to extrapolate from.
        assert!(meter.energy_j().is_some_and(|e| e > 0.0));

        fs::write(&hang, "").expect("flag");
        thread::sleep(Duration::from_millis(150));
        // The hung command sleeps 10 s: a drop that waited for it would take that long.
        let dropping = Instant::now();
        drop(meter);
        assert!(
            dropping.elapsed() < Duration::from_secs(5),
            "{:?}",
            dropping.elapsed()
        );
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let never = AtomicBool::new(false);
        let started = Instant::now();
        let source = CommandSource::Shell("sleep 10; echo 5".into());
        let result = run(source.command(), Duration::from_millis(200), &never);
        assert!(matches!(result, Err(RunError::TimedOut)), "{result:?}");
        // Killed at the timeout, well before the command's own 10 s.
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
