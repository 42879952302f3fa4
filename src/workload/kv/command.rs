//! One command of a mix, as a user writes it: `HSET h:{key} f {data}`, redis-benchmark's
//! `LPUSH mylist __rand_int__`, memtier's `SET __key__ __data__`.
//!
//! # The words
//!
//! A command line is split as redis-cli (and memtier's `--command`) splits it: on spaces,
//! with `"double quotes"` (escapes `\n \r \t \b \a \\ \" \xHH`) and `'single quotes'`
//! (only `\'`); a closing quote must end its word. Inside any word:
//!
//! | placeholder | becomes, for each request |
//! |---|---|
//! | `{key}`, memtier's `__key__` | a key of the key space (`--key-prefix` and an index from `--key-minimum`..`--key-maximum`), drawn by the command's key pattern; each occurrence draws its own |
//! | `{data}`, memtier's `__data__` | a value of `--value-size` bytes |
//! | `__rand_int__` | redis-benchmark's: with `--keyspacelen N` (its `-r N`), a number below N in 12 digits, zero-padded, each occurrence its own; without it, sent as written (redis-benchmark's one key) |
//!
//! # On the wire
//!
//! Redis: an array of bulk strings (one per word), or for redis-benchmark's `PING_INLINE`
//! the inline form (`PING\r\n`). memcached: the words separated by spaces and `\r\n`; for a
//! storage command (`set`, `add`, `replace`, `append`, `prepend`, `cas`, `ms`) `{data}` is
//! written on the line as the value's length and the value follows as its data block.
//!
//! A command's reply is any whole reply; an error reply (`-ERR`, `-WRONGTYPE`,
//! `SERVER_ERROR`...) is an error of the command, counted, and where the command says which
//! reply types answer it (redis-benchmark's tests do), a reply of another type is a wrong
//! answer, counted too.
//!
//! Nothing is allocated per request: keys and words are written into scratch buffers the
//! caller keeps, values are slices of the shared [`Values`].

use super::keys::{KeyPattern, KeyPicker, KeySpace, ValueSizes, Values};
use crate::workload::rng::Rng;

/// The longest command line accepted: a command is a few words, not a data file.
const MAX_LINE: usize = 64 * 1024;
/// The most words one command may have.
const MAX_WORDS: usize = 1024;
/// redis-benchmark's `__rand_int__`, and its width in digits once replaced.
const RAND_INT: &str = "__rand_int__";
const RAND_DIGITS: usize = 12;

/// A part of one word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(Vec<u8>),
    /// `{key}` or `__key__`.
    Key,
    /// `{data}` or `__data__`.
    Data,
    /// `__rand_int__` with a key space length.
    RandInt,
}

/// Which protocol family a command is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Redis,
    /// memcached's text protocol.
    MemcacheText,
    /// memcached's meta commands.
    MemcacheMeta,
}

/// What a memcached reply to a command looks like: how the parser finds its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McReply {
    /// `VALUE ...` blocks then `END` (`get`, `gets`, `gat`, `gats`).
    Values,
    /// One line, with a data block after a `VA <len>` line (every other command).
    Line,
}

/// One command, compiled from its text.
#[derive(Debug, Clone)]
pub struct Template {
    /// The name of its group in the record: the command's first word (`hset`), or the
    /// test's name for redis-benchmark's tests.
    pub name: &'static str,
    /// As written.
    pub text: String,
    pub family: Family,
    words: Vec<Vec<Piece>>,
    /// redis-benchmark's `PING_INLINE`: the words as one line, not a RESP array.
    inline: bool,
    /// The RESP types (first bytes) that answer it; empty: any.
    pub expect: &'static [u8],
    /// memcached: the command stores a data block (`{data}` is its length on the line).
    stores: bool,
    pub mc_reply: McReply,
    /// The request's bytes when no word holds a placeholder (`LPOP mylist`): copied as they
    /// are, as redis-benchmark sends one buffer again and again.
    fixed: Option<Vec<u8>>,
}

/// What drawing a request's placeholders needs, all of it the session's own.
pub struct Draw<'a> {
    pub rng: &'a mut Rng,
    pub picker: &'a mut KeyPicker,
    pub keys: &'a KeySpace,
    /// redis-benchmark's `-r`: `__rand_int__` is a number below it.
    pub keyspacelen: Option<u64>,
    pub sizes: &'a ValueSizes,
    pub values: &'a Values,
    /// Scratch for one word.
    pub word: &'a mut Vec<u8>,
    /// Scratch for one key.
    pub key: &'a mut Vec<u8>,
}

/// Splits a command line into words as redis-cli does (see the module's docs).
pub fn split_words(line: &str) -> Result<Vec<Vec<u8>>, String> {
    if line.len() > MAX_LINE {
        return Err(format!(
            "a command of {} bytes, at most {MAX_LINE}: a large value is {{data}} with --value-size",
            line.len()
        ));
    }
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            return Ok(words);
        }
        let (word, next) = one_word(bytes, i)?;
        words.push(word);
        if words.len() > MAX_WORDS {
            return Err(format!("more than {MAX_WORDS} words in one command"));
        }
        i = next;
    }
}

/// The word starting at `i` (not a space), and where the text after it starts.
fn one_word(bytes: &[u8], mut i: usize) -> Result<(Vec<u8>, usize), String> {
    let mut word = Vec::new();
    let unbalanced = || "unbalanced quotes in the command".to_string();
    while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
        match bytes[i] {
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return Err(unbalanced()),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            let (byte, used) = escape(&bytes[i + 1..]).ok_or_else(unbalanced)?;
                            word.push(byte);
                            i += 1 + used;
                        }
                        Some(&b) => {
                            word.push(b);
                            i += 1;
                        }
                    }
                }
                i += 1;
                if bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                    return Err("a closing quote must be followed by a space".into());
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return Err(unbalanced()),
                        Some(b'\'') => break,
                        Some(b'\\') if bytes.get(i + 1) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 2;
                        }
                        Some(&b) => {
                            word.push(b);
                            i += 1;
                        }
                    }
                }
                i += 1;
                if bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                    return Err("a closing quote must be followed by a space".into());
                }
            }
            b => {
                word.push(b);
                i += 1;
            }
        }
    }
    Ok((word, i))
}

/// The byte a backslash escape inside double quotes stands for, and the bytes it took after
/// the backslash; `None` at the end of the input.
fn escape(after: &[u8]) -> Option<(u8, usize)> {
    let &c = after.first()?;
    let hex = |b: u8| (b as char).to_digit(16);
    Some(match c {
        b'n' => (b'\n', 1),
        b'r' => (b'\r', 1),
        b't' => (b'\t', 1),
        b'b' => (8, 1),
        b'a' => (7, 1),
        b'x' => match (
            after.get(1).and_then(|&b| hex(b)),
            after.get(2).and_then(|&b| hex(b)),
        ) {
            (Some(h), Some(l)) => ((h * 16 + l) as u8, 3),
            _ => (b'x', 1),
        },
        other => (other, 1),
    })
}

/// Writes `words` back as one line that [`split_words`] reads into the same words: a word
/// with spaces, quotes or control bytes is quoted (redis-benchmark's command words, joined).
pub fn join_words(words: &[String]) -> String {
    let quote = |w: &str| {
        let plain = !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\');
        if plain {
            return w.to_string();
        }
        let mut q = String::from("\"");
        for b in w.bytes() {
            match b {
                b'"' => q.push_str("\\\""),
                b'\\' => q.push_str("\\\\"),
                b' ' => q.push(' '),
                b if b.is_ascii_graphic() => q.push(b as char),
                b => q.push_str(&format!("\\x{b:02x}")),
            }
        }
        q.push('"');
        q
    };
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The placeholders in one word.
fn pieces(word: &[u8], rand_int: bool) -> Vec<Piece> {
    let marks: [(&[u8], Piece); 5] = [
        (b"{key}", Piece::Key),
        (b"__key__", Piece::Key),
        (b"{data}", Piece::Data),
        (b"__data__", Piece::Data),
        (RAND_INT.as_bytes(), Piece::RandInt),
    ];
    let mut out = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    'scan: while i < word.len() {
        for (mark, piece) in &marks {
            if *piece == Piece::RandInt && !rand_int {
                continue;
            }
            if word[i..].starts_with(mark) {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(piece.clone());
                i += mark.len();
                continue 'scan;
            }
        }
        text.push(word[i]);
        i += 1;
    }
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// memcached's commands that take a key, and whether each stores a data block.
const MEMCACHE_TEXT: &[(&str, bool, McReply)] = &[
    ("get", false, McReply::Values),
    ("gets", false, McReply::Values),
    ("gat", false, McReply::Values),
    ("gats", false, McReply::Values),
    ("set", true, McReply::Line),
    ("add", true, McReply::Line),
    ("replace", true, McReply::Line),
    ("append", true, McReply::Line),
    ("prepend", true, McReply::Line),
    ("cas", true, McReply::Line),
    ("delete", false, McReply::Line),
    ("incr", false, McReply::Line),
    ("decr", false, McReply::Line),
    ("touch", false, McReply::Line),
];
const MEMCACHE_META: &[(&str, bool, McReply)] = &[
    ("mg", false, McReply::Line),
    ("ms", true, McReply::Line),
    ("md", false, McReply::Line),
    ("ma", false, McReply::Line),
];

impl Template {
    /// Compiles `text` for `family`. `name` names its group (the first word, lower-cased,
    /// when `None`); `rand_int` says whether `__rand_int__` is a placeholder (redis-benchmark
    /// with `-r`) or text.
    pub fn parse(
        text: &str,
        family: Family,
        name: Option<&str>,
        rand_int: bool,
    ) -> Result<Template, String> {
        let raw = split_words(text)?;
        let Some(first) = raw.first() else {
            return Err("an empty command; give its words, e.g. 'HSET h:{key} f {data}'".into());
        };
        let words: Vec<Vec<Piece>> = raw.iter().map(|w| pieces(w, rand_int)).collect();
        let verb = String::from_utf8_lossy(first).to_ascii_lowercase();
        if words[0].iter().any(|p| !matches!(p, Piece::Text(_))) {
            return Err("the command's first word is its name, not a placeholder".into());
        }
        let (stores, mc_reply) = match family {
            Family::Redis => {
                redis_fits(&verb, &raw)?;
                (false, McReply::Line)
            }
            Family::MemcacheText | Family::MemcacheMeta => {
                memcache_verb(&verb, family, &raw, &words)?
            }
        };
        let name = name.map_or(verb.clone(), str::to_string);
        let mut t = Template {
            name: Box::leak(name.into_boxed_str()),
            text: text.to_string(),
            family,
            words,
            inline: false,
            expect: b"",
            stores,
            mc_reply,
            fixed: None,
        };
        t.fix();
        Ok(t)
    }

    /// Encodes the request once if nothing in it is drawn per request.
    fn fix(&mut self) {
        let plain = self
            .words
            .iter()
            .flatten()
            .all(|p| matches!(p, Piece::Text(_)));
        self.fixed = None;
        if !plain {
            return;
        }
        // Nothing is drawn: these stand in for what a session would lend.
        let keys = KeySpace::default();
        let (Ok(mut picker), Ok(sizes)) = (
            KeyPicker::new(&KeyPattern::Uniform, &keys, 0, 1),
            "1".parse::<ValueSizes>(),
        ) else {
            return;
        };
        let values = Values::new(1);
        let mut rng = Rng::new(0);
        let (mut word, mut key) = (Vec::new(), Vec::new());
        let mut d = Draw {
            rng: &mut rng,
            picker: &mut picker,
            keys: &keys,
            keyspacelen: None,
            sizes: &sizes,
            values: &values,
            word: &mut word,
            key: &mut key,
        };
        let mut out = Vec::new();
        self.encode_drawn(&mut out, &mut d);
        self.fixed = Some(out);
    }

    /// Sent inline (`PING\r\n`) rather than as a RESP array.
    pub fn inline(mut self) -> Template {
        self.inline = true;
        self.fix();
        self
    }

    /// Only replies whose RESP type is one of `types` answer it.
    pub fn expecting(mut self, types: &'static [u8]) -> Template {
        self.expect = types;
        self
    }

    /// Whether any word holds a key of the key space.
    pub fn draws_keys(&self) -> bool {
        self.words.iter().flatten().any(|p| *p == Piece::Key)
    }

    /// How many words it has, its name included.
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Whether any word holds a value.
    pub fn has_data(&self) -> bool {
        self.words.iter().flatten().any(|p| *p == Piece::Data)
    }

    /// Appends one request, its placeholders drawn now, to `out`.
    #[inline]
    pub fn encode(&self, out: &mut Vec<u8>, d: &mut Draw<'_>) {
        match &self.fixed {
            Some(bytes) => out.extend_from_slice(bytes),
            None => self.encode_drawn(out, d),
        }
    }

    fn encode_drawn(&self, out: &mut Vec<u8>, d: &mut Draw<'_>) {
        match self.family {
            Family::Redis if self.inline => self.encode_line(out, d, false),
            Family::Redis => self.encode_resp(out, d),
            _ => self.encode_line(out, d, self.stores),
        }
    }

    fn encode_resp(&self, out: &mut Vec<u8>, d: &mut Draw<'_>) {
        out.push(b'*');
        super::memcache::push_decimal(out, self.words.len() as u64);
        out.extend_from_slice(b"\r\n");
        let mut first_key = None;
        for word in &self.words {
            if let [Piece::Data] = word[..] {
                // A value as a whole word: written straight from the shared bytes.
                let value = data(d, first_key);
                super::resp::push_bulk(out, value);
                continue;
            }
            let mut w = std::mem::take(d.word);
            w.clear();
            fill_word(&mut w, word, d, &mut first_key);
            super::resp::push_bulk(out, &w);
            *d.word = w;
        }
    }

    /// The words as one line; with `stores`, `{data}` is the value's length and the value
    /// follows as a data block.
    fn encode_line(&self, out: &mut Vec<u8>, d: &mut Draw<'_>, stores: bool) {
        let mut first_key = None;
        let mut block: Option<(u64, u32)> = None;
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            if stores && let [Piece::Data] = word[..] {
                let index = first_key.unwrap_or(0);
                let size = d.sizes.size_of(index);
                super::memcache::push_decimal(out, u64::from(size));
                block = Some((index, size));
                continue;
            }
            fill_word(out, word, d, &mut first_key);
        }
        out.extend_from_slice(b"\r\n");
        if let Some((index, size)) = block {
            out.extend_from_slice(d.values.of(index, size));
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Redis commands that do not answer each request with one reply, or change the
/// connection under the load generator: refused by name.
const NOT_REQUESTS: &[(&str, &str)] = &[
    (
        "subscribe",
        "turns the connection into a subscriber, which gets messages, not replies",
    ),
    (
        "psubscribe",
        "turns the connection into a subscriber, which gets messages, not replies",
    ),
    (
        "ssubscribe",
        "turns the connection into a subscriber, which gets messages, not replies",
    ),
    (
        "monitor",
        "streams every command the server runs, not one reply",
    ),
    ("sync", "starts a replication stream, not one reply"),
    ("psync", "starts a replication stream, not one reply"),
    ("quit", "closes the connection"),
    ("shutdown", "stops the server"),
    (
        "hello",
        "changes the protocol under perflab's parser; use ?protocol=3 in the URL",
    ),
    (
        "client",
        "changes the connection perflab manages (CLIENT REPLY OFF would leave requests unanswered)",
    ),
];

/// Redis commands that block until another client acts, and where their timeout is
/// (`None`: the last word).
const BLOCKING: &[(&str, Option<usize>)] = &[
    ("blpop", None),
    ("brpop", None),
    ("brpoplpush", None),
    ("blmove", None),
    ("bzpopmin", None),
    ("bzpopmax", None),
    ("blmpop", Some(1)),
    ("bzmpop", Some(1)),
    ("wait", None),
    ("waitaof", None),
];

/// Refuses a Redis command that cannot be a request of a load (see [`NOT_REQUESTS`]), or
/// one that may block for ever: a timeout of 0 (`BLPOP q 0`), or `XREAD BLOCK 0`.
fn redis_fits(verb: &str, raw: &[Vec<u8>]) -> Result<(), String> {
    if let Some((_, why)) = NOT_REQUESTS.iter().find(|(v, _)| *v == verb) {
        return Err(format!(
            "{} {why}; perflab sends requests that each get one reply",
            verb.to_ascii_uppercase()
        ));
    }
    let forever = |word: Option<&Vec<u8>>| {
        word.is_none_or(|w| {
            std::str::from_utf8(w)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_none_or(|t| t == 0.0)
        })
    };
    let blocks = match BLOCKING.iter().find(|(v, _)| *v == verb) {
        Some((_, Some(at))) => forever(raw.get(*at)),
        Some((_, None)) => raw.len() < 2 || forever(raw.last()),
        None if verb == "xread" || verb == "xreadgroup" => raw
            .iter()
            .position(|w| w.eq_ignore_ascii_case(b"block"))
            .is_some_and(|i| forever(raw.get(i + 1))),
        None => false,
    };
    if blocks {
        return Err(format!(
            "{} with no timeout (0) blocks until another client acts, which may never happen; give it a timeout in seconds (e.g. 0.1; BLOCK in ms for XREAD), below --op-timeout",
            verb.to_ascii_uppercase()
        ));
    }
    Ok(())
}

/// Checks a memcached command: a verb that takes a key, and `{data}` where it stores.
fn memcache_verb(
    verb: &str,
    family: Family,
    raw: &[Vec<u8>],
    words: &[Vec<Piece>],
) -> Result<(bool, McReply), String> {
    let table = match family {
        Family::MemcacheMeta => MEMCACHE_META,
        _ => MEMCACHE_TEXT,
    };
    let Some(&(_, stores, reply)) = table.iter().find(|(v, _, _)| *v == verb) else {
        let names: Vec<&str> = table.iter().map(|(v, _, _)| *v).collect();
        return Err(format!(
            "'{verb}' is not one of memcached's {} commands with a key: {}",
            if family == Family::MemcacheMeta {
                "meta"
            } else {
                "text"
            },
            names.join(", ")
        ));
    };
    if raw.len() < 2 {
        return Err(format!("'{verb}' needs its key, e.g. '{verb} {{key}}'"));
    }
    let data_words = words.iter().filter(|w| **w == [Piece::Data]).count();
    let embedded = words
        .iter()
        .any(|w| w.len() > 1 && w.contains(&Piece::Data));
    if stores && (data_words != 1 || embedded) {
        return Err(format!(
            "'{verb}' stores a value: give {{data}} once, as a word of its own, where its length goes (e.g. 'set {{key}} 0 0 {{data}}')"
        ));
    }
    if !stores && (data_words > 0 || embedded) {
        return Err(format!("'{verb}' takes no value; drop {{data}}"));
    }
    if words.iter().flatten().any(|p| match p {
        Piece::Text(t) => t.iter().any(|b| b.is_ascii_control()),
        _ => false,
    }) {
        return Err("memcached's command lines hold no control characters".into());
    }
    Ok((stores, reply))
}

/// Writes one word's pieces into `out`.
#[inline]
fn fill_word(out: &mut Vec<u8>, word: &[Piece], d: &mut Draw<'_>, first_key: &mut Option<u64>) {
    for piece in word {
        match piece {
            Piece::Text(t) => out.extend_from_slice(t),
            Piece::Key => {
                let index = d.picker.next(d.rng);
                first_key.get_or_insert(index);
                d.keys.write_key(index, d.key);
                out.extend_from_slice(d.key);
            }
            Piece::RandInt => {
                let r = match d.keyspacelen {
                    Some(n) if n > 0 => d.rng.below(n),
                    _ => 0,
                };
                push_padded(out, r);
            }
            Piece::Data => {
                let value = data(d, *first_key);
                out.extend_from_slice(value);
            }
        }
    }
}

/// The value of a request: the size its first key's value has (index 0 without a key).
#[inline]
fn data<'v>(d: &Draw<'v>, first_key: Option<u64>) -> &'v [u8] {
    let index = first_key.unwrap_or(0);
    d.values.of(index, d.sizes.size_of(index))
}

/// `r`'s last 12 decimal digits, zero-padded, as redis-benchmark writes `__rand_int__`.
#[inline]
fn push_padded(out: &mut Vec<u8>, mut r: u64) {
    let mut digits = [b'0'; RAND_DIGITS];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (r % 10) as u8;
        r /= 10;
    }
    out.extend_from_slice(&digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_words(line)
            .unwrap()
            .into_iter()
            .map(|w| String::from_utf8(w).unwrap())
            .collect()
    }

    #[test]
    fn words_split_as_redis_cli_splits_them() {
        assert_eq!(words("  SET  k v "), ["SET", "k", "v"]);
        assert_eq!(
            words(r#"eval "return redis.call(\"ping\")" 0"#),
            ["eval", r#"return redis.call("ping")"#, "0"]
        );
        assert_eq!(words(r"set 'it\'s' x"), ["set", "it's", "x"]);
        assert_eq!(words(r#"set "a\x41\n" x"#), ["set", "aA\n", "x"]);
        assert!(split_words(r#"set "open"#).is_err());
        assert!(split_words(r#"set "a"b"#).is_err());
        assert!(split_words("").unwrap().is_empty());
    }

    #[test]
    fn joined_words_split_back_the_same() {
        let w: Vec<String> = [
            "eval",
            "return redis.call(\"ping\")",
            "0",
            "",
            "a\\b",
            "x'y",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(words(&join_words(&w)), w);
    }

    fn encode(t: &Template, keyspacelen: Option<u64>, size: u32) -> Vec<u8> {
        let keys = KeySpace::new("k:", 7, 7).unwrap();
        let mut picker = KeyPicker::new(&KeyPattern::Uniform, &keys, 0, 1).unwrap();
        let sizes: ValueSizes = size.to_string().parse().unwrap();
        let values = Values::new(size);
        let mut rng = Rng::new(1);
        let (mut word, mut key) = (Vec::new(), Vec::new());
        let mut d = Draw {
            rng: &mut rng,
            picker: &mut picker,
            keys: &keys,
            keyspacelen,
            sizes: &sizes,
            values: &values,
            word: &mut word,
            key: &mut key,
        };
        let mut out = Vec::new();
        t.encode(&mut out, &mut d);
        out
    }

    #[test]
    fn placeholders_are_drawn_per_request() {
        let t = Template::parse("HSET h:{key} f {data}", Family::Redis, None, false).unwrap();
        assert_eq!(t.name, "hset");
        let out = encode(&t, None, 3);
        let v = Values::new(3);
        let mut expect = b"*4\r\n$4\r\nHSET\r\n$5\r\nh:k:7\r\n$1\r\nf\r\n$3\r\n".to_vec();
        expect.extend_from_slice(v.of(7, 3));
        expect.extend_from_slice(b"\r\n");
        assert_eq!(out, expect);
    }

    #[test]
    fn rand_int_is_text_without_a_keyspace_and_twelve_digits_with_one() {
        let t = Template::parse("GET key:__rand_int__", Family::Redis, None, false).unwrap();
        assert_eq!(
            encode(&t, None, 3),
            b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n"
        );
        let t = Template::parse("GET key:__rand_int__", Family::Redis, None, true).unwrap();
        assert_eq!(
            encode(&t, Some(1), 3),
            b"*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000000\r\n"
        );
    }

    #[test]
    fn memcached_storage_puts_the_length_on_the_line() {
        let t = Template::parse("set {key} 0 0 {data}", Family::MemcacheText, None, false).unwrap();
        let v = Values::new(4);
        let mut expect = b"set k:7 0 0 4\r\n".to_vec();
        expect.extend_from_slice(v.of(7, 4));
        expect.extend_from_slice(b"\r\n");
        assert_eq!(encode(&t, None, 4), expect);
        let t = Template::parse("INCR {key} 1", Family::MemcacheText, None, false).unwrap();
        assert_eq!(encode(&t, None, 4), b"INCR k:7 1\r\n");
    }

    proptest::proptest! {
        #[test]
        fn any_line_is_a_command_or_a_message_never_a_panic(
            line in "[ -~\\t\\n\"'\\\\{}_]{0,80}",
            family in 0..3u8,
        ) {
            let family = [Family::Redis, Family::MemcacheText, Family::MemcacheMeta][family as usize];
            if let Ok(t) = Template::parse(&line, family, None, true) {
                let out = encode(&t, Some(1000), 5);
                proptest::prop_assert!(!out.is_empty());
            }
        }

        #[test]
        fn words_joined_split_back(words in proptest::collection::vec("[ -~\\t]{0,12}", 1..6)) {
            let line = join_words(&words);
            let back: Vec<String> = split_words(&line)
                .unwrap()
                .into_iter()
                .map(|w| String::from_utf8(w).unwrap())
                .collect();
            proptest::prop_assert_eq!(back, words);
        }
    }

    #[test]
    fn commands_that_block_or_stream_are_refused() {
        for (line, says) in [
            ("BLPOP q 0", "no timeout"),
            ("brpop a b 0.0", "no timeout"),
            ("BLMPOP 0 1 q LEFT", "no timeout"),
            ("XREAD BLOCK 0 STREAMS s $", "no timeout"),
            ("SUBSCRIBE ch", "subscriber"),
            ("monitor", "streams"),
        ] {
            let e = Template::parse(line, Family::Redis, None, false).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
        for line in [
            "BLPOP q 0.1",
            "XREAD BLOCK 10 STREAMS s $",
            "LPUSH q {data}",
        ] {
            assert!(
                Template::parse(line, Family::Redis, None, false).is_ok(),
                "{line}"
            );
        }
    }

    #[test]
    fn memcached_commands_are_checked() {
        for (line, says) in [
            ("stats", "not one of memcached's text commands"),
            ("set {key} 0 0", "give {data} once"),
            ("get {key} {data}", "takes no value"),
            ("get", "needs its key"),
        ] {
            let e = Template::parse(line, Family::MemcacheText, None, false).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
        assert!(Template::parse("mn", Family::MemcacheMeta, None, false).is_err());
    }
}
