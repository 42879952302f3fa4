//! The system sampler on real runs, SPECpower's load levels, power sources and their errors.

mod common;

use common::{Results, json, run, stderr, stdout};
use serde_json::Value;

fn f64_at(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} is not a number in {v}"))
}

/// Every run records the machine every interval on the series' clock, the phase's summary
/// agrees with the per-step figures, and the table and the limit line are shown.
#[test]
fn every_run_samples_the_machine_each_interval() {
    let results = Results::new("sampler");
    let out = run(
        &results,
        &[
            "null",
            "-t",
            "2",
            "-d",
            "1s",
            "--interval",
            "250ms",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record = json(&out);
    let trial = &record["steps"][0]["trials"][0];
    let points = trial["resources"]["series"].as_array().expect("series");
    assert!((3..=5).contains(&points.len()), "{} points", points.len());
    for (i, p) in points.iter().enumerate() {
        let start = f64_at(p, "/start_ns");
        // Within half an interval: which tick of the 250 ms clock it is, whenever a loaded
        // machine let the sampler read.
        assert!(
            (start - i as f64 * 250e6).abs() < 125e6,
            "point {i} starts at {start} ns, not on the 250 ms clock"
        );
        let shares: f64 = [
            "user", "system", "iowait", "irq", "softirq", "steal", "idle",
        ]
        .iter()
        .map(|k| f64_at(p, &format!("/cpu/{k}")))
        .sum();
        assert!(shares == 0.0 || (shares - 100.0).abs() < 1e-6, "{shares}");
        assert!(!p["per_cpu"].as_array().expect("per_cpu").is_empty());
        assert!(f64_at(p, "/mem_used_bytes") > 0.0);
    }
    let summary = &trial["resources"]["summary"];
    // Two spinning workers: perflab's own CPU shows, and the sampler's is tiny. Not a share
    // of the machine: other work on a loaded one (CI's builds) takes most of it.
    assert!(f64_at(summary, "/process_cpu_pct") > 1.0, "{summary}");
    assert!(f64_at(summary, "/sampler_cpu_pct") < 5.0, "{summary}");
    assert!(f64_at(summary, "/samples") >= 4.0);
    // The per-step CPU figure of old comes from the same readings.
    let busy = f64_at(trial, "/resources/cpu/busy_pct");
    let shares = f64_at(summary, "/cpu/user") + f64_at(summary, "/cpu/system");
    assert!(busy + 1e-6 >= shares, "busy {busy} < user+system {shares}");
    assert!(!summary["limit"].as_str().unwrap_or_default().is_empty());
    assert!(
        record["power"]["note"].is_string(),
        "the power source is disclosed"
    );

    let shown = run(&results, &["show", "last"]);
    let text = stdout(&shown);
    assert!(text.contains("resources over each measure phase"), "{text}");
    assert!(text.contains("step 1: "), "{text}");
}

/// `--resources off` keeps the per-step CPU figures and drops the rest (for measuring the
/// sampler's own cost).
#[test]
fn resources_off_keeps_only_the_step_figures() {
    let results = Results::new("sampler-off");
    let out = run(
        &results,
        &[
            "null",
            "-d",
            "300ms",
            "--warmup",
            "0s",
            "--resources",
            "off",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record = json(&out);
    let resources = &record["steps"][0]["trials"][0]["resources"];
    assert!(resources.get("series").is_none() && resources.get("summary").is_none());
    assert!(resources["cpu"]["busy_pct"].is_number());
    assert!(record.get("power").is_none());
}

/// Calibration, levels and active idle on the null target with a meter printing fixed watts:
/// the maximum is the mean of the last two calibrations, each level offers its share of it,
/// idle does nothing, and ops per watt is the levels' ops/s over their watts.
#[test]
fn load_levels_calibrate_then_hold_each_share() {
    let results = Results::new("levels");
    let out = run(
        &results,
        &[
            "null",
            "-t",
            "1",
            "--spin",
            "50us",
            "--load-levels",
            "80..40:-40,0",
            "--calibrate",
            "3",
            "-d",
            "800ms",
            "--warmup",
            "100ms",
            "--interval",
            "200ms",
            "--power-cmd",
            "echo 40.0",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record = json(&out);
    let steps = record["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 6, "3 calibrations, 2 levels, active idle");
    let levels = &record["load_levels"];
    let cal: Vec<f64> = (0..3)
        .map(|i| f64_at(&steps[i], "/summary/ops_per_sec/mean"))
        .collect();
    let max = f64_at(levels, "/calibrated_max_ops_per_sec");
    assert!(
        (max - (cal[1] + cal[2]) / 2.0).abs() < 1e-6 * max,
        "{max} from {cal:?}"
    );
    for (i, pct) in [(3, 80.0), (4, 40.0)] {
        let rate = f64_at(&steps[i], "/params/rate");
        assert!((rate - max * pct / 100.0).abs() < 1e-6 * rate, "step {i}");
        assert_eq!(
            steps[i]["trials"][0]["schedule"]["target_ops_per_sec"],
            steps[i]["params"]["rate"]
        );
    }
    assert_eq!(steps[5]["params"]["level"], "active idle");
    assert_eq!(steps[5]["trials"][0]["ops"], 0, "active idle runs no op");
    let rows = levels["levels"].as_array().expect("levels");
    assert_eq!(rows.len(), 6);
    let kinds: Vec<&str> = rows.iter().filter_map(|r| r["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "calibration",
            "calibration",
            "calibration",
            "level",
            "level",
            "idle"
        ]
    );
    for r in rows {
        let w = f64_at(r, "/watts");
        assert!((w - 40.0).abs() < 2.0, "a meter printing 40 W read {w} W");
    }
    let counted: Vec<&Value> = rows.iter().filter(|r| r["kind"] != "calibration").collect();
    let ops: f64 = counted.iter().map(|r| f64_at(r, "/ops_per_sec")).sum();
    let watts: f64 = counted.iter().map(|r| f64_at(r, "/watts")).sum();
    let overall = f64_at(levels, "/overall_ops_per_watt");
    assert!((overall - ops / watts).abs() < 1e-9 * overall, "{overall}");
    assert_eq!(record["power"]["method"]["kind"], "command");
    assert!(
        record["analysis"].is_null(),
        "levels are not a curve to analyse"
    );

    let shown = stdout(&run(&results, &["show", "last"]));
    assert!(shown.contains("load levels (calibrated maximum"), "{shown}");
    assert!(shown.contains("active idle"), "{shown}");
    assert!(shown.contains("ops per watt"), "{shown}");
}

/// Without a readable source there are no watts, and the record says why: never an estimate.
#[test]
fn no_power_source_means_no_watts() {
    let results = Results::new("levels-nopower");
    let out = run(
        &results,
        &[
            "null",
            "-t",
            "1",
            "--load-levels",
            "50,0",
            "--calibrate",
            "1",
            "-d",
            "300ms",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record = json(&out);
    if record["power"]["method"].is_object() {
        eprintln!("SKIPPED no_power_source_means_no_watts: this machine has a power source");
        return;
    }
    assert!(
        record["power"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("no watts")
    );
    for r in record["load_levels"]["levels"].as_array().expect("levels") {
        assert!(r.get("watts").is_none() && r.get("ops_per_watt").is_none());
    }
    assert!(record["load_levels"].get("overall_ops_per_watt").is_none());
}

/// Bad inputs: one line naming the fix, exit 2, nothing run.
#[test]
fn bad_level_and_power_options_are_one_line_each() {
    let results = Results::new("levels-bad");
    for (args, says) in [
        (vec!["--load-levels", "120"], "from 0 (active idle) to 100"),
        (vec!["--load-levels", "0"], "at least one level above 0"),
        (
            vec!["--load-levels", "100,50", "--calibrate", "0"],
            "calibrate between 1 and 10",
        ),
        (
            vec!["--load-levels", "100,50", "-t", "1,2"],
            "--load-levels is the run's sweep",
        ),
        (vec!["--power-cmd", "echo watts"], "not a number of watts"),
        (vec!["--power-cmd", "exit 3"], "--power-cmd 'exit 3' failed"),
        (
            vec!["--power-cmd", "echo 5", "--resources", "off"],
            "drop one of the two",
        ),
    ] {
        let mut all = vec!["null", "-d", "100ms", "--warmup", "0s"];
        all.extend(&args);
        let out = run(&results, &all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // clap's own refusal of a conflict is also exit 2.
    let out = run(&results, &["null", "--load-levels", "50", "--rate", "10/s"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `perflab sysinfo` lists what it found to read power from, or says there is nothing.
#[test]
fn sysinfo_lists_power_sources() {
    let results = Results::new("sysinfo-power");
    let out = run(&results, &["sysinfo"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("\npower\n"), "{text}");
    let out = run(&results, &["sysinfo", "--json"]);
    assert!(json(&out)["power_sources"].is_array());
}
