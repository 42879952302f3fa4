//! pgbench's per-transaction log (`-l`, `--log-prefix`, `--sampling-rate`): one line per
//! transaction of the measure phase, in pgbench 15's format, so the scripts that read
//! pgbench's logs read perflab's:
//!
//! ```text
//! client_id transaction_no time script_no time_epoch time_us [schedule_lag]
//! ```
//!
//! `time` is the transaction's latency in microseconds (`failed` for one that failed, with
//! `serialization` or `deadlock` when that was its cause), `time_epoch` and `time_us` when it
//! ended (whole seconds since the epoch and the microseconds past them), `schedule_lag`
//! under `-R` how late it started. pgbench writes a file per thread; perflab runs each client
//! on a thread of its own and writes one, `PREFIX.PID` in the current folder (perflab's only
//! write outside its results, asked for by `-l`), made when the first line is written and
//! flushed at the end of each step.

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
    file: OnceLock<Result<Mutex<BufWriter<File>>, String>>,
}

/// How a logged transaction ended.
pub enum Ended<'a> {
    Done(Duration),
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
            file: OnceLock::new(),
        }
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

    /// Writes one transaction's line.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &self,
        client: u64,
        txn: u64,
        ended: Ended<'_>,
        script: usize,
        at: SystemTime,
        lag: Option<Duration>,
    ) -> Result<(), String> {
        let Ok(file) = self.file() else {
            return Err(self.file().as_ref().err().cloned().unwrap_or_default());
        };
        let since = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let time = match ended {
            Ended::Done(d) => d.as_micros().to_string(),
            Ended::Failed(Some(cause)) => cause.to_string(),
            Ended::Failed(None) => "failed".to_string(),
        };
        let mut line = format!(
            "{client} {txn} {time} {script} {} {}",
            since.as_secs(),
            since.subsec_micros()
        );
        if self.lag {
            line.push_str(&format!(" {}", lag.unwrap_or_default().as_micros()));
        }
        line.push('\n');
        let mut w = file.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(line.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Flushes what the clients wrote (the end of a step).
    pub fn flush(&self) {
        if let Some(Ok(file)) = self.file.get() {
            let _ = file.lock().unwrap_or_else(|p| p.into_inner()).flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_pgbench_format() {
        let dir = std::env::temp_dir().join(format!("perflab-txlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("log");
        let log = TxLog::new(prefix.to_str().unwrap(), 1.0, true);
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        log.write(
            0,
            1,
            Ended::Done(Duration::from_micros(1234)),
            0,
            at,
            Some(Duration::from_micros(7)),
        )
        .unwrap();
        log.write(1, 1, Ended::Failed(Some("deadlock")), 1, at, None)
            .unwrap();
        log.flush();
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(
            text,
            "0 1 1234 0 1700000000 123456 7\n1 1 deadlock 1 1700000000 123456 0\n"
        );
        // A second log of the same name never overwrites the first.
        let again = TxLog::new(prefix.to_str().unwrap(), 1.0, false);
        assert!(again.write(0, 1, Ended::Failed(None), 0, at, None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
