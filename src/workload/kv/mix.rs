//! A step's commands ([`Template`]s) and how each request chooses among them: perflab's
//! `--command` with `--command-ratio` weights (each request draws, as `--ratio` draws get or
//! set), or memtier's round-robin blocks (`--command-ratio 2,1`: two of the first, one of
//! the second, again and again, per worker). Each command draws its keys with its own key
//! pattern (`--command-key-pattern`, memtier's per-command one).
//!
//! A mix names its commands for the record: each is a group of the step (`by: "kind"`, the
//! runner's breakdown by kind), with its own requests/s, latency and errors.

use super::command::Template;
use super::keys::{KeyPattern, KeyPicker, KeySpace};
use crate::workload::rng::Rng;

/// How a request picks its command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// At random, with these weights.
    Weighted,
    /// In blocks of the weights' sizes, in order (memtier).
    Blocks,
}

/// The commands of a step.
#[derive(Debug, Clone)]
pub struct Mix {
    pub commands: Vec<Template>,
    /// Per command.
    pub weights: Vec<u64>,
    pub patterns: Vec<KeyPattern>,
    pub choice: Choice,
    /// redis-benchmark's `-r`, for `__rand_int__`.
    pub keyspacelen: Option<u64>,
}

/// One session's place in a mix: its key pickers, and where it is in the blocks.
pub struct MixState {
    pub pickers: Vec<KeyPicker>,
    /// Cumulative weights, for a weighted draw.
    bounds: Vec<u64>,
    total: u64,
    /// Blocks: the command now, and how many of it are left in its block.
    at: usize,
    left: u64,
}

impl Mix {
    /// A mix of one command (a redis-benchmark test).
    pub fn one(command: Template, keyspacelen: Option<u64>, pattern: KeyPattern) -> Mix {
        Mix {
            commands: vec![command],
            weights: vec![1],
            patterns: vec![pattern],
            choice: Choice::Weighted,
            keyspacelen,
        }
    }

    /// A session's state for worker `worker` of `workers` (sequential patterns split the
    /// keys between workers).
    pub fn state(
        &self,
        keys: &KeySpace,
        worker: usize,
        workers: usize,
    ) -> Result<MixState, String> {
        let pickers = self
            .patterns
            .iter()
            .map(|p| KeyPicker::new(p, keys, worker, workers))
            .collect::<Result<Vec<_>, _>>()?;
        let bounds: Vec<u64> = self
            .weights
            .iter()
            .scan(0u64, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect();
        let total = bounds.last().copied().unwrap_or(0).max(1);
        Ok(MixState {
            pickers,
            bounds,
            total,
            at: 0,
            left: self.weights.first().copied().unwrap_or(1),
        })
    }

    /// The command of the next request.
    #[inline]
    pub fn next(&self, s: &mut MixState, rng: &mut Rng) -> usize {
        if self.commands.len() == 1 {
            return 0;
        }
        match self.choice {
            Choice::Weighted => {
                let r = rng.below(s.total);
                s.bounds.iter().position(|&b| r < b).unwrap_or(0)
            }
            Choice::Blocks => {
                while s.left == 0 {
                    s.at = (s.at + 1) % self.commands.len();
                    s.left = self.weights[s.at];
                }
                s.left -= 1;
                s.at
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kv::command::Family;

    fn mix(choice: Choice, weights: &[u64]) -> Mix {
        let commands = weights
            .iter()
            .enumerate()
            .map(|(i, _)| Template::parse(&format!("C{i} {{key}}"), Family::Redis, None, false))
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        Mix {
            patterns: vec![KeyPattern::Uniform; commands.len()],
            commands,
            weights: weights.to_vec(),
            choice,
            keyspacelen: None,
        }
    }

    #[test]
    fn blocks_go_round_in_order() {
        let m = mix(Choice::Blocks, &[2, 1, 0, 3]);
        let mut s = m.state(&KeySpace::default(), 0, 1).unwrap();
        let mut rng = Rng::new(1);
        let seq: Vec<usize> = (0..12).map(|_| m.next(&mut s, &mut rng)).collect();
        assert_eq!(seq, [0, 0, 1, 3, 3, 3, 0, 0, 1, 3, 3, 3]);
    }

    #[test]
    fn weights_share_the_requests() {
        let m = mix(Choice::Weighted, &[3, 1]);
        let mut s = m.state(&KeySpace::default(), 0, 1).unwrap();
        let mut rng = Rng::new(7);
        let first = (0..40_000)
            .filter(|_| m.next(&mut s, &mut rng) == 0)
            .count();
        assert!((29_000..31_000).contains(&first), "{first}");
    }
}
