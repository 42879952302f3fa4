//! A buffered, blocking connection to a mail server, shared by the SMTP/LMTP, POP3 and IMAP
//! clients, and the error type they all return.
//!
//! All three protocols are line-oriented with the odd counted block (an IMAP literal), so one
//! reader serves them: [`Wire::line`] hands out the next line without its line ending and
//! [`Wire::exact`] the next `n` bytes, both as slices into one read buffer that is compacted
//! rather than reallocated, so a session in steady state allocates nothing to read. Timeouts
//! are per read and per write (the socket's own), so a stalled server fails one operation
//! instead of hanging a worker. A read that times out leaves the buffer as it was: whatever
//! arrived is kept, and the next call carries on from there (IMAP IDLE relies on this).
//!
//! The stream is plain TCP or TLS ([`TlsStream`], the process's rustls settings):
//! [`Wire::start_tls`] runs the handshake on the open connection, right after the connect
//! (implicit TLS) or after the server agreed to STARTTLS. It refuses when bytes are already
//! buffered: whatever came after the server's go-ahead and before the handshake was sent in
//! the clear, and taking it for the encrypted session's first bytes is the STARTTLS
//! injection attack (RFC 3207 and RFC 2595 require a client to discard it, and then the
//! session cannot be trusted either).

use crate::target::tls::{self, Trust};
use crate::target::tls_stream::TlsStream;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Longest line accepted: a server sending more without a line ending is broken or hostile.
const MAX_LINE: usize = 1 << 20;
/// Largest counted block ([`Wire::exact`]): bounds what one IMAP literal can make us allocate.
pub const MAX_EXACT: usize = 256 << 20;
/// The read buffer's first size: a typical reply and a small message fit without growing.
const INITIAL_BUFFER: usize = 16 << 10;
/// How much of a server's line an error keeps.
const EXCERPT: usize = 200;

/// What went wrong talking to a mail server.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The connection failed, closed, or timed out (timeouts are always `TimedOut`).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server refused a command: its reply line (`550 5.1.1 ...`, `-ERR ...`,
    /// `a3 NO ...`), at most 200 bytes.
    #[error("{0}")]
    Refused(String),
    /// The server's reply did not parse: what was expected, and what came.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server's certificate was not trusted, or the TLS settings cannot be used: one
    /// line naming the fix. No retry changes it.
    #[error("{0}")]
    Trust(String),
}

impl MailError {
    /// Whether this is a read or write that timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, MailError::Io(e)
            if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock))
    }

    /// A refusal quoting the server's line.
    pub(crate) fn refused(line: &[u8]) -> MailError {
        MailError::Refused(excerpt(line))
    }

    /// A protocol error: `expected`, and the line that came instead.
    pub(crate) fn unexpected(expected: &str, line: &[u8]) -> MailError {
        MailError::Protocol(format!("expected {expected}, got {:?}", excerpt(line)))
    }
}

/// A server's bytes as text for a message: lossy UTF-8, at most 200 bytes, trailing blanks cut.
pub fn excerpt(line: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(&line[..line.len().min(EXCERPT)]).into_owned();
    // Cutting at 200 bytes may split a UTF-8 sequence into a replacement character; that is
    // fine for a message, but the String itself must not exceed the limit by much either.
    text.truncate(text.trim_end().len());
    text
}

/// Sockets report a timed-out blocking read as `WouldBlock` on Unix: callers test one kind.
fn io_error(e: io::Error) -> MailError {
    if e.kind() == io::ErrorKind::WouldBlock {
        MailError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            "timed out waiting for the server",
        ))
    } else {
        MailError::Io(e)
    }
}

/// A socket's timeout of zero means "none" to the OS and is refused by std: use 1 ms.
fn nonzero(t: Duration) -> Duration {
    t.max(Duration::from_millis(1))
}

/// The connection: plain, or TLS once [`Wire::start_tls`] ran.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    fn socket(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.socket(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// A handshake's failure as one line; a timeout stays a timeout.
fn handshake_error(e: io::Error) -> MailError {
    let kind = e.kind();
    match kind {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => MailError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            "timed out in the TLS handshake",
        )),
        io::ErrorKind::UnexpectedEof => MailError::Io(io::Error::new(
            kind,
            "the server closed the connection during the TLS handshake (is this port TLS?)",
        )),
        io::ErrorKind::InvalidData => match tls::refusal(&e, tls::CLI) {
            Some(line) => MailError::Trust(line),
            None => MailError::Io(e),
        },
        _ => MailError::Io(io::Error::new(kind, format!("TLS handshake: {e}"))),
    }
}

/// A blocking TCP connection, plain or TLS, with a read buffer.
pub struct Wire {
    stream: Stream,
    /// Read buffer: bytes `start..end` are received and not yet handed out.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes `start..scanned` are known to hold no line ending (avoids rescanning).
    scanned: usize,
    read_timeout: Duration,
    bytes_in: u64,
    bytes_out: u64,
    /// How long TLS took: the handshake, and for STARTTLS the command's round trip.
    tls_time: Option<Duration>,
}

impl Wire {
    /// Connects with `timeout` for the connect and for every later read and write.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Wire, MailError> {
        let timeout = nonzero(timeout);
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(io_error)?;
        // Commands are small and each waits for its reply: Nagle would only add latency.
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Wire {
            stream: Stream::Plain(stream),
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
            scanned: 0,
            read_timeout: timeout,
            bytes_in: 0,
            bytes_out: 0,
            tls_time: None,
        })
    }

    /// Runs the TLS handshake on the connection, blocking, under the socket's timeouts
    /// (a timeout is [`MailError::is_timeout`]); returns how long it took. `server_name` is
    /// sent for SNI (an IP address sends none). Refused (a protocol error) when bytes are
    /// buffered unread: they came in the clear after the server's last answer (see the
    /// module's doc), or TLS is already on.
    pub fn start_tls(&mut self, server_name: &str, trust: &Trust) -> Result<Duration, MailError> {
        if self.end > self.start {
            return Err(MailError::Protocol(format!(
                "{} bytes came in the clear before the TLS handshake ({:?}): refused, as they would pass for the encrypted session's (STARTTLS injection)",
                self.end - self.start,
                excerpt(&self.buf[self.start..self.end])
            )));
        }
        let sock = match &self.stream {
            Stream::Plain(s) => s.try_clone()?,
            Stream::Tls(_) => return Err(MailError::Protocol("TLS is already on".into())),
        };
        // A session cache per server (address and port), as a mail client keeps one.
        let config = trust
            .config_for_server(sock.peer_addr()?)
            .map_err(|e| MailError::Trust(e.0))?;
        let started = Instant::now();
        let tls = TlsStream::connect_with(sock, server_name, config).map_err(handshake_error)?;
        let took = started.elapsed();
        // The plain handle is a duplicate of the TLS one's socket: dropping it closes nothing.
        self.stream = Stream::Tls(Box::new(tls));
        self.tls_time = Some(took);
        Ok(took)
    }

    /// [`Wire::start_tls`] after a STARTTLS exchange that began at `asked`: the TLS time
    /// counts from there, the command's round trip included.
    pub fn start_tls_asked(
        &mut self,
        server_name: &str,
        trust: &Trust,
        asked: Instant,
    ) -> Result<(), MailError> {
        self.start_tls(server_name, trust)?;
        self.tls_time = Some(asked.elapsed());
        Ok(())
    }

    /// How long TLS took on this connection (the handshake, and for STARTTLS the command's
    /// round trip); `None` without TLS.
    pub fn tls_time(&self) -> Option<Duration> {
        self.tls_time
    }

    /// Whether the TLS handshake resumed an earlier session; `None` without TLS.
    pub fn tls_resumed(&self) -> Option<bool> {
        self.tls().and_then(|t| t.resumed())
    }

    /// The TLS version and cipher suite; `None` without TLS.
    pub fn tls_negotiated(&self) -> Option<String> {
        self.tls().map(|t| t.negotiated())
    }

    /// The TLS session, once [`Wire::start_tls`] ran.
    pub fn tls(&self) -> Option<&TlsStream> {
        match &self.stream {
            Stream::Plain(_) => None,
            Stream::Tls(t) => Some(t),
        }
    }

    /// Writes all of `bytes` (over TLS, every record they make is sent before this returns).
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), MailError> {
        self.stream.write_all(bytes).map_err(io_error)?;
        self.stream.flush().map_err(io_error)?;
        self.bytes_out += bytes.len() as u64;
        Ok(())
    }

    /// The next line without its CRLF (a bare LF also ends a line). A line longer than
    /// 1 MiB is a protocol error.
    pub fn line(&mut self) -> Result<&[u8], MailError> {
        let eol = self.find_line()?;
        let (start, mut stop) = (self.start, eol);
        if stop > start && self.buf.get(stop - 1) == Some(&b'\r') {
            stop -= 1;
        }
        self.start = eol + 1;
        self.scanned = self.start;
        Ok(&self.buf[start..stop])
    }

    /// Blocks until a whole line is buffered, without consuming it (IMAP IDLE waits with
    /// this under a different timeout, so that a timeout never splits a response).
    pub fn wait_line(&mut self) -> Result<(), MailError> {
        self.find_line().map(|_| ())
    }

    /// Exactly `n` bytes (an IMAP literal); `n` up to 256 MiB.
    pub fn exact(&mut self, n: usize) -> Result<&[u8], MailError> {
        if n > MAX_EXACT {
            return Err(MailError::Protocol(format!(
                "a block of {n} bytes is over the {MAX_EXACT}-byte limit"
            )));
        }
        while self.end - self.start < n {
            self.fill(n)?;
        }
        let start = self.start;
        self.start += n;
        self.scanned = self.start;
        Ok(&self.buf[start..start + n])
    }

    /// Whether a whole line is already buffered.
    pub fn has_line(&self) -> bool {
        self.buf[self.start..self.end].contains(&b'\n')
    }

    /// Sets the read timeout (IDLE waits with a different one) and returns the old one.
    pub fn set_read_timeout(&mut self, t: Duration) -> Result<Duration, MailError> {
        let t = nonzero(t);
        self.stream.socket().set_read_timeout(Some(t))?;
        Ok(std::mem::replace(&mut self.read_timeout, t))
    }

    /// Bytes read so far.
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in
    }

    /// Bytes written so far.
    pub fn bytes_out(&self) -> u64 {
        self.bytes_out
    }

    /// Reads until a line ending is buffered; returns its index.
    fn find_line(&mut self) -> Result<usize, MailError> {
        loop {
            let from = self.scanned.max(self.start);
            if let Some(i) = self.buf[from..self.end].iter().position(|&b| b == b'\n') {
                return Ok(from + i);
            }
            self.scanned = self.end;
            if self.end - self.start > MAX_LINE {
                return Err(MailError::Protocol(format!(
                    "a line longer than {MAX_LINE} bytes, starting {:?}",
                    excerpt(&self.buf[self.start..self.end])
                )));
            }
            let want = self.end - self.start + 1;
            self.fill(want)?;
        }
    }

    /// One read from the socket, after making room for `want` bytes from `start`: moves
    /// the pending bytes to the front when that is enough, grows the buffer when it is not.
    fn fill(&mut self, want: usize) -> Result<(), MailError> {
        let pending = self.end - self.start;
        let want = want.max(pending + 1);
        if self.buf.len() - self.start < want {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start.min(self.scanned);
            self.start = 0;
            self.end = pending;
            // Grown by doubling at most, with the bytes that arrive: an IMAP literal that
            // claims 256 MiB costs what the server sends, not 256 MiB up front.
            if self.buf.len() < want {
                let size = want.min(self.buf.len() * 2).max(pending + 1);
                self.buf.resize(size, 0);
            }
        }
        loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    return Err(MailError::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )));
                }
                Ok(n) => {
                    self.end += n;
                    self.bytes_in += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_error(e)),
            }
        }
    }
}

/// Dot-stuffs a message for SMTP/LMTP DATA, appending to `out`: a line starting with `.`
/// gets another, every line ending (CRLF, bare LF, bare CR) becomes CRLF, the last line
/// gets one if it has none, and the terminating `.` line follows.
pub fn dot_stuff(message: &[u8], out: &mut Vec<u8>) {
    out.reserve(message.len() + message.len() / 32 + 5);
    let mut rest = message;
    while !rest.is_empty() {
        if rest.first() == Some(&b'.') {
            out.push(b'.');
        }
        match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                out.extend_from_slice(&rest[..i]);
                out.extend_from_slice(b"\r\n");
                let crlf = rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n');
                rest = &rest[i + if crlf { 2 } else { 1 }..];
            }
            None => {
                out.extend_from_slice(rest);
                out.extend_from_slice(b"\r\n");
                rest = &[];
            }
        }
    }
    out.extend_from_slice(b".\r\n");
}

/// Test helper: a server on 127.0.0.1 that writes `script` in `chunk`-byte pieces, a
/// millisecond apart for the first few KiB (so the client sees replies split across
/// reads), then collects what the client sends until it closes (closing earlier could
/// reset the connection), for the test to check.
#[cfg(test)]
pub(crate) fn scripted_server(
    script: Vec<u8>,
    chunk: usize,
) -> (SocketAddr, std::thread::JoinHandle<Vec<u8>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = std::thread::spawn(move || {
        let mut received = Vec::new();
        let Ok((mut conn, _)) = listener.accept() else {
            return received;
        };
        let mut sent = 0;
        for piece in script.chunks(chunk.max(1)) {
            if conn.write_all(piece).is_err() {
                return received;
            }
            // Pausing makes each piece its own read; past the first few KiB (a long
            // line's bulk), the pieces may coalesce, which keeps the test fast.
            sent += piece.len();
            if sent < 4096 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let _ = conn.read_to_end(&mut received);
        received
    });
    (addr, server)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuffed(message: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        dot_stuff(message, &mut out);
        out
    }

    #[test]
    fn dot_stuffing() {
        assert_eq!(stuffed(b"a\r\n.b\r\n..\r\n"), b"a\r\n..b\r\n...\r\n.\r\n");
        assert_eq!(stuffed(b".lead\nbare\n"), b"..lead\r\nbare\r\n.\r\n");
        assert_eq!(stuffed(b"no end"), b"no end\r\n.\r\n");
        assert_eq!(stuffed(b"x\r\n."), b"x\r\n..\r\n.\r\n");
        assert_eq!(stuffed(b"cr\ronly\r\n\r\n"), b"cr\r\nonly\r\n\r\n.\r\n");
        assert_eq!(stuffed(b""), b".\r\n");
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt(b"550 no  \r"), "550 no");
        assert!(excerpt(&[b'x'; 500]).len() <= 200);
        assert_eq!(excerpt(b"\xff"), "\u{fffd}");
    }

    #[test]
    fn framing_across_partial_reads() {
        let mut script = b"first\r\nbare\n\r\n12345".to_vec();
        script.extend(std::iter::repeat_n(b'y', 40_000));
        script.extend_from_slice(b"\r\nlast");
        let (addr, _) = scripted_server(script, 7);
        let mut wire = Wire::connect(addr, Duration::from_secs(5)).expect("connect");
        assert_eq!(wire.line().expect("line"), b"first");
        assert_eq!(wire.line().expect("line"), b"bare");
        assert_eq!(wire.line().expect("line"), b"");
        assert_eq!(wire.exact(5).expect("exact"), b"12345");
        // Longer than the initial buffer: it must grow, and the line come back whole.
        assert_eq!(wire.line().expect("long").len(), 40_000);
        assert!(!wire.has_line());
        wire.set_read_timeout(Duration::from_millis(50))
            .expect("timeout");
        let err = wire.line().expect_err("no line ending");
        assert!(err.is_timeout(), "{err:?}");
        assert!(wire.exact(MAX_EXACT + 1).is_err());
        assert_eq!(wire.exact(4).expect("kept across the timeout"), b"last");
        assert_eq!(wire.bytes_in(), 7 + 5 + 2 + 5 + 40_002 + 4);
    }

    #[test]
    fn start_tls_refuses_bytes_sent_in_the_clear() {
        // The server's go-ahead, then a line injected before the handshake.
        let (addr, _) = scripted_server(b"a1 OK Begin TLS\r\n* 1 EXISTS\r\n".to_vec(), 64);
        let mut wire = Wire::connect(addr, Duration::from_secs(5)).expect("connect");
        assert_eq!(wire.line().expect("go-ahead"), b"a1 OK Begin TLS");
        wire.wait_line().expect("the injected line is buffered");
        match wire.start_tls("localhost", &Trust::unverified()) {
            Err(MailError::Protocol(why)) => assert!(why.contains("injection"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(wire.tls().is_none());
    }

    #[test]
    fn a_silent_server_times_the_handshake_out() {
        let (addr, _) = scripted_server(Vec::new(), 1);
        let mut wire = Wire::connect(addr, Duration::from_millis(200)).expect("connect");
        let err = wire
            .start_tls("127.0.0.1", &Trust::unverified())
            .expect_err("no server hello");
        assert!(err.is_timeout(), "{err:?}");
    }
}
