//! What a step of TPC-C-style work adds to the record: NOPM and transactions per minute,
//! the rolled-back new orders, the server's CPU per new order (each type's share of the mix
//! is in its `by: kind` group),
//! and the checks that are not about the data: the 90th percentiles against the
//! specification's limits, and in spec mode the NOPM ceiling that keying and think times
//! allow.

use super::input::Kind;
use super::{MAX_NOPM_PER_WAREHOUSE, Mode, TERMINALS_PER_WAREHOUSE, TpccOptions};
use crate::record::{Check, StepResult, Trial, Warning, step_number};
use crate::vocab::StepPoint;
use std::collections::BTreeMap;

/// Check names of this file, and the warning code of each.
const RESPONSE_TIMES: &str = "tpcc_response_times";
const CEILING: &str = "tpcc_spec_ceiling";

/// Ops of one transaction type in a trial.
fn ops_of(trial: &Trial, kind: Kind) -> u64 {
    trial
        .groups
        .iter()
        .find(|g| g.by == "kind" && g.key == kind.name())
        .map_or(0, |g| g.ops)
}

/// Warehouses in play at a step: the axis in throughput mode, the terminals / 10 in spec.
fn warehouses(t: &TpccOptions, point: &StepPoint, trial: &Trial) -> u64 {
    match t.mode {
        Mode::Throughput => t.warehouses.at(point),
        Mode::Spec => (trial.workers / TERMINALS_PER_WAREHOUSE).max(1),
    }
}

pub fn derive(t: &TpccOptions, point: &StepPoint, trial: &mut Trial) {
    let minutes = trial.elapsed_ns as f64 / 60e9;
    if minutes <= 0.0 {
        return;
    }
    let w = warehouses(t, point, trial);
    // The terminals count their rolled-back new orders over warmup and measure alike, so
    // their share (not their number) applies to the measured new orders.
    let rolled = trial
        .figures
        .remove("new_order_rollbacks_per_client")
        .unwrap_or(0.0);
    let run = trial.figures.remove("new_orders_per_client").unwrap_or(0.0);
    let rollback_share = if run > 0.0 { rolled / run } else { 0.0 };
    let new_orders = ops_of(trial, Kind::NewOrder) as f64;
    // NOPM counts the new orders that committed, as HammerDB's NOPM from the schema does;
    // the specification's 1% rolled back are in the mix and in new_order_rollback_pct.
    let committed = new_orders * (1.0 - rollback_share);
    let nopm = committed / minutes;
    let ops = trial.ops;
    let mut add = |name: &str, v: f64| {
        trial.figures.insert(name.to_string(), v);
    };
    add("nopm", nopm);
    add("tpm", ops as f64 / minutes);
    add("warehouses", w as f64);
    add("nopm_per_warehouse", nopm / w as f64);
    if run > 0.0 {
        add("new_order_rollback_pct", 100.0 * rollback_share);
    }
    if let Some(cpu) = trial.figures.get("server_cpu_per_sec").copied()
        && committed > 0.0
    {
        trial.figures.insert(
            "server_cpu_us_per_new_order".into(),
            cpu * 1e6 / (committed / (minutes * 60.0)),
        );
    }
}

/// The worst 90th percentile of each type over the step's trials, in seconds.
fn p90s(step: &StepResult) -> BTreeMap<Kind, f64> {
    let mut out = BTreeMap::new();
    for trial in &step.trials {
        for k in Kind::ALL {
            if let Some(g) = trial
                .groups
                .iter()
                .find(|g| g.by == "kind" && g.key == k.name() && g.ops > 0)
            {
                let p90 = g.latency.p90_ns as f64 / 1e9;
                let e = out.entry(k).or_insert(0.0f64);
                *e = e.max(p90);
            }
        }
    }
    out
}

pub fn step_checks(t: &TpccOptions, step: &StepResult) -> Vec<Check> {
    let mut checks = Vec::new();
    let p90 = p90s(step);
    if !p90.is_empty() {
        let over: Vec<String> = p90
            .iter()
            .filter(|(k, v)| **v > k.limit_secs())
            .map(|(k, v)| format!("{} {v:.2} s > {} s", k.name(), k.limit_secs()))
            .collect();
        checks.push(Check {
            name: RESPONSE_TIMES.into(),
            shard: None,
            passed: over.is_empty(),
            figures: p90
                .iter()
                .map(|(k, v)| (format!("p90_ms_{}", k.name()), (v * 1e3).round() as i64))
                .collect(),
            summary: if over.is_empty() {
                "every type's 90th percentile is within its limit (5 s; stock-level 20 s)".into()
            } else {
                format!(
                    "90th percentiles over the specification's limits: {}",
                    over.join(", ")
                )
            },
        });
    }
    if t.mode == Mode::Spec {
        let nopm = step
            .trials
            .iter()
            .filter_map(|tr| tr.figures.get("nopm").copied())
            .fold(0.0, f64::max);
        let w = step
            .trials
            .first()
            .map_or(1, |tr| (tr.workers / TERMINALS_PER_WAREHOUSE).max(1));
        let ceiling = MAX_NOPM_PER_WAREHOUSE * w as f64 / t.wait_factor.max(1e-9);
        // Keying and think times draw at random: allow 5% over the mean ceiling.
        let passed = nopm <= ceiling * 1.05;
        checks.push(Check {
            name: CEILING.into(),
            shard: None,
            passed,
            figures: BTreeMap::from([
                ("nopm".to_string(), nopm.round() as i64),
                ("ceiling".to_string(), ceiling.round() as i64),
            ]),
            summary: if passed {
                format!("{nopm:.1} NOPM is within the {ceiling:.1} that {w} warehouses' terminals can reach")
            } else {
                format!(
                    "{nopm:.1} NOPM is above the {ceiling:.1} that {w} warehouses' terminals can reach with the waits: the terminals did not wait as specified"
                )
            },
        });
    }
    checks
}

/// The warning for a failed check of this file after the step of index `step`; None for the
/// others (consistency).
pub fn warning(c: &Check, step: usize) -> Option<Warning> {
    let code = match c.name.as_str() {
        RESPONSE_TIMES => "response_time_limit",
        CEILING => "invalid_spec_run",
        _ => return None,
    };
    Some(Warning {
        code: code.into(),
        message: format!("step {}: {}", step_number(step), c.summary),
        step: Some(step),
    })
}
