//! fio's `rate_min` and `rate_iops_min`: a copy that falls below its floor ends, in error
//! (backend.c `check_min_rate`).
//!
//! fio's rule, kept here: nothing is checked in the first 2 s of the copy or during
//! `ramp_time`; after that, the first completion of a direction sets its baseline, and every
//! completion at least `ratecycle` ms (default 1000) after the last baseline compares the rate
//! since then with the floor; below it, the job ends with "rate_min=...B/s not met, got ...".
//! Only directions that have moved bytes are checked. The floor is in bytes/s when `rate_min`
//! is set for the direction, else in I/Os per second.

use std::time::{Duration, Instant};

/// The settle period fio allows at a job's start.
const SETTLE: Duration = Duration::from_secs(2);

/// A job's floors, per direction (read, write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MinRate {
    pub bytes: [Option<u64>; 2],
    pub iops: [Option<u64>; 2],
    /// fio's `ratecycle`, in ms.
    pub cycle_ms: u64,
}

impl MinRate {
    /// The floors of a job, None when it sets none.
    pub fn of(bytes: [Option<u64>; 2], iops: [Option<u64>; 2], cycle_ms: u64) -> Option<Self> {
        (bytes.iter().chain(&iops).any(Option::is_some)).then_some(MinRate {
            bytes,
            iops,
            cycle_ms: cycle_ms.max(1),
        })
    }

    /// The floors in words, for a plan.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (d, name) in ["reads", "writes"].iter().enumerate() {
            if let Some(b) = self.bytes[d] {
                parts.push(format!(
                    "{name} at least {}/s",
                    crate::vocab::units::format_bytes(b)
                ));
            } else if let Some(n) = self.iops[d] {
                parts.push(format!("{name} at least {n} IO/s"));
            }
        }
        format!(
            "{} over each {} ms, or the job ends in error",
            parts.join(", "),
            self.cycle_ms
        )
    }
}

/// One copy's check against its floors.
#[derive(Debug)]
pub struct MinRateCheck {
    floor: MinRate,
    /// Per direction: bytes and I/Os done so far.
    done: [(u64, u64); 2],
    /// Per direction: the baseline (when, bytes, I/Os), once set.
    base: [Option<(Instant, u64, u64)>; 2],
}

impl MinRateCheck {
    pub fn new(floor: MinRate) -> Self {
        MinRateCheck {
            floor,
            done: [(0, 0); 2],
            base: [None; 2],
        }
    }

    /// An I/O of `bytes` in direction `write` completed at `now`, `running` after the copy
    /// started; `measuring` is false in the ramp. Err: the floor was not met, in fio's words.
    pub fn completed(
        &mut self,
        write: bool,
        bytes: u64,
        now: Instant,
        running: Duration,
        measuring: bool,
    ) -> Result<(), String> {
        let d = usize::from(write);
        self.done[d].0 += bytes;
        self.done[d].1 += 1;
        if !measuring || running < SETTLE {
            return Ok(());
        }
        // fio checks every direction that has moved bytes, at each completion.
        for d in 0..2 {
            if self.done[d].0 == 0 {
                continue;
            }
            self.check(d, now)?;
        }
        Ok(())
    }

    fn check(&mut self, d: usize, now: Instant) -> Result<(), String> {
        let (bytes, ios) = self.done[d];
        if let Some((at, b0, n0)) = self.base[d] {
            let spent_ms = now.saturating_duration_since(at).as_millis() as u64;
            if spent_ms < self.floor.cycle_ms || spent_ms == 0 {
                return Ok(());
            }
            if let Some(min) = self.floor.bytes[d] {
                let got = (bytes - b0) * 1000 / spent_ms;
                if got < min {
                    return Err(format!("rate_min={min}B/s not met, got {got}B/s"));
                }
            } else if let Some(min) = self.floor.iops[d] {
                let got = (ios - n0) * 1000 / spent_ms;
                if got < min {
                    return Err(format!("rate_iops_min={min} not met, got {got} IOPS"));
                }
            }
        }
        self.base[d] = Some((now, bytes, ios));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor(bytes: [Option<u64>; 2], iops: [Option<u64>; 2]) -> MinRateCheck {
        MinRateCheck::new(MinRate::of(bytes, iops, 1000).unwrap())
    }

    #[test]
    fn nothing_is_checked_in_the_settle_period_or_the_ramp() {
        let mut c = floor([Some(1 << 30), None], [None; 2]);
        let t0 = Instant::now();
        for ms in 0..1999 {
            let now = t0 + Duration::from_millis(ms);
            assert!(
                c.completed(false, 4096, now, Duration::from_millis(ms), true)
                    .is_ok()
            );
        }
        let late = t0 + Duration::from_secs(10);
        assert!(
            c.completed(false, 4096, late, Duration::from_secs(10), false)
                .is_ok()
        );
    }

    #[test]
    fn a_cycle_below_the_floor_ends_the_job_in_fios_words() {
        let mut c = floor([None, Some(100_000)], [None; 2]);
        let t0 = Instant::now();
        let at = |ms: u64| (t0 + Duration::from_millis(ms), Duration::from_millis(ms));
        // The baseline at 2 s, then 1 s at 400 kB/s: met.
        let (now, run) = at(2000);
        assert!(c.completed(true, 4096, now, run, true).is_ok());
        for k in 1..=100 {
            let (now, run) = at(2000 + k * 10);
            assert!(c.completed(true, 4000, now, run, true).is_ok(), "{k}");
        }
        // Then one write in the next second: 4 kB/s.
        let (now, run) = at(3500);
        assert!(
            c.completed(true, 4000, now, run, true).is_ok(),
            "within the cycle"
        );
        let (now, run) = at(4000);
        let e = c.completed(true, 0, now, run, true).unwrap_err();
        assert_eq!(e, "rate_min=100000B/s not met, got 4000B/s");
    }

    #[test]
    fn an_iops_floor_counts_ios_and_idle_directions_are_not_checked() {
        let mut c = floor([None; 2], [Some(50), None]);
        let t0 = Instant::now();
        let s = |ms: u64| (t0 + Duration::from_millis(ms), Duration::from_millis(ms));
        let (now, run) = s(2000);
        assert!(c.completed(false, 512, now, run, true).is_ok());
        let (now, run) = s(3000);
        let e = c.completed(false, 512, now, run, true).unwrap_err();
        assert_eq!(e, "rate_iops_min=50 not met, got 1 IOPS");
        assert!(MinRate::of([None; 2], [None; 2], 1000).is_none());
    }
}
