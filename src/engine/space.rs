//! [`SpaceEngine`]: a file's space or length changed in place of a transfer (fio's
//! `falloc` and `ftruncate`).
//!
//! ```text
//!  push ─► pending: Vec<(Request, errno)>       no syscall
//!  submit ─► for each, in push order:
//!     Allocate (falloc)  Read  → fallocate(KEEP_SIZE)           the range allocated, the
//!                        Write → fallocate(0)                   length grown if need be
//!                        Trim  → fallocate(PUNCH_HOLE|KEEP_SIZE) the range freed
//!     Truncate (ftruncate) Write → ftruncate(offset)            reads and trims: EINVAL
//!     both               Fsync → fsync, Fdatasync → fdatasync
//!  ─► Completion { slot, len | -errno }
//! ```
//!
//! As fio counts them, each request is an I/O of its length (its bytes, its IO/s) although
//! no byte moves: a request that succeeds completes with its length. fio's ftruncate
//! engine fails reads and trims with EINVAL, and so does this one (the job file's reader
//! refuses such jobs before they run). Like the sync engine, every request is carried out
//! inside `submit`, one after another (fio's engines are synchronous), and EINTR is
//! retried. The slot buffers exist for the caller's sake; nothing reads them.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::buffer::AlignedBuf;
use super::{
    Admit, Completion, Engine, EngineConfig, EngineError, EngineKind, Op, Request, SlotTable, moved,
};

/// What a request changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// fio's falloc: reads and writes allocate the range, trims punch a hole in it.
    Allocate,
    /// fio's ftruncate: a write sets the file's length to its offset.
    Truncate,
}

/// The engine of fio's falloc and ftruncate.
#[derive(Debug)]
pub struct SpaceEngine {
    change: Change,
    files: Vec<File>,
    bufs: AlignedBuf,
    slots: SlotTable,
    /// Pushed requests with the errno they fail with without a syscall (0: issue them).
    pending: Vec<(Request, i32)>,
    depth: u32,
}

impl SpaceEngine {
    /// Builds the engine over open files (read-write for falloc, as fio opens them).
    pub fn new(change: Change, config: EngineConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let bufs = AlignedBuf::new(config.depth as usize, config.buf_len, config.align)?;
        Ok(SpaceEngine {
            change,
            files: config.files,
            bufs,
            slots: match change {
                Change::Allocate => SlotTable::trimming(config.depth),
                Change::Truncate => SlotTable::new(config.depth),
            },
            pending: Vec::with_capacity(config.depth as usize),
            depth: config.depth,
        })
    }
}

// Linux's fallocate modes (linux/falloc.h).
const KEEP_SIZE: libc::c_int = libc::FALLOC_FL_KEEP_SIZE;
const PUNCH_HOLE: libc::c_int = libc::FALLOC_FL_PUNCH_HOLE;

/// fallocate(2) over `len` bytes at `offset` of `file`, EINTR retried.
fn fallocate(file: &File, mode: libc::c_int, offset: u64, len: u32) -> io::Result<()> {
    // `admit` keeps offsets within i64 (EINVAL otherwise), so these conversions hold.
    let offset =
        libc::off_t::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let len = libc::off_t::from(len);
    loop {
        // SAFETY: fallocate reads only its integer arguments; the descriptor stays open for
        // the call because `file` is borrowed.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), mode, offset, len) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Runs one request and returns its completion result.
fn execute(change: Change, files: &[File], req: &Request) -> i32 {
    let Some(file) = files.get(req.file as usize) else {
        return -libc::EBADF;
    };
    let done = match (change, req.op) {
        (_, Op::Fsync) => file.sync_all(),
        (_, Op::Fdatasync) => file.sync_data(),
        (Change::Allocate, Op::Read) => fallocate(file, KEEP_SIZE, req.offset, req.len),
        (Change::Allocate, Op::Write) => fallocate(file, 0, req.offset, req.len),
        (Change::Allocate, Op::Trim) => {
            fallocate(file, PUNCH_HOLE | KEEP_SIZE, req.offset, req.len)
        }
        // std's set_len is ftruncate(2), EINTR retried.
        (Change::Truncate, Op::Write) => file.set_len(req.offset),
        (Change::Truncate, Op::Read | Op::Trim) => return -libc::EINVAL,
    };
    match (done, req.op) {
        (Ok(()), Op::Fsync | Op::Fdatasync) => 0,
        (Ok(()), _) => moved(req.len),
        (Err(e), _) => -e.raw_os_error().unwrap_or(libc::EIO),
    }
}

impl Engine for SpaceEngine {
    fn kind(&self) -> EngineKind {
        match self.change {
            Change::Allocate => EngineKind::Falloc,
            Change::Truncate => EngineKind::Ftruncate,
        }
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
                execute(self.change, &self.files, &req)
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
    use super::super::testutil::{self, TempPath, drain};
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn open(kind: EngineKind, file: File) -> Box<dyn Engine> {
        super::super::open(kind, testutil::config(2, 65536, vec![file])).expect("engine")
    }

    fn run(e: &mut dyn Engine, op: Op, offset: u64, len: u32) -> i32 {
        e.push(Request {
            slot: 0,
            file: 0,
            op,
            offset,
            len,
        });
        let mut out = Vec::new();
        e.submit(1, &mut out).expect("submit");
        drain(e, &mut out);
        assert_eq!(out.len(), 1);
        out[0].result
    }

    /// Bytes the filesystem holds for the file (st_blocks is in 512-byte units).
    fn allocated(f: &TempPath) -> u64 {
        std::fs::metadata(&f.0).expect("stat").blocks() * 512
    }

    #[test]
    fn falloc_writes_allocate_and_grow_reads_allocate_trims_punch_holes() {
        let tmp = TempPath::new_in(std::path::Path::new("/var/tmp"), "falloc");
        let mut e = open(EngineKind::Falloc, tmp.create_rw());
        assert_eq!(e.kind(), EngineKind::Falloc);
        // A write allocates its range and grows the file to its end, moving no byte.
        assert_eq!(run(e.as_mut(), Op::Write, 65536, 65536), 65536);
        let len = std::fs::metadata(&tmp.0).expect("stat").len();
        if allocated(&tmp) == 0 {
            eprintln!("skipped: this filesystem does not allocate on fallocate");
            return;
        }
        assert_eq!(len, 131072);
        assert!(allocated(&tmp) >= 65536);
        // A read allocates without growing the file.
        assert_eq!(run(e.as_mut(), Op::Read, 262144, 4096), 4096);
        assert_eq!(std::fs::metadata(&tmp.0).expect("stat").len(), 131072);
        let before = allocated(&tmp);
        // A trim frees its range and keeps the length.
        assert_eq!(run(e.as_mut(), Op::Trim, 65536, 65536), 65536);
        assert_eq!(std::fs::metadata(&tmp.0).expect("stat").len(), 131072);
        assert_eq!(allocated(&tmp), before - 65536, "the hole is punched");
        assert_eq!(run(e.as_mut(), Op::Fsync, 0, 0), 0);
    }

    #[test]
    fn ftruncate_writes_set_the_length_to_their_offset_and_reads_fail() {
        let tmp = TempPath::new("ftruncate");
        let mut e = open(EngineKind::Ftruncate, tmp.create_rw());
        assert_eq!(e.kind(), EngineKind::Ftruncate);
        assert_eq!(run(e.as_mut(), Op::Write, 12288, 4096), 4096);
        assert_eq!(std::fs::metadata(&tmp.0).expect("stat").len(), 12288);
        assert_eq!(run(e.as_mut(), Op::Write, 4096, 4096), 4096);
        assert_eq!(std::fs::metadata(&tmp.0).expect("stat").len(), 4096);
        assert_eq!(run(e.as_mut(), Op::Read, 0, 4096), -libc::EINVAL);
        assert_eq!(run(e.as_mut(), Op::Trim, 0, 4096), -libc::EOPNOTSUPP);
        assert_eq!(run(e.as_mut(), Op::Fdatasync, 0, 0), 0);
    }

    #[test]
    fn slot_contract_is_enforced() {
        testutil::contract(|c| Box::new(SpaceEngine::new(Change::Allocate, c).expect("falloc")));
    }

    #[test]
    fn failures_are_completions() {
        let tmp = TempPath::new("falloc-ro");
        drop(tmp.create_rw());
        let ro = File::open(&tmp.0).expect("open read-only");
        let mut e = open(EngineKind::Falloc, ro);
        // fallocate needs a file open for writing.
        assert_eq!(run(e.as_mut(), Op::Write, 0, 4096), -libc::EBADF);
        e.push(Request {
            slot: 1,
            file: 3,
            op: Op::Write,
            offset: 0,
            len: 4096,
        });
        let mut out = Vec::new();
        e.submit(1, &mut out).expect("submit");
        assert_eq!(out[0].result, -libc::EBADF, "no file 3");
    }
}
