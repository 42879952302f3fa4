//! TLS over a TCP socket, shared by every client that encrypts a byte stream itself: the
//! caches' `rediss://` connections ([`crate::workload::kv::endpoint`]) and the mail clients
//! ([`crate::workload::mail::wire`]: IMAPS, POP3S, SMTPS and STARTTLS). Usable blocking (the
//! handshake, control connections, the mail sessions) and non-blocking (the cache sessions'
//! edge-triggered epoll loops).
//!
//! ```text
//!  write(plain) ──► rustls (encrypts into records) ──► push: write_tls until the socket is full
//!  read(plain)  ◄── rustls's decrypted plaintext  ◄── read_tls + process_new_packets
//! ```
//!
//! Two things differ from a plain socket, and the callers allow for both:
//! - a `write` may leave records in rustls when the socket is full (non-blocking) or its
//!   write timeout expired (blocking), although it took all the plaintext:
//!   [`TlsStream::has_pending_output`] says so, and `flush` sends them (or fails);
//! - a short `read` does not mean the socket is drained (a read returns at most one record's
//!   plaintext at a time), so a non-blocking caller reads a TLS stream until `WouldBlock`.
//!
//! The settings (how far the server is trusted, the client's certificate, rustls's session
//! resumption: an in-memory cache, TLS 1.3 tickets) are the connection's
//! [`crate::target::tls::Trust`]'s. A resumed handshake skips the server's certificate
//! signature, so [`TlsStream::resumed`] says which kind each connection had.

use rustls::ClientConnection;
use rustls::pki_types::ServerName;
use std::io::{self, Read, Write};
use std::net::TcpStream;

pub struct TlsStream {
    conn: ClientConnection,
    sock: TcpStream,
}

impl std::fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsStream")
            .field("sock", &self.sock)
            .finish_non_exhaustive()
    }
}

impl TlsStream {
    /// Runs the handshake on a blocking socket (its timeouts bound it) with the settings of
    /// the connection's [`crate::target::tls::Trust`]. A failure keeps rustls's error inside
    /// the `io::Error`, so [`crate::target::tls::refusal`] can say why a certificate was refused.
    pub fn connect_with(
        mut sock: TcpStream,
        server_name: &str,
        config: std::sync::Arc<rustls::ClientConfig>,
    ) -> io::Result<TlsStream> {
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut conn = ClientConnection::new(config, name)
            .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut sock)?;
        }
        Ok(TlsStream { conn, sock })
    }

    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Whether the handshake resumed an earlier session (a ticket or session id) rather than
    /// running in full; `None` before it completed.
    pub fn resumed(&self) -> Option<bool> {
        self.conn
            .handshake_kind()
            .map(|k| k == rustls::HandshakeKind::Resumed)
    }

    /// The protocol version and cipher suite agreed (`TLSv1_3 TLS13_AES_256_GCM_SHA384`).
    pub fn negotiated(&self) -> String {
        let version = self
            .conn
            .protocol_version()
            .map_or_else(|| "?".to_string(), |v| format!("{v:?}"));
        let suite = self
            .conn
            .negotiated_cipher_suite()
            .map_or_else(|| "?".to_string(), |s| format!("{:?}", s.suite()));
        format!("{version} {suite}")
    }

    /// Whether encrypted records wait for room in the socket.
    pub fn has_pending_output(&self) -> bool {
        self.conn.wants_write()
    }

    /// Sends the records rustls holds: `WouldBlock` when the socket filled first.
    fn push(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            if self.conn.write_tls(&mut self.sock)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }

    /// [`Self::push`], where a full socket is not an error: the writable event comes back.
    fn push_some(&mut self) -> io::Result<()> {
        match self.push() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            other => other,
        }
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // Plaintext already decrypted first: the socket may have nothing more.
            match self.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The server closed without close_notify: a close, as on a plain socket.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                done => return done,
            }
            if self.conn.read_tls(&mut self.sock)? == 0 {
                return Ok(0);
            }
            // rustls's error stays inside, for `tls::refusal` (a server's alert after the
            // handshake: TLS 1.3 servers judge the client's certificate only then).
            self.conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            // Alerts and post-handshake messages may want an answer.
            self.push_some()?;
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Earlier records leave first; if they cannot, neither can this.
        self.push()?;
        let n = self.conn.writer().write(buf)?;
        self.push_some()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push()
    }
}
