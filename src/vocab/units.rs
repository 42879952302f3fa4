//! Units on the command line: sizes (`4k`, `1MiB`), durations (`30s`, `500ms`), rates
//! (`10/s`, `2k/s`) and plain counts (`8`, `1k`).
//!
//! Sizes follow fio: `k`, `m`, `g`, `t` are 1024-based, with or without a `B` (`4KB` is 4096,
//! `64MB` is 64 MiB, fio's default `kb_base=1024`), and so are `KiB`, `MiB` (where fio, for
//! old scripts' sake, reads them as powers of ten). Before perflab 0.2 `kB`/`MB` were
//! decimal: a note says so when they are used. Counts use decimal multipliers (`1k` ops =
//! 1000), because counts are not memory.

use super::SpecError;
use std::time::Duration;

/// The longest duration any option takes: a year. Longer is a typo (a missing unit, an extra
/// digit), and the run's clock arithmetic (`Instant + Duration`) stays far from overflowing.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The highest rate `--rate` takes: no target completes a trillion ops a second, and a
/// higher (or infinite) rate could not be written into the record.
pub const MAX_RATE: f64 = 1e12;

/// 2^64 as a float: the first value a `u64` cannot hold (`u64::MAX as f64` rounds up to it).
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// Splits `12.5MiB` into (`12.5`, `MiB`).
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim())
}

fn number(option: &str, text: &str, digits: &str) -> Result<f64, SpecError> {
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    clean
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| SpecError::new(option, text, "expected a number, e.g. 4k, 1MiB, 30s"))
}

/// `digits` (already read by [`number`] as `value`) times `multiplier`, as a whole number:
/// exactly where the digits are whole (through `f64`, 18446744073709551615 would round up
/// past `u64::MAX`), through `f64` for fractions such as `1.5g`. `what` names the unit in the
/// errors.
fn whole(
    option: &str,
    text: &str,
    digits: &str,
    value: f64,
    multiplier: u64,
    what: &str,
) -> Result<u64, SpecError> {
    let too_large = || {
        SpecError::new(
            option,
            text,
            &format!("too large; give a {what} below 2^64 (18446744073709551616)"),
        )
    };
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if let Ok(n) = clean.parse::<u64>() {
        return n.checked_mul(multiplier).ok_or_else(too_large);
    }
    let product = value * multiplier as f64;
    if product >= U64_LIMIT {
        return Err(too_large());
    }
    if product.fract() != 0.0 {
        return Err(SpecError::new(
            option,
            text,
            &format!("a {what} must be a whole number"),
        ));
    }
    Ok(product as u64)
}

/// Parses a size in bytes: `4096`, `4k`, `4KiB`, `1m`, `1.5GiB`, `10MB` (decimal).
pub fn parse_size(option: &str, text: &str) -> Result<u64, SpecError> {
    let (digits, suffix) = split_number(text.trim());
    let value = number(option, text, digits)?;
    let multiplier: u64 = match suffix {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" => 1 << 40,
        "kB" | "KB" | "kb" | "Kb" => 1 << 10,
        "MB" | "mb" | "Mb" => 1 << 20,
        "GB" | "gb" | "Gb" => 1 << 30,
        "TB" | "tb" | "Tb" => 1 << 40,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "unknown size unit; use k, m, g, t (1024-based, also as KB, MB, GB, KiB, MiB, GiB), or the bytes in full",
            ));
        }
    };
    let bytes = whole(option, text, digits, value, multiplier, "size in bytes")?;
    if suffix.len() == 2 && suffix.ends_with(['B', 'b']) && multiplier > 1 {
        super::notes::note(format!(
            "--{option} {text} is {} ({bytes} bytes), as fio reads {suffix}; perflab before 0.2 read it in powers of ten",
            format_bytes(bytes)
        ));
    }
    Ok(bytes)
}

/// Parses a count: `8`, `1k` (1000), `2.5M`.
pub fn parse_count(option: &str, text: &str) -> Result<u64, SpecError> {
    let (digits, suffix) = split_number(text.trim());
    let value = number(option, text, digits)?;
    let multiplier: u64 = match suffix {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "expected a whole number, optionally with k or M (x1000, x1000000)",
            ));
        }
    };
    whole(option, text, digits, value, multiplier, "count")
}

/// Parses a duration: `30s`, `500ms`, `2m`, `1h`, `250us`; a bare number is seconds. At most
/// [`MAX_DURATION`].
pub fn parse_duration(option: &str, text: &str) -> Result<Duration, SpecError> {
    let (digits, suffix) = split_number(text.trim());
    let value = number(option, text, digits)?;
    let seconds = match suffix {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "unknown time unit; use ns, us, ms, s, m or h (e.g. 30s)",
            ));
        }
    };
    // Checked before converting: a value such as 99999999999999999999s is a bad input, not a
    // panic, and nothing past a year reaches the run's clock arithmetic.
    let too_long = || {
        SpecError::new(
            option,
            text,
            "too long; give a duration of at most a year (8760h), e.g. 30s or 2h",
        )
    };
    if seconds > MAX_DURATION.as_secs_f64() {
        return Err(too_long());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| too_long())
}

/// Parses a rate in operations per second: `10/s`, `2k/s`, `600/min`, `500` (per second).
pub fn parse_rate(option: &str, text: &str) -> Result<f64, SpecError> {
    let trimmed = text.trim();
    let (amount, per) = match trimmed.split_once('/') {
        Some((amount, per)) => (amount, per.trim()),
        None => (trimmed, "s"),
    };
    let count = {
        let (digits, suffix) = split_number(amount.trim());
        let value = number(option, text, digits)?;
        value
            * match suffix {
                "" => 1.0,
                "k" | "K" => 1e3,
                "m" | "M" => 1e6,
                s if s.ends_with('B') => {
                    return Err(SpecError::new(
                        option,
                        text,
                        "this rate counts ops: 100/s, 2k/s or 600/min, a list (100/s,200/s) or a range (100/s..1k/s:x2); byte rates (8MB/s, 1MB/s..10MB/s) are io's",
                    ));
                }
                _ => {
                    return Err(SpecError::new(
                        option,
                        text,
                        "expected a rate such as 100/s, 2k/s or 600/min, a list (100/s,200/s) or a range (100/s..1k/s:x2)",
                    ));
                }
            }
    };
    let seconds = match per {
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "min" | "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "expected a rate such as 100/s or 600/min",
            ));
        }
    };
    let rate = count / seconds;
    if rate <= 0.0 {
        return Err(SpecError::new(option, text, "a rate must be above zero"));
    }
    if rate > MAX_RATE || !rate.is_finite() {
        return Err(SpecError::new(
            option,
            text,
            "too high; give a rate of at most 1000G/s (1e12 per second)",
        ));
    }
    // One op a year at least: a longer gap between starts is a typo, and keeps the pacer's
    // schedule within the same bound as every duration.
    if rate * MAX_DURATION.as_secs_f64() < 1.0 {
        return Err(SpecError::new(
            option,
            text,
            "too low; give a rate of at least one op a year, e.g. 1/h",
        ));
    }
    Ok(rate)
}

/// Formats bytes with a binary unit: `32 MiB`, `1.5 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Formats a duration compactly: `30s`, `500ms`, `1.5s`.
pub fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs >= 1.0 {
        let text = format!("{secs:.3}");
        format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{}ms", (secs * 1e3).round())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_as_fio_reads_them() {
        assert_eq!(parse_size("s", "4k").unwrap(), 4096);
        assert_eq!(parse_size("s", "4KiB").unwrap(), 4096);
        assert_eq!(parse_size("s", "1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("s", "1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("s", "10MB").unwrap(), 10 << 20);
        assert_eq!(parse_size("bs", "4KB").unwrap(), 4096);
        assert_eq!(parse_size("bs", "4kb").unwrap(), 4096);
        assert_eq!(parse_size("s", "512").unwrap(), 512);
        assert!(parse_size("s", "4x").is_err());
        assert!(parse_size("s", "-4k").is_err());
        assert!(parse_size("s", "").is_err());
        assert!(parse_size("s", "0.3").is_err());
    }

    #[test]
    fn durations_and_rates() {
        assert_eq!(parse_duration("d", "30s").unwrap(), Duration::from_secs(30));
        assert_eq!(
            parse_duration("d", "500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(parse_duration("d", "2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("d", "3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("d", "3 fortnights").is_err());
        assert_eq!(parse_rate("r", "10/s").unwrap(), 10.0);
        assert_eq!(parse_rate("r", "2k/s").unwrap(), 2000.0);
        assert_eq!(parse_rate("r", "600/min").unwrap(), 10.0);
        assert!(parse_rate("r", "0/s").is_err());
        assert!(parse_rate("r", "10/fortnight").is_err());
    }

    #[test]
    fn counts_are_decimal() {
        assert_eq!(parse_count("c", "1k").unwrap(), 1000);
        assert_eq!(parse_count("c", "1_000").unwrap(), 1000);
        assert!(parse_count("c", "1.5").is_err());
    }

    #[test]
    fn whole_numbers_are_exact_up_to_u64_max_and_refused_past_it() {
        // Through f64, u64::MAX rounded up to 2^64 and 2^64 saturated silently.
        assert_eq!(parse_count("c", "18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(
            parse_count("c", "9007199254740993").unwrap(),
            9007199254740993
        );
        for bad in [
            "18446744073709551616",
            "99999999999999999999",
            "18446744073709552k",
        ] {
            let e = parse_count("c", bad).unwrap_err();
            assert!(e.hint.contains("too large"), "{bad}: {e}");
        }
        assert_eq!(parse_size("s", "16777215t").unwrap(), 16777215 << 40);
        for bad in ["16777216t", "18446744073709551616", "1e308"] {
            assert!(parse_size("s", bad).is_err(), "{bad}");
        }
        assert!(
            parse_size("s", "16777216t")
                .unwrap_err()
                .hint
                .contains("too large")
        );
    }

    #[test]
    fn durations_stop_at_a_year() {
        assert_eq!(parse_duration("d", "8760h").unwrap(), MAX_DURATION);
        for bad in [
            "8761h",
            "31536001",
            "9000000000000000000",
            "99999999999999999999",
            "1e30",
            "inf",
            "NaN",
            "-1s",
        ] {
            assert!(parse_duration("d", bad).is_err(), "{bad}");
        }
        let e = parse_duration("d", "9000000000000000000").unwrap_err();
        assert!(e.hint.contains("at most a year"), "{e}");
    }

    #[test]
    fn rates_are_finite_and_at_least_one_a_year() {
        assert_eq!(parse_rate("r", "1/h").unwrap(), 1.0 / 3600.0);
        assert_eq!(parse_rate("r", "1000000M/s").unwrap(), 1e12);
        let e = parse_rate("r", "0.0000000001/h").unwrap_err();
        assert!(e.hint.contains("too low"), "{e}");
        let e = parse_rate("r", "2000000M/s").unwrap_err();
        assert!(e.hint.contains("too high"), "{e}");
        let inf = format!("{}M/ms", "9".repeat(300));
        assert!(parse_rate("r", &inf).unwrap_err().hint.contains("too high"));
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(32 << 20), "32 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
    }
}
