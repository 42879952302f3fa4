//! Ending a statement in flight when the run's stop token is set.
//!
//! A statement that waits on the server (a lock another session holds, a long scan) cannot
//! look at the token: its connection is blocked in a read. So each connection registers, for
//! its life, what ends that wait ([`Canceller`]): it asks the server to cancel the statement
//! (PostgreSQL's CancelRequest with the backend's key here; MySQL's `KILL QUERY` is in
//! [`super::mysql`]), and if the statement is still waiting [`super::sql::CANCEL_GRACE`]
//! later (a server that does not answer), it shuts the socket down under the read. Either
//! way the statement stops on the server too, rather than running on after perflab left.

use super::sql::CANCEL_GRACE;
use crate::stop::{OnStop, Stop};
use bytes::BytesMut;
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Cancel requests being sent right now, on their threads.
static SENDING: AtomicUsize = AtomicUsize::new(0);

/// Waits (at most `limit`) until every cancel request set off by a stop has been sent: a
/// process about to exit after Ctrl-C calls it, or the requests would die with it.
pub fn settle(limit: Duration) {
    let until = Instant::now() + limit;
    while SENDING.load(Ordering::SeqCst) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Where a PostgreSQL server listens: the cancel request opens a connection of its own.
#[derive(Debug, Clone)]
pub enum Place {
    Tcp(String, u16),
    Unix(String),
}

/// A duplicate of a connection's socket, to shut it down from another thread.
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    fn shutdown(&self) {
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(Shutdown::Both),
            Socket::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }
}

/// Whether a connection is waiting for its server right now: set around each blocking read.
#[derive(Clone, Default)]
pub struct Waiting(Arc<AtomicBool>);

impl Waiting {
    #[inline]
    pub fn set(&self, waiting: bool) {
        self.0.store(waiting, Ordering::Relaxed);
    }

    /// Marks the connection as waiting, before the caller looks at the stop token. With the
    /// fence here and the one in the canceller, no stop falls between the two: either the
    /// caller's look sees the token set (and does not wait unbounded), or the canceller sees
    /// the connection waiting (and cancels). A plain store then load may be reordered by the
    /// CPU, and a stop in that gap cancelled nothing while the read waited on.
    #[inline]
    pub fn begin(&self) {
        self.0.store(true, Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A connection's registration with the stop token; dropping it (with the connection)
/// withdraws it.
pub struct Canceller {
    _registration: OnStop,
}

impl Canceller {
    /// Registers `cancel` (the server's own way to stop a statement) to run when `stop` is
    /// set, on a thread of its own; [`CANCEL_GRACE`] later, a connection still waiting has
    /// its socket shut down.
    pub fn register(
        stop: &Stop,
        waiting: Waiting,
        socket: Option<Socket>,
        cancel: impl FnOnce() + Send + 'static,
    ) -> Canceller {
        let registration = stop.on_stop(move || {
            // Pairs with the fence in `Waiting::begin`.
            std::sync::atomic::fence(Ordering::SeqCst);
            if !waiting.get() {
                return;
            }
            // Off the thread that set the token: a server that is slow to accept the cancel
            // must not hold up the others' cancels, or Ctrl-C's message.
            SENDING.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name("perflab-cancel".into())
                .spawn(move || {
                    cancel();
                    SENDING.fetch_sub(1, Ordering::SeqCst);
                    let deadline = Instant::now() + CANCEL_GRACE;
                    while waiting.get() && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    if waiting.get()
                        && let Some(s) = socket
                    {
                        s.shutdown();
                    }
                });
            if spawned.is_err() {
                SENDING.fetch_sub(1, Ordering::SeqCst);
            }
        });
        Canceller {
            _registration: registration,
        }
    }
}

/// Sends PostgreSQL's CancelRequest for backend `pid` with its secret key, over a connection
/// of its own (the server answers nothing and closes it).
pub fn postgres_cancel(place: &Place, pid: i32, secret: i32) {
    let mut buf = BytesMut::with_capacity(16);
    postgres_protocol::message::frontend::cancel_request(pid, secret, &mut buf);
    let sent = match place {
        Place::Tcp(host, port) => {
            use std::net::ToSocketAddrs;
            (host.as_str(), *port)
                .to_socket_addrs()
                .ok()
                .and_then(|mut addrs| addrs.next())
                .and_then(|addr| TcpStream::connect_timeout(&addr, CANCEL_GRACE).ok())
                .map(|mut s| s.write_all(&buf))
        }
        Place::Unix(path) => UnixStream::connect(path)
            .ok()
            .map(|mut s| s.write_all(&buf)),
    };
    // Nothing to do about a failure: the grace period's shutdown still ends the wait.
    let _ = sent;
}
