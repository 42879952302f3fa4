//! Where a cache listens and how to open a connection to it that is ready for work.
//!
//! ```text
//!  --target URL ──► Endpoint { address: Tcp | Unix, tls, protocol, user, password, db, shown }
//!                      │
//!                      ├─ connect(timeout) ──► Stream (blocking; rediss: TLS handshake;
//!                      │                         Redis: AUTH, HELLO 3, SELECT done)
//!                      │                         └─ the session sets it non-blocking and polls it
//!                      └─ Control::open ──► stats / INFO / DBSIZE ... for counters and checks
//! ```
//!
//! Connecting is blocking (with a timeout) even for the sessions, which then turn the socket
//! non-blocking: the handshake is a few round trips once per connection, and doing it
//! synchronously keeps the event loop free of connection states. The password is only ever
//! sent to the server; messages name the user, never the password.

use super::memcache;
use super::protocol::Protocol;
use super::resp::{self, Value};
use crate::target::tls::Trust;
use crate::target::tls_stream::TlsStream;
use crate::target::url::{Backend, Secret, TargetUrl};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// One cache server, and what it takes to talk to it.
#[derive(Clone)]
pub struct Endpoint {
    pub address: Address,
    /// `rediss://`: TLS, and how far the server is trusted.
    pub tls: Option<Tls>,
    pub protocol: Protocol,
    /// Redis ACL user (`AUTH user pass`); with only a password, `AUTH pass`.
    pub user: Option<String>,
    pub password: Option<Secret>,
    /// Redis database number (`/0` in the URL).
    pub db: u32,
    /// The URL as shown and recorded: no password.
    pub shown: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// A `rediss://` server's TLS: the name its certificate must carry (also sent for SNI; the
/// host as the user wrote it, for a cluster's nodes too) and how far it is trusted
/// (`--cacert`, `--insecure`, `--cert`, `--key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub name: String,
    pub trust: Trust,
}

/// Why an endpoint could not be made or reached. One line each, naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("{0}")]
    Url(String),
    #[error("cannot connect to {shown}: {reason}")]
    Unreachable { shown: String, reason: String },
    #[error("{shown} refused the password{user}: {message}")]
    Auth {
        shown: String,
        user: String,
        message: String,
    },
    #[error("{shown}: {message}")]
    Protocol { shown: String, message: String },
    /// The server's certificate was not trusted, or the server refused perflab's: no retry
    /// can change that.
    #[error("{shown}: {message}")]
    Trust { shown: String, message: String },
}

impl EndpointError {
    /// Whether the server could not be reached at all (as opposed to answering wrongly).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, EndpointError::Unreachable { .. })
    }
}

/// A connected socket of either family.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(s) => s.socket().set_nonblocking(on),
        }
    }

    /// Whether a read shorter than its buffer means the socket is drained (false for TLS,
    /// which returns one record's plaintext at a time).
    #[inline]
    pub fn short_read_drains(&self) -> bool {
        !matches!(self, Stream::Tls(_))
    }

    /// Whether written bytes still wait in the process for room in the socket (TLS records).
    #[inline]
    pub fn has_pending_output(&self) -> bool {
        match self {
            Stream::Tls(s) => s.has_pending_output(),
            _ => false,
        }
    }

    fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Tls(s) => {
                s.socket().set_read_timeout(t)?;
                s.socket().set_write_timeout(t)
            }
            Stream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.socket().as_raw_fd(),
        }
    }
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

impl Endpoint {
    /// The endpoint a `--target` URL names. `protocol` overrides the memcached protocol
    /// (`--protocol meta`); Redis takes RESP3 from `?protocol=3`.
    pub fn from_url(url: &TargetUrl, meta: bool, trust: &Trust) -> Result<Endpoint, EndpointError> {
        let shown = url.redacted();
        let bad = |m: &str| EndpointError::Url(format!("--target {shown}: {m}"));
        let protocol = match url.backend {
            Backend::Memcached => {
                if url.password.is_some() || url.user.is_some() {
                    return Err(bad(
                        "memcached's text protocol has no passwords; remove user:password@ (SASL is binary-protocol only)",
                    ));
                }
                if meta {
                    Protocol::MemcacheMeta
                } else {
                    Protocol::MemcacheText
                }
            }
            Backend::Redis | Backend::Rediss => {
                if meta {
                    return Err(bad(
                        "--protocol meta is memcached's; Redis speaks RESP (?protocol=3 for RESP3)",
                    ));
                }
                match url.params.iter().find(|(k, _)| k == "protocol") {
                    None => Protocol::Resp2,
                    Some((_, v)) if v == "2" => Protocol::Resp2,
                    Some((_, v)) if v == "3" => Protocol::Resp3,
                    Some(_) => return Err(bad("?protocol= takes 2 or 3")),
                }
            }
            _ => {
                return Err(bad(
                    "not a cache; use memcached://host:11211 or redis://host:6379/0",
                ));
            }
        };
        if let Some((k, _)) = url.params.iter().find(|(k, _)| k != "protocol") {
            return Err(bad(&format!(
                "unknown parameter '{k}'; caches take only ?protocol=3 (Redis)"
            )));
        }
        let db = match url.database.as_deref() {
            None | Some("") => 0,
            Some(d) if protocol.is_memcache() => {
                return Err(bad(&format!(
                    "memcached has no databases; remove '/{d}' from the URL"
                )));
            }
            Some(d) => d.parse::<u32>().map_err(|_| {
                bad("the Redis database must be a number, e.g. redis://host:6379/0")
            })?,
        };
        let tls = (url.backend == Backend::Rediss).then(|| Tls {
            name: url.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
            trust: trust.clone(),
        });
        let address = match (&url.path, &url.host) {
            (Some(_), _) if tls.is_some() => {
                return Err(bad(
                    "TLS over a Unix socket: use redis:///path (the socket is already private)",
                ));
            }
            (Some(path), _) => Address::Unix(path.clone()),
            (None, host) => {
                let host = host.as_deref().unwrap_or("127.0.0.1");
                let port = url.port.or(url.backend.default_port()).unwrap_or(0);
                let text = if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                };
                let addr = text
                    .to_socket_addrs()
                    .map_err(|e| bad(&format!("cannot resolve {host}: {e}")))?
                    .next()
                    .ok_or_else(|| bad(&format!("{host} has no address")))?;
                Address::Tcp(addr)
            }
        };
        Ok(Endpoint {
            address,
            tls,
            protocol,
            user: url.user.clone(),
            password: url.password.clone(),
            db,
            shown,
        })
    }

    /// A throwaway memcached on this machine.
    pub fn local_memcached(port: u16, meta: bool) -> Endpoint {
        Endpoint {
            address: Address::Tcp(SocketAddr::from(([127, 0, 0, 1], port))),
            tls: None,
            protocol: if meta {
                Protocol::MemcacheMeta
            } else {
                Protocol::MemcacheText
            },
            user: None,
            password: None,
            db: 0,
            shown: format!("memcached://127.0.0.1:{port}"),
        }
    }

    /// Whether the server runs on this machine (its CPU can be read from /proc).
    pub fn is_local(&self) -> bool {
        match &self.address {
            Address::Unix(_) => true,
            Address::Tcp(a) => a.ip().is_loopback(),
        }
    }

    /// A blocking connection, handshake done, with reads and writes bounded by `timeout`.
    pub fn connect(&self, timeout: Duration) -> Result<Stream, EndpointError> {
        let unreachable = |e: io::Error| EndpointError::Unreachable {
            shown: self.shown.clone(),
            reason: describe_io(&e),
        };
        let stream = match &self.address {
            Address::Tcp(a) => {
                let s = TcpStream::connect_timeout(a, timeout).map_err(unreachable)?;
                // Requests are small and must leave at once: no Nagle delay.
                s.set_nodelay(true).map_err(unreachable)?;
                match &self.tls {
                    None => Stream::Tcp(s),
                    Some(tls) => {
                        s.set_read_timeout(Some(timeout)).map_err(unreachable)?;
                        s.set_write_timeout(Some(timeout)).map_err(unreachable)?;
                        let config = tls.trust.config().map_err(|e| EndpointError::Url(e.0))?;
                        let tls = TlsStream::connect_with(s, &tls.name, config).map_err(|e| {
                            match crate::target::tls::refusal(&e, crate::target::tls::CLI) {
                                Some(line) => EndpointError::Trust {
                                    shown: self.shown.clone(),
                                    message: line,
                                },
                                None => self.protocol_error(format!(
                                    "TLS handshake failed: {} (is this port TLS? redis:// for a plain one)",
                                    describe_io(&e)
                                )),
                            }
                        })?;
                        Stream::Tls(Box::new(tls))
                    }
                }
            }
            Address::Unix(p) => Stream::Unix(UnixStream::connect(p).map_err(unreachable)?),
        };
        stream.set_timeouts(Some(timeout)).map_err(unreachable)?;
        let mut control = Control {
            stream,
            endpoint: self.clone(),
            input: Vec::new(),
            timeout,
        };
        control.handshake()?;
        control.stream.set_timeouts(None).map_err(unreachable)?;
        Ok(control.stream)
    }

    fn protocol_error(&self, message: impl Into<String>) -> EndpointError {
        EndpointError::Protocol {
            shown: self.shown.clone(),
            message: message.into(),
        }
    }
}

/// An I/O error in words a user acts on.
fn describe_io(e: &io::Error) -> String {
    if let Some(line) = crate::target::tls::refusal(e, crate::target::tls::CLI) {
        return line;
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => {
            "connection refused (is the server running, and on this port?)".into()
        }
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "no answer in time".into(),
        io::ErrorKind::NotFound => "no such socket file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// A blocking connection for everything that is not the measured load: the handshake,
/// server counters (`stats`, `INFO`), item counts, loading and deleting keys.
pub struct Control {
    stream: Stream,
    endpoint: Endpoint,
    input: Vec<u8>,
    timeout: Duration,
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Control({})", self.endpoint.shown)
    }
}

impl Control {
    /// A control connection, handshake done.
    pub fn open(endpoint: &Endpoint, timeout: Duration) -> Result<Control, EndpointError> {
        let stream = endpoint.connect(timeout)?;
        stream
            .set_timeouts(Some(timeout))
            .map_err(|e| endpoint.protocol_error(describe_io(&e)))?;
        Ok(Control {
            stream,
            endpoint: endpoint.clone(),
            input: Vec::new(),
            timeout,
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Redis: authenticate, switch protocol, select the database. memcached: nothing.
    fn handshake(&mut self) -> Result<(), EndpointError> {
        if self.endpoint.protocol.is_memcache() {
            return Ok(());
        }
        if let Some(password) = self.endpoint.password.clone() {
            let user = self.endpoint.user.clone();
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = &user {
                args.push(user.as_bytes());
            }
            args.push(password.expose().as_bytes());
            if let Value::Error(message) = self.command(&args)? {
                return Err(EndpointError::Auth {
                    shown: self.endpoint.shown.clone(),
                    user: self
                        .endpoint
                        .user
                        .as_ref()
                        .map(|u| format!(" of user {u}"))
                        .unwrap_or_default(),
                    message: first_line(&message),
                });
            }
        }
        if self.endpoint.protocol == Protocol::Resp3
            && let Value::Error(message) = self.command(&[b"HELLO", b"3"])?
        {
            return Err(self.endpoint.protocol_error(format!(
                "the server refused RESP3 (HELLO 3): {}; use RESP2 (drop ?protocol=3)",
                first_line(&message)
            )));
        }
        if self.endpoint.db != 0 {
            let db = self.endpoint.db.to_string();
            if let Value::Error(message) = self.command(&[b"SELECT", db.as_bytes()])? {
                return Err(self.endpoint.protocol_error(format!(
                    "cannot use database {db}: {}",
                    first_line(&message)
                )));
            }
        }
        // A server that wants a password we did not give says so on the first command.
        if self.endpoint.password.is_none()
            && let Value::Error(message) = self.command(&[b"PING"])?
        {
            if message.starts_with("NOAUTH") {
                return Err(EndpointError::Auth {
                    shown: self.endpoint.shown.clone(),
                    user: String::new(),
                    message: "the server needs a password: give redis://:PASSWORD@host:port or set REDISCLI_AUTH".into(),
                });
            }
            return Err(self.endpoint.protocol_error(first_line(&message)));
        }
        Ok(())
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), EndpointError> {
        self.stream
            .write_all(bytes)
            .map_err(|e| self.endpoint.protocol_error(describe_io(&e)))
    }

    /// Reads until `parse` finds a whole answer at the front of the input.
    fn receive<T>(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, String>,
    ) -> Result<T, EndpointError> {
        let deadline = Instant::now() + self.timeout;
        let mut chunk = [0u8; 16384];
        loop {
            match parse(&self.input) {
                Ok(Some((value, used))) => {
                    self.input.drain(..used);
                    return Ok(value);
                }
                Ok(None) => {}
                Err(m) => return Err(self.endpoint.protocol_error(m)),
            }
            if Instant::now() > deadline {
                return Err(self.endpoint.protocol_error("no answer in time"));
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(self
                        .endpoint
                        .protocol_error("the server closed the connection"));
                }
                Ok(n) => self.input.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.endpoint.protocol_error(describe_io(&e))),
            }
        }
    }

    /// A Redis command and its answer.
    pub fn command(&mut self, args: &[&[u8]]) -> Result<Value, EndpointError> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.send(&out)?;
        self.receive(resp::parse_value)
    }

    /// The server's counters: memcached `stats`, or Redis `INFO` (all sections), as
    /// name → value text.
    pub fn stats(&mut self) -> Result<BTreeMap<String, String>, EndpointError> {
        if self.endpoint.protocol.is_memcache() {
            self.send(b"stats\r\n")?;
            let pairs = self.receive(memcache::parse_stats)?;
            return Ok(pairs.into_iter().collect());
        }
        let text = match self.command(&[b"INFO", b"all"])? {
            Value::Error(m) => return Err(self.endpoint.protocol_error(format!("INFO: {m}"))),
            v => v.as_text().unwrap_or_default(),
        };
        Ok(text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect())
    }

    /// The server's version (`version`, or Redis's `redis_version`).
    pub fn version(&mut self) -> Result<String, EndpointError> {
        if self.endpoint.protocol.is_memcache() {
            self.send(b"version\r\n")?;
            return self.receive(memcache::parse_version);
        }
        let stats = self.stats()?;
        Ok(stats
            .get("valkey_version")
            .or_else(|| stats.get("redis_version"))
            .cloned()
            .unwrap_or_default())
    }

    /// Sends raw request bytes (pipelined requests built by the codecs).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), EndpointError> {
        self.send(bytes)
    }

    /// Reads one reply to a pipelined request, parsed by the data path's codec; a refusal
    /// comes back as the server's message.
    pub fn receive_reply(
        &mut self,
        command: super::protocol::Command,
        token: u32,
    ) -> Result<Result<super::protocol::Reply, String>, EndpointError> {
        use super::protocol::{Parsed, Reply};
        let protocol = self.endpoint.protocol;
        self.receive(|input| match protocol.parse(input, command, token) {
            Parsed::Reply {
                reply: Reply::Refused { message },
                consumed,
            } => Ok(Some((
                Err(String::from_utf8_lossy(&input[message]).into_owned()),
                consumed,
            ))),
            Parsed::Reply { reply, consumed } => Ok(Some((Ok(reply), consumed))),
            Parsed::Incomplete { .. } => Ok(None),
            Parsed::Invalid(m) => Err(m),
        })
    }
}

/// The first line of a server's message.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}
