//! memcached's classic text protocol and its meta commands: requests encoded into a reused
//! buffer, replies parsed in place.
//!
//! # On the wire
//!
//! Every request and every status line ends in `\r\n`; a value travels as a counted block of
//! bytes after its header line, followed by its own `\r\n`.
//!
//! | request | text protocol | meta protocol (memcached >= 1.6) |
//! |---|---|---|
//! | get | `get <key>` | `mg <key> v O<token>` |
//! | set | `set <key> 0 <ttl> <len>` + data | `ms <key> <len> T<ttl> O<token>` + data (no `T` when the ttl is 0) |
//! | delete | `delete <key>` | `md <key> O<token>` |
//!
//! | reply | text protocol | meta protocol |
//! |---|---|---|
//! | get, found | `VALUE <key> <flags> <len>[ <cas>]` + data + `END` | `VA <len> O<token>` + data |
//! | get, not found | `END` | `EN` or `EN O<token>` |
//! | set, stored / refused | `STORED` / `NOT_STORED` | `HD O<token>` / `NS O<token>` |
//! | delete, deleted / absent | `DELETED` / `NOT_FOUND` | `HD O<token>` / `NF O<token>` |
//! | an error, to anything | `ERROR`, `CLIENT_ERROR <msg>`, `SERVER_ERROR <msg>` | the same |
//!
//! A meta reply echoes the request's opaque token (`O<token>`), so a reply that answers some
//! other request is caught ([`Parsed::Invalid`]) instead of being timed as this one. Errors
//! carry no token. A miss's `EN` may or may not carry it: memcached added flags to `EN` in
//! 2022 (memcached issue #880), so older 1.6 servers send a bare `EN`; the token is checked
//! when present. Every other meta status line must carry it.
//!
//! # Checked on a real server
//!
//! memcached 1.6.18 (`memcached -p PORT -U 0 -l 127.0.0.1`), byte for byte:
//!
//! - `mg k v O123` → `EN O123\r\n` (a miss echoes the token); without `O`, `EN\r\n`
//! - `ms k 5 T0 O42` + `hello` → `HD O42\r\n`; `ms k 5 O42` (no `T`) and `T60` work the same
//! - `mg k v O123` → `VA 5 O123\r\nhello\r\n`; an empty value → `VA 0 O3\r\n\r\n`
//! - `md k O5` → `HD O5\r\n`, again → `NF O6\r\n`; `ms k 5 MA O1` (append to nothing) → `NS O1\r\n`
//! - `get k` → `VALUE k 0 5\r\nhello\r\nEND\r\n` (`gets` adds the cas: `VALUE k 0 5 1`), a
//!   miss → `END\r\n`; `set` → `STORED\r\n`, `add` of an existing key → `NOT_STORED\r\n`;
//!   `delete` → `DELETED\r\n` then `NOT_FOUND\r\n`; an unknown command → `ERROR\r\n`
//! - a 251-byte key → `CLIENT_ERROR bad command line format\r\n` (both protocols); a 2 MiB
//!   value → `SERVER_ERROR object too large for cache\r\n` (the data is swallowed)
//! - a data block longer than announced → `CLIENT_ERROR bad data chunk\r\nERROR\r\n`: two
//!   lines for one request. The encoders here always announce the right length, so the
//!   parser takes the first line as the reply and does not try to guess at the second.
//! - `stats` → `STAT pid 20244\r\nSTAT uptime 157\r\n...END\r\n` (values may hold no spaces
//!   today, but the parser keeps the rest of the line); `version` → `VERSION 1.6.18\r\n`
//!
//! # Why zero-copy
//!
//! This is the load generator's inner loop: one encode and one parse per request, millions a
//! second. Encoding appends to the connection's output buffer (numbers are written by hand
//! into a stack buffer, never through `format!`), and parsing returns ranges into the input
//! buffer, so a request costs no allocation and a 20 KB value is never copied. Parsing reads
//! the header line only; a value's bytes are skipped by their announced length, never scanned,
//! and [`Parsed::Incomplete`] says how much must arrive before parsing again (the whole reply,
//! once its header line is in), so a large value that arrives in pieces is parsed twice, not
//! once per piece. Allocation happens only when a reply is [`Parsed::Invalid`] (the message)
//! and in the control-connection helpers ([`parse_stats`], [`parse_version`]).
//!
//! The helpers that `resp` shares (decimal numbers, the newline search, the message for an
//! invalid reply) live here, `pub(super)`.

use super::protocol::{Command, Parsed, Reply};
use std::fmt::Display;

/// The longest header or status line accepted. memcached's longest is a `VALUE` line: a key
/// of at most 250 bytes and three or four numbers; error messages are short sentences. A
/// stream with no line end this far in is not memcached, and waiting for more would hang.
const MAX_LINE: usize = 2048;

/// The largest value length a reply may announce: memcached's item size limit (`-I`) tops out
/// at 1 GiB. Anything larger is garbage, and trusting it would have the caller wait forever.
const MAX_VALUE: usize = 1 << 30;

/// The longest line of a control reply (`stats`, `version`) before it is called garbage.
const MAX_CONTROL_LINE: usize = 64 * 1024;

/// How much of the input an invalid reply's message may quote.
const QUOTE: usize = 64;

// ---------------------------------------------------------------------------------------
// Helpers shared with `resp`.

/// A number written in decimal, on the stack: `format!` would allocate on every request.
pub(super) struct Decimal {
    buf: [u8; 20],
    start: usize,
}

impl Decimal {
    #[inline]
    pub(super) fn new(mut n: u64) -> Decimal {
        // u64::MAX has 20 digits. Filled from the end, so no reversal is needed.
        let mut buf = [0u8; 20];
        let mut start = buf.len();
        loop {
            start -= 1;
            buf[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Decimal { buf, start }
    }

    #[inline]
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Appends `n` in decimal.
#[inline]
pub(super) fn push_decimal(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(Decimal::new(n).as_bytes());
}

/// A non-negative decimal number: digits only (no sign, no space), at least one, no overflow.
#[inline]
pub(super) fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(v))?;
    }
    Some(n)
}

/// The position of the first `\n` in `hay`. Eight bytes at a time (the "has a zero byte" bit
/// trick on the word XORed with `\n`s): std's `memchr` is not public, and reply lines are
/// short enough that a library call would not pay, but a 250-byte key in a `VALUE` line is
/// long enough for a byte loop to show.
#[inline]
pub(super) fn find_newline(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ NEWLINES;
        // The lowest flagged byte is exactly the first zero byte (a borrow can only flag
        // bytes above a real zero), and little-endian puts the first byte lowest.
        let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
        if zeros != 0 {
            return Some(base + (zeros.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| base + i)
}

/// The first `QUOTE` bytes of `input`, escaped, for a message.
pub(super) fn quote(input: &[u8]) -> String {
    input[..input.len().min(QUOTE)].escape_ascii().to_string()
}

/// An invalid reply: what was wrong, and the start of the input (escaped, at most 64 bytes).
#[cold]
pub(super) fn invalid(what: impl Display, input: &[u8]) -> Parsed {
    Parsed::Invalid(format!("{what}: \"{}\"", quote(input)))
}

/// Where one line, starting at `from`, ends.
pub(super) enum Line {
    /// The line's `\r` is at this index (the `\n` follows it).
    Ends(usize),
    /// No `\n` yet.
    Partial,
    /// Not a line a server sends: a bare `\n`, or none within the limit.
    Bad(&'static str),
}

/// The line that starts at `from`, which may be at most `max` bytes long (with its `\r\n`).
#[inline]
pub(super) fn line_at(input: &[u8], from: usize, max: usize) -> Line {
    let window = &input[from.min(input.len())..input.len().min(from.saturating_add(max))];
    match find_newline(window) {
        Some(0) => Line::Bad("a line ends in \\n without \\r"),
        Some(i) if window[i - 1] != b'\r' => Line::Bad("a line ends in \\n without \\r"),
        Some(i) => Line::Ends(from + i - 1),
        None if window.len() >= max => Line::Bad("no line end where one must be"),
        None => Line::Partial,
    }
}

#[inline]
fn reply(reply: Reply, consumed: usize) -> Parsed {
    Parsed::Reply { reply, consumed }
}

// ---------------------------------------------------------------------------------------
// Encoding.

/// Whether memcached accepts `key` as is: 1 to 250 bytes, no spaces or control characters.
fn valid_key(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= 250 && key.iter().all(|&b| b > b' ' && b != 0x7f)
}

/// Appends a classic text request. A set sends flags 0 and `ttl` as the exptime; memcached
/// reads an exptime above 30 days (2,592,000 s) as a Unix time, so a ttl that long expires
/// at once: the caller keeps ttls below that.
pub fn encode_text(out: &mut Vec<u8>, command: Command, key: &[u8], value: &[u8], ttl: u32) {
    debug_assert!(
        valid_key(key),
        "not a memcached key: {:?}",
        key.escape_ascii()
    );
    match command {
        Command::Get => {
            out.reserve(key.len() + 6);
            out.extend_from_slice(b"get ");
            out.extend_from_slice(key);
            out.extend_from_slice(b"\r\n");
        }
        Command::Set => {
            // "set " + key + " 0 " + ttl (10) + " " + len (20) + "\r\n" + value + "\r\n"
            out.reserve(key.len() + value.len() + 43);
            out.extend_from_slice(b"set ");
            out.extend_from_slice(key);
            out.extend_from_slice(b" 0 ");
            push_decimal(out, u64::from(ttl));
            out.push(b' ');
            push_decimal(out, value.len() as u64);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        Command::Delete => {
            out.reserve(key.len() + 9);
            out.extend_from_slice(b"delete ");
            out.extend_from_slice(key);
            out.extend_from_slice(b"\r\n");
        }
        // The mix encodes its own commands.
        Command::Custom { .. } => {}
    }
}

/// Appends a meta request that carries `token` as its opaque (`O`) flag. A set's `T` flag
/// is left out when `ttl` is 0 (no expiry, the server's default); the 30-day rule of
/// [`encode_text`] applies to it as well.
pub fn encode_meta(
    out: &mut Vec<u8>,
    command: Command,
    key: &[u8],
    value: &[u8],
    ttl: u32,
    token: u32,
) {
    debug_assert!(
        valid_key(key),
        "not a memcached key: {:?}",
        key.escape_ascii()
    );
    match command {
        Command::Get => {
            // "mg " + key + " v O" + token (10) + "\r\n"
            out.reserve(key.len() + 19);
            out.extend_from_slice(b"mg ");
            out.extend_from_slice(key);
            out.extend_from_slice(b" v O");
        }
        Command::Set => {
            // "ms " + key + " " + len (20) + " T" + ttl (10) + " O" + token (10) + "\r\n"
            // + value + "\r\n"
            out.reserve(key.len() + value.len() + 52);
            out.extend_from_slice(b"ms ");
            out.extend_from_slice(key);
            out.push(b' ');
            push_decimal(out, value.len() as u64);
            if ttl != 0 {
                out.extend_from_slice(b" T");
                push_decimal(out, u64::from(ttl));
            }
            out.extend_from_slice(b" O");
        }
        Command::Delete => {
            // "md " + key + " O" + token (10) + "\r\n"
            out.reserve(key.len() + 17);
            out.extend_from_slice(b"md ");
            out.extend_from_slice(key);
            out.extend_from_slice(b" O");
        }
        // The mix encodes its own commands.
        Command::Custom { .. } => return,
    }
    push_decimal(out, u64::from(token));
    out.extend_from_slice(b"\r\n");
    if command == Command::Set {
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
}

// ---------------------------------------------------------------------------------------
// Parsing replies.

/// The error lines either protocol may send in answer to anything.
const ERROR_STARTS: [&[u8]; 3] = [b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR"];

/// Whether `line` is the word `word`, alone or followed by a space and more.
#[inline]
fn is_word(line: &[u8], word: &[u8]) -> bool {
    line.starts_with(word) && (line.len() == word.len() || line[word.len()] == b' ')
}

#[inline]
fn is_error(line: &[u8]) -> bool {
    ERROR_STARTS.iter().any(|word| is_word(line, word))
}

/// Whether a line that has only partly arrived can still become one that starts with one of
/// `words` (or an error): garbage is reported as soon as its first bytes show it, rather than
/// after `MAX_LINE` bytes of waiting.
fn may_start(partial: &[u8], words: &[&[u8]]) -> bool {
    words.iter().chain(ERROR_STARTS.iter()).any(|word| {
        let n = partial.len().min(word.len());
        partial[..n] == word[..n]
    })
}

/// The first line of a reply: `Ok(index of its \r)`, or what to answer while it is not all
/// here (incomplete, or already not a reply that starts with one of `words`).
#[inline]
fn first_line(input: &[u8], words: &[&[u8]]) -> Result<usize, Parsed> {
    match line_at(input, 0, MAX_LINE) {
        Line::Ends(cr) => Ok(cr),
        Line::Partial if may_start(input, words) => Err(Parsed::Incomplete { need: 0 }),
        Line::Partial => Err(invalid(
            "not the start of a reply memcached sends here",
            input,
        )),
        Line::Bad(what) => Err(invalid(what, input)),
    }
}

/// Parses a classic text reply to `command` at the front of `input`.
pub fn parse_text(input: &[u8], command: Command) -> Parsed {
    let words: &[&[u8]] = match command {
        Command::Get => &[b"VALUE ", b"END\r"],
        Command::Set => &[b"STORED\r", b"NOT_STORED\r"],
        Command::Delete => &[b"DELETED\r", b"NOT_FOUND\r"],
        Command::Custom { values, .. } => return parse_custom(input, values),
    };
    let cr = match first_line(input, words) {
        Ok(cr) => cr,
        Err(parsed) => return parsed,
    };
    let line = &input[..cr];
    let consumed = cr + 2;
    match command {
        Command::Get => {
            if line == b"END" {
                return reply(Reply::Miss, consumed);
            }
            if let Some(fields) = line.strip_prefix(b"VALUE ") {
                return text_value(input, fields, consumed);
            }
        }
        Command::Set => {
            if line == b"STORED" {
                return reply(Reply::Done, consumed);
            }
            if line == b"NOT_STORED" {
                return reply(Reply::Refused { message: 0..cr }, consumed);
            }
        }
        Command::Delete => {
            if line == b"DELETED" {
                return reply(Reply::Done, consumed);
            }
            if line == b"NOT_FOUND" {
                return reply(Reply::Miss, consumed);
            }
        }
        Command::Custom { .. } => {}
    }
    if is_error(line) {
        return reply(Reply::Refused { message: 0..cr }, consumed);
    }
    invalid(format_args!("not a reply to {}", command.name()), input)
}

/// The rest of a hit, after `VALUE `: `<key> <flags> <bytes>[ <cas>]`, then the data, then
/// `END`. `start` is where the data starts (just past the header line).
fn text_value(input: &[u8], fields: &[u8], start: usize) -> Parsed {
    let mut fields = fields.split(|&b| b == b' ');
    let key = fields.next().unwrap_or_default();
    let flags = fields.next().and_then(parse_decimal);
    let len = fields.next().and_then(parse_decimal);
    let cas_ok = fields.next().is_none_or(|cas| parse_decimal(cas).is_some());
    let (Some(flags), Some(len)) = (flags, len) else {
        return invalid("a VALUE line without its flags and length", input);
    };
    if key.is_empty() || flags > u64::from(u32::MAX) || !cas_ok || fields.next().is_some() {
        return invalid("a malformed VALUE line", input);
    }
    if len > MAX_VALUE as u64 {
        return invalid("a value longer than memcached stores", input);
    }
    let end = start + len as usize;
    let total = end + b"\r\nEND\r\n".len();
    if input.len() < total {
        return Parsed::Incomplete { need: total };
    }
    if &input[end..end + 2] != b"\r\n" {
        return invalid("a value not followed by \\r\\n", input);
    }
    match &input[end + 2..total] {
        b"END\r\n" => reply(Reply::Hit { value: start..end }, total),
        b"VALUE" => invalid("more than one VALUE for one key", input),
        _ => invalid("a value not followed by END", input),
    }
}

/// Parses a meta reply to `command`, sent with opaque `token`, at the front of `input`.
pub fn parse_meta(input: &[u8], command: Command, token: u32) -> Parsed {
    let words: &[&[u8]] = match command {
        Command::Get => &[b"VA ", b"EN"],
        Command::Set => &[b"HD", b"NS"],
        Command::Delete => &[b"HD", b"NF"],
        Command::Custom { values, .. } => return parse_custom(input, values),
    };
    let cr = match first_line(input, words) {
        Ok(cr) => cr,
        Err(parsed) => return parsed,
    };
    let line = &input[..cr];
    let consumed = cr + 2;
    // A status line is a two-letter code, then the flags, each after one space.
    if line.len() == 2 || (line.len() > 2 && line[2] == b' ') {
        let flags = line.get(3..).unwrap_or_default();
        let outcome = match (command, &line[..2]) {
            (Command::Get, b"VA") => return meta_value(input, flags, consumed, token),
            (Command::Get, b"EN") => Some((Reply::Miss, false)),
            (Command::Set | Command::Delete, b"HD") => Some((Reply::Done, true)),
            (Command::Set, b"NS") => Some((Reply::Refused { message: 0..cr }, true)),
            (Command::Delete, b"NF") => Some((Reply::Miss, true)),
            _ => None,
        };
        if let Some((answer, required)) = outcome {
            return match check_token(input, flags, token, required) {
                Ok(()) => reply(answer, consumed),
                Err(parsed) => parsed,
            };
        }
    }
    if is_error(line) {
        return reply(Reply::Refused { message: 0..cr }, consumed);
    }
    invalid(
        format_args!("not a meta reply to {}", command.name()),
        input,
    )
}

/// The rest of a meta hit, after `VA `: `<len> <flags>*`, then the data.
fn meta_value(input: &[u8], flags: &[u8], start: usize, token: u32) -> Parsed {
    let (len, flags) = match flags.iter().position(|&b| b == b' ') {
        Some(space) => (&flags[..space], &flags[space + 1..]),
        None => (flags, &[][..]),
    };
    let Some(len) = parse_decimal(len) else {
        return invalid("a VA line without its length", input);
    };
    if len > MAX_VALUE as u64 {
        return invalid("a value longer than memcached stores", input);
    }
    // The token is in the header: a reply to some other request is refused before its data
    // is waited for.
    if let Err(parsed) = check_token(input, flags, token, true) {
        return parsed;
    }
    let end = start + len as usize;
    let total = end + 2;
    if input.len() < total {
        return Parsed::Incomplete { need: total };
    }
    if &input[end..total] != b"\r\n" {
        return invalid("a value not followed by \\r\\n", input);
    }
    reply(Reply::Hit { value: start..end }, total)
}

/// Checks the opaque flag among a meta reply's `flags` against `token`: a different one is
/// a reply to another request; none at all is allowed only where a server may leave it out.
fn check_token(input: &[u8], flags: &[u8], token: u32, required: bool) -> Result<(), Parsed> {
    let mut seen = false;
    // Flags are separated by one space; an empty one (two spaces, a trailing space) is
    // tolerated, since it changes nothing about which request is answered.
    for flag in flags.split(|&b| b == b' ') {
        if let Some(text) = flag.strip_prefix(b"O") {
            if parse_decimal(text) != Some(u64::from(token)) {
                let shown = &text[..text.len().min(20)];
                return Err(invalid(
                    format_args!("reply token {} for request {token}", shown.escape_ascii()),
                    input,
                ));
            }
            seen = true;
        }
    }
    if required && !seen {
        return Err(invalid(
            format_args!("reply without a token for request {token}"),
            input,
        ));
    }
    Ok(())
}

/// Parses the reply to a mix's command ([`Command::Custom`]): with `values`, `VALUE`
/// blocks (any number: a `get` of several keys) ended by `END`; else one line, and the data
/// block a `VA <len>` line announces. An error line is a refusal; any other whole reply is
/// a [`Reply::Value`] (`NOT_FOUND`, `EN` and `NS` are what the command asked, not errors).
pub fn parse_custom(input: &[u8], values: bool) -> Parsed {
    let mut at = 0;
    loop {
        let cr = match line_at(input, at, MAX_LINE) {
            Line::Ends(cr) => cr,
            Line::Partial => return Parsed::Incomplete { need: 0 },
            Line::Bad(what) => return invalid(what, input),
        };
        let line = &input[at..cr];
        let next = cr + 2;
        if is_error(line) {
            return reply(Reply::Refused { message: at..cr }, next);
        }
        let block = if values {
            match line.strip_prefix(b"VALUE ") {
                _ if line == b"END" => return reply(Reply::Value { kind: 0 }, next),
                Some(fields) => fields.split(|&b| b == b' ').nth(2).and_then(parse_decimal),
                None => return invalid("not a line of a reply to get", input),
            }
        } else {
            line.strip_prefix(b"VA ")
                .and_then(|f| f.split(|&b| b == b' ').next())
                .and_then(parse_decimal)
        };
        let Some(len) = block else {
            if values {
                return invalid("a VALUE line without its length", input);
            }
            return reply(Reply::Value { kind: 0 }, next);
        };
        if len > MAX_VALUE as u64 {
            return invalid("a value longer than memcached stores", input);
        }
        let end = next + len as usize;
        if input.len() < end + 2 {
            return Parsed::Incomplete { need: end + 2 };
        }
        if &input[end..end + 2] != b"\r\n" {
            return invalid("a value not followed by \\r\\n", input);
        }
        if !values {
            return reply(Reply::Value { kind: 0 }, end + 2);
        }
        at = end + 2;
    }
}

// ---------------------------------------------------------------------------------------
// Control connection: `stats` and `version`. Not the hot path, so these allocate.

/// The lines of a control reply, one at a time: `Ok(None)` when the next one is not all here.
fn control_line(input: &[u8], from: usize) -> Result<Option<(&[u8], usize)>, String> {
    match line_at(input, from, MAX_CONTROL_LINE) {
        Line::Ends(cr) => Ok(Some((&input[from..cr], cr + 2))),
        Line::Partial => Ok(None),
        Line::Bad(what) => Err(format!("{what}: \"{}\"", quote(&input[from..]))),
    }
}

/// Parses the reply to `stats\r\n`: `STAT <name> <value>` lines until `END`. Returns the
/// statistics in the server's order and the bytes taken, `Ok(None)` if the reply is not all
/// here, and an error (the server's message, or what was wrong) for anything else.
#[allow(clippy::type_complexity)]
pub fn parse_stats(input: &[u8]) -> Result<Option<(Vec<(String, String)>, usize)>, String> {
    let mut stats = Vec::new();
    let mut at = 0;
    while let Some((line, next)) = control_line(input, at)? {
        if line == b"END" {
            return Ok(Some((stats, next)));
        }
        if let Some(stat) = line.strip_prefix(b"STAT ") {
            let (name, value) = match stat.iter().position(|&b| b == b' ') {
                Some(space) => (&stat[..space], &stat[space + 1..]),
                None => (stat, &[][..]),
            };
            if name.is_empty() {
                return Err(format!("a STAT line without a name: \"{}\"", quote(line)));
            }
            stats.push((
                String::from_utf8_lossy(name).into_owned(),
                String::from_utf8_lossy(value).into_owned(),
            ));
        } else if is_error(line) {
            return Err(String::from_utf8_lossy(line).into_owned());
        } else {
            return Err(format!("not a line of a stats reply: \"{}\"", quote(line)));
        }
        at = next;
    }
    Ok(None)
}

/// Parses the reply to `version\r\n` (`VERSION 1.6.18`): the version and the bytes taken,
/// `Ok(None)` if the line is not all here, an error for anything else.
pub fn parse_version(input: &[u8]) -> Result<Option<(String, usize)>, String> {
    let Some((line, next)) = control_line(input, 0)? else {
        return Ok(None);
    };
    match line.strip_prefix(b"VERSION ") {
        Some(version) if !version.is_empty() => {
            Ok(Some((String::from_utf8_lossy(version).into_owned(), next)))
        }
        _ if is_error(line) => Err(String::from_utf8_lossy(line).into_owned()),
        _ => Err(format!("not a version reply: \"{}\"", quote(line))),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A fixed budget, unless `PROPTEST_CASES` asks for more (as in tests/fuzz.rs).
    fn cases(n: u32) -> ProptestConfig {
        let n = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(n);
        ProptestConfig {
            cases: n,
            ..ProptestConfig::default()
        }
    }

    const COMMANDS: [Command; 3] = [Command::Get, Command::Set, Command::Delete];

    fn text(input: &[u8], command: Command) -> Parsed {
        parse_text(input, command)
    }

    fn whole(reply: Reply, consumed: usize) -> Parsed {
        Parsed::Reply { reply, consumed }
    }

    fn hit(value: std::ops::Range<usize>, consumed: usize) -> Parsed {
        whole(Reply::Hit { value }, consumed)
    }

    #[track_caller]
    fn assert_invalid(parsed: Parsed, says: &str) {
        match parsed {
            Parsed::Invalid(message) => assert!(message.contains(says), "{message}"),
            other => panic!("expected Invalid ({says}), got {other:?}"),
        }
    }

    /// `bytes` is one whole reply: `parse` gives `expected` for it, `Incomplete` for every
    /// proper prefix (with `need` the whole length once the header line is in, else 0), and
    /// the same reply, consuming exactly `bytes`, with another reply behind it.
    #[track_caller]
    fn check_reply(parse: impl Fn(&[u8]) -> Parsed, bytes: &[u8], expected: Reply) {
        assert_eq!(
            parse(bytes),
            whole(expected.clone(), bytes.len()),
            "{}",
            bytes.escape_ascii()
        );
        let header = find_newline(bytes).unwrap() + 1;
        for cut in 0..bytes.len() {
            let need = if cut >= header { bytes.len() } else { 0 };
            assert_eq!(
                parse(&bytes[..cut]),
                Parsed::Incomplete { need },
                "{} cut at {cut}",
                bytes.escape_ascii()
            );
        }
        for next in [
            &b"END\r\n"[..],
            b"HD O1\r\n",
            b"VALUE k 0 1\r\nx\r\nEND\r\n",
            bytes,
        ] {
            let pipelined = [bytes, next].concat();
            assert_eq!(parse(&pipelined), whole(expected.clone(), bytes.len()));
        }
    }

    // -----------------------------------------------------------------------------------
    // Helpers.

    #[test]
    fn decimals_are_written_and_read_by_hand() {
        for n in [0, 7, 9, 10, 99, 100, 12345, u64::from(u32::MAX), u64::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
            assert_eq!(parse_decimal(&out[1..]), Some(n));
        }
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b"1 ",
            b" 1",
            b"1a",
            b"18446744073709551616",
        ] {
            assert_eq!(parse_decimal(bad), None, "{}", bad.escape_ascii());
        }
        assert_eq!(parse_decimal(b"007"), Some(7));
    }

    #[test]
    fn newlines_are_found_at_every_position() {
        for len in 0..40 {
            for at in 0..=len {
                let mut hay = vec![b'a'; len];
                if at < len {
                    hay[at] = b'\n';
                }
                let expected = (at < len).then_some(at);
                assert_eq!(find_newline(&hay), expected, "len {len} at {at}");
                // A second newline later changes nothing; a byte like 0x0a | 0x80 is no match.
                hay.push(b'\n');
                hay.insert(0, 0x8a);
                assert_eq!(find_newline(&hay[1..]), Some(expected.unwrap_or(len)));
            }
        }
    }

    #[test]
    fn lines_must_end_in_crlf_within_the_limit() {
        assert!(matches!(line_at(b"ab\r\n", 0, 10), Line::Ends(2)));
        assert!(matches!(line_at(b"xxab\r\n", 2, 10), Line::Ends(4)));
        assert!(matches!(line_at(b"ab\r", 0, 10), Line::Partial));
        assert!(matches!(line_at(b"ab", 5, 10), Line::Partial));
        assert!(matches!(line_at(b"ab\n", 0, 10), Line::Bad(_)));
        assert!(matches!(line_at(b"\n", 0, 10), Line::Bad(_)));
        assert!(matches!(line_at(b"abcdefghij", 0, 10), Line::Bad(_)));
        assert!(matches!(line_at(b"abcdefgh\r\n", 0, 10), Line::Ends(8)));
    }

    // -----------------------------------------------------------------------------------
    // Encoding.

    fn encoded(command: Command, value: &[u8], ttl: u32, token: Option<u32>) -> Vec<u8> {
        // Something already in the buffer stays: encoding appends.
        let mut out = b"<".to_vec();
        match token {
            None => encode_text(&mut out, command, b"key:1", value, ttl),
            Some(token) => encode_meta(&mut out, command, b"key:1", value, ttl, token),
        }
        out.split_off(1)
    }

    #[test]
    fn text_requests_are_the_documented_bytes() {
        assert_eq!(encoded(Command::Get, b"", 0, None), b"get key:1\r\n");
        assert_eq!(
            encoded(Command::Set, b"hello", 0, None),
            b"set key:1 0 0 5\r\nhello\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"", 3600, None),
            b"set key:1 0 3600 0\r\n\r\n"
        );
        assert_eq!(encoded(Command::Delete, b"x", 9, None), b"delete key:1\r\n");
        let big = vec![b'v'; 20_000];
        let set = encoded(Command::Set, &big, 0, None);
        assert_eq!(&set[..21], b"set key:1 0 0 20000\r\n");
        assert_eq!(set.len(), 21 + 20_000 + 2);
    }

    #[test]
    fn meta_requests_are_the_documented_bytes() {
        assert_eq!(
            encoded(Command::Get, b"", 0, Some(123)),
            b"mg key:1 v O123\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"hello", 0, Some(42)),
            b"ms key:1 5 O42\r\nhello\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"hello", 60, Some(43)),
            b"ms key:1 5 T60 O43\r\nhello\r\n"
        );
        assert_eq!(
            encoded(Command::Delete, b"x", 5, Some(u32::MAX)),
            b"md key:1 O4294967295\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"", 0, Some(0)),
            b"ms key:1 0 O0\r\n\r\n"
        );
    }

    #[test]
    fn keys_memcached_refuses_are_caught_in_debug_builds() {
        assert!(valid_key(b"key:1"));
        assert!(valid_key(&[b'k'; 250]));
        for bad in [&b""[..], b"a b", b"a\r\nb", b"\x7f", &[b'k'; 251]] {
            assert!(!valid_key(bad), "{}", bad.escape_ascii());
        }
    }

    // -----------------------------------------------------------------------------------
    // Text replies (the bytes memcached 1.6.18 sent, see the module docs).

    #[test]
    fn text_get_hits_and_misses() {
        let get = |input: &[u8]| text(input, Command::Get);
        check_reply(
            get,
            b"VALUE k1 0 5\r\nhello\r\nEND\r\n",
            Reply::Hit { value: 14..19 },
        );
        // With a cas (as `gets` sends), and flags.
        check_reply(
            get,
            b"VALUE k1 4294967295 5 1\r\nhello\r\nEND\r\n",
            Reply::Hit { value: 25..30 },
        );
        check_reply(
            get,
            b"VALUE k 0 0\r\n\r\nEND\r\n",
            Reply::Hit { value: 13..13 },
        );
        check_reply(get, b"END\r\n", Reply::Miss);
        // A value is framed by its length, never by what it holds.
        check_reply(
            get,
            b"VALUE k 0 7\r\n\r\nEND\r\n\r\nEND\r\n",
            Reply::Hit { value: 13..20 },
        );
    }

    #[test]
    fn text_set_and_delete_replies() {
        let set = |input: &[u8]| text(input, Command::Set);
        let delete = |input: &[u8]| text(input, Command::Delete);
        check_reply(set, b"STORED\r\n", Reply::Done);
        check_reply(set, b"NOT_STORED\r\n", Reply::Refused { message: 0..10 });
        check_reply(delete, b"DELETED\r\n", Reply::Done);
        check_reply(delete, b"NOT_FOUND\r\n", Reply::Miss);
    }

    #[test]
    fn a_commands_reply_ends_where_its_kind_says() {
        let whole = |input: &[u8], values: bool| match parse_custom(input, values) {
            Parsed::Reply { reply, consumed } => (reply, consumed),
            other => panic!("{other:?}"),
        };
        let value = Reply::Value { kind: 0 };
        // A get of two keys, one missing: two VALUE blocks would be one reply, END closes it.
        let two = b"VALUE a 0 1\r\nx\r\nVALUE b 0 2\r\nyz\r\nEND\r\nSTORED\r\n";
        assert_eq!(whole(two, true), (value.clone(), two.len() - 8));
        assert_eq!(whole(b"END\r\n", true), (value.clone(), 5));
        assert_eq!(whole(b"NOT_FOUND\r\n", false), (value.clone(), 11));
        assert_eq!(whole(b"VA 2 t\r\nhi\r\nEN\r\n", false), (value.clone(), 12));
        assert_eq!(
            whole(b"SERVER_ERROR out of memory\r\n", false),
            (Reply::Refused { message: 0..26 }, 28)
        );
        for cut in 1..two.len() - 8 {
            assert!(
                matches!(parse_custom(&two[..cut], true), Parsed::Incomplete { .. }),
                "cut at {cut}"
            );
        }
        assert!(matches!(
            parse_custom(b"STORED\r\n", true),
            Parsed::Invalid(_)
        ));
    }

    #[test]
    fn errors_are_refusals_to_any_command_in_both_protocols() {
        for line in [
            &b"ERROR"[..],
            b"CLIENT_ERROR bad command line format",
            b"CLIENT_ERROR bad data chunk",
            b"SERVER_ERROR object too large for cache",
            b"SERVER_ERROR out of memory storing object",
        ] {
            let bytes = [line, b"\r\n"].concat();
            let expected = Reply::Refused {
                message: 0..line.len(),
            };
            for command in COMMANDS {
                check_reply(|i: &[u8]| text(i, command), &bytes, expected.clone());
                check_reply(
                    |i: &[u8]| parse_meta(i, command, 7),
                    &bytes,
                    expected.clone(),
                );
            }
        }
    }

    #[test]
    fn a_large_value_in_pieces_asks_for_the_whole_reply() {
        let value = vec![b'y'; 20_000];
        let header = b"VALUE key:000123 0 20000\r\n";
        let reply = [&header[..], &value, b"\r\nEND\r\n"].concat();
        let total = reply.len();
        assert_eq!(
            text(&reply[..10], Command::Get),
            Parsed::Incomplete { need: 0 }
        );
        for have in [header.len(), header.len() + 1, 1500, 1500 + 1448, total - 1] {
            assert_eq!(
                text(&reply[..have], Command::Get),
                Parsed::Incomplete { need: total }
            );
        }
        assert_eq!(
            text(&reply, Command::Get),
            hit(header.len()..header.len() + 20_000, total)
        );

        let header = b"VA 20000 O5\r\n";
        let reply = [&header[..], &value, b"\r\n"].concat();
        let total = reply.len();
        assert_eq!(
            parse_meta(&reply[..12], Command::Get, 5),
            Parsed::Incomplete { need: 0 }
        );
        assert_eq!(
            parse_meta(&reply[..13], Command::Get, 5),
            Parsed::Incomplete { need: total }
        );
        assert_eq!(
            parse_meta(&reply, Command::Get, 5),
            hit(13..13 + 20_000, total)
        );
    }

    #[test]
    fn malformed_text_hits_are_invalid() {
        let get = |input: &[u8]| text(input, Command::Get);
        assert_invalid(
            get(b"VALUE k 0 5\r\nhello\r\nVALUE k 0 5\r\nhello\r\nEND\r\n"),
            "more than one VALUE",
        );
        assert_invalid(
            get(b"VALUE k 0 5\r\nhelloXX\r\nEND\r\n"),
            "not followed by \\r\\n",
        );
        assert_invalid(
            get(b"VALUE k 0 5\r\nhello\r\nENX\r\n"),
            "not followed by END",
        );
        for line in [
            &b"VALUE k 0\r\n"[..],
            b"VALUE k\r\n",
            b"VALUE \r\n",
            b"VALUE k x 5\r\n",
            b"VALUE k 0 -5\r\n",
            b"VALUE k 0 5x\r\n",
            b"VALUE k 0 +5\r\n",
        ] {
            assert_invalid(get(line), "without its flags and length");
        }
        for line in [
            &b"VALUE  0 5\r\n"[..],
            b"VALUE k 0 5 1 2\r\n",
            b"VALUE k 0 5 x\r\n",
            b"VALUE k 0 5 \r\n",
            b"VALUE k 4294967296 5\r\n",
        ] {
            assert_invalid(get(line), "malformed VALUE");
        }
        assert_invalid(get(b"VALUE k 0 1073741825\r\n"), "longer than");
        // At the limit it is a valid header that waits for its data.
        assert_eq!(
            get(b"VALUE k 0 1073741824\r\n"),
            Parsed::Incomplete {
                need: 22 + (1 << 30) + 7
            }
        );
    }

    #[test]
    fn replies_to_some_other_command_are_invalid() {
        for (line, not_for) in [
            (&b"STORED\r\n"[..], [Command::Get, Command::Delete]),
            (b"NOT_STORED\r\n", [Command::Get, Command::Delete]),
            (b"DELETED\r\n", [Command::Get, Command::Set]),
            (b"NOT_FOUND\r\n", [Command::Get, Command::Set]),
            (b"END\r\n", [Command::Set, Command::Delete]),
            (
                b"VALUE k 0 1\r\nx\r\nEND\r\n",
                [Command::Set, Command::Delete],
            ),
        ] {
            for command in not_for {
                assert_invalid(text(line, command), "not a reply to");
            }
        }
        // Meta replies are not text replies, and the other way round.
        assert_invalid(text(b"HD O1\r\n", Command::Set), "not a reply to set");
        assert_invalid(
            parse_meta(b"STORED\r\n", Command::Set, 1),
            "not a meta reply",
        );
        assert_invalid(parse_meta(b"STOR", Command::Set, 1), "not the start");
        assert_invalid(parse_meta(b"END\r\n", Command::Get, 1), "not a meta reply");
    }

    #[test]
    fn garbage_is_invalid_as_soon_as_it_shows() {
        // Not a prefix of anything memcached sends: no need to wait for a line end.
        assert_invalid(text(b"HTTP/1.1 400", Command::Get), "not the start");
        assert_invalid(text(b"+OK", Command::Set), "not the start");
        assert_invalid(parse_meta(b"$5\r", Command::Get, 1), "not the start");
        // A prefix that could still be a reply waits, up to the line limit.
        assert_eq!(
            text(b"SERVER_ERR", Command::Get),
            Parsed::Incomplete { need: 0 }
        );
        let long = [&b"SERVER_ERROR "[..], &[b'x'; MAX_LINE]].concat();
        assert_invalid(text(&long, Command::Get), "no line end");
        assert_invalid(text(b"END\n", Command::Get), "without \\r");
        assert_invalid(text(b"\n", Command::Delete), "without \\r");
        assert_invalid(text(b"ENDED\r\n", Command::Get), "not a reply to get");
        assert_invalid(text(b"STORED \r\n", Command::Set), "not a reply to set");
    }

    #[test]
    fn invalid_messages_quote_at_most_64_bytes() {
        let mut input = vec![b'x'; 64];
        input.extend_from_slice(b"TAIL\r\n");
        for command in COMMANDS {
            for parsed in [text(&input, command), parse_meta(&input, command, 1)] {
                let Parsed::Invalid(message) = parsed else {
                    panic!("{parsed:?}");
                };
                assert!(!message.contains("TAIL") && message.contains(&"x".repeat(64)));
            }
        }
        // Escaped: control bytes and non-ASCII show as escapes, never raw.
        let Parsed::Invalid(message) = text(b"\x00\xff\x1b[2J\r\n", Command::Get) else {
            panic!()
        };
        assert!(message.contains("\\x00\\xff\\x1b[2J"), "{message}");
    }

    // -----------------------------------------------------------------------------------
    // Meta replies.

    #[test]
    fn meta_get_hits_and_misses() {
        let get = |input: &[u8]| parse_meta(input, Command::Get, 123);
        check_reply(get, b"VA 5 O123\r\nhello\r\n", Reply::Hit { value: 11..16 });
        check_reply(get, b"VA 0 O123\r\n\r\n", Reply::Hit { value: 11..11 });
        // Flags the request did not ask for, in any order, are ignored.
        check_reply(
            get,
            b"VA 5 f0 O123 t-1 kkey:1\r\nhello\r\n",
            Reply::Hit { value: 25..30 },
        );
        check_reply(
            get,
            b"VA 4 O123\r\n\r\n\r\n\r\n",
            Reply::Hit { value: 11..15 },
        );
        // A miss, with the token (memcached 1.6.18) and without (older 1.6).
        check_reply(get, b"EN O123\r\n", Reply::Miss);
        check_reply(get, b"EN\r\n", Reply::Miss);
        let max = |input: &[u8]| parse_meta(input, Command::Get, u32::MAX);
        check_reply(
            max,
            b"VA 1 O4294967295\r\nx\r\n",
            Reply::Hit { value: 18..19 },
        );
    }

    #[test]
    fn meta_set_and_delete_replies() {
        let set = |input: &[u8]| parse_meta(input, Command::Set, 42);
        let delete = |input: &[u8]| parse_meta(input, Command::Delete, 6);
        check_reply(set, b"HD O42\r\n", Reply::Done);
        check_reply(set, b"NS O42\r\n", Reply::Refused { message: 0..6 });
        check_reply(delete, b"HD O6\r\n", Reply::Done);
        check_reply(delete, b"NF O6\r\n", Reply::Miss);
        check_reply(delete, b"NF O6 kkey:1\r\n", Reply::Miss);
    }

    #[test]
    fn a_reply_to_another_request_is_invalid() {
        let get = |input: &[u8]| parse_meta(input, Command::Get, 8);
        assert_invalid(
            parse_meta(b"HD O7\r\n", Command::Set, 8),
            "reply token 7 for request 8",
        );
        assert_invalid(get(b"EN O7\r\n"), "reply token 7 for request 8");
        assert_invalid(get(b"VA 5 O9\r\nhello\r\n"), "reply token 9 for request 8");
        // Caught from the header, before the data arrives.
        assert_invalid(get(b"VA 5 O9\r\nhe"), "reply token 9 for request 8");
        assert_invalid(
            get(b"VA 5 Oabc\r\nhello\r\n"),
            "reply token abc for request 8",
        );
        assert_invalid(get(b"VA 5 O\r\nhello\r\n"), "reply token  for request 8");
        assert_invalid(
            get(b"VA 5 O8 O9\r\nhello\r\n"),
            "reply token 9 for request 8",
        );
        assert_invalid(
            parse_meta(b"HD O4294967296\r\n", Command::Delete, 0),
            "reply token 4294967296 for request 0",
        );
        // Only a miss may leave the token out.
        assert_invalid(parse_meta(b"HD\r\n", Command::Set, 8), "without a token");
        assert_invalid(parse_meta(b"NF\r\n", Command::Delete, 8), "without a token");
        assert_invalid(get(b"VA 5\r\nhello\r\n"), "without a token");
    }

    #[test]
    fn malformed_meta_replies_are_invalid() {
        let get = |input: &[u8]| parse_meta(input, Command::Get, 1);
        assert_invalid(get(b"VA O1\r\nhello\r\n"), "without its length");
        assert_invalid(get(b"VA\r\n"), "without its length");
        assert_invalid(get(b"VA 5 O1\r\nhelloXX"), "not followed by \\r\\n");
        assert_invalid(get(b"VA 1073741825 O1\r\n"), "longer than");
        assert_invalid(get(b"HD O1\r\n"), "not a meta reply to get");
        assert_invalid(get(b"MN\r\n"), "not a meta reply");
        assert_invalid(get(b"ENX\r\n"), "not a meta reply to get");
        assert_invalid(parse_meta(b"EN\r\n", Command::Set, 1), "not a meta reply");
        assert_invalid(
            parse_meta(b"NF O1\r\n", Command::Set, 1),
            "not a meta reply",
        );
        assert_invalid(
            parse_meta(b"NS O1\r\n", Command::Delete, 1),
            "not a meta reply",
        );
        assert_invalid(
            parse_meta(b"EX O1\r\n", Command::Set, 1),
            "not a meta reply",
        );
        assert_invalid(parse_meta(b"HDO1\r\n", Command::Set, 1), "not a meta reply");
    }

    // -----------------------------------------------------------------------------------
    // Control replies.

    /// The start of memcached 1.6.18's answer to `stats`, as sent.
    const STATS: &[u8] = b"STAT pid 20244\r\nSTAT uptime 157\r\nSTAT time 1795588222\r\n\
        STAT version 1.6.18\r\nSTAT libevent 2.1.12-stable\r\nSTAT rusage_user 0.015943\r\n\
        STAT odd\r\nSTAT spaced a b\r\nEND\r\n";

    #[test]
    fn stats_are_read_to_their_end() {
        let (stats, consumed) = parse_stats(STATS).unwrap().unwrap();
        assert_eq!(consumed, STATS.len());
        let pairs: Vec<(&str, &str)> = stats
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("pid", "20244"),
                ("uptime", "157"),
                ("time", "1795588222"),
                ("version", "1.6.18"),
                ("libevent", "2.1.12-stable"),
                ("rusage_user", "0.015943"),
                ("odd", ""),
                ("spaced", "a b"),
            ]
        );
        for cut in 0..STATS.len() {
            assert_eq!(parse_stats(&STATS[..cut]), Ok(None), "cut at {cut}");
        }
        let two = [STATS, b"VERSION 1.6.18\r\n"].concat();
        assert_eq!(parse_stats(&two).unwrap().unwrap().1, STATS.len());
        assert_eq!(parse_stats(b"END\r\n"), Ok(Some((vec![], 5))));
    }

    #[test]
    fn stats_errors_say_what_came() {
        assert_eq!(parse_stats(b"ERROR\r\n"), Err("ERROR".to_string()));
        assert_eq!(
            parse_stats(b"STAT a 1\r\nSERVER_ERROR out of memory\r\n"),
            Err("SERVER_ERROR out of memory".to_string())
        );
        let bad = parse_stats(b"STAT a 1\r\nVALUE k 0 1\r\n").unwrap_err();
        assert!(bad.contains("VALUE k 0 1"), "{bad}");
        assert!(
            parse_stats(b"STAT  1\r\n")
                .unwrap_err()
                .contains("without a name")
        );
        assert!(parse_stats(b"STAT a 1\n").is_err());
        assert!(parse_stats(&vec![b'S'; MAX_CONTROL_LINE]).is_err());
    }

    #[test]
    fn versions_are_read() {
        assert_eq!(
            parse_version(b"VERSION 1.6.18\r\n"),
            Ok(Some(("1.6.18".to_string(), 16)))
        );
        assert_eq!(
            parse_version(b"VERSION 1.6.18\r\nEND\r\n"),
            Ok(Some(("1.6.18".to_string(), 16)))
        );
        assert_eq!(parse_version(b"VERSION 1.6"), Ok(None));
        assert_eq!(parse_version(b"ERROR\r\n"), Err("ERROR".to_string()));
        assert!(parse_version(b"VERSION \r\n").is_err());
        assert!(parse_version(b"STAT pid 1\r\n").is_err());
    }

    // -----------------------------------------------------------------------------------
    // Properties.

    /// Pieces of near-valid replies, so random input often gets past the first byte.
    const PIECES: &[&str] = &[
        "VALUE ",
        "END",
        "\r\n",
        "\r",
        "\n",
        " ",
        "k",
        "0",
        "5",
        "1",
        "4294967295",
        "99999999999999999999",
        "hello",
        "STORED",
        "NOT_STORED",
        "DELETED",
        "NOT_FOUND",
        "ERROR",
        "CLIENT_ERROR ",
        "SERVER_ERROR ",
        "VA ",
        "EN",
        "HD",
        "NS",
        "NF",
        "MN",
        " O",
        "O7",
        "-",
        "STAT ",
        "VERSION ",
    ];

    fn near_valid() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(PIECES), 0..24)
            .prop_map(|pieces| pieces.concat().into_bytes())
    }

    /// Whole replies, as servers send them.
    const VALID: &[&[u8]] = &[
        b"VALUE k1 0 5\r\nhello\r\nEND\r\n",
        b"VALUE k1 0 5 1\r\nhello\r\nEND\r\n",
        b"END\r\n",
        b"STORED\r\n",
        b"NOT_STORED\r\n",
        b"DELETED\r\n",
        b"NOT_FOUND\r\n",
        b"ERROR\r\n",
        b"CLIENT_ERROR bad data chunk\r\n",
        b"VA 5 O7\r\nhello\r\n",
        b"VA 0 O7\r\n\r\n",
        b"EN O7\r\n",
        b"EN\r\n",
        b"HD O7\r\n",
        b"NS O7\r\n",
        b"NF O7\r\n",
        b"STAT pid 1\r\nSTAT version 1.6.18\r\nEND\r\n",
        b"VERSION 1.6.18\r\n",
    ];

    /// A valid reply (or two back to back) with up to three bytes inserted, removed or
    /// changed: the inputs nearest to correct, where a parser's edge cases are.
    /// (resp.rs uses it too.)
    pub(in super::super) fn mutated(
        valid: &'static [&'static [u8]],
    ) -> impl Strategy<Value = Vec<u8>> {
        let edit = (any::<prop::sample::Index>(), any::<u8>(), 0..3u8);
        (
            prop::sample::select(valid),
            prop::sample::select(valid),
            any::<bool>(),
            prop::collection::vec(edit, 0..4),
        )
            .prop_map(|(first, second, two, edits)| {
                let mut bytes = first.to_vec();
                if two {
                    bytes.extend_from_slice(second);
                }
                for (at, byte, op) in edits {
                    let i = at.index(bytes.len() + 1);
                    match op {
                        0 => bytes.insert(i, byte),
                        1 if i < bytes.len() => {
                            bytes.remove(i);
                        }
                        _ if i < bytes.len() => bytes[i] = byte,
                        _ => {}
                    }
                }
                bytes
            })
    }

    fn any_input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            near_valid(),
            mutated(VALID),
        ]
    }

    /// Random bytes, half of them drawn from `special` (framing bytes a parser must not trip
    /// on). One map over a plain byte vector: a strategy per byte is slow in debug builds.
    fn framing_bytes(special: &'static [u8], max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(any::<u8>(), 0..max).prop_map(move |mut bytes| {
            for b in &mut bytes {
                if *b & 1 == 0 {
                    *b = special[usize::from(*b >> 1) % special.len()];
                }
            }
            bytes
        })
    }

    /// The invariants of any parse: nothing past the input, ranges inside what was
    /// consumed, `need` beyond what is here, short messages.
    fn check_parsed(input: &[u8], parsed: &Parsed) -> Result<(), TestCaseError> {
        match parsed {
            Parsed::Reply { reply, consumed } => {
                prop_assert!(*consumed > 0 && *consumed <= input.len());
                if let Reply::Hit { value: r } | Reply::Refused { message: r } = reply {
                    prop_assert!(r.start <= r.end && r.end <= *consumed);
                }
            }
            Parsed::Incomplete { need } => prop_assert!(*need == 0 || *need > input.len()),
            Parsed::Invalid(message) => prop_assert!(message.len() < 400, "{message}"),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(cases(3000))]

        #[test]
        fn random_bytes_never_panic(input in any_input(), token in 0u32..10) {
            for command in COMMANDS {
                let as_text = |input: &[u8]| text(input, command);
                let as_meta = |input: &[u8]| parse_meta(input, command, token);
                for parse in [&as_text as &dyn Fn(&[u8]) -> Parsed, &as_meta] {
                    let parsed = parse(&input);
                    check_parsed(&input, &parsed)?;
                    // What a whole reply says, every shorter prefix waits for; what follows
                    // it changes nothing.
                    if let Parsed::Reply { consumed, .. } = parsed {
                        for cut in 0..consumed {
                            match parse(&input[..cut]) {
                                Parsed::Incomplete { need } => {
                                    prop_assert!(need == 0 || need == consumed)
                                }
                                other => prop_assert!(false, "cut {}: {:?}", cut, other),
                            }
                        }
                        let tail = [&input[..consumed], b"junk"].concat();
                        prop_assert_eq!(parse(&tail), parsed);
                    }
                }
            }
            if let Ok(Some((_, consumed))) = parse_stats(&input) {
                prop_assert!(consumed <= input.len());
            }
            if let Ok(Some((_, consumed))) = parse_version(&input) {
                prop_assert!(consumed <= input.len());
            }
        }

        #[test]
        fn newline_search_matches_a_byte_loop(hay in framing_bytes(b"\n\r\x8a\x00", 80)) {
            prop_assert_eq!(find_newline(&hay), hay.iter().position(|&b| b == b'\n'));
        }

        #[test]
        fn any_value_comes_back_whole(
            value in framing_bytes(b"\r\nE", 300),
            flags in any::<u32>(),
            cas in prop::option::of(any::<u64>()),
            token in any::<u32>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut header = format!("VALUE key:{token} {flags} {}", value.len()).into_bytes();
            if let Some(cas) = cas {
                header.extend_from_slice(format!(" {cas}").as_bytes());
            }
            header.extend_from_slice(b"\r\n");
            let bytes = [&header[..], &value, b"\r\nEND\r\n"].concat();
            let start = header.len();
            prop_assert_eq!(
                text(&bytes, Command::Get),
                hit(start..start + value.len(), bytes.len())
            );
            let at = cut.index(bytes.len());
            let need = if at >= start { bytes.len() } else { 0 };
            prop_assert_eq!(text(&bytes[..at], Command::Get), Parsed::Incomplete { need });

            let header = format!("VA {} O{token}\r\n", value.len()).into_bytes();
            let bytes = [&header[..], &value, b"\r\n"].concat();
            let start = header.len();
            prop_assert_eq!(
                parse_meta(&bytes, Command::Get, token),
                hit(start..start + value.len(), bytes.len())
            );
            let at = cut.index(bytes.len());
            let need = if at >= start { bytes.len() } else { 0 };
            prop_assert_eq!(
                parse_meta(&bytes[..at], Command::Get, token),
                Parsed::Incomplete { need }
            );
        }

        #[test]
        fn requests_frame_their_values(
            key in "[!-~]{1,250}",
            value in prop::collection::vec(any::<u8>(), 0..300),
            ttl in any::<u32>(),
            token in any::<u32>(),
        ) {
            for meta in [false, true] {
                let mut out = Vec::new();
                if meta {
                    encode_meta(&mut out, Command::Set, key.as_bytes(), &value, ttl, token);
                } else {
                    encode_text(&mut out, Command::Set, key.as_bytes(), &value, ttl);
                }
                // One header line, then exactly the value and \r\n.
                let line = find_newline(&out).unwrap();
                prop_assert_eq!(&out[line + 1..], [&value[..], b"\r\n"].concat());
                let header = std::str::from_utf8(&out[..line - 1]).unwrap();
                let words: Vec<&str> = header.split(' ').collect();
                prop_assert_eq!(words[1], key.as_str());
                let len = value.len().to_string();
                if meta {
                    prop_assert_eq!(words[2], len.as_str());
                    prop_assert_eq!(*words.last().unwrap(), format!("O{token}"));
                    prop_assert_eq!(words.len(), if ttl == 0 { 4 } else { 5 });
                } else {
                    let ttl = ttl.to_string();
                    prop_assert_eq!(&words[2..], ["0", ttl.as_str(), len.as_str()]);
                }
            }
        }
    }
}
