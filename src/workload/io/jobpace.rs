//! fio's `rate` and `rate_iops` in a job that both reads and writes: each direction keeps a
//! schedule of its own (fio's `rate_ddir` and `usec_for_io`), so a copy's reads and writes
//! are each held to their rate, and the mix follows the rates once both are ahead of them.
//!
//! The schedule of a direction (from the copy's start, fio's `epoch`):
//! - `rate=B` (bytes a second): the next I/O is due when the bytes issued so far would have
//!   taken that long at B (`bytes / B` seconds);
//! - `rate_iops=N`: the same with B = N times the direction's smallest block size, or, with
//!   several sizes (`bssplit`), one I/O every 1/N s;
//! - `rate_process=poisson`: gaps drawn from an exponential of mean 1/N, N the I/Os a
//!   second the rate makes at the smallest block size.
//!
//! A direction without a rate is always due. Before each I/O the pattern proposes a
//! direction: it goes if due; else the other direction goes if it is due and the job does
//! it at all (`rwmixread` gives it a share); else the copy waits for whichever is due first.
//! A copy that falls behind catches up at once, as fio's does. The schedule starts again
//! when the measure phase begins (fio resets it when `ramp_time` is over).

use super::fio::job::RateProcess;
use crate::workload::rng::Rng;
use std::time::{Duration, Instant};

/// One direction's rate, as the job file gives it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum DirRate {
    /// `rate`: bytes a second.
    Bytes(u64),
    /// `rate_iops`: I/Os a second, with the direction's smallest block size and whether it
    /// has several (`bssplit`).
    Iops { iops: u64, min_bs: u64, split: bool },
}

/// The reads' and writes' rates of one job, and how their I/Os are spaced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DirRates {
    /// `[read, write]`; None: that direction is not paced.
    pub rates: [Option<DirRate>; 2],
    /// `[read, write]`: whether the job does that direction at all (`rwmixread` gives it a
    /// share): only then may a copy switch to it.
    pub does: [bool; 2],
    /// The smallest block size of each direction (poisson's I/Os a second).
    pub min_bs: [u64; 2],
    #[serde(skip)]
    pub process: RateProcess,
}

/// One direction's place in its schedule.
#[derive(Debug, Clone, Copy, Default)]
struct Place {
    /// Bytes issued since the schedule started.
    bytes: u64,
    /// The next I/O's due time, for spacings counted per I/O, in ns after the start.
    next_ns: f64,
}

/// One copy's schedules.
pub struct DirPace {
    plan: DirRates,
    start: Instant,
    places: [Place; 2],
    rng: Rng,
}

impl DirPace {
    pub fn new(plan: DirRates, seed: u64, now: Instant) -> DirPace {
        let mut p = DirPace {
            plan,
            start: now,
            places: [Place::default(); 2],
            rng: Rng::new(seed),
        };
        p.restart(now);
        p
    }

    /// Starts the schedules again from `now` (the measure phase begins): each direction's
    /// first I/O is due at once, as fio's.
    pub fn restart(&mut self, now: Instant) {
        self.start = now;
        self.places = [Place::default(); 2];
    }

    /// The mean gap between I/Os of direction `d` in ns, when it is spaced per I/O.
    fn mean_gap_ns(&self, d: usize) -> Option<f64> {
        let rate = self.plan.rates[d]?;
        let per_second = match rate {
            DirRate::Bytes(b) => b as f64 / self.plan.min_bs[d].max(1) as f64,
            DirRate::Iops { iops, split, .. } => {
                if !split && self.plan.process == RateProcess::Linear {
                    return None;
                }
                iops as f64
            }
        };
        match (self.plan.process, rate) {
            (RateProcess::Poisson, _) | (_, DirRate::Iops { .. }) => {
                Some(1e9 / per_second.max(1e-9))
            }
            _ => None,
        }
    }

    /// When direction `d`'s next I/O is due, in ns after the start (0: at once).
    fn due_ns(&self, d: usize) -> f64 {
        let Some(rate) = self.plan.rates[d] else {
            return 0.0;
        };
        if self.mean_gap_ns(d).is_some() {
            return self.places[d].next_ns;
        }
        let bps = match rate {
            DirRate::Bytes(b) => b,
            DirRate::Iops { iops, min_bs, .. } => iops.saturating_mul(min_bs),
        };
        self.places[d].bytes as f64 * 1e9 / bps.max(1) as f64
    }

    fn at(&self, ns: f64) -> Instant {
        self.start + Duration::from_nanos(ns.max(0.0) as u64)
    }

    /// Whether an I/O may go now (some direction the job does is due), else when one is.
    pub fn ready(&self, now: Instant) -> Result<(), Instant> {
        let elapsed = now.saturating_duration_since(self.start).as_nanos() as f64;
        let due = (0..2)
            .filter(|&d| self.plan.does[d])
            .map(|d| self.due_ns(d))
            .fold(f64::INFINITY, f64::min);
        if due <= elapsed || !due.is_finite() {
            Ok(())
        } else {
            Err(self.at(due))
        }
    }

    /// The direction the next I/O takes (`write`: what the pattern proposed): the proposed
    /// one when it is due, else the other when that is due and the job does it. Asked after
    /// [`DirPace::ready`] said yes, so one of them is due.
    pub fn direction(&self, write: bool, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.start).as_nanos() as f64;
        let (d, o) = (usize::from(write), usize::from(!write));
        if self.due_ns(d) <= elapsed {
            return write;
        }
        if self.plan.does[o] && self.due_ns(o) <= elapsed {
            return !write;
        }
        write
    }

    /// An I/O of `bytes` went in direction `write`.
    pub fn issued(&mut self, write: bool, bytes: u64) {
        let d = usize::from(write);
        self.places[d].bytes += bytes;
        if let Some(gap) = self.mean_gap_ns(d) {
            let step = match self.plan.process {
                RateProcess::Poisson => exponential(&mut self.rng, gap),
                RateProcess::Linear => gap,
            };
            self.places[d].next_ns += step;
        }
    }
}

/// An exponential draw of mean `mean`.
fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -(1.0 - rng.next_f64()).max(1e-12).ln() * mean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(r: Option<DirRate>, w: Option<DirRate>) -> DirRates {
        DirRates {
            rates: [r, w],
            does: [true, true],
            min_bs: [4096, 4096],
            process: RateProcess::Linear,
        }
    }

    #[test]
    fn bytes_a_second_space_each_direction_on_its_own() {
        let t0 = Instant::now();
        // fio's exitwhat.fio: 300 bytes a second each way, 4 KiB I/Os.
        let mut p = DirPace::new(
            rates(Some(DirRate::Bytes(300)), Some(DirRate::Bytes(300))),
            1,
            t0,
        );
        assert_eq!(p.ready(t0), Ok(()));
        assert!(!p.direction(false, t0), "a read goes first");
        p.issued(false, 4096);
        // The read's next is due in 4096/300 s; the write is due now: the copy switches.
        assert_eq!(p.ready(t0), Ok(()));
        assert!(p.direction(false, t0), "switches to the write");
        p.issued(true, 4096);
        let wait = p.ready(t0).unwrap_err() - t0;
        let expected = Duration::from_nanos(4096 * 1_000_000_000 / 300);
        assert!(
            wait.abs_diff(expected) < Duration::from_micros(1),
            "{wait:?}"
        );
    }

    #[test]
    fn a_direction_without_a_rate_is_never_held_and_one_the_job_does_not_do_is_never_taken() {
        let t0 = Instant::now();
        let mut p = DirPace::new(rates(None, Some(DirRate::Bytes(4096))), 1, t0);
        p.issued(true, 4096);
        p.issued(false, 1 << 30);
        assert_eq!(p.ready(t0), Ok(()));
        assert!(!p.direction(true, t0), "the write waits, the read goes");
        let mut only_reads = rates(Some(DirRate::Bytes(4096)), None);
        only_reads.does = [true, false];
        let mut p = DirPace::new(only_reads, 1, t0);
        p.issued(false, 4096);
        assert!(p.ready(t0).is_err(), "the write is not the job's to do");
    }

    #[test]
    fn iops_with_several_sizes_space_ios_and_poisson_averages_to_the_rate() {
        let t0 = Instant::now();
        let split = DirRate::Iops {
            iops: 1000,
            min_bs: 512,
            split: true,
        };
        let mut plan = rates(Some(split), None);
        plan.does = [true, false];
        let mut p = DirPace::new(plan, 1, t0);
        p.issued(false, 65536);
        p.issued(false, 512);
        assert_eq!(p.ready(t0).unwrap_err() - t0, Duration::from_millis(2));
        let mut plan = rates(Some(DirRate::Bytes(4096 * 1000)), None);
        plan.does = [true, false];
        plan.process = RateProcess::Poisson;
        let mut p = DirPace::new(plan, 7, t0);
        for _ in 0..20_000 {
            p.issued(false, 4096);
        }
        let mean_ms = (p.ready(t0).unwrap_err() - t0).as_secs_f64() * 1000.0 / 20_000.0;
        assert!((mean_ms - 1.0).abs() < 0.05, "{mean_ms}");
    }
}
