//! Numbers with units for people. Machine output keeps raw numbers with unit-suffixed names.

pub use crate::spec::numbers::{bytes_per_sec, count, metric, ns, param, rate, sig3};

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
        "statements_per_sec" => "statements/s".into(),
        "ios_in_flight" => "in flight".into(),
        "statements_per_txn" => "statements/tx".into(),
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
        "client_busy_pct" => "perflab busy/thread".into(),
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
        "perflab_cpu_pct" => "perflab CPU/jobs' CPU".into(),
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
