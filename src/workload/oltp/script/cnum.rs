//! Numbers read as pgbench reads them, through C's `strtoll` and `strtod` (glibc, C locale):
//! its `strtoint64` and `strtodouble`, which take a whole string or refuse it. They read
//! `-D` values, `\gset` results and the expression language's constants.
//!
//! What C accepts and Rust's `parse` does not: leading white space, `+`, `infinity` and
//! `nan(...)` in any case, hexadecimal doubles (`0x1p4`). What C refuses and Rust accepts:
//! a double too small to be normal (glibc's `ERANGE`, which pgbench treats as an error).

/// Why a text is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumError {
    /// Out of the type's range (C's `ERANGE`): an overflow, or a double that underflows.
    Range,
    /// Not the type's syntax, or something after the number.
    Syntax,
}

/// C's `isspace` in the C locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// pgbench's `strtoint64`: `strtoll(s, &end, 10)` that must read all of `s`.
pub fn strtoint64(s: &str) -> Result<i64, NumError> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_start = i;
    // Accumulated as a negative number, which reaches i64::MIN.
    let mut acc: i64 = 0;
    let mut overflow = false;
    while let Some(&d) = b.get(i) {
        if !d.is_ascii_digit() {
            break;
        }
        let digit = i64::from(d - b'0');
        match acc.checked_mul(10).and_then(|a| a.checked_sub(digit)) {
            Some(a) => acc = a,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_start {
        return Err(NumError::Syntax);
    }
    // strtoll reads every digit and sets ERANGE, which pgbench checks before the end.
    if overflow {
        return Err(NumError::Range);
    }
    if i != b.len() {
        return Err(NumError::Syntax);
    }
    if negative {
        Ok(acc)
    } else {
        acc.checked_neg().ok_or(NumError::Range)
    }
}

/// pgbench's `strtodouble`: `strtod(s, &end)` that must read all of `s`, with `ERANGE`
/// (overflow, or a result below the normal range) an error.
pub fn strtodouble(s: &str) -> Result<f64, NumError> {
    let b = s.as_bytes();
    let Some(read) = strtod_prefix(b) else {
        return Err(NumError::Syntax);
    };
    if read.range_error {
        return Err(NumError::Range);
    }
    if read.end != b.len() {
        return Err(NumError::Syntax);
    }
    Ok(read.value)
}

/// What `strtod` made of the start of a text.
struct Read {
    value: f64,
    /// Where it stopped reading.
    end: usize,
    /// It would set `errno` to `ERANGE`.
    range_error: bool,
}

/// `strtod`'s reading of the longest number at the start of `b`; `None` if there is none.
fn strtod_prefix(b: &[u8]) -> Option<Read> {
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &b[i..];
    if starts_with_ci(rest, b"inf") {
        let len = if starts_with_ci(rest, b"infinity") {
            8
        } else {
            3
        };
        return Some(Read {
            value: sign * f64::INFINITY,
            end: i + len,
            range_error: false,
        });
    }
    if starts_with_ci(rest, b"nan") {
        let mut len = 3;
        // "nan(chars)" is read whole when the parenthesis closes; otherwise only "nan".
        if rest.get(3) == Some(&b'(') {
            let mut j = 4;
            while rest
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            {
                j += 1;
            }
            if rest.get(j) == Some(&b')') {
                len = j + 1;
            }
        }
        return Some(Read {
            value: sign * f64::NAN,
            end: i + len,
            range_error: false,
        });
    }
    if rest.len() > 2
        && rest[0] == b'0'
        && (rest[1] == b'x' || rest[1] == b'X')
        && let Some(read) = hex_prefix(&rest[2..], negative)
    {
        return Some(Read {
            end: i + 2 + read.end,
            ..read
        });
    }
    decimal_prefix(rest, negative).map(|read| Read {
        end: i + read.end,
        ..read
    })
}

fn starts_with_ci(b: &[u8], word: &[u8]) -> bool {
    b.len() >= word.len() && b[..word.len()].eq_ignore_ascii_case(word)
}

/// Reads `digits* [. digits*] [e [+-] digits+]` (at least one mantissa digit).
fn decimal_prefix(b: &[u8], negative: bool) -> Option<Read> {
    let mut i = 0;
    let mut mantissa_digits = 0;
    let mut nonzero = false;
    while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
        nonzero |= *d != b'0';
        mantissa_digits += 1;
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
            nonzero |= *d != b'0';
            mantissa_digits += 1;
            i += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    let mantissa_end = i;
    let exponent = exponent_part(b, i, b'e');
    let (exp, end) = exponent.unwrap_or((0, mantissa_end));
    let mut text = String::with_capacity(mantissa_end + 24);
    if negative {
        text.push('-');
    }
    text.push_str(std::str::from_utf8(&b[..mantissa_end]).ok()?);
    text.push('e');
    text.push_str(&exp.to_string());
    let value: f64 = text.parse().ok()?;
    let range_error = value.is_infinite() || value.is_subnormal() || (value == 0.0 && nonzero);
    Some(Read {
        value,
        end,
        range_error,
    })
}

/// Reads an exponent (`e` or `p`, a sign, digits) at `b[i..]`: its value, clamped far beyond
/// any double's range, and where it ends; `None` if there is no whole exponent there.
fn exponent_part(b: &[u8], i: usize, letter: u8) -> Option<(i64, usize)> {
    if !b.get(i)?.eq_ignore_ascii_case(&letter) {
        return None;
    }
    let mut j = i + 1;
    let negative = match b.get(j) {
        Some(b'-') => {
            j += 1;
            true
        }
        Some(b'+') => {
            j += 1;
            false
        }
        _ => false,
    };
    let start = j;
    let mut exp: i64 = 0;
    while let Some(d) = b.get(j).filter(|d| d.is_ascii_digit()) {
        exp = (exp * 10 + i64::from(d - b'0')).min(1_000_000);
        j += 1;
    }
    if j == start {
        return None;
    }
    Some((if negative { -exp } else { exp }, j))
}

/// Reads a hexadecimal double's digits after `0x`: `hex* [. hex*] [p [+-] digits+]`, at least
/// one hexadecimal digit; `None` if there is none (then strtod reads only the `0`).
fn hex_prefix(b: &[u8], negative: bool) -> Option<Read> {
    let mut i = 0;
    // The first 15 significant hexadecimal digits (60 bits) are kept; any later non-zero
    // digit sets a sticky low bit, so the one rounding to 53 bits is right.
    let mut mantissa: u64 = 0;
    let mut kept = 0;
    let mut sticky = false;
    let mut scale: i64 = 0;
    let mut digits = 0;
    let mut seen_point = false;
    loop {
        match b.get(i) {
            Some(b'.') if !seen_point => seen_point = true,
            Some(c) if c.is_ascii_hexdigit() => {
                let v = u64::from((*c as char).to_digit(16)?);
                digits += 1;
                if mantissa == 0 && v == 0 {
                    if seen_point {
                        scale -= 4;
                    }
                } else if kept < 15 {
                    mantissa = mantissa << 4 | v;
                    kept += 1;
                    if seen_point {
                        scale -= 4;
                    }
                } else {
                    sticky |= v != 0;
                    if !seen_point {
                        scale += 4;
                    }
                }
            }
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    let (exp, end) = exponent_part(b, i, b'p').unwrap_or((0, i));
    let nonzero = mantissa != 0 || sticky;
    let m = (mantissa << 3) | u64::from(sticky);
    let mut value = m as f64;
    let mut e = exp + scale - 3;
    // Scaled in steps that stay exact while the result is normal.
    while e > 0 && value.is_finite() {
        let step = e.min(1000);
        value *= 2f64.powi(step as i32);
        e -= step;
    }
    while e < 0 && value != 0.0 {
        let step = (-e).min(1000);
        value /= 2f64.powi(step as i32);
        e += step;
    }
    if negative {
        value = -value;
    }
    let range_error = value.is_infinite() || value.is_subnormal() || (value == 0.0 && nonzero);
    Some(Read {
        value,
        end,
        range_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoint64_reads_what_strtoll_reads() {
        assert_eq!(strtoint64("0"), Ok(0));
        assert_eq!(strtoint64("+3"), Ok(3));
        assert_eq!(strtoint64(" 12"), Ok(12));
        assert_eq!(strtoint64("\t-7"), Ok(-7));
        assert_eq!(strtoint64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(strtoint64("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(strtoint64("9223372036854775808"), Err(NumError::Range));
        assert_eq!(strtoint64("-9223372036854775809"), Err(NumError::Range));
        assert_eq!(strtoint64("99999999999999999999x"), Err(NumError::Range));
        assert_eq!(strtoint64("12 "), Err(NumError::Syntax));
        assert_eq!(strtoint64("-"), Err(NumError::Syntax));
        assert_eq!(strtoint64(""), Err(NumError::Syntax));
        assert_eq!(strtoint64("0x10"), Err(NumError::Syntax));
    }

    #[test]
    fn strtodouble_reads_what_strtod_reads() {
        assert_eq!(strtodouble("1.5e3"), Ok(1500.0));
        assert_eq!(strtodouble(".5"), Ok(0.5));
        assert_eq!(strtodouble("5."), Ok(5.0));
        assert_eq!(strtodouble(" -10.1"), Ok(-10.1));
        assert_eq!(strtodouble("0x10"), Ok(16.0));
        assert_eq!(strtodouble("0X1p4"), Ok(16.0));
        assert_eq!(strtodouble("0x.8"), Ok(0.5));
        assert_eq!(strtodouble("0x1.8p-1"), Ok(0.75));
        assert_eq!(strtodouble("-0x1P+2"), Ok(-4.0));
        assert_eq!(
            strtodouble("0x123456789abcdef123"),
            Ok(3.358127276707303e20)
        );
        assert_eq!(strtodouble("inf"), Ok(f64::INFINITY));
        assert_eq!(strtodouble("-Infinity"), Ok(f64::NEG_INFINITY));
        assert!(strtodouble("nan").unwrap().is_nan());
        assert!(strtodouble("NaN(123)").unwrap().is_nan());
        assert_eq!(
            strtodouble("2.2250738585072014e-308"),
            Ok(f64::MIN_POSITIVE)
        );
        assert_eq!(strtodouble("1.7976931348623157e308"), Ok(f64::MAX));
        assert_eq!(strtodouble("0e-400"), Ok(0.0));
        for range in [
            "1e400",
            "1e-400",
            "1e-310",
            "4.9e-324",
            "2.2250738585072011e-308",
            "1.7976931348623159e308",
            "1e99999999999999999999",
            "0x1p-1070",
            "0x1p1024",
        ] {
            assert_eq!(strtodouble(range), Err(NumError::Range), "{range}");
        }
        for syntax in [
            "", "1e", "0x", "infx", "infin", "1.5 ", "abc", "1_000", "١", "5\n", "nan(1", "-", ".",
            "e5",
        ] {
            assert_eq!(strtodouble(syntax), Err(NumError::Syntax), "{syntax:?}");
        }
    }
}
