//! kv's line in the balance sheet `perflab run` ends with.

use crate::present::param_u64;
use crate::record::RunRecord;
use crate::vocab::numbers::{count, ns};

/// A cache: requests per second at each connection count, the tail, and what each request
/// cost the server.
pub fn line(r: &RunRecord) -> String {
    let per: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let n = param_u64(s, "clients").unwrap_or(1);
            // redis-benchmark's tests are steps: each names its own.
            let test = s
                .params
                .get("test")
                .and_then(|v| v.as_str())
                .map(|t| format!("{t} "))
                .unwrap_or_default();
            format!(
                "{test}{} req/s p99 {} ({n} conn{})",
                count(s.summary.headline.mean),
                ns(s.summary.latency_p99_ns.mean),
                if n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let server_cpu = r
        .steps
        .last()
        .and_then(|s| s.trials.first())
        .and_then(|t| t.figures.get("server_cpu_per_op_ns"))
        .map(|&v| format!("; server CPU {} per request", ns(v)))
        .unwrap_or_default();
    let server = r
        .spec
        .get("server")
        .and_then(|v| v.as_str())
        .unwrap_or("cache");
    let commands: Vec<&str> = r
        .spec
        .get("commands")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|c| c.as_str()).collect())
        .unwrap_or_default();
    let mix = match (r.spec.get("test"), commands.is_empty()) {
        (Some(_), _) => "redis-benchmark's tests".to_string(),
        (None, false) => commands.join("; "),
        (None, true) => format!(
            "set:get {}",
            r.spec.get("ratio").and_then(|v| v.as_str()).unwrap_or("?")
        ),
    };
    format!("cache ({server}, {mix}): {}{server_cpu}", per.join(", "))
}
