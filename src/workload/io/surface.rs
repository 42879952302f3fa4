//! IOzone's surface (`perflab io --mode surface`): file size x record size, and for each
//! point the four classic tests — write (a new file), rewrite (the same file again), read,
//! reread — through the page cache, so cache effects show as they really are: small files
//! read at memory speed, files past the page cache at the device's.
//!
//! One op is one round of the four tests over one file; the step's figures give each test's
//! throughput. As IOzone's automatic mode does, records below 64 KiB are skipped for files
//! above 32 MiB (they take long and show nothing new) unless `--all-records` (IOzone's -z),
//! and a record never exceeds its file. `--cold` (IOzone's -U) flushes the file and drops its
//! cached pages before each test, untimed, so reads come from the device.

use super::layout::{Cleanup, MARKER};
use crate::record::{Headline, Trial};
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use crate::workload::rng::Rng;
use crate::workload::{Figures, OpError, OpOutcome, Prepared, Session, SessionFactory, Workload};
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The tests of one round, in order.
pub const TESTS: [&str; 4] = ["write", "rewrite", "read", "reread"];
/// Above this file size, small records are skipped.
const SMALL_RECORD_LIMIT: u64 = 32 << 20;
const SMALL_RECORD: u64 = 64 << 10;

#[derive(Debug, Clone, Serialize)]
pub struct SurfaceSpec {
    pub file_bytes: Sweep<u64>,
    pub record_bytes: Sweep<u64>,
    /// The work directory perflab creates for the test file.
    pub workdir: PathBuf,
    pub keep: bool,
    /// Every record size for every file size (IOzone -z).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_records: bool,
    /// The file's pages dropped before each test (IOzone -U).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
}

impl SurfaceSpec {
    fn file(&self) -> PathBuf {
        self.workdir.join("surface.dat")
    }
}

impl Workload for SurfaceSpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "io_surface"
    }

    fn disk_bytes(&self) -> u64 {
        self.file_bytes.values().iter().copied().max().unwrap_or(0)
    }

    fn target(&self) -> String {
        self.workdir.display().to_string()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.file_bytes, &self.record_bytes]
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "bytes_per_sec".into(),
            op_name: "rounds".into(),
            higher_is_better: true,
        }
    }

    fn skip(&self, point: &StepPoint) -> bool {
        let (file, record) = (self.file_bytes.at(point), self.record_bytes.at(point));
        record > file || (!self.all_records && file > SMALL_RECORD_LIMIT && record < SMALL_RECORD)
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let file = self.file_bytes.at(point);
        let record = self.record_bytes.at(point) as usize;
        let path = self.file();
        let cold = self.cold;
        Ok(Arc::new(move |worker, _| {
            // One worker (the command refuses --threads above 1), as IOzone's automatic mode.
            let mut buf = vec![0u8; record];
            let mut rng = Rng::new(seed ^ worker as u64);
            for w in buf.chunks_exact_mut(8) {
                w.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
            Ok(Box::new(SurfaceSession {
                path: path.clone(),
                file,
                buf,
                totals: [(0, 0); 4],
                cold,
            }) as Box<dyn Session>)
        }))
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        // Throughput over the four tests together: their bytes over the time they took
        // (not the step's wall time, which includes creating and removing the file).
        if let Some(&b) = trial.figures.get("all_tests_bytes_per_sec") {
            trial.bytes_per_sec = b;
        }
    }

    fn prepare(&self, _ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        std::fs::create_dir(&self.workdir).map_err(|e| {
            OpError::other(format!("cannot create {}: {e}", self.workdir.display()))
        })?;
        let cleanup = Cleanup::new(vec![self.file()], vec![self.workdir.clone()], self.keep);
        std::fs::write(
            self.workdir.join(MARKER),
            "# created by perflab for an io surface test; removed after the run unless --keep\nsurface.dat\n",
        )
        .map_err(|e| OpError::other(format!("cannot write in {}: {e}", self.workdir.display())))?;
        if self.keep {
            note(&format!("keeping {} (--keep)", self.workdir.display()));
        }
        Ok(Box::new(cleanup))
    }
}

struct SurfaceSession {
    path: PathBuf,
    file: u64,
    buf: Vec<u8>,
    /// Bytes and nanoseconds per test.
    totals: [(u64, u64); 4],
    cold: bool,
}

impl SurfaceSession {
    fn pass(&mut self, test: usize, f: &mut File) -> std::io::Result<()> {
        if self.cold && test > 0 {
            // What IOzone's remount does: written pages reach the device, and none stay
            // cached for the next test (this file is perflab's own).
            f.sync_all()?;
            crate::engine::sys::drop_cache(f)?;
        }
        let started = Instant::now();
        f.seek(SeekFrom::Start(0))?;
        let mut left = self.file;
        while left > 0 {
            let n = left.min(self.buf.len() as u64) as usize;
            if test < 2 {
                f.write_all(&self.buf[..n])?;
            } else {
                f.read_exact(&mut self.buf[..n])?;
            }
            left -= n as u64;
        }
        if test < 2 {
            // IOzone counts the flush of what it wrote (its -e) only when asked; so do we:
            // buffered writes end in the page cache.
            f.flush()?;
        }
        let ns = started.elapsed().as_nanos() as u64;
        self.totals[test].0 += self.file;
        self.totals[test].1 += ns;
        Ok(())
    }
}

impl Session for SurfaceSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let err = |e: std::io::Error| OpError::other(format!("{}: {e}", self.path.display()));
        // A new file for the write test, as IOzone's write measures creating the file.
        let _ = std::fs::remove_file(&self.path);
        let mut f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&self.path)
            .map_err(err)?;
        for (test, name) in TESTS.iter().enumerate() {
            self.pass(test, &mut f)
                .map_err(|e| OpError::other(format!("{name} {}: {e}", self.path.display())))?;
        }
        Ok(OpOutcome {
            bytes: self.file * TESTS.len() as u64,
            items: TESTS.len() as u64,
            ..Default::default()
        })
    }

    fn finish(&mut self) -> Figures {
        let _ = std::fs::remove_file(&self.path);
        let mut f = Figures::new();
        // Every round is alike (a new file each time), so warmup rounds count as well.
        let (bytes, ns) = self
            .totals
            .iter()
            .fold((0, 0), |(b, n), &(tb, tn)| (b + tb, n + tn));
        if ns > 0 {
            f.insert(
                "all_tests_bytes_per_sec".into(),
                bytes as f64 / (ns as f64 / 1e9),
            );
        }
        for (i, t) in TESTS.iter().enumerate() {
            let (bytes, ns) = self.totals[i];
            if ns > 0 {
                f.insert(
                    format!("{t}_bytes_per_sec"),
                    bytes as f64 / (ns as f64 / 1e9),
                );
                f.insert(format!("{t}_ns"), ns as f64);
            }
        }
        f
    }
}
