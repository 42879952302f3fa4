//! pgbench's per-transaction log (`-l`, `--log-prefix`, `--sampling-rate`,
//! `--aggregate-interval`): one line per transaction of the measure phase, or one per
//! interval, in pgbench 15's formats, so the scripts that read pgbench's logs read perflab's:
//!
//! ```text
//! client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//! interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
//!   sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization deadlock
//! ```
//!
//! `time` is the transaction's latency in microseconds (`failed` for one that failed, with
//! `serialization` or `deadlock` when that was its cause), `time_epoch` and `time_us` when it
//! ended (whole seconds since the epoch and the microseconds past them), `schedule_lag`
//! under `-R` how late it started, `retries` (when `--max-tries` is not 1) how often it was
//! run again. An aggregated line (pgbench 15 writes all fifteen fields, zeros where a figure
//! does not apply) sums the interval's successful transactions' latencies and lags in
//! microseconds; the intervals start on the whole second of the first logged transaction
//! (pgbench's, at its thread's start) and follow each other, empty ones included, the last
//! (partial) one written at the end of the step.
//! pgbench writes a file per thread; perflab runs each client on a thread of its own and
//! writes one, `PREFIX.PID` in the current folder (perflab's only write outside its
//! results, asked for by `-l`), made when the first line is written and flushed at the end
//! of each step; so its aggregates are over all clients, as pgbench's with `-j 1`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// The run's log file, shared by its clients.
#[derive(Debug)]
pub struct TxLog {
    path: PathBuf,
    /// Of the transactions, the share logged (`--sampling-rate`; 1 logs all).
    pub sampling: f64,
    /// Whether lines carry the schedule lag (`-R`).
    pub lag: bool,
    /// Whether lines carry the retries (`--max-tries` other than 1).
    pub retries: bool,
    /// `--aggregate-interval`, in seconds: one line per interval.
    pub aggregate: Option<u64>,
    file: OnceLock<Result<Mutex<BufWriter<File>>, String>>,
    /// The interval being summed, with aggregation.
    agg: Mutex<Option<Agg>>,
}

/// One logged transaction.
pub struct Logged<'a> {
    pub client: u64,
    /// The client's transaction number in the measure phase.
    pub txn: u64,
    pub ended: Ended<'a>,
    pub script: usize,
    /// When it ended.
    pub at: SystemTime,
    /// How late it started on an open-loop schedule.
    pub lag: Option<Duration>,
    /// How often it was run again after a serialization failure or deadlock.
    pub retries: u64,
}

/// An aggregation interval's sums (pgbench's `StatsData`), microseconds.
#[derive(Debug, Default, Clone, Copy)]
struct Agg {
    start_us: u64,
    count: u64,
    latency: Sums,
    lag: Sums,
    skipped: u64,
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlock: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
}

impl Sums {
    fn add(&mut self, us: f64, first: bool) {
        self.sum += us;
        self.sum2 += us * us;
        self.min = if first { us } else { self.min.min(us) };
        self.max = if first { us } else { self.max.max(us) };
    }
}

impl Agg {
    fn line(&self) -> String {
        let (l, g) = (&self.latency, &self.lag);
        format!(
            "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {}\n",
            self.start_us / 1_000_000,
            self.count,
            l.sum,
            l.sum2,
            l.min,
            l.max,
            g.sum,
            g.sum2,
            g.min,
            g.max,
            self.skipped,
            self.retried,
            self.retries,
            self.serialization,
            self.deadlock
        )
    }
}

/// How a logged transaction ended.
pub enum Ended<'a> {
    Done(Duration),
    /// Skipped: already later than `-L` when its client was ready (`-R`).
    Skipped,
    /// Failed; the cause when it was a serialization failure or a deadlock.
    Failed(Option<&'a str>),
}

impl TxLog {
    /// The log `PREFIX.PID` (pgbench's default prefix is `pgbench_log`).
    pub fn new(prefix: &str, sampling: f64, lag: bool) -> TxLog {
        TxLog {
            path: PathBuf::from(format!("{prefix}.{}", std::process::id())),
            sampling,
            lag,
            retries: false,
            aggregate: None,
            file: OnceLock::new(),
            agg: Mutex::new(None),
        }
    }

    /// Lines with each transaction's retries (`--max-tries` other than 1).
    pub fn with_retries(mut self, on: bool) -> TxLog {
        self.retries = on;
        self
    }

    /// One line per `seconds` instead of one per transaction (`--aggregate-interval`).
    pub fn aggregated(mut self, seconds: Option<u64>) -> TxLog {
        self.aggregate = seconds;
        self
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn file(&self) -> &Result<Mutex<BufWriter<File>>, String> {
        self.file.get_or_init(|| {
            // Never over someone's file: the name holds this process's id, and a file of
            // that name already there is left alone.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.path)
                .map(|f| Mutex::new(BufWriter::with_capacity(1 << 16, f)))
                .map_err(|e| format!("cannot make {}: {e}", self.path.display()))
        })
    }

    /// Writes one transaction's line, or adds it to its interval's.
    pub fn write(&self, t: &Logged<'_>) -> Result<(), String> {
        if let Some(every) = self.aggregate {
            return self.add(t, every);
        }
        let since =
            t.at.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
        let time = match t.ended {
            Ended::Done(d) => d.as_micros().to_string(),
            Ended::Failed(Some(cause)) => cause.to_string(),
            Ended::Failed(None) => "failed".to_string(),
            Ended::Skipped => "skipped".to_string(),
        };
        let mut line = format!(
            "{} {} {time} {} {} {}",
            t.client,
            t.txn,
            t.script,
            since.as_secs(),
            since.subsec_micros()
        );
        if self.lag {
            line.push_str(&format!(" {}", t.lag.unwrap_or_default().as_micros()));
        }
        if self.retries {
            line.push_str(&format!(" {}", t.retries));
        }
        line.push('\n');
        self.put(&line)
    }

    /// Adds a transaction to its interval, writing the intervals it closes (empty ones
    /// too, as pgbench does).
    fn add(&self, t: &Logged<'_>, every: u64) -> Result<(), String> {
        let at_us =
            t.at.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_micros() as u64;
        let step = every.max(1) * 1_000_000;
        let mut closed = String::new();
        {
            let mut agg = self.agg.lock().unwrap_or_else(|p| p.into_inner());
            // Intervals on whole seconds, from the first logged transaction's.
            let a = agg.get_or_insert(Agg {
                start_us: at_us - at_us % 1_000_000,
                ..Agg::default()
            });
            while at_us >= a.start_us + step {
                closed.push_str(&a.line());
                *a = Agg {
                    start_us: a.start_us + step,
                    ..Agg::default()
                };
            }
            match t.ended {
                Ended::Done(d) => {
                    let first = a.count == 0;
                    a.count += 1;
                    a.latency.add(d.as_micros() as f64, first);
                    a.lag
                        .add(t.lag.unwrap_or_default().as_micros() as f64, first);
                }
                Ended::Skipped => a.skipped += 1,
                Ended::Failed(Some("serialization")) => a.serialization += 1,
                Ended::Failed(Some("deadlock")) => a.deadlock += 1,
                // pgbench counts no other failure: its client aborts there.
                Ended::Failed(_) => {}
            }
            if t.retries > 0 {
                a.retried += 1;
                a.retries += t.retries;
            }
        }
        if closed.is_empty() {
            return Ok(());
        }
        self.put(&closed)
    }

    fn put(&self, text: &str) -> Result<(), String> {
        let Ok(file) = self.file() else {
            return Err(self.file().as_ref().err().cloned().unwrap_or_default());
        };
        let mut w = file.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Flushes what a client wrote (at its end of a step).
    pub fn flush(&self) {
        if let Some(Ok(file)) = self.file.get() {
            let _ = file.lock().unwrap_or_else(|p| p.into_inner()).flush();
        }
    }

    /// The step is over, every client done: the open interval is written and the file
    /// flushed. The next step's intervals start at its first transaction.
    pub fn end_step(&self) {
        let last = self.agg.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(a) = last {
            let _ = self.put(&a.line());
        }
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(
        client: u64,
        txn: u64,
        ended: Ended<'static>,
        at_us: u64,
        lag: u64,
    ) -> Logged<'static> {
        Logged {
            client,
            txn,
            ended,
            script: (client % 2) as usize,
            at: SystemTime::UNIX_EPOCH + Duration::from_micros(at_us),
            lag: Some(Duration::from_micros(lag)),
            retries: txn % 2,
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("perflab-txlog-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn lines_in_pgbench_format() {
        let dir = scratch("lines");
        let prefix = dir.join("log");
        let log = TxLog::new(prefix.to_str().unwrap(), 1.0, true);
        let at = 1_700_000_000_123_456;
        log.write(&logged(
            0,
            1,
            Ended::Done(Duration::from_micros(1234)),
            at,
            7,
        ))
        .unwrap();
        log.write(&logged(1, 1, Ended::Failed(Some("deadlock")), at, 0))
            .unwrap();
        log.flush();
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(
            text,
            "0 1 1234 0 1700000000 123456 7\n1 1 deadlock 1 1700000000 123456 0\n"
        );
        // A second log of the same name never overwrites the first.
        let again = TxLog::new(prefix.to_str().unwrap(), 1.0, false);
        assert!(
            again
                .write(&logged(0, 1, Ended::Failed(None), at, 0))
                .is_err()
        );
        // With --max-tries other than 1, each line ends with its retries.
        let tries = TxLog::new(dir.join("tries").to_str().unwrap(), 1.0, false).with_retries(true);
        tries
            .write(&logged(2, 3, Ended::Done(Duration::from_micros(10)), at, 0))
            .unwrap();
        tries.flush();
        let text = std::fs::read_to_string(tries.path()).unwrap();
        assert_eq!(text, "2 3 10 0 1700000000 123456 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn aggregated_lines_have_pgbench_15s_fifteen_fields_and_empty_intervals() {
        let dir = scratch("agg");
        let log = TxLog::new(dir.join("agg").to_str().unwrap(), 1.0, true).aggregated(Some(1));
        let s = 1_700_000_000_000_000u64;
        let done = |us| Ended::Done(Duration::from_micros(us));
        log.write(&logged(0, 1, done(100), s + 200_000, 5)).unwrap();
        log.write(&logged(1, 2, done(300), s + 900_000, 1)).unwrap();
        log.write(&logged(
            0,
            3,
            Ended::Failed(Some("serialization")),
            s + 1_000_000,
            0,
        ))
        .unwrap();
        // Nothing in the third second; one transaction in the fourth.
        log.write(&logged(1, 4, done(50), s + 3_500_000, 0))
            .unwrap();
        log.end_step();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "1700000000 2 400 100000 100 300 6 26 1 5 0 1 1 0 0",
                "1700000001 0 0 0 0 0 0 0 0 0 0 1 1 1 0",
                "1700000002 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
                "1700000003 1 50 2500 50 50 0 0 0 0 0 0 0 0 0",
            ]
        );
        assert!(lines.iter().all(|l| l.split(' ').count() == 15));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
