//! A trial's meeting points between ranks, and its end.
//!
//! Every rank goes through the same sequence in every trial: [`Gate::meet`] when its
//! sessions are open (then the warmup starts), [`Gate::meet`] again before the measure phase,
//! and [`Gate::finish`] with its figures. Each is one agreement (a non-blocking all-reduce of
//! "fine so far, or failed at rank r", polled with short sleeps); collectives match by order,
//! not by name, so a rank that fails early and goes straight to `finish` still meets the
//! others at their next point, and all of them learn of the failure there and stop. After an
//! agreement that everything is fine, a barrier releases every rank at once; each notes the
//! wall clock there, and rank 0 records how far apart the measure phases started.
//!
//! With one rank every call returns at once and nothing is exchanged.

use super::comm::Abandoned;
use super::merge::RankPart;
use crate::record::Trial;
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a trial ends on every rank.
#[derive(Debug, Clone, PartialEq)]
pub enum Halt {
    /// Ctrl-C on this rank (launchers pass it on to every rank).
    Interrupted,
    /// A rank failed; the message says which and why.
    Failed(String),
}

/// One trial's passage through the meeting points.
#[derive(Debug, Default)]
pub struct Gate {
    /// An agreement already ended the trial: no more collectives in it.
    ended: bool,
    /// Wall-clock ns at this rank's release into the measure phase.
    pub measure_wall_ns: u64,
}

/// Wall-clock ns since the epoch (the only clock ranks on different hosts share).
pub fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// A meeting point: agrees with every rank that the trial goes on (`outcome` is this
    /// rank's), then releases them together.
    pub fn meet(&mut self, outcome: Result<(), String>) -> Result<(), Halt> {
        self.agree(outcome)?;
        super::with(|c| c.release()).map_err(|Abandoned::Interrupted| {
            self.ended = true;
            Halt::Interrupted
        })?;
        self.measure_wall_ns = wall_ns();
        Ok(())
    }

    /// The trial's end: agrees on how it went, then sends this rank's figures to rank 0.
    /// Returns every rank's part on rank 0, `None` on the others; with one rank, its own.
    pub fn finish(
        &mut self,
        local: Result<Trial, Halt>,
        host: &str,
    ) -> Result<Option<Vec<RankPart>>, Halt> {
        if super::size() == 1 {
            return local
                .map(|trial| Some(vec![RankPart::new(0, host, trial, self.measure_wall_ns)]));
        }
        if self.ended {
            return Err(local.err().unwrap_or(Halt::Interrupted));
        }
        let trial = match local {
            // No collective after an interrupt: the other ranks are stopping too, or gone.
            Err(Halt::Interrupted) => return Err(Halt::Interrupted),
            Err(Halt::Failed(m)) => {
                return Err(self.agree(Err(m)).err().unwrap_or(Halt::Interrupted));
            }
            Ok(trial) => trial,
        };
        self.agree(Ok(()))?;
        let part = RankPart::new(super::rank(), host, trial, self.measure_wall_ns);
        let bytes = serde_json::to_vec(&part).unwrap_or_default();
        let gathered = super::with(|c| c.gather(&bytes)).map_err(|Abandoned::Interrupted| {
            self.ended = true;
            Halt::Interrupted
        })?;
        Ok(gathered.map(|all| {
            all.iter()
                .map(|b| serde_json::from_slice(b).unwrap_or_default())
                .collect()
        }))
    }

    /// Every rank's outcome: `Ok` when all are fine; otherwise the lowest failing rank's
    /// message, on every rank.
    fn agree(&mut self, outcome: Result<(), String>) -> Result<(), Halt> {
        let (rank, size) = (super::rank() as u64, super::size() as u64);
        if size == 1 {
            return outcome.map_err(Halt::Failed);
        }
        let mine = match &outcome {
            Ok(()) => [0, 0],
            Err(_) => [1, size - rank],
        };
        let all = super::with(|c| c.agree_max(mine)).map_err(|Abandoned::Interrupted| {
            self.ended = true;
            Halt::Interrupted
        })?;
        if all[0] == 0 {
            return Ok(());
        }
        self.ended = true;
        let failing = (size - all[1]) as usize;
        let message = match outcome {
            Err(m) if failing == rank as usize => m,
            _ => String::new(),
        };
        let message = super::with(|c| c.broadcast(failing, message.into_bytes()));
        Err(Halt::Failed(format!(
            "rank {failing}: {}",
            String::from_utf8_lossy(&message)
        )))
    }
}
