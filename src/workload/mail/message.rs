//! Messages: their sizes and MIME structure (seeded, so a run can be repeated byte for
//! byte), the token each carries, and the digest of its body that the ledger keeps.
//!
//! Sizes come from weighted classes (`1k:35,3k:30,8k:20,32k:12,256k:3` by default, a mean
//! of about 14 KiB). A message up to [`PLAIN_MAX`] is one `text/plain` part; a larger one is
//! `multipart/mixed`: a short text part and a base64 attachment that makes up the rest, as
//! mail with a document attached is. Every message carries `X-Perflab-Token: TAG.SEQ`: the
//! run's tag (so earlier runs' mail in the same mailboxes is ignored) and the message's
//! number in the ledger.
//!
//! The body digest ignores carriage returns: servers store mail with bare LF (Dovecot's
//! maildir does) and give it back with CRLF, and both must compare equal.

use crate::workload::rng::Rng;

/// The header every message carries, as written.
pub const TOKEN_HEADER: &str = "X-Perflab-Token";
/// Largest message sent as a single text part.
pub const PLAIN_MAX: u64 = 8 * 1024;
/// Width of generated text and base64 lines (RFC 5322 recommends at most 78).
const LINE: usize = 72;

/// Weighted size classes.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    /// (bytes, cumulative weight up to 1.0)
    classes: Vec<(u64, f64)>,
    shown: String,
}

impl Sizes {
    /// Parses `SIZE[:WEIGHT],...` (`4k:1,64k:1`; a size alone weighs 1).
    pub fn parse(text: &str) -> Result<Sizes, String> {
        let mut raw = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (size, weight) = match part.split_once(':') {
                Some((s, w)) => (s, w.trim()),
                None => (part, "1"),
            };
            let bytes = crate::vocab::units::parse_size("message-size", size.trim())
                .map_err(|e| e.to_string())?;
            if !(256..=64 << 20).contains(&bytes) {
                return Err(format!(
                    "--message-size {text}: {size} is outside 256 bytes to 64m"
                ));
            }
            let w: f64 = weight
                .parse()
                .ok()
                .filter(|w: &f64| w.is_finite() && *w > 0.0)
                .ok_or_else(|| {
                    format!("--message-size {text}: weight {weight} is not a positive number")
                })?;
            raw.push((bytes, w));
        }
        if raw.is_empty() {
            return Err(format!(
                "--message-size {text}: give sizes with weights, e.g. 1k:35,8k:50,64k:15"
            ));
        }
        let total: f64 = raw.iter().map(|r| r.1).sum();
        let mut acc = 0.0;
        let classes = raw
            .into_iter()
            .map(|(b, w)| {
                acc += w / total;
                (b, acc)
            })
            .collect();
        Ok(Sizes {
            classes,
            shown: text.to_string(),
        })
    }

    pub fn pick(&self, rng: &mut Rng) -> u64 {
        let u = rng.next_f64();
        self.classes
            .iter()
            .find(|c| u < c.1)
            .or(self.classes.last())
            .map_or(PLAIN_MAX, |c| c.0)
    }

    /// The mean size in bytes.
    pub fn mean(&self) -> f64 {
        let mut last = 0.0;
        self.classes
            .iter()
            .map(|&(b, c)| {
                let w = c - last;
                last = c;
                b as f64 * w
            })
            .sum()
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }
}

/// What the ledger keeps of a body to compare with what a reader fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest {
    /// Body bytes without carriage returns.
    pub len: u64,
    pub hash: u64,
}

/// FNV-1a over the body, skipping CR.
pub fn digest(body: &[u8]) -> Digest {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut len = 0u64;
    for &b in body.iter().filter(|&&b| b != b'\r') {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        len += 1;
    }
    Digest { len, hash }
}

/// Where the body starts: after the first empty line (CRLF or LF).
pub fn body_of(message: &[u8]) -> &[u8] {
    let crlf = find(message, b"\r\n\r\n").map(|i| i + 4);
    let lf = find(message, b"\n\n").map(|i| i + 2);
    let at = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(message.len()),
    };
    &message[at..]
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The token's value in a header block (or a whole message), if it has one.
pub fn token_of(headers: &[u8]) -> Option<&str> {
    let name = TOKEN_HEADER.as_bytes();
    for line in headers.split(|&b| b == b'\n') {
        if line.is_empty() || line == b"\r" {
            break;
        }
        if line.len() > name.len() + 1
            && line[..name.len()].eq_ignore_ascii_case(name)
            && line[name.len()] == b':'
        {
            let v = std::str::from_utf8(&line[name.len() + 1..]).ok()?;
            return Some(v.trim());
        }
    }
    None
}

/// The addresses and token a message is built with.
pub struct Envelope<'a> {
    pub from: &'a str,
    pub to: &'a [String],
    pub token: &'a str,
    /// Seconds since the Unix epoch, for the Date header.
    pub date: u64,
}

/// Words the text is made of: short, common, ASCII.
const WORDS: &[&str] = &[
    "the", "report", "shows", "load", "server", "queue", "meeting", "budget", "draft", "plan",
    "review", "latency", "team", "customer", "order", "week", "result", "update", "please",
    "attached", "numbers", "before", "friday", "thanks", "regards", "change", "release", "storage",
    "network", "issue", "fixed", "today", "tomorrow", "question", "answer",
];

/// Builds a message of about `size` bytes into `out` (cleared first), with CRLF line
/// endings, and returns the digest of its body.
pub fn build(out: &mut Vec<u8>, e: &Envelope<'_>, size: u64, rng: &mut Rng) -> Digest {
    out.clear();
    let subject_words = 3 + rng.below(5) as usize;
    let mut subject = String::new();
    for i in 0..subject_words {
        if i > 0 {
            subject.push(' ');
        }
        subject.push_str(WORDS[rng.below_usize(WORDS.len())]);
    }
    let head = format!(
        "From: <{}>\r\nTo: {}\r\nSubject: {subject}\r\nDate: {}\r\nMessage-ID: <{}@perflab>\r\n{TOKEN_HEADER}: {}\r\nMIME-Version: 1.0\r\n",
        e.from,
        e.to.iter()
            .map(|t| format!("<{t}>"))
            .collect::<Vec<_>>()
            .join(", "),
        rfc5322_date(e.date),
        e.token,
        e.token
    );
    out.extend_from_slice(head.as_bytes());
    let body_budget = (size as usize).saturating_sub(out.len() + 60).max(64);
    if size <= PLAIN_MAX {
        out.extend_from_slice(b"Content-Type: text/plain; charset=us-ascii\r\n\r\n");
        let start = out.len();
        text(out, body_budget, rng);
        digest(&out[start..])
    } else {
        let boundary = format!("=_perflab_{:016x}", rng.next_u64());
        out.extend_from_slice(
            format!("Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n").as_bytes(),
        );
        let start = out.len();
        let text_part = 512 + rng.below(1536) as usize;
        out.extend_from_slice(
            format!("--{boundary}\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n")
                .as_bytes(),
        );
        text(out, text_part, rng);
        out.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Type: application/octet-stream; name=\"data.bin\"\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"data.bin\"\r\n\r\n"
            )
            .as_bytes(),
        );
        let used = out.len() - start;
        base64_lines(
            out,
            body_budget.saturating_sub(used + boundary.len() + 8),
            rng,
        );
        out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        digest(&out[start..])
    }
}

/// Lines of words up to about `bytes`.
fn text(out: &mut Vec<u8>, bytes: usize, rng: &mut Rng) {
    let end = out.len() + bytes;
    let mut line = 0usize;
    while out.len() < end {
        let w = WORDS[rng.below_usize(WORDS.len())].as_bytes();
        if line + w.len() + 1 > LINE {
            out.extend_from_slice(b"\r\n");
            line = 0;
        } else if line > 0 {
            out.push(b' ');
            line += 1;
        }
        out.extend_from_slice(w);
        line += w.len();
    }
    out.extend_from_slice(b"\r\n");
}

/// Base64-looking lines (random characters of the base64 alphabet) up to about `bytes`.
fn base64_lines(out: &mut Vec<u8>, bytes: usize, rng: &mut Rng) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let lines = bytes.div_ceil(LINE + 2).max(1);
    for _ in 0..lines {
        let mut bits = rng.next_u64();
        for i in 0..LINE {
            if i % 10 == 0 {
                bits = rng.next_u64();
            }
            out.push(ALPHABET[(bits & 63) as usize]);
            bits >>= 6;
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// An RFC 5322 date in UTC.
fn rfc5322_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = crate::record::timestamp::civil(days as i64);
    format!(
        "{}, {d} {} {y} {:02}:{:02}:{:02} +0000",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope<'a>(to: &'a [String]) -> Envelope<'a> {
        Envelope {
            from: "a@perflab.test",
            to,
            token: "00ff.7",
            date: 1_700_000_000,
        }
    }

    #[test]
    fn messages_come_near_their_size_with_the_token_and_a_matching_digest() {
        let to = vec!["b@perflab.test".to_string()];
        let mut rng = Rng::new(1);
        let mut out = Vec::new();
        for size in [1024u64, 3 * 1024, 8 * 1024, 32 * 1024, 256 * 1024] {
            let d = build(&mut out, &envelope(&to), size, &mut rng);
            let got = out.len() as f64;
            assert!(
                (got - size as f64).abs() < size as f64 * 0.1 + 200.0,
                "{size}: {got}"
            );
            assert_eq!(token_of(&out), Some("00ff.7"));
            assert_eq!(digest(body_of(&out)), d);
            // The same body with bare LF compares equal.
            let lf: Vec<u8> = out.iter().copied().filter(|&b| b != b'\r').collect();
            assert_eq!(digest(body_of(&lf)), d);
            let multipart = size > PLAIN_MAX;
            assert_eq!(
                String::from_utf8_lossy(&out).contains("multipart/mixed"),
                multipart
            );
            assert!(
                out.split(|&b| b == b'\n')
                    .all(|l| l.len() <= 80 || l.starts_with(b"To:"))
            );
        }
    }

    #[test]
    fn the_same_seed_builds_the_same_message() {
        let to = vec!["b@perflab.test".to_string()];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        build(&mut a, &envelope(&to), 20_000, &mut Rng::new(9));
        build(&mut b, &envelope(&to), 20_000, &mut Rng::new(9));
        assert_eq!(a, b);
    }

    #[test]
    fn sizes_parse_pick_by_weight_and_refuse_nonsense() {
        let s = Sizes::parse("1k:3,4k:1").unwrap();
        assert!((s.mean() - (0.75 * 1024.0 + 0.25 * 4096.0)).abs() < 1e-6);
        let mut rng = Rng::new(3);
        let small = (0..10_000).filter(|_| s.pick(&mut rng) == 1024).count();
        assert!((7_200..7_800).contains(&small), "{small}");
        assert!(Sizes::parse("").is_err());
        assert!(Sizes::parse("1k:-1").is_err());
        assert!(Sizes::parse("10").is_err());
        assert!(Sizes::parse("1k:x").is_err());
    }

    #[test]
    fn dates_are_rfc5322() {
        assert_eq!(rfc5322_date(0), "Thu, 1 Jan 1970 00:00:00 +0000");
        assert_eq!(
            rfc5322_date(1_764_072_000),
            "Tue, 25 Nov 2025 12:00:00 +0000"
        );
    }

    #[test]
    fn the_token_is_found_only_in_the_headers() {
        assert_eq!(
            token_of(b"Subject: x\r\nx-perflab-token:  ab.1 \r\n\r\nbody"),
            Some("ab.1")
        );
        assert_eq!(
            token_of(b"Subject: x\r\n\r\nX-Perflab-Token: ab.1\r\n"),
            None
        );
    }
}
