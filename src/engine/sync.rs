//! [`SyncEngine`]: blocking I/O, one system call per request (fio's `psync`).
//!
//! ```text
//!  push ─► pending: Vec<(Request, errno)>      no syscall
//!  submit ─► for each, in push order:
//!              Read  → pread   (one call)      Fsync     → fsync
//!              Write → pwrite  (one call)      Fdatasync → fdatasync
//!            ─► Completion { slot, bytes | -errno }
//! ```
//!
//! Every request has completed when `submit` returns, so `min_complete` is always met.
//! A short transfer is reported as the byte count it was, not retried: the caller decides
//! what a short read means (EOF, usually). Only EINTR is retried, because it says nothing
//! about the I/O.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::buffer::AlignedBuf;
use super::{
    Admit, Completion, Engine, EngineConfig, EngineError, EngineKind, Op, Request, SlotTable,
};

/// Blocking pread/pwrite engine.
#[derive(Debug)]
pub struct SyncEngine {
    files: Vec<File>,
    bufs: AlignedBuf,
    slots: SlotTable,
    /// Pushed requests with the errno they fail with without a syscall (0: issue them).
    pending: Vec<(Request, i32)>,
    depth: u32,
}

impl SyncEngine {
    /// Builds the engine: allocates `depth` aligned buffers. Nothing is asked of the kernel.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let bufs = AlignedBuf::new(config.depth as usize, config.buf_len, config.align)?;
        Ok(SyncEngine {
            files: config.files,
            bufs,
            slots: SlotTable::new(config.depth),
            pending: Vec::with_capacity(config.depth as usize),
            depth: config.depth,
        })
    }
}

/// Repeats `f` while it fails with EINTR.
fn retry_eintr<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// The errno of `e` as a completion result (EIO when the error carries none).
fn neg_errno(e: &io::Error) -> i32 {
    -e.raw_os_error().unwrap_or(libc::EIO)
}

/// Runs one request and returns its completion result.
fn execute(files: &[File], bufs: &mut AlignedBuf, req: &Request) -> i32 {
    let Some(file) = files.get(req.file as usize) else {
        return -libc::EBADF;
    };
    let len = req.len as usize;
    let done = match req.op {
        Op::Read => match bufs.slot(req.slot as usize).get_mut(..len) {
            Some(buf) => retry_eintr(|| file.read_at(buf, req.offset)),
            None => return -libc::EINVAL,
        },
        Op::Write => match bufs.slot(req.slot as usize).get(..len) {
            Some(buf) => retry_eintr(|| file.write_at(buf, req.offset)),
            None => return -libc::EINVAL,
        },
        Op::Fsync => retry_eintr(|| file.sync_all()).map(|()| 0),
        Op::Fdatasync => retry_eintr(|| file.sync_data()).map(|()| 0),
        // Never issued: the slot table fails trims on this engine.
        Op::Trim => return -libc::EOPNOTSUPP,
    };
    match done {
        // Linux moves at most 0x7ffff000 bytes per call, so this always fits.
        Ok(n) => i32::try_from(n).unwrap_or(i32::MAX),
        Err(e) => neg_errno(&e),
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Sync
    }

    fn depth(&self) -> u32 {
        self.depth
    }

    fn in_flight(&self) -> u32 {
        self.slots.in_flight()
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        if self.slots.is_free(slot) {
            self.bufs.slot(slot as usize)
        } else {
            &mut []
        }
    }

    fn push(&mut self, req: Request) {
        match self
            .slots
            .admit(&req, self.files.len(), self.bufs.slot_len())
        {
            Admit::Issue => self.pending.push((req, 0)),
            Admit::Fail(errno) => self.pending.push((req, errno)),
            Admit::Reject => {}
        }
    }

    fn submit(&mut self, _min_complete: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(breach) = self.slots.take_breach() {
            return Err(breach);
        }
        out.reserve(self.pending.len());
        for (req, errno) in self.pending.drain(..) {
            let result = if errno != 0 {
                -errno
            } else {
                execute(&self.files, &mut self.bufs, &req)
            };
            self.slots.complete(req.slot);
            out.push(Completion {
                slot: req.slot,
                result,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::*;

    fn open(config: EngineConfig) -> Box<dyn Engine> {
        Box::new(SyncEngine::new(config).expect("sync engine"))
    }

    #[test]
    fn round_trip_depth_1() {
        testutil::round_trip(open, 1);
    }

    #[test]
    fn round_trip_depth_8() {
        testutil::round_trip(open, 8);
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        testutil::syncs(open);
    }

    #[test]
    fn reads_past_eof_are_short() {
        testutil::past_eof(open);
    }

    #[test]
    fn errors_are_completions() {
        testutil::errors(open);
    }

    #[test]
    fn slot_contract_is_enforced() {
        testutil::contract(open);
    }

    #[test]
    fn o_direct_round_trip() {
        testutil::direct(open, "sync o_direct");
    }

    #[test]
    fn is_send() {
        fn send<T: Send>() {}
        send::<SyncEngine>();
    }
}
