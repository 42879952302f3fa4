//! TLS over a TCP socket for `rediss://`, usable blocking (the handshake, control
//! connections) and non-blocking (the sessions' edge-triggered epoll loops).
//!
//! ```text
//!  write(plain) ──► rustls (encrypts into records) ──► push: write_tls until the socket is full
//!  read(plain)  ◄── rustls's decrypted plaintext  ◄── read_tls + process_new_packets
//! ```
//!
//! Two things differ from a plain socket, and the session allows for both:
//! - a `write` may leave records in rustls when the socket is full, although it took all the
//!   plaintext: [`TlsStream::has_pending_output`] says so, and `flush` sends them when the
//!   socket is writable again;
//! - a short `read` does not mean the socket is drained (a read returns at most one record's
//!   plaintext at a time), so the session reads a TLS stream until `WouldBlock`.
//!
//! The settings (encrypted, server certificate not verified) are the process's, from
//! [`crate::target::tls`].

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
    /// Runs the handshake on a blocking socket (its timeouts bound it).
    pub fn connect(mut sock: TcpStream, server_name: &str) -> io::Result<TlsStream> {
        let config = crate::target::tls::config().map_err(io::Error::other)?;
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut conn = ClientConnection::new(config, name)
            .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut sock).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidData {
                    io::Error::new(e.kind(), format!("TLS handshake failed: {e}"))
                } else {
                    e
                }
            })?;
        }
        Ok(TlsStream { conn, sock })
    }

    pub fn socket(&self) -> &TcpStream {
        &self.sock
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
            self.conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")))?;
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
