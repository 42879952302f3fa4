//! A run's own files as stored: `run.json`, and `intervals.jsonl` read from a byte offset so
//! that a page following a run in progress fetches only what was added. And whether a run is
//! still going, read from the end of its interval file.

use crate::http::Response;
use crate::live::INTERVALS_FILE;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The most of an interval file sent in one answer; the page asks again from where it ends.
const CHUNK: u64 = 4 << 20;
/// How recently an interval file without its `end` line must have grown for its run to count
/// as running (a run that was killed never writes `end`). The sampler and the intervals
/// write every few seconds while a step measures; a long warm-up or load writes nothing,
/// hence the margin.
const QUIET_LIMIT: Duration = Duration::from_secs(120);

/// The record file, as stored.
pub fn record(dir: &Path) -> Response {
    match std::fs::read(dir.join("run.json")) {
        Ok(bytes) => Response::new(200, "application/json", bytes),
        Err(e) => super::page::problem(500, &format!("run.json: {e}")),
    }
}

/// No interval file (a run recorded before they existed, or one in a shared store).
pub fn no_intervals() -> Response {
    Response::new(200, "application/x-ndjson", Vec::new()).with_header("X-Perflab-Next", "0")
}

/// The interval file from byte `from`, up to its last complete line (a line being written
/// is left for the next request); the header `X-Perflab-Next` is where to ask next.
pub fn intervals(dir: &Path, from: u64) -> Response {
    let path = dir.join(INTERVALS_FILE);
    let Ok(mut f) = std::fs::File::open(&path) else {
        // Runs recorded before interval files existed have none: an empty file, not an error.
        return no_intervals();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = from.min(len);
    let mut bytes = Vec::new();
    let read = f
        .seek(SeekFrom::Start(from))
        .and_then(|_| f.take(CHUNK).read_to_end(&mut bytes));
    if let Err(e) = read {
        return super::page::problem(500, &format!("{INTERVALS_FILE}: {e}"));
    }
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(whole);
    let next = from + whole as u64;
    Response::new(200, "application/x-ndjson", bytes)
        .with_header("X-Perflab-Next", &next.to_string())
        .with_header("Cache-Control", "no-store")
}

/// Where a run stands, from its interval file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveState {
    /// Its `end` line is written: the record says how it ended.
    Ended,
    /// No `end` yet, and the file grew recently.
    Running,
    /// No `end`, and nothing written for a while: killed, or the machine went down.
    Stopped,
    /// No interval file (a record from before they existed, or imported).
    Unknown,
}

impl LiveState {
    pub fn of(dir: &Path) -> LiveState {
        let path = dir.join(INTERVALS_FILE);
        let Ok(mut f) = std::fs::File::open(&path) else {
            return LiveState::Unknown;
        };
        let Ok(meta) = f.metadata() else {
            return LiveState::Unknown;
        };
        // The `end` line is the last one, and short.
        let tail_len = meta.len().min(4096);
        let mut tail = Vec::new();
        let _ = f
            .seek(SeekFrom::End(-(tail_len as i64)))
            .and_then(|_| f.read_to_end(&mut tail));
        let text = String::from_utf8_lossy(&tail);
        let last = text.trim_end().rsplit('\n').next().unwrap_or("");
        if last.contains("\"event\":\"end\"") {
            return LiveState::Ended;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .unwrap_or_default();
        match age < QUIET_LIMIT {
            true => LiveState::Running,
            false => LiveState::Stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("perflab-serve-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn intervals_come_in_whole_lines_from_an_offset() {
        let d = dir("offset");
        std::fs::write(d.join(INTERVALS_FILE), b"{\"a\":1}\n{\"b\":2}\n{\"c\"").unwrap();
        let next = |r: &Response| {
            r.headers
                .iter()
                .find(|(k, _)| k == "X-Perflab-Next")
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let r = intervals(&d, 0);
        assert_eq!(r.body, b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(next(&r), "16");
        let r = intervals(&d, 16);
        assert!(r.body.is_empty());
        assert_eq!(next(&r), "16");
        let r = intervals(&d, 999);
        assert!(r.body.is_empty());
        assert_eq!(LiveState::of(&d), LiveState::Running);
        std::fs::write(
            d.join(INTERVALS_FILE),
            b"{\"a\":1}\n{\"event\":\"end\",\"run\":\"x\"}\n",
        )
        .unwrap();
        assert_eq!(LiveState::of(&d), LiveState::Ended);
        assert_eq!(LiveState::of(&d.join("none")), LiveState::Unknown);
        let _ = std::fs::remove_dir_all(&d);
    }
}
