//! fio's byte patterns (`buffer_pattern=`), read as fio's `lib/pattern.c` reads them: a run of
//! pieces, each appended to the pattern, with nothing between them:
//!
//! - `0x` and hex digits: those bytes in the order written (`0xdeadface` is `de ad fa ce`); an
//!   odd count makes the first digit a byte of its own (`0xabc` is `0a bc`); a run that ends
//!   in the `0` of a following `0x` leaves it to the next piece (`0xff0x14` is `ff 14`);
//! - a decimal integer (a sign allowed, within a 32-bit int): its bytes, least significant
//!   first, as few as hold it (`-12` is `f4 ff ff ff`, `0` one zero byte); the digits stop
//!   where a `0x` starts (`120x1` is 12 then `0x1`);
//! - `"text"`: the bytes between the quotes;
//! - `'file'`: the bytes of that file (as many as still fit), relative to the current folder.
//!
//! The whole pattern holds at most 512 bytes (fio's `MAX_PATTERN_SIZE`). fio's `%o`-style
//! formats belong to `verify_pattern`; in a buffer pattern fio rejects them, and so does this.
//! Where fio would take an empty piece (`""`, an empty file) it trips an assertion; that is
//! refused here.

/// fio's `MAX_PATTERN_SIZE`.
pub const MAX_BYTES: usize = 512;

/// The bytes `text` stands for, or why it is not a pattern.
pub fn parse(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    if rest.is_empty() {
        return Err("an empty pattern".into());
    }
    while !rest.is_empty() {
        let room = MAX_BYTES - out.len();
        if room == 0 {
            return Err(format!("longer than {MAX_BYTES} bytes, fio's limit"));
        }
        let (piece, after) = match rest.as_bytes()[0] {
            b'"' => quoted(rest)?,
            b'\'' => file(rest, room)?,
            b'%' => {
                return Err(format!(
                    "`{rest}`: %-formats are verify_pattern's; a buffer pattern is bytes"
                ));
            }
            _ => number(rest)?,
        };
        if piece.is_empty() {
            return Err(format!("`{rest}` adds no bytes"));
        }
        if piece.len() > room {
            return Err(format!("longer than {MAX_BYTES} bytes, fio's limit"));
        }
        out.extend_from_slice(&piece);
        rest = after;
    }
    Ok(out)
}

/// `"text"` at the start of `s`: its bytes and what follows the closing quote.
fn quoted(s: &str) -> Result<(Vec<u8>, &str), String> {
    let body = &s[1..];
    let end = body
        .find('"')
        .ok_or_else(|| format!("`{s}`: the string has no closing \""))?;
    Ok((body.as_bytes()[..end].to_vec(), &body[end + 1..]))
}

/// `'file'` at the start of `s`: up to `room` bytes of the file.
fn file(s: &str, room: usize) -> Result<(Vec<u8>, &str), String> {
    use std::io::Read;
    let body = &s[1..];
    let end = body
        .find('\'')
        .ok_or_else(|| format!("`{s}`: the file name has no closing '"))?;
    let name = &body[..end];
    let mut bytes = Vec::new();
    std::fs::File::open(name)
        .and_then(|f| f.take(room as u64).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the pattern file {name}: {e}"))?;
    Ok((bytes, &body[end + 1..]))
}

/// A hex run (`0x...`) or a decimal integer at the start of `s`.
fn number(s: &str) -> Result<(Vec<u8>, &str), String> {
    let b = s.as_bytes();
    let is_hex_start =
        b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && b[2].is_ascii_hexdigit();
    if is_hex_start {
        let digits = &s[2..];
        let mut n = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
        // `0xff0x14`: the run took the `0` of the next `0x`.
        if n > 1
            && digits.as_bytes()[n - 1] == b'0'
            && matches!(digits.as_bytes().get(n), Some(b'x' | b'X'))
        {
            n -= 1;
        }
        let run = &digits[..n];
        let (first, pairs) = run.split_at(n % 2);
        let mut out = Vec::with_capacity(n.div_ceil(2));
        if !first.is_empty() {
            out.push(u8::from_str_radix(first, 16).map_err(|e| e.to_string())?);
        }
        for i in (0..pairs.len()).step_by(2) {
            out.push(u8::from_str_radix(&pairs[i..i + 2], 16).map_err(|e| e.to_string())?);
        }
        return Ok((out, &digits[n..]));
    }
    // A decimal integer, its digits stopping where a `0x` starts.
    let limit = s.to_ascii_lowercase().find("0x").unwrap_or(s.len());
    let head = &s[..limit];
    let sign = usize::from(head.starts_with(['-', '+']));
    let digits = head[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!(
            "`{s}` is not a pattern: give 0x and hex digits, a decimal number, \"text\" or 'file'"
        ));
    }
    let end = sign + digits;
    let value: i64 = s[..end]
        .parse()
        .map_err(|_| format!("`{}` does not fit in 32 bits", &s[..end]))?;
    let value =
        i32::try_from(value).map_err(|_| format!("`{}` does not fit in 32 bits", &s[..end]))?;
    // fio keeps the value's bytes as an unsigned int, least significant first, up to the
    // last nonzero one (0 is one zero byte).
    let mut v = value as u32;
    let mut out = Vec::new();
    if v == 0 {
        out.push(0);
    }
    while v != 0 {
        out.push(v as u8);
        v >>= 8;
    }
    Ok((out, &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn fios_examples_read_as_fio_reads_them() {
        assert_eq!(parse("0xdeadface").unwrap(), [0xde, 0xad, 0xfa, 0xce]);
        assert_eq!(parse("\"abcd\"").unwrap(), b"abcd");
        assert_eq!(parse("-12").unwrap(), [0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(
            parse("0xdeadface\"abcd\"-12").unwrap(),
            [
                0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff
            ]
        );
        // Checked against fio 3.33's files: `"ab"0x0102` is 61 62 01 02, `0xabc` is 0a bc.
        assert_eq!(parse("\"ab\"0x0102").unwrap(), [0x61, 0x62, 1, 2]);
        assert_eq!(parse("0xabc").unwrap(), [0x0a, 0xbc]);
    }

    #[test]
    fn edges_of_numbers() {
        assert_eq!(parse("0").unwrap(), [0]);
        assert_eq!(parse("256").unwrap(), [0, 1]);
        assert_eq!(parse("0xff0x14").unwrap(), [0xff, 0x14]);
        assert_eq!(parse("120x1").unwrap(), [12, 1]);
        assert!(parse("4294967296").unwrap_err().contains("32 bits"));
        assert!(parse("0x").is_err());
        assert!(parse("zz").unwrap_err().contains("not a pattern"));
        assert!(
            parse("0xaa 0xbb").is_err(),
            "no blanks between pieces, as fio"
        );
    }

    #[test]
    fn refusals() {
        assert!(parse("").is_err());
        assert!(parse("\"\"").unwrap_err().contains("no bytes"));
        assert!(parse("\"abc").unwrap_err().contains("closing"));
        assert!(parse("%o").unwrap_err().contains("verify_pattern"));
        assert!(
            parse("'/no/such/file'")
                .unwrap_err()
                .contains("cannot read")
        );
        let long = format!("\"{}\"", "x".repeat(513));
        assert!(parse(&long).unwrap_err().contains("512"));
        let full = format!("\"{}\"", "x".repeat(512));
        assert_eq!(parse(&full).unwrap().len(), 512);
        assert!(parse(&format!("{full}0x01")).unwrap_err().contains("512"));
    }

    #[test]
    fn a_file_gives_its_bytes() {
        let p = std::env::temp_dir().join(format!("perflab-pattern-{}", std::process::id()));
        std::fs::write(&p, b"\x01\x02\x03").unwrap();
        let text = format!("'{}'0x04", p.display());
        assert_eq!(parse(&text).unwrap(), [1, 2, 3, 4]);
        let _ = std::fs::remove_file(&p);
    }
}
