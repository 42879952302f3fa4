//! A search for the largest value of a swept option at which every step passes its checks,
//! qualified at several shares of its load: SPECmail's way of finding the users a server
//! supports (`perflab mail --users 100..6400:+100 --search-users`).
//!
//! The option's values, as the sweep gives them, are the candidates (their range bounds the
//! search, their spacing is its resolution); the workload offers its own load at each
//! (`Workload::offered_rate`), and each share scales it. See `crate::run::search`.

use serde::Serialize;

/// SPECmail's qualification: the claimed load, then 120% and 80% of it.
pub const QUALIFY_PCT: [f64; 3] = [100.0, 120.0, 80.0];

/// What to search and how a candidate qualifies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchSpec {
    /// The swept option whose values are the candidates (`users`).
    pub axis: &'static str,
    /// The shares of a candidate's load it must pass at, in percent, in the order run; the
    /// first is the candidate's own load.
    pub loads_pct: Vec<f64>,
}

impl SearchSpec {
    /// SPECmail's search over `axis`: passes at 100%, 120% and 80% of its load.
    pub fn specmail(axis: &'static str) -> SearchSpec {
        SearchSpec {
            axis,
            loads_pct: QUALIFY_PCT.to_vec(),
        }
    }
}
