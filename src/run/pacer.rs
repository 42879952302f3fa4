//! When each op should start: at once (closed loop, with optional think time) or on a
//! schedule (open loop, uniform or Poisson gaps).

use crate::workload::Arrival;
use crate::workload::rng::Rng;
use std::time::{Duration, Instant};

/// Below this, waiting spins instead of sleeping: sleeps overshoot by tens of microseconds.
const SPIN_BELOW: Duration = Duration::from_micros(150);
/// Long waits are cut into slices so a worker notices the end of a phase promptly.
pub const WAIT_SLICE: Duration = Duration::from_millis(20);

/// One worker's schedule.
pub enum Pacer {
    Closed {
        think: Duration,
    },
    Open {
        origin: Instant,
        /// Intended start of the next op, in ns after `origin`.
        next_ns: f64,
        mean_gap_ns: f64,
        poisson: bool,
        rng: Rng,
    },
}

impl Pacer {
    pub fn closed(think: Duration) -> Self {
        Pacer::Closed { think }
    }

    /// An open-loop schedule for one worker at `rate` ops/s, starting at `origin`. Workers of
    /// a uniform schedule are staggered so their starts interleave instead of bunching up.
    pub fn open(
        rate: f64,
        arrival: Arrival,
        seed: u64,
        origin: Instant,
        worker: usize,
        workers: usize,
    ) -> Self {
        let mean_gap_ns = 1e9 / rate.max(1e-9);
        let mut rng = Rng::new(seed ^ (worker as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let poisson = arrival == Arrival::Poisson;
        let next_ns = if poisson {
            exponential(&mut rng, mean_gap_ns)
        } else {
            mean_gap_ns * worker as f64 / workers.max(1) as f64
        };
        Pacer::Open {
            origin,
            next_ns,
            mean_gap_ns,
            poisson,
            rng,
        }
    }

    /// Moves an open-loop schedule to start at `origin` (once every session is open, so
    /// the time spent connecting does not turn into backlog). No effect in a closed loop.
    pub fn start_at(&mut self, origin: Instant) {
        if let Pacer::Open { origin: o, .. } = self {
            *o = origin;
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(self, Pacer::Open { .. })
    }

    /// The intended start of the next op, advancing the schedule; `None` in a closed loop.
    #[inline]
    pub fn next_intended(&mut self) -> Option<Instant> {
        match self {
            Pacer::Closed { .. } => None,
            Pacer::Open {
                origin,
                next_ns,
                mean_gap_ns,
                poisson,
                rng,
            } => {
                let at = *origin + Duration::from_nanos(*next_ns as u64);
                *next_ns += if *poisson {
                    exponential(rng, *mean_gap_ns)
                } else {
                    *mean_gap_ns
                };
                Some(at)
            }
        }
    }

    /// The intended start of the next op without advancing the schedule; `None` in a closed
    /// loop.
    #[inline]
    pub fn peek_intended(&self) -> Option<Instant> {
        match self {
            Pacer::Closed { .. } => None,
            Pacer::Open {
                origin, next_ns, ..
            } => Some(*origin + Duration::from_nanos(*next_ns as u64)),
        }
    }

    pub fn think(&self) -> Duration {
        match self {
            Pacer::Closed { think } => *think,
            Pacer::Open { .. } => Duration::ZERO,
        }
    }
}

fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    // 1 - u is in (0, 1], so the logarithm is finite.
    -(1.0 - rng.next_f64()).ln() * mean
}

/// Waits until `until`, sleeping in slices and spinning for the last stretch; returns early
/// (false) if `keep_going` turns false.
pub fn wait_until(until: Instant, keep_going: impl Fn() -> bool) -> bool {
    loop {
        let now = Instant::now();
        if now >= until {
            return true;
        }
        if !keep_going() {
            return false;
        }
        let left = until - now;
        if left > SPIN_BELOW {
            std::thread::sleep((left - SPIN_BELOW).min(WAIT_SLICE));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_schedule_is_evenly_spaced_and_staggered() {
        let t0 = Instant::now();
        let mut p = Pacer::open(1000.0, Arrival::Uniform, 1, t0, 1, 2);
        let a = p.next_intended().unwrap();
        let b = p.next_intended().unwrap();
        assert_eq!(a - t0, Duration::from_micros(500));
        assert_eq!(b - a, Duration::from_millis(1));
        assert!(Pacer::closed(Duration::ZERO).next_intended().is_none());
    }

    #[test]
    fn poisson_gaps_average_to_the_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::open(10_000.0, Arrival::Poisson, 7, t0, 0, 1);
        let mut last = t0;
        for _ in 0..100_000 {
            last = p.next_intended().unwrap();
        }
        let mean_gap_us = (last - t0).as_secs_f64() * 1e6 / 100_000.0;
        assert!((mean_gap_us - 100.0).abs() < 2.0, "{mean_gap_us}");
    }

    #[test]
    fn waiting_stops_when_told() {
        let far = Instant::now() + Duration::from_secs(60);
        assert!(!wait_until(far, || false));
        assert!(wait_until(
            Instant::now() + Duration::from_micros(200),
            || true
        ));
    }
}
