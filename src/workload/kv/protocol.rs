//! The wire protocols a cache speaks, behind one small interface the connection loop uses:
//! encode a request into a connection's output buffer, parse one reply from the front of its
//! input buffer. Encoding never allocates (it appends to a reused `Vec`); parsing never copies
//! (a value is a range of the input buffer).
//!
//! - [`memcache`](super::memcache): memcached's classic text protocol (`get`/`set`/`delete`)
//!   and its meta commands (`mg`/`ms`/`md` with opaque tokens).
//! - [`resp`](super::resp): Redis's RESP2 and RESP3 (Valkey and KeyDB speak the same).
//!
//! Replies come back in request order on one connection in every protocol here, so the loop
//! matches them to requests by position; the meta protocol's opaque token is checked as well,
//! so a reply matched to the wrong request is an error, never a wrong measurement.

use std::ops::Range;

/// Which protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// memcached text: `get k`, `set k 0 0 n`, `delete k`.
    MemcacheText,
    /// memcached meta commands: `mg k v O<token>`, `ms k n O<token>`, `md k O<token>`.
    MemcacheMeta,
    /// Redis RESP2.
    Resp2,
    /// Redis RESP3 (after `HELLO 3`).
    Resp3,
}

/// What a request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Get,
    Set,
    Delete,
    /// Command `index` of the step's mix ([`super::mix::Mix`]), which encodes it; any whole
    /// reply answers it. `values`: a memcached reply is `VALUE` blocks ended by `END` (a
    /// `get` written out), else one line (and a `VA` line's data block).
    Custom {
        index: u16,
        values: bool,
    },
}

impl Command {
    /// The name used for the breakdown by kind.
    pub fn name(self) -> &'static str {
        match self {
            Command::Get => "get",
            Command::Set => "set",
            Command::Delete => "delete",
            Command::Custom { .. } => "command",
        }
    }
}

/// What one reply said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A get found its key: the value's bytes are `input[value]`.
    Hit { value: Range<usize> },
    /// A get did not find its key (or a delete found nothing to delete).
    Miss,
    /// A set was stored, or a delete deleted.
    Done,
    /// A whole reply to a [`Command::Custom`] that is not an error: its RESP type (the
    /// first byte; `0` for memcached).
    Value { kind: u8 },
    /// The server answered with an error (`SERVER_ERROR out of memory`, `-ERR ...`,
    /// `-NOAUTH ...`): its message, `input[message]`.
    Refused { message: Range<usize> },
}

/// The outcome of trying to parse one reply at the front of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A whole reply: what it said, and how many bytes of input it took.
    Reply { reply: Reply, consumed: usize },
    /// Not all of the reply has arrived. `need` is a lower bound of the total bytes the reply
    /// takes from the front of the input (0 when unknown), so the caller need not reparse
    /// before that many have arrived.
    Incomplete { need: usize },
    /// Bytes no correct server sends in answer to this request: the connection cannot be
    /// trusted any more and is closed. The message says what was wrong (never more than
    /// the first 64 bytes of the input, escaped).
    Invalid(String),
}

impl Protocol {
    /// Appends a request for `command` on `key` to `out`. `value` is the value of a set
    /// (ignored otherwise), `ttl` its expiry in seconds (0: never), `token` the meta
    /// protocol's opaque token (ignored by the others). A [`Command::Custom`] is the mix's
    /// to encode: nothing is appended here.
    #[inline]
    pub fn encode(
        self,
        out: &mut Vec<u8>,
        command: Command,
        key: &[u8],
        value: &[u8],
        ttl: u32,
        token: u32,
    ) {
        match self {
            Protocol::MemcacheText => super::memcache::encode_text(out, command, key, value, ttl),
            Protocol::MemcacheMeta => {
                super::memcache::encode_meta(out, command, key, value, ttl, token)
            }
            Protocol::Resp2 | Protocol::Resp3 => super::resp::encode(out, command, key, value, ttl),
        }
    }

    /// Parses the reply to `command` (sent with `token`) at the front of `input`.
    #[inline]
    pub fn parse(self, input: &[u8], command: Command, token: u32) -> Parsed {
        match self {
            Protocol::MemcacheText | Protocol::MemcacheMeta
                if let Command::Custom { values, .. } = command =>
            {
                super::memcache::parse_custom(input, values)
            }
            Protocol::MemcacheText => super::memcache::parse_text(input, command),
            Protocol::MemcacheMeta => super::memcache::parse_meta(input, command, token),
            Protocol::Resp2 | Protocol::Resp3 => super::resp::parse(input, command),
        }
    }

    /// Whether this is one of memcached's protocols.
    pub fn is_memcache(self) -> bool {
        matches!(self, Protocol::MemcacheText | Protocol::MemcacheMeta)
    }
}
