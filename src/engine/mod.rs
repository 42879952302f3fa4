//! Storage I/O engines: the one place in perflab that talks to the kernel's I/O paths
//! directly, and the only module allowed to use `unsafe`.
//!
//! # Map
//!
//! ```text
//!  worker thread (creates, uses and drops its engine)
//!      │  open(kind, EngineConfig { depth, buf_len, align, files })
//!      ▼
//!  Box<dyn Engine> ── buf(slot) ─► &mut [u8]      fill before a write, read after a read
//!      │            ── push(Request { slot, file, op, offset, len })    queue, no syscall
//!      │            ── submit(min, &mut Vec<Completion>)                issue + reap
//!      ├── sync::SyncEngine   pread/pwrite/fsync one by one in submit (fio's psync)
//!      ├── uring::UringEngine io_uring: fixed files + fixed buffers, one io_uring_enter
//!      │                      per submit (fio's io_uring)
//!      ├── aio::AioEngine     Linux native AIO: one io_submit per submit, io_getevents
//!      │                      only when the mapped ring holds events (fio's libaio)
//!      ├── null::NullEngine   every request completes in submit, nothing moves, no
//!      │                      syscall (fio's null: measures the harness)
//!      ├── space::SpaceEngine a file's space or length changed in place of a transfer:
//!      │                      fallocate and punched holes (fio's falloc), ftruncate to
//!      │                      the offset (fio's ftruncate)
//!      └── names::NameEngine  a file's name acted on, the file never opened: stat (fio's
//!                             filestat), unlink (fio's filedelete)
//!  Reach               how an engine reaches the files its requests name: files the caller
//!                      opens, paths it must leave alone, or nothing at all (null)
//!  buffer::AlignedBuf  the `depth` slot buffers of either engine, aligned for O_DIRECT
//!  poll::Poller        epoll for many sockets on one thread (the caches' sessions), with a
//!                      nanosecond timeout (epoll_pwait2), edge-triggered
//!  sys                 safe libc wrappers: CPU clocks, statvfs, fallocate, fadvise,
//!                      O_DIRECT open options, ENOSPC test, block size ioctl
//!  process             the jobs workload's child processes: pin the spawning thread
//!                      (sched_setaffinity), reap a child with its rusage (wait4)
//!  sqlite_math         SQL math functions (C, built by build.rs) on an SQLite connection
//!  kernels             the memory bandwidth kernels, compiled for AVX-512, AVX2 and the
//!                      baseline and chosen at run time (a portable build runs them at full
//!                      width)
//! ```
//!
//! # The slot contract
//!
//! A request is named by its `slot` (0..depth), which is also the buffer it reads into or
//! writes from. A slot is *in flight* from `push` until its [`Completion`] has been handed
//! out by `submit`; while in flight, it must not be pushed again and its buffer must not
//! be touched (the kernel may be writing it). Both engines check this cheaply (a bit per
//! slot): a breach trips a `debug_assert`, and in release builds the request is not issued
//! and the next `submit` returns an `InvalidInput` error naming it, so a caller bug never
//! goes unnoticed and never lets the kernel and Rust share a buffer. `buf` of a slot in
//! flight returns an empty slice in release builds.
//!
//! Bad request *contents* with a valid slot (a file index out of range, a length over
//! `buf_len`, an offset past `i64::MAX`) are not bugs of the same kind: they complete
//! with `-EBADF` or `-EINVAL` like any failed I/O.
//!
//! `unsafe` lives in [`buffer`] (the allocation), [`uring`] and [`aio`] (handing buffer
//! addresses to the kernel), [`poll`] (epoll), [`sys`] and [`process`] (libc calls), and [`kernels`] (calling a
//! copy compiled for features the CPU was seen to have) and [`sqlite_math`] (a C function
//! given the connection's handle); each block says why it is sound.
#![allow(unsafe_code)]

pub mod aio;
pub mod buffer;
pub mod kernels;
pub mod names;
pub mod null;
pub mod poll;
pub mod process;
pub mod space;
pub mod sqlite_math;
pub mod sync;
pub mod sys;
pub mod uring;

use std::fmt;
use std::io;
use std::str::FromStr;

use buffer::BufferError;

/// Deepest queue an engine accepts: io_uring's own limit on submission queue entries.
pub const MAX_DEPTH: u32 = 32768;
/// Buffer alignment when nothing else is known: the page size, enough for O_DIRECT on any
/// common device.
pub const DEFAULT_ALIGN: usize = 4096;
/// Smallest alignment accepted: the smallest logical block size of any block device.
pub const MIN_ALIGN: usize = 512;

/// Which engine issues the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// Asynchronous I/O through io_uring (fio's `io_uring`).
    IoUring,
    /// Linux's native asynchronous I/O, io_submit and io_getevents (fio's `libaio`).
    Libaio,
    /// One blocking pread/pwrite at a time (fio's `psync`).
    Sync,
    /// No I/O at all: every request completes at once as if it had moved its bytes (fio's
    /// `null`).
    Null,
    /// Reads and writes allocate the range with fallocate, trims punch it out (fio's
    /// `falloc`).
    Falloc,
    /// Each write truncates the file to its offset (fio's `ftruncate`).
    Ftruncate,
    /// Each request stats its file by name (fio's `filestat`).
    FileStat,
    /// Each request unlinks its file (fio's `filedelete`).
    FileDelete,
}

/// How an engine reaches the files its requests name ([`EngineKind::reach`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Through files the caller opens as its I/O needs: for reading, for writing if it
    /// writes, O_DIRECT if asked ([`EngineConfig::files`]).
    Open,
    /// Through files the caller opens for reading and writing, buffered, whatever its I/O
    /// (fio's falloc opens its files so: a punched hole needs a writable file).
    OpenReadWrite,
    /// By name ([`EngineConfig::paths`]): the caller must not open them, since opening is
    /// no part of what is measured.
    Path,
    /// Not at all: no file needs to exist ([`EngineConfig::paths`] only number them).
    Nothing,
}

impl EngineKind {
    /// The name used on the command line and in records, fio's name for the same engine:
    /// `io_uring`, `sync`, `null`, `falloc`, `ftruncate`, `filestat`, `filedelete`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Falloc => "falloc",
            EngineKind::Ftruncate => "ftruncate",
            EngineKind::FileStat => "filestat",
            EngineKind::FileDelete => "filedelete",
        }
    }

    /// How the engine reaches its files, so the caller opens them, names them or neither.
    pub fn reach(self) -> Reach {
        match self {
            EngineKind::IoUring | EngineKind::Libaio | EngineKind::Sync | EngineKind::Ftruncate => {
                Reach::Open
            }
            EngineKind::Falloc => Reach::OpenReadWrite,
            EngineKind::FileStat | EngineKind::FileDelete => Reach::Path,
            EngineKind::Null => Reach::Nothing,
        }
    }

    /// Whether each request is carried out inside `submit`, one after another, so a
    /// caller keeps one in flight (fio's synchronous engines). The null engine completes
    /// in `submit` too, but queues as deep as asked, as fio's does above iodepth 1.
    pub fn one_at_a_time(self) -> bool {
        !matches!(
            self,
            EngineKind::IoUring | EngineKind::Libaio | EngineKind::Null
        )
    }
}

impl serde::Serialize for EngineKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine name that is none of `io_uring`, `uring`, `libaio`, `sync`, `psync`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown I/O engine `{0}` (expected io_uring, uring, libaio, sync or psync)")]
pub struct ParseEngineKindError(pub String);

/// The command line's engines (`--engine`): the other kinds run fio's job files only, where
/// the job file's reader names them.
impl FromStr for EngineKind {
    type Err = ParseEngineKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "io_uring" | "uring" => Ok(EngineKind::IoUring),
            "libaio" => Ok(EngineKind::Libaio),
            "sync" | "psync" => Ok(EngineKind::Sync),
            other => Err(ParseEngineKindError(other.to_owned())),
        }
    }
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read `len` bytes at `offset` into the slot's buffer.
    Read,
    /// Write `len` bytes of the slot's buffer at `offset`.
    Write,
    /// Flush the file's data and metadata (`fsync`); `offset` and `len` are ignored.
    Fsync,
    /// Flush the file's data and the metadata needed to read it (`fdatasync`); `offset`
    /// and `len` are ignored.
    Fdatasync,
    /// Discard `len` bytes at `offset`: only the falloc engine does (a punched hole); the
    /// others complete it with `-EOPNOTSUPP`.
    Trim,
}

/// One I/O to issue. `slot` names the buffer (0..depth) and identifies the request on completion.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Buffer and identity of the request, `0..depth`.
    pub slot: u32,
    /// Index into [`EngineConfig::files`].
    pub file: u32,
    /// What to do.
    pub op: Op,
    /// Byte offset in the file (reads, writes and trims).
    pub offset: u64,
    /// Bytes to transfer, at most `buf_len` (reads, writes and trims).
    pub len: u32,
}

/// The outcome of one request.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// The slot of the request.
    pub slot: u32,
    /// bytes transferred (>= 0) or a negative errno
    pub result: i32,
}

impl Completion {
    /// The error of a failed request, `None` when it transferred `result` bytes. A short
    /// transfer is not an error: compare `result` with the length asked for.
    pub fn error(&self) -> Option<io::Error> {
        if self.result >= 0 {
            return None;
        }
        // checked_neg: i32::MIN has no positive twin; it is no errno anyway.
        Some(match self.result.checked_neg() {
            Some(errno) => io::Error::from_raw_os_error(errno),
            None => io::Error::other(format!("invalid completion result {}", self.result)),
        })
    }
}

/// The completion result of a request that did all it was asked: its length (a length
/// past `i32::MAX` cannot be asked for: `admit` refuses it beyond the slot buffer).
#[inline]
pub(crate) fn moved(len: u32) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// What an engine is built over.
#[derive(Debug)]
pub struct EngineConfig {
    /// Queue depth: the number of slots and the most requests in flight, 1..=[`MAX_DEPTH`].
    pub depth: u32,
    /// Bytes per slot buffer: the largest read or write.
    pub buf_len: usize,
    /// buffer alignment, a power of two >= 512 (4096 default)
    pub align: usize,
    /// The files requests name by index, for the engines that reach them open
    /// ([`Reach::Open`], [`Reach::OpenReadWrite`]). The engine owns them (and closes them on
    /// drop).
    pub files: Vec<std::fs::File>,
    /// The files requests name by index, by name, for the engines that never open them
    /// ([`Reach::Path`], [`Reach::Nothing`]).
    pub paths: Vec<std::path::PathBuf>,
}

impl Default for EngineConfig {
    /// Depth 1, one 4 KiB buffer aligned to 4096, no files (add some before `open`).
    fn default() -> Self {
        EngineConfig {
            depth: 1,
            buf_len: 4096,
            align: DEFAULT_ALIGN,
            files: Vec::new(),
            paths: Vec::new(),
        }
    }
}

impl EngineConfig {
    /// Checks the shape before anything is allocated or set up.
    pub fn validate(&self) -> Result<(), EngineError> {
        if self.depth == 0 || self.depth > MAX_DEPTH {
            return Err(EngineError::Config(format!(
                "queue depth {} is out of range 1..={MAX_DEPTH}",
                self.depth
            )));
        }
        if self.buf_len == 0 {
            return Err(EngineError::Config(
                "buffer length must be at least 1 byte".into(),
            ));
        }
        if !self.align.is_power_of_two() || self.align < MIN_ALIGN {
            return Err(EngineError::Config(format!(
                "buffer alignment {} is not a power of two >= {MIN_ALIGN}",
                self.align
            )));
        }
        if self.files.is_empty() && self.paths.is_empty() {
            return Err(EngineError::Config(
                "an engine needs at least one file".into(),
            ));
        }
        if u32::try_from(self.files.len().max(self.paths.len())).is_err() {
            return Err(EngineError::Config("too many files".into()));
        }
        Ok(())
    }

    /// Checks that the files are given the way `kind` reaches them.
    fn validate_for(&self, kind: EngineKind) -> Result<(), EngineError> {
        self.validate()?;
        let missing = match kind.reach() {
            Reach::Open | Reach::OpenReadWrite => self.files.is_empty().then_some("open files"),
            Reach::Path | Reach::Nothing => self.paths.is_empty().then_some("file paths"),
        };
        match missing {
            Some(what) => Err(EngineError::Config(format!(
                "the {kind} engine needs {what}"
            ))),
            None => Ok(()),
        }
    }
}

/// Why an engine could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// io_uring cannot be used on this system; the text says why and what to do.
    #[error("io_uring is not available: {0}")]
    Unsupported(String),
    /// The kernel refused to set the engine up (ring creation, registration).
    #[error("cannot set up the I/O engine: {0}")]
    Setup(io::Error),
    /// The configuration is unusable (depth, buffer length, alignment, files).
    #[error("invalid I/O engine configuration: {0}")]
    Config(String),
    /// The slot buffers could not be allocated.
    #[error(transparent)]
    Buffer(#[from] BufferError),
}

/// An I/O engine: one per worker thread, used only by the thread that opened it.
pub trait Engine: Send {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;
    /// The queue depth (number of slots).
    fn depth(&self) -> u32;
    /// Requests pushed or submitted and not yet completed.
    fn in_flight(&self) -> u32;
    /// The buffer of `slot` (exactly buf_len bytes, aligned, zero-initialised at start). Fill it
    /// before pushing a write; read it after a read of that slot completes. Must not be called
    /// for a slot in flight (debug_assert; an empty slice in release builds).
    fn buf(&mut self, slot: u32) -> &mut [u8];
    /// Queues a request; nothing is issued until `submit`. The slot must be below `depth` and
    /// not in flight: a breach trips a debug_assert and, in release builds, the request is not
    /// issued and the next `submit` returns an `InvalidInput` error.
    fn push(&mut self, req: Request);
    /// Issues everything pushed, then waits until at least `min_complete` requests have
    /// completed (0 = do not wait; more than are in flight waits for all of them), and appends
    /// every completion available to `out`.
    fn submit(&mut self, min_complete: u32, out: &mut Vec<Completion>) -> io::Result<()>;

    /// Issues everything pushed, then waits up to `timeout` for one completion, and appends
    /// every completion available to `out`. For open-loop callers, which must not sleep past
    /// the next scheduled start. The default (the sync engine, which has nothing in flight
    /// between calls) does not wait.
    fn submit_within(
        &mut self,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let _ = timeout;
        self.submit(0, out)
    }
}

/// Opens an engine of `kind` over `config`. io_uring: probe first; the caller decides on fallback.
pub fn open(kind: EngineKind, config: EngineConfig) -> Result<Box<dyn Engine>, EngineError> {
    // A bad shape is the caller's to fix whatever the engine: report it before the probe.
    config.validate_for(kind)?;
    match kind {
        EngineKind::Sync => Ok(Box::new(sync::SyncEngine::new(config)?)),
        EngineKind::IoUring => {
            probe_uring().map_err(|u| EngineError::Unsupported(u.0))?;
            Ok(Box::new(uring::UringEngine::new(config)?))
        }
        EngineKind::Libaio => Ok(Box::new(aio::AioEngine::new(config)?)),
        EngineKind::Null => Ok(Box::new(null::NullEngine::new(config)?)),
        EngineKind::Falloc => Ok(Box::new(space::SpaceEngine::new(
            space::Change::Allocate,
            config,
        )?)),
        EngineKind::Ftruncate => Ok(Box::new(space::SpaceEngine::new(
            space::Change::Truncate,
            config,
        )?)),
        EngineKind::FileStat => Ok(Box::new(names::NameEngine::new(
            names::Action::Stat,
            config,
        )?)),
        EngineKind::FileDelete => Ok(Box::new(names::NameEngine::new(
            names::Action::Unlink,
            config,
        )?)),
    }
}

/// Why io_uring cannot be used here, in one line a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UringUnavailable(pub String);

/// Whether io_uring works here.
pub fn probe_uring() -> Result<(), UringUnavailable> {
    uring::probe().map_err(UringUnavailable)
}

/// What [`SlotTable::admit`] decided about a pushed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Valid: issue it.
    Issue,
    /// The slot is now in flight, but the request fails with this errno without reaching
    /// the kernel.
    Fail(i32),
    /// Contract breach (slot out of range or already in flight): not issued, recorded.
    Reject,
}

/// Which slots are in flight: the cheap check of the slot contract, shared by both engines.
#[derive(Debug)]
pub(crate) struct SlotTable {
    busy: Vec<bool>,
    in_flight: u32,
    /// Whether the engine carries out [`Op::Trim`]; elsewhere a trim fails with EOPNOTSUPP.
    trims: bool,
    /// The first contract breach since the last `submit`, reported by it.
    breach: Option<String>,
}

impl SlotTable {
    pub(crate) fn new(depth: u32) -> Self {
        SlotTable {
            busy: vec![false; depth as usize],
            in_flight: 0,
            trims: false,
            breach: None,
        }
    }

    /// The table of an engine that carries out trims.
    pub(crate) fn trimming(depth: u32) -> Self {
        SlotTable {
            trims: true,
            ..SlotTable::new(depth)
        }
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Whether `slot` may be touched by Rust: in range and not in flight.
    pub(crate) fn is_free(&self, slot: u32) -> bool {
        let free = self.busy.get(slot as usize).is_some_and(|b| !b);
        debug_assert!(
            free,
            "buffer of slot {slot} asked for while in flight or out of range"
        );
        free
    }

    /// Marks `req.slot` in flight if the contract allows, and sorts out requests that can
    /// only fail.
    pub(crate) fn admit(&mut self, req: &Request, files: usize, buf_len: usize) -> Admit {
        let depth = self.busy.len();
        let Some(busy) = self.busy.get_mut(req.slot as usize) else {
            debug_assert!(false, "slot {} pushed but depth is {depth}", req.slot);
            self.breach.get_or_insert_with(|| {
                format!("request pushed for slot {} but depth is {depth}", req.slot)
            });
            return Admit::Reject;
        };
        if *busy {
            debug_assert!(false, "slot {} pushed while in flight", req.slot);
            self.breach.get_or_insert_with(|| {
                format!("request pushed for slot {} while it is in flight", req.slot)
            });
            return Admit::Reject;
        }
        *busy = true;
        self.in_flight += 1;
        if req.file as usize >= files {
            return Admit::Fail(libc::EBADF);
        }
        if matches!(req.op, Op::Read | Op::Write | Op::Trim)
            && (req.len as usize > buf_len || req.offset > i64::MAX as u64)
        {
            return Admit::Fail(libc::EINVAL);
        }
        if req.op == Op::Trim && !self.trims {
            return Admit::Fail(libc::EOPNOTSUPP);
        }
        Admit::Issue
    }

    /// A queued engine's `push`: admits `req` and files it in `pending` to issue, or in
    /// `local` as a failure `submit` delivers (see [`SlotTable::deliver`]).
    pub(crate) fn queue(
        &mut self,
        req: Request,
        (files, buf_len): (usize, usize),
        pending: &mut Vec<Request>,
        local: &mut Vec<Completion>,
    ) {
        match self.admit(&req, files, buf_len) {
            Admit::Issue => pending.push(req),
            Admit::Fail(errno) => local.push(Completion {
                slot: req.slot,
                result: -errno,
            }),
            Admit::Reject => {}
        }
    }

    /// Hands the failures `queue` kept back to the caller, their slots free again.
    pub(crate) fn deliver(&mut self, local: &mut Vec<Completion>, out: &mut Vec<Completion>) {
        for c in local.drain(..) {
            self.complete(c.slot);
            out.push(c);
        }
    }

    /// The buffer of `slot` in `bufs`, empty while the slot is in flight.
    pub(crate) fn buf<'a>(&self, bufs: &'a mut buffer::AlignedBuf, slot: u32) -> &'a mut [u8] {
        if self.is_free(slot) {
            bufs.slot(slot as usize)
        } else {
            &mut []
        }
    }

    /// Marks `slot` free again. False for a slot that was not in flight (a stray completion).
    pub(crate) fn complete(&mut self, slot: u32) -> bool {
        match self.busy.get_mut(slot as usize) {
            Some(busy) if *busy => {
                *busy = false;
                self.in_flight -= 1;
                true
            }
            _ => false,
        }
    }

    /// The recorded contract breach, as the error `submit` returns.
    pub(crate) fn take_breach(&mut self) -> Option<io::Error> {
        self.breach
            .take()
            .map(|msg| io::Error::new(io::ErrorKind::InvalidInput, msg))
    }
}

/// Shared test helpers and the tests both engines must pass.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;
    use std::fs::{File, OpenOptions};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A file path that is removed on drop.
    pub struct TempPath(pub PathBuf);

    impl TempPath {
        pub fn new_in(dir: &Path, tag: &str) -> Self {
            static N: AtomicU32 = AtomicU32::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            TempPath(dir.join(format!("perflab-engine-{}-{tag}-{n}", std::process::id())))
        }
        pub fn new(tag: &str) -> Self {
            Self::new_in(&std::env::temp_dir(), tag)
        }
        pub fn create_rw(&self) -> File {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.0)
                .expect("create temp file")
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// Byte `i` of the test pattern for a block written at `offset`.
    pub fn pattern(offset: u64, i: usize) -> u8 {
        (offset / 512) as u8 ^ (i as u8).wrapping_mul(31) ^ 0x5a
    }

    pub fn config(depth: u32, buf_len: usize, files: Vec<File>) -> EngineConfig {
        EngineConfig {
            depth,
            buf_len,
            align: DEFAULT_ALIGN,
            files,
            paths: Vec::new(),
        }
    }

    /// Submits until every request in flight has completed; fails the test after too many
    /// rounds instead of hanging.
    pub fn drain(engine: &mut dyn Engine, out: &mut Vec<Completion>) {
        for _ in 0..1000 {
            if engine.in_flight() == 0 {
                return;
            }
            engine.submit(1, out).expect("submit");
        }
        panic!("requests never completed: {} in flight", engine.in_flight());
    }

    /// Writes a pattern at several offsets through `depth` slots at a time, reads it back
    /// through the same slots, and compares, matching completions by slot.
    pub fn round_trip(open: impl Fn(EngineConfig) -> Box<dyn Engine>, depth: u32) {
        const LEN: usize = 4096;
        let tmp = TempPath::new("rt");
        let file = tmp.create_rw();
        let mut e = open(config(depth, LEN, vec![file]));
        assert_eq!(e.depth(), depth);
        // More blocks than slots, so slots are reused; offsets out of order.
        let offsets: Vec<u64> = (0..3 * depth as u64 + 2)
            .map(|k| ((k * 7) % (3 * depth as u64 + 2)) * LEN as u64)
            .collect();
        let mut out = Vec::new();
        for chunk in offsets.chunks(depth as usize) {
            for (slot, &off) in chunk.iter().enumerate() {
                let b = e.buf(slot as u32);
                assert_eq!(b.len(), LEN);
                for (i, x) in b.iter_mut().enumerate() {
                    *x = pattern(off, i);
                }
                e.push(Request {
                    slot: slot as u32,
                    file: 0,
                    op: Op::Write,
                    offset: off,
                    len: LEN as u32,
                });
            }
            assert_eq!(e.in_flight(), chunk.len() as u32);
            out.clear();
            e.submit(chunk.len() as u32, &mut out)
                .expect("submit writes");
            drain(e.as_mut(), &mut out);
            assert_eq!(out.len(), chunk.len());
            for c in &out {
                assert_eq!(c.result, LEN as i32, "write of slot {} failed", c.slot);
            }
        }
        for chunk in offsets.chunks(depth as usize) {
            for (slot, &off) in chunk.iter().enumerate() {
                e.buf(slot as u32).fill(0);
                e.push(Request {
                    slot: slot as u32,
                    file: 0,
                    op: Op::Read,
                    offset: off,
                    len: LEN as u32,
                });
            }
            out.clear();
            e.submit(1, &mut out).expect("submit reads");
            drain(e.as_mut(), &mut out);
            let mut seen = vec![false; chunk.len()];
            for c in &out {
                assert_eq!(c.result, LEN as i32, "read of slot {} failed", c.slot);
                let slot = c.slot as usize;
                assert!(!seen[slot], "two completions for slot {slot}");
                seen[slot] = true;
                let off = chunk[slot];
                let b = e.buf(c.slot);
                assert!(
                    b.iter().enumerate().all(|(i, &x)| x == pattern(off, i)),
                    "slot {slot}: data read at {off} differs from what was written"
                );
            }
            assert!(seen.iter().all(|&s| s));
        }
        assert_eq!(e.in_flight(), 0);
    }

    /// Fsync and fdatasync complete with 0.
    pub fn syncs(open: impl Fn(EngineConfig) -> Box<dyn Engine>) {
        let tmp = TempPath::new("sync");
        let mut e = open(config(2, 512, vec![tmp.create_rw()]));
        e.buf(0).fill(7);
        e.push(Request {
            slot: 0,
            file: 0,
            op: Op::Write,
            offset: 0,
            len: 512,
        });
        let mut out = Vec::new();
        e.submit(1, &mut out).expect("write");
        drain(e.as_mut(), &mut out);
        out.clear();
        for (slot, op) in [(0, Op::Fsync), (1, Op::Fdatasync)] {
            e.push(Request {
                slot,
                file: 0,
                op,
                offset: 0,
                len: 0,
            });
        }
        e.submit(2, &mut out).expect("syncs");
        drain(e.as_mut(), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|c| c.result == 0), "{out:?}");
    }

    /// A read that starts at EOF returns 0; one that straddles it returns the bytes there.
    pub fn past_eof(open: impl Fn(EngineConfig) -> Box<dyn Engine>) {
        let tmp = TempPath::new("eof");
        let file = tmp.create_rw();
        std::os::unix::fs::FileExt::write_all_at(&file, &[1u8; 1000], 0).expect("write");
        let mut e = open(config(2, 4096, vec![file]));
        for (slot, offset) in [(0, 8192), (1, 0)] {
            e.push(Request {
                slot,
                file: 0,
                op: Op::Read,
                offset,
                len: 4096,
            });
        }
        let mut out = Vec::new();
        e.submit(2, &mut out).expect("submit");
        drain(e.as_mut(), &mut out);
        out.sort_by_key(|c| c.slot);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].result, 0, "read at EOF");
        assert_eq!(out[1].result, 1000, "short read across EOF");
        assert!(e.buf(1)[..1000].iter().all(|&x| x == 1));
    }

    /// Failed I/O and bad request contents come back as negative completions.
    pub fn errors(open: impl Fn(EngineConfig) -> Box<dyn Engine>) {
        let tmp = TempPath::new("err");
        drop(tmp.create_rw());
        let wo = OpenOptions::new()
            .write(true)
            .open(&tmp.0)
            .expect("open write-only");
        let mut e = open(config(4, 4096, vec![wo]));
        let reqs = [
            (0, 0, 4096, libc::EBADF),  // read on a write-only file
            (1, 5, 4096, libc::EBADF),  // no file 5
            (2, 0, 8192, libc::EINVAL), // longer than the buffer
        ];
        for &(slot, file, len, _) in &reqs {
            e.push(Request {
                slot,
                file,
                op: Op::Read,
                offset: 0,
                len,
            });
        }
        assert_eq!(e.in_flight(), 3);
        let mut out = Vec::new();
        e.submit(3, &mut out).expect("submit");
        drain(e.as_mut(), &mut out);
        out.sort_by_key(|c| c.slot);
        assert_eq!(out.len(), 3);
        for (c, &(slot, _, _, errno)) in out.iter().zip(&reqs) {
            assert_eq!(c.slot, slot);
            assert_eq!(c.result, -errno, "slot {slot}");
            assert_eq!(c.error().and_then(|e| e.raw_os_error()), Some(errno));
        }
        assert_eq!(e.in_flight(), 0);
    }

    /// Pushing a slot twice or out of range is a caller bug: a debug_assert in debug
    /// builds, an InvalidInput error from `submit` in release builds; never a silent drop
    /// and never a second I/O into a busy buffer.
    pub fn contract(open: impl Fn(EngineConfig) -> Box<dyn Engine>) {
        let tmp = TempPath::new("contract");
        let mut e = open(config(1, 512, vec![tmp.create_rw()]));
        let req = Request {
            slot: 0,
            file: 0,
            op: Op::Write,
            offset: 0,
            len: 512,
        };
        e.push(req);
        let bad = Request { slot: 1, ..req };
        let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            e.push(req);
            e.push(bad);
        }));
        if cfg!(debug_assertions) {
            assert!(pushed.is_err(), "debug build must assert");
            // The engine is still usable: the valid request goes through.
            let mut out = Vec::new();
            drain(e.as_mut(), &mut out);
            assert_eq!(out.len(), 1);
        } else {
            assert!(pushed.is_ok());
            let mut out = Vec::new();
            let err = e.submit(1, &mut out).expect_err("breach reported");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert_eq!(e.in_flight(), 1);
            drain(e.as_mut(), &mut out);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].result, 512);
        }
    }

    /// O_DIRECT 4 KiB write and read on /var/tmp (a real disk filesystem); skipped where
    /// the filesystem refuses O_DIRECT.
    pub fn direct(open: impl Fn(EngineConfig) -> Box<dyn Engine>, name: &str) {
        let dir = Path::new("/var/tmp");
        if !dir.is_dir() {
            eprintln!("{name}: skipped, /var/tmp does not exist");
            return;
        }
        let tmp = TempPath::new_in(dir, "direct");
        let file = match sys::open_options(true)
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp.0)
        {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("{name}: skipped, O_DIRECT not supported on /var/tmp ({e})");
                return;
            }
            Err(e) => panic!("open O_DIRECT: {e}"),
        };
        let mut e = open(config(2, 4096, vec![file]));
        for (i, x) in e.buf(0).iter_mut().enumerate() {
            *x = pattern(4096, i);
        }
        e.push(Request {
            slot: 0,
            file: 0,
            op: Op::Write,
            offset: 4096,
            len: 4096,
        });
        let mut out = Vec::new();
        e.submit(1, &mut out).expect("write");
        drain(e.as_mut(), &mut out);
        if out[0].result == -libc::EINVAL {
            eprintln!("{name}: skipped, O_DIRECT write refused with EINVAL");
            return;
        }
        assert_eq!(out[0].result, 4096, "O_DIRECT write");
        out.clear();
        e.push(Request {
            slot: 1,
            file: 0,
            op: Op::Read,
            offset: 4096,
            len: 4096,
        });
        e.submit(1, &mut out).expect("read");
        drain(e.as_mut(), &mut out);
        assert_eq!(out[0].result, 4096, "O_DIRECT read");
        assert!(
            e.buf(1)
                .iter()
                .enumerate()
                .all(|(i, &x)| x == pattern(4096, i))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_kind_names_round_trip() {
        for k in [EngineKind::IoUring, EngineKind::Libaio, EngineKind::Sync] {
            assert_eq!(k.name().parse::<EngineKind>(), Ok(k));
            assert_eq!(k.to_string(), k.name());
            assert_eq!(
                serde_json::to_string(&k).expect("json"),
                format!("\"{}\"", k.name())
            );
        }
        assert_eq!("uring".parse(), Ok(EngineKind::IoUring));
        assert_eq!("psync".parse(), Ok(EngineKind::Sync));
        assert!("aio".parse::<EngineKind>().is_err());
    }

    #[test]
    fn completion_error() {
        let ok = Completion {
            slot: 0,
            result: 10,
        };
        assert!(ok.error().is_none());
        let bad = Completion {
            slot: 0,
            result: -libc::EIO,
        };
        assert_eq!(bad.error().and_then(|e| e.raw_os_error()), Some(libc::EIO));
        let odd = Completion {
            slot: 0,
            result: i32::MIN,
        };
        assert!(odd.error().is_some());
    }

    /// Every kind: its way of reaching files (open, or by name).
    const ALL_KINDS: [EngineKind; 8] = [
        EngineKind::IoUring,
        EngineKind::Libaio,
        EngineKind::Sync,
        EngineKind::Null,
        EngineKind::Falloc,
        EngineKind::Ftruncate,
        EngineKind::FileStat,
        EngineKind::FileDelete,
    ];

    /// `n` files for `kind`, given the way it reaches them.
    fn files_for(kind: EngineKind, n: usize) -> (Vec<std::fs::File>, Vec<std::path::PathBuf>) {
        let file = || std::fs::File::open("/dev/null").expect("/dev/null");
        match kind.reach() {
            Reach::Open | Reach::OpenReadWrite => ((0..n).map(|_| file()).collect(), Vec::new()),
            Reach::Path | Reach::Nothing => {
                (Vec::new(), (0..n).map(|_| "/dev/null".into()).collect())
            }
        }
    }

    #[test]
    fn bad_configs_are_rejected() {
        // (depth, buffer length, alignment, files): each one thing wrong.
        let shapes: [(u32, usize, usize, usize); 6] = [
            (0, 4096, 4096, 1),
            (MAX_DEPTH + 1, 4096, 4096, 1),
            (1, 0, 4096, 1),
            (1, 4096, 256, 1),
            (1, 4096, 6000, 1),
            (1, 4096, 4096, 0),
        ];
        for (depth, buf_len, align, n) in shapes {
            for kind in ALL_KINDS {
                let (files, paths) = files_for(kind, n);
                let c = EngineConfig {
                    depth,
                    buf_len,
                    align,
                    files,
                    paths,
                };
                assert!(
                    matches!(open(kind, c), Err(EngineError::Config(_))),
                    "{kind} accepted depth {depth}, buffers {buf_len} aligned {align}, {n} file(s)"
                );
            }
        }
    }

    #[test]
    fn files_are_given_the_way_the_engine_reaches_them() {
        for kind in ALL_KINDS {
            // The other way round: open files for a named engine, names for an open one.
            let (files, paths) = files_for(kind, 1);
            let c = EngineConfig {
                files: paths
                    .iter()
                    .map(|_| std::fs::File::open("/dev/null").expect("null"))
                    .collect(),
                paths: files.iter().map(|_| "/dev/null".into()).collect(),
                ..EngineConfig::default()
            };
            match open(kind, c) {
                Err(EngineError::Config(m)) => assert!(m.contains(kind.name()), "{m}"),
                other => panic!(
                    "{kind} opened over the wrong files: {:?}",
                    other.map(|e| e.kind())
                ),
            }
        }
    }

    #[test]
    fn kinds_are_named_as_fio_names_them_and_say_how_they_reach_files() {
        let names: Vec<&str> = ALL_KINDS.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "io_uring",
                "libaio",
                "sync",
                "null",
                "falloc",
                "ftruncate",
                "filestat",
                "filedelete"
            ]
        );
        assert_eq!(EngineKind::Null.reach(), Reach::Nothing);
        assert_eq!(EngineKind::Falloc.reach(), Reach::OpenReadWrite);
        assert_eq!(EngineKind::FileDelete.reach(), Reach::Path);
        assert!(EngineKind::Ftruncate.one_at_a_time() && EngineKind::Sync.one_at_a_time());
        assert!(!EngineKind::Null.one_at_a_time() && !EngineKind::IoUring.one_at_a_time());
        // Only the command line's engines parse: the others come from job files.
        assert!("null".parse::<EngineKind>().is_err());
    }

    #[test]
    fn probe_uring_works_here() {
        assert_eq!(probe_uring(), Ok(()));
    }

    #[test]
    fn open_gives_the_kind_asked_for() {
        let tmp = testutil::TempPath::new("open");
        for kind in ALL_KINDS {
            let config = EngineConfig {
                paths: vec![tmp.0.clone()],
                ..testutil::config(4, 4096, vec![tmp.create_rw()])
            };
            let e = open(kind, config).expect("open");
            assert_eq!(e.kind(), kind);
            assert_eq!(e.depth(), 4);
            assert_eq!(e.in_flight(), 0);
        }
    }
}
