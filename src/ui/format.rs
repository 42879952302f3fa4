//! Numbers with units for people. Machine output keeps raw numbers with unit-suffixed names.

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

/// A figure by its unit-suffixed name: `bytes_per_sec` → GB/s, `*_ns` → time, `*per_sec*` → rate.
pub fn metric(name: &str, v: f64) -> String {
    if name.starts_with("bytes_per_sec") {
        bytes_per_sec(v)
    } else if name.starts_with("ns_per_") || name.ends_with("_ns") {
        ns(v)
    } else if name.contains("per_sec") {
        rate(v)
    } else if name.ends_with("_bytes") {
        crate::spec::units::format_bytes(v as u64)
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
            crate::spec::units::format_bytes(n.as_u64().unwrap_or(0))
        }
        serde_json::Value::Number(n) if name.ends_with("_ns") => ns(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}

/// `kernel=triad threads=4`: a step's swept options and their values, in units; empty when
/// nothing was swept.
pub fn step_params(s: &crate::record::StepResult) -> String {
    s.swept
        .iter()
        .map(|k| {
            let v = s.params.get(k).map(|v| param(k, v)).unwrap_or_default();
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A short column header for a figure.
pub fn header(name: &str, op_name: &str) -> String {
    match name {
        "bytes_per_sec" => "bandwidth".into(),
        "ops_per_sec" => format!("{op_name}/s"),
        // TPC-C-style order processing.
        "nopm" => "NOPM".into(),
        "tpm" => "tx/min".into(),
        "nopm_per_warehouse" => "NOPM/warehouse".into(),
        "new_order_rollback_pct" => "rolled back".into(),
        "server_cpu_us_per_new_order" => "server CPU/new order".into(),
        "ns_per_load" => "ns/load".into(),
        "bytes_per_sec_per_thread" => "per thread".into(),
        "ops_per_sec_per_thread" => format!("{op_name}/s/thread"),
        "alloc_ns" => "alloc time".into(),
        // Caches: the server's figures beside perflab's own.
        "hit_pct" => "hits".into(),
        "server_ops_per_sec" => "server req/s".into(),
        "server_cpu_per_op_ns" => "server CPU/req".into(),
        "server_evictions_per_sec" => "evictions/s".into(),
        "client_cpu_per_op_ns" => "perflab CPU/req".into(),
        "client_busy_pct" => "perflab busy".into(),
        // Mail: users' sessions, delivery, the quality of service, the server's cost.
        "sessions_per_hour" => "sessions/hour".into(),
        "imap_sessions_per_hour" => "IMAP sessions/hour".into(),
        "messages_per_min" => "msgs/min".into(),
        "deliveries_per_min" => "deliveries/min".into(),
        "delivery_p95_ns" => "delivery p95".into(),
        "delivery_on_time_pct" => "delivered in limit".into(),
        "commands_over_limit_pct" => "worst cmd over limit".into(),
        "session_errors_pct" => "session errors".into(),
        "server_cpu_per_user_hour_ns" => "server CPU/user-hour".into(),
        "device_flushes_per_delivery" => "flushes/delivery".into(),
        "client_cpu_per_session_ns" => "perflab CPU/session".into(),
        "tls_resumed_pct" => "TLS resumed".into(),
        // Scans: rows, CPU per row, and the share of the native ceiling.
        "rows_per_sec" => "rows/s".into(),
        "cpu_pct" => "CPU".into(),
        "cpu_per_row_ns" => "CPU/row".into(),
        "server_cpu_pct" => "server CPU".into(),
        "server_cpu_per_row_ns" => "server CPU/row".into(),
        "native_rows_per_sec" => "native rows/s".into(),
        "native_pct" => "of native".into(),
        "storage_read_pct" => "from storage".into(),
        other => other.trim_end_matches("_ns").replace('_', " "),
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
