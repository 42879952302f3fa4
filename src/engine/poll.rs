//! Readiness of many sockets on one thread: a small safe wrapper over epoll, for the
//! key-value sessions (many connections per worker, several requests in flight on each).
//!
//! Why not a crate (mio): an open loop must wake when the next request is due, which at
//! 100,000 requests a second is 10 µs away. `epoll_wait` takes its timeout in whole
//! milliseconds, and mio rounds up, so every send would go out up to a millisecond late and
//! that lateness would be charged to the server. `epoll_pwait2` (Linux 5.11) takes a
//! `timespec`: this wrapper uses it, and falls back to `epoll_wait` (rounding *down*, so the
//! caller wakes early and polls again rather than late) where the kernel lacks it.
//!
//! Registration is edge-triggered (`EPOLLET`): the caller reads until a read returns less
//! than it asked for or `WouldBlock`, and writes until its output is gone or `WouldBlock`,
//! and is woken again only by new data or new room.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set once `epoll_pwait2` has answered ENOSYS: every poller then uses `epoll_wait`.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

/// What a registration waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interest {
    pub read: bool,
    pub write: bool,
}

impl Interest {
    pub const READ: Interest = Interest {
        read: true,
        write: false,
    };
    pub const READ_WRITE: Interest = Interest {
        read: true,
        write: true,
    };

    fn bits(self) -> u32 {
        let mut bits = libc::EPOLLET as u32 | libc::EPOLLRDHUP as u32;
        if self.read {
            bits |= libc::EPOLLIN as u32;
        }
        if self.write {
            bits |= libc::EPOLLOUT as u32;
        }
        bits
    }
}

/// One readiness event: the token given at registration and what became ready. A hang-up
/// or error is reported as readable (the read then returns 0 or the error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub token: u64,
    pub readable: bool,
    pub writable: bool,
}

/// An epoll instance and the buffer its events are read into.
pub struct Poller {
    epoll: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Poller {
    /// A poller that reports up to `capacity` events per wait.
    pub fn new(capacity: usize) -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a new descriptor
        // that nothing else owns, so OwnedFd may take it.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: see above: `fd` is open and owned by no one else.
        let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
        let capacity = capacity.clamp(1, 4096);
        Ok(Poller {
            epoll,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest.bits(),
            u64: token,
        };
        // SAFETY: `event` is a valid epoll_event for the duration of the call (the kernel
        // copies it); a bad descriptor is an error return, not undefined behaviour.
        let rc = unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Starts watching `source` under `token`.
    pub fn add(&self, source: &impl AsRawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, source.as_raw_fd(), token, interest)
    }

    /// Stops watching `source` (closing it would too; this is for a socket kept open).
    pub fn remove(&self, source: &impl AsRawFd) -> io::Result<()> {
        self.ctl(
            libc::EPOLL_CTL_DEL,
            source.as_raw_fd(),
            0,
            Interest {
                read: false,
                write: false,
            },
        )
    }

    /// Waits until something is ready or `timeout` passes (None: forever; zero: just look),
    /// and calls `each` for every event. Returns how many events there were. An
    /// interrupted wait (a signal) returns 0.
    pub fn wait(
        &mut self,
        timeout: Option<Duration>,
        mut each: impl FnMut(Event),
    ) -> io::Result<usize> {
        let n = self.wait_raw(timeout)?;
        for e in &self.events[..n] {
            let bits = e.events;
            let trouble = libc::EPOLLERR as u32 | libc::EPOLLHUP as u32 | libc::EPOLLRDHUP as u32;
            each(Event {
                token: e.u64,
                readable: bits & (libc::EPOLLIN as u32 | trouble) != 0,
                writable: bits & libc::EPOLLOUT as u32 != 0,
            });
        }
        Ok(n)
    }

    fn wait_raw(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let max = self.events.len() as libc::c_int;
        let events = self.events.as_mut_ptr();
        let epfd = self.epoll.as_raw_fd();
        let rc = if NO_PWAIT2.load(Ordering::Relaxed) {
            wait_ms(epfd, events, max, timeout)
        } else {
            let ts = timeout.map(|t| libc::timespec {
                tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
                tv_nsec: t.subsec_nanos() as libc::c_long,
            });
            let ts_ptr = ts
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: `events` points at `max` writable epoll_events owned by self, `ts_ptr`
            // is null or points at a timespec that lives until the call returns, and the
            // signal mask pointer is null (no change), as epoll_pwait2(2) allows.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    epfd,
                    events,
                    max,
                    ts_ptr,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            if rc < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                NO_PWAIT2.store(true, Ordering::Relaxed);
                wait_ms(epfd, events, max, timeout)
            } else {
                rc as libc::c_int
            }
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(rc as usize)
    }
}

/// `epoll_wait` with the timeout in whole milliseconds, rounded down (0 polls).
fn wait_ms(
    epfd: RawFd,
    events: *mut libc::epoll_event,
    max: libc::c_int,
    timeout: Option<Duration>,
) -> libc::c_int {
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as libc::c_int);
    // SAFETY: `events` points at `max` writable epoll_events (the caller's buffer).
    unsafe { libc::epoll_wait(epfd, events, max, ms) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::time::Instant;

    #[test]
    fn reports_readable_sockets_by_token() {
        let mut poller = Poller::new(8).unwrap();
        let (mut a, b) = UnixStream::pair().unwrap();
        b.set_nonblocking(true).unwrap();
        poller.add(&b, 7, Interest::READ).unwrap();
        let mut seen = Vec::new();
        poller.wait(Some(Duration::ZERO), |e| seen.push(e)).unwrap();
        assert!(seen.is_empty());
        a.write_all(b"x").unwrap();
        poller
            .wait(Some(Duration::from_secs(5)), |e| seen.push(e))
            .unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].token, 7);
        assert!(seen[0].readable);
        let mut buf = [0u8; 4];
        assert_eq!((&b).read(&mut buf).unwrap(), 1);
    }

    #[test]
    fn a_short_timeout_is_not_rounded_up_to_a_millisecond() {
        let mut poller = Poller::new(1).unwrap();
        let (_a, b) = UnixStream::pair().unwrap();
        poller.add(&b, 1, Interest::READ).unwrap();
        // Behaviour, not timing: a 1 µs wait returns with no event, and does not hang.
        let start = Instant::now();
        let n = poller.wait(Some(Duration::from_micros(1)), |_| {}).unwrap();
        assert_eq!(n, 0);
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_closed_peer_reads_as_readable() {
        let mut poller = Poller::new(4).unwrap();
        let (a, b) = UnixStream::pair().unwrap();
        poller.add(&b, 3, Interest::READ_WRITE).unwrap();
        drop(a);
        let mut readable = false;
        poller
            .wait(Some(Duration::from_secs(5)), |e| readable |= e.readable)
            .unwrap();
        assert!(readable);
        poller.remove(&b).unwrap();
    }
}
