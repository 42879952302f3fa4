//! The load-level summary of a run with `--load-levels` (SPECpower's method): the calibrated
//! maximum, each level's target and achieved load, its power, and the overall operations per
//! watt.

use serde::{Deserialize, Serialize};

/// What the load-level method found; saved after every step, like the steps themselves.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct LoadLevels {
    /// How the maximum was found and the levels run, in words.
    pub method: String,
    /// The steps that calibrated, in order.
    pub calibration_steps: Vec<usize>,
    /// The maximum the levels are shares of (0 until calibration has finished).
    pub calibrated_max_ops_per_sec: f64,
    /// Every calibration and level step, in the order run.
    pub levels: Vec<LevelResult>,
    /// SPECpower's overall figure: the sum of the levels' ops/s over the sum of their mean
    /// watts, active idle included; absent without watts at every level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overall_ops_per_watt: Option<f64>,
}

/// One step of a load-level run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct LevelResult {
    pub step: usize,
    /// `calibration`, `level` or `idle` (active idle: sessions open, no ops).
    pub kind: String,
    /// Percent of the calibrated maximum asked for (100 for calibration).
    pub target_pct: f64,
    /// The open-loop rate the level offered (0 for calibration: unthrottled).
    pub target_ops_per_sec: f64,
    /// Throughput in percent of the calibrated maximum.
    pub achieved_pct: f64,
    pub ops_per_sec: f64,
    pub latency_mean_ns: f64,
    pub latency_p99_ns: f64,
    /// All CPUs, percent busy (steal included).
    pub cpu_busy_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops_per_watt: Option<f64>,
    /// Why the level does not count as run at its target (achieved load more than 2 points
    /// from the target); empty when it does.
    pub flag: String,
}
