//! Doubles written as pgbench writes them: C's `%.15g` (a variable's text, `debug()`) and
//! `%f` (its error messages), through PostgreSQL's own `snprintf`, which spells a NaN `NaN`
//! and the infinities `Infinity` and `-Infinity` where glibc would write `nan` and `inf`.
//!
//! Rust's float formatting rounds exactly, ties to even, as glibc's `printf` does, so the
//! digits are C's; only `%g`'s choice between fixed and exponential form, its trailing-zero
//! trimming and its two-digit exponent are written here.

use std::fmt::{self, Write};

/// `DBL_DIG`: the significant digits pgbench prints a double with.
pub const DBL_DIG: usize = 15;

/// `%.15g`, as pgbench renders a double.
pub fn write_g15(out: &mut impl Write, v: f64) -> fmt::Result {
    write_g(out, v, DBL_DIG)
}

/// C's `%.{precision}g` (no `#` flag) through PostgreSQL's `snprintf`.
pub fn write_g(out: &mut impl Write, v: f64, precision: usize) -> fmt::Result {
    if let Some(word) = special(v) {
        return out.write_str(word);
    }
    if v == 0.0 {
        // C keeps the sign of a negative zero: `-1 * 0.0` prints `-0`.
        return out.write_str(if v.is_sign_negative() { "-0" } else { "0" });
    }
    let p = precision.max(1);
    // The exponent %g decides by is the one after rounding to p significant digits, which
    // is what the exponential form gives.
    let mut sci = Small::new();
    write!(sci, "{:.*e}", p - 1, v)?;
    let text = sci.as_str();
    let (mantissa, exp) = text.split_once('e').ok_or(fmt::Error)?;
    let exp: i32 = exp.parse().map_err(|_| fmt::Error)?;
    if exp < -4 || exp >= p as i32 {
        out.write_str(trim_zeros(mantissa))?;
        let sign = if exp < 0 { '-' } else { '+' };
        write!(out, "e{sign}{:02}", exp.unsigned_abs())
    } else {
        // p - 1 - exp decimals keep p significant digits; rounding at the same digit as the
        // exponential form, it gives the same digits.
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        let mut fixed = Small::new();
        write!(fixed, "{v:.decimals$}")?;
        out.write_str(trim_zeros(fixed.as_str()))
    }
}

/// `%f` through PostgreSQL's `snprintf`, as pgbench's error messages print a double.
pub fn f6(v: f64) -> String {
    match special(v) {
        Some(word) => word.to_string(),
        None => format!("{v:.6}"),
    }
}

/// `%.{precision}f`, likewise.
pub fn fixed(v: f64, precision: usize) -> String {
    match special(v) {
        Some(word) => word.to_string(),
        None => format!("{v:.precision$}"),
    }
}

/// PostgreSQL's spelling of the values C would print as `nan`, `inf` and `-inf`.
fn special(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("Infinity")
    } else if v == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// `%g` drops trailing zeros of the fraction, and the point if nothing is left after it.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A small text buffer on the stack, so rendering a double allocates nothing: `%.15g`'s
/// longest forms (`-1.23456789012346e-308`, `-0.000123456789012346`) are far below its size.
struct Small {
    buf: [u8; 64],
    len: usize,
}

impl Small {
    fn new() -> Small {
        Small {
            buf: [0; 64],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever written into it.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Write for Small {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g15(v: f64) -> String {
        let mut s = String::new();
        write_g15(&mut s, v).unwrap();
        s
    }

    /// Each pair is a double and what pgbench 15's `debug()` printed for it (`double ...`).
    #[test]
    fn g15_matches_pgbench() {
        let cases: &[(f64, &str)] = &[
            (1.0 / 3.0, "0.333333333333333"),
            (100000000000000.5, "100000000000000"),
            (0.1, "0.1"),
            (1e15, "1e+15"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.0, "0"),
            (-0.0, "-0"),
            (1000.0, "1000"),
            (std::f64::consts::PI, "3.14159265358979"),
            (0.000_123_456_789_012_345_67, "0.000123456789012346"),
            (123456789012345.67, "123456789012346"),
            (1234567890123456.7, "1.23456789012346e+15"),
            (12345678901234567890.0, "1.23456789012346e+19"),
            (0.1 + 0.2, "0.3"),
            (2.0f64.sqrt(), "1.4142135623731"),
            (std::f64::consts::E, "2.71828182845905"),
            (f64::MAX, "1.79769313486232e+308"),
            (2.2250738585072014e-308, "2.2250738585072e-308"),
            (f64::from_bits(1), "4.94065645841247e-324"),
            (8.507059173023462e37, "8.50705917302346e+37"),
            (-0.00032, "-0.00032"),
            (-54.21e-2, "-0.5421"),
            (f64::NAN, "NaN"),
            (-f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, want) in cases {
            assert_eq!(g15(*v), *want, "{v:e}");
        }
    }

    /// pgbench's `%f` in its messages, e.g. "double to int overflow for 10000000000000000000.000000".
    #[test]
    fn f6_matches_pgbench() {
        assert_eq!(f6(1e19), "10000000000000000000.000000");
        assert_eq!(f6(9223372036854775808.0), "9223372036854775808.000000");
        assert_eq!(f6(f64::NAN), "NaN");
        assert_eq!(f6(1.9), "1.900000");
        assert_eq!(fixed(1.001, 3), "1.001");
        assert_eq!(fixed(1000.0, 0), "1000");
    }
}
