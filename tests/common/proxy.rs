//! A fault-injecting TCP relay: between perflab and a real server, it passes bytes both ways
//! and, once armed, spoils the server's replies with faults drawn from a seeded generator,
//! as a network, a middlebox or a broken server would.
//!
//! ```text
//!  perflab ──► 127.0.0.1:port ──(requests, untouched)──► server
//!          ◄── reply chunks: one in `one_in` gets a fault ◄──
//! ```
//!
//! `only_in` aims the faults at the replies holding some bytes (one statement's answer).
//!
//! Faults ([`Fault`]): a delay spike; a reset before the reply or halfway through it (RST,
//! SO_LINGER 0); a reply cut short with an orderly close (FIN); framing corrupted (the
//! chunk's first byte, where every protocol here keeps its type, tag or status, and one more
//! byte); a stall (the reply held back, the socket kept open, until perflab gives up); a drip
//! (the chunk one byte per write). Each connection draws from its own generator, seeded by
//! the proxy's seed and the connection's number, so a run's faults are reproducible.
//!
//! Only std and socket2 (for the reset, which std cannot ask for without unsafe code).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One way a reply is spoiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// The chunk arrives [`Faults::delay`] late.
    Delay,
    /// The connection is reset before the chunk.
    ResetBefore,
    /// Half the chunk, then a reset.
    ResetMid,
    /// Half the chunk, then an orderly close.
    Truncate,
    /// The chunk's first byte and one other are changed.
    Corrupt,
    /// Nothing more is delivered; the socket stays open until the client closes it.
    Stall,
    /// The chunk one byte per write.
    Drip,
}

impl Fault {
    pub const ALL: [Fault; 7] = [
        Fault::Delay,
        Fault::ResetBefore,
        Fault::ResetMid,
        Fault::Truncate,
        Fault::Corrupt,
        Fault::Stall,
        Fault::Drip,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::Delay => "delay",
            Fault::ResetBefore => "reset before reply",
            Fault::ResetMid => "reset mid-reply",
            Fault::Truncate => "truncated reply",
            Fault::Corrupt => "corrupt framing",
            Fault::Stall => "stall",
            Fault::Drip => "one-byte drip",
        }
    }
}

/// What the proxy does once armed.
#[derive(Debug, Clone)]
pub struct Faults {
    pub seed: u64,
    /// One reply chunk in this many gets a fault.
    pub one_in: u64,
    pub kinds: Vec<Fault>,
    /// How late a delayed chunk arrives.
    pub delay: Duration,
    /// Only chunks holding these bytes may get a fault (`None`: any chunk): a fault aimed
    /// at one reply, e.g. PostgreSQL's `INSERT 0 1`, the answer to a write the server has
    /// already committed.
    pub only_in: Option<Vec<u8>>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            seed: 29,
            one_in: 50,
            kinds: Fault::ALL.to_vec(),
            delay: Duration::from_millis(150),
            only_in: None,
        }
    }
}

struct Shared {
    upstream: SocketAddr,
    faults: Faults,
    armed: AtomicBool,
    stop: AtomicBool,
    connections: AtomicU64,
    injected: Mutex<BTreeMap<Fault, u64>>,
    /// Every connection's sockets still open, by number, so dropping the proxy closes them.
    open: Mutex<BTreeMap<u64, Vec<TcpStream>>>,
}

pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl FaultProxy {
    /// A relay on a free port of 127.0.0.1 to `upstream`, passing everything untouched until
    /// [`FaultProxy::arm`].
    pub fn start(upstream: SocketAddr, faults: Faults) -> FaultProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port for the proxy");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            upstream,
            faults,
            armed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            injected: Mutex::new(BTreeMap::new()),
            open: Mutex::new(BTreeMap::new()),
        });
        let s = Arc::clone(&shared);
        let acceptor = std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let n = s.connections.fetch_add(1, Ordering::SeqCst);
                let s = Arc::clone(&s);
                std::thread::spawn(move || relay(s, client, n));
            }
        });
        FaultProxy {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Faults from now on.
    pub fn arm(&self) {
        self.shared.armed.store(true, Ordering::SeqCst);
    }

    /// Faults from `after` from now: a run's start (its checks, its sessions' handshakes) goes
    /// through clean, its steps meet the faults.
    pub fn arm_after(&self, after: Duration) {
        let shared = Arc::clone(&self.shared);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            shared.armed.store(true, Ordering::SeqCst);
        });
    }

    /// Faults from `after` from now, for `length`: the middle of a run, its start and its
    /// end (the checks after a step) clean.
    pub fn arm_for(&self, after: Duration, length: Duration) {
        let shared = Arc::clone(&self.shared);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            shared.armed.store(true, Ordering::SeqCst);
            std::thread::sleep(length);
            shared.armed.store(false, Ordering::SeqCst);
        });
    }

    /// No more faults (connections already stalled stay so).
    pub fn disarm(&self) {
        self.shared.armed.store(false, Ordering::SeqCst);
    }

    /// Faults injected so far, by kind.
    pub fn injected(&self) -> BTreeMap<Fault, u64> {
        self.shared.injected.lock().unwrap().clone()
    }

    /// All faults injected so far.
    pub fn total(&self) -> u64 {
        self.injected().values().sum()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for s in self.shared.open.lock().unwrap().values().flatten() {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake the acceptor.
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

/// SplitMix64: small, good enough, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// How a connection ends.
enum End {
    /// An orderly close (FIN).
    Close,
    /// A reset (RST).
    Reset,
}

fn relay(s: Arc<Shared>, client: TcpStream, n: u64) {
    let Ok(server) = TcpStream::connect(s.upstream) else {
        let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let dups: Vec<TcpStream> = [&client, &server]
        .iter()
        .filter_map(|sock| sock.try_clone().ok())
        .collect();
    s.open.lock().unwrap().insert(n, dups);
    // Requests pass untouched; when the client is done, so is the server's side. This side
    // never closes the client's: how that ends is the replies' to say.
    let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let forward = std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match c_in.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    if s_out.write_all(&buf[..k]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = s_out.shutdown(Shutdown::Both);
    });
    let end = replies(&s, &client, &server, n);
    let _ = server.shutdown(Shutdown::Both);
    match end {
        End::Close => {
            let _ = client.shutdown(Shutdown::Both);
        }
        End::Reset => {
            // SO_LINGER 0 makes the last close a reset; SHUT_RD wakes the forwarding thread
            // without sending a FIN first.
            let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
            let _ = client.shutdown(Shutdown::Read);
        }
    }
    let _ = forward.join();
    s.open.lock().unwrap().remove(&n);
    // The client's last descriptor: closed here, with a reset where asked.
    drop(client);
}

/// The server's replies to the client, spoiled as the faults say, until one side closes or a
/// fault ends the connection.
fn replies(s: &Shared, mut client: &TcpStream, mut server: &TcpStream, n: u64) -> End {
    let mut rng = Rng(s.faults.seed ^ n.wrapping_mul(0xa076_1d64_78bd_642f));
    let mut buf = vec![0u8; 16 * 1024];
    let mut stalled = false;
    loop {
        let k = match server.read(&mut buf) {
            Ok(0) | Err(_) => return End::Close,
            Ok(k) => k,
        };
        if stalled {
            continue;
        }
        let chunk = &mut buf[..k];
        let aimed = s.faults.only_in.as_ref().is_none_or(|needle| {
            !needle.is_empty() && chunk.windows(needle.len()).any(|w| w == needle.as_slice())
        });
        let fault = (aimed && s.armed.load(Ordering::SeqCst) && rng.below(s.faults.one_in) == 0)
            .then(|| s.faults.kinds[rng.below(s.faults.kinds.len() as u64) as usize]);
        let Some(fault) = fault else {
            if client.write_all(chunk).is_err() {
                return End::Close;
            }
            continue;
        };
        *s.injected.lock().unwrap().entry(fault).or_insert(0) += 1;
        let half = (k / 2).max(1).min(k);
        let delivered = match fault {
            Fault::Delay => {
                std::thread::sleep(s.faults.delay);
                client.write_all(chunk)
            }
            Fault::ResetBefore => return End::Reset,
            Fault::ResetMid | Fault::Truncate => client.write_all(&chunk[..half]),
            Fault::Corrupt => {
                chunk[0] ^= 0x5a;
                let at = rng.below(k as u64) as usize;
                chunk[at] = chunk[at].wrapping_add(1 + rng.below(254) as u8);
                client.write_all(chunk)
            }
            Fault::Stall => {
                // Held: replies are read and dropped until the client closes.
                stalled = true;
                continue;
            }
            Fault::Drip => chunk
                .iter()
                .try_for_each(|b| client.write_all(std::slice::from_ref(b))),
        };
        if delivered.is_err() {
            return End::Close;
        }
        match fault {
            Fault::ResetMid => return End::Reset,
            Fault::Truncate => return End::Close,
            _ => {}
        }
    }
}
