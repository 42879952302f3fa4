//! Redis's RESP2 and RESP3: requests encoded into a reused buffer, replies parsed in place.
//!
//! # On the wire
//!
//! A request is an array of bulk strings: `*<n>\r\n` then, per argument, `$<len>\r\n<bytes>\r\n`.
//! RESP2 and RESP3 requests are the same bytes; only the replies differ after `HELLO 3`.
//!
//! | request | bytes |
//! |---|---|
//! | get | `*2\r\n$3\r\nGET\r\n$<klen>\r\n<key>\r\n` |
//! | set | `*3\r\n$3\r\nSET\r\n$<klen>\r\n<key>\r\n$<vlen>\r\n<value>\r\n`, plus `$2\r\nEX\r\n$<d>\r\n<ttl>\r\n` as `*5` when the ttl is not 0 |
//! | delete | `*2\r\n$3\r\nDEL\r\n$<klen>\r\n<key>\r\n` |
//!
//! A reply is one value, its type in its first byte: `+` simple string, `-` error, `:`
//! integer, `$` bulk string (`$-1` is RESP2's null), `*` array; RESP3 adds `_` null, `,`
//! double, `#` boolean, `(` big number, `!` blob error, `=` verbatim string (`txt:` or
//! `mkd:` before the text), `%` map, `~` set, `>` push (an out-of-band message, not a reply),
//! and `|` attributes (a map that describes the reply that follows it).
//!
//! | reply | get | set | delete |
//! |---|---|---|---|
//! | `$<n>` + data | hit | | |
//! | `=<n>` + `txt:` + data | hit (on the text) | | |
//! | `$-1`, `_` | miss | | |
//! | `+OK` | | done | |
//! | `:1` / `:0` | | | done / miss |
//! | `-<message>`, `!<n>` + message | refused | refused | refused |
//!
//! Anything else (an array to a GET, `:2` to a DEL of one key) is [`Parsed::Invalid`]. Push
//! messages and attributes before a reply are skipped, without allocating, so a connection
//! with client tracking or a server that annotates replies still parses.
//!
//! # Checked on a real server
//!
//! redis-server 7.0.15, byte for byte: GET of a missing key → `$-1\r\n` (RESP2) and `_\r\n`
//! after `HELLO 3`; GET → `$5\r\nhello\r\n`, an empty value → `$0\r\n\r\n`; SET (with or
//! without `EX 60`) → `+OK\r\n`, but `EX 0` → `-ERR invalid expire time in 'set' command\r\n`
//! (hence no `EX` for a ttl of 0); DEL → `:1\r\n`, then `:0\r\n`; GET of a list →
//! `-WRONGTYPE Operation against a key holding the wrong kind of value\r\n`; `HELLO 3` →
//! `%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n...$7\r\nmodules\r\n*0\r\n`. With the debug command
//! enabled, `DEBUG PROTOCOL <type>` gave every RESP3 type: `,3.141`, `(1234567999...`,
//! `~3`, `%3` with `#t`/`#f` values, an attribute `|1\r\n$14\r\nkey-popularity\r\n*2...`
//! before its reply, a push `>2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n` before its reply, and
//! `=29\r\ntxt:This is a verbatim\nstring\r\n`.
//!
//! # Why zero-copy
//!
//! [`encode`] and [`parse`] are the load generator's inner loop. Encoding appends to the
//! connection's buffer with numbers written by hand on the stack; parsing returns ranges
//! into the input and skips a bulk string's bytes by its announced length (never scanning
//! them), and [`Parsed::Incomplete`] names the whole reply's size once its header is in, so a
//! large value arriving in pieces is parsed twice, not once per piece. Nothing allocates
//! except the message of an invalid reply. The control-connection helpers
//! ([`encode_command`], [`parse_value`]) build owned [`Value`]s; their limits (nesting depth,
//! element counts, lengths, and capacity never reserved ahead of the bytes that fill it) keep
//! garbage from allocating wildly or recursing deeply.

use super::memcache::{Line, invalid, line_at, parse_decimal, push_decimal, quote};
use super::protocol::{Command, Parsed, Reply};

/// The longest bulk string accepted: Redis's own limit (`proto-max-bulk-len`, 512 MB).
const MAX_BULK: u64 = 512 * 1024 * 1024;

/// The most elements (or map pairs) an aggregate may announce.
const MAX_ELEMENTS: u64 = 1 << 20;

/// How deeply aggregates may nest in one value.
const MAX_DEPTH: usize = 16;

/// The longest length or count line, `\r\n` included (a 64-bit number has at most 20 digits
/// with its sign): a longer one is garbage, reported at once rather than waited on.
const MAX_NUMBER_LINE: usize = 32;

/// The longest simple line (`+`, `-`, `,`, `(`): error messages may quote a key, but never
/// this much.
const MAX_TEXT_LINE: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------
// Encoding.

/// Appends `$<len>\r\n<bytes>\r\n`.
#[inline]
pub(super) fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'$');
    push_decimal(out, bytes.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// Appends a GET, SET (`EX <ttl>` when `ttl` is not 0) or DEL of `key`. RESP2 and RESP3
/// requests are the same bytes.
pub fn encode(out: &mut Vec<u8>, command: Command, key: &[u8], value: &[u8], ttl: u32) {
    match command {
        Command::Get => {
            out.reserve(key.len() + 39);
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
            push_bulk(out, key);
        }
        Command::Set => {
            out.reserve(key.len() + value.len() + 90);
            if ttl == 0 {
                out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
            } else {
                out.extend_from_slice(b"*5\r\n$3\r\nSET\r\n");
            }
            push_bulk(out, key);
            push_bulk(out, value);
            if ttl != 0 {
                out.extend_from_slice(b"$2\r\nEX\r\n");
                push_bulk(
                    out,
                    super::memcache::Decimal::new(u64::from(ttl)).as_bytes(),
                );
            }
        }
        Command::Delete => {
            out.reserve(key.len() + 39);
            out.extend_from_slice(b"*2\r\n$3\r\nDEL\r\n");
            push_bulk(out, key);
        }
        // The mix encodes its own commands.
        Command::Custom { .. } => {}
    }
}

/// Appends any command, as an array of bulk strings (`HELLO 3`, `CONFIG GET maxmemory`...).
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    push_decimal(out, args.len() as u64);
    out.extend_from_slice(b"\r\n");
    for arg in args {
        push_bulk(out, arg);
    }
}

// ---------------------------------------------------------------------------------------
// Pieces of parsing shared by the reply parser and the value parser.

/// A signed decimal: an optional `-`, then digits. RESP's integers, lengths and counts.
#[inline]
fn parse_signed(text: &[u8]) -> Option<i64> {
    match text.strip_prefix(b"-") {
        Some(digits) => {
            let n = parse_decimal(digits)?;
            // -9223372036854775808 has no positive counterpart in i64.
            if n == i64::MIN.unsigned_abs() {
                Some(i64::MIN)
            } else {
                i64::try_from(n).ok().map(|n| -n)
            }
        }
        None => i64::try_from(parse_decimal(text)?).ok(),
    }
}

/// What a type's header line says about its length: a bulk string's bytes or an
/// aggregate's elements.
enum Length {
    /// RESP2's null (`$-1`, `*-1`).
    Null,
    /// This many.
    Of(u64),
}

/// Reads the length in a header line (`input[at+1..cr]`), up to `max`; `-1` is allowed only
/// where `null` says so.
#[inline]
fn length(text: &[u8], max: u64, null: bool) -> Result<Length, &'static str> {
    if text == b"-1" && null {
        return Ok(Length::Null);
    }
    match parse_decimal(text) {
        Some(n) if n <= max => Ok(Length::Of(n)),
        Some(_) => Err("a length over the limit"),
        None => Err("not a length"),
    }
}

/// The name of a reply type, with its article, for messages.
pub(super) fn type_name(byte: u8) -> &'static str {
    match byte {
        b'+' => "a simple string",
        b'-' => "an error",
        b':' => "an integer",
        b'$' => "a bulk string",
        b'*' => "an array",
        b'_' => "a null",
        b',' => "a double",
        b'#' => "a boolean",
        b'(' => "a big number",
        b'!' => "a blob error",
        b'=' => "a verbatim string",
        b'%' => "a map",
        b'~' => "a set",
        b'>' => "a push",
        b'|' => "an attribute",
        _ => "unknown",
    }
}

/// Whether `byte` starts a RESP2 or RESP3 value (the streamed forms of RESP3, which Redis
/// never sends, are not accepted).
#[inline]
fn is_type(byte: u8) -> bool {
    type_name(byte) != "unknown"
}

/// The command's name on the wire, for messages.
fn command_name(command: Command) -> &'static str {
    match command {
        Command::Get => "GET",
        Command::Set => "SET",
        Command::Delete => "DEL",
        Command::Custom { .. } => "the command",
    }
}

/// The outcome of skipping over values without building them.
enum Skip {
    /// The value ends here (the index just past it).
    To(usize),
    /// Not all of it has arrived.
    Partial,
    /// Not RESP.
    Bad(&'static str),
}

/// The header line of the value at `at`: the index of its `\r`, for a value of type `kind`.
#[inline]
fn header(input: &[u8], at: usize, kind: u8) -> Result<usize, Skip> {
    let max = match kind {
        b'+' | b'-' | b',' | b'(' => MAX_TEXT_LINE,
        _ => MAX_NUMBER_LINE,
    };
    match line_at(input, at + 1, max) {
        Line::Ends(cr) => Ok(cr),
        Line::Partial => Err(Skip::Partial),
        Line::Bad(what) => Err(Skip::Bad(what)),
    }
}

/// Skips one frame at `at` (an attribute map counts as a frame of its own here), checking
/// its structure but building nothing.
fn skip_frame(input: &[u8], at: usize, depth: usize) -> Skip {
    if depth > MAX_DEPTH {
        return Skip::Bad("values nested too deeply");
    }
    let Some(&kind) = input.get(at) else {
        return Skip::Partial;
    };
    if !is_type(kind) {
        return Skip::Bad("not a RESP value");
    }
    let cr = match header(input, at, kind) {
        Ok(cr) => cr,
        Err(skip) => return skip,
    };
    let text = &input[at + 1..cr];
    let next = cr + 2;
    match kind {
        b'+' | b'-' | b',' | b'(' => Skip::To(next),
        b':' if parse_signed(text).is_some() => Skip::To(next),
        b'_' if text.is_empty() => Skip::To(next),
        b'#' if text == b"t" || text == b"f" => Skip::To(next),
        b'$' | b'!' | b'=' => match length(text, MAX_BULK, kind == b'$') {
            Ok(Length::Null) => Skip::To(next),
            Ok(Length::Of(n)) => {
                let end = next + n as usize;
                if input.len() < end + 2 {
                    Skip::Partial
                } else if &input[end..end + 2] != b"\r\n" {
                    Skip::Bad("a string not followed by \\r\\n")
                } else {
                    Skip::To(end + 2)
                }
            }
            Err(what) => Skip::Bad(what),
        },
        b'*' | b'~' | b'>' | b'%' | b'|' => match length(text, MAX_ELEMENTS, kind == b'*') {
            Ok(Length::Null) => Skip::To(next),
            Ok(Length::Of(n)) => {
                let items = if kind == b'%' || kind == b'|' {
                    2 * n
                } else {
                    n
                };
                let mut at = next;
                for _ in 0..items {
                    match skip_value(input, at, depth + 1) {
                        Skip::To(end) => at = end,
                        other => return other,
                    }
                }
                Skip::To(at)
            }
            Err(what) => Skip::Bad(what),
        },
        _ => Skip::Bad("not a RESP value"),
    }
}

/// Skips one value at `at`, with any attributes in front of it.
fn skip_value(input: &[u8], mut at: usize, depth: usize) -> Skip {
    loop {
        match skip_frame(input, at, depth) {
            Skip::To(end) if input[at] == b'|' => at = end,
            other => return other,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The hot path: one reply to GET, SET or DEL.

#[inline]
fn reply(reply: Reply, consumed: usize) -> Parsed {
    Parsed::Reply { reply, consumed }
}

/// Parses the reply to `command` at the front of `input`. Push messages and attributes in
/// front of it are skipped (and counted in `consumed`).
pub fn parse(input: &[u8], command: Command) -> Parsed {
    let mut at = 0;
    loop {
        match input.get(at) {
            None => return Parsed::Incomplete { need: 0 },
            Some(b'>' | b'|') => match skip_frame(input, at, 0) {
                Skip::To(end) => at = end,
                Skip::Partial => return Parsed::Incomplete { need: 0 },
                Skip::Bad(what) => return invalid(what, input),
            },
            Some(_) if matches!(command, Command::Custom { .. }) => {
                return parse_any(input, at);
            }
            Some(_) => return parse_reply(input, at, command),
        }
    }
}

/// Parses any whole reply, which starts at `at` (a mix's command): an error is a refusal,
/// anything else a [`Reply::Value`] of its type. A bulk string's header names the whole
/// reply's size, as for a GET.
fn parse_any(input: &[u8], at: usize) -> Parsed {
    let kind = input[at];
    if kind == b'-' || kind == b'!' {
        return parse_reply(input, at, Command::Get);
    }
    match skip_value(input, at, 0) {
        Skip::To(end) => reply(Reply::Value { kind }, end),
        Skip::Partial if kind == b'$' => match header(input, at, kind) {
            Ok(cr) => match length(&input[at + 1..cr], MAX_BULK, true) {
                Ok(Length::Of(n)) => Parsed::Incomplete {
                    need: cr + 2 + n as usize + 2,
                },
                _ => Parsed::Incomplete { need: 0 },
            },
            _ => Parsed::Incomplete { need: 0 },
        },
        Skip::Partial => Parsed::Incomplete { need: 0 },
        Skip::Bad(what) => invalid(what, input),
    }
}

/// Parses the reply proper, which starts at `at`.
#[inline]
fn parse_reply(input: &[u8], at: usize, command: Command) -> Parsed {
    let kind = input[at];
    // Which types can answer which command, decided on the first byte so that a wrong one
    // is reported without waiting for the rest of it.
    let fits = match kind {
        b'-' | b'!' => true,
        b'$' | b'_' | b'=' => command == Command::Get,
        b'+' => command == Command::Set,
        b':' => command == Command::Delete,
        _ => false,
    };
    if !fits {
        return if is_type(kind) {
            invalid(
                format_args!(
                    "a {} cannot answer {}",
                    type_name(kind),
                    command_name(command)
                ),
                input,
            )
        } else {
            invalid("not a RESP reply", input)
        };
    }
    let cr = match header(input, at, kind) {
        Ok(cr) => cr,
        Err(Skip::Bad(what)) => return invalid(what, input),
        Err(_) => return Parsed::Incomplete { need: 0 },
    };
    let text = &input[at + 1..cr];
    let next = cr + 2;
    match kind {
        b'-' => reply(
            Reply::Refused {
                message: at + 1..cr,
            },
            next,
        ),
        b'+' if text == b"OK" => reply(Reply::Done, next),
        b':' if text == b"1" => reply(Reply::Done, next),
        b':' if text == b"0" => reply(Reply::Miss, next),
        b'_' if text.is_empty() => reply(Reply::Miss, next),
        b'$' | b'!' | b'=' => {
            let n = match length(text, MAX_BULK, kind == b'$') {
                Ok(Length::Of(n)) => n as usize,
                Ok(Length::Null) => return reply(Reply::Miss, next),
                Err(what) => return invalid(what, input),
            };
            let end = next + n;
            let total = end + 2;
            if input.len() < total {
                return Parsed::Incomplete { need: total };
            }
            if &input[end..total] != b"\r\n" {
                return invalid("a string not followed by \\r\\n", input);
            }
            match kind {
                b'$' => reply(Reply::Hit { value: next..end }, total),
                b'!' => reply(Reply::Refused { message: next..end }, total),
                // `=` has a three-letter format and a colon before its text.
                _ if n >= 4 && input[next + 3] == b':' => reply(
                    Reply::Hit {
                        value: next + 4..end,
                    },
                    total,
                ),
                _ => invalid("a verbatim string without its format", input),
            }
        }
        _ => invalid(
            format_args!(
                "{} that does not answer {}",
                type_name(kind),
                command_name(command)
            ),
            input,
        ),
    }
}

// ---------------------------------------------------------------------------------------
// The control connection: whole values, owned.

/// One RESP2 or RESP3 value. Attributes are read and dropped.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `+...`
    Simple(String),
    /// `-...` or RESP3's blob error `!<n>`.
    Error(String),
    /// `:...`
    Int(i64),
    /// `$<n>`
    Bulk(Vec<u8>),
    /// `$-1`, `*-1` or RESP3's `_`.
    Nil,
    /// `*<n>`
    Array(Vec<Value>),
    /// RESP3 `%<n>`: pairs, in the server's order.
    Map(Vec<(Value, Value)>),
    /// RESP3 `~<n>`
    Set(Vec<Value>),
    /// RESP3 `><n>`: an out-of-band message (an invalidation, a published message).
    Push(Vec<Value>),
    /// RESP3 `,...` (`inf`, `-inf` and `nan` included).
    Double(f64),
    /// RESP3 `#t` / `#f`.
    Bool(bool),
    /// RESP3 `(...`: an integer too large for `Int`, as its decimal text.
    BigNumber(String),
    /// RESP3 `=<n>`: a string with its format (`txt`, `mkd`).
    Verbatim { format: String, text: Vec<u8> },
}

impl Value {
    /// The text of a bulk, simple or verbatim string (invalid UTF-8 replaced), else `None`.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Simple(text) => Some(text.clone()),
            Value::Bulk(bytes) | Value::Verbatim { text: bytes, .. } => {
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => None,
        }
    }
}

/// Parses one whole value at the front of `input`: the value and the bytes it took,
/// `Ok(None)` if it has not all arrived, or what is wrong with it. Attributes in front of a
/// value (at any level) are skipped.
pub fn parse_value(input: &[u8]) -> Result<Option<(Value, usize)>, String> {
    value_at(input, 0, 0)
}

/// What was wrong at `at`, quoting the input from there.
fn bad(what: &str, input: &[u8], at: usize) -> String {
    format!("{what}: \"{}\"", quote(&input[at.min(input.len())..]))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn value_at(input: &[u8], mut at: usize, depth: usize) -> Result<Option<(Value, usize)>, String> {
    if depth > MAX_DEPTH {
        return Err(bad("values nested too deeply", input, at));
    }
    // Attributes describe the value after them; nothing here uses them.
    let kind = loop {
        match input.get(at) {
            None => return Ok(None),
            Some(b'|') => match skip_frame(input, at, depth) {
                Skip::To(end) => at = end,
                Skip::Partial => return Ok(None),
                Skip::Bad(what) => return Err(bad(what, input, at)),
            },
            Some(&kind) if is_type(kind) => break kind,
            Some(_) => return Err(bad("not a RESP value", input, at)),
        }
    };
    let cr = match header(input, at, kind) {
        Ok(cr) => cr,
        Err(Skip::Bad(what)) => return Err(bad(what, input, at)),
        Err(_) => return Ok(None),
    };
    let text = &input[at + 1..cr];
    let next = cr + 2;
    let simple = |value: Value| Ok(Some((value, next)));
    match kind {
        b'+' => simple(Value::Simple(lossy(text))),
        b'-' => simple(Value::Error(lossy(text))),
        b':' => match parse_signed(text) {
            Some(n) => simple(Value::Int(n)),
            None => Err(bad("not an integer", input, at)),
        },
        b'_' if text.is_empty() => simple(Value::Nil),
        b'#' if text == b"t" => simple(Value::Bool(true)),
        b'#' if text == b"f" => simple(Value::Bool(false)),
        b',' => match std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
        {
            Some(x) => simple(Value::Double(x)),
            None => Err(bad("not a double", input, at)),
        },
        b'(' => {
            let digits = text.strip_prefix(b"-").unwrap_or(text);
            if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
                simple(Value::BigNumber(lossy(text)))
            } else {
                Err(bad("not a big number", input, at))
            }
        }
        b'$' | b'!' | b'=' => {
            let n = match length(text, MAX_BULK, kind == b'$') {
                Ok(Length::Of(n)) => n as usize,
                Ok(Length::Null) => return simple(Value::Nil),
                Err(what) => return Err(bad(what, input, at)),
            };
            let end = next + n;
            // Nothing is allocated before all the bytes are here: a garbage length costs
            // only the wait.
            if input.len() < end + 2 {
                return Ok(None);
            }
            if &input[end..end + 2] != b"\r\n" {
                return Err(bad("a string not followed by \\r\\n", input, at));
            }
            let bytes = &input[next..end];
            let value = match kind {
                b'$' => Value::Bulk(bytes.to_vec()),
                b'!' => Value::Error(lossy(bytes)),
                _ if n >= 4 && bytes[3] == b':' => Value::Verbatim {
                    format: lossy(&bytes[..3]),
                    text: bytes[4..].to_vec(),
                },
                _ => return Err(bad("a verbatim string without its format", input, at)),
            };
            Ok(Some((value, end + 2)))
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n = match length(text, MAX_ELEMENTS, kind == b'*') {
                Ok(Length::Of(n)) => n as usize,
                Ok(Length::Null) => return simple(Value::Nil),
                Err(what) => return Err(bad(what, input, at)),
            };
            // Every element takes at least 3 bytes (`_\r\n`), so the input bounds how many
            // can be here: a garbage count reserves no more than the bytes could fill.
            let room = (input.len() - next) / 3;
            let mut at = next;
            if kind == b'%' {
                let mut pairs = Vec::with_capacity(n.min(room / 2));
                for _ in 0..n {
                    let Some((key, end)) = value_at(input, at, depth + 1)? else {
                        return Ok(None);
                    };
                    let Some((value, end)) = value_at(input, end, depth + 1)? else {
                        return Ok(None);
                    };
                    pairs.push((key, value));
                    at = end;
                }
                return Ok(Some((Value::Map(pairs), at)));
            }
            let mut items = Vec::with_capacity(n.min(room));
            for _ in 0..n {
                let Some((item, end)) = value_at(input, at, depth + 1)? else {
                    return Ok(None);
                };
                items.push(item);
                at = end;
            }
            let value = match kind {
                b'*' => Value::Array(items),
                b'~' => Value::Set(items),
                _ => Value::Push(items),
            };
            Ok(Some((value, at)))
        }
        _ => Err(bad(
            &format!("{} that is malformed", type_name(kind)),
            input,
            at,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::ops::Range;

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

    fn whole(reply: Reply, consumed: usize) -> Parsed {
        Parsed::Reply { reply, consumed }
    }

    fn hit(value: Range<usize>) -> Reply {
        Reply::Hit { value }
    }

    fn refused(message: Range<usize>) -> Reply {
        Reply::Refused { message }
    }

    #[track_caller]
    fn assert_invalid(parsed: Parsed, says: &str) {
        match parsed {
            Parsed::Invalid(message) => assert!(message.contains(says), "{message}"),
            other => panic!("expected Invalid ({says}), got {other:?}"),
        }
    }

    /// `bytes` is one whole reply to `command`: it parses to `expected`, every proper prefix
    /// is `Incomplete` (with `need` the whole length once a string's header is in, else 0),
    /// and with another reply behind it the same reply consumes exactly `bytes`.
    #[track_caller]
    fn check_reply(command: Command, bytes: &[u8], expected: Reply, data_from: Option<usize>) {
        assert_eq!(
            parse(bytes, command),
            whole(expected.clone(), bytes.len()),
            "{}",
            bytes.escape_ascii()
        );
        for cut in 0..bytes.len() {
            let need = match data_from {
                Some(from) if cut >= from => bytes.len(),
                _ => 0,
            };
            assert_eq!(
                parse(&bytes[..cut], command),
                Parsed::Incomplete { need },
                "{} cut at {cut}",
                bytes.escape_ascii()
            );
        }
        for next in [
            &b"+OK\r\n"[..],
            b"$-1\r\n",
            b"$3\r\nabc\r\n",
            b">1\r\n:1\r\n",
            bytes,
        ] {
            let pipelined = [bytes, next].concat();
            assert_eq!(
                parse(&pipelined, command),
                whole(expected.clone(), bytes.len())
            );
        }
    }

    fn encoded(command: Command, value: &[u8], ttl: u32) -> Vec<u8> {
        let mut out = b"<".to_vec();
        encode(&mut out, command, b"key:1", value, ttl);
        out.split_off(1)
    }

    // -----------------------------------------------------------------------------------
    // Encoding.

    #[test]
    fn requests_are_arrays_of_bulk_strings() {
        assert_eq!(
            encoded(Command::Get, b"", 0),
            b"*2\r\n$3\r\nGET\r\n$5\r\nkey:1\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"hello", 0),
            b"*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$5\r\nhello\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"", 60),
            b"*5\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$0\r\n\r\n$2\r\nEX\r\n$2\r\n60\r\n"
        );
        assert_eq!(
            encoded(Command::Set, b"v", u32::MAX),
            b"*5\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$1\r\nv\r\n$2\r\nEX\r\n$10\r\n4294967295\r\n"
        );
        assert_eq!(
            encoded(Command::Delete, b"x", 5),
            b"*2\r\n$3\r\nDEL\r\n$5\r\nkey:1\r\n"
        );
        let mut out = Vec::new();
        encode_command(&mut out, &[b"HELLO", b"3"]);
        assert_eq!(out, b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n");
        encode_command(&mut out, &[]);
        assert_eq!(&out[22..], b"*0\r\n");
    }

    #[test]
    fn requests_parse_back_as_values() {
        let value = vec![b'\n'; 20_000];
        for command in COMMANDS {
            for ttl in [0, 1, 86_400] {
                let bytes = encoded(command, &value, ttl);
                let (parsed, consumed) = parse_value(&bytes).unwrap().unwrap();
                assert_eq!(consumed, bytes.len());
                let Value::Array(args) = parsed else { panic!() };
                let name = command_name(command).as_bytes().to_vec();
                assert_eq!(args[0], Value::Bulk(name));
                assert_eq!(args[1], Value::Bulk(b"key:1".to_vec()));
                match (command, ttl) {
                    (Command::Set, 0) => assert_eq!(args.len(), 3),
                    (Command::Set, _) => assert_eq!(
                        args[3..],
                        [
                            Value::Bulk(b"EX".to_vec()),
                            Value::Bulk(ttl.to_string().into_bytes())
                        ]
                    ),
                    _ => assert_eq!(args.len(), 2),
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Replies (the bytes redis-server 7.0.15 sent, see the module docs).

    #[test]
    fn get_hits_and_misses_in_resp2_and_resp3() {
        check_reply(Command::Get, b"$5\r\nhello\r\n", hit(4..9), Some(4));
        check_reply(Command::Get, b"$0\r\n\r\n", hit(4..4), Some(4));
        check_reply(Command::Get, b"$4\r\n\r\n\r\n\r\n", hit(4..8), Some(4));
        check_reply(Command::Get, b"$-1\r\n", Reply::Miss, None);
        check_reply(Command::Get, b"_\r\n", Reply::Miss, None);
        // RESP3's verbatim string: the text past its format.
        check_reply(Command::Get, b"=9\r\ntxt:hello\r\n", hit(8..13), Some(4));
        check_reply(Command::Get, b"=4\r\nmkd:\r\n", hit(8..8), Some(4));
    }

    #[test]
    fn set_and_delete_replies() {
        check_reply(Command::Set, b"+OK\r\n", Reply::Done, None);
        check_reply(Command::Delete, b":1\r\n", Reply::Done, None);
        check_reply(Command::Delete, b":0\r\n", Reply::Miss, None);
    }

    #[test]
    fn a_commands_reply_is_any_whole_value_of_its_type() {
        let custom = Command::Custom {
            index: 0,
            values: false,
        };
        let value = |kind: u8| Reply::Value { kind };
        check_reply(custom, b":3\r\n", value(b':'), None);
        check_reply(custom, b"*2\r\n$1\r\na\r\n$-1\r\n", value(b'*'), None);
        check_reply(custom, b"$3\r\nabc\r\n", value(b'$'), Some(4));
        check_reply(custom, b"_\r\n", value(b'_'), None);
        check_reply(custom, b"-WRONGTYPE Operation\r\n", refused(1..20), None);
        assert_invalid(parse(b"?x\r\n", custom), "not a RESP value");
    }

    #[test]
    fn errors_are_refusals_to_any_command() {
        for command in COMMANDS {
            let line = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
            check_reply(command, line, refused(1..line.len() - 2), None);
            let line = b"-ERR invalid expire time in 'set' command\r\n";
            check_reply(command, line, refused(1..line.len() - 2), None);
            check_reply(command, b"-\r\n", refused(1..1), None);
            check_reply(
                command,
                b"!21\r\nSYNTAX invalid syntax\r\n",
                refused(5..26),
                Some(5),
            );
        }
    }

    #[test]
    fn a_large_value_in_pieces_asks_for_the_whole_reply() {
        let reply = [&b"$20000\r\n"[..], &vec![b'y'; 20_000], b"\r\n"].concat();
        let total = reply.len();
        assert_eq!(
            parse(&reply[..7], Command::Get),
            Parsed::Incomplete { need: 0 }
        );
        for have in [8, 9, 1448, 1448 * 2, total - 1] {
            assert_eq!(
                parse(&reply[..have], Command::Get),
                Parsed::Incomplete { need: total }
            );
        }
        assert_eq!(parse(&reply, Command::Get), whole(hit(8..20_008), total));
    }

    #[test]
    fn pushes_and_attributes_before_a_reply_are_skipped() {
        // As DEBUG PROTOCOL push / attrib sent them.
        let push = b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n";
        let attribute = b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n";
        for before in [&push[..], attribute, &[&push[..], attribute, push].concat()] {
            let get = [before, b"$5\r\nhello\r\n"].concat();
            let from = before.len();
            check_reply(Command::Get, &get, hit(from + 4..from + 9), Some(from + 4));
            let set = [before, b"+OK\r\n"].concat();
            check_reply(Command::Set, &set, Reply::Done, None);
        }
        // But nested without end, a push is garbage.
        let deep = [&b">1\r\n".repeat(MAX_DEPTH + 1)[..], b":1\r\n"].concat();
        assert_invalid(parse(&deep, Command::Delete), "nested too deeply");
        let fine = [&b">1\r\n".repeat(MAX_DEPTH)[..], b":1\r\n:1\r\n"].concat();
        assert_eq!(
            parse(&fine, Command::Delete),
            whole(Reply::Done, fine.len())
        );
        assert_invalid(parse(b">1\r\n?\r\n", Command::Get), "not a RESP value");
        assert_invalid(parse(b">x\r\n", Command::Get), "not a length");
    }

    #[test]
    fn a_type_that_cannot_answer_is_invalid() {
        assert_invalid(
            parse(b"*1\r\n$1\r\nx\r\n", Command::Get),
            "an array cannot answer GET",
        );
        assert_invalid(parse(b"*", Command::Get), "an array cannot answer GET");
        assert_invalid(parse(b"%1\r\n", Command::Get), "a map cannot answer GET");
        assert_invalid(
            parse(b"+OK\r\n", Command::Get),
            "a simple string cannot answer GET",
        );
        assert_invalid(parse(b":1\r\n", Command::Get), "an integer");
        assert_invalid(
            parse(b"$5\r\nhello\r\n", Command::Set),
            "a bulk string cannot answer SET",
        );
        assert_invalid(parse(b"_\r\n", Command::Delete), "a null cannot answer DEL");
        assert_invalid(
            parse(b"#t\r\n", Command::Delete),
            "a boolean cannot answer DEL",
        );
        assert_invalid(
            parse(b",1.5\r\n", Command::Set),
            "a double cannot answer SET",
        );
        // The right type with the wrong content.
        assert_invalid(parse(b"+QUEUED\r\n", Command::Set), "does not answer SET");
        assert_invalid(parse(b":2\r\n", Command::Delete), "does not answer DEL");
        assert_invalid(parse(b":-1\r\n", Command::Delete), "does not answer DEL");
        assert_invalid(parse(b"_x\r\n", Command::Get), "does not answer GET");
    }

    #[test]
    fn malformed_replies_are_invalid() {
        let get = |input: &[u8]| parse(input, Command::Get);
        assert_invalid(get(b"$5\r\nhelloXX"), "not followed by \\r\\n");
        assert_invalid(get(b"$-2\r\n"), "not a length");
        assert_invalid(get(b"$1x\r\n"), "not a length");
        assert_invalid(get(b"$\r\n"), "not a length");
        assert_invalid(get(b"$?\r\n"), "not a length");
        assert_invalid(get(b"$536870913\r\n"), "over the limit");
        assert_eq!(
            get(b"$536870912\r\n"),
            Parsed::Incomplete {
                need: 12 + 536_870_912 + 2
            }
        );
        assert_invalid(get(b"=3\r\nabc\r\n"), "without its format");
        assert_invalid(get(b"=5\r\ntxt-x\r\n"), "without its format");
        assert_invalid(get(b"!-1\r\n"), "not a length");
        assert_invalid(get(b"=-1\r\n"), "not a length");
        // Garbage shows in its first byte; a length line has a bounded size.
        assert_invalid(get(b"HTTP/1.1 400"), "not a RESP reply");
        assert_invalid(get(b"\r\n"), "not a RESP reply");
        assert_invalid(get(&[&b"$"[..], &[b'1'; 40]].concat()), "no line end");
        assert_eq!(
            get(&[&b"$"[..], &[b'1'; 20]].concat()),
            Parsed::Incomplete { need: 0 }
        );
        assert_invalid(get(b"$5\n"), "without \\r");
        assert_invalid(parse(b"+OK\n", Command::Set), "without \\r");
        assert_eq!(parse(b"-ERR", Command::Set), Parsed::Incomplete { need: 0 });
    }

    #[test]
    fn invalid_messages_quote_at_most_64_bytes() {
        let input = [&b"*1\r\n"[..], &[b'x'; 60], b"TAIL\r\n"].concat();
        let Parsed::Invalid(message) = parse(&input, Command::Get) else {
            panic!()
        };
        assert!(!message.contains("TAIL") && message.contains(&"x".repeat(60)));
        let Parsed::Invalid(message) = parse(b"\x00\xff\x1b[2J", Command::Get) else {
            panic!()
        };
        assert!(message.contains("\\x00\\xff\\x1b[2J"), "{message}");
    }

    // -----------------------------------------------------------------------------------
    // Whole values.

    fn value(input: &[u8]) -> Value {
        let (value, consumed) = parse_value(input).unwrap().unwrap();
        assert_eq!(consumed, input.len(), "{}", input.escape_ascii());
        value
    }

    fn bulk(text: &str) -> Value {
        Value::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn hello_3_is_a_map() {
        let reply = b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n\
            $5\r\nproto\r\n:3\r\n$2\r\nid\r\n:11\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n\
            $4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";
        let Value::Map(pairs) = value(reply) else {
            panic!()
        };
        assert_eq!(pairs.len(), 7);
        assert_eq!(pairs[0], (bulk("server"), bulk("redis")));
        assert_eq!(pairs[1].1.as_text().as_deref(), Some("7.0.15"));
        assert_eq!(pairs[2], (bulk("proto"), Value::Int(3)));
        assert_eq!(pairs[6], (bulk("modules"), Value::Array(vec![])));
        for cut in 0..reply.len() {
            assert_eq!(parse_value(&reply[..cut]), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    // `,3.141` is what the server sent, not an attempt at pi.
    #[allow(clippy::approx_constant)]
    fn every_resp3_type_debug_protocol_sent() {
        assert_eq!(value(b"$11\r\nHello World\r\n"), bulk("Hello World"));
        assert_eq!(value(b":12345\r\n"), Value::Int(12345));
        assert_eq!(value(b",3.141\r\n"), Value::Double(3.141));
        assert_eq!(
            value(b"(1234567999999999999999999999999999999\r\n"),
            Value::BigNumber("1234567999999999999999999999999999999".into())
        );
        assert_eq!(value(b"_\r\n"), Value::Nil);
        assert_eq!(
            value(b"*3\r\n:0\r\n:1\r\n:2\r\n"),
            Value::Array(vec![Value::Int(0), Value::Int(1), Value::Int(2)])
        );
        assert_eq!(
            value(b"~3\r\n:0\r\n:1\r\n:2\r\n"),
            Value::Set(vec![Value::Int(0), Value::Int(1), Value::Int(2)])
        );
        assert_eq!(
            value(b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
            Value::Map(vec![
                (Value::Int(0), Value::Bool(false)),
                (Value::Int(1), Value::Bool(true)),
                (Value::Int(2), Value::Bool(false)),
            ])
        );
        // An attribute is dropped; the value after it is the value.
        assert_eq!(
            value(
                b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n\
                $39\r\nSome real reply following the attribute\r\n"
            ),
            bulk("Some real reply following the attribute")
        );
        assert_eq!(
            value(b"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n"),
            Value::Array(vec![Value::Int(1), Value::Int(2)])
        );
        // A push is a value of its own, and the reply follows it.
        let push = b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$5\r\nafter\r\n";
        let (first, consumed) = parse_value(push).unwrap().unwrap();
        assert_eq!(
            first,
            Value::Push(vec![bulk("server-cpu-usage"), Value::Int(42)])
        );
        assert_eq!(value(&push[consumed..]), bulk("after"));
        let verbatim = value(b"=29\r\ntxt:This is a verbatim\nstring\r\n");
        assert_eq!(
            verbatim,
            Value::Verbatim {
                format: "txt".into(),
                text: b"This is a verbatim\nstring".to_vec()
            }
        );
        assert_eq!(
            verbatim.as_text().as_deref(),
            Some("This is a verbatim\nstring")
        );
        assert_eq!(value(b"#t\r\n"), Value::Bool(true));
        assert_eq!(value(b"#f\r\n"), Value::Bool(false));
    }

    #[test]
    fn resp2_values_and_edges() {
        assert_eq!(value(b"+OK\r\n"), Value::Simple("OK".into()));
        assert_eq!(
            value(b"-ERR unknown command\r\n"),
            Value::Error("ERR unknown command".into())
        );
        assert_eq!(
            value(b"!21\r\nSYNTAX invalid syntax\r\n"),
            Value::Error("SYNTAX invalid syntax".into())
        );
        assert_eq!(value(b"$-1\r\n"), Value::Nil);
        assert_eq!(value(b"*-1\r\n"), Value::Nil);
        assert_eq!(value(b"$0\r\n\r\n"), Value::Bulk(vec![]));
        assert_eq!(value(b":-9223372036854775808\r\n"), Value::Int(i64::MIN));
        assert_eq!(value(b":9223372036854775807\r\n"), Value::Int(i64::MAX));
        assert_eq!(value(b",inf\r\n"), Value::Double(f64::INFINITY));
        assert_eq!(value(b",-inf\r\n"), Value::Double(f64::NEG_INFINITY));
        assert!(matches!(value(b",nan\r\n"), Value::Double(x) if x.is_nan()));
        assert_eq!(value(b",1e10\r\n"), Value::Double(1e10));
        assert_eq!(value(b"(-12\r\n"), Value::BigNumber("-12".into()));
        assert_eq!(value(b"+\xff\r\n").as_text().as_deref(), Some("\u{fffd}"));
        assert_eq!(value(b":1\r\n").as_text(), None);
        assert_eq!(value(b"-ERR x\r\n").as_text(), None);
        assert_eq!(value(b"+OK\r\n").as_text().as_deref(), Some("OK"));
        assert_eq!(value(b"$2\r\nhi\r\n").as_text().as_deref(), Some("hi"));
    }

    #[test]
    fn malformed_values_are_errors() {
        for (input, says) in [
            (&b":9223372036854775808\r\n"[..], "not an integer"),
            (b":\r\n", "not an integer"),
            (b":1.5\r\n", "not an integer"),
            (b",abc\r\n", "not a double"),
            (b",\r\n", "not a double"),
            (b"(12a\r\n", "not a big number"),
            (b"(\r\n", "not a big number"),
            (b"#x\r\n", "a boolean that is malformed"),
            (b"_x\r\n", "a null that is malformed"),
            (b"$3\r\nabcd\r\n", "not followed by"),
            (b"=3\r\ntxt\r\n", "without its format"),
            (b"~-1\r\n", "not a length"),
            (b"%-1\r\n", "not a length"),
            (b"*1048577\r\n", "over the limit"),
            (b"%1048577\r\n", "over the limit"),
            (b"$536870913\r\n", "over the limit"),
            (b"*2\r\n:1\r\n?x\r\n", "not a RESP value"),
            (b"$?\r\n", "not a length"),
            (b"@", "not a RESP value"),
            (b"+OK\n", "without \\r"),
            (b"|1\r\n:1\r\n", ""),
        ] {
            match parse_value(input) {
                Err(message) => assert!(message.contains(says), "{message}"),
                // An attribute with nothing after it yet waits for its value.
                Ok(None) if input.starts_with(b"|") => {}
                other => panic!("{}: {other:?}", input.escape_ascii()),
            }
        }
        // At the limits, a count or length only waits for its bytes.
        assert_eq!(parse_value(b"*1048576\r\n"), Ok(None));
        assert_eq!(parse_value(b"$536870912\r\n"), Ok(None));
    }

    #[test]
    fn nesting_is_bounded() {
        let nested = |levels: usize| [&b"*1\r\n".repeat(levels)[..], b":1\r\n"].concat();
        let mut expected = Value::Int(1);
        for _ in 0..MAX_DEPTH {
            expected = Value::Array(vec![expected]);
        }
        assert_eq!(value(&nested(MAX_DEPTH)), expected);
        let message = parse_value(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(message.contains("nested too deeply"), "{message}");
        // Deep enough to overflow a stack if it were followed.
        assert!(parse_value(&nested(100_000)).is_err());
        assert!(parse_value(&b"|1\r\n".repeat(100_000)).is_err());
    }

    // -----------------------------------------------------------------------------------
    // Properties.

    /// Writes `value` as RESP3 (the test's own encoder, for round trips).
    fn write(out: &mut Vec<u8>, value: &Value) {
        let items = |out: &mut Vec<u8>, kind: u8, items: &[Value]| {
            out.extend_from_slice(format!("{}{}\r\n", kind as char, items.len()).as_bytes());
            for item in items {
                write(out, item);
            }
        };
        match value {
            Value::Simple(text) => out.extend_from_slice(format!("+{text}\r\n").as_bytes()),
            Value::Error(text) => out.extend_from_slice(format!("-{text}\r\n").as_bytes()),
            Value::Int(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
            Value::Bulk(bytes) => push_bulk(out, bytes),
            Value::Nil => out.extend_from_slice(b"_\r\n"),
            Value::Array(list) => items(out, b'*', list),
            Value::Set(list) => items(out, b'~', list),
            Value::Push(list) => items(out, b'>', list),
            Value::Map(pairs) => {
                out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
                for (key, value) in pairs {
                    write(out, key);
                    write(out, value);
                }
            }
            Value::Double(x) => out.extend_from_slice(format!(",{x}\r\n").as_bytes()),
            Value::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Value::BigNumber(text) => out.extend_from_slice(format!("({text}\r\n").as_bytes()),
            Value::Verbatim { format, text } => {
                let body = [format.as_bytes(), b":", text].concat();
                out.extend_from_slice(format!("={}\r\n", body.len()).as_bytes());
                out.extend_from_slice(&body);
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            "[ -~]{0,12}".prop_map(Value::Simple),
            "[A-Z]{1,8}( [ -~]{0,20})?".prop_map(Value::Error),
            any::<i64>().prop_map(Value::Int),
            prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bulk),
            Just(Value::Nil),
            any::<f64>()
                .prop_filter("NaN is not equal to itself", |x| !x.is_nan())
                .prop_map(Value::Double),
            any::<bool>().prop_map(Value::Bool),
            "-?[1-9][0-9]{0,40}".prop_map(Value::BigNumber),
            ("[a-z]{3}", prop::collection::vec(any::<u8>(), 0..20))
                .prop_map(|(format, text)| Value::Verbatim { format, text }),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Set),
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Push),
                prop::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
            ]
        })
    }

    /// Pieces of near-valid RESP, so random input often gets past the first byte.
    const PIECES: &[&str] = &[
        "*",
        "$",
        "+",
        "-",
        ":",
        "_",
        ",",
        "#",
        "(",
        "!",
        "=",
        "%",
        "~",
        ">",
        "|",
        "\r\n",
        "\r",
        "\n",
        "0",
        "1",
        "2",
        "3",
        "5",
        "-1",
        "OK",
        "hello",
        "txt:",
        "t",
        "f",
        "inf",
        "1.5",
        "99999999999999999999",
        "1048577",
    ];

    /// Whole replies, as redis-server sent them.
    const VALID: &[&[u8]] = &[
        b"$5\r\nhello\r\n",
        b"$0\r\n\r\n",
        b"$-1\r\n",
        b"_\r\n",
        b"+OK\r\n",
        b":1\r\n",
        b":0\r\n",
        b"-ERR invalid expire time in 'set' command\r\n",
        b"!21\r\nSYNTAX invalid syntax\r\n",
        b"=9\r\ntxt:hello\r\n",
        b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n",
        b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n",
        b"%2\r\n:0\r\n#f\r\n,3.141\r\n(12345678901234567890\r\n",
        b"~2\r\n*1\r\n$1\r\nx\r\n*-1\r\n",
    ];

    fn any_input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            prop::collection::vec(prop::sample::select(PIECES), 0..30)
                .prop_map(|pieces| pieces.concat().into_bytes()),
            super::super::memcache::tests::mutated(VALID),
        ]
    }

    /// Random bytes, half of them drawn from `special` (as in memcache's tests).
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

    proptest! {
        #![proptest_config(cases(3000))]

        #[test]
        fn random_bytes_never_panic(input in any_input()) {
            for command in COMMANDS {
                let parsed = parse(&input, command);
                match &parsed {
                    Parsed::Reply { reply, consumed } => {
                        prop_assert!(*consumed > 0 && *consumed <= input.len());
                        if let Reply::Hit { value: r } | Reply::Refused { message: r } = reply {
                            prop_assert!(r.start <= r.end && r.end <= *consumed);
                        }
                        // Every shorter prefix waits; what follows changes nothing.
                        for cut in 0..*consumed {
                            match parse(&input[..cut], command) {
                                Parsed::Incomplete { need } => {
                                    prop_assert!(need == 0 || need == *consumed)
                                }
                                other => prop_assert!(false, "cut {}: {:?}", cut, other),
                            }
                        }
                        let tail = [&input[..*consumed], b"junk"].concat();
                        prop_assert_eq!(&parse(&tail, command), &parsed);
                    }
                    Parsed::Incomplete { need } => {
                        prop_assert!(*need == 0 || *need > input.len())
                    }
                    Parsed::Invalid(message) => prop_assert!(message.len() < 400, "{}", message),
                }
            }
            match parse_value(&input) {
                Ok(Some((_, consumed))) => {
                    prop_assert!(consumed > 0 && consumed <= input.len());
                    for cut in 0..consumed {
                        prop_assert_eq!(parse_value(&input[..cut]), Ok(None), "cut {}", cut);
                    }
                }
                Ok(None) => {}
                Err(message) => prop_assert!(message.len() < 400, "{}", message),
            }
        }

        #[test]
        fn values_round_trip(value in any_value(), cut in any::<prop::sample::Index>()) {
            let mut bytes = Vec::new();
            write(&mut bytes, &value);
            prop_assert_eq!(parse_value(&bytes), Ok(Some((value, bytes.len()))));
            prop_assert_eq!(parse_value(&bytes[..cut.index(bytes.len())]), Ok(None));
        }

        #[test]
        fn any_value_comes_back_whole(
            data in framing_bytes(b"\r\n$", 300),
            cut in any::<prop::sample::Index>(),
        ) {
            let bytes = [format!("${}\r\n", data.len()).as_bytes(), &data, b"\r\n"].concat();
            let start = bytes.len() - data.len() - 2;
            prop_assert_eq!(
                parse(&bytes, Command::Get),
                whole(hit(start..start + data.len()), bytes.len())
            );
            let at = cut.index(bytes.len());
            let need = if at >= start { bytes.len() } else { 0 };
            prop_assert_eq!(parse(&bytes[..at], Command::Get), Parsed::Incomplete { need });
        }

        #[test]
        fn commands_round_trip(args in prop::collection::vec(
            prop::collection::vec(any::<u8>(), 0..50), 0..8)
        ) {
            let slices: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut out = Vec::new();
            encode_command(&mut out, &slices);
            let expected = Value::Array(args.iter().cloned().map(Value::Bulk).collect());
            prop_assert_eq!(parse_value(&out), Ok(Some((expected, out.len()))));
        }
    }
}
