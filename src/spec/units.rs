//! Units on the command line: sizes (`4k`, `1MiB`), durations (`30s`, `500ms`), rates
//! (`10/s`, `2k/s`) and plain counts (`8`, `1k`).
//!
//! Sizes follow fio: a bare `k`/`m`/`g` suffix is binary (1024-based), as is `KiB`/`MiB`;
//! `kB`/`MB` with a capital B after a decimal prefix are decimal. Counts use decimal
//! multipliers (`1k` ops = 1000), because counts are not memory.

use super::SpecError;
use std::time::Duration;

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

/// Parses a size in bytes: `4096`, `4k`, `4KiB`, `1m`, `1.5GiB`, `10MB` (decimal).
pub fn parse_size(option: &str, text: &str) -> Result<u64, SpecError> {
    let (digits, suffix) = split_number(text.trim());
    let value = number(option, text, digits)?;
    let multiplier: f64 = match suffix {
        "" | "b" | "B" => 1.0,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1024.0,
        "m" | "M" | "MiB" | "Mi" => 1024.0 * 1024.0,
        "g" | "G" | "GiB" | "Gi" => 1024.0 * 1024.0 * 1024.0,
        "t" | "T" | "TiB" | "Ti" => 1024.0_f64.powi(4),
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "unknown size unit; use k, m, g (1024-based) or kB, MB, GB",
            ));
        }
    };
    let bytes = value * multiplier;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(SpecError::new(
            option,
            text,
            "a size must be a whole number of bytes",
        ));
    }
    Ok(bytes as u64)
}

/// Parses a count: `8`, `1k` (1000), `2.5M`.
pub fn parse_count(option: &str, text: &str) -> Result<u64, SpecError> {
    let (digits, suffix) = split_number(text.trim());
    let value = number(option, text, digits)?;
    let multiplier = match suffix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "m" | "M" => 1e6,
        "g" | "G" => 1e9,
        _ => {
            return Err(SpecError::new(
                option,
                text,
                "expected a whole number, optionally with k or M (x1000, x1000000)",
            ));
        }
    };
    let count = value * multiplier;
    if count.fract() != 0.0 || count > u64::MAX as f64 {
        return Err(SpecError::new(option, text, "expected a whole number"));
    }
    Ok(count as u64)
}

/// Parses a duration: `30s`, `500ms`, `2m`, `1h`, `250us`; a bare number is seconds.
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
    // try_: a value such as 1e30s is a bad input, not a panic.
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        SpecError::new(
            option,
            text,
            "too long; give a duration under a few centuries",
        )
    })
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
                _ => {
                    return Err(SpecError::new(
                        option,
                        text,
                        "expected a rate such as 100/s or 2k/s",
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
    fn sizes_are_binary_unless_decimal_is_asked_for() {
        assert_eq!(parse_size("s", "4k").unwrap(), 4096);
        assert_eq!(parse_size("s", "4KiB").unwrap(), 4096);
        assert_eq!(parse_size("s", "1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("s", "1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("s", "10MB").unwrap(), 10_000_000);
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
    fn formatting() {
        assert_eq!(format_bytes(32 << 20), "32 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
    }
}
