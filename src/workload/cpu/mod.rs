//! The CPU workload (iGenCPU): Mandelbrot fractals per second against threads.
//!
//! One op computes one fractal ([`fractal`]): half its rows with a hand-written floating-point
//! complex type, half with a fixed-point integer one, so the work is half integer and half
//! floating point as in the original benchmark. Threads share nothing, so fractals/s should
//! grow linearly with threads up to the number of idle cores; the per-thread figure and the
//! scaling efficiency show where it stops.

pub mod args;
pub mod balance;
pub mod cmd;
pub mod fractal;
pub mod kind;

pub use kind::KIND;

use super::{OpError, Session, SessionFactory, Workload};
use crate::record::{Headline, Trial};
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use fractal::FractalSession;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct CpuSpec {
    /// Pixels per side of one fractal.
    pub side: Sweep<u64>,
    /// Iterations before a point counts as inside the set.
    pub max_iter: Sweep<u64>,
}

impl Workload for CpuSpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn target(&self) -> String {
        "cpu".into()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.side, &self.max_iter]
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "ops_per_sec".into(),
            op_name: "fractals".into(),
            higher_is_better: true,
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let side = self.side.at(point) as usize;
        let max_iter = u32::try_from(self.max_iter.at(point)).unwrap_or(u32::MAX);
        Ok(Arc::new(move |worker, _| {
            Ok(
                Box::new(FractalSession::new(side, max_iter, seed ^ worker as u64)?)
                    as Box<dyn Session>,
            )
        }))
    }

    fn derive(&self, _point: &StepPoint, trial: &mut Trial) {
        if trial.workers > 0 {
            trial.figures.insert(
                "ops_per_sec_per_thread".into(),
                trial.ops_per_sec / trial.workers as f64,
            );
        }
    }
}
