//! fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`; fio's flow.c): the
//! jobs that share a `flow_id` keep their shares of the I/O they issue in proportion to their
//! `flow` weights.
//!
//! fio keeps one counter per flow, starting at 1, and one per job (each numjobs copy is a
//! job of its own). Before each I/O a job compares its count over the flow's with its weight
//! over the flow's total weight: while its share is larger it is held back (and, with a
//! `flow_sleep`, first waits for its I/O in flight to complete, then sleeps that many
//! microseconds before it looks again; without, it looks again at once); otherwise both
//! counters go up by one and the I/O is issued. A job that ends takes its count and weight
//! out of the flow.
//!
//! fio counts a job's weight from the moment it reads the job file, before the job starts:
//! a job that waits for another group (a `stonewall`) holds the flow's total up meanwhile,
//! and the jobs that run before it are held back for ever once their shares reach theirs.
//! perflab refuses such a file ([`refusal`]) rather than run it for its runtime doing
//! nothing; within one group it runs as fio: a [`Flow`] per `flow_id` per step, shared by the
//! step's sessions, each of which holds a [`Gate`].

use super::fio::FioJob;
use super::jobplan::Refusal;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A job's place in a flow, as its file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FlowSpec {
    /// `flow_id`.
    pub id: u32,
    /// `flow`: the job's weight (1 to 1000).
    pub weight: u32,
    /// `flow_sleep`, in microseconds.
    pub sleep_us: u64,
}

impl FlowSpec {
    /// `job`'s flow, if it has a weight (a weight of 0, fio's default, is no flow control).
    pub fn of(job: &FioJob) -> Option<FlowSpec> {
        (job.flow > 0).then_some(FlowSpec {
            id: job.flow_id,
            weight: job.flow,
            sleep_us: job.flow_sleep_us,
        })
    }
}

impl FlowSpec {
    /// The plan's line for it (`--dry-run`).
    pub fn describe(&self) -> String {
        let held = match self.sleep_us {
            0 => "trying again at once when held back".to_string(),
            us => format!("sleeping {us} µs when held back"),
        };
        format!("flow_id {}: weight {}, {held}", self.id, self.weight)
    }
}

/// The counters the jobs of one flow share.
#[derive(Debug)]
pub struct Flow {
    /// I/Os issued by the flow's jobs, plus 1 (fio's start).
    issued: AtomicU64,
    /// The weights of the flow's jobs that have not ended.
    weight: AtomicU64,
}

/// The flows of one step: each `flow_id` with the total weight of its jobs' copies, from
/// `(spec, copies)` per job.
pub fn flows_of<'a>(jobs: impl Iterator<Item = (&'a FlowSpec, u32)>) -> BTreeMap<u32, Arc<Flow>> {
    let mut weights: BTreeMap<u32, u64> = BTreeMap::new();
    for (spec, copies) in jobs {
        *weights.entry(spec.id).or_default() += u64::from(spec.weight) * u64::from(copies);
    }
    weights
        .into_iter()
        .map(|(id, w)| {
            (
                id,
                Arc::new(Flow {
                    issued: AtomicU64::new(1),
                    weight: AtomicU64::new(w),
                }),
            )
        })
        .collect()
}

/// One copy's side of a flow: whether it may issue, and its waits when it may not.
#[derive(Debug)]
pub struct Gate {
    flow: Arc<Flow>,
    weight: u64,
    own: u64,
    sleep: Duration,
    /// Held back with a sleep to take: waiting for the I/O in flight to complete.
    quiescing: bool,
    /// Sleeping until then.
    until: Option<Instant>,
    /// The last look found the copy held back.
    held: bool,
    left: bool,
}

impl Gate {
    pub fn new(flow: Arc<Flow>, spec: &FlowSpec) -> Gate {
        Gate {
            flow,
            weight: u64::from(spec.weight),
            own: 0,
            sleep: Duration::from_micros(spec.sleep_us),
            quiescing: false,
            until: None,
            held: false,
            left: false,
        }
    }

    /// Whether the copy may issue its next I/O, with `in_flight` I/Os of its own in flight.
    pub fn may_issue(&mut self, in_flight: usize) -> bool {
        if let Some(until) = self.until {
            if Instant::now() < until {
                return false;
            }
            self.until = None;
        }
        if self.quiescing {
            if in_flight > 0 {
                return false;
            }
            self.quiescing = false;
            self.until = Some(Instant::now() + self.sleep);
            return false;
        }
        // fio: held while own / issued > weight / total, compared without division.
        let issued = u128::from(self.flow.issued.load(Ordering::Relaxed));
        let total = u128::from(self.flow.weight.load(Ordering::Relaxed));
        self.held = u128::from(self.own) * total > u128::from(self.weight) * issued;
        if self.held && !self.sleep.is_zero() {
            self.quiescing = true;
        }
        !self.held
    }

    /// The copy issued an I/O it was let through for.
    pub fn issued(&mut self) {
        self.flow.issued.fetch_add(1, Ordering::Relaxed);
        self.own += 1;
    }

    /// Nothing in flight and nothing issued: wait as fio's held job does (its sleep, in
    /// slices so the worker sees the step end; or, without one, only a yield, fio's spin).
    pub fn idle(&self) {
        if let Some(until) = self.until {
            let left = until.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(Duration::from_millis(10)));
        } else if self.held {
            std::thread::yield_now();
        }
    }

    /// The copy has ended: its count and weight leave the flow (once).
    pub fn leave(&mut self) {
        if !self.left {
            self.left = true;
            self.flow.issued.fetch_sub(self.own, Ordering::Relaxed);
            self.flow.weight.fetch_sub(self.weight, Ordering::Relaxed);
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.leave();
    }
}

/// A file whose jobs share a flow across groups: fio holds the earlier group's jobs back for
/// ever (see the module's docs). The refusal names the later job.
pub fn refusal(jobs: &[FioJob]) -> Option<Refusal> {
    let mut first_group: BTreeMap<u32, &FioJob> = BTreeMap::new();
    for job in jobs {
        let Some(spec) = FlowSpec::of(job) else {
            continue;
        };
        let first = *first_group.entry(spec.id).or_insert(job);
        if first.group != job.group {
            return Some(Refusal {
                at: job.at.clone(),
                option: "flow".into(),
                why: format!(
                    "flow_id {} is also {}'s, which runs in an earlier group: fio counts this job's weight before it starts and holds {} back for ever; give each group its own flow_id",
                    spec.id, first.name, first.name
                ),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: u32, weight: u32) -> FlowSpec {
        FlowSpec {
            id,
            weight,
            sleep_us: 0,
        }
    }

    #[test]
    fn shares_follow_the_weights() {
        let (a, b) = (spec(0, 1), spec(0, 8));
        let flows = flows_of([(&a, 1), (&b, 1)].into_iter());
        let flow = &flows[&0];
        let mut ga = Gate::new(Arc::clone(flow), &a);
        let mut gb = Gate::new(Arc::clone(flow), &b);
        // Both try as fast as they can, in turn; a gets its 1 in 9.
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..9000 {
            if ga.may_issue(0) {
                ga.issued();
                na += 1;
            }
            if gb.may_issue(0) {
                gb.issued();
                nb += 1;
            }
        }
        let ratio = nb as f64 / na as f64;
        assert!((7.5..8.5).contains(&ratio), "{nb}:{na}");
        // When b ends, a runs freely.
        gb.leave();
        let before = na;
        for _ in 0..100 {
            assert!(ga.may_issue(0));
            ga.issued();
            na += 1;
        }
        assert_eq!(na - before, 100);
    }

    #[test]
    fn copies_count_their_weight_and_ids_are_separate() {
        let (a, b, c) = (spec(1, 2), spec(1, 2), spec(2, 5));
        let flows = flows_of([(&a, 3), (&b, 1), (&c, 2)].into_iter());
        assert_eq!(flows[&1].weight.load(Ordering::Relaxed), 8);
        assert_eq!(flows[&2].weight.load(Ordering::Relaxed), 10);
        // Alone in its flow a job is never held back.
        let flows = flows_of([(&c, 1)].into_iter());
        let mut g = Gate::new(Arc::clone(&flows[&2]), &c);
        for _ in 0..1000 {
            assert!(g.may_issue(0));
            g.issued();
        }
    }

    #[test]
    fn a_held_job_with_a_sleep_waits_for_its_io_then_sleeps() {
        let a = FlowSpec {
            id: 0,
            weight: 1,
            sleep_us: 20_000,
        };
        let b = spec(0, 1);
        let flows = flows_of([(&a, 1), (&b, 1)].into_iter());
        let mut ga = Gate::new(Arc::clone(&flows[&0]), &a);
        let _gb = Gate::new(Arc::clone(&flows[&0]), &b);
        assert!(ga.may_issue(0));
        ga.issued();
        // 1/2 is not above 1/2; 2/3 is.
        assert!(ga.may_issue(0));
        ga.issued();
        assert!(!ga.may_issue(3), "held");
        assert!(!ga.may_issue(1), "its I/O still in flight");
        assert!(!ga.may_issue(0), "quiesced: now it sleeps");
        assert!(ga.until.is_some());
        assert!(!ga.may_issue(0), "still asleep");
    }
}
