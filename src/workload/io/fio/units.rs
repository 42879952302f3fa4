//! Numbers as fio reads them (parse.c `str_to_decimal`, `__get_mult_bytes`,
//! `get_mult_time`, `handle_option`'s splitter) and `(expr)` arithmetic.
//!
//! Sizes: an integer (decimal, or hex when `0x` appears), then an optional unit, any case:
//! `k m g t p` with an optional `b` are powers of `kb_base` (1024 by default), and `ki mi gi
//! ti pi` (with `b`) are powers of the *other* base: with the default `kb_base=1024`, `4k`
//! is 4096 and `4kib` is 4000 (fio's inversion; with `kb_base=1000` they swap). `N%` is a
//! share of the file or device. Fractions are refused: fio reads `1.5g` as 1 byte.
//!
//! Times: an integer and `d h m s ms us usec msec`; a bare number is seconds for the
//! options fio marks `is_seconds` (runtime, ramp_time, startdelay, ss_dur, ...) and
//! microseconds for the rest (thinktime, latency_target, ...).
//!
//! fio silently reads an unknown unit as 1 (`10min` would be 10 µs); those are refused.

/// A size as written: bytes (possibly negative, for `rw=read:-8k`) or a percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Bytes(i64),
    Percent(u64),
}

/// The largest size accepted: 2^63 - 1 (fio keeps sizes in a signed 64-bit).
const LIMIT: i128 = i64::MAX as i128;

/// Splits a leading integer off `s` (sign, digits; hex when `0x` appears anywhere in the
/// value, as fio's `strstr(str, "0x")`). Returns the value and the rest.
fn leading_int(s: &str) -> Result<(i128, &str), String> {
    let hex = s.contains("0x") || s.contains("0X");
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if hex {
        let b = body
            .strip_prefix("0x")
            .or_else(|| body.strip_prefix("0X"))
            .unwrap_or(body);
        (16, b)
    } else {
        (10, body)
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if end == 0 {
        return Err(format!("`{s}` is not a number"));
    }
    let mut v: i128 = 0;
    for c in body[..end].chars() {
        v = v * radix as i128 + c.to_digit(radix).unwrap_or(0) as i128;
        if v > LIMIT {
            return Err(format!("`{s}` is too large (over 2^63)"));
        }
    }
    let rest = &body[end..];
    if rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "`{s}` has a fraction: fio reads only the whole part; write it in a smaller unit"
        ));
    }
    Ok((if neg { -v } else { v }, rest))
}

/// The multiplier of a size unit (empty is 1). `None` for `%`.
fn byte_unit(unit: &str, kb_base: u64) -> Result<Option<u64>, String> {
    let u = unit.to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, base) = match u.as_str() {
        "" | "b" => (0, kb_base),
        "%" => return Ok(None),
        _ => {
            let letters = ["k", "m", "g", "t", "p"];
            let Some(p) = letters.iter().position(|l| u.starts_with(l)) else {
                return Err(format!(
                    "unknown size unit `{unit}` (k, m, g, t, p; ki, mi, ...)"
                ));
            };
            match &u[1..] {
                "" | "b" => (p as u32 + 1, kb_base),
                "i" | "ib" => (p as u32 + 1, other),
                _ => {
                    return Err(format!(
                        "unknown size unit `{unit}` (k, m, g, t, p; ki, mi, ...)"
                    ));
                }
            }
        }
    };
    Ok(Some(base.pow(pow)))
}

/// A size (`4k`, `0x1000`, `-8k`, `50%`, `(1+3)*1k`).
pub fn parse_num(s: &str, kb_base: u64) -> Result<Num, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with('(') {
        // fio's expression lexer has its own units: `k` is always 1024 and `kib` 1000,
        // whatever kb_base says.
        let v = eval(s, 1.0, &|u| {
            byte_unit(u, 1024)?
                .map(|m| m as f64)
                .ok_or_else(|| "`%` inside an expression".to_string())
        })?;
        return in_range(v.trunc(), s).map(Num::Bytes);
    }
    let (n, unit) = leading_int(s)?;
    match byte_unit(unit, kb_base)? {
        None => {
            if !(0..=100).contains(&n) {
                return Err(format!("`{s}`: a percentage is 0 to 100"));
            }
            Ok(Num::Percent(n as u64))
        }
        Some(m) => {
            let v = n * m as i128;
            if v.abs() > LIMIT {
                return Err(format!("`{s}` is too large (over 2^63 bytes)"));
            }
            Ok(Num::Bytes(v as i64))
        }
    }
}

fn in_range(v: f64, s: &str) -> Result<i64, String> {
    if !v.is_finite() || v.abs() >= 9.2e18 {
        return Err(format!("`{s}` is too large (over 2^63)"));
    }
    Ok(v as i64)
}

/// A non-negative size in bytes (no `%`).
pub fn parse_bytes(s: &str, kb_base: u64) -> Result<u64, String> {
    match parse_num(s, kb_base)? {
        Num::Bytes(b) if b >= 0 => Ok(b as u64),
        Num::Bytes(_) => Err(format!("`{s}` is negative")),
        Num::Percent(_) => Err(format!("`{s}`: a percentage is not allowed here")),
    }
}

/// An integer option: fio reads these through the size parser too (`numjobs=1k` is 1024).
pub fn parse_int(s: &str, kb_base: u64, min: u64, max: u64) -> Result<u64, String> {
    let v = parse_bytes(s, kb_base)?;
    if v < min || v > max {
        return Err(format!("`{s}` is out of range ({min} to {max})"));
    }
    Ok(v)
}

/// The microseconds of a time unit; `None` when the unit is unknown.
fn time_unit(unit: &str, is_seconds: bool) -> Option<f64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" => {
            if is_seconds {
                1e6
            } else {
                1.0
            }
        }
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" => 1e6,
        "m" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        _ => return None,
    })
}

/// A time, in microseconds. `is_seconds`: a bare number is seconds (else microseconds).
pub fn parse_time_us(s: &str, is_seconds: bool) -> Result<u64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with('(') {
        let bare = if is_seconds { 1e6 } else { 1.0 };
        let v = eval(s, bare, &|u| {
            time_unit(u, false).ok_or_else(|| format!("unknown time unit `{u}`"))
        })?;
        // fio keeps whole seconds of an expression for the `is_seconds` options.
        let v = if is_seconds {
            (v / 1e6).trunc() * 1e6
        } else {
            v
        };
        let v = in_range(v.trunc(), s)?;
        return u64::try_from(v).map_err(|_| format!("`{s}` is negative"));
    }
    let (n, unit) = leading_int(s)?;
    if n < 0 {
        return Err(format!("`{s}` is negative"));
    }
    let Some(m) = time_unit(unit, is_seconds) else {
        return Err(format!(
            "unknown time unit in `{s}` (d, h, m, s, ms, us; `m` is minutes)"
        ));
    };
    let v = n as f64 * m;
    if v >= 1.8e19 {
        return Err(format!("`{s}` is too long"));
    }
    Ok((n as u128 * m as u128) as u64)
}

/// fio's `R,W,T` splitter (parse.c `handle_option`): the value is cut at `,` (and, for
/// plain number options, at `:` or `-` when there is no `,`); part *i* sets direction *i*,
/// and the last part also sets the directions after it. An empty part leaves its
/// direction alone; a trailing `,` stops the carrying. So `8k,32k` is R 8k, W 32k, T 32k;
/// `8k,32k,` leaves T at its default; `,8k` leaves R.
pub fn split_rwt(value: &str, number_delims: bool) -> Result<[Option<String>; 3], String> {
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = value;
    let mut trailing = false;
    loop {
        let mut cut = rest.find(',');
        if cut.is_none() && number_delims {
            cut = rest.find(':');
            if cut.is_none() {
                // a leading minus is a sign, not a separator
                cut = rest
                    .char_indices()
                    .skip(1)
                    .find(|&(_, c)| c == '-')
                    .map(|(i, _)| i);
            }
        }
        match cut {
            Some(i) => {
                parts.push(&rest[..i]);
                rest = &rest[i + 1..];
                if rest.is_empty() {
                    trailing = true;
                    break;
                }
            }
            None => {
                parts.push(rest);
                break;
            }
        }
    }
    if parts.len() > 3 {
        return Err(format!(
            "`{value}` has {} parts; at most 3 (read,write,trim)",
            parts.len()
        ));
    }
    let mut out: [Option<String>; 3] = [None, None, None];
    let n = parts.len();
    for (i, p) in parts.iter().enumerate() {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        out[i] = Some(p.to_string());
        if i + 1 == n && !trailing {
            for o in out.iter_mut().skip(i + 1) {
                *o = Some(p.to_string());
            }
        }
    }
    Ok(out)
}

/// Integer arithmetic for a value whose keywords were replaced (fio's `bc` call).
pub fn eval_integer(s: &str) -> Result<i64, String> {
    let v = eval(s, 1.0, &|u| Err(format!("unit `{u}` in arithmetic")))?;
    in_range(v.trunc(), s)
}

/// `(expr)`: `+ - * / % ^` and parentheses over numbers with units; `unit` gives a unit's
/// multiplier. As fio's expression parser (exp/expression-parser.y): when no number has a
/// unit, the result is multiplied by `bare` (the option's bare unit: seconds for runtime);
/// when any has one, bare numbers are the base unit (bytes, microseconds), so
/// `runtime=(1s+500)` is 1.0005 s.
pub fn eval(s: &str, bare: f64, unit: &dyn Fn(&str) -> Result<f64, String>) -> Result<f64, String> {
    let mut p = Expr {
        s: s.as_bytes(),
        i: 0,
        unit,
        depth: 0,
        units: false,
    };
    let mut v = p.sum()?;
    if !p.units {
        v *= bare;
    }
    p.blank();
    if p.i != p.s.len() {
        return Err(format!("cannot read `{s}` as arithmetic"));
    }
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    Ok(v)
}

struct Expr<'a> {
    s: &'a [u8],
    i: usize,
    unit: &'a dyn Fn(&str) -> Result<f64, String>,
    depth: usize,
    /// Some number had a unit.
    units: bool,
}

impl Expr<'_> {
    fn blank(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.blank();
        self.s.get(self.i).copied()
    }
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if c == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.i += 1;
            let r = self.power()?;
            if c != b'*' && r == 0.0 {
                return Err("division by zero".into());
            }
            v = match c {
                b'*' => v * r,
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    /// Every recursion goes through here: a line of 8000 `-` or `(` must not overflow the
    /// stack.
    fn nested(&mut self, f: fn(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("the expression nests too deep".into());
        }
        let v = f(self);
        self.depth -= 1;
        v
    }
    fn power(&mut self) -> Result<f64, String> {
        let b = self.unary()?;
        if self.peek() == Some(b'^') {
            self.i += 1;
            let e = self.nested(Self::power)?;
            return Ok(b.powf(e));
        }
        Ok(b)
    }
    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Ok(-self.nested(Self::unary)?)
            }
            Some(b'+') => {
                self.i += 1;
                self.nested(Self::unary)
            }
            Some(b'(') => {
                self.i += 1;
                let v = self.nested(Self::sum)?;
                if self.peek() != Some(b')') {
                    return Err("unbalanced parentheses".into());
                }
                self.i += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            _ => Err("expected a number".into()),
        }
    }
    fn number(&mut self) -> Result<f64, String> {
        let start = self.i;
        let v = if self.s[self.i..].starts_with(b"0x") || self.s[self.i..].starts_with(b"0X") {
            self.i += 2;
            let h = self.i;
            while self.i < self.s.len() && self.s[self.i].is_ascii_hexdigit() {
                self.i += 1;
            }
            let t = std::str::from_utf8(&self.s[h..self.i]).unwrap_or("");
            i64::from_str_radix(t, 16).map_err(|_| format!("bad hex number `{t}`"))? as f64
        } else {
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_digit() || self.s[self.i] == b'.')
            {
                self.i += 1;
            }
            let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
            t.parse::<f64>().map_err(|_| format!("bad number `{t}`"))?
        };
        let u = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        let unit = std::str::from_utf8(&self.s[u..self.i]).unwrap_or("");
        if unit.is_empty() {
            return Ok(v);
        }
        self.units = true;
        Ok(v * (self.unit)(unit)?)
    }
}
