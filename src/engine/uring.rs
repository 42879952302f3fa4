//! [`UringEngine`]: asynchronous I/O through io_uring (fio's `io_uring` engine), and
//! [`probe`], which says whether io_uring works here.
//!
//! ```text
//!  push ──► pending: Vec<Request>              no syscall; bad contents ──► local: Vec<Completion>
//!  submit ─► pending ──SQE──► SQ ring ─┐
//!            io_uring_enter(to_submit, want, GETEVENTS)     one syscall per submit, normally
//!            CQ ring ──CQE──► out ◄────┘       user_data = slot
//!
//!  ring    SQ = depth entries (rounded up to a power of two); CQ = 2 × SQ, and at most
//!          depth requests are ever in flight, so the CQ cannot overflow.
//!          flags, first the kernel accepts:
//!            SINGLE_ISSUER | DEFER_TASKRUN | COOP_TASKRUN | SUBMIT_ALL   (Linux 6.1+)
//!            COOP_TASKRUN | SUBMIT_ALL                                   (5.19+)
//!            none
//!  files   registered (types::Fixed) or, if the kernel refuses, plain fds (types::Fd)
//!  buffers registered, one per slot (ReadFixed/WriteFixed) or, if refused (RLIMIT_MEMLOCK,
//!          more than 16384 slots, a slot over 1 GiB), plain Read/Write
//! ```
//!
//! The fallbacks are silent, because the engine works either way, but [`UringEngine::registered`]
//! and [`UringEngine::ring_mode`] tell which one is in use so a report can disclose it.
//!
//! # Feeding the queue
//!
//! Measured on this project's 2-core VM (virtio disk, 4 KiB random O_DIRECT reads, depth
//! 32): pushing each refill and calling `submit(0)` at once, as fio does (one
//! io_uring_enter per I/O), kept the device fuller than pushing every refill and issuing
//! them all with the next `submit(1)`: about 10% more IOPS for the same CPU per I/O. The
//! engine does what it is told; the pattern is the caller's choice.
//!
//! # Threads
//!
//! The worker thread that opens the engine is the only one that uses it. With
//! DEFER_TASKRUN the kernel posts completions only when that thread enters the ring with
//! GETEVENTS (every `submit` does), and with SINGLE_ISSUER any other thread gets EEXIST.
//! The engine is `Send` so it can be boxed as `dyn Engine`; moving it to another thread
//! makes its calls fail, never unsound.
//!
//! # Memory safety
//!
//! The kernel writes into slot buffers behind Rust's back. That is sound because:
//! the buffers are one [`AlignedBuf`] that never moves; a slot handed to the kernel is in
//! flight until its completion is reaped, and `buf()` refuses slots in flight; and drop
//! waits for every request the kernel holds before the memory is freed (or, if waiting
//! fails, leaks the memory rather than free it under the kernel).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::OnceLock;

use io_uring::{EnterFlags, IoUring, Probe, opcode, squeue, types};

use super::buffer::AlignedBuf;
use super::{Completion, Engine, EngineConfig, EngineError, EngineKind, Op, Request, SlotTable};

/// io_uring's limit on registered buffers (IORING_MAX_REG_BUFFERS).
const MAX_REG_BUFFERS: u32 = 1 << 14;
/// How often a submit retries EBUSY/EAGAIN (kernel short of resources) before giving up.
const MAX_BUSY_RETRIES: u32 = 10_000;

/// Which ring flags the kernel accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingMode {
    /// SINGLE_ISSUER | DEFER_TASKRUN | COOP_TASKRUN | SUBMIT_ALL: completions are run in
    /// the submitting thread at `submit`, no interrupts of user code.
    Deferred,
    /// COOP_TASKRUN | SUBMIT_ALL: completions run at the next syscall, no IPIs.
    Cooperative,
    /// No flags: the kernel interrupts the thread to post completions.
    Plain,
}

/// What to try when setting up; tests force the fallbacks through it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup {
    /// Try the flagged rings before the plain one.
    pub(crate) flags: bool,
    /// Try to register files and buffers.
    pub(crate) register: bool,
}

/// The io_uring engine.
pub struct UringEngine {
    // Field order matters: fields drop in this order, so the ring is gone before the
    // buffers it may have written into are freed (and `Drop` has already waited for
    // every request it held).
    ring: IoUring,
    bufs: AlignedBuf,
    files: Vec<File>,
    /// The fds of `files`, for unregistered operations.
    raw_fds: Vec<RawFd>,
    slots: SlotTable,
    /// Pushed requests, not yet in the SQ. Capacity `depth`: never reallocates.
    pending: Vec<Request>,
    /// Requests that failed on push (bad file index, length, offset), delivered by `submit`.
    local: Vec<Completion>,
    /// Requests placed in the SQ whose completion has not been reaped.
    in_kernel: u32,
    depth: u32,
    mode: RingMode,
    fixed_files: bool,
    fixed_bufs: bool,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("depth", &self.depth)
            .field("mode", &self.mode)
            .field("fixed_files", &self.fixed_files)
            .field("fixed_bufs", &self.fixed_bufs)
            .field("in_flight", &self.slots.in_flight())
            .finish_non_exhaustive()
    }
}

/// Creates the ring with the best flags the kernel accepts.
fn build_ring(depth: u32, flags: bool) -> io::Result<(IoUring, RingMode)> {
    if flags {
        for mode in [RingMode::Deferred, RingMode::Cooperative] {
            let mut builder = IoUring::builder();
            match mode {
                RingMode::Deferred => builder
                    .setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_coop_taskrun()
                    .setup_submit_all(),
                RingMode::Cooperative => builder.setup_coop_taskrun().setup_submit_all(),
                RingMode::Plain => &mut builder,
            };
            match builder.build(depth) {
                Ok(ring) => return Ok((ring, mode)),
                // EINVAL: this kernel does not know a flag; try fewer.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok((IoUring::builder().build(depth)?, RingMode::Plain))
}

/// Builds the SQE for `req` (whose slot and file index `SlotTable::admit` has checked).
#[inline]
fn entry(
    req: &Request,
    bufs: &AlignedBuf,
    raw_fds: &[RawFd],
    fixed_files: bool,
    fixed_bufs: bool,
) -> squeue::Entry {
    let buf = bufs.ptr(req.slot as usize);
    // Buffer index = slot; fixed buffers are only used with at most MAX_REG_BUFFERS slots.
    let index = req.slot as u16;
    macro_rules! with_fd {
        (|$fd:ident| $build:expr) => {
            if fixed_files {
                let $fd = types::Fixed(req.file);
                $build
            } else {
                // -1 (EBADF from the kernel) cannot happen after admit; it avoids a panic path.
                let $fd = types::Fd(raw_fds.get(req.file as usize).copied().unwrap_or(-1));
                $build
            }
        };
    }
    let sqe = with_fd!(|fd| match req.op {
        Op::Read if fixed_bufs => opcode::ReadFixed::new(fd, buf, req.len, index)
            .offset(req.offset)
            .build(),
        Op::Read => opcode::Read::new(fd, buf, req.len)
            .offset(req.offset)
            .build(),
        Op::Write if fixed_bufs => opcode::WriteFixed::new(fd, buf.cast_const(), req.len, index)
            .offset(req.offset)
            .build(),
        Op::Write => opcode::Write::new(fd, buf.cast_const(), req.len)
            .offset(req.offset)
            .build(),
        Op::Fsync => opcode::Fsync::new(fd).build(),
        Op::Fdatasync => opcode::Fsync::new(fd)
            .flags(types::FsyncFlags::DATASYNC)
            .build(),
        // Never issued: the slot table fails trims on this engine before they get here.
        Op::Trim => opcode::Nop::new().build(),
    });
    sqe.user_data(u64::from(req.slot))
}

impl UringEngine {
    /// Sets up the ring, registers files and buffers where the kernel allows. Call
    /// [`probe`] first for a helpful message when io_uring is missing altogether.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        Self::with_setup(
            config,
            Setup {
                flags: true,
                register: true,
            },
        )
    }

    pub(crate) fn with_setup(config: EngineConfig, setup: Setup) -> Result<Self, EngineError> {
        config.validate()?;
        let depth = config.depth;
        let bufs = AlignedBuf::new(depth as usize, config.buf_len, config.align)?;
        let (ring, mode) = build_ring(depth, setup.flags).map_err(EngineError::Setup)?;
        let raw_fds: Vec<RawFd> = config.files.iter().map(AsRawFd::as_raw_fd).collect();

        let fixed_files = setup.register && ring.submitter().register_files(&raw_fds).is_ok();
        let fixed_bufs = setup.register && depth <= MAX_REG_BUFFERS && {
            let iovecs: Vec<libc::iovec> = (0..depth as usize)
                .map(|i| libc::iovec {
                    iov_base: bufs.ptr(i).cast(),
                    iov_len: bufs.slot_len(),
                })
                .collect();
            // SAFETY: every iovec covers one slot of `bufs` (slot_len bytes from its start,
            // inside the allocation). `bufs` is moved into the engine that owns `ring` (a move
            // does not move its heap block), and its memory is freed only after the ring is
            // dropped (field order) or never (leak on a failed drain), so the registration
            // never outlives the memory.
            unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok()
        };

        Ok(UringEngine {
            ring,
            bufs,
            files: config.files,
            raw_fds,
            slots: SlotTable::new(depth),
            pending: Vec::with_capacity(depth as usize),
            local: Vec::with_capacity(depth as usize),
            in_kernel: 0,
            depth,
            mode,
            fixed_files,
            fixed_bufs,
        })
    }

    /// Whether (files, buffers) are registered with the ring; `false` means the engine
    /// fell back to plain fds or plain Read/Write.
    pub fn registered(&self) -> (bool, bool) {
        (self.fixed_files, self.fixed_bufs)
    }

    /// Which ring flags the kernel accepted.
    pub fn ring_mode(&self) -> RingMode {
        self.mode
    }

    /// Moves pending requests into the SQ from index `next` until the SQ is full; returns
    /// the index of the first request left out.
    fn fill_sq(&mut self, mut next: usize) -> usize {
        if next >= self.pending.len() {
            return next;
        }
        let mut sq = self.ring.submission();
        while let Some(req) = self.pending.get(next) {
            let sqe = entry(
                req,
                &self.bufs,
                &self.raw_fds,
                self.fixed_files,
                self.fixed_bufs,
            );
            // SAFETY: the SQE points the kernel at (a) `len <= buf_len` bytes of slot
            // `req.slot` of `self.bufs`, memory that stays valid until the completion is
            // reaped (Drop waits for it; see the field order) and that Rust does not touch
            // meanwhile (the slot is in flight, so `buf()` refuses it); (b) a registered file
            // index or an fd of `self.files`, both alive as long as the ring. Fixed buffer
            // index = slot, registered above for every slot.
            if unsafe { sq.push(&sqe) }.is_err() {
                break; // SQ full: the caller enters the ring and comes back.
            }
            self.in_kernel += 1;
            next += 1;
        }
        next
    }

    /// Moves every completion from the CQ into `out`; returns how many.
    fn reap(&mut self, out: &mut Vec<Completion>) -> usize {
        let before = out.len();
        for cqe in self.ring.completion() {
            // One CQE per SQE (no multishot ops): the kernel holds one request fewer.
            self.in_kernel = self.in_kernel.saturating_sub(1);
            let Ok(slot) = u32::try_from(cqe.user_data()) else {
                continue; // Not ours: every SQE we post carries a slot.
            };
            if self.slots.complete(slot) {
                out.push(Completion {
                    slot,
                    result: cqe.result(),
                });
            }
        }
        out.len() - before
    }

    /// One io_uring_enter: submits what is in the SQ and waits for `want` completions.
    fn enter(&mut self, want: u32) -> io::Result<usize> {
        if want > 0 {
            return self.ring.submit_and_wait(want as usize);
        }
        // Not waiting, but still collect what has completed. With DEFER_TASKRUN the kernel
        // posts completions only during an enter carrying GETEVENTS, and submit_and_wait(0)
        // sets that flag only when the ring raised SQ_TASKRUN, which needs yet another setup
        // flag; so ask for it explicitly (as liburing's io_uring_get_events does). On other
        // rings GETEVENTS with min_complete 0 returns at once.
        let to_submit = self.ring.submission().len() as u32;
        // SAFETY: io_uring_enter(2) on this ring's own fd with no extended argument (None:
        // null pointer, size 0) for the kernel to read; `to_submit` counts SQEs already
        // pushed, each fully built and pointing at memory kept valid as explained in fill_sq.
        unsafe {
            self.ring.submitter().enter::<libc::sigset_t>(
                to_submit,
                0,
                EnterFlags::GETEVENTS.bits(),
                None,
            )
        }
    }
}

impl Engine for UringEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
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
        // Never wait for more than can complete: what is already out plus what is in flight.
        let target = min_complete.min((out.len() - start) as u32 + self.slots.in_flight());
        let mut next = 0;
        let mut entered = false;
        let mut busy = 0;
        loop {
            next = self.fill_sq(next);
            let unpushed = next < self.pending.len();
            let reaped = (out.len() - start) as u32;
            // While requests wait for room in the SQ, only submit: waiting could block on
            // completions of requests not yet issued.
            let want = if unpushed {
                0
            } else {
                target.saturating_sub(reaped)
            };
            let sq_waiting = !self.ring.submission().is_empty();
            // One GETEVENTS pass even when not waiting, to collect what has completed.
            let poll = !entered && self.in_kernel > 0;
            if !(sq_waiting || want > 0 || poll) {
                break;
            }
            entered = true;
            match self.enter(want) {
                Ok(_) => busy = 0,
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    // EBUSY: completions to flush first; EAGAIN: the kernel is short of
                    // request memory. Reap, then try again.
                    Some(libc::EBUSY | libc::EAGAIN) if busy < MAX_BUSY_RETRIES => {
                        busy += 1;
                        if self.reap(out) == 0 {
                            std::thread::yield_now();
                        }
                        continue;
                    }
                    _ => {
                        self.pending.drain(..next);
                        self.reap(out);
                        return Err(e);
                    }
                },
            }
            self.reap(out);
        }
        self.pending.clear();
        Ok(())
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
        if self.wait_within(timeout)? {
            self.reap(out);
            Ok(())
        } else {
            self.submit(0, out)
        }
    }
}

impl UringEngine {
    /// Waits up to `timeout` for one completion of what is in the kernel. False if this kernel
    /// lacks timed waits (IORING_ENTER_EXT_ARG, Linux 5.11).
    fn wait_within(&mut self, timeout: std::time::Duration) -> io::Result<bool> {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(true),
            Err(e) => match e.raw_os_error() {
                // Timed out, or a signal: either way the caller's schedule comes first.
                Some(libc::ETIME | libc::EINTR | libc::EBUSY) => Ok(true),
                Some(libc::EINVAL) => Ok(false),
                _ => Err(e),
            },
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still read or write slot buffers for requests it holds: wait for
        // all of them before the fields (ring, then buffers) are dropped.
        let mut scratch = Vec::with_capacity(self.depth as usize);
        let mut retries = 0;
        while self.in_kernel > 0 {
            match self.ring.submit_and_wait(self.in_kernel as usize) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EBUSY | libc::EAGAIN)
                    ) && retries < MAX_BUSY_RETRIES =>
                {
                    retries += 1;
                }
                Err(_) => {
                    // Cannot confirm the kernel is done (e.g. dropped on another thread of
                    // a SINGLE_ISSUER ring): never free memory it may still write.
                    self.bufs.leak_on_drop();
                    return;
                }
            }
            self.reap(&mut scratch);
            scratch.clear();
        }
    }
}

/// Whether io_uring works here (checked once per process); Err says why not and what to do.
pub fn probe() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| match std::env::var_os(TEST_NO_URING) {
            Some(v) if v == "1" => Err(format!(
                "switched off by {TEST_NO_URING}=1, a switch for perflab's own tests"
            )),
            _ => probe_now(),
        })
        .clone()
}

/// For perflab's own tests only, not a user option: `PERFLAB_TEST_NO_URING=1` makes [`probe`]
/// report io_uring unavailable, as a kernel that refuses it would, so the fallback to the
/// sync engine can be tested on machines where io_uring works.
pub const TEST_NO_URING: &str = "PERFLAB_TEST_NO_URING";

/// A one-line explanation of a failed io_uring_setup.
fn explain_setup_error(e: &io::Error) -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .and_then(|s| s.trim().parse::<u8>().ok());
    explain(e, sysctl)
}

/// [`explain_setup_error`] given the value of kernel.io_uring_disabled.
fn explain(e: &io::Error, sysctl: Option<u8>) -> String {
    match (e.raw_os_error(), sysctl) {
        (Some(libc::ENOSYS), _) => "io_uring_setup returned ENOSYS: this kernel has no io_uring \
             (built without CONFIG_IO_URING, or older than 5.1)"
            .into(),
        (Some(libc::EPERM), Some(2)) => "io_uring is switched off by the sysctl \
             kernel.io_uring_disabled=2; set it to 0 (sysctl -w kernel.io_uring_disabled=0)"
            .into(),
        (Some(libc::EPERM), Some(1)) => "kernel.io_uring_disabled=1 allows io_uring only to \
             members of the group in kernel.io_uring_group (and CAP_SYS_ADMIN); join it, set the \
             sysctl to 0, or run as root"
            .into(),
        (Some(libc::EPERM), _) => "io_uring_setup was denied (EPERM), most likely by a seccomp \
             filter (container runtimes block io_uring by default); allow io_uring_setup, \
             io_uring_enter and io_uring_register"
            .into(),
        (Some(libc::ENOMEM), _) => "io_uring_setup returned ENOMEM: the locked-memory limit is \
             too low (ulimit -l) or memory is short; raise RLIMIT_MEMLOCK"
            .into(),
        _ => format!("io_uring_setup failed: {e}"),
    }
}

fn probe_now() -> Result<(), String> {
    let mut ring = IoUring::new(2).map_err(|e| explain_setup_error(&e))?;
    let mut ops = Probe::new();
    ring.submitter().register_probe(&mut ops).map_err(|e| {
        format!("io_uring cannot list its operations ({e}): the kernel is older than 5.6")
    })?;
    let needed = [
        (opcode::Read::CODE, "READ"),
        (opcode::Write::CODE, "WRITE"),
        (opcode::ReadFixed::CODE, "READ_FIXED"),
        (opcode::WriteFixed::CODE, "WRITE_FIXED"),
        (opcode::Fsync::CODE, "FSYNC"),
    ];
    if let Some((_, name)) = needed.iter().find(|(code, _)| !ops.is_supported(*code)) {
        return Err(format!(
            "this kernel's io_uring lacks the {name} operation (Linux 5.6 or newer is needed)"
        ));
    }
    // A NOP round trip: a filter may allow io_uring_setup but block io_uring_enter.
    let nop = opcode::Nop::new().build().user_data(0x6e6f70);
    // SAFETY: a NOP names no memory and no file.
    unsafe { ring.submission().push(&nop) }
        .map_err(|_| "io_uring submission queue unusable".to_string())?;
    loop {
        match ring.submit_and_wait(1) {
            Ok(_) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => {
                return Err(format!(
                    "io_uring_enter failed ({e}); a seccomp filter may block it"
                ));
            }
        }
    }
    match ring.completion().next() {
        Some(c) if c.user_data() == 0x6e6f70 && c.result() >= 0 => Ok(()),
        Some(c) => Err(format!(
            "io_uring NOP failed: {}",
            io::Error::from_raw_os_error(-c.result())
        )),
        None => Err("io_uring NOP did not complete".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{self, TempPath};
    use super::*;

    fn open(config: EngineConfig) -> Box<dyn Engine> {
        Box::new(UringEngine::new(config).expect("io_uring engine"))
    }

    /// A plain ring without registered files or buffers: the fallback path.
    fn open_plain(config: EngineConfig) -> Box<dyn Engine> {
        let e = UringEngine::with_setup(
            config,
            Setup {
                flags: false,
                register: false,
            },
        )
        .expect("plain io_uring engine");
        assert_eq!(e.registered(), (false, false));
        assert_eq!(e.ring_mode(), RingMode::Plain);
        Box::new(e)
    }

    #[test]
    fn a_timed_wait_returns_the_completion_or_gives_up_in_time() {
        let path = TempPath::new("within");
        let file = path.create_rw();
        file.set_len(8192).unwrap();
        let mut e = open(testutil::config(2, 4096, vec![file]));
        let mut out = Vec::new();
        // Nothing in flight: returns at once.
        let t = std::time::Instant::now();
        e.submit_within(std::time::Duration::from_secs(5), &mut out)
            .unwrap();
        // Not the 5 s it may wait: at once, give or take a loaded machine.
        assert!(out.is_empty() && t.elapsed() < std::time::Duration::from_secs(3));
        e.push(Request {
            slot: 0,
            file: 0,
            op: Op::Read,
            offset: 0,
            len: 4096,
        });
        while out.is_empty() {
            e.submit_within(std::time::Duration::from_millis(100), &mut out)
                .unwrap();
        }
        assert_eq!((out[0].slot, out[0].result), (0, 4096));
    }

    #[test]
    fn probe_is_ok_here() {
        assert_eq!(probe(), Ok(()));
    }

    #[test]
    fn setup_errors_are_explained_on_one_line() {
        let cases = [
            (libc::ENOSYS, None, "CONFIG_IO_URING"),
            (libc::EPERM, Some(2), "io_uring_disabled=2"),
            (libc::EPERM, Some(1), "io_uring_group"),
            (libc::EPERM, Some(0), "seccomp"),
            (libc::EPERM, None, "seccomp"),
            (libc::ENOMEM, Some(0), "RLIMIT_MEMLOCK"),
            (libc::EFAULT, Some(0), "io_uring_setup failed"),
        ];
        for (errno, sysctl, needle) in cases {
            let why = explain(&io::Error::from_raw_os_error(errno), sysctl);
            assert!(why.contains(needle), "{why}");
            assert!(!why.contains('\n') && !why.contains("  "), "{why:?}");
        }
    }

    #[test]
    fn reports_its_setup() {
        let tmp = TempPath::new("setup");
        let e = UringEngine::new(testutil::config(4, 4096, vec![tmp.create_rw()])).expect("engine");
        // Registration can fail for reasons outside the test (RLIMIT_MEMLOCK), so print.
        eprintln!("ring {:?}, registered {:?}", e.ring_mode(), e.registered());
        assert_eq!(e.kind(), EngineKind::IoUring);
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
    fn round_trip_depth_8_unregistered_plain_ring() {
        testutil::round_trip(open_plain, 8);
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        testutil::syncs(open);
        testutil::syncs(open_plain);
    }

    #[test]
    fn reads_past_eof_are_short() {
        testutil::past_eof(open);
    }

    #[test]
    fn errors_are_completions() {
        testutil::errors(open);
        testutil::errors(open_plain);
    }

    #[test]
    fn slot_contract_is_enforced() {
        testutil::contract(open);
    }

    #[test]
    fn o_direct_round_trip() {
        testutil::direct(open, "io_uring o_direct");
    }

    #[test]
    fn submit_without_waiting_still_collects() {
        let tmp = TempPath::new("nowait");
        let mut e = open(testutil::config(4, 4096, vec![tmp.create_rw()]));
        for slot in 0..4 {
            e.push(Request {
                slot,
                file: 0,
                op: Op::Write,
                offset: u64::from(slot) * 4096,
                len: 4096,
            });
        }
        let mut out = Vec::new();
        // min 0 never blocks; polling it must see every completion eventually.
        for _ in 0..100_000 {
            e.submit(0, &mut out).expect("submit");
            if out.len() == 4 {
                break;
            }
        }
        assert_eq!(
            out.len(),
            4,
            "completions never showed up with min_complete 0"
        );
        assert_eq!(e.in_flight(), 0);
        // Nothing in flight: min 5 must not hang.
        e.submit(5, &mut out).expect("submit nothing");
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn drop_with_requests_in_flight_waits() {
        let tmp = TempPath::new("dropwait");
        let mut e = open(testutil::config(8, 65536, vec![tmp.create_rw()]));
        for slot in 0..8 {
            e.push(Request {
                slot,
                file: 0,
                op: Op::Write,
                offset: u64::from(slot) * 65536,
                len: 65536,
            });
        }
        let mut out = Vec::new();
        e.submit(0, &mut out).expect("submit");
        drop(e); // must not free buffers under the kernel, nor hang
        let len = std::fs::metadata(&tmp.0).expect("stat").len();
        assert_eq!(len, 8 * 65536, "every write finished before drop returned");
    }

    #[test]
    fn more_slots_than_registrable_buffers_still_work() {
        let tmp = TempPath::new("many");
        let depth = MAX_REG_BUFFERS + 1;
        // A ring of 16,385 entries is megabytes of kernel memory in one piece; while the
        // other tests hold rings and buffers the kernel can refuse it (ENOMEM, seen once in a
        // full run). Try again a little later, and if it still refuses, say so: the ring's
        // size, not the engine, is what failed.
        let mut tries = 0;
        let e = loop {
            match UringEngine::new(testutil::config(depth, 512, vec![tmp.create_rw()])) {
                Ok(e) => break e,
                Err(EngineError::Setup(err))
                    if err.raw_os_error() == Some(libc::ENOMEM) && tries < 5 =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                Err(EngineError::Setup(err)) if err.raw_os_error() == Some(libc::ENOMEM) => {
                    eprintln!(
                        "SKIPPED: the kernel refused a ring of {depth} entries 6 times (ENOMEM): no memory for it here"
                    );
                    return;
                }
                Err(err) => panic!("engine: {err:?}"),
            }
        };
        assert!(
            !e.registered().1,
            "{depth} buffers cannot all be registered"
        );
        let mut e: Box<dyn Engine> = Box::new(e);
        let mut out = Vec::new();
        for slot in [0, depth - 1] {
            e.buf(slot).fill(slot as u8 | 1);
            e.push(Request {
                slot,
                file: 0,
                op: Op::Write,
                offset: u64::from(slot) * 512,
                len: 512,
            });
        }
        e.submit(2, &mut out).expect("submit");
        testutil::drain(e.as_mut(), &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|c| c.result == 512), "{out:?}");
    }

    #[test]
    fn is_send() {
        fn send<T: Send>() {}
        send::<UringEngine>();
    }
}
