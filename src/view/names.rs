//! How people name a step and a figure: a step by its swept options' values, a figure by a
//! short column header. The steps table, the charts' legends and titles, the findings and the
//! comparisons all say them the same way. (Numbers with units are `crate::vocab::numbers`.)

use crate::record::StepResult;
use crate::vocab::numbers::param;

/// `kernel=triad threads=4`: a step's swept options and their values, in units; empty when
/// nothing was swept.
pub fn step_params(s: &StepResult) -> String {
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
    use serde_json::json;

    /// A step reads as its swept options in units; a figure by its short header, the
    /// operation's name where it counts operations.
    #[test]
    fn steps_and_figures_by_name() {
        let s = StepResult {
            swept: vec!["kernel".into(), "bs_bytes".into()],
            params: [
                ("kernel".to_string(), json!("triad")),
                ("bs_bytes".to_string(), json!(65536)),
                ("threads".to_string(), json!(4)),
            ]
            .into(),
            ..Default::default()
        };
        assert_eq!(step_params(&s), "kernel=triad bs_bytes=64 KiB");
        assert_eq!(step_params(&StepResult::default()), "");
        assert_eq!(header("ops_per_sec", "transactions"), "transactions/s");
        assert_eq!(header("bytes_per_sec", "I/Os"), "bandwidth");
        assert_eq!(header("queue_wait_ns", "op"), "queue wait");
    }
}
