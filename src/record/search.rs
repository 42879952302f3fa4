//! The summary of a `--search-users` run: every candidate tried, at which share of its load,
//! whether it passed, and the largest value that qualified (SPECmail's users supported).

use serde::{Deserialize, Serialize};

/// What the search found; saved after every step, like the steps themselves.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Search {
    /// How the search went, in words.
    pub method: String,
    /// The option searched (`users`).
    pub axis: String,
    /// The candidates, in order: the option's values as the sweep gave them.
    pub candidates: Vec<f64>,
    /// The shares of a candidate's load it must pass at, in percent, in the order run.
    pub loads_pct: Vec<f64>,
    /// Every step the search ran, in order.
    pub probes: Vec<Probe>,
    /// The largest candidate that passed at every share of its load; absent while the
    /// search runs, or when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<f64>,
    /// The step of `supported` at 100% of its load: its figures are the result's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported_step: Option<usize>,
    /// The outcome in one line: qualified, none passed, or the range's top passed (so the
    /// server may support more than the range allows).
    pub verdict: String,
}

/// One step of a search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct Probe {
    pub step: usize,
    /// The candidate's value (`users`).
    pub value: f64,
    /// The share of its load offered, in percent.
    pub load_pct: f64,
    pub passed: bool,
    /// The checks that failed, by name and summary; empty when it passed.
    pub failed: Vec<String>,
}
