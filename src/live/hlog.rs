//! `--hlog FILE`: the response times of every interval in HdrHistogram's interval log format
//! (version 1.3), as memtier, YCSB and wrk2 write it, for HdrHistogram's own tools
//! (`HistogramLogProcessor`, `hdr-plot`, the libraries' log readers) to plot and merge.
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[StartTime: 1764400000.000 (seconds since epoch), 2025-11-29T07:06:40.000Z]
//! #[perflab run 20261129-070640-ab12: oltp on postgres://...]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=step1,0.000,1.000,4.219,HISTFAAAA...
//! ```
//!
//! Values are nanoseconds, as in the record, so `Interval_Max` is in milliseconds (the
//! format's default ratio of 1,000,000) and the histograms are the record's own encoding
//! (compressed V2, base64). Each line is tagged with its step (`step3`, and `step3.r2` for
//! the second repeat), its timestamp counted from the log's start. Under MPI a trial's merged
//! histogram is one line for the whole measure phase.

use crate::record::histogram::{LatencyHistogram, encode};
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub struct Hlog {
    out: Box<dyn Write>,
    /// The log's start: every line's timestamp is counted from it.
    start: SystemTime,
}

impl Hlog {
    /// Begins the log: its header, with `start` as its StartTime.
    pub fn begin(mut out: Box<dyn Write>, start: SystemTime) -> std::io::Result<Hlog> {
        let secs = start.duration_since(UNIX_EPOCH).unwrap_or_default();
        writeln!(out, "#[Histogram log format version 1.3]")?;
        writeln!(
            out,
            "#[StartTime: {:.3} (seconds since epoch), {}]",
            secs.as_secs_f64(),
            crate::record::timestamp::rfc3339(start)
        )?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        out.flush()?;
        Ok(Hlog { out, start })
    }

    /// A comment line (`#[...]`), which the readers skip.
    pub fn comment(&mut self, text: &str) -> std::io::Result<()> {
        let clean = text.replace(['\n', ']'], " ");
        writeln!(self.out, "#[{clean}]")?;
        self.out.flush()
    }

    /// One interval that began at `at` and lasted `length`.
    pub fn interval(
        &mut self,
        tag: &str,
        at: SystemTime,
        length: Duration,
        h: &LatencyHistogram,
    ) -> std::io::Result<()> {
        let from_start = at.duration_since(self.start).unwrap_or_default();
        writeln!(
            self.out,
            "Tag={tag},{:.3},{:.3},{:.3},{}",
            from_start.as_secs_f64(),
            length.as_secs_f64(),
            h.max() as f64 / 1e6,
            encode(h)
        )?;
        self.out.flush()
    }
}

/// The tag of step `index` (from 0), repeat `repeat`: `step1`, `step1.r2`. Tags cannot hold
/// commas or spaces.
pub fn tag(index: usize, repeat: u32) -> String {
    match repeat {
        0 => format!("step{}", index + 1),
        r => format!("step{}.r{}", index + 1, r + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::histogram::new_histogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    /// HdrHistogram's own Rust reader parses the log back: tags, times, counts.
    #[test]
    fn the_hdrhistogram_reader_reads_it_back() {
        let start = UNIX_EPOCH + Duration::from_secs(1_764_400_000);
        let buf: std::rc::Rc<std::cell::RefCell<Vec<u8>>> = Default::default();
        struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut log = Hlog::begin(Box::new(Shared(buf.clone())), start).unwrap();
        log.comment("perflab run x: null").unwrap();
        let mut h = new_histogram();
        for v in [1_000u64, 2_000, 3_000_000] {
            h.saturating_record(v);
        }
        log.interval(
            &tag(0, 0),
            start + Duration::from_millis(1500),
            Duration::from_secs(1),
            &h,
        )
        .unwrap();
        log.interval(
            &tag(2, 1),
            start + Duration::from_secs(3),
            Duration::from_millis(250),
            &h,
        )
        .unwrap();
        let bytes = buf.borrow().clone();
        let entries: Vec<LogEntry> = IntervalLogIterator::new(&bytes)
            .collect::<Result<_, _>>()
            .unwrap();
        let intervals: Vec<_> = entries
            .iter()
            .filter_map(|e| match e {
                LogEntry::Interval(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(intervals.len(), 2);
        assert_eq!(intervals[0].tag().map(|t| t.as_str()), Some("step1"));
        assert_eq!(intervals[1].tag().map(|t| t.as_str()), Some("step3.r2"));
        assert!((intervals[0].start_timestamp().as_secs_f64() - 1.5).abs() < 1e-9);
        assert!((intervals[1].duration().as_secs_f64() - 0.25).abs() < 1e-9);
        assert!((intervals[0].max() - 3.0).abs() < 0.01);
        let back = crate::record::histogram::decode(intervals[0].encoded_histogram()).unwrap();
        assert_eq!(back.len(), 3);
        assert!(entries.iter().any(|e| matches!(e, LogEntry::StartTime(_))));
    }
}
