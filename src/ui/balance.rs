//! The balance sheet: one line per capability, the way the lab reports ended with rules of
//! thumb ("2.6 GB/s sequential read, 4.6K random 8 KB reads/s ...").

use super::format::{bytes_per_sec, ns, sig3};
use crate::env::Environment;
use crate::record::{RunRecord, StepResult};
use crate::spec::units::format_bytes;

pub fn render(suite: &str, env: &Environment, records: &[RunRecord]) -> String {
    let mut out = format!("\nbalance sheet ({suite}) of {}\n", machine(env));
    for line in lines(records) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("runs: ");
    out.push_str(
        &records
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    );
    out.push_str("  ('perflab show ID' for the curves)\n");
    out
}

/// One line per run, as the sheet and the suite's report print them: a scan of an engine
/// also says what share of the suite's native ceiling it reached.
pub fn lines(records: &[RunRecord]) -> Vec<String> {
    let ceiling = records
        .iter()
        .find(|r| r.workload == "scan" && r.target == "native");
    records
        .iter()
        .filter_map(|r| {
            let mut text = line(r)?;
            if let Some(c) = ceiling.filter(|_| r.workload == "scan" && r.target != "native") {
                text.push_str(&share_of_ceiling(r, c));
            }
            Some(text)
        })
        .collect()
}

fn machine(env: &Environment) -> String {
    let cpu = env
        .cpu
        .model
        .clone()
        .unwrap_or_else(|| "unknown CPU".into());
    let n = env.cpu.logical_cpus.unwrap_or(0);
    let mem = env.memory.total_bytes.map(format_bytes).unwrap_or_default();
    format!("{cpu}, {n} CPUs, {mem}")
}

fn param_u64(s: &StepResult, name: &str) -> Option<u64> {
    s.params.get(name).and_then(|v| v.as_u64())
}

fn param_str<'a>(s: &'a StepResult, name: &str) -> Option<&'a str> {
    s.params.get(name).and_then(|v| v.as_str())
}

fn threads(n: u64) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// One line for one run, by what it measured.
pub fn line(r: &RunRecord) -> Option<String> {
    if r.steps.is_empty() {
        return Some(format!(
            "{}: no finished step (run {} {})",
            r.workload,
            r.id,
            r.status.as_str()
        ));
    }
    let status = if r.status.as_str() == "complete" {
        String::new()
    } else {
        format!(" [{}]", r.status.as_str())
    };
    let text = match (r.workload.as_str(), r.headline.metric.as_str()) {
        ("memory", "bytes_per_sec") => {
            let mut kernels: Vec<&str> = r
                .steps
                .iter()
                .filter_map(|s| param_str(s, "kernel"))
                .collect();
            kernels.dedup();
            let parts: Vec<String> = kernels
                .iter()
                .map(|k| {
                    let per: Vec<String> = r
                        .steps
                        .iter()
                        .filter(|s| param_str(s, "kernel") == Some(k))
                        .map(|s| {
                            format!(
                                "{} ({})",
                                bytes_per_sec(s.summary.headline.mean),
                                threads(param_u64(s, "threads").unwrap_or(1))
                            )
                        })
                        .collect();
                    format!("{k} {}", per.join(", "))
                })
                .collect();
            format!("memory bandwidth: {}", parts.join("; "))
        }
        ("memory", "ns_per_load") => {
            let points: Vec<String> = r
                .steps
                .iter()
                .map(|s| {
                    format!(
                        "{} at {}",
                        ns(s.summary.headline.mean),
                        format_bytes(param_u64(s, "size_bytes").unwrap_or(0))
                    )
                })
                .collect();
            format!(
                "memory latency: {} (the last is DRAM when the set exceeds the caches)",
                points.join(", ")
            )
        }
        ("memory", _) => {
            let per: Vec<String> = r
                .steps
                .iter()
                .map(|s| {
                    format!(
                        "{} searches/s ({})",
                        super::format::count(s.summary.headline.mean),
                        threads(param_u64(s, "threads").unwrap_or(1))
                    )
                })
                .collect();
            let alloc = r.steps[0]
                .trials
                .first()
                .and_then(|t| t.figures.get("alloc_ns"))
                .copied();
            let size = param_u64(&r.steps[0], "size_bytes").unwrap_or(0);
            format!(
                "memory lotto: {}{}",
                per.join(", "),
                alloc
                    .map(|a| format!(
                        "; {} to allocate and fill {} per thread",
                        ns(a),
                        format_bytes(size)
                    ))
                    .unwrap_or_default()
            )
        }
        ("cpu", _) => {
            let first = &r.steps[0];
            let base =
                first.summary.headline.mean / param_u64(first, "threads").unwrap_or(1) as f64;
            let best = r
                .analysis
                .as_ref()
                .and_then(|a| a.peak_step)
                .and_then(|i| r.steps.iter().find(|s| s.index == i));
            let scaling = best
                .filter(|b| b.index != first.index)
                .map(|b| {
                    let speedup = b.summary.headline.mean / first.summary.headline.mean;
                    format!(
                        ", {:.2}x at {}",
                        speedup,
                        threads(param_u64(b, "threads").unwrap_or(1))
                    )
                })
                .unwrap_or_default();
            format!("cpu: {} fractals/s per thread{scaling}", sig3(base))
        }
        ("io", _) => io_line(r),
        ("oltp", _) => oltp_line(r),
        ("kv", _) => kv_line(r),
        ("scan", _) => scan_line(r),
        ("io_surface", _) => format!(
            "storage surface ({}): {} at best over all file and record sizes",
            r.target,
            bytes_per_sec(
                r.steps
                    .iter()
                    .map(|s| s.summary.headline.mean)
                    .fold(0.0, f64::max)
            )
        ),
        (w, m) => format!(
            "{w}: {} {m} at best",
            sig3(
                r.steps
                    .iter()
                    .map(|s| s.summary.headline.mean)
                    .fold(f64::NAN, f64::max)
            )
        ),
    };
    Some(format!("{text}{status}"))
}

/// Storage: each step as the reports put it, e.g. "randread 8 KiB QD32 4.6K IO/s 6.9 ms".
fn io_line(r: &RunRecord) -> String {
    let parts: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let rw = param_str(s, "rw").unwrap_or("?");
            let bs = param_u64(s, "bs_bytes")
                .map(format_bytes)
                .unwrap_or_default();
            let depth = param_u64(s, "iodepth").unwrap_or(1);
            // The outstanding I/Os: a queue (io_uring), or threads of one I/O each (sync).
            let load = match param_u64(s, "threads").unwrap_or(1) {
                1 => format!("QD{depth}"),
                t if depth == 1 => format!("{t} threads"),
                t => format!("{t}x QD{depth}"),
            };
            let rate = if rw.starts_with("rand") {
                format!("{} IO/s", super::format::count(s.summary.ops_per_sec.mean))
            } else {
                bytes_per_sec(s.summary.bytes_per_sec.mean)
            };
            format!(
                "{rw} {bs} {load} {rate} {}",
                ns(s.summary.latency_mean_ns.mean)
            )
        })
        .collect();
    format!("storage ({}): {}", r.target, parts.join("; "))
}

/// DebitCredit: transactions per second at each client count, and the log syncs each cost.
fn oltp_line(r: &RunRecord) -> String {
    let per: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let n = param_u64(s, "threads").unwrap_or(1);
            format!(
                "{} tps ({n} client{})",
                super::format::count(s.summary.headline.mean),
                if n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let flushes = r
        .steps
        .first()
        .and_then(|s| s.trials.first())
        .and_then(|t| t.figures.get("device_flushes_per_txn"))
        .map(|f| format!("; {f:.2} device flushes per transaction"))
        .unwrap_or_default();
    let variant = r
        .spec
        .get("select_only")
        .and_then(|v| v.as_bool())
        .filter(|&s| s)
        .map_or("debitcredit", |_| "debitcredit select-only");
    format!("oltp {variant} ({}): {}{flushes}", r.target, per.join(", "))
}

/// Scans, as Gray's table put them: rows/s and MB/s per predicate and row size, and the
/// engine's share of the native ceiling where its run carries it.
fn scan_line(r: &RunRecord) -> String {
    // In order of first appearance: the predicate is not the outer loop of the steps.
    let mut predicates: Vec<&str> = Vec::new();
    for p in r.steps.iter().filter_map(|s| param_str(s, "predicate")) {
        if !predicates.contains(&p) {
            predicates.push(p);
        }
    }
    let parts: Vec<String> = predicates
        .iter()
        .map(|p| {
            let per: Vec<String> = r
                .steps
                .iter()
                .filter(|s| param_str(s, "predicate") == Some(p))
                .map(|s| {
                    let t = s.trials.first();
                    let native = t
                        .and_then(|t| t.figures.get("native_pct"))
                        .map(|v| format!(", {v:.0}% of native"))
                        .unwrap_or_default();
                    format!(
                        "{} rows/s {} ({}{}{native})",
                        super::format::count(s.summary.headline.mean),
                        bytes_per_sec(s.summary.bytes_per_sec.mean),
                        param_str(s, "table").unwrap_or("?"),
                        param_str(s, "cache")
                            .filter(|c| *c == "cold")
                            .map(|_| ", cold")
                            .unwrap_or_default(),
                    )
                })
                .collect();
            format!("{p} {}", per.join(", "))
        })
        .collect();
    let n = r
        .steps
        .first()
        .and_then(|s| param_u64(s, "threads"))
        .unwrap_or(1);
    if r.target == "native" {
        format!(
            "scan ceiling (perflab from memory, {}): {}",
            threads(n),
            parts.join("; ")
        )
    } else {
        format!("scan ({}, {}): {}", r.target, threads(n), parts.join("; "))
    }
}

/// `; of the native ceiling: trivial ten 21%, ...`: each engine step against the ceiling's
/// step of the same table, predicate and threads (the suite runs the two apart).
fn share_of_ceiling(r: &RunRecord, ceiling: &RunRecord) -> String {
    let key = |s: &StepResult| {
        (
            param_str(s, "table").map(str::to_string),
            param_str(s, "predicate").map(str::to_string),
            param_u64(s, "threads"),
        )
    };
    let parts: Vec<String> = r
        .steps
        .iter()
        .filter_map(|s| {
            let c = ceiling.steps.iter().find(|c| key(c) == key(s))?;
            (c.summary.headline.mean > 0.0).then(|| {
                format!(
                    "{} {} {:.0}%",
                    param_str(s, "predicate").unwrap_or("?"),
                    param_str(s, "table").unwrap_or("?"),
                    s.summary.headline.mean / c.summary.headline.mean * 100.0
                )
            })
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; of the native ceiling: {}", parts.join(", "))
    }
}

/// A cache: requests per second at each connection count, the tail, and what each request
/// cost the server.
fn kv_line(r: &RunRecord) -> String {
    let per: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let n = param_u64(s, "clients").unwrap_or(1);
            format!(
                "{} req/s p99 {} ({n} conn{})",
                super::format::count(s.summary.headline.mean),
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
    let mix = r.spec.get("ratio").and_then(|v| v.as_str()).unwrap_or("?");
    format!(
        "cache ({server}, set:get {mix}): {}{server_cpu}",
        per.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scan_record(target: &str, rows_per_sec: &[f64]) -> RunRecord {
        let mut r = RunRecord {
            workload: "scan".into(),
            target: target.into(),
            ..Default::default()
        };
        let mut i = 0;
        for table in ["ten", "thousand"] {
            for predicate in ["trivial", "complex"] {
                let mut s = StepResult {
                    index: i,
                    params: [
                        ("table".to_string(), json!(table)),
                        ("predicate".to_string(), json!(predicate)),
                        ("cache".to_string(), json!("warm")),
                        ("threads".to_string(), json!(1)),
                    ]
                    .into(),
                    ..Default::default()
                };
                s.summary.headline.mean = rows_per_sec[i];
                r.steps.push(s);
                i += 1;
            }
        }
        r.status = crate::record::Status::Complete;
        r
    }

    #[test]
    fn scan_lines_name_each_predicate_once_and_the_share_of_the_ceiling() {
        let native = scan_record("native", &[1e9, 1e8, 4e7, 2e7]);
        let engine = scan_record("sqlite:///x.db", &[5e7, 5e6, 8e6, 2e6]);
        let line = line(&engine).unwrap();
        assert_eq!(line.matches("trivial").count(), 1, "{line}");
        assert_eq!(line.matches("complex").count(), 1, "{line}");
        assert!(
            line.starts_with("scan (sqlite:///x.db, 1 thread): trivial 50.0M rows/s"),
            "{line}"
        );
        assert_eq!(
            share_of_ceiling(&engine, &native),
            "; of the native ceiling: trivial ten 5%, complex ten 5%, trivial thousand 20%, complex thousand 10%"
        );
        let sheet = render("default", &Environment::default(), &[native, engine]);
        assert!(
            sheet.contains("scan ceiling (perflab from memory, 1 thread)"),
            "{sheet}"
        );
        assert!(
            sheet.contains("of the native ceiling: trivial ten 5%"),
            "{sheet}"
        );
    }
}
