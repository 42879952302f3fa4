//! Numbers from sysfs files: a file's value when the tree is scanned, and the energy
//! counters and watts files a meter keeps open and reads with `pread`.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use super::rapl::energy_delta;
use super::trapezoid;

/// A sysfs file's trimmed text; `None` when unreadable or blank.
pub(super) fn read_trimmed(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A counter or reading file's value, or why there is none: the text for a note.
pub(super) fn read_value_file(path: &Path) -> Result<u64, String> {
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    match fs::read_to_string(path) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| format!("{file} holds '{}', not a number", text.trim())),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            Err(format!("permission denied: {file}"))
        }
        Err(e) => Err(format!("cannot read {file}: {e}")),
    }
}

/// The number in a sysfs file, read at offset 0 through a handle kept open (sysfs makes the
/// value afresh for every read from the start).
pub(super) fn pread_value(file: &File) -> Option<u64> {
    let mut buf = [0u8; 32];
    let n = file.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(buf.get(..n)?).ok()?.trim().parse().ok()
}

/// One energy counter file, kept open.
#[derive(Debug)]
pub(super) struct Counter {
    file: File,
    range_uj: Option<u64>,
    prev_uj: u64,
}

impl Counter {
    pub(super) fn open(path: &Path, range_uj: Option<u64>) -> Option<Counter> {
        Counter::from_file(File::open(path).ok()?, range_uj)
    }

    /// The counter, its first reading taken now.
    fn from_file(file: File, range_uj: Option<u64>) -> Option<Counter> {
        let prev_uj = pread_value(&file)?;
        Some(Counter {
            file,
            range_uj,
            prev_uj,
        })
    }
}

#[derive(Debug)]
pub(super) struct Counters {
    counters: Vec<Counter>,
    total_uj: u64,
    errors: u64,
}

impl Counters {
    pub(super) fn new(counters: Vec<Counter>) -> Counters {
        Counters {
            counters,
            total_uj: 0,
            errors: 0,
        }
    }

    /// Adds every counter's rise since its last good reading; `None` if one failed now (its
    /// rise is added at its next good reading, so the total stays right).
    pub(super) fn energy_j(&mut self) -> Option<f64> {
        let mut all_read = true;
        for c in &mut self.counters {
            match pread_value(&c.file) {
                Some(now) => {
                    let rise = energy_delta(c.prev_uj, now, c.range_uj);
                    self.total_uj = self.total_uj.saturating_add(rise);
                    c.prev_uj = now;
                }
                None => {
                    self.errors += 1;
                    all_read = false;
                }
            }
        }
        all_read.then(|| self.total_uj as f64 / 1e6)
    }

    /// Failed reads so far.
    pub(super) fn errors(&self) -> u64 {
        self.errors
    }
}

/// Instantaneous power files (µW), summed and integrated between calls.
#[derive(Debug)]
pub(super) struct SampledWatts {
    files: Vec<File>,
    joules: f64,
    last_watts: f64,
    last_at: Instant,
    errors: u64,
}

impl SampledWatts {
    /// The reader, its first sample taken now; `None` if a file cannot be read.
    pub(super) fn new(files: Vec<File>) -> Option<SampledWatts> {
        let last_watts = sum_watts(&files)?;
        Some(SampledWatts {
            files,
            joules: 0.0,
            last_watts,
            last_at: Instant::now(),
            errors: 0,
        })
    }

    pub(super) fn energy_j(&mut self) -> Option<f64> {
        let Some(watts) = sum_watts(&self.files) else {
            self.errors += 1;
            return None;
        };
        let now = Instant::now();
        self.joules += trapezoid(
            self.last_watts,
            watts,
            now.saturating_duration_since(self.last_at),
        );
        self.last_watts = watts;
        self.last_at = now;
        Some(self.joules)
    }

    /// Failed reads so far.
    pub(super) fn errors(&self) -> u64 {
        self.errors
    }
}

/// The watts of µW files together; `None` if one cannot be read.
fn sum_watts(files: &[File]) -> Option<f64> {
    files
        .iter()
        .map(|f| pread_value(f).map(|uw| uw as f64 / 1e6))
        .sum()
}
