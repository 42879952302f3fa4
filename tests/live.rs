//! A run as it goes: the interval file beside the record, `--live`, `--hlog`, the plain
//! progress lines of a run without a terminal, and a real Prometheus scraping
//! `--metrics-listen` whose stored counters are the record's.

mod common;

use common::prometheus::{Prometheus, free_port};
use common::{Results, json, stderr};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use std::collections::BTreeMap;

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn intervals_go_beside_the_record_to_live_and_to_an_hdr_log() {
    let r = Results::new("live-files");
    let scratch = r.path().with_extension("out");
    std::fs::create_dir_all(&scratch).unwrap();
    let live = scratch.join("live.jsonl");
    let hlog = scratch.join("run.hlog");
    let o = common::run(
        &r,
        &[
            "null",
            "--json",
            "--threads",
            "1,2",
            "--warmup",
            "0s",
            "--duration",
            "2500ms",
            "--interval",
            "500ms",
            "--live",
            live.to_str().unwrap(),
            "--hlog",
            hlog.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let record = json(&o);
    let id = record["id"].as_str().unwrap();
    // The same lines in the run's folder and in --live.
    let beside = lines(&r.path().join("runs").join(id).join("intervals.jsonl"));
    let given = lines(&live);
    assert_eq!(beside, given);
    let events: Vec<&str> = given.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(events.first(), Some(&"run"));
    assert_eq!(events.last(), Some(&"end"));
    assert_eq!(given.last().unwrap()["status"], "complete");
    // Per step, the intervals add up to the record's trial, op for op.
    for (i, step) in record["steps"].as_array().unwrap().iter().enumerate() {
        let trial = &step["trials"][0];
        let intervals: Vec<&serde_json::Value> = given
            .iter()
            .filter(|e| e["event"] == "interval" && e["step"] == i)
            .collect();
        assert!(intervals.len() >= 5, "{} intervals", intervals.len());
        let ops: u64 = intervals.iter().map(|e| e["ops"].as_u64().unwrap()).sum();
        assert_eq!(ops, trial["ops"].as_u64().unwrap(), "step {i}");
        assert!(intervals.iter().all(|e| e["p99_ns"].as_u64().unwrap() > 0));
        let end = given
            .iter()
            .find(|e| e["event"] == "trial_end" && e["step"] == i)
            .unwrap();
        assert_eq!(end["ops"], trial["ops"]);
        let started = given
            .iter()
            .find(|e| e["event"] == "trial" && e["step"] == i)
            .unwrap();
        assert_eq!(started["params"]["threads"], ["1", "2"][i]);
        assert!(
            given
                .iter()
                .any(|e| e["event"] == "resources" && e["step"] == i)
        );
    }
    // HdrHistogram's reader takes the log: one line per interval, tagged by step, and the
    // histograms hold every op.
    let bytes = std::fs::read(&hlog).unwrap();
    let mut by_tag: BTreeMap<String, u64> = BTreeMap::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.expect("a log entry") {
            let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut base64_decode(i.encoded_histogram()).as_slice())
                .expect("a histogram");
            *by_tag
                .entry(i.tag().unwrap().as_str().to_string())
                .or_default() += h.len();
        }
    }
    for (i, step) in record["steps"].as_array().unwrap().iter().enumerate() {
        let ops = step["trials"][0]["ops"].as_u64().unwrap();
        assert_eq!(
            by_tag.get(&format!("step{}", i + 1)),
            Some(&ops),
            "{by_tag:?}"
        );
    }
    // Without a terminal, a progress line every interval.
    let progress = stderr(&o)
        .lines()
        .filter(|l| l.contains("progress:"))
        .count();
    assert!(progress >= 10, "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&scratch);
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64")
}

#[test]
fn progress_lines_follow_the_period_asked_for() {
    let r = Results::new("live-progress");
    let run = |every: &str| {
        let o = common::run(
            &r,
            &[
                "null",
                "--threads",
                "1",
                "--warmup",
                "0s",
                "--duration",
                "3s",
                "--progress",
                every,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
            .lines()
            .filter(|l| l.contains("progress:"))
            .count()
    };
    assert_eq!(run("off"), 0);
    let n = run("2s");
    assert!((1..=2).contains(&n), "{n} lines at 2 s over 3 s");
}

#[test]
fn live_outputs_refuse_what_they_cannot_do_in_one_line() {
    let r = Results::new("live-bad");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let exists = r.path().with_extension("exists");
    std::fs::write(&exists, "mine").unwrap();
    let busy = format!("127.0.0.1:{port}");
    let cases: [(&[&str], &str); 5] = [
        (&["--live", exists.to_str().unwrap()], "does not overwrite"),
        (&["--hlog", exists.to_str().unwrap()], "does not overwrite"),
        (&["--live", "-", "--json"], "give --live a file"),
        (&["--metrics-listen", &busy], "choose another port"),
        (&["--metrics-listen", "nowhere"], "HOST:PORT"),
    ];
    for (extra, hint) in cases {
        let mut args = vec!["null", "--duration", "200ms"];
        args.extend_from_slice(extra);
        let o = common::run(&r, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(hint), "{extra:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&exists).unwrap(), "mine");
    let _ = std::fs::remove_file(&exists);
}

/// Prometheus scrapes the run every second; once the run is over, what it stored is the
/// record's: ops and errors per step, exactly.
#[test]
fn prometheus_stores_the_records_counters() {
    let port = free_port();
    let Some(prom) = Prometheus::start(port) else {
        return;
    };
    let r = Results::new("live-prom");
    let listen = format!("127.0.0.1:{port}");
    let o = common::run(
        &r,
        &[
            "null",
            "--json",
            "--threads",
            "1,2",
            "--warmup",
            "0s",
            "--duration",
            "3s",
            "--metrics-listen",
            &listen,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("waiting up to"),
        "never scraped: {}",
        stderr(&o)
    );
    let record = json(&o);
    let id = record["id"].as_str().unwrap();
    let total: u64 = (0..2)
        .map(|i| record["steps"][i]["trials"][0]["ops"].as_u64().unwrap())
        .sum();
    // The last scrape is stored; a loaded machine may take a moment to make it queryable.
    let query = format!("perflab_ops_total{{run=\"{id}\"}}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut ops = prom.query(&query);
    while ops.iter().map(|(_, v)| *v).sum::<f64>() != total as f64
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(250));
        ops = prom.query(&query);
    }
    assert_eq!(ops.len(), 2, "{ops:?}\n{}", prom.log());
    for (labels, value) in &ops {
        let step: usize = labels["step"].as_str().unwrap().parse().unwrap();
        let trial = &record["steps"][step]["trials"][0];
        assert_eq!(*value, trial["ops"].as_u64().unwrap() as f64, "{labels}");
        assert_eq!(labels["threads"], ["1", "2"][step]);
        assert_eq!(labels["workload"], "null");
    }
    let errors = prom.query(&format!("perflab_errors_total{{run=\"{id}\"}}"));
    assert!(
        errors.len() == 2 && errors.iter().all(|(_, v)| *v == 0.0),
        "{errors:?}"
    );
    let running = prom.query(&format!("perflab_running{{run=\"{id}\"}}"));
    assert_eq!(running.first().map(|(_, v)| *v), Some(0.0), "{running:?}");
    let cpu = prom.query(&format!(
        "perflab_cpu_percent{{run=\"{id}\",mode=\"busy\"}}"
    ));
    assert!(cpu.first().is_some_and(|(_, v)| *v > 0.0), "{cpu:?}");
}
