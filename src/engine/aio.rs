//! [`AioEngine`]: Linux's native asynchronous I/O (fio's `libaio` engine), through the
//! kernel's own calls (`io_setup`, `io_submit`, `io_getevents`, `io_destroy`), without
//! libaio's C library, which only wraps them.
//!
//! ```text
//!  push ──► pending: Vec<Request>              no syscall; bad contents ──► local: Vec<Completion>
//!  submit ─► pending ──iocb──► io_submit(ctx, n, iocbs)      one syscall for what is pending
//!            ring peek: head != tail ?  ──► io_getevents(ctx, min, depth, events, timeout)
//!            events ──► out                                  data = slot
//! ```
//!
//! Native AIO queues only O_DIRECT reads and writes; buffered ones run to completion inside
//! `io_submit` (the caller sends those to the sync engine, as fio's own libaio job behaves
//! then). Fsync and fdatasync are `IOCB_CMD_FSYNC`/`IOCB_CMD_FDSYNC` (Linux 4.18).
//!
//! # Reaping
//!
//! fio's libaio reaps only when its queue is full; perflab's session asks the engine after
//! every submission whether anything has completed. A syscall per question would double the
//! calls per I/O, so the engine first looks at the completion ring the kernel maps into the
//! process at the context's address (the `aio_ring` header: `head`, `tail`, `magic`), as
//! fio's `userspace_reap` does, and calls `io_getevents` only when the ring holds events or
//! the caller wants to wait. The events themselves are always taken by `io_getevents`, so
//! the kernel alone moves `head`.
//!
//! # Memory safety
//!
//! The kernel copies each iocb during `io_submit`, so iocbs live only for the call; the slot
//! buffers they point at are one [`AlignedBuf`] that never moves, a slot handed to the kernel
//! stays in flight until its event is reaped (`buf()` refuses it meanwhile), and drop waits
//! for every request the kernel holds before the buffers are freed, or leaks them if it
//! cannot confirm that.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};

use super::buffer::AlignedBuf;
use super::{Completion, Engine, EngineConfig, EngineError, EngineKind, Op, Request, SlotTable};

/// `linux/aio_abi.h`: the operations of an iocb.
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
/// The completion ring's magic number, checked before its header is trusted.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
/// How often a submit retries EAGAIN (kernel short of resources) before giving up.
const MAX_BUSY_RETRIES: u32 = 10_000;

/// `struct iocb` of `linux/aio_abi.h` (little- and big-endian field orders differ only in
/// `aio_key`/`aio_rw_flags`, both zero here).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` of `linux/aio_abi.h`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The header of the completion ring the kernel maps at the context's address
/// (`struct aio_ring` of fs/aio.c; stable since Linux 2.6).
#[repr(C)]
struct RingHeader {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
}

/// The native AIO engine.
pub struct AioEngine {
    ctx: libc::c_ulong,
    // Dropped after `Drop::drop` has waited for every request the kernel holds.
    bufs: AlignedBuf,
    files: Vec<File>,
    slots: SlotTable,
    pending: Vec<Request>,
    /// Requests that failed on push or on submission, delivered by `submit`.
    local: Vec<Completion>,
    /// Scratch for one `io_submit`: the iocbs and the pointers to them. Capacity `depth`.
    iocbs: Vec<Iocb>,
    iocb_ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Requests the kernel accepted whose event has not been reaped.
    in_kernel: u32,
    depth: u32,
    /// Whether the mapped ring's header can be read to skip empty `io_getevents` calls.
    peek: bool,
}

// SAFETY: the raw pointers in `iocb_ptrs` are scratch, rebuilt before every io_submit from
// `iocbs`, which the engine owns; nothing refers to thread-local state, and the AIO context
// may be used from any thread of the process.
unsafe impl Send for AioEngine {}

impl std::fmt::Debug for AioEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AioEngine")
            .field("depth", &self.depth)
            .field("peek", &self.peek)
            .field("in_flight", &self.slots.in_flight())
            .finish_non_exhaustive()
    }
}

/// `io_setup(2)`.
fn io_setup(nr: u32) -> io::Result<libc::c_ulong> {
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: io_setup writes one aio_context_t (an unsigned long) through the pointer,
    // which points at a live local initialised to 0, as the call requires.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, libc::c_long::from(nr), &raw mut ctx) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ctx)
}

/// A one-line explanation of a failed io_setup.
fn explain_setup(e: &io::Error, depth: u32) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "io_setup returned ENOSYS: this kernel has no native AIO \
             (built without CONFIG_AIO); use ioengine=io_uring or psync"
            .into(),
        Some(libc::EAGAIN) => format!(
            "io_setup of {depth} events returned EAGAIN: the system-wide limit of AIO events \
             is reached (fs.aio-max-nr); raise it (sysctl -w fs.aio-max-nr=1048576) or use \
             a smaller iodepth"
        ),
        Some(libc::EPERM) => "io_setup was denied (EPERM), most likely by a seccomp filter; \
             allow io_setup, io_submit, io_getevents and io_destroy, or use ioengine=io_uring"
            .into(),
        _ => format!("io_setup failed: {e}"),
    }
}

impl AioEngine {
    /// Sets up an AIO context of `depth` events over the configured files.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let depth = config.depth;
        let bufs = AlignedBuf::new(depth as usize, config.buf_len, config.align)?;
        let ctx = io_setup(depth).map_err(|e| EngineError::Config(explain_setup(&e, depth)))?;
        let mut engine = AioEngine {
            ctx,
            bufs,
            files: config.files,
            slots: SlotTable::new(depth),
            pending: Vec::with_capacity(depth as usize),
            local: Vec::with_capacity(depth as usize),
            iocbs: Vec::with_capacity(depth as usize),
            iocb_ptrs: Vec::with_capacity(depth as usize),
            events: vec![IoEvent::default(); depth as usize],
            in_kernel: 0,
            depth,
            peek: false,
        };
        engine.peek = engine.ring().is_some();
        Ok(engine)
    }

    /// The mapped completion ring's header, if the context is one (the magic matches).
    fn ring(&self) -> Option<&RingHeader> {
        if self.ctx == 0 {
            return None;
        }
        // SAFETY: since Linux 2.6 the context id io_setup returns is the user-space address
        // of the completion ring the kernel mapped read-write into this process, which stays
        // mapped until io_destroy (called only in Drop). Its header is `struct aio_ring`,
        // whose first five u32 fields `RingHeader` mirrors; the head and tail are read
        // atomically because the kernel writes them concurrently. The magic is checked before
        // anything else is trusted.
        let header = unsafe { &*(self.ctx as *const RingHeader) };
        (header.magic == AIO_RING_MAGIC && header.nr > 0).then_some(header)
    }

    /// Whether the ring may hold events (always true when it cannot be read).
    fn may_have_events(&self) -> bool {
        match self.ring() {
            Some(r) if self.peek => {
                r.head.load(Ordering::Acquire) != r.tail.load(Ordering::Acquire)
            }
            _ => true,
        }
    }

    /// Builds the iocb of `req` (its slot and file index checked by `SlotTable::admit`).
    fn iocb(&self, req: &Request) -> Iocb {
        let (opcode, buf, len) = match req.op {
            Op::Read => (IOCB_CMD_PREAD, self.bufs.ptr(req.slot as usize), req.len),
            Op::Write => (IOCB_CMD_PWRITE, self.bufs.ptr(req.slot as usize), req.len),
            Op::Fsync => (IOCB_CMD_FSYNC, std::ptr::null_mut(), 0),
            Op::Fdatasync => (IOCB_CMD_FDSYNC, std::ptr::null_mut(), 0),
            // Never issued: the slot table fails trims on this engine before they get here.
            Op::Trim => (IOCB_CMD_FSYNC, std::ptr::null_mut(), 0),
        };
        let fd = self
            .files
            .get(req.file as usize)
            .map_or(-1, AsRawFd::as_raw_fd);
        Iocb {
            aio_data: u64::from(req.slot),
            aio_lio_opcode: opcode,
            // A negative fd cannot happen after admit; the kernel would answer EBADF.
            aio_fildes: u32::try_from(fd).unwrap_or(u32::MAX),
            aio_buf: buf as u64,
            aio_nbytes: u64::from(len),
            // admit refused offsets past i64::MAX.
            aio_offset: i64::try_from(req.offset).unwrap_or(i64::MAX),
            ..Iocb::default()
        }
    }

    /// Hands `pending[next..]` to the kernel in one io_submit; returns the index of the first
    /// request not taken (the kernel may take fewer than offered).
    fn io_submit(&mut self, next: usize) -> io::Result<usize> {
        self.iocbs.clear();
        for req in &self.pending[next..] {
            let cb = self.iocb(req);
            self.iocbs.push(cb);
        }
        self.iocb_ptrs.clear();
        let base = self.iocbs.as_mut_ptr();
        for i in 0..self.iocbs.len() {
            // Pointers into `iocbs`, which is not touched again until io_submit returns.
            self.iocb_ptrs.push(base.wrapping_add(i));
        }
        let n = libc::c_long::try_from(self.iocb_ptrs.len()).unwrap_or(libc::c_long::MAX);
        // SAFETY: io_submit reads `n` pointers, each to an initialised iocb in `self.iocbs`,
        // alive for the call (the kernel copies them). Each iocb names (a) `len <= buf_len`
        // bytes of its slot's buffer in `self.bufs`, which stays valid and untouched by Rust
        // until the event is reaped (the slot is in flight; Drop waits for the kernel), and
        // (b) an fd of `self.files`, open as long as the engine.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.ctx,
                n,
                self.iocb_ptrs.as_mut_ptr(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let taken = usize::try_from(r).unwrap_or(0);
        self.in_kernel += u32::try_from(taken).unwrap_or(u32::MAX);
        Ok(next + taken)
    }

    /// One io_getevents: waits for `min` events (none: returns at once), for at most
    /// `timeout` if given, and moves every event it gets into `out`; returns how many.
    fn get_events(
        &mut self,
        min: u32,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<usize> {
        if self.in_kernel == 0 {
            return Ok(0);
        }
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let ts = timeout.map_or(zero, |t| libc::timespec {
            tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: libc::c_long::from(t.subsec_nanos()),
        });
        // No timeout when waiting without a limit; a zero one when not waiting at all.
        let tsp: *const libc::timespec = match (min, timeout) {
            (0, _) | (_, Some(_)) => &raw const ts,
            _ => std::ptr::null(),
        };
        let max = self.in_kernel.min(self.depth);
        // SAFETY: io_getevents writes at most `max` io_events into `self.events`, which holds
        // `depth >= max` of them; `tsp` is null or points at a live local timespec.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                libc::c_long::from(min.min(max)),
                libc::c_long::from(max),
                self.events.as_mut_ptr(),
                tsp,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = usize::try_from(r).unwrap_or(0);
        self.in_kernel = self
            .in_kernel
            .saturating_sub(u32::try_from(got).unwrap_or(u32::MAX));
        for ev in &self.events[..got] {
            let Ok(slot) = u32::try_from(ev.data) else {
                continue; // Not ours: every iocb carries a slot.
            };
            if self.slots.complete(slot) {
                // res is the byte count or a negative errno, both within i32 for one slot.
                let result = i32::try_from(ev.res).unwrap_or(-libc::EIO);
                out.push(Completion { slot, result });
            }
        }
        Ok(got)
    }

    /// Submits everything pending; a request the kernel refuses outright fails on its own.
    fn submit_pending(&mut self, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut next = 0;
        let mut busy = 0;
        while next < self.pending.len() {
            match self.io_submit(next) {
                Ok(n) if n > next => {
                    next = n;
                    busy = 0;
                }
                // Nothing taken and no error, or EAGAIN: the kernel is short of request
                // memory; reap to make room, then try again.
                Ok(_) => busy += 1,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => busy += 1,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    // io_submit fails the first iocb it could not take: that request
                    // completes with the error and the rest are offered again.
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    let slot = self.pending[next].slot;
                    self.slots.complete(slot);
                    out.push(Completion {
                        slot,
                        result: -errno,
                    });
                    next += 1;
                    continue;
                }
            }
            if busy > 0 {
                if busy > MAX_BUSY_RETRIES {
                    self.pending.drain(..next);
                    return Err(io::Error::from_raw_os_error(libc::EAGAIN));
                }
                if self.get_events(0, None, out)? == 0 {
                    std::thread::yield_now();
                }
            }
        }
        self.pending.clear();
        Ok(())
    }
}

impl Engine for AioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Libaio
    }

    fn depth(&self) -> u32 {
        self.depth
    }

    fn in_flight(&self) -> u32 {
        self.slots.in_flight()
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buf(&mut self.bufs, slot)
    }

    fn push(&mut self, req: Request) {
        let shape = (self.files.len(), self.bufs.slot_len());
        self.slots
            .queue(req, shape, &mut self.pending, &mut self.local);
    }

    fn submit(&mut self, min_complete: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(breach) = self.slots.take_breach() {
            return Err(breach);
        }
        let start = out.len();
        self.slots.deliver(&mut self.local, out);
        self.submit_pending(out)?;
        let mut polled = false;
        loop {
            let reaped = u32::try_from(out.len() - start).unwrap_or(u32::MAX);
            let want = min_complete.saturating_sub(reaped).min(self.in_kernel);
            if want == 0 && (polled || !self.may_have_events()) {
                return Ok(());
            }
            polled = true;
            match self.get_events(want, None, out) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn submit_within(
        &mut self,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let before = out.len();
        self.submit(0, out)?;
        if out.len() > before || self.in_kernel == 0 || timeout.is_zero() {
            return Ok(());
        }
        match self.get_events(1, Some(timeout), out) {
            Ok(_) => Ok(()),
            // A signal: the caller's schedule comes first.
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        // The kernel may still read or write slot buffers for requests it holds: wait for
        // all of them before the buffers are freed.
        let mut scratch = Vec::with_capacity(self.depth as usize);
        let mut retries = 0;
        while self.in_kernel > 0 {
            match self.get_events(self.in_kernel, None, &mut scratch) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) && retries < MAX_BUSY_RETRIES => {
                    retries += 1;
                }
                Err(_) => {
                    // Cannot confirm the kernel is done: never free memory it may write.
                    self.bufs.leak_on_drop();
                    return;
                }
            }
            scratch.clear();
        }
        // SAFETY: the context is this engine's own, and nothing is in flight any more.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{self, TempPath};
    use super::*;

    fn open(config: EngineConfig) -> Box<dyn Engine> {
        Box::new(AioEngine::new(config).expect("native AIO engine"))
    }

    #[test]
    fn the_completion_ring_is_readable_here() {
        let tmp = TempPath::new("aio-ring");
        let e = AioEngine::new(testutil::config(4, 4096, vec![tmp.create_rw()])).expect("engine");
        assert!(e.peek, "the mapped ring's header was not recognised");
        assert_eq!(e.kind(), EngineKind::Libaio);
    }

    #[test]
    fn writes_read_back_at_depth_1_and_8() {
        testutil::round_trip(open, 1);
        testutil::round_trip(open, 8);
    }

    #[test]
    fn fsync_and_fdatasync_complete() {
        testutil::syncs(open);
    }

    #[test]
    fn reads_past_the_end_are_short() {
        testutil::past_eof(open);
    }

    #[test]
    fn bad_requests_fail_alone() {
        testutil::errors(open);
    }

    #[test]
    fn the_slot_contract_is_kept() {
        testutil::contract(open);
    }

    #[test]
    fn direct_io_queues() {
        testutil::direct(open, "aio o_direct");
    }

    #[test]
    fn a_timed_wait_gives_up_in_time() {
        let path = TempPath::new("aio-within");
        let file = path.create_rw();
        file.set_len(8192).unwrap();
        let mut e = open(testutil::config(2, 4096, vec![file]));
        let mut out = Vec::new();
        let t = std::time::Instant::now();
        e.submit_within(std::time::Duration::from_secs(5), &mut out)
            .unwrap();
        assert!(out.is_empty() && t.elapsed() < std::time::Duration::from_secs(3));
        e.push(Request {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset: 0,
            len: 4096,
        });
        for _ in 0..1000 {
            if !out.is_empty() {
                break;
            }
            e.submit_within(std::time::Duration::from_millis(50), &mut out)
                .unwrap();
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].result, 4096);
    }
}
