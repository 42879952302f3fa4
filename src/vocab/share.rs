//! This rank's share of a step: its workers, their place among all the run's workers, its
//! part of `--ops` and of the rate.
//!
//! By default the run's figures are the run's: `--threads 8` over 4 active ranks is 2 workers
//! on each, `--ops 1000` is 250 each, `--rate 10k/s` is 2.5k/s each (each rank's share of the
//! rate follows its share of the workers, so every worker paces alike). The ranks beyond
//! `--active-ranks` run nothing but still meet the others at every phase. `--rate-scope rank`
//! instead gives every active rank `--threads`, `--ops` and `--rate` whole.
//!
//! Workers are numbered over the whole run (rank 0's first), so a workload that divides its
//! keys, rows or files by worker divides them over the ranks too.

/// One rank's part of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// This rank's workers (0: it sits the step out).
    pub workers: usize,
    /// The run-wide index of its first worker.
    pub first: usize,
    /// Workers over all active ranks.
    pub total: usize,
}

impl Share {
    /// One rank alone: everything.
    pub fn whole(workers: usize) -> Share {
        Share {
            workers,
            first: 0,
            total: workers,
        }
    }

    /// `rank`'s part of `workers` when `active` ranks drive the step.
    pub fn of(workers: usize, active: usize, rank: usize, per_rank: bool) -> Share {
        let active = active.max(1);
        if rank >= active {
            return Share {
                workers: 0,
                first: 0,
                total: if per_rank { workers * active } else { workers },
            };
        }
        if per_rank {
            return Share {
                workers,
                first: rank * workers,
                total: workers * active,
            };
        }
        let (base, extra) = (workers / active, workers % active);
        let count = |r: usize| base + usize::from(r < extra);
        Share {
            workers: count(rank),
            first: (0..rank).map(count).sum(),
            total: workers,
        }
    }

    /// This rank's part of a quantity the run shares out by workers (ops, a rate).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.workers as f64 / self.total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_split_without_loss() {
        for workers in 1..20 {
            for active in 1..6 {
                let shares: Vec<Share> = (0..8)
                    .map(|r| Share::of(workers, active, r, false))
                    .collect();
                assert_eq!(shares.iter().map(|s| s.workers).sum::<usize>(), workers);
                // Contiguous, in rank order.
                let mut next = 0;
                for s in shares.iter().filter(|s| s.workers > 0) {
                    assert_eq!(s.first, next);
                    next += s.workers;
                }
                assert!(shares[active..].iter().all(|s| s.workers == 0));
            }
        }
    }

    #[test]
    fn per_rank_gives_each_the_whole() {
        let s = Share::of(4, 3, 2, true);
        assert_eq!((s.workers, s.first, s.total), (4, 8, 12));
        assert_eq!(Share::of(4, 3, 3, true).workers, 0);
        assert!((Share::of(3, 2, 0, false).fraction() - 2.0 / 3.0).abs() < 1e-12);
    }
}
