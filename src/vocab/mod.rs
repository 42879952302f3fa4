//! The vocabulary of options, which every layer shares: how a value the user typed is read
//! (units, sweeps, SLOs, load levels, searches) and how a number is written for people.
//!
//! The kinds fill a `crate::workload::RunSpec` with it; nothing here touches a device, a
//! network or a thread. `units` reads values with units, `sweep` reads lists and ranges,
//! `numbers` writes numbers for people, `levels` the graduated load levels of SPECpower's method, `search` the search for the
//! largest value of an option that passes its checks (SPECmail's users supported), `share`
//! how a step's workers, `--ops` and rate are split over MPI ranks.
//! Each workload's own options live beside the workload, in `crate::workload`.

pub mod levels;
pub mod notes;
pub mod numbers;
pub mod search;
pub mod share;
pub mod slo;
pub mod sweep;
pub mod units;

pub use levels::LevelsSpec;
pub use search::SearchSpec;
pub use slo::{Slo, SloFigure};
pub use sweep::{Axis, StepPoint, Sweep};

/// A value the user gave that cannot be used. Displays as one line naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{option} {value:?}: {hint}")]
pub struct SpecError {
    pub option: String,
    pub value: String,
    pub hint: String,
}

impl SpecError {
    pub fn new(option: &str, value: &str, hint: &str) -> Self {
        SpecError {
            option: option.to_string(),
            value: value.to_string(),
            hint: hint.to_string(),
        }
    }
}

/// An option that is on or off (`--resources on|off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Switch {
    On,
    Off,
}
