//! A client for the part of IMAP4rev1 (RFC 3501) a mail benchmark uses: LOGIN, SELECT or
//! EXAMINE, UID SEARCH, UID FETCH, UID STORE, EXPUNGE, NOOP, IDLE (RFC 2177) and LOGOUT,
//! aware of LITERAL+ (RFC 7888) for sending.
//!
//! ```text
//!  open ──► * OK [CAPABILITY ...]        command ──► aN VERB args ──► * ... (any number)
//!                                                                 ◄── aN OK | NO | BAD
//!  a response: one line, or several when it holds literals: ... {n}\r\n<n bytes> ... \r\n
//!  idle_start ──► aN IDLE ◄── + ;  idle_wait ◄── * n EXISTS | * n EXPUNGE | ... ;  idle_done ──► DONE ◄── aN OK
//! ```
//!
//! The response reader is our own rather than imap-codec's: we need a handful of responses,
//! literal framing exact to the byte (a message's bytes are compared after the round trip),
//! and no allocation per token on the hot path. A response is assembled in one reused buffer
//! with its literals inline, exactly as they came on the wire (`{n}`, CRLF, `n` bytes), and a
//! lexer hands out tokens as slices of it: atoms (with `[...]` sections kept whole), quoted
//! strings (unescaped only when kept), literals (`{n}` or `{n+}`) and parentheses. Only what
//! is kept (flags, sections) is copied out.
//!
//! Unsolicited responses (EXISTS, EXPUNGE, RECENT, FETCH of flags) are accepted anywhere, as
//! the RFC requires of clients; an untagged BYE other than at LOGOUT ends the session with a
//! refusal. A tagged NO or BAD is a refusal quoting the server's line.
//!
//! TLS ([`Endpoint`]'s security): IMAPS does the handshake before the greeting; STARTTLS
//! (RFC 3501 6.2.1, RFC 2595) checks that CAPABILITY lists it, sends it, does the handshake
//! on its OK, and forgets the capabilities learnt in the clear (the server lists them again
//! at LOGIN, or CAPABILITY is asked when needed).

use super::endpoint::{Endpoint, Security};
use super::wire::{MailError, Wire};
use crate::target::tls::Trust;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::time::{Duration, Instant};

/// Bound on one response with its literals: a few literals at [`super::wire::MAX_EXACT`].
const MAX_RESPONSE: usize = 512 << 20;

/// What SELECT or EXAMINE reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub exists: u32,
    /// 0 when the server did not say.
    pub uidvalidity: u32,
    /// 0 when the server did not say.
    pub uidnext: u32,
}

/// One message of a FETCH response.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub seq: u32,
    pub uid: Option<u32>,
    /// RFC822.SIZE.
    pub size: Option<u64>,
    /// FLAGS (...).
    pub flags: Option<Vec<String>>,
    /// BODY[...] sections in the order received: the section as the server named it,
    /// uppercased, without `BODY` (`[HEADER.FIELDS (X-PERFLAB-TOKEN)]`, `[]`, `[TEXT]`;
    /// RFC822, RFC822.HEADER and RFC822.TEXT keep their names), and its bytes (NIL: empty).
    pub sections: Vec<(String, Vec<u8>)>,
}

/// What IDLE saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleEvent {
    Exists(u32),
    Expunge(u32),
    Other,
    Timeout,
}

/// Where a command's untagged data goes.
enum Sink<'a> {
    Ignore,
    Fetch(&'a mut Vec<Fetched>),
    Search(&'a mut Vec<u32>),
}

/// One argument of a command: sent as it is (the caller's IMAP syntax), or as a string
/// (quoted, or a literal when quoting cannot carry it).
enum Arg<'a> {
    Raw(&'a str),
    Str(&'a str),
}

/// What one response was.
enum Step {
    Continuation,
    Untagged(IdleEvent),
    /// The tagged OK of the command in progress.
    Done,
}

/// A connection to an IMAP server.
pub struct ImapClient {
    wire: Wire,
    timeout: Duration,
    next_tag: u32,
    /// The tag of the command in progress (`a12`).
    tag: String,
    /// The response being handled, literals inline.
    resp: Vec<u8>,
    out: Vec<u8>,
    /// CAPABILITY, uppercased; `caps_known` once the server has said.
    caps: Vec<String>,
    caps_known: bool,
    /// Set on an I/O or protocol error: responses could no longer be matched to commands.
    broken: bool,
    idling: bool,
    logging_out: bool,
    /// Seen during the current command.
    exists: Option<u32>,
    expunged: u32,
    uidvalidity: u32,
    uidnext: u32,
}

impl ImapClient {
    /// Connects and reads the greeting (`* OK` or `* PREAUTH`; `* BYE` is a refusal), with
    /// TLS as the endpoint says: the handshake first (IMAPS), or STARTTLS after the greeting.
    pub fn open(endpoint: &Endpoint, timeout: Duration) -> Result<ImapClient, MailError> {
        let mut wire = Wire::connect(endpoint.addr, timeout)?;
        if endpoint.security == Security::Implicit {
            wire.start_tls(&endpoint.host, &endpoint.trust)?;
        }
        let mut client = ImapClient {
            wire,
            timeout,
            next_tag: 0,
            tag: String::new(),
            resp: Vec::with_capacity(4096),
            out: Vec::with_capacity(256),
            caps: Vec::new(),
            caps_known: false,
            broken: false,
            idling: false,
            logging_out: false,
            exists: None,
            expunged: 0,
            uidvalidity: 0,
            uidnext: 0,
        };
        client.read_response()?;
        let resp = std::mem::take(&mut client.resp);
        let greeting = match split_word(resp.strip_prefix(b"* ").unwrap_or_default()).0 {
            w if w.eq_ignore_ascii_case(b"OK") || w.eq_ignore_ascii_case(b"PREAUTH") => {
                client.handle(&resp, &mut Sink::Ignore).map(|_| ())
            }
            w if w.eq_ignore_ascii_case(b"BYE") => Err(MailError::refused(&resp)),
            _ => Err(MailError::unexpected("* OK greeting", &resp)),
        };
        client.resp = resp;
        greeting?;
        if endpoint.security == Security::StartTls {
            client.start_tls(&endpoint.host, &endpoint.trust)?;
        }
        Ok(client)
    }

    /// STARTTLS: only if CAPABILITY lists it; the capabilities known are forgotten after.
    fn start_tls(&mut self, host: &str, trust: &Trust) -> Result<(), MailError> {
        if !self.caps_known {
            self.run("CAPABILITY", &[], &mut Sink::Ignore)?;
        }
        if !self.has_capability("STARTTLS") {
            return Err(MailError::Refused(
                "the server does not offer STARTTLS".into(),
            ));
        }
        let asked = Instant::now();
        self.run("STARTTLS", &[], &mut Sink::Ignore)?;
        let r = self.wire.start_tls_asked(host, trust, asked);
        self.check(r)?;
        self.caps.clear();
        self.caps_known = false;
        Ok(())
    }

    /// The connection (its TLS: [`Wire::tls_time`], [`Wire::tls_resumed`]).
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    /// LOGIN with both as strings: quoted, or as literals when they hold CR, LF, NUL or
    /// non-ASCII bytes (`{n+}` with LITERAL+, else waiting for the server's `+`).
    pub fn login(&mut self, user: &str, password: &str) -> Result<(), MailError> {
        self.run(
            "LOGIN",
            &[Arg::Str(user), Arg::Str(password)],
            &mut Sink::Ignore,
        )
    }

    /// SELECT (or EXAMINE when `read_only`) a mailbox.
    pub fn select(&mut self, mailbox: &str, read_only: bool) -> Result<Selected, MailError> {
        (self.exists, self.uidvalidity, self.uidnext) = (None, 0, 0);
        let verb = if read_only { "EXAMINE" } else { "SELECT" };
        self.run(verb, &[Arg::Str(mailbox)], &mut Sink::Ignore)?;
        Ok(Selected {
            exists: self.exists.unwrap_or(0),
            uidvalidity: self.uidvalidity,
            uidnext: self.uidnext,
        })
    }

    /// UID SEARCH `criteria` (IMAP syntax): the UIDs found.
    pub fn uid_search(&mut self, criteria: &str) -> Result<Vec<u32>, MailError> {
        let mut uids = Vec::new();
        self.run(
            "UID SEARCH",
            &[Arg::Raw(criteria)],
            &mut Sink::Search(&mut uids),
        )?;
        Ok(uids)
    }

    /// UID FETCH `set` `items`: appends every `* n FETCH` that arrives to `out`, including
    /// unsolicited ones (the caller goes by uid).
    pub fn uid_fetch(
        &mut self,
        set: &str,
        items: &str,
        out: &mut Vec<Fetched>,
    ) -> Result<(), MailError> {
        self.run(
            "UID FETCH",
            &[Arg::Raw(set), Arg::Raw(items)],
            &mut Sink::Fetch(out),
        )
    }

    /// UID STORE `set` `what` (`+FLAGS.SILENT (\Deleted)`).
    pub fn uid_store(&mut self, set: &str, what: &str) -> Result<(), MailError> {
        self.run(
            "UID STORE",
            &[Arg::Raw(set), Arg::Raw(what)],
            &mut Sink::Ignore,
        )
    }

    /// EXPUNGE: how many messages the server reported expunged.
    pub fn expunge(&mut self) -> Result<u32, MailError> {
        self.expunged = 0;
        self.run("EXPUNGE", &[], &mut Sink::Ignore)?;
        Ok(self.expunged)
    }

    /// NOOP: the message count if the server reported one.
    pub fn noop(&mut self) -> Result<Option<u32>, MailError> {
        self.exists = None;
        self.run("NOOP", &[], &mut Sink::Ignore)?;
        Ok(self.exists)
    }

    /// Starts IDLE and waits for the server's `+`. Refused when the server lacks IDLE.
    pub fn idle_start(&mut self) -> Result<(), MailError> {
        if !self.caps_known {
            self.run("CAPABILITY", &[], &mut Sink::Ignore)?;
        }
        if !self.has_capability("IDLE") {
            return Err(MailError::Refused(
                "the server does not advertise IDLE".into(),
            ));
        }
        self.send_command("IDLE", &[])?;
        self.wait_continuation()?;
        self.idling = true;
        Ok(())
    }

    /// Waits up to `wait` for one response during IDLE; no response is `Timeout`.
    pub fn idle_wait(&mut self, wait: Duration) -> Result<IdleEvent, MailError> {
        if !self.idling {
            return Err(MailError::Protocol("idle_wait outside IDLE".into()));
        }
        if !self.wire.has_line() {
            // Only the wait for the first line is shortened: once a response starts, its
            // literals are read under the normal timeout, so a timeout never splits one.
            self.wire.set_read_timeout(wait)?;
            let waited = self.wire.wait_line();
            self.wire.set_read_timeout(self.timeout)?;
            match waited {
                Err(e) if e.is_timeout() => return Ok(IdleEvent::Timeout),
                other => self.check(other)?,
            }
        }
        match self.next_step(&mut Sink::Ignore)? {
            Step::Untagged(event) => Ok(event),
            Step::Done => {
                // The server ended IDLE itself (it may, e.g. before a shutdown).
                self.idling = false;
                Ok(IdleEvent::Other)
            }
            Step::Continuation => Ok(IdleEvent::Other),
        }
    }

    /// Sends DONE and reads up to IDLE's tagged OK; returns the events seen meanwhile.
    pub fn idle_done(&mut self) -> Result<Vec<IdleEvent>, MailError> {
        let mut events = Vec::new();
        if !self.idling {
            return Ok(events);
        }
        self.idling = false;
        let sent = self.wire.send(b"DONE\r\n");
        self.check(sent)?;
        loop {
            match self.next_step(&mut Sink::Ignore)? {
                Step::Untagged(event) => events.push(event),
                Step::Done => return Ok(events),
                Step::Continuation => {}
            }
        }
    }

    /// LOGOUT: the server's BYE and tagged OK are read, errors ignored.
    pub fn logout(mut self) {
        self.logging_out = true;
        let _ = self.run("LOGOUT", &[], &mut Sink::Ignore);
    }

    /// Whether the server advertised `name` (case-insensitive).
    pub fn has_capability(&self, name: &str) -> bool {
        self.caps.iter().any(|c| c.eq_ignore_ascii_case(name))
    }

    /// Bytes read and written on this connection.
    pub fn bytes(&self) -> (u64, u64) {
        (self.wire.bytes_in(), self.wire.bytes_out())
    }

    /// Sends a command and reads its responses up to its tagged OK.
    fn run(&mut self, verb: &str, args: &[Arg<'_>], sink: &mut Sink<'_>) -> Result<(), MailError> {
        self.send_command(verb, args)?;
        loop {
            match self.next_step(sink)? {
                Step::Done => return Ok(()),
                Step::Untagged(_) => {}
                Step::Continuation => {
                    return self.check(Err(MailError::unexpected("a response", &self.resp)));
                }
            }
        }
    }

    /// Sends `tag verb args`; a string that needs a synchronising literal waits for `+`.
    fn send_command(&mut self, verb: &str, args: &[Arg<'_>]) -> Result<(), MailError> {
        if self.broken {
            return Err(MailError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection broke earlier in this session",
            )));
        }
        self.next_tag += 1;
        self.tag.clear();
        let _ = write!(self.tag, "a{}", self.next_tag);
        let mut out = std::mem::take(&mut self.out);
        let sent = self.compose(&mut out, verb, args);
        self.out = out;
        sent
    }

    fn compose(
        &mut self,
        out: &mut Vec<u8>,
        verb: &str,
        args: &[Arg<'_>],
    ) -> Result<(), MailError> {
        out.clear();
        out.extend_from_slice(self.tag.as_bytes());
        out.push(b' ');
        out.extend_from_slice(verb.as_bytes());
        for arg in args {
            out.push(b' ');
            match arg {
                Arg::Raw(s) => {
                    if s.bytes().any(|b| b == b'\r' || b == b'\n') {
                        return Err(MailError::Protocol(format!(
                            "CR or LF in a command argument: {s:?}"
                        )));
                    }
                    out.extend_from_slice(s.as_bytes());
                }
                Arg::Str(s)
                    if s.bytes()
                        .all(|b| (1..0x80).contains(&b) && b != b'\r' && b != b'\n') =>
                {
                    out.push(b'"');
                    for b in s.bytes() {
                        if b == b'"' || b == b'\\' {
                            out.push(b'\\');
                        }
                        out.push(b);
                    }
                    out.push(b'"');
                }
                Arg::Str(s) => {
                    let plus = self.has_capability("LITERAL+");
                    let _ = write!(out, "{{{}{}}}\r\n", s.len(), if plus { "+" } else { "" });
                    if !plus {
                        let sent = self.wire.send(out);
                        self.check(sent)?;
                        out.clear();
                        self.wait_continuation()?;
                    }
                    out.extend_from_slice(s.as_bytes());
                }
            }
        }
        out.extend_from_slice(b"\r\n");
        let sent = self.wire.send(out);
        self.check(sent)
    }

    /// Reads until the server's `+` (untagged data may come first).
    fn wait_continuation(&mut self) -> Result<(), MailError> {
        loop {
            match self.next_step(&mut Sink::Ignore)? {
                Step::Continuation => return Ok(()),
                Step::Untagged(_) => {}
                Step::Done => {
                    return self.check(Err(MailError::unexpected("+ (continuation)", &self.resp)));
                }
            }
        }
    }

    /// Reads and handles one response.
    fn next_step(&mut self, sink: &mut Sink<'_>) -> Result<Step, MailError> {
        self.read_response()?;
        let resp = std::mem::take(&mut self.resp);
        let step = self.handle(&resp, sink);
        self.resp = resp;
        self.check(step)
    }

    fn read_response(&mut self) -> Result<(), MailError> {
        let r = read_response(&mut self.wire, &mut self.resp);
        self.check(r)
    }

    /// Takes in one response: notes what it says and classifies it.
    fn handle(&mut self, resp: &[u8], sink: &mut Sink<'_>) -> Result<Step, MailError> {
        if resp.first() == Some(&b'+') {
            return Ok(Step::Continuation);
        }
        if let Some(body) = resp.strip_prefix(b"* ") {
            return self.untagged(resp, body, sink).map(Step::Untagged);
        }
        let (tag, rest) = split_word(resp);
        if tag != self.tag.as_bytes() {
            return Err(MailError::unexpected(
                &format!("the reply to {}", self.tag),
                resp,
            ));
        }
        let (status, text) = split_word(rest);
        if status.eq_ignore_ascii_case(b"OK") {
            self.code(text);
            Ok(Step::Done)
        } else if status.eq_ignore_ascii_case(b"NO") || status.eq_ignore_ascii_case(b"BAD") {
            Err(MailError::refused(resp))
        } else {
            Err(MailError::unexpected("OK, NO or BAD", resp))
        }
    }

    /// An untagged response (`body` is after `* `).
    fn untagged(
        &mut self,
        resp: &[u8],
        body: &[u8],
        sink: &mut Sink<'_>,
    ) -> Result<IdleEvent, MailError> {
        let (first, rest) = split_word(body);
        if let Some(n) = number(first).and_then(|n| u32::try_from(n).ok()) {
            let (what, rest) = split_word(rest);
            if what.eq_ignore_ascii_case(b"EXISTS") {
                self.exists = Some(n);
                return Ok(IdleEvent::Exists(n));
            }
            if what.eq_ignore_ascii_case(b"EXPUNGE") {
                self.expunged += 1;
                return Ok(IdleEvent::Expunge(n));
            }
            if what.eq_ignore_ascii_case(b"FETCH")
                && let Sink::Fetch(out) = sink
            {
                out.push(parse_fetch(n, rest)?);
            }
            return Ok(IdleEvent::Other);
        }
        let word = |w: &[u8]| first.eq_ignore_ascii_case(w);
        if word(b"OK") || word(b"PREAUTH") {
            self.code(rest);
        } else if word(b"BYE") && !self.logging_out {
            return Err(MailError::refused(resp));
        } else if word(b"CAPABILITY") {
            self.set_caps(rest);
        } else if word(b"SEARCH")
            && let Sink::Search(out) = sink
        {
            for w in rest.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
                if w.first() == Some(&b'(') {
                    break; // "(MODSEQ n)" of CONDSTORE ends the list
                }
                match number(w).and_then(|n| u32::try_from(n).ok()) {
                    Some(uid) => out.push(uid),
                    None => return Err(MailError::unexpected("a UID", resp)),
                }
            }
        }
        Ok(IdleEvent::Other)
    }

    /// A response code (`[UIDVALIDITY 3] ...`) at the start of `text`.
    fn code(&mut self, text: &[u8]) {
        let Some(inner) = text.strip_prefix(b"[") else {
            return;
        };
        let inner = inner.split(|&b| b == b']').next().unwrap_or_default();
        let (name, args) = split_word(inner);
        let value = || {
            number(args)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0)
        };
        if name.eq_ignore_ascii_case(b"UIDVALIDITY") {
            self.uidvalidity = value();
        } else if name.eq_ignore_ascii_case(b"UIDNEXT") {
            self.uidnext = value();
        } else if name.eq_ignore_ascii_case(b"CAPABILITY") {
            self.set_caps(args);
        }
    }

    fn set_caps(&mut self, list: &[u8]) {
        self.caps.clear();
        self.caps.extend(
            list.split(|&b| b == b' ')
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).to_ascii_uppercase()),
        );
        self.caps_known = true;
    }

    fn check<T>(&mut self, r: Result<T, MailError>) -> Result<T, MailError> {
        if let Err(MailError::Io(_) | MailError::Protocol(_)) = &r {
            self.broken = true;
        }
        r
    }
}

/// Reads one response into `resp`: a line, and while a line ends in a literal's `{n}`,
/// CRLF, the literal's bytes and the next line, so `resp` holds the wire bytes as they came
/// (but the final CRLF).
fn read_response(wire: &mut Wire, resp: &mut Vec<u8>) -> Result<(), MailError> {
    resp.clear();
    loop {
        let line = wire.line()?;
        resp.extend_from_slice(line);
        let Some(n) = literal_suffix(line) else {
            return Ok(());
        };
        resp.extend_from_slice(b"\r\n");
        resp.extend_from_slice(wire.exact(n)?);
        if resp.len() > MAX_RESPONSE {
            return Err(MailError::Protocol(format!(
                "a response over {MAX_RESPONSE} bytes"
            )));
        }
    }
}

/// The `n` of a line ending in `{n}` or `{n+}`. Text that merely ends like a literal
/// (`* OK see {5}`) would be misread; IMAP's grammar has this ambiguity for every client,
/// and servers do not send such text.
fn literal_suffix(line: &[u8]) -> Option<usize> {
    let inner = line.strip_suffix(b"}")?;
    let open = inner.iter().rposition(|&b| b == b'{')?;
    let digits = inner.get(open + 1..)?;
    let digits = digits.strip_suffix(b"+").unwrap_or(digits);
    number(digits).and_then(|n| usize::try_from(n).ok())
}

/// A decimal number of at most 19 digits (so no overflow).
fn number(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 19 || !word.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(word.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// The bytes up to the first space, and those after it.
fn split_word(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&c| c == b' ') {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &[]),
    }
}

/// A token of a response, borrowed from it.
#[derive(Debug, PartialEq, Eq)]
enum Tok<'a> {
    Open,
    Close,
    /// Atoms, numbers, NIL, flags, and `BODY[...]<...>` with its section kept whole.
    Atom(&'a [u8]),
    /// A quoted string's bytes between the quotes, escapes still in.
    Quoted(&'a [u8]),
    Literal(&'a [u8]),
    End,
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Lexer<'a> {
    fn next(&mut self) -> Result<Tok<'a>, MailError> {
        while self.b.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        let start = self.i;
        let Some(&c) = self.b.get(start) else {
            return Ok(Tok::End);
        };
        match c {
            b'(' | b')' => {
                self.i += 1;
                Ok(if c == b'(' { Tok::Open } else { Tok::Close })
            }
            b'"' => {
                let mut j = start + 1;
                loop {
                    match self.b.get(j) {
                        Some(b'\\') => j += 2,
                        Some(b'"') => break,
                        Some(_) => j += 1,
                        None => return Err(self.bad("a closing quote")),
                    }
                }
                self.i = j + 1;
                Ok(Tok::Quoted(self.b.get(start + 1..j).unwrap_or_default()))
            }
            b'{' => {
                let close = self.b[start..]
                    .iter()
                    .position(|&b| b == b'}')
                    .map(|p| start + p);
                let n = close.and_then(|close| {
                    let digits = self.b.get(start + 1..close)?;
                    number(digits.strip_suffix(b"+").unwrap_or(digits))
                });
                let (Some(close), Some(n)) = (close, n) else {
                    return Err(self.bad("a literal's {n}"));
                };
                let data = close + 3;
                let end = usize::try_from(n).ok().and_then(|n| data.checked_add(n));
                match (
                    self.b.get(close + 1..data),
                    end.and_then(|end| self.b.get(data..end)),
                ) {
                    (Some(b"\r\n"), Some(bytes)) => {
                        self.i = data + bytes.len();
                        Ok(Tok::Literal(bytes))
                    }
                    _ => Err(self.bad("a literal's bytes")),
                }
            }
            _ => {
                let mut depth = 0usize;
                while let Some(&c) = self.b.get(self.i) {
                    match c {
                        b'[' => depth += 1,
                        b']' => depth = depth.saturating_sub(1),
                        b' ' | b'(' | b')' if depth == 0 => break,
                        b'\r' | b'\n' | b'"' | b'{' if depth == 0 => break,
                        _ => {}
                    }
                    self.i += 1;
                }
                Ok(Tok::Atom(&self.b[start..self.i]))
            }
        }
    }

    fn bad(&self, expected: &str) -> MailError {
        MailError::unexpected(expected, self.b.get(self.i..).unwrap_or_default())
    }

    /// Skips one value: a token, or a parenthesised list with everything in it.
    fn skip_value(&mut self) -> Result<(), MailError> {
        let mut depth = 0usize;
        loop {
            match self.next()? {
                Tok::Open => depth += 1,
                Tok::Close if depth > 0 => depth -= 1,
                Tok::Close | Tok::End => return Err(self.bad("a value")),
                _ => {}
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// A number value.
    fn number(&mut self) -> Result<u64, MailError> {
        match self.next()? {
            Tok::Atom(a) => number(a).ok_or_else(|| self.bad("a number")),
            _ => Err(self.bad("a number")),
        }
    }

    /// An nstring's bytes (NIL is empty) appended to `out`.
    fn nstring(&mut self, out: &mut Vec<u8>) -> Result<(), MailError> {
        match self.next()? {
            Tok::Literal(bytes) => out.extend_from_slice(bytes),
            Tok::Quoted(raw) => unquote(raw, out),
            Tok::Atom(a) if a.eq_ignore_ascii_case(b"NIL") => {}
            _ => return Err(self.bad("a string or NIL")),
        }
        Ok(())
    }
}

/// A quoted string's content with its `\` escapes removed.
fn unquote(raw: &[u8], out: &mut Vec<u8>) {
    let mut escaped = false;
    for &b in raw {
        if escaped || b != b'\\' {
            out.push(b);
            escaped = false;
        } else {
            escaped = true;
        }
    }
}

/// The `(...)` of `* seq FETCH (...)`.
fn parse_fetch(seq: u32, atts: &[u8]) -> Result<Fetched, MailError> {
    let mut lex = Lexer { b: atts, i: 0 };
    let mut f = Fetched {
        seq,
        ..Fetched::default()
    };
    if lex.next()? != Tok::Open {
        return Err(lex.bad("( after FETCH"));
    }
    loop {
        let name = match lex.next()? {
            Tok::Close => return Ok(f),
            Tok::Atom(name) => name,
            _ => return Err(lex.bad("a FETCH item name")),
        };
        let upper = |p: &[u8]| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p);
        if name.eq_ignore_ascii_case(b"UID") {
            let uid = lex.number()?;
            f.uid = Some(u32::try_from(uid).map_err(|_| lex.bad("a 32-bit UID"))?);
        } else if name.eq_ignore_ascii_case(b"RFC822.SIZE") {
            f.size = Some(lex.number()?);
        } else if name.eq_ignore_ascii_case(b"FLAGS") {
            if lex.next()? != Tok::Open {
                return Err(lex.bad("a flag list"));
            }
            let mut flags = Vec::new();
            loop {
                match lex.next()? {
                    Tok::Close => break,
                    Tok::Atom(flag) => flags.push(String::from_utf8_lossy(flag).into_owned()),
                    _ => return Err(lex.bad("a flag")),
                }
            }
            f.flags = Some(flags);
        } else if name.contains(&b'[') || upper(b"RFC822") {
            let section = if upper(b"BODY.PEEK[") {
                &name[9..]
            } else if upper(b"BODY[") {
                &name[4..]
            } else {
                name
            };
            let mut bytes = Vec::new();
            lex.nstring(&mut bytes)?;
            f.sections
                .push((String::from_utf8_lossy(section).to_ascii_uppercase(), bytes));
        } else {
            lex.skip_value()?;
        }
    }
}

/// A compact UID set: `1:4,7,9:10`, from UIDs in any order (duplicates are dropped).
pub fn uid_set(uids: &[u32]) -> String {
    let mut sorted = uids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut set = String::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |set: &mut String, (first, last): (u32, u32)| {
        let sep = if set.is_empty() { "" } else { "," };
        let _ = if first == last {
            write!(set, "{sep}{first}")
        } else {
            write!(set, "{sep}{first}:{last}")
        };
    };
    for uid in sorted {
        run = match run {
            Some((first, last)) if last.checked_add(1) == Some(uid) => Some((first, uid)),
            Some(done) => {
                flush(&mut set, done);
                Some((uid, uid))
            }
            None => Some((uid, uid)),
        };
    }
    if let Some(done) = run {
        flush(&mut set, done);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::super::wire::scripted_server;
    use super::*;

    #[test]
    fn fetch_items() {
        let header = b"X-Perflab-Token: a)b\r\n\r\n";
        let mut resp = format!(
            "(UID 7 RFC822.SIZE 42 FLAGS (\\Seen \\Deleted) BODY[HEADER.FIELDS (X-PERFLAB-TOKEN)] {{{}}}\r\n",
            header.len()
        )
        .into_bytes();
        resp.extend_from_slice(header);
        resp.extend_from_slice(
            b" BODY[] {0}\r\n BODY[TEXT] NIL INTERNALDATE \"17-Jul-1996 02:44:25 -0700\" \
              ENVELOPE (NIL \"s\" ((NIL NIL \"a\" \"b\")) NIL) body[1]<0> \"q\\\"x\\\\y\" \
              RFC822.HEADER {2+}\r\nh\n)",
        );
        let f = parse_fetch(3, &resp).expect("parses");
        assert_eq!((f.seq, f.uid, f.size), (3, Some(7), Some(42)));
        assert_eq!(
            f.flags,
            Some(vec!["\\Seen".to_string(), "\\Deleted".to_string()])
        );
        let sections: Vec<(&str, &[u8])> = f
            .sections
            .iter()
            .map(|(s, b)| (s.as_str(), b.as_slice()))
            .collect();
        assert_eq!(
            sections,
            vec![
                ("[HEADER.FIELDS (X-PERFLAB-TOKEN)]", &header[..]),
                ("[]", b""),
                ("[TEXT]", b""),
                ("[1]<0>", b"q\"x\\y"),
                ("RFC822.HEADER", b"h\n"),
            ]
        );
    }

    #[test]
    fn malformed_fetch_is_an_error() {
        for bad in [
            &b"(UID"[..],
            b"(UID x)",
            b"(BODY[] {5}\r\nab)",
            b"(BODY[] {9999999999999999999}\r\n)",
            b"(BODY[] \"ab)",
            b"UID 1",
            b"(FLAGS \\Seen)",
        ] {
            assert!(
                parse_fetch(1, bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn literals_at_line_ends() {
        assert_eq!(literal_suffix(b"* 1 FETCH (BODY[] {12}"), Some(12));
        assert_eq!(literal_suffix(b"a1 LOGIN {3+}"), Some(3));
        assert_eq!(literal_suffix(b"* OK {x}"), None);
        assert_eq!(literal_suffix(b"* OK done"), None);
    }

    #[test]
    fn uid_sets() {
        assert_eq!(uid_set(&[9, 1, 2, 3, 4, 7, 10, 2]), "1:4,7,9:10");
        assert_eq!(uid_set(&[5]), "5");
        assert_eq!(uid_set(&[]), "");
        assert_eq!(uid_set(&[u32::MAX, u32::MAX - 1]), "4294967294:4294967295");
    }

    #[test]
    fn session_over_split_reads() {
        let script = b"* OK [CAPABILITY IMAP4rev1 IDLE LITERAL+] ready\r\n\
            a1 OK [CAPABILITY IMAP4rev1 IDLE LITERAL+ UIDPLUS] Logged in\r\n\
            * FLAGS (\\Seen)\r\n* 3 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 99] x\r\n\
            * OK [UIDNEXT 8] y\r\na2 OK [READ-WRITE] done\r\n\
            * SEARCH 1 5\r\n* SEARCH 7\r\na3 OK s\r\n\
            * 1 FETCH (UID 5 BODY[] {5}\r\nab)\r\n)\r\n* 2 FETCH (FLAGS (\\Seen))\r\n* 4 EXISTS\r\n\
            * 3 FETCH (BODY[TEXT] {3}\r\nx\r\n UID 7)\r\na4 OK f\r\n\
            a5 NO [CANNOT] nope\r\n\
            + idling\r\n* 5 EXISTS\r\n* 2 EXPUNGE\r\n* 1 RECENT\r\na6 OK idle done\r\n\
            * 9 EXISTS\r\n* BYE going\r\n";
        let (addr, server) = scripted_server(script.to_vec(), 3);
        let mut c = ImapClient::open(&Endpoint::plain(addr), Duration::from_secs(5)).expect("open");
        assert!(c.has_capability("literal+"));
        c.login("user", "pa\"ss").expect("login");
        assert!(c.has_capability("UIDPLUS"));
        let s = c.select("INBOX", false).expect("select");
        assert_eq!(
            s,
            Selected {
                exists: 3,
                uidvalidity: 99,
                uidnext: 8
            }
        );
        assert_eq!(c.uid_search("ALL").expect("search"), vec![1, 5, 7]);
        let mut fetched = Vec::new();
        c.uid_fetch("5:7", "(UID BODY.PEEK[])", &mut fetched)
            .expect("fetch");
        assert_eq!(fetched.len(), 3);
        assert_eq!(
            fetched[0].sections,
            vec![("[]".to_string(), b"ab)\r\n".to_vec())]
        );
        assert_eq!(fetched[1].flags, Some(vec!["\\Seen".to_string()]));
        assert_eq!(
            (fetched[2].uid, &fetched[2].sections[0].1[..]),
            (Some(7), &b"x\r\n"[..])
        );
        match c.uid_store("5", "+FLAGS (\\Deleted)") {
            Err(MailError::Refused(line)) => assert_eq!(line, "a5 NO [CANNOT] nope"),
            other => panic!("{other:?}"),
        }
        c.idle_start().expect("idle");
        assert_eq!(
            c.idle_wait(Duration::from_secs(5)).expect("event"),
            IdleEvent::Exists(5)
        );
        assert_eq!(
            c.idle_wait(Duration::from_secs(5)).expect("event"),
            IdleEvent::Expunge(2)
        );
        assert_eq!(c.idle_done().expect("done"), vec![IdleEvent::Other]);
        match c.noop() {
            Err(MailError::Refused(line)) => assert_eq!(line, "* BYE going"),
            other => panic!("{other:?}"),
        }
        drop(c);
        let sent = String::from_utf8(server.join().expect("server")).expect("ASCII");
        assert!(sent.starts_with("a1 LOGIN \"user\" \"pa\\\"ss\"\r\na2 SELECT \"INBOX\"\r\n"));
        assert!(sent.contains("a4 UID FETCH 5:7 (UID BODY.PEEK[])\r\n"));
        assert!(sent.ends_with("a6 IDLE\r\nDONE\r\na7 NOOP\r\n"), "{sent}");
    }

    #[test]
    fn starttls_needs_the_capability() {
        let script = b"* OK [CAPABILITY IMAP4rev1 LOGINDISABLED] hi\r\n";
        let (addr, server) = scripted_server(script.to_vec(), 64);
        let mut e = Endpoint::plain(addr);
        e.security = Security::StartTls;
        match ImapClient::open(&e, Duration::from_secs(5)) {
            Err(MailError::Refused(why)) => assert!(why.contains("STARTTLS"), "{why}"),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("opened without STARTTLS"),
        }
        assert!(server.join().expect("server").is_empty(), "nothing sent");
    }

    #[test]
    fn starttls_refuses_what_follows_the_go_ahead_in_the_clear() {
        let script = b"* OK [CAPABILITY IMAP4rev1 STARTTLS] hi\r\na1 OK go\r\n* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] injected\r\n";
        let (addr, server) = scripted_server(script.to_vec(), 200);
        let mut e = Endpoint::plain(addr);
        e.security = Security::StartTls;
        match ImapClient::open(&e, Duration::from_secs(5)) {
            Err(MailError::Protocol(why)) => assert!(why.contains("injection"), "{why}"),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("took the injected bytes"),
        }
        assert_eq!(server.join().expect("server"), b"a1 STARTTLS\r\n");
    }

    #[test]
    fn literal_login() {
        // No LITERAL+: each literal waits for the server's "+".
        let script =
            b"* OK [CAPABILITY IMAP4rev1] hi\r\n+ go\r\n* 1 EXISTS\r\n+ go\r\na1 OK in\r\n";
        let (addr, server) = scripted_server(script.to_vec(), 4);
        let mut c = ImapClient::open(&Endpoint::plain(addr), Duration::from_secs(5)).expect("open");
        c.login("u\u{fc}", "p\r\nw").expect("login");
        drop(c);
        let sent = server.join().expect("server");
        assert_eq!(sent, "a1 LOGIN {3}\r\nu\u{fc} {4}\r\np\r\nw\r\n".as_bytes());
    }
}
