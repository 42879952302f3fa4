//! A POP3 client (RFC 1939, USER/PASS login) for reading test messages back and deleting
//! them, as a mail client that downloads its mailbox does.
//!
//! ```text
//!  open ──► +OK greeting     login ──► USER ──► +OK ──► PASS ──► +OK
//!  STAT | UIDL | RETR n | TOP n k | DELE n      QUIT ──► +OK (deletions committed)
//! ```
//!
//! Commands go one at a time unless the caller says the server pipelines ([`Pop3Client::pipeline`],
//! from the PIPELINING capability of RFC 2449 that [`Pop3Client::capa`] reads): then each
//! RETR goes with its DELE in one write, as a client that knows its server does, saving a
//! round trip a message. A multi-line answer ends
//! with a line that is exactly `.`; other lines starting with `.` carry an extra one,
//! removed here, so RETR gives back the message's bytes with CRLF line endings.
//!
//! TLS ([`Endpoint`]'s security): POP3S does the handshake before the greeting; STARTTLS is
//! POP3's STLS (RFC 2595), sent after the greeting once CAPA has listed it.

use super::endpoint::{Endpoint, Security};
use super::wire::{MailError, Wire};
use std::io;
use std::time::{Duration, Instant};

/// A connection to a POP3 server.
pub struct Pop3Client {
    wire: Wire,
    /// Set on an I/O or protocol error: replies could no longer be matched to commands.
    broken: bool,
    /// The command being sent, reused.
    out: Vec<u8>,
    /// Whether commands that do not depend on each other's answers go in one write.
    pipelining: bool,
}

impl Pop3Client {
    /// Connects and reads the `+OK` greeting, with TLS as the endpoint says: the handshake
    /// first (POP3S), or CAPA and STLS after the greeting.
    pub fn open(endpoint: &Endpoint, timeout: Duration) -> Result<Pop3Client, MailError> {
        let mut wire = Wire::connect(endpoint.addr, timeout)?;
        if endpoint.security == Security::Implicit {
            wire.start_tls(&endpoint.host, &endpoint.trust)?;
        }
        let mut client = Pop3Client {
            wire,
            broken: false,
            out: Vec::with_capacity(256),
            pipelining: false,
        };
        let greeting = read_status(&mut client.wire).map(|_| ());
        client.check(greeting)?;
        if endpoint.security == Security::StartTls {
            let capa = client.capa()?;
            if !capa.iter().any(|c| c.eq_ignore_ascii_case("STLS")) {
                return Err(MailError::Refused(
                    "the server does not offer STARTTLS (no STLS in CAPA)".into(),
                ));
            }
            let asked = Instant::now();
            client.simple(&["STLS"])?;
            let r = client
                .wire
                .start_tls_asked(&endpoint.host, &endpoint.trust, asked);
            client.check(r)?;
        }
        Ok(client)
    }

    /// The connection (its TLS: [`Wire::tls_time`], [`Wire::tls_resumed`]).
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    /// CAPA (RFC 2449): the server's capabilities, one per line (`PIPELINING`, `UIDL` ...).
    pub fn capa(&mut self) -> Result<Vec<String>, MailError> {
        self.command(&["CAPA"])?;
        let mut lines = Vec::new();
        let r = read_status(&mut self.wire)
            .map(|_| ())
            .and_then(|()| read_block(&mut self.wire, &mut lines));
        self.check(r)?;
        Ok(String::from_utf8_lossy(&lines)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect())
    }

    /// Pipelines from here on: only for a server that advertised PIPELINING.
    pub fn pipeline(&mut self, on: bool) {
        self.pipelining = on;
    }

    /// USER then PASS, one at a time even when pipelining: the server's two answers come
    /// as two small writes, and the second would wait for the client's delayed ACK of the
    /// first (Nagle against delayed ACK: 40 ms a login, seen with Dovecot).
    pub fn login(&mut self, user: &str, password: &str) -> Result<(), MailError> {
        self.simple(&["USER ", user])?;
        self.simple(&["PASS ", password])
    }

    /// RETR n and, when `dele`, DELE n after it (in one write when pipelining): the message
    /// into `out` as [`Pop3Client::retr`] gives it, and when its answer was complete (the
    /// DELE's answer comes after).
    pub fn retr_dele(
        &mut self,
        n: u32,
        dele: bool,
        out: &mut Vec<u8>,
    ) -> Result<(usize, Instant), MailError> {
        if !(self.pipelining && dele) {
            let size = self.retr(n, out)?;
            let at = Instant::now();
            if dele {
                self.dele(n)?;
            }
            return Ok((size, at));
        }
        let number = n.to_string();
        self.queue(&["RETR ", &number], true)?;
        self.queue(&["DELE ", &number], false)?;
        self.flush()?;
        let retr = read_status(&mut self.wire)
            .map(|_| ())
            .and_then(|()| read_block(&mut self.wire, out));
        let retr = match retr {
            Err(MailError::Refused(r)) => Err(MailError::Refused(r)),
            other => self.check(other),
        };
        let at = Instant::now();
        let dele = read_status(&mut self.wire).map(|_| ());
        let dele = self.check(dele);
        let size = retr?;
        dele.map(|()| (size, at))
    }

    /// STAT: the number of messages and their total size in octets.
    pub fn stat(&mut self) -> Result<(u32, u64), MailError> {
        self.command(&["STAT"])?;
        let r = read_status(&mut self.wire).and_then(|line| {
            let mut words = line.split(|&b| b == b' ').skip(1);
            match (number(words.next()), number(words.next())) {
                (Some(count), Some(octets)) if count <= u64::from(u32::MAX) => {
                    Ok((count as u32, octets))
                }
                _ => Err(MailError::unexpected("+OK count octets", line)),
            }
        });
        self.check(r)
    }

    /// UIDL: every message's number and unique id.
    pub fn uidl(&mut self) -> Result<Vec<(u32, String)>, MailError> {
        self.command(&["UIDL"])?;
        let r = read_status(&mut self.wire).map(|_| ()).and_then(|()| {
            let mut ids = Vec::new();
            loop {
                let line = self.wire.line()?;
                if line == b"." {
                    return Ok(ids);
                }
                let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
                match (number(words.next()), words.next()) {
                    (Some(n), Some(id)) if n <= u64::from(u32::MAX) => {
                        ids.push((n as u32, String::from_utf8_lossy(id).into_owned()));
                    }
                    _ => return Err(MailError::unexpected("a message number and id", line)),
                }
            }
        });
        self.check(r)
    }

    /// RETR n: the message, dot-unstuffed, lines ending in CRLF, into `out` (cleared
    /// first). Returns its size.
    pub fn retr(&mut self, n: u32, out: &mut Vec<u8>) -> Result<usize, MailError> {
        self.command(&["RETR ", &n.to_string()])?;
        let r = read_status(&mut self.wire)
            .map(|_| ())
            .and_then(|()| read_block(&mut self.wire, out));
        self.check(r)
    }

    /// TOP n lines: the headers and the first `lines` lines of the body, into `out`.
    pub fn top(&mut self, n: u32, lines: u32, out: &mut Vec<u8>) -> Result<usize, MailError> {
        self.command(&["TOP ", &n.to_string(), " ", &lines.to_string()])?;
        let r = read_status(&mut self.wire)
            .map(|_| ())
            .and_then(|()| read_block(&mut self.wire, out));
        self.check(r)
    }

    /// DELE n: marks the message deleted (done at QUIT).
    pub fn dele(&mut self, n: u32) -> Result<(), MailError> {
        self.simple(&["DELE ", &n.to_string()])
    }

    /// QUIT: commits the deletions. An error means they may not have been.
    pub fn quit(mut self) -> Result<(), MailError> {
        self.simple(&["QUIT"])
    }

    /// Bytes read and written on this connection.
    pub fn bytes(&self) -> (u64, u64) {
        (self.wire.bytes_in(), self.wire.bytes_out())
    }

    /// A command whose answer is one status line.
    fn simple(&mut self, parts: &[&str]) -> Result<(), MailError> {
        self.command(parts)?;
        let r = read_status(&mut self.wire).map(|_| ());
        self.check(r)
    }

    fn command(&mut self, parts: &[&str]) -> Result<(), MailError> {
        self.queue(parts, true)?;
        self.flush()
    }

    /// Adds a command to the ones to send (`first`: the buffer starts afresh).
    fn queue(&mut self, parts: &[&str], first: bool) -> Result<(), MailError> {
        if self.broken {
            return Err(MailError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection broke earlier in this session",
            )));
        }
        if first {
            self.out.clear();
        }
        for p in parts {
            if p.bytes().any(|b| b == b'\r' || b == b'\n') {
                return Err(MailError::Protocol("CR or LF in a command argument".into()));
            }
            self.out.extend_from_slice(p.as_bytes());
        }
        self.out.extend_from_slice(b"\r\n");
        Ok(())
    }

    fn flush(&mut self) -> Result<(), MailError> {
        let sent = self.wire.send(&self.out);
        self.check(sent)
    }

    fn check<T>(&mut self, r: Result<T, MailError>) -> Result<T, MailError> {
        if let Err(MailError::Io(_) | MailError::Protocol(_)) = &r {
            self.broken = true;
        }
        r
    }
}

/// A status line: `+OK ...` is returned, `-ERR ...` is a refusal, anything else an error.
fn read_status(wire: &mut Wire) -> Result<&[u8], MailError> {
    let line = wire.line()?;
    if line.starts_with(b"+OK") {
        Ok(line)
    } else if line.starts_with(b"-ERR") {
        Err(MailError::refused(line))
    } else {
        Err(MailError::unexpected("+OK or -ERR", line))
    }
}

/// A multi-line answer's body up to the `.` line, unstuffed, into `out`; returns its size.
fn read_block(wire: &mut Wire, out: &mut Vec<u8>) -> Result<usize, MailError> {
    out.clear();
    loop {
        let line = wire.line()?;
        match line {
            b"." => return Ok(out.len()),
            [b'.', rest @ ..] => out.extend_from_slice(rest),
            _ => out.extend_from_slice(line),
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// A decimal number (at most 19 digits, so it cannot overflow).
fn number(word: Option<&[u8]>) -> Option<u64> {
    let word = word?;
    if word.is_empty() || word.len() > 19 || !word.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(word.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::super::wire::scripted_server;
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number(Some(b"42")), Some(42));
        assert_eq!(number(Some(b"")), None);
        assert_eq!(number(Some(b"4x")), None);
        assert_eq!(number(Some(b"99999999999999999999")), None);
        assert_eq!(number(None), None);
    }

    #[test]
    fn a_pipelining_session_sends_dependent_pairs_in_one_write() {
        let (addr, server) = scripted_server(
            b"+OK ready\r\n+OK\r\nPIPELINING\r\nUIDL\r\n.\r\n+OK\r\n+OK in\r\n\
              +OK 3 octets\r\nA\r\n.\r\n+OK deleted\r\n+OK 1 octets\r\nB\r\n.\r\n-ERR no\r\n+OK bye\r\n"
                .to_vec(),
            3,
        );
        let mut c = Pop3Client::open(&Endpoint::plain(addr), Duration::from_secs(5)).expect("open");
        let capa = c.capa().expect("capa");
        assert!(capa.iter().any(|l| l == "PIPELINING"), "{capa:?}");
        c.pipeline(true);
        c.login("u", "p").expect("login");
        let mut msg = Vec::new();
        assert_eq!(c.retr_dele(1, true, &mut msg).expect("retr").0, 3);
        assert_eq!(msg, b"A\r\n");
        // A refused DELE after a good RETR: the answers stay in step.
        assert!(matches!(
            c.retr_dele(2, true, &mut msg),
            Err(MailError::Refused(_))
        ));
        assert_eq!(msg, b"B\r\n");
        c.quit().expect("quit");
        let sent = server.join().expect("server");
        assert_eq!(
            String::from_utf8_lossy(&sent),
            "CAPA\r\nUSER u\r\nPASS p\r\nRETR 1\r\nDELE 1\r\nRETR 2\r\nDELE 2\r\nQUIT\r\n"
        );
    }

    #[test]
    fn stls_needs_the_capability() {
        let (addr, server) = scripted_server(b"+OK ready\r\n+OK\r\nUIDL\r\n.\r\n".to_vec(), 64);
        let mut e = Endpoint::plain(addr);
        e.security = Security::StartTls;
        match Pop3Client::open(&e, Duration::from_secs(5)) {
            Err(MailError::Refused(why)) => assert!(why.contains("STARTTLS"), "{why}"),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("opened without STLS"),
        }
        assert_eq!(server.join().expect("server"), b"CAPA\r\n");
    }

    #[test]
    fn session() {
        let (addr, server) = scripted_server(
            b"+OK ready\r\n+OK\r\n+OK logged in\r\n+OK 2 320\r\n\
              +OK\r\n1 abc\r\n2 def\r\n.\r\n\
              +OK 9 octets\r\nA: b\r\n\r\n..dot\r\n...\r\nend\n.\r\n\
              -ERR [IN-USE] no such message\r\n+OK bye\r\n"
                .to_vec(),
            4,
        );
        let mut c = Pop3Client::open(&Endpoint::plain(addr), Duration::from_secs(5)).expect("open");
        c.login("u", "p").expect("login");
        assert_eq!(c.stat().expect("stat"), (2, 320));
        assert_eq!(
            c.uidl().expect("uidl"),
            vec![(1, "abc".into()), (2, "def".into())]
        );
        let mut msg = b"old".to_vec();
        assert_eq!(c.retr(1, &mut msg).expect("retr"), 23);
        assert_eq!(msg, b"A: b\r\n\r\n.dot\r\n..\r\nend\r\n");
        match c.dele(7) {
            Err(MailError::Refused(line)) => assert_eq!(line, "-ERR [IN-USE] no such message"),
            other => panic!("{other:?}"),
        }
        c.quit().expect("quit");
        let sent = server.join().expect("server");
        assert_eq!(
            String::from_utf8_lossy(&sent),
            "USER u\r\nPASS p\r\nSTAT\r\nUIDL\r\nRETR 1\r\nDELE 7\r\nQUIT\r\n"
        );
    }
}
