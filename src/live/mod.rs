//! A run as it goes, for readers outside perflab: the observer that feeds every live output.
//!
//! - [`event`]: the JSON lines: the run's `intervals.jsonl` beside its record (always), and
//!   `--live FILE|-` (the same lines).
//! - [`metrics`] and [`endpoint`]: `--metrics-listen ADDR`, OpenMetrics for Prometheus.
//! - [`hlog`]: `--hlog FILE`, HdrHistogram's interval log.
//!
//! [`Live`] is a [`crate::run::Observer`]: the runner hands it each interval as it closes
//! (with its histogram) and each sampler reading; it knows which run, step and repeat they
//! belong to from the events before them. A sink that cannot be written (a full disk) says so
//! once and is dropped; the run goes on. Under MPI the runner sends no live intervals (rank 0
//! holds only its share): each trial's merged series is sent when the trial ends.

pub mod endpoint;
pub mod event;
pub mod hlog;
pub mod metrics;

use crate::archive::Archive;
use crate::env::resources::ResourcePoint;
use crate::record::histogram::{LatencyHistogram, decode};
use crate::record::{IntervalPoint, RunRecord, StepResult, Trial, Warning};
use crate::run::Observer;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

// The live outputs' options, on every command that runs something (each kind's, `run` and
// `study`), and only there. (A plain comment: clap takes a doc comment on an `Args` struct
// as the about text of every command it is flattened into.)
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// Serve the run's figures for Prometheus at http://ADDR/metrics while it runs, e.g.
    /// 127.0.0.1:9464 (memtier --prometheus-port, k6's Prometheus output)
    #[arg(long, value_name = "ADDR", help_heading = "Live output")]
    pub metrics_listen: Option<String>,
    /// Write the run's intervals as JSON lines to FILE, or to stdout with '-' (k6 --out json)
    #[arg(long, value_name = "FILE|-", help_heading = "Live output")]
    pub live: Option<String>,
    /// Write every interval's response times as an HdrHistogram interval log (memtier
    /// --hdr-file-prefix, wrk2 and YCSB's hdrhistogram.output.path)
    #[arg(long, value_name = "FILE", help_heading = "Live output")]
    pub hlog: Option<PathBuf>,
    /// Where stderr is not a terminal, a progress line every TIME while measuring (default:
    /// every interval; 'off': one line per step) (pgbench -P)
    #[arg(long, value_name = "TIME|off", help_heading = "Live output")]
    pub progress: Option<String>,
}

/// Where the live outputs stand: the run, step and repeat events belong to.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    pub run: String,
    pub workload: String,
    pub target: String,
    pub step: usize,
    pub repeat: u32,
    /// The step's swept parameters and their values.
    pub swept: Vec<(String, String)>,
    /// When the trial's measure phase began (wall clock), for the HDR log's timestamps.
    measure_start: Option<SystemTime>,
    /// Whether this trial's intervals came live (not under MPI).
    saw_intervals: bool,
}

/// A JSON-lines output: the run's interval file, or `--live`.
struct Lines {
    out: Box<dyn Write>,
    /// What it is, for the one line that says it failed.
    name: String,
}

/// The live outputs of one command (several runs, for a suite or a study).
pub struct Live {
    archive: Option<Archive>,
    /// The current run's `intervals.jsonl`.
    file: RefCell<Option<Lines>>,
    live: RefCell<Option<Lines>>,
    hlog: RefCell<Option<hlog::Hlog>>,
    endpoint: Option<endpoint::Endpoint>,
    cursor: RefCell<Cursor>,
    /// Warnings given before the run began, held for the lines after its `run` line.
    early: RefCell<Vec<Warning>>,
    say: Box<dyn Fn(&str)>,
}

/// The name of a run's interval file, in its folder beside `run.json`.
pub const INTERVALS_FILE: &str = "intervals.jsonl";

/// A file perflab makes: never one that is there already.
fn create_new(path: &Path, option: &str) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{option} {}: the file exists and perflab does not overwrite files; give a new name",
                path.display()
            ),
            _ => format!("{option} {}: cannot create it: {e}", path.display()),
        })
}

impl Live {
    /// Opens the outputs `args` asks for (and the interval file of each run in `archive`),
    /// or says in one line why one cannot be had. `json`: stdout holds the record, so
    /// `--live -` cannot go there. `say` prints a line for the user (stderr).
    pub fn open(
        args: &LiveArgs,
        archive: Option<&Archive>,
        json: bool,
        say: Box<dyn Fn(&str)>,
    ) -> Result<Live, String> {
        let live = match args.live.as_deref() {
            None => None,
            Some("-") if json => {
                return Err(
                    "--live - and --json both write to stdout; give --live a file name".into(),
                );
            }
            Some("-") => Some(Lines {
                out: Box::new(std::io::stdout()),
                name: "--live -".into(),
            }),
            Some(path) => Some(Lines {
                out: Box::new(std::io::BufWriter::new(create_new(
                    Path::new(path),
                    "--live",
                )?)),
                name: format!("--live {path}"),
            }),
        };
        let hlog = match &args.hlog {
            None => None,
            Some(path) => {
                let file = create_new(path, "--hlog")?;
                let out = Box::new(std::io::BufWriter::new(file));
                Some(
                    hlog::Hlog::begin(out, SystemTime::now())
                        .map_err(|e| format!("--hlog {}: {e}", path.display()))?,
                )
            }
        };
        let endpoint = match &args.metrics_listen {
            None => None,
            Some(addr) => Some(endpoint::Endpoint::bind(addr)?),
        };
        if let Some(e) = &endpoint {
            say(&format!("metrics: http://{}/metrics", e.addr));
        }
        Ok(Live {
            archive: archive.cloned(),
            file: RefCell::new(None),
            live: RefCell::new(live),
            hlog: RefCell::new(hlog),
            endpoint,
            cursor: RefCell::new(Cursor::default()),
            early: RefCell::new(Vec::new()),
            say,
        })
    }

    /// The command is done: the endpoint waits for its last scrape, if it is being read.
    pub fn finish(&self) {
        if let Some(e) = &self.endpoint {
            e.last_scrape(&*self.say);
        }
    }

    /// Writes `line` to the JSON-lines outputs; one that fails says so once and is closed.
    fn emit(&self, line: serde_json::Value) {
        for slot in [&self.file, &self.live] {
            let mut slot = slot.borrow_mut();
            let Some(lines) = slot.as_mut() else { continue };
            let mut text = line.to_string();
            text.push('\n');
            if let Err(e) = lines
                .out
                .write_all(text.as_bytes())
                .and_then(|_| lines.out.flush())
            {
                (self.say)(&format!(
                    "perflab: warning: {}: {e}; its lines stop here, the run goes on",
                    lines.name
                ));
                *slot = None;
            }
        }
    }

    fn metrics(&self, f: impl FnOnce(&mut metrics::Metrics)) {
        if let Some(e) = &self.endpoint
            && let Ok(mut m) = e.metrics.lock()
        {
            f(&mut m);
        }
    }

    fn hlog(&self, f: impl FnOnce(&mut hlog::Hlog) -> std::io::Result<()>) {
        let mut slot = self.hlog.borrow_mut();
        if let Some(h) = slot.as_mut()
            && let Err(e) = f(h)
        {
            (self.say)(&format!(
                "perflab: warning: --hlog: {e}; its lines stop here, the run goes on"
            ));
            *slot = None;
        }
    }

    /// Intervals that did not come live (an MPI trial): the trial's merged series, and one
    /// HDR line of its whole measure phase.
    fn replay(&self, trial: &Trial) {
        let c = self.cursor.borrow().clone();
        for p in &trial.series {
            self.emit(event::interval(&c, p, None));
            self.metrics(|m| m.interval(&c, p, None));
        }
        if let (Ok(h), Some(start)) = (decode(&trial.latency_hdr), c.measure_start) {
            let length = Duration::from_nanos(trial.elapsed_ns);
            self.hlog(|log| log.interval(&hlog::tag(c.step, c.repeat), start, length, &h));
        }
    }
}

impl Observer for Live {
    fn run_started(&self, record: &RunRecord, steps: usize, repeat: u32) {
        {
            let mut c = self.cursor.borrow_mut();
            *c = Cursor {
                run: record.id.clone(),
                workload: record.workload.clone(),
                target: record.target.clone(),
                ..Default::default()
            };
        }
        // The record's folder exists: the runner saved the record before it started.
        if let Some(a) = &self.archive {
            let path = a.record_path(&record.id).with_file_name(INTERVALS_FILE);
            *self.file.borrow_mut() = match create_new(&path, "the interval file") {
                Ok(f) => Some(Lines {
                    out: Box::new(std::io::BufWriter::new(f)),
                    name: path.display().to_string(),
                }),
                Err(e) => {
                    (self.say)(&format!(
                        "perflab: warning: {e}; the run goes on without it"
                    ));
                    None
                }
            };
        }
        self.emit(event::run(record, steps, repeat));
        // Warnings from before the run had an id (a busy machine) follow its first line, in
        // the interval file and in --live alike.
        let early = std::mem::take(&mut *self.early.borrow_mut());
        for w in &early {
            self.emit(event::warning(&self.cursor.borrow(), w));
        }
        self.metrics(|m| m.run_started(&record.id, &record.workload, &record.target));
        self.hlog(|log| {
            log.comment(&format!(
                "perflab run {}: {} on {}",
                record.id, record.workload, record.target
            ))
        });
    }

    fn trial_started(&self, index: usize, repeat: u32, _label: &str, swept: &[(String, String)]) {
        let c = {
            let mut c = self.cursor.borrow_mut();
            c.step = index;
            c.repeat = repeat;
            c.swept = swept.to_vec();
            c.measure_start = None;
            c.saw_intervals = false;
            c.clone()
        };
        self.emit(event::trial(&c));
        self.metrics(|m| m.trial_started(&c));
    }

    fn phase(&self, name: &str, _length: Option<Duration>) {
        if name == "measure" {
            self.cursor.borrow_mut().measure_start = Some(SystemTime::now());
        }
    }

    fn interval(&self, point: &IntervalPoint, histogram: &LatencyHistogram) {
        let c = {
            let mut c = self.cursor.borrow_mut();
            c.saw_intervals = true;
            c.clone()
        };
        self.emit(event::interval(&c, point, Some(histogram)));
        self.metrics(|m| m.interval(&c, point, Some(histogram)));
        if let Some(start) = c.measure_start {
            let at = start + Duration::from_nanos(point.start_ns);
            let length = Duration::from_nanos(point.duration_ns);
            self.hlog(|log| log.interval(&hlog::tag(c.step, c.repeat), at, length, histogram));
        }
    }

    fn resources(&self, point: &ResourcePoint) {
        let c = self.cursor.borrow().clone();
        self.emit(event::resources(&c, point));
        self.metrics(|m| m.resources(&c, point));
    }

    fn trial_finished(&self, trial: &Trial) {
        let c = self.cursor.borrow().clone();
        if !c.saw_intervals {
            self.replay(trial);
        }
        self.emit(event::trial_end(&c, trial));
        self.metrics(|m| m.trial_finished(&c, trial));
    }

    fn step_finished(&self, step: &StepResult, _record: &RunRecord) {
        let c = self.cursor.borrow().clone();
        self.emit(event::step_end(&c, step));
    }

    fn warning(&self, warning: &Warning) {
        let c = self.cursor.borrow().clone();
        if c.run.is_empty() {
            self.early.borrow_mut().push(warning.clone());
            return;
        }
        self.emit(event::warning(&c, warning));
    }

    fn run_finished(&self, record: &RunRecord) {
        self.emit(event::end(record));
        self.metrics(|m| m.run_finished(&record.id));
        *self.file.borrow_mut() = None;
    }
}

/// Two observers as one: the progress display and the live outputs.
pub struct Both<'a>(pub &'a dyn Observer, pub &'a dyn Observer);

impl Observer for Both<'_> {
    fn run_started(&self, record: &RunRecord, steps: usize, repeat: u32) {
        self.0.run_started(record, steps, repeat);
        self.1.run_started(record, steps, repeat);
    }
    fn trial_started(&self, index: usize, repeat: u32, label: &str, swept: &[(String, String)]) {
        self.0.trial_started(index, repeat, label, swept);
        self.1.trial_started(index, repeat, label, swept);
    }
    fn phase(&self, name: &str, length: Option<Duration>) {
        self.0.phase(name, length);
        self.1.phase(name, length);
    }
    fn progress(
        &self,
        elapsed: Duration,
        ops: u64,
        latest: Option<(u64, crate::run::recorder::Counts)>,
    ) {
        self.0.progress(elapsed, ops, latest);
        self.1.progress(elapsed, ops, latest);
    }
    fn interval(&self, point: &IntervalPoint, histogram: &LatencyHistogram) {
        self.0.interval(point, histogram);
        self.1.interval(point, histogram);
    }
    fn resources(&self, point: &ResourcePoint) {
        self.0.resources(point);
        self.1.resources(point);
    }
    fn trial_finished(&self, trial: &Trial) {
        self.0.trial_finished(trial);
        self.1.trial_finished(trial);
    }
    fn step_finished(&self, step: &StepResult, record: &RunRecord) {
        self.0.step_finished(step, record);
        self.1.step_finished(step, record);
    }
    fn warning(&self, warning: &Warning) {
        self.0.warning(warning);
        self.1.warning(warning);
    }
    fn note(&self, text: &str) {
        self.0.note(text);
        self.1.note(text);
    }
    fn run_finished(&self, record: &RunRecord) {
        self.0.run_finished(record);
        self.1.run_finished(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warning given before the run has an id (a busy machine, seen before the first step)
    /// comes right after the `run` line, with the run's id, in both files alike.
    #[test]
    fn warnings_before_the_run_follow_its_first_line() {
        let dir = std::env::temp_dir().join(format!("perflab-live-early-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let archive = Archive::open(Some(&dir)).unwrap();
        let live_path = dir.join("live.jsonl");
        let args = LiveArgs {
            live: Some(live_path.display().to_string()),
            ..Default::default()
        };
        let live = Live::open(&args, Some(&archive), false, Box::new(|_| {})).unwrap();
        let record = RunRecord {
            id: "20260101-000000-aaaa".into(),
            workload: "null".into(),
            ..Default::default()
        };
        archive.save(&record).unwrap();
        live.warning(&Warning {
            code: "busy_machine".into(),
            message: "other work".into(),
            step: None,
        });
        live.run_started(&record, 1, 1);
        live.run_finished(&record);
        drop(live);
        let beside = std::fs::read_to_string(
            archive
                .record_path(&record.id)
                .with_file_name(INTERVALS_FILE),
        )
        .unwrap();
        assert_eq!(beside, std::fs::read_to_string(&live_path).unwrap());
        let events: Vec<serde_json::Value> = beside
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let names: Vec<&str> = events
            .iter()
            .map(|e| e["event"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["run", "warning", "end"]);
        assert_eq!(events[1]["run"], record.id);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
