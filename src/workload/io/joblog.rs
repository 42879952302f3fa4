//! fio's log files: `write_bw_log`, `write_lat_log`, `write_iops_log`, named, timed and
//! written as fio 3.33 writes them, from perflab's own measure of each I/O.
//!
//! ```text
//!  jobplan: LogPlan per job ──► session: CopyLogs per copy ──► files, when the copy is done
//!           (prefixes, log_avg_msec,     io(): every measured      PREFIX_bw.N.log (N: fio's
//!            log_offset, per_job_logs,   completion, in its        thread number) or, with
//!            which latencies fio keeps)  window when averaged      per_job_logs=0, PREFIX_bw.log
//! ```
//!
//! What fio writes (stat.c `add_*_sample`, `add_log_sample`, `__add_samples`; iolog.c
//! `flush_samples`; init.c `gen_log_name`), and so perflab:
//! - a line is `TIME, VALUE, DIRECTION, BS, PRIO` (`TIME, VALUE, DIRECTION, BS, OFFSET, PRIO`
//!   with `log_offset=1`): TIME in milliseconds since the copy began its measured I/O (fio's
//!   epoch, restarted at the end of `ramp_time`; Unix milliseconds with `log_unix_epoch`),
//!   DIRECTION 0 read, 1 write, 2 trim, PRIO 0 (perflab sets no priorities);
//! - without `log_avg_msec`, one line per I/O: `_lat` its time from just before its submission
//!   to its completion, `_clat` from the end of its submission (on the engines that queue:
//!   io_uring, libaio, null; on the others the two are one), `_slat` the submission (empty on
//!   the engines that do not queue, as fio's), all in nanoseconds; `_bw` its bytes over its
//!   `_clat` time (bytes × 10⁶ / ns), `_iops` 1; BS the I/O's bytes, OFFSET its offset;
//! - with `log_avg_msec=N`: latencies averaged over each direction's window of N ms (a line when
//!   a completion finds the window over, at that completion's time, and one for what is left
//!   when the copy ends), `_bw` in KiB/s and `_iops` in I/Os a second over each whole window of
//!   N ms, at its end (the last, partial window is not logged, as fio's helper thread never
//!   samples it); BS and OFFSET 0;
//! - fio's switches: `disable_lat`, `disable_clat`, `disable_slat` leave out their files,
//!   `disable_bw_measurement` the per-I/O `_bw` lines, `gtod_reduce` (or all three
//!   `disable_*` but lat) the per-I/O `_iops` lines; engines fio keeps no statistics for
//!   (`filestat`, `filedelete`) log nothing;
//! - files are made (truncated) when the copy ends; with `per_job_logs=0` every copy appends
//!   to one file, as fio does, so lines of an earlier run of the same file stay before them.
//!
//! Unlike fio, a verify pass's reads are not logged (perflab does not count them among a job's
//! I/O either).

use super::fio::job::{FioEngine, FioJob};
use crate::engine::EngineKind;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Samples a copy keeps before writing them out (per-job logs only).
const FLUSH_EVERY: usize = 1 << 16;

/// Appends to one file (per_job_logs=0) are one copy's whole log at a time.
static APPENDS: Mutex<()> = Mutex::new(());

/// What a job logs: the files' prefixes and fio's options about them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogPlan {
    /// `write_bw_log`'s prefix (a bare flag: the job's name), as a path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bw: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<PathBuf>,
    /// `log_avg_msec` for the latencies' logs (0: every I/O).
    pub avg_msec: u64,
    /// The window of the bandwidth log (`log_avg_msec`, or `bwavgtime` if smaller).
    pub bw_avg_msec: u64,
    /// The window of the IOPS log (`log_avg_msec`, or `iopsavgtime` if smaller).
    pub iops_avg_msec: u64,
    /// `log_offset`.
    pub offset: bool,
    /// `per_job_logs` (default 1): one file per copy.
    pub per_job: bool,
    /// `log_unix_epoch` / `log_alternate_epoch`: times are Unix milliseconds.
    pub unix_epoch: bool,
    /// Which of `_lat`, `_clat`, `_slat` are written (not `disable_lat` ...).
    pub lat_kinds: [bool; 3],
    /// The per-I/O `_bw` lines (not `disable_bw_measurement`).
    pub bw_each: bool,
    /// The per-I/O `_iops` lines (not fio's `gtod_reduce`).
    pub iops_each: bool,
    /// The engine queues its I/O (fio's async engines): submission and completion are timed
    /// apart, and `_slat` has lines.
    pub queued: bool,
    /// The engine is one fio keeps no statistics for: the files are empty.
    pub silent: bool,
    /// fio's thread number of the job's first copy (from 1, over every job of the run).
    pub first_thread: u32,
}

impl LogPlan {
    /// What `job` logs, run on `engine`, its first copy fio's thread `first_thread`; None
    /// when it writes no log, or `(option, why)` when perflab cannot write them as fio.
    /// Relative prefixes are of the folder perflab runs in (fio's working directory).
    pub fn of(
        job: &FioJob,
        engine: EngineKind,
        first_thread: u32,
    ) -> Result<Option<LogPlan>, (&'static str, String)> {
        if job.write_hist_log.is_some() {
            return Err((
                "write_hist_log",
                "fio's histogram logs are not supported yet (each job's HDR histogram is in the record; perflab io --hlog FILE writes HdrHistogram's interval log)".into(),
            ));
        }
        let prefix = |o: &Option<String>,
                      option: &'static str|
         -> Result<_, (&'static str, String)> {
            let Some(p) = o else { return Ok(None) };
            let p = PathBuf::from(p);
            let p = if p.is_absolute() {
                p
            } else {
                std::env::current_dir()
                    .map_err(|e| (option, format!("the working folder cannot be read ({e})")))?
                    .join(p)
            };
            let folder = p.parent().unwrap_or(Path::new("/"));
            if !folder.is_dir() {
                return Err((
                    option,
                    format!(
                        "the log's folder {} does not exist; make it, or give a prefix in an existing folder",
                        folder.display()
                    ),
                ));
            }
            Ok(Some(p))
        };
        let plan = LogPlan {
            bw: prefix(&job.write_bw_log, "write_bw_log")?,
            lat: prefix(&job.write_lat_log, "write_lat_log")?,
            iops: prefix(&job.write_iops_log, "write_iops_log")?,
            avg_msec: u64::from(job.log_avg_msec),
            // init.c: the smaller of the two when bwavgtime / iopsavgtime is written.
            bw_avg_msec: u64::from(
                job.bw_avg_time
                    .map_or(job.log_avg_msec, |b| b.min(job.log_avg_msec)),
            ),
            iops_avg_msec: u64::from(
                job.iops_avg_time
                    .map_or(job.log_avg_msec, |b| b.min(job.log_avg_msec)),
            ),
            offset: job.log_offset,
            per_job: job.per_job_logs,
            unix_epoch: job.log_unix_epoch || job.log_alternate_epoch,
            lat_kinds: [!job.disable_lat, !job.disable_clat, !job.disable_slat],
            bw_each: !job.disable_bw,
            // io_u.c's gtod_reduce(): the option, or the three that time an I/O all off.
            iops_each: !(job.gtod_reduce || job.disable_clat && job.disable_slat && job.disable_bw),
            queued: matches!(
                engine,
                EngineKind::IoUring | EngineKind::Libaio | EngineKind::Null
            ),
            silent: matches!(engine, EngineKind::FileStat | EngineKind::FileDelete),
            first_thread,
        };
        if !plan.any() {
            return Ok(None);
        }
        if !job.stats {
            return Err((
                "stats",
                "stats=0 leaves fio's logs empty; remove stats=0 or the write_*_log lines".into(),
            ));
        }
        // Linux runs buffered AIO inside io_submit: fio's libaio then logs the I/O as its
        // submission, which perflab's sync engine, running it, does not time apart.
        if job.ioengine == FioEngine::Libaio && !job.direct && plan.lat.is_some() {
            return Err((
                "write_lat_log",
                "libaio without direct=1 runs each I/O inside its submission, which fio logs as _slat; perflab runs it on its sync engine and cannot split the two: give direct=1, or ioengine=psync (the same I/O, fio logs it as _clat)".into(),
            ));
        }
        Ok(Some(plan))
    }

    /// Whether the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some()
    }

    /// Whether an I/O's submission must be timed apart from its completion.
    pub fn splits(&self) -> bool {
        self.queued && self.lat.is_some() && (self.lat_kinds[1] || self.lat_kinds[2])
    }

    /// Whether the logs need each I/O's own times: a latency log, or a line for every I/O.
    /// The averaged `_bw` and `_iops` windows do with a clock shared among completions (as
    /// fio's, whose clock is read once in 64 calls with `gtod_reduce`).
    pub fn needs_each_time(&self) -> bool {
        (self.lat.is_some() && self.lat_kinds.iter().any(|k| *k))
            || (self.bw.is_some() && self.bw_avg_msec == 0 && self.bw_each)
            || (self.iops.is_some() && self.iops_avg_msec == 0 && self.iops_each)
    }

    /// Every file the job's copies write, for the plan and the record.
    pub fn files(&self, copies: u32) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (kind, _) in self.kinds() {
            let Some(prefix) = self.prefix(kind) else {
                continue;
            };
            if self.per_job {
                for c in 0..copies {
                    out.push(name(prefix, kind.suffix(), Some(self.first_thread + c)));
                }
            } else {
                out.push(name(prefix, kind.suffix(), None));
            }
        }
        out
    }

    fn prefix(&self, kind: Kind) -> Option<&Path> {
        match kind {
            Kind::Bw => self.bw.as_deref(),
            Kind::Iops => self.iops.as_deref(),
            Kind::Lat | Kind::Clat | Kind::Slat => self.lat.as_deref(),
        }
    }

    /// The logs written, in fio's order of setting them up, each with its window.
    fn kinds(&self) -> Vec<(Kind, u64)> {
        let mut out = Vec::new();
        if self.lat.is_some() {
            for (i, k) in [Kind::Lat, Kind::Slat, Kind::Clat].into_iter().enumerate() {
                if self.lat_kinds[[0, 2, 1][i]] {
                    out.push((k, self.avg_msec));
                }
            }
        }
        if self.bw.is_some() {
            out.push((Kind::Bw, self.bw_avg_msec));
        }
        if self.iops.is_some() {
            out.push((Kind::Iops, self.iops_avg_msec));
        }
        out
    }
}

/// `PREFIX_TYPE.N.log`, or `PREFIX_TYPE.log` without a thread number (init.c's
/// `gen_log_name`).
fn name(prefix: &Path, kind: &str, thread: Option<u32>) -> PathBuf {
    let p = prefix.display();
    PathBuf::from(match thread {
        Some(n) => format!("{p}_{kind}.{n}.log"),
        None => format!("{p}_{kind}.log"),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lat,
    Clat,
    Slat,
    Bw,
    Iops,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Lat => "lat",
            Kind::Clat => "clat",
            Kind::Slat => "slat",
            Kind::Bw => "bw",
            Kind::Iops => "iops",
        }
    }
}

/// One line of a log.
#[derive(Debug, Clone, Copy)]
struct Sample {
    time: u64,
    value: u64,
    dir: u8,
    bs: u64,
    offset: u64,
}

/// A latency log's windows (fio's `avg_window` per direction): the sum and count of its
/// values and where the current window began.
#[derive(Debug, Default)]
struct Mean {
    last: [u64; 3],
    sum: [u128; 3],
    n: [u64; 3],
}

/// A rate log's windows: what each direction moved in the window `index` (of the log's ms).
#[derive(Debug, Default)]
struct Rate {
    index: u64,
    ios: [u64; 3],
    bytes: [u64; 3],
}

#[derive(Debug)]
enum Window {
    /// Every I/O a line.
    Each,
    Mean(Mean),
    Rate(Rate),
}

/// One log of one copy.
#[derive(Debug)]
struct Log {
    kind: Kind,
    path: PathBuf,
    msec: u64,
    window: Window,
    lines: Vec<Sample>,
    /// The file, once lines have been written to it (per-job logs write as they go).
    file: Option<std::io::BufWriter<std::fs::File>>,
}

/// One I/O as a copy's logs see it: its direction (0 read, 1 write, 2 trim), bytes, offset
/// and times.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    pub dir: u8,
    pub bytes: u64,
    pub offset: u64,
    /// Clock read just before its submission.
    pub start: Instant,
    /// Clock read when its submission returned (the start, where not timed apart).
    pub issued: Instant,
    /// Clock read after its completion was seen.
    pub end: Instant,
}

/// The logs of one copy of a job.
#[derive(Debug)]
pub struct CopyLogs {
    plan: LogPlan,
    logs: Vec<Log>,
    /// The copy's epoch: its first measured I/O's submission.
    epoch: Option<Instant>,
    /// Unix milliseconds at the epoch, with `log_unix_epoch`.
    unix_ms: u64,
    /// The first failure to write, reported when the copy is done.
    failed: Option<String>,
}

impl CopyLogs {
    /// The logs of copy `copy` (from 0) of a job logging as `plan` says.
    pub fn new(plan: &LogPlan, copy: u32) -> CopyLogs {
        let thread = plan.per_job.then_some(plan.first_thread + copy);
        let logs = plan
            .kinds()
            .into_iter()
            .filter_map(|(kind, msec)| {
                let prefix = plan.prefix(kind)?;
                let window = match (msec, kind) {
                    (0, _) => Window::Each,
                    (_, Kind::Bw | Kind::Iops) => Window::Rate(Rate::default()),
                    _ => Window::Mean(Mean::default()),
                };
                Some(Log {
                    kind,
                    path: name(prefix, kind.suffix(), thread),
                    msec,
                    window,
                    lines: Vec::new(),
                    file: None,
                })
            })
            .collect();
        CopyLogs {
            plan: plan.clone(),
            logs,
            epoch: None,
            unix_ms: 0,
            failed: None,
        }
    }

    /// Whether submissions are timed apart from completions for these logs.
    pub fn splits(&self) -> bool {
        self.plan.splits()
    }

    /// The copy began its measured I/O at `at` (the first call counts).
    pub fn begin(&mut self, at: Instant) {
        if self.epoch.is_some() {
            return;
        }
        self.epoch = Some(at);
        if self.plan.unix_epoch {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64;
            self.unix_ms = now.saturating_sub(at.elapsed().as_millis() as u64);
        }
    }

    fn ms(&self, t: Instant) -> u64 {
        let epoch = self.epoch.unwrap_or(t);
        t.saturating_duration_since(epoch).as_millis() as u64
    }

    /// One measured I/O that completed without error.
    pub fn io(&mut self, d: Done) {
        if self.plan.silent {
            return;
        }
        self.begin(d.start);
        let t = self.ms(d.end);
        let ns = |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as u64;
        let lat = ns(d.start, d.end);
        let clat = ns(d.issued, d.end);
        let slat = ns(d.start, d.issued);
        let dir = usize::from(d.dir.min(2));
        let offset = if self.plan.offset { d.offset } else { 0 };
        let mut flush = false;
        for log in &mut self.logs {
            let value = match log.kind {
                Kind::Lat => lat,
                Kind::Clat => clat,
                Kind::Slat if !self.plan.queued => continue,
                Kind::Slat => slat,
                Kind::Bw if !self.plan.bw_each && log.msec == 0 => continue,
                // fio: bytes a microsecond, scaled (stat.c add_bw_sample).
                Kind::Bw => (d.bytes * 1_000_000).checked_div(clat).unwrap_or(0),
                Kind::Iops if !self.plan.iops_each && log.msec == 0 => continue,
                Kind::Iops => 1,
            };
            match &mut log.window {
                Window::Each => log.lines.push(Sample {
                    time: t,
                    value,
                    dir: dir as u8,
                    bs: d.bytes,
                    offset,
                }),
                Window::Mean(m) => {
                    m.sum[dir] += u128::from(value);
                    m.n[dir] += 1;
                    // stat.c add_log_sample: a line once the window has run its length.
                    if t >= m.last[dir] && t - m.last[dir] >= log.msec {
                        log.lines.push(mean_line(m, dir, t));
                        m.last[dir] = t - t % log.msec;
                    }
                }
                Window::Rate(r) => {
                    let k = t / log.msec;
                    if k > r.index {
                        rate_lines(log.kind, r, log.msec, &mut log.lines);
                        r.index = k;
                    }
                    r.ios[dir] += 1;
                    r.bytes[dir] += d.bytes;
                }
            }
            flush |= log.lines.len() >= FLUSH_EVERY;
        }
        if flush && self.plan.per_job {
            self.flush_all();
        }
    }

    /// Writes what per-job logs hold so far, so memory stays bounded.
    fn flush_all(&mut self) {
        let unix = self.unix_ms;
        let offset = self.plan.offset;
        for log in &mut self.logs {
            if log.lines.len() < FLUSH_EVERY || self.failed.is_some() {
                continue;
            }
            if let Err(e) = write_lines(log, unix, offset) {
                self.failed = Some(e);
            }
        }
    }

    /// The copy is done (`now`): the windows still open are closed as fio closes them, and
    /// every file written. Returns the first failure, naming the file.
    pub fn finish(&mut self, now: Instant) -> Result<(), String> {
        let t = self.ms(now);
        for log in &mut self.logs {
            match &mut log.window {
                Window::Each => {}
                // stat.c finalize_logs: each direction's samples since its last line.
                Window::Mean(m) => {
                    for dir in 0..3 {
                        if m.n[dir] > 0 {
                            log.lines.push(mean_line(m, dir, t));
                        }
                    }
                }
                // A whole window not yet logged; a partial one never is.
                Window::Rate(r) => {
                    if self.epoch.is_some() && t >= (r.index + 1) * log.msec {
                        rate_lines(log.kind, r, log.msec, &mut log.lines);
                    }
                }
            }
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let (unix, offset) = (self.unix_ms, self.plan.offset);
        for log in &mut self.logs {
            if self.plan.per_job {
                write_lines(log, unix, offset)?;
                if let Some(mut f) = log.file.take() {
                    f.flush().map_err(|e| failed(&log.path, &e))?;
                }
            } else {
                append_lines(log, unix, offset)?;
            }
        }
        Ok(())
    }
}

/// The line a latency window gives: its mean, rounded (fio: `mean + 0.50`, truncated).
fn mean_line(m: &mut Mean, dir: usize, t: u64) -> Sample {
    let (sum, n) = (m.sum[dir], u128::from(m.n[dir]));
    m.sum[dir] = 0;
    m.n[dir] = 0;
    Sample {
        time: t,
        value: ((2 * sum + n) / (2 * n)) as u64,
        dir: dir as u8,
        bs: 0,
        offset: 0,
    }
}

/// The lines a rate window gives, one for each direction that moved anything in it: I/Os a
/// second, or KiB a second (stat.c `__add_samples`), at the window's end.
fn rate_lines(kind: Kind, r: &mut Rate, msec: u64, out: &mut Vec<Sample>) {
    for dir in 0..3 {
        if r.ios[dir] == 0 {
            continue;
        }
        let value = match kind {
            Kind::Bw => r.bytes[dir] * 1000 / msec / 1024,
            _ => r.ios[dir] * 1000 / msec,
        };
        out.push(Sample {
            time: (r.index + 1) * msec,
            value,
            dir: dir as u8,
            bs: 0,
            offset: 0,
        });
    }
    *r = Rate {
        index: r.index,
        ..Rate::default()
    };
}

fn failed(path: &Path, e: &std::io::Error) -> String {
    format!("fio's log {} could not be written: {e}", path.display())
}

/// iolog.c `flush_samples`'s lines.
fn format(lines: &[Sample], unix_ms: u64, offset: bool, out: &mut Vec<u8>) {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(lines.len() * 24);
    for l in lines {
        let t = l.time + unix_ms;
        let _ = if offset {
            writeln!(
                s,
                "{t}, {}, {}, {}, {}, 0",
                l.value as i64, l.dir, l.bs, l.offset
            )
        } else {
            writeln!(s, "{t}, {}, {}, {}, 0", l.value as i64, l.dir, l.bs)
        };
    }
    out.extend_from_slice(s.as_bytes());
}

/// A per-job log: the file made (truncated) at its first write, as fio's `fopen(.., "w")`.
fn write_lines(log: &mut Log, unix_ms: u64, offset: bool) -> Result<(), String> {
    if log.file.is_none() {
        let f = std::fs::File::create(&log.path).map_err(|e| failed(&log.path, &e))?;
        log.file = Some(std::io::BufWriter::with_capacity(1 << 16, f));
    }
    let mut buf = Vec::new();
    format(&log.lines, unix_ms, offset, &mut buf);
    log.lines.clear();
    if let Some(f) = &mut log.file {
        f.write_all(&buf).map_err(|e| failed(&log.path, &e))?;
    }
    Ok(())
}

/// A log shared by copies (per_job_logs=0): the copy's whole log appended at once.
fn append_lines(log: &mut Log, unix_ms: u64, offset: bool) -> Result<(), String> {
    let mut buf = Vec::new();
    format(&log.lines, unix_ms, offset, &mut buf);
    log.lines.clear();
    let _one = APPENDS.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log.path)
        .map_err(|e| failed(&log.path, &e))?;
    f.write_all(&buf).map_err(|e| failed(&log.path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan(dir: &Path, avg: u64) -> LogPlan {
        LogPlan {
            bw: Some(dir.join("j")),
            lat: Some(dir.join("j")),
            iops: Some(dir.join("j")),
            avg_msec: avg,
            bw_avg_msec: avg,
            iops_avg_msec: avg,
            offset: false,
            per_job: true,
            unix_epoch: false,
            lat_kinds: [true, true, true],
            bw_each: true,
            iops_each: true,
            queued: false,
            silent: false,
            first_thread: 3,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("perflab-joblog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn done(t0: Instant, start_us: u64, lat_us: u64, dir: u8) -> Done {
        let start = t0 + Duration::from_micros(start_us);
        Done {
            dir,
            bytes: 4096,
            offset: 8192,
            start,
            issued: start,
            end: start + Duration::from_micros(lat_us),
        }
    }

    #[test]
    fn names_are_fios() {
        let p = plan(Path::new("/x"), 0);
        let files: Vec<String> = p.files(2).iter().map(|f| f.display().to_string()).collect();
        assert_eq!(
            files,
            [
                "/x/j_lat.3.log",
                "/x/j_lat.4.log",
                "/x/j_slat.3.log",
                "/x/j_slat.4.log",
                "/x/j_clat.3.log",
                "/x/j_clat.4.log",
                "/x/j_bw.3.log",
                "/x/j_bw.4.log",
                "/x/j_iops.3.log",
                "/x/j_iops.4.log"
            ]
        );
        let shared = LogPlan {
            per_job: false,
            ..p
        };
        assert_eq!(shared.files(2)[0], PathBuf::from("/x/j_lat.log"));
    }

    #[test]
    fn every_io_is_a_line_and_a_sync_engine_has_no_slat() {
        let d = scratch("each");
        let mut logs = CopyLogs::new(&plan(&d, 0), 0);
        let t0 = Instant::now();
        logs.begin(t0);
        logs.io(done(t0, 0, 100, 0));
        logs.io(done(t0, 1500, 250, 1));
        logs.finish(t0 + Duration::from_millis(3)).unwrap();
        let read = |k: &str| std::fs::read_to_string(d.join(format!("j_{k}.3.log"))).unwrap();
        assert_eq!(
            read("lat"),
            "0, 100000, 0, 4096, 0\n1, 250000, 1, 4096, 0\n"
        );
        assert_eq!(read("clat"), read("lat"));
        assert_eq!(read("slat"), "");
        // 4096 bytes in 100 µs: 4096 × 10⁶ / 100000 ns.
        assert_eq!(read("bw"), "0, 40960, 0, 4096, 0\n1, 16384, 1, 4096, 0\n");
        assert_eq!(read("iops"), "0, 1, 0, 4096, 0\n1, 1, 1, 4096, 0\n");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn windows_average_latencies_and_count_rates_as_fio() {
        let d = scratch("avg");
        let mut p = plan(&d, 100);
        p.offset = true;
        let mut logs = CopyLogs::new(&p, 0);
        let t0 = Instant::now();
        logs.begin(t0);
        // Reads at 10 ms (100 µs) and 60 ms (300 µs); one at 120 ms closes the reads' first
        // window; a write at 130 ms closes the writes' (each direction's runs from 0); a read
        // at 160 ms is left for the end, at 250 ms.
        logs.io(done(t0, 10_000, 100, 0));
        logs.io(done(t0, 60_000, 300, 0));
        logs.io(done(t0, 120_000, 200, 0));
        logs.io(done(t0, 130_000, 500, 1));
        logs.io(done(t0, 160_000, 700, 0));
        logs.finish(t0 + Duration::from_millis(250)).unwrap();
        let read = |k: &str| std::fs::read_to_string(d.join(format!("j_{k}.3.log"))).unwrap();
        // The window closes at the 120 ms read, which it includes: (100+300+200)/3 µs.
        assert_eq!(
            read("lat"),
            "120, 200000, 0, 0, 0, 0\n130, 500000, 1, 0, 0, 0\n250, 700000, 0, 0, 0, 0\n"
        );
        // Two reads in [0, 100): 20 a second; two reads and a write in [100, 200); the
        // partial [200, 250) is not logged.
        assert_eq!(
            read("iops"),
            "100, 20, 0, 0, 0, 0\n200, 20, 0, 0, 0, 0\n200, 10, 1, 0, 0, 0\n"
        );
        assert_eq!(
            read("bw"),
            "100, 80, 0, 0, 0, 0\n200, 80, 0, 0, 0, 0\n200, 40, 1, 0, 0, 0\n"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn shared_logs_append_each_copy_whole() {
        let d = scratch("shared");
        let mut p = plan(&d, 0);
        p.per_job = false;
        p.lat = None;
        p.bw = None;
        let t0 = Instant::now();
        for copy in 0..2 {
            let mut logs = CopyLogs::new(&p, copy);
            logs.begin(t0);
            logs.io(done(t0, 0, 10, 1));
            logs.finish(t0).unwrap();
        }
        let text = std::fs::read_to_string(d.join("j_iops.log")).unwrap();
        assert_eq!(text, "0, 1, 1, 4096, 0\n0, 1, 1, 4096, 0\n");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_queued_engine_splits_submission_from_completion() {
        let d = scratch("split");
        let mut p = plan(&d, 0);
        p.queued = true;
        assert!(p.splits());
        let mut logs = CopyLogs::new(&p, 0);
        let t0 = Instant::now();
        let mut io = done(t0, 0, 100, 0);
        io.issued = io.start + Duration::from_micros(30);
        logs.io(io);
        logs.finish(t0).unwrap();
        let read = |k: &str| std::fs::read_to_string(d.join(format!("j_{k}.3.log"))).unwrap();
        assert_eq!(read("lat"), "0, 100000, 0, 4096, 0\n");
        assert_eq!(read("clat"), "0, 70000, 0, 4096, 0\n");
        assert_eq!(read("slat"), "0, 30000, 0, 4096, 0\n");
        let _ = std::fs::remove_dir_all(&d);
    }
}
