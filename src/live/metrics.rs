//! The figures `--metrics-listen` serves, kept as the run goes and written as OpenMetrics
//! text (or Prometheus' text format 0.0.4, for a scraper that asks for it).
//!
//! Per step (labels `run`, `workload`, `target`, `step` and the step's swept parameters):
//! - counters `perflab_ops_total`, `perflab_errors_total`, `perflab_bytes_total`: the
//!   intervals closed so far; at each trial's end they become the trial's own totals, so
//!   once a run is over they equal its record's exactly (summed over repeats);
//! - `perflab_errors_by_kind_total{kind}`: the record's errors by kind, at each trial's end;
//! - gauges of the latest interval: `perflab_ops_per_second`, `perflab_bytes_per_second`,
//!   and the summary `perflab_response_time_seconds{quantile}` (its `_count` the ops, its
//!   `_sum` their response times).
//!
//! Per run: the sampler's latest interval: `perflab_cpu_percent{mode}`,
//! `perflab_disk_bytes_per_second{device,direction}`, `perflab_disk_ios_per_second`,
//! `perflab_disk_utilisation_ratio`, `perflab_network_bytes_per_second{interface,direction}`,
//! `perflab_memory_used_bytes`, `perflab_process_cpu_percent`; and `perflab_run_info`,
//! `perflab_step` (the step in progress) and `perflab_running` (1 until the run ends).

use super::Cursor;
use crate::env::resources::ResourcePoint;
use crate::record::histogram::LatencyHistogram;
use crate::record::{IntervalPoint, Trial};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One step's figures.
#[derive(Debug, Default, Clone)]
struct StepFigures {
    /// `run`, `workload`, `target`, `step` and the swept parameters, rendered.
    labels: String,
    /// Finished trials, from their records.
    done: Totals,
    /// The trial in progress, from its closed intervals.
    live: Totals,
    errors_by_kind: BTreeMap<String, u64>,
    /// The latest interval: ops/s, bytes/s, and its response-time quantiles in seconds.
    latest: Option<Latest>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    ops: u64,
    errors: u64,
    bytes: u64,
    latency_sum_s: f64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Latest {
    ops_per_sec: f64,
    bytes_per_sec: f64,
    /// (quantile, seconds)
    quantiles: [(f64, f64); 5],
}

/// One run's figures.
#[derive(Debug, Default, Clone)]
struct RunFigures {
    id: String,
    info: String,
    step: usize,
    running: bool,
    resources: Option<ResourcePoint>,
}

/// Everything the endpoint serves: every run of the command, every step of each.
#[derive(Debug, Default)]
pub struct Metrics {
    runs: Vec<RunFigures>,
    /// By (run, step).
    steps: BTreeMap<(String, usize), StepFigures>,
}

const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

impl Metrics {
    pub fn run_started(&mut self, id: &str, workload: &str, target: &str) {
        self.runs.push(RunFigures {
            id: id.to_string(),
            info: labels(&[("run", id), ("workload", workload), ("target", target)]),
            step: 0,
            running: true,
            resources: None,
        });
    }

    fn run_mut(&mut self, id: &str) -> Option<&mut RunFigures> {
        self.runs.iter_mut().rev().find(|r| r.id == id)
    }

    pub fn trial_started(&mut self, c: &Cursor) {
        let mut pairs: Vec<(&str, &str)> = vec![
            ("run", c.run.as_str()),
            ("workload", c.workload.as_str()),
            ("target", c.target.as_str()),
        ];
        let step = c.step.to_string();
        pairs.push(("step", &step));
        let names: Vec<(String, &str)> = c
            .swept
            .iter()
            .map(|(k, v)| (label_name(k), v.as_str()))
            .collect();
        pairs.extend(names.iter().map(|(k, v)| (k.as_str(), *v)));
        let entry = self.steps.entry((c.run.clone(), c.step)).or_default();
        entry.labels = labels(&pairs);
        entry.live = Totals::default();
        if let Some(r) = self.run_mut(&c.run) {
            r.step = c.step;
        }
    }

    pub fn interval(&mut self, c: &Cursor, p: &IntervalPoint, h: Option<&LatencyHistogram>) {
        let Some(s) = self.steps.get_mut(&(c.run.clone(), c.step)) else {
            return;
        };
        let secs = p.duration_ns as f64 / 1e9;
        s.live.ops += p.ops;
        s.live.errors += p.errors;
        s.live.bytes += (p.bytes_per_sec * secs).round() as u64;
        let mut latest = Latest {
            ops_per_sec: p.ops_per_sec,
            bytes_per_sec: p.bytes_per_sec,
            quantiles: QUANTILES.map(|q| (q, f64::NAN)),
        };
        match h.filter(|h| !h.is_empty()) {
            Some(h) => {
                s.live.latency_sum_s += h.mean() * h.len() as f64 / 1e9;
                latest.quantiles = QUANTILES.map(|q| (q, h.value_at_quantile(q) as f64 / 1e9));
            }
            // The merged series of an MPI trial: the point's own percentiles.
            None if p.ops > 0 => {
                latest.quantiles[0].1 = p.p50_ns as f64 / 1e9;
                latest.quantiles[2].1 = p.p99_ns as f64 / 1e9;
                latest.quantiles[4].1 = p.max_ns as f64 / 1e9;
            }
            None => {}
        }
        s.latest = Some(latest);
    }

    /// The trial's own totals replace what its intervals added up to (a late worker's ops
    /// reach the trial, not a closed interval).
    pub fn trial_finished(&mut self, c: &Cursor, t: &Trial) {
        let Some(s) = self.steps.get_mut(&(c.run.clone(), c.step)) else {
            return;
        };
        s.live = Totals::default();
        s.done.ops += t.ops;
        s.done.errors += t.errors;
        s.done.bytes += t.bytes;
        s.done.latency_sum_s += t.latency.mean_ns * t.latency.count as f64 / 1e9;
        for (kind, n) in t.errors_by_kind.iter() {
            *s.errors_by_kind.entry(kind.clone()).or_default() += *n;
        }
    }

    pub fn resources(&mut self, c: &Cursor, p: &ResourcePoint) {
        if let Some(r) = self.run_mut(&c.run) {
            r.resources = Some(p.clone());
        }
    }

    pub fn run_finished(&mut self, id: &str) {
        if let Some(r) = self.run_mut(id) {
            r.running = false;
        }
    }

    /// The exposition: OpenMetrics (`# EOF` at the end, counters typed without `_total`), or
    /// Prometheus' text format 0.0.4.
    pub fn render(&self, openmetrics: bool) -> String {
        let mut out = String::with_capacity(4096);
        let counter = |out: &mut String, name: &str, help: &str| {
            let typed = if openmetrics {
                name
            } else {
                &*format!("{name}_total")
            };
            let _ = writeln!(out, "# TYPE {typed} counter\n# HELP {typed} {help}");
        };
        let gauge = |out: &mut String, name: &str, help: &str| {
            let _ = writeln!(out, "# TYPE {name} gauge\n# HELP {name} {help}");
        };
        let steps: Vec<&StepFigures> = self.steps.values().collect();
        counter(
            &mut out,
            "perflab_ops",
            "Operations completed in measure phases.",
        );
        for s in &steps {
            let _ = writeln!(
                out,
                "perflab_ops_total{{{}}} {}",
                s.labels,
                s.done.ops + s.live.ops
            );
        }
        counter(
            &mut out,
            "perflab_errors",
            "Operations that failed, of every kind.",
        );
        for s in &steps {
            let n = s.done.errors + s.live.errors;
            let _ = writeln!(out, "perflab_errors_total{{{}}} {n}", s.labels);
        }
        counter(&mut out, "perflab_bytes", "Bytes moved by the operations.");
        for s in &steps {
            let n = s.done.bytes + s.live.bytes;
            let _ = writeln!(out, "perflab_bytes_total{{{}}} {n}", s.labels);
        }
        counter(
            &mut out,
            "perflab_errors_by_kind",
            "Failed operations by kind, at the end of each trial.",
        );
        for s in &steps {
            for (kind, n) in &s.errors_by_kind {
                let l = format!("{},kind=\"{}\"", s.labels, escape(kind));
                let _ = writeln!(out, "perflab_errors_by_kind_total{{{l}}} {n}");
            }
        }
        gauge(
            &mut out,
            "perflab_ops_per_second",
            "Throughput over the latest interval.",
        );
        for s in &steps {
            if let Some(l) = &s.latest {
                let _ = writeln!(
                    out,
                    "perflab_ops_per_second{{{}}} {}",
                    s.labels,
                    num(l.ops_per_sec)
                );
            }
        }
        gauge(
            &mut out,
            "perflab_bytes_per_second",
            "Bytes per second over the latest interval.",
        );
        for s in &steps {
            if let Some(l) = &s.latest {
                let v = num(l.bytes_per_sec);
                let _ = writeln!(out, "perflab_bytes_per_second{{{}}} {v}", s.labels);
            }
        }
        let name = "perflab_response_time_seconds";
        let _ = writeln!(
            out,
            "# TYPE {name} summary\n# HELP {name} Response time: quantiles of the latest interval; count and sum over the measure phases."
        );
        for s in &steps {
            if let Some(l) = &s.latest {
                for (q, v) in l.quantiles.iter().filter(|(_, v)| v.is_finite()) {
                    let _ = writeln!(out, "{name}{{{},quantile=\"{q}\"}} {}", s.labels, num(*v));
                }
            }
            let (count, sum) = (
                s.done.ops + s.live.ops,
                s.done.latency_sum_s + s.live.latency_sum_s,
            );
            let _ = writeln!(out, "{name}_count{{{}}} {count}", s.labels);
            let _ = writeln!(out, "{name}_sum{{{}}} {}", s.labels, num(sum));
        }
        self.render_runs(&mut out, &gauge);
        if openmetrics {
            out.push_str("# EOF\n");
        }
        out
    }

    fn render_runs(&self, out: &mut String, gauge: &dyn Fn(&mut String, &str, &str)) {
        gauge(
            out,
            "perflab_run_info",
            "A run of this command: its id, workload and target.",
        );
        for r in &self.runs {
            let _ = writeln!(out, "perflab_run_info{{{}}} 1", r.info);
        }
        gauge(
            out,
            "perflab_running",
            "1 while the run goes on, 0 once it has ended.",
        );
        for r in &self.runs {
            let _ = writeln!(out, "perflab_running{{{}}} {}", r.info, u8::from(r.running));
        }
        gauge(
            out,
            "perflab_step",
            "The step in progress (the record's index, from 0).",
        );
        for r in &self.runs {
            let _ = writeln!(out, "perflab_step{{{}}} {}", r.info, r.step);
        }
        let with_resources: Vec<(&RunFigures, &ResourcePoint)> = self
            .runs
            .iter()
            .filter_map(|r| r.resources.as_ref().map(|p| (r, p)))
            .collect();
        gauge(
            out,
            "perflab_cpu_percent",
            "Share of all CPUs over the latest interval, by mode.",
        );
        for (r, p) in &with_resources {
            let c = &p.cpu;
            for (mode, v) in [
                ("busy", c.busy()),
                ("user", c.user),
                ("system", c.system),
                ("iowait", c.iowait),
                ("steal", c.steal),
                ("irq", c.irq + c.softirq),
            ] {
                let _ = writeln!(
                    out,
                    "perflab_cpu_percent{{{},mode=\"{mode}\"}} {}",
                    r.info,
                    num(v)
                );
            }
        }
        gauge(
            out,
            "perflab_process_cpu_percent",
            "perflab's own CPU time, in percent of one CPU.",
        );
        for (r, p) in &with_resources {
            let v = num(p.process_cpu_pct);
            let _ = writeln!(out, "perflab_process_cpu_percent{{{}}} {v}", r.info);
        }
        gauge(
            out,
            "perflab_memory_used_bytes",
            "Memory in use (total less available).",
        );
        for (r, p) in &with_resources {
            let _ = writeln!(
                out,
                "perflab_memory_used_bytes{{{}}} {}",
                r.info, p.mem_used_bytes
            );
        }
        gauge(
            out,
            "perflab_disk_bytes_per_second",
            "A block device's bytes per second.",
        );
        for (r, p) in &with_resources {
            for d in &p.disks {
                let a = &d.activity;
                for (dir, v) in [
                    ("read", a.read_bytes_per_sec),
                    ("write", a.write_bytes_per_sec),
                ] {
                    let l = format!(
                        "{},device=\"{}\",direction=\"{dir}\"",
                        r.info,
                        escape(&d.name)
                    );
                    let _ = writeln!(out, "perflab_disk_bytes_per_second{{{l}}} {}", num(v));
                }
            }
        }
        gauge(
            out,
            "perflab_disk_ios_per_second",
            "A block device's requests per second.",
        );
        for (r, p) in &with_resources {
            for d in &p.disks {
                let a = &d.activity;
                for (dir, v) in [("read", a.reads_per_sec), ("write", a.writes_per_sec)] {
                    let l = format!(
                        "{},device=\"{}\",direction=\"{dir}\"",
                        r.info,
                        escape(&d.name)
                    );
                    let _ = writeln!(out, "perflab_disk_ios_per_second{{{l}}} {}", num(v));
                }
            }
        }
        gauge(
            out,
            "perflab_disk_utilisation_ratio",
            "Share of the interval a device had I/O in flight.",
        );
        for (r, p) in &with_resources {
            for d in &p.disks {
                let l = format!("{},device=\"{}\"", r.info, escape(&d.name));
                let v = num(d.activity.utilisation);
                let _ = writeln!(out, "perflab_disk_utilisation_ratio{{{l}}} {v}");
            }
        }
        gauge(
            out,
            "perflab_network_bytes_per_second",
            "An interface's bytes per second.",
        );
        for (r, p) in &with_resources {
            for n in &p.net {
                for (dir, v) in [("in", n.rx_bytes_per_sec), ("out", n.tx_bytes_per_sec)] {
                    let l = format!(
                        "{},interface=\"{}\",direction=\"{dir}\"",
                        r.info,
                        escape(&n.name)
                    );
                    let _ = writeln!(out, "perflab_network_bytes_per_second{{{l}}} {}", num(v));
                }
            }
        }
    }
}

/// A label set: `a="x",b="y"`.
fn labels(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A parameter's name as a label name: `[a-zA-Z_][a-zA-Z0-9_]*` (`set.fsync` is `set_fsync`),
/// and never one of the labels perflab sets itself.
fn label_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if ["run", "workload", "target", "step", "kind", "quantile"].contains(&out.as_str()) {
        out.insert_str(0, "param_");
    }
    out
}

/// A label value: backslash, double quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value: integers without a fraction, NaN and infinities as the format spells them.
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor() -> Cursor {
        Cursor {
            run: "r1".into(),
            workload: "null".into(),
            target: "none".into(),
            step: 0,
            repeat: 0,
            swept: vec![
                ("threads".into(), "2".into()),
                ("set.fsync".into(), "off".into()),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn counters_become_the_trials_totals() {
        let mut m = Metrics::default();
        let c = cursor();
        m.run_started("r1", "null", "none");
        m.trial_started(&c);
        let p = IntervalPoint {
            duration_ns: 1_000_000_000,
            ops: 10,
            ops_per_sec: 10.0,
            ..Default::default()
        };
        m.interval(&c, &p, None);
        let text = m.render(true);
        assert!(
            text.contains(
                "perflab_ops_total{run=\"r1\",workload=\"null\",target=\"none\",step=\"0\",threads=\"2\",set_fsync=\"off\"} 10"
            ),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n") && text.contains("# TYPE perflab_ops counter"));
        let t = Trial {
            ops: 12,
            errors: 1,
            ..Default::default()
        };
        m.trial_finished(&c, &t);
        let text = m.render(false);
        assert!(text.contains("set_fsync=\"off\"} 12\n"), "{text}");
        assert!(text.contains("# TYPE perflab_ops_total counter") && !text.contains("# EOF"));
    }

    #[test]
    fn names_and_values_are_escaped() {
        assert_eq!(label_name("set.fsync"), "set_fsync");
        assert_eq!(label_name("step"), "param_step");
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(f64::NAN), "NaN");
    }
}
