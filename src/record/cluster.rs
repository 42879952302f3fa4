//! The record's account of a scale-out run's ranks. `cluster` fills it; the record only
//! holds it, so it is defined here and the record needs nothing of MPI.

use serde::{Deserialize, Serialize};

/// The record's account of the ranks: how many, where, on which MPI.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ClusterInfo {
    /// Ranks in the job.
    pub ranks: u64,
    /// The MPI library, as it names itself.
    pub library: String,
    /// How the load is split over the ranks (`total`: `--threads`/`--clients`, `--ops` and
    /// `--rate` are the run's and are divided; `rank`: each active rank runs them whole).
    pub scope: String,
    /// One entry per rank, in rank order.
    pub members: Vec<RankInfo>,
}

/// One rank: where it ran, and on a host other than rank 0's, that host's disclosure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct RankInfo {
    pub rank: u64,
    pub host: String,
    pub pid: u64,
    /// The machine, when it is not rank 0's host (rank 0's is the record's `env`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<crate::env::Environment>,
}
