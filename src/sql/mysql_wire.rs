//! MySQL's client/server protocol on a blocking socket: perflab's own small client, built on
//! `mysql_common`'s handshake packets and password scrambles, as [`super::postgres`] is on
//! `postgres-protocol`'s messages.
//!
//! Why not a general client: the `mysql` crate turns every row of a result into a `Row` of
//! owned values (an allocation per row and per cell) even when nobody reads it, and sysbench's
//! range selects return 100 rows each; here a row is handed to the caller where it lies in the
//! read buffer ([`RowRef`]), and only the cells asked for are decoded (docs/performance.md
//! has the figures).
//!
//! ```text
//!  connect(stream, Login) ─► handshake (v10) ─► [SslRequest, TLS] ─► HandshakeResponse
//!        ─► mysql_native_password, or caching_sha2_password (fast; full: the password over
//!           TLS or a Unix socket, else RSA-encrypted with the server's key) ─► OK
//!  query(sql)        COM_QUERY         ─┐
//!  prepare(sql)      COM_STMT_PREPARE    ├─► results: OK | ERR | LOCAL INFILE | columns, rows,
//!  execute(stmt, …)  COM_STMT_EXECUTE  ─┘    end; again while the server says more follow
//! ```
//!
//! - Packets: a 3-byte length and a sequence number; a payload of 16 MiB − 1 or more is
//!   split over several packets, joined on reading (up to [`MAX_PACKET`]) and split on
//!   writing. One buffer holds what was read; a row is a slice of it.
//! - Capabilities: protocol 4.1, multi-statements and multi-results (a batch of DDL),
//!   `CLIENT_FOUND_ROWS` (rows matched, not changed, as SQLite and PostgreSQL count them),
//!   local files (`LOAD DATA LOCAL INFILE`, answered only with the file the caller names),
//!   and `CLIENT_DEPRECATE_EOF` where the server has it (results end with an OK packet).
//! - Every result is handed to a [`Sink`]: rows changed, columns, rows.
//! - `login`: the greeting, TLS, and the password exchange, up to the server's OK.

use super::mysql_row::{Column, Protocol, RowRef, fixed, lenenc, lenenc_bytes};
use crate::target::tls_stream::TlsStream;
use mysql_common::constants::CapabilityFlags;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

mod login;
pub use login::connect;

/// The largest payload of one packet; a longer one continues in the next.
const SPLIT: usize = 0xFF_FFFF;

/// The longest logical packet (a row) perflab joins: the server's own largest
/// `max_allowed_packet`. Memory grows only with the bytes that actually arrive.
pub const MAX_PACKET: usize = 1 << 30;

/// What perflab announces as its largest packet.
const CLIENT_MAX_PACKET: u32 = 1 << 30;

/// The first size of the read buffer; it grows for larger packets.
const READ_CHUNK: usize = 32 * 1024;

/// How much of a local file goes in one packet.
const FILE_CHUNK: usize = 64 * 1024;

/// Server status flags perflab reads.
const MORE_RESULTS: u16 = 0x0008;
const NO_BACKSLASH_ESCAPES: u16 = 0x0200;
const IN_TRANSACTION: u16 = 0x0001;

/// Commands.
const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

/// Parameter types perflab binds.
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_NULL: u8 = 0x06;
const TYPE_VAR_STRING: u8 = 0xFD;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The server's ERR packet, as the mysql client shows it.
    #[error("ERROR {code} ({state}): {message}")]
    Server {
        code: u16,
        state: String,
        message: String,
    },
    /// The socket failed, timed out or closed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server's bytes do not follow the protocol.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The TLS handshake failed (rustls's error inside, for
    /// [`crate::target::tls::refusal`]).
    #[error("TLS: {0}")]
    Tls(io::Error),
    /// TLS was required and the server offers none.
    #[error("the server does not offer TLS")]
    NoTls,
    /// Refused by perflab before or without the server's say: a parameter count that does
    /// not match, an authentication method it does not speak, a file it was not asked to send.
    #[error("{0}")]
    Refused(String),
}

fn garbled(what: impl Into<String>) -> WireError {
    WireError::Protocol(what.into())
}

/// The byte stream under the protocol.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
    /// Between the plain socket and its TLS wrapping.
    Closed,
}

impl Stream {
    /// Bounds every read and write (None: wait without end).
    pub fn set_timeouts(&self, limit: Option<Duration>) {
        let _ = match self {
            Stream::Tcp(s) => s.set_read_timeout(limit).and(s.set_write_timeout(limit)),
            Stream::Unix(s) => s.set_read_timeout(limit).and(s.set_write_timeout(limit)),
            Stream::Tls(s) => s
                .socket()
                .set_read_timeout(limit)
                .and(s.socket().set_write_timeout(limit)),
            Stream::Closed => Ok(()),
        };
    }

    /// A duplicate of the socket, to shut it down from another thread.
    pub fn duplicate(&self) -> Option<super::cancel::Socket> {
        use super::cancel::Socket;
        match self {
            Stream::Tcp(s) => s.try_clone().ok().map(Socket::Tcp),
            Stream::Unix(s) => s.try_clone().ok().map(Socket::Unix),
            Stream::Tls(s) => s.socket().try_clone().ok().map(Socket::Tcp),
            Stream::Closed => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Closed => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Closed => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// Whether and how to encrypt.
#[derive(Clone)]
pub enum TlsChoice {
    Off,
    /// TLS if the server offers it, else in the clear.
    Preferred(Arc<rustls::ClientConfig>),
    Required(Arc<rustls::ClientConfig>),
}

/// Who logs in, to what, and how the connection is protected.
pub struct Login<'a> {
    pub user: &'a str,
    pub password: Option<&'a str>,
    pub database: Option<&'a str>,
    pub tls: TlsChoice,
    /// The name the server's certificate is checked against.
    pub server_name: &'a str,
}

/// What the caller does with a statement's results, each in turn.
pub trait Sink {
    /// A result with no rows (an OK packet): the rows it changed.
    fn changed(&mut self, _rows: u64) {}
    /// Whether [`Sink::columns`] wants the columns' names.
    fn names(&self) -> bool {
        false
    }
    /// A result set begins; `names` is empty unless [`Sink::names`] asked for them.
    fn columns(&mut self, _columns: &[Column], _names: &[String]) {}
    /// One row of the current result set.
    fn row(&mut self, row: RowRef<'_>);
}

/// A statement prepared on the server, with its result's columns as the server last sent
/// them (MariaDB sends them again only when they change: `MARIADB_CLIENT_CACHE_METADATA`).
#[derive(Debug, Clone)]
pub struct Prepared {
    id: u32,
    params: u16,
    columns: Vec<Column>,
    names: Vec<String>,
}

/// A parameter to bind in the binary protocol.
pub trait Bind {
    /// The type byte and the value's bytes (nothing for NULL).
    fn bind(&self, types: &mut Vec<u8>, values: &mut Vec<u8>) -> bool;
}

impl Bind for i64 {
    #[inline]
    fn bind(&self, types: &mut Vec<u8>, values: &mut Vec<u8>) -> bool {
        types.extend([TYPE_LONGLONG, 0]);
        values.extend(self.to_le_bytes());
        false
    }
}

impl Bind for super::sql::Param<'_> {
    fn bind(&self, types: &mut Vec<u8>, values: &mut Vec<u8>) -> bool {
        match self {
            super::sql::Param::Int(v) => v.bind(types, values),
            super::sql::Param::Text(t) => {
                types.extend([TYPE_VAR_STRING, 0]);
                put_lenenc(values, t.len() as u64);
                values.extend(t.as_bytes());
                false
            }
            super::sql::Param::Null => {
                types.extend([TYPE_NULL, 0]);
                true
            }
        }
    }
}

fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xFA => out.push(n as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend((n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend(n.to_le_bytes());
        }
    }
}

/// Where the current packet's payload is.
#[derive(Debug, Clone, Copy)]
enum Current {
    /// `buf[from..to]`.
    Buf(usize, usize),
    /// Joined from split packets into `big`.
    Big,
}

/// One connection.
pub struct WireConn {
    stream: Stream,
    /// Bytes read; `buf[lo..hi]` not yet taken.
    buf: Vec<u8>,
    lo: usize,
    hi: usize,
    /// A payload joined from split packets.
    big: Vec<u8>,
    current: Current,
    /// A command being composed: four bytes for the header, then the payload.
    out: Vec<u8>,
    /// Parameter types and values of an execution, composed apart.
    types: Vec<u8>,
    values: Vec<u8>,
    /// The next packet's sequence number.
    seq: u8,
    caps: CapabilityFlags,
    /// The server's status flags from its last OK or EOF.
    status: u16,
    id: u32,
    /// The current result set's columns, and their names when the sink wants them.
    columns: Vec<Column>,
    names: Vec<String>,
    /// Whether the connection is encrypted or local (a password may go in the clear).
    private: bool,
    /// MariaDB's `MARIADB_CLIENT_CACHE_METADATA`: an execution's columns are sent only when
    /// they changed since the last.
    cache_metadata: bool,
}

impl WireConn {
    fn new(stream: Stream) -> WireConn {
        WireConn {
            stream,
            buf: vec![0; READ_CHUNK],
            lo: 0,
            hi: 0,
            big: Vec::new(),
            current: Current::Buf(0, 0),
            out: Vec::with_capacity(1024),
            types: Vec::new(),
            values: Vec::new(),
            seq: 0,
            caps: CapabilityFlags::empty(),
            status: 0,
            id: 0,
            columns: Vec::new(),
            names: Vec::new(),
            private: false,
            cache_metadata: false,
        }
    }

    /// The server's id of this session (for `KILL QUERY`).
    pub fn connection_id(&self) -> u32 {
        self.id
    }

    /// Whether the server takes backslashes in strings literally (`NO_BACKSLASH_ESCAPES`).
    pub fn no_backslash_escape(&self) -> bool {
        self.status & NO_BACKSLASH_ESCAPES != 0
    }

    /// Whether a transaction is open, as the server's last status said.
    pub fn in_transaction(&self) -> bool {
        self.status & IN_TRANSACTION != 0
    }

    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Until `buf[lo..hi]` holds `need` bytes, reads more (moving or growing the buffer).
    fn fill(&mut self, need: usize) -> Result<(), WireError> {
        if self.hi - self.lo >= need {
            return Ok(());
        }
        if self.buf.len() - self.lo < need {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
            if self.buf.len() < need {
                self.buf.resize(need.max(2 * self.buf.len()), 0);
            }
        }
        while self.hi - self.lo < need {
            let n = self.stream.read(&mut self.buf[self.hi..])?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            self.hi += n;
        }
        Ok(())
    }

    /// The next packet's header: its length, its sequence number checked.
    fn header(&mut self) -> Result<usize, WireError> {
        self.fill(4)?;
        let h = &self.buf[self.lo..self.lo + 4];
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        if h[3] != self.seq {
            let (got, due) = (h[3], self.seq);
            // A server that ends the session says why in a packet of its own (numbered 0):
            // a killed connection, a timeout. Its error is the one to report.
            if self.fill(4 + len).is_ok() && self.buf[self.lo + 4..].first() == Some(&0xFF) {
                return Err(server_error(&self.buf[self.lo + 4..self.lo + 4 + len]));
            }
            return Err(garbled(format!("packet {got} arrived where {due} was due")));
        }
        self.seq = self.seq.wrapping_add(1);
        self.lo += 4;
        Ok(len)
    }

    /// Reads the next packet; its payload is [`WireConn::packet`] until the next read.
    fn read_packet(&mut self) -> Result<(), WireError> {
        let len = self.header()?;
        self.fill(len)?;
        if len < SPLIT {
            self.current = Current::Buf(self.lo, self.lo + len);
            self.lo += len;
            return Ok(());
        }
        self.big.clear();
        let mut len = len;
        loop {
            if self.big.len() + len > MAX_PACKET {
                return Err(garbled(format!(
                    "a packet longer than {MAX_PACKET} bytes (perflab takes no more)"
                )));
            }
            self.fill(len)?;
            self.big
                .extend_from_slice(&self.buf[self.lo..self.lo + len]);
            self.lo += len;
            if len < SPLIT {
                break;
            }
            len = self.header()?;
        }
        self.current = Current::Big;
        Ok(())
    }

    /// The payload of the packet read last.
    fn packet(&self) -> &[u8] {
        match self.current {
            Current::Buf(from, to) => &self.buf[from..to],
            Current::Big => &self.big,
        }
    }

    /// Starts a packet (a command's, with `seq` 0, or the next of an exchange).
    fn start(&mut self) {
        self.out.clear();
        self.out.extend([0; 4]);
    }

    /// Starts a command: the sequence begins again at 0.
    fn command(&mut self, com: u8) {
        self.seq = 0;
        self.start();
        self.out.push(com);
    }

    /// Sends the packet composed in `out` (split if it is long).
    fn send(&mut self) -> Result<(), WireError> {
        let len = self.out.len() - 4;
        if len < SPLIT {
            self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.out[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            self.stream.write_all(&self.out)?;
            return Ok(self.stream.flush()?);
        }
        let mut framed = Vec::with_capacity(len + 4 * (len / SPLIT + 2));
        let mut chunks: Vec<&[u8]> = self.out[4..].chunks(SPLIT).collect();
        if len.is_multiple_of(SPLIT) {
            chunks.push(&[]);
        }
        for chunk in chunks {
            framed.extend(&(chunk.len() as u32).to_le_bytes()[..3]);
            framed.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            framed.extend(chunk);
        }
        self.stream.write_all(&framed)?;
        Ok(self.stream.flush()?)
    }

    /// Sends one packet of `payload`.
    fn send_bytes(&mut self, payload: &[u8]) -> Result<(), WireError> {
        self.start();
        self.out.extend(payload);
        self.send()
    }
}

/// The server's ERR packet.
fn server_error(p: &[u8]) -> WireError {
    let code = u16::from_le_bytes([
        p.get(1).copied().unwrap_or(0),
        p.get(2).copied().unwrap_or(0),
    ]);
    let (state, message) = match p.get(3) {
        Some(b'#') if p.len() >= 9 => (&p[4..9], &p[9..]),
        _ => (&b"HY000"[..], p.get(3..).unwrap_or(&[])),
    };
    WireError::Server {
        code,
        state: String::from_utf8_lossy(state).into_owned(),
        message: String::from_utf8_lossy(message).into_owned(),
    }
}

/// An OK packet's rows changed and status flags.
fn ok_packet(p: &[u8]) -> Result<(u64, u16), WireError> {
    let bad = || garbled("an OK packet ends early");
    let mut at = 1;
    let changed = lenenc(p, &mut at).ok_or_else(bad)?;
    lenenc(p, &mut at).ok_or_else(bad)?;
    let status = u16::from_le_bytes(fixed(p, at).ok_or_else(bad)?);
    Ok((changed, status))
}

impl WireConn {
    /// Runs `sql` as text (COM_QUERY), each result handed to `sink`. `file`: the one file a
    /// `LOAD DATA LOCAL INFILE` of this statement may send.
    pub fn query(
        &mut self,
        sql: &str,
        sink: &mut dyn Sink,
        file: Option<&Path>,
    ) -> Result<(), WireError> {
        self.command(COM_QUERY);
        self.out.extend(sql.as_bytes());
        self.send()?;
        self.results(Protocol::Text, sink, file, None)
    }

    /// Prepares `sql` on the server (COM_STMT_PREPARE).
    pub fn prepare(&mut self, sql: &str) -> Result<Prepared, WireError> {
        self.command(COM_STMT_PREPARE);
        self.out.extend(sql.as_bytes());
        self.send()?;
        self.read_packet()?;
        let p = self.packet();
        match p.first() {
            Some(0x00) => {}
            Some(0xFF) => return Err(server_error(p)),
            _ => return Err(garbled("an unexpected answer to COM_STMT_PREPARE")),
        }
        let bad = || garbled("a COM_STMT_PREPARE answer ends early");
        let id = u32::from_le_bytes(fixed(p, 1).ok_or_else(bad)?);
        let columns = u16::from_le_bytes(fixed(p, 5).ok_or_else(bad)?);
        let params = u16::from_le_bytes(fixed(p, 7).ok_or_else(bad)?);
        // The parameters' definitions (not needed), then the columns': an execution whose
        // columns did not change does not send them again.
        if params > 0 {
            for _ in 0..params {
                self.read_packet()?;
            }
            self.end_of_definitions()?;
        }
        let mut st = Prepared {
            id,
            params,
            columns: Vec::with_capacity(usize::from(columns)),
            names: Vec::with_capacity(usize::from(columns)),
        };
        if columns > 0 {
            for _ in 0..columns {
                self.read_packet()?;
                let (column, name) = definition(self.packet(), true)?;
                st.columns.push(column);
                st.names.push(name.unwrap_or_default());
            }
            self.end_of_definitions()?;
        }
        Ok(st)
    }

    /// Runs a prepared statement (COM_STMT_EXECUTE) with `params`, each result handed to
    /// `sink`.
    pub fn execute<P: Bind>(
        &mut self,
        st: &mut Prepared,
        params: &[P],
        sink: &mut dyn Sink,
    ) -> Result<(), WireError> {
        if params.len() != usize::from(st.params) {
            return Err(WireError::Refused(format!(
                "the statement takes {} parameter(s), {} given",
                st.params,
                params.len()
            )));
        }
        self.command(COM_STMT_EXECUTE);
        self.out.extend(st.id.to_le_bytes());
        // No cursor; one iteration.
        self.out.push(0);
        self.out.extend(1u32.to_le_bytes());
        if !params.is_empty() {
            let bitmap = self.out.len();
            self.out.resize(bitmap + params.len().div_ceil(8), 0);
            // New parameters bound: their types follow.
            self.out.push(1);
            self.types.clear();
            self.values.clear();
            for (i, p) in params.iter().enumerate() {
                if p.bind(&mut self.types, &mut self.values) {
                    self.out[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            self.out.extend_from_slice(&self.types);
            self.out.extend_from_slice(&self.values);
        }
        self.send()?;
        self.results(Protocol::Binary, sink, None, Some(st))
    }

    /// After column definitions: the EOF packet of servers without `CLIENT_DEPRECATE_EOF`.
    fn end_of_definitions(&mut self) -> Result<(), WireError> {
        if !self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            self.read_packet()?;
            if self.packet().first() != Some(&0xFE) {
                return Err(garbled("no EOF after the column definitions"));
            }
        }
        Ok(())
    }

    /// Whether the packet read last ends a result set (an EOF, or the OK packet that
    /// replaces it), and the server's status if so.
    fn end_of_rows(&self) -> Option<u16> {
        let p = self.packet();
        if p.first() != Some(&0xFE) {
            return None;
        }
        if self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            // A row can start with 0xFE too (a string of 16 MiB or more): then the packet
            // is at least that long.
            (p.len() < SPLIT).then(|| ok_packet(p).map(|(_, s)| s).unwrap_or(self.status))
        } else {
            (p.len() < 9).then(|| u16::from_le_bytes(fixed(p, 3).unwrap_or([0, 0])))
        }
    }

    /// Reads a statement's results, each into `sink`, until the server says no more follow.
    fn results(
        &mut self,
        protocol: Protocol,
        sink: &mut dyn Sink,
        file: Option<&Path>,
        mut st: Option<&mut Prepared>,
    ) -> Result<(), WireError> {
        loop {
            self.read_packet()?;
            let p = self.packet();
            match p.first() {
                None => return Err(garbled("an empty packet where a result was due")),
                Some(0x00) => {
                    let (changed, status) = ok_packet(p)?;
                    self.status = status;
                    sink.changed(changed);
                }
                Some(0xFF) => return Err(server_error(p)),
                Some(0xFB) if protocol == Protocol::Text => {
                    let asked = p[1..].to_vec();
                    self.send_file(&asked, file)?;
                    continue;
                }
                Some(_) => self.result_set(protocol, sink, st.as_deref_mut())?,
            }
            if self.status & MORE_RESULTS == 0 {
                return Ok(());
            }
        }
    }

    /// A result set, its column count read last: the columns, then the rows.
    fn result_set(
        &mut self,
        protocol: Protocol,
        sink: &mut dyn Sink,
        st: Option<&mut Prepared>,
    ) -> Result<(), WireError> {
        let mut at = 0;
        let count = lenenc(self.packet(), &mut at).ok_or_else(|| garbled("a column count"))?;
        // With the metadata cache, a byte says whether the columns follow (0: the
        // statement's, as last sent).
        let follow = !self.cache_metadata || self.packet().get(at) != Some(&0);
        self.columns.clear();
        self.names.clear();
        let names = sink.names();
        match (follow, st) {
            (true, st) => {
                for _ in 0..count {
                    self.read_packet()?;
                    let (column, name) = definition(self.packet(), names || st.is_some())?;
                    self.columns.push(column);
                    if let Some(n) = name {
                        self.names.push(n);
                    }
                }
                if let Some(st) = st {
                    st.columns.clone_from(&self.columns);
                    st.names.clone_from(&self.names);
                }
            }
            (false, Some(st)) => {
                self.columns.extend_from_slice(&st.columns);
                if names {
                    self.names.extend_from_slice(&st.names);
                }
            }
            (false, None) => return Err(garbled("a result without its columns")),
        }
        if count as usize != self.columns.len() {
            return Err(garbled("a result whose column count changed"));
        }
        self.end_of_definitions()?;
        sink.columns(&self.columns, &self.names);
        loop {
            self.read_packet()?;
            if let Some(status) = self.end_of_rows() {
                self.status = status;
                return Ok(());
            }
            let data = match self.current {
                Current::Buf(from, to) => &self.buf[from..to],
                Current::Big => &self.big[..],
            };
            if data.first() == Some(&0xFF) {
                return Err(server_error(data));
            }
            sink.row(RowRef {
                protocol,
                data,
                columns: &self.columns,
            });
        }
    }

    /// `LOAD DATA LOCAL INFILE`: the server asked for `asked`. Only `allowed` is sent; for
    /// any other name the server gets nothing (an empty file) and the caller an error.
    fn send_file(&mut self, asked: &[u8], allowed: Option<&Path>) -> Result<(), WireError> {
        use std::os::unix::ffi::OsStrExt;
        let permitted = allowed.filter(|p| p.as_os_str().as_bytes() == asked);
        let refused = match permitted {
            None => Some(format!(
                "the server asked for {}, not the file being loaded",
                String::from_utf8_lossy(asked)
            )),
            Some(path) => match std::fs::File::open(path) {
                Err(e) => Some(format!("{}: {e}", path.display())),
                Ok(mut f) => {
                    let mut chunk = vec![0; FILE_CHUNK];
                    loop {
                        let n = f.read(&mut chunk)?;
                        if n == 0 {
                            break;
                        }
                        self.send_bytes(&chunk[..n])?;
                    }
                    None
                }
            },
        };
        self.send_bytes(&[])?;
        match refused {
            None => Ok(()),
            Some(why) => {
                // The server answers the empty file; read it so the connection stays in step.
                let _ = self.results(Protocol::Text, &mut Discard, None, None);
                Err(WireError::Refused(why))
            }
        }
    }
}

/// A sink that reads nothing.
pub struct Discard;

impl Sink for Discard {
    fn row(&mut self, _row: RowRef<'_>) {}
}

/// A column definition (protocol 4.1): its type and flags, and its name when wanted.
fn definition(p: &[u8], name: bool) -> Result<(Column, Option<String>), WireError> {
    let bad = || garbled("a column definition ends early");
    let mut at = 0;
    let mut label = None;
    // catalog, schema, table, org_table, name, org_name
    for i in 0..6 {
        let s = lenenc_bytes(p, &mut at).map_err(|_| bad())?;
        if i == 4 && name {
            label = Some(String::from_utf8_lossy(s.unwrap_or(&[])).into_owned());
        }
    }
    // The length of the fixed fields (0x0C), the character set, the column's length.
    lenenc(p, &mut at).ok_or_else(bad)?;
    at += 2 + 4;
    let kind = *p.get(at).ok_or_else(bad)?;
    let flags = u16::from_le_bytes(fixed(p, at + 1).ok_or_else(bad)?);
    const UNSIGNED: u16 = 0x20;
    Ok((
        Column {
            kind,
            unsigned: flags & UNSIGNED != 0,
        },
        label,
    ))
}

impl Drop for WireConn {
    /// Says goodbye (COM_QUIT), so the server does not log an aborted connection.
    fn drop(&mut self) {
        if !matches!(self.stream, Stream::Closed) {
            self.command(COM_QUIT);
            let _ = self.send();
        }
    }
}
