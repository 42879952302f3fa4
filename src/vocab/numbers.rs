//! Numbers with units for people: rates, counts, times, sizes, three significant digits.
//! Machine output keeps raw numbers with unit-suffixed names. Every layer that writes text
//! for people (the runner's messages, comparisons, tables, reports) formats numbers here, so
//! this sits low, beside the units the command line reads.

/// `14.1 GB/s`: decimal units, as STREAM and fio report bandwidth.
pub fn bytes_per_sec(v: f64) -> String {
    scaled(v, &["B/s", "kB/s", "MB/s", "GB/s", "TB/s"], 1000.0)
}

/// `1.23M/s` style rates for ops.
pub fn rate(v: f64) -> String {
    let s = scaled(v, &["", "k", "M", "G"], 1000.0);
    format!("{}/s", s.replace(' ', ""))
}

/// `1.23M` for counts.
pub fn count(v: f64) -> String {
    scaled(v, &["", "k", "M", "G", "T"], 1000.0).replace(' ', "")
}

/// `92 ns`, `1.25 µs`, `3.40 ms`, `1.20 s`.
pub fn ns(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v < 1e3 {
        format!("{} ns", sig3(v))
    } else if v < 1e6 {
        format!("{} µs", sig3(v / 1e3))
    } else if v < 1e9 {
        format!("{} ms", sig3(v / 1e6))
    } else {
        format!("{} s", sig3(v / 1e9))
    }
}

/// Three significant digits without trailing noise: 1.23, 12.3, 123, 1234.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    // Thresholds sit where rounding would carry into the next digit (9.996 -> "10.0").
    if a == 0.0 {
        "0".into()
    } else if a < 9.995 {
        format!("{v:.2}")
    } else if a < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn scaled(v: f64, units: &[&str], base: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let mut value = v;
    let mut i = 0;
    while value.abs() >= base && i + 1 < units.len() {
        value /= base;
        i += 1;
    }
    let unit = units[i];
    if unit.is_empty() {
        sig3(value)
    } else {
        format!("{} {unit}", sig3(value))
    }
}

/// A figure by its unit-suffixed name: `bytes_per_sec` → GB/s, `*_ns` → time, `*per_sec*` → rate,
/// `*_per_hour` → a count per hour.
pub fn metric(name: &str, v: f64) -> String {
    if name.starts_with("bytes_per_sec") {
        bytes_per_sec(v)
    } else if name.starts_with("ns_per_") || name.ends_with("_ns") {
        ns(v)
    } else if name.contains("per_sec") {
        rate(v)
    } else if name.ends_with("_per_hour") {
        // Jobs and sessions per hour, as the batch and mail reports count them.
        format!("{}/h", count(v))
    } else if name.ends_with("_bytes") {
        super::units::format_bytes(v as u64)
    } else if name.ends_with("_pct") {
        format!("{v:.1}%")
    } else {
        sig3(v)
    }
}

/// The value of a step parameter as text (`triad`, `2`, `64 MiB` for sizes, `5.00 ms` for
/// times).
pub fn param(name: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if name.ends_with("_bytes") => {
            super::units::format_bytes(n.as_u64().unwrap_or(0))
        }
        serde_json::Value::Number(n) if name.ends_with("_ns") => ns(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_well() {
        assert_eq!(bytes_per_sec(14.1e9), "14.1 GB/s");
        assert_eq!(bytes_per_sec(950.0), "950 B/s");
        assert_eq!(rate(1_234_567.0), "1.23M/s");
        assert_eq!(rate(310.0), "310/s");
        assert_eq!(ns(92.4), "92.4 ns");
        assert_eq!(ns(1250.0), "1.25 µs");
        assert_eq!(ns(3.4e6), "3.40 ms");
        assert_eq!(ns(f64::NAN), "-");
        assert_eq!(metric("alloc_ns", 2.5e8), "250 ms");
        assert_eq!(count(1500.0), "1.50k");
    }
}
