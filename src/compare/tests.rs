use super::*;
use crate::record::{Estimate, Headline, LatencySummary, StepSummary};
use serde_json::json;

/// A run of `threads` steps with `repeats` trials each; trial throughput is `base * threads`
/// times a small deterministic wobble, latency its inverse.
fn run(id: &str, threads: &[u64], repeats: usize, base: f64) -> RunRecord {
    let steps = threads
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let trials: Vec<Trial> = (0..repeats)
                .map(|k| {
                    let wobble = 1.0 + 0.01 * ((k * 7 + i * 3) % 5) as f64 / 4.0 - 0.005;
                    let tput = base * n as f64 * wobble;
                    Trial {
                        repeat: k as u32,
                        ops_per_sec: tput,
                        latency: LatencySummary {
                            count: 1000,
                            mean_ns: 1e9 * n as f64 / tput,
                            p99_ns: (2e9 * n as f64 / tput) as u64,
                            ..Default::default()
                        },
                        ..Default::default()
                    }
                })
                .collect();
            StepResult {
                index: i,
                checks: Vec::new(),
                plan: None,
                params: [("threads".to_string(), json!(n))].into(),
                swept: vec!["threads".into()],
                summary: StepSummary {
                    headline: Estimate {
                        mean: base * n as f64,
                        n: repeats as u32,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                trials,
            }
        })
        .collect();
    RunRecord {
        id: id.into(),
        workload: "null".into(),
        status: crate::record::Status::Complete,
        headline: Headline {
            metric: "ops_per_sec".into(),
            op_name: "ops".into(),
            higher_is_better: true,
        },
        steps,
        ..Default::default()
    }
}

fn options() -> Options {
    Options {
        noise: 0.02,
        expect: None,
    }
}

#[test]
fn a_run_against_itself_has_no_difference() {
    let a = run("a", &[1, 2, 4], 5, 1000.0);
    let r = compare(&[a.clone(), a], &options());
    let p = &r.pairs[0];
    assert_eq!(p.rows.len(), 9, "3 steps x (throughput, mean, p99)");
    assert_eq!((p.tally.faster, p.tally.slower), (0, 0));
    assert!(!r.has_regression());
    assert!(p.differences.is_empty());
    assert!((p.headline_speedup.unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn a_twenty_percent_gain_is_found_on_every_figure() {
    let a = run("a", &[1, 2, 4], 5, 1000.0);
    let b = run("b", &[1, 2, 4], 5, 1200.0);
    let p = &compare(&[a, b], &options()).pairs[0];
    assert_eq!(p.tally.faster, 9, "{:#?}", p.rows);
    assert!((p.headline_speedup.unwrap() - 1.2).abs() < 1e-9);
    // Latency is lower, which is faster too; the ratio itself stays candidate / baseline.
    let lat = p
        .rows
        .iter()
        .find(|r| r.figure == "latency_mean_ns")
        .unwrap();
    assert!(lat.result.ratio < 1.0 && lat.result.verdict == Verdict::Faster);
    // And the other way round it is a regression.
    let a = run("a", &[1, 2, 4], 5, 1000.0);
    let b = run("b", &[1, 2, 4], 5, 1200.0);
    assert!(compare(&[b, a], &options()).has_regression());
}

#[test]
fn steps_match_by_the_swept_options_and_the_rest_is_listed() {
    let a = run("a", &[1, 2, 4], 5, 1000.0);
    let mut b = run("b", &[4, 8], 5, 1000.0);
    b.env.cpu.model = Some("other".into());
    let p = &compare(&[a, b], &options()).pairs[0];
    assert!(p.rows.iter().all(|r| r.step == "threads=4"));
    assert_eq!(
        p.unmatched,
        [
            "threads=1 (baseline only)",
            "threads=2 (baseline only)",
            "threads=8 (candidate only)"
        ]
    );
    assert!(p.differences.iter().any(|d| d.field == "env.cpu.model"));
}

#[test]
fn single_runs_fall_back_to_intervals_and_say_so() {
    let mut a = run("a", &[1], 1, 1000.0);
    let mut b = run("b", &[1], 1, 1000.0);
    for (r, level) in [(&mut a, 1000.0), (&mut b, 1500.0)] {
        r.steps[0].trials[0].series = (0..10)
            .map(|k| IntervalPoint {
                start_ns: k * 1_000_000_000,
                duration_ns: 1_000_000_000,
                ops: 1000,
                ops_per_sec: level * (1.0 + 0.002 * (k % 3) as f64),
                p99_ns: 1000,
                ..Default::default()
            })
            .collect();
    }
    let p = &compare(&[a, b], &options()).pairs[0];
    let t = p.rows.iter().find(|r| r.figure == "ops_per_sec").unwrap();
    assert_eq!(t.result.verdict, Verdict::Faster);
    assert!(t.result.test.contains("interval"), "{}", t.result.test);
    assert!(p.warnings.iter().any(|w| w.contains("per-interval")));
    // Mean latency has no per-interval figure: one sample a side decides nothing.
    let m = p
        .rows
        .iter()
        .find(|r| r.figure == "latency_mean_ns")
        .unwrap();
    assert_eq!(m.result.verdict, Verdict::Inconclusive);
}

#[test]
fn expectations_from_the_clock_or_a_factor() {
    let mut a = run("a", &[1, 2], 5, 1000.0);
    let mut b = run("b", &[1, 2], 5, 1540.0);
    a.env.cpu.max_mhz = Some(2000.0);
    b.env.cpu.max_mhz = Some(2280.0);
    let mut o = options();
    o.expect = Some(Expectation::Clock);
    let e = compare(&[a.clone(), b.clone()], &o).pairs[0]
        .expectation
        .clone()
        .unwrap();
    assert!((e.expected - 1.14).abs() < 1e-9 && (e.measured - 1.54).abs() < 1e-9);
    assert!((e.relative - 1.54 / 1.14).abs() < 1e-9);
    o.expect = Some(Expectation::Factor(2.0));
    let e = compare(&[a, b], &o).pairs[0].expectation.clone().unwrap();
    assert_eq!(e.basis, "2x");
}
