//! An SMTP (RFC 5321) and LMTP (RFC 2033) client for delivering test messages, pipelining
//! the envelope (RFC 2920) when the server advertises PIPELINING.
//!
//! ```text
//!  open ──► 220 greeting            hello ──► EHLO | LHLO ──► 250-... 250 (PIPELINING?)
//!  envelope ──► MAIL FROM, RCPT TO x n, DATA   (one write when pipelining, else one by one)
//!           ◄── 250, 250|5xx x n, 354
//!  data ──► dot-stuffed message + ".\r\n"
//!       ◄── SMTP: one reply for all accepted recipients; LMTP: one reply per accepted recipient
//! ```
//!
//! The outcome is per recipient ([`Delivery`]), because that is what a delivery benchmark
//! has to account for: LMTP can accept a message for one mailbox and refuse it for another,
//! and a connection that breaks after the message was sent leaves its fate unknown
//! ([`Delivery::InDoubt`]), which is neither a success nor a loss. After such a break the
//! client refuses further use, since replies could no longer be matched to commands.
//!
//! TLS ([`Endpoint`]'s security): SMTPS does the handshake before the greeting; STARTTLS
//! (RFC 3207, for SMTP and LMTP alike) happens in [`SmtpClient::hello`]: EHLO or LHLO, the
//! extensions must list STARTTLS, STARTTLS and its 220, the handshake, then EHLO or LHLO
//! again, whose extensions replace those learnt in the clear.

use super::endpoint::{Endpoint, Security};
use super::wire::{MailError, Wire, dot_stuff, excerpt};
use crate::target::tls::Trust;
use std::io;
use std::time::{Duration, Instant};

/// Which of the two protocols to speak: they differ in the greeting verb and in LMTP's
/// per-recipient replies after DATA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Smtp,
    Lmtp,
}

/// What happened to one recipient of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The server took responsibility for it.
    Accepted,
    /// Refused at RCPT or (LMTP) after DATA, with the server's line; 4xx or 5xx.
    Refused(String),
    /// The connection broke or timed out before this recipient's final reply: the server
    /// may or may not have it.
    InDoubt,
}

/// The answer to an envelope: per recipient whether RCPT was accepted, and whether the
/// server is now waiting for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// Per recipient, in order: accepted, or the server's RCPT reply.
    pub recipients: Vec<Result<(), String>>,
    /// DATA got 354: [`SmtpClient::data`] may send the message.
    pub ready: bool,
}

impl Envelope {
    /// Recipients accepted at RCPT.
    pub fn accepted(&self) -> usize {
        self.recipients.iter().filter(|r| r.is_ok()).count()
    }
}

/// A reply's code (`250`) and, kept in the client, its last line.
type Code = u16;

/// A connection to an SMTP or LMTP server.
pub struct SmtpClient {
    wire: Wire,
    dialect: Dialect,
    pipelining: bool,
    /// Set when replies can no longer be matched to commands (a break mid-exchange).
    broken: bool,
    /// The last reply's final line, for refusals.
    last: Vec<u8>,
    /// Commands and the stuffed message, reused from message to message.
    out: Vec<u8>,
    /// Whether the last EHLO or LHLO listed STARTTLS.
    offers_starttls: bool,
    /// The name for the STARTTLS handshake [`SmtpClient::hello`] still has to do.
    starttls_pending: Option<(String, Trust)>,
}

impl SmtpClient {
    /// Connects, reads the greeting, and says EHLO or LHLO (upgrading by STARTTLS first if
    /// the endpoint says so).
    pub fn connect(
        endpoint: &Endpoint,
        dialect: Dialect,
        helo_name: &str,
        timeout: Duration,
    ) -> Result<SmtpClient, MailError> {
        let mut client = SmtpClient::open(endpoint, dialect, timeout)?;
        client.hello(helo_name)?;
        Ok(client)
    }

    /// Connects and reads the 220 greeting (a separate step so that it can be timed); with
    /// implicit TLS (SMTPS), the handshake comes first. STARTTLS waits for
    /// [`SmtpClient::hello`].
    pub fn open(
        endpoint: &Endpoint,
        dialect: Dialect,
        timeout: Duration,
    ) -> Result<SmtpClient, MailError> {
        let mut wire = Wire::connect(endpoint.addr, timeout)?;
        if endpoint.security == Security::Implicit {
            wire.start_tls(&endpoint.host, &endpoint.trust)?;
        }
        let mut client = SmtpClient {
            wire,
            dialect,
            pipelining: false,
            broken: false,
            last: Vec::new(),
            out: Vec::with_capacity(4096),
            offers_starttls: false,
            starttls_pending: (endpoint.security == Security::StartTls)
                .then(|| (endpoint.host.clone(), endpoint.trust.clone())),
        };
        client.expect(2, |_| {})?;
        Ok(client)
    }

    /// EHLO (SMTP) or LHLO (LMTP), noting whether the server offers PIPELINING. For a
    /// STARTTLS endpoint: then STARTTLS (refused if the server does not list it), the
    /// handshake, and EHLO or LHLO again, whose extensions are the ones kept.
    pub fn hello(&mut self, helo_name: &str) -> Result<(), MailError> {
        self.greet(helo_name)?;
        let Some((host, trust)) = self.starttls_pending.take() else {
            return Ok(());
        };
        if !self.offers_starttls {
            return Err(MailError::Refused(
                "the server does not offer STARTTLS".into(),
            ));
        }
        let started = Instant::now();
        self.command(&["STARTTLS"])?;
        let code = self.expect(2, |_| {})?;
        if code != 220 {
            return self.check(Err(MailError::unexpected("220 to STARTTLS", &self.last)));
        }
        let r = self.wire.start_tls_asked(&host, &trust, started);
        self.check(r)?;
        // RFC 3207: what the server said in the clear is forgotten; it is asked again.
        self.pipelining = false;
        self.offers_starttls = false;
        self.greet(helo_name)
    }

    /// EHLO or LHLO and its extensions.
    fn greet(&mut self, helo_name: &str) -> Result<(), MailError> {
        let verb = match self.dialect {
            Dialect::Smtp => "EHLO",
            Dialect::Lmtp => "LHLO",
        };
        self.command(&[verb, " ", helo_name])?;
        let (mut pipelining, mut starttls) = (false, false);
        self.expect(2, |text| {
            // Each extension line is a keyword then parameters: "250-PIPELINING".
            let keyword = text.split(|&b| b == b' ').next().unwrap_or_default();
            pipelining |= keyword.eq_ignore_ascii_case(b"PIPELINING");
            starttls |= keyword.eq_ignore_ascii_case(b"STARTTLS");
        })?;
        self.pipelining = pipelining;
        self.offers_starttls = starttls;
        Ok(())
    }

    /// Whether the server advertised PIPELINING.
    pub fn pipelining(&self) -> bool {
        self.pipelining
    }

    /// Whether the last EHLO or LHLO listed STARTTLS.
    pub fn offers_starttls(&self) -> bool {
        self.offers_starttls
    }

    /// The connection (its TLS: [`Wire::tls_time`], [`Wire::tls_resumed`]).
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    /// Bytes read and written on this connection.
    pub fn bytes(&self) -> (u64, u64) {
        (self.wire.bytes_in(), self.wire.bytes_out())
    }

    /// MAIL FROM, RCPT TO for each recipient, DATA: in one write with PIPELINING, else one
    /// at a time. A refused MAIL is an error; a refused DATA too unless no recipient was
    /// accepted, which the returned envelope shows (and then the message must not be sent).
    pub fn envelope(&mut self, from: &str, recipients: &[&str]) -> Result<Envelope, MailError> {
        self.usable()?;
        let mut envelope = Envelope {
            recipients: Vec::with_capacity(recipients.len()),
            ready: false,
        };
        if self.pipelining {
            self.out.clear();
            add_command(&mut self.out, &["MAIL FROM:<", from, ">"])?;
            for r in recipients {
                add_command(&mut self.out, &["RCPT TO:<", r, ">"])?;
            }
            add_command(&mut self.out, &["DATA"])?;
            let sent = self.wire.send(&self.out);
            self.check(sent)?;
            // Every command gets a reply, whatever became of the earlier ones.
            let mail = self.reply(|_| {})?;
            let mail_refused = (mail / 100 != 2).then(|| excerpt(&self.last));
            for _ in recipients {
                let code = self.reply(|_| {})?;
                envelope.recipients.push(rcpt_result(code, &self.last));
            }
            let data = self.reply(|_| {})?;
            envelope.ready = data == 354;
            if envelope.ready && (mail_refused.is_some() || envelope.accepted() == 0) {
                // A server should not say 354 here, but if it does, end an empty message
                // so that the connection stays in step; nothing is delivered to nobody.
                envelope.ready = false;
                self.send_checked(b".\r\n")?;
                self.reply(|_| {})?;
            }
            if let Some(line) = mail_refused {
                return Err(MailError::Refused(line));
            }
            if envelope.accepted() > 0 && !envelope.ready {
                return Err(MailError::refused(&self.last));
            }
            Ok(envelope)
        } else {
            self.command(&["MAIL FROM:<", from, ">"])?;
            self.expect(2, |_| {})?;
            for r in recipients {
                self.command(&["RCPT TO:<", r, ">"])?;
                let code = self.reply(|_| {})?;
                envelope.recipients.push(rcpt_result(code, &self.last));
            }
            if envelope.accepted() == 0 {
                return Ok(envelope);
            }
            self.command(&["DATA"])?;
            self.expect(3, |_| {})?;
            envelope.ready = true;
            Ok(envelope)
        }
    }

    /// Sends the message (dot-stuffed here) and reads the final replies: one for SMTP, one
    /// per accepted recipient for LMTP. Returns a delivery per recipient of the envelope.
    /// Replies that never come (a break or timeout) leave their recipients in doubt, and
    /// the client broken.
    pub fn data(
        &mut self,
        envelope: &Envelope,
        message: &[u8],
    ) -> Result<Vec<Delivery>, MailError> {
        self.usable()?;
        if !envelope.ready {
            return Err(MailError::Protocol(
                "the server did not accept DATA: no message to send".into(),
            ));
        }
        self.out.clear();
        dot_stuff(message, &mut self.out);
        // The terminating ".\r\n" goes last, so a failed write means the server cannot
        // have a complete message: an error, not a delivery in doubt.
        let sent = self.wire.send(&self.out);
        self.check(sent)?;
        let mut deliveries: Vec<Delivery> = envelope
            .recipients
            .iter()
            .map(|r| match r {
                Ok(()) => Delivery::InDoubt,
                Err(line) => Delivery::Refused(line.clone()),
            })
            .collect();
        let replies = match self.dialect {
            Dialect::Smtp => 1,
            Dialect::Lmtp => envelope.accepted(),
        };
        let mut pending = envelope
            .recipients
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_ok())
            .map(|(i, _)| i);
        for _ in 0..replies {
            // A break here is no error for the call: the deliveries say what is known.
            let Ok(code) = self.reply(|_| {}) else {
                return Ok(deliveries);
            };
            let outcome = if code / 100 == 2 {
                Delivery::Accepted
            } else {
                Delivery::Refused(excerpt(&self.last))
            };
            match self.dialect {
                Dialect::Lmtp => {
                    if let Some(d) = pending.next().and_then(|i| deliveries.get_mut(i)) {
                        *d = outcome;
                    }
                }
                Dialect::Smtp => {
                    for i in pending.by_ref() {
                        if let Some(d) = deliveries.get_mut(i) {
                            *d = outcome.clone();
                        }
                    }
                }
            }
        }
        Ok(deliveries)
    }

    /// RSET, to reuse the connection after a failed envelope.
    pub fn reset(&mut self) -> Result<(), MailError> {
        self.usable()?;
        self.command(&["RSET"])?;
        self.expect(2, |_| {})?;
        Ok(())
    }

    /// QUIT and its 221; errors are ignored, as every message is already accounted for.
    pub fn quit(mut self) {
        if self.usable().is_ok() && self.command(&["QUIT"]).is_ok() {
            let _ = self.reply(|_| {});
        }
    }

    /// Fails fast once the connection is out of step.
    fn usable(&self) -> Result<(), MailError> {
        if self.broken {
            return Err(MailError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection broke earlier in this session",
            )));
        }
        Ok(())
    }

    /// Marks the client broken on an I/O or protocol error.
    fn check<T>(&mut self, r: Result<T, MailError>) -> Result<T, MailError> {
        if let Err(MailError::Io(_) | MailError::Protocol(_)) = &r {
            self.broken = true;
        }
        r
    }

    fn send_checked(&mut self, bytes: &[u8]) -> Result<(), MailError> {
        let sent = self.wire.send(bytes);
        self.check(sent)
    }

    /// Sends one command made of `parts`, with its CRLF.
    fn command(&mut self, parts: &[&str]) -> Result<(), MailError> {
        self.out.clear();
        add_command(&mut self.out, parts)?;
        let sent = self.wire.send(&self.out);
        self.check(sent)
    }

    /// Reads a reply and requires its first digit to be `class` (2 or 3): else `Refused`.
    fn expect(&mut self, class: Code, each: impl FnMut(&[u8])) -> Result<Code, MailError> {
        let code = self.reply(each)?;
        if code / 100 != class {
            return Err(MailError::refused(&self.last));
        }
        Ok(code)
    }

    /// Reads one reply, possibly multi-line; `each` gets every line's text after the code.
    fn reply(&mut self, each: impl FnMut(&[u8])) -> Result<Code, MailError> {
        let r = read_reply(&mut self.wire, &mut self.last, each);
        self.check(r)
    }
}

/// RCPT's reply as the envelope keeps it.
fn rcpt_result(code: Code, line: &[u8]) -> Result<(), String> {
    if code / 100 == 2 {
        Ok(())
    } else {
        Err(excerpt(line))
    }
}

/// Appends `parts` and CRLF to `out`; a CR or LF inside would inject a command.
fn add_command(out: &mut Vec<u8>, parts: &[&str]) -> Result<(), MailError> {
    for p in parts {
        if p.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(MailError::Protocol(format!(
                "CR or LF in a command argument: {p:?}"
            )));
        }
        out.extend_from_slice(p.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Reads one reply (`250-a`, `250-b`, `250 c`): returns its code, leaves its last line in
/// `last`. Lines must start with three digits then `-` (more follow), a space or nothing.
fn read_reply(
    wire: &mut Wire,
    last: &mut Vec<u8>,
    mut each: impl FnMut(&[u8]),
) -> Result<Code, MailError> {
    loop {
        let line = wire.line()?;
        let (code, more) = parse_reply_line(line)?;
        each(line.get(4..).unwrap_or_default());
        if !more {
            last.clear();
            last.extend_from_slice(line);
            return Ok(code);
        }
    }
}

/// A reply line's code and whether more lines follow.
fn parse_reply_line(line: &[u8]) -> Result<(Code, bool), MailError> {
    let code = match line.get(..3) {
        Some(&[a @ b'2'..=b'5', b @ b'0'..=b'9', c @ b'0'..=b'9']) => {
            Code::from(a - b'0') * 100 + Code::from(b - b'0') * 10 + Code::from(c - b'0')
        }
        _ => return Err(MailError::unexpected("a reply code", line)),
    };
    match line.get(3) {
        None | Some(b' ') => Ok((code, false)),
        Some(b'-') => Ok((code, true)),
        Some(_) => Err(MailError::unexpected("a reply code", line)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::scripted_server;
    use super::*;
    use std::thread::JoinHandle;

    #[test]
    fn reply_lines() {
        assert_eq!(parse_reply_line(b"250-PIPELINING").unwrap(), (250, true));
        assert_eq!(parse_reply_line(b"250 OK").unwrap(), (250, false));
        assert_eq!(parse_reply_line(b"354").unwrap(), (354, false));
        assert!(parse_reply_line(b"25").is_err());
        assert!(parse_reply_line(b"250x").is_err());
        assert!(parse_reply_line(b"650 what").is_err());
        assert!(parse_reply_line(b"+OK").is_err());
    }

    fn client(script: &[u8], dialect: Dialect) -> (SmtpClient, JoinHandle<Vec<u8>>) {
        let (addr, server) = scripted_server(script.to_vec(), 5);
        let c = SmtpClient::connect(
            &Endpoint::plain(addr),
            dialect,
            "perflab",
            Duration::from_secs(5),
        );
        (c.expect("connect"), server)
    }

    #[test]
    fn lmtp_replies_per_recipient() {
        let (mut c, server) = client(
            b"220 lmtp ready\r\n250-host\r\n250-PIPELINING\r\n250 8BITMIME\r\n\
              250 2.1.0 OK\r\n250 2.1.5 OK\r\n550 5.1.1 <b@x> User doesn't exist\r\n\
              250 2.1.5 OK\r\n354 go\r\n250 2.0.0 <a@x> Saved\r\n452 4.2.2 <c@x> Quota\r\n",
            Dialect::Lmtp,
        );
        assert!(c.pipelining());
        let env = c.envelope("s@x", &["a@x", "b@x", "c@x"]).expect("envelope");
        assert_eq!(env.accepted(), 2);
        assert!(env.ready);
        let d = c.data(&env, b"Subject: t\r\n\r\n.body").expect("data");
        assert_eq!(d[0], Delivery::Accepted);
        assert_eq!(
            d[1],
            Delivery::Refused("550 5.1.1 <b@x> User doesn't exist".into())
        );
        assert_eq!(d[2], Delivery::Refused("452 4.2.2 <c@x> Quota".into()));
        drop(c);
        let sent = server.join().expect("server");
        assert_eq!(
            String::from_utf8_lossy(&sent),
            "LHLO perflab\r\nMAIL FROM:<s@x>\r\nRCPT TO:<a@x>\r\nRCPT TO:<b@x>\r\n\
             RCPT TO:<c@x>\r\nDATA\r\nSubject: t\r\n\r\n..body\r\n.\r\n"
        );
    }

    #[test]
    fn smtp_in_doubt_after_a_break() {
        let (mut c, _server) = client(
            b"220 hi\r\n250 host\r\n250 ok\r\n250 ok\r\n550 no\r\n354 go\r\n",
            Dialect::Smtp,
        );
        assert!(!c.pipelining());
        let env = c.envelope("s@x", &["a@x", "b@x"]).expect("envelope");
        c.wire
            .set_read_timeout(Duration::from_millis(50))
            .expect("timeout");
        let d = c.data(&env, b"x").expect("deliveries");
        assert_eq!(
            d,
            vec![Delivery::InDoubt, Delivery::Refused("550 no".into())]
        );
        assert!(c.reset().is_err(), "a broken client must not be reused");
    }

    #[test]
    fn starttls_must_be_listed_and_answered_220() {
        let starttls = |script: &[u8]| {
            let (addr, server) = scripted_server(script.to_vec(), 64);
            let mut e = Endpoint::plain(addr);
            e.security = Security::StartTls;
            let r = SmtpClient::connect(&e, Dialect::Lmtp, "perflab", Duration::from_secs(5));
            (r.map(|_| ()), server.join().expect("server"))
        };
        let (r, sent) = starttls(b"220 hi\r\n250-host\r\n250 PIPELINING\r\n");
        match r {
            Err(MailError::Refused(why)) => assert!(why.contains("STARTTLS"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(sent, b"LHLO perflab\r\n");
        let (r, sent) = starttls(b"220 hi\r\n250-host\r\n250 STARTTLS\r\n250 not now\r\n");
        assert!(matches!(r, Err(MailError::Protocol(_))), "{r:?}");
        assert_eq!(sent, b"LHLO perflab\r\nSTARTTLS\r\n");
    }

    #[test]
    fn no_recipient_with_pipelining() {
        let (mut c, _server) = client(
            b"220 hi\r\n250-host\r\n250 PIPELINING\r\n250 ok\r\n550 no\r\n554 no valid recipients\r\n250 reset\r\n",
            Dialect::Smtp,
        );
        let env = c.envelope("s@x", &["a@x"]).expect("envelope");
        assert_eq!((env.accepted(), env.ready), (0, false));
        assert!(c.data(&env, b"x").is_err());
        c.reset().expect("still in step");
    }
}
