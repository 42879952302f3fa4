//! The `null` workload: ops that do nothing (or spin for a set time), so that what is measured
//! is perflab itself: timing, recording and the loop. Its figure is the harness overhead per op
//! (docs/performance.md); tests use it to exercise the engine without any hardware.

pub mod args;
pub mod cmd;
pub mod kind;

pub use kind::KIND;

use super::{OpError, OpOutcome, Session, SessionFactory, Workload};
use crate::record::Headline;
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct NullSpec {
    /// Busy time per op, in ns (0: return at once).
    pub spin_ns: Sweep<u64>,
    /// Every Nth op of each worker fails, to test error accounting (0: never).
    pub fail_every: u64,
    /// For tests only (`PERFLAB_TEST_PANIC=worker`): every session panics on its first op,
    /// to check what a panic on a worker thread gives (`commands::crash`).
    #[serde(skip)]
    pub test_panic: bool,
    /// For tests only (`PERFLAB_TEST_PANIC=open`): worker 0 panics opening its session, while
    /// the others open theirs and wait.
    #[serde(skip)]
    pub test_panic_open: bool,
}

impl Workload for NullSpec {
    fn scale_out(&self) -> super::ScaleOut {
        super::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "null"
    }

    fn target(&self) -> String {
        "null".into()
    }

    fn settings(&self) -> Vec<crate::record::Setting> {
        let mut s = vec![crate::record::Setting::new(
            "spin",
            self.spin_ns.text(|n| format!("{n} ns")),
        )];
        if self.fail_every > 0 {
            s.push(crate::record::Setting::new(
                "fail every",
                self.fail_every.to_string(),
            ));
        }
        s
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.spin_ns]
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "ops".into(),
            higher_is_better: true,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        _seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let spin = Duration::from_nanos(self.spin_ns.at(point));
        let fail_every = self.fail_every;
        if self.test_panic_open {
            return Ok(Arc::new(|worker, _| {
                assert!(
                    worker != 0,
                    "deliberate panic for tests (PERFLAB_TEST_PANIC=open)"
                );
                Ok(Box::new(PanicSession) as Box<dyn Session>)
            }));
        }
        if self.test_panic {
            return Ok(Arc::new(|_, _| {
                Ok(Box::new(PanicSession) as Box<dyn Session>)
            }));
        }
        Ok(Arc::new(move |_, _| {
            Ok(Box::new(NullSession {
                spin,
                fail_every,
                done: 0,
            }) as Box<dyn Session>)
        }))
    }
}

/// A session that panics on its first op (tests only; a separate type so the null session's
/// loop carries no extra branch).
struct PanicSession;

impl Session for PanicSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        panic!("deliberate panic for tests (PERFLAB_TEST_PANIC=worker)");
    }
}

struct NullSession {
    spin: Duration,
    fail_every: u64,
    done: u64,
}

impl Session for NullSession {
    #[inline]
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        self.done += 1;
        if !self.spin.is_zero() {
            let until = Instant::now() + self.spin;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        if self.fail_every > 0 && self.done.is_multiple_of(self.fail_every) {
            return Err(OpError::other("null: deliberate failure (--fail-every)"));
        }
        Ok(OpOutcome {
            bytes: 0,
            items: 1,
            ..Default::default()
        })
    }
}
