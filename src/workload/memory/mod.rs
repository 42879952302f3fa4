//! The memory workload: how fast the machine moves data and how long one load waits.
//!
//! Kernels (`--kernel`, a list sweeps):
//! - bandwidth ([`bandwidth`]): `read`, `write`, `copy`, `scale`, `add`, `triad` as STREAM defines
//!   and counts them (copy moves 16 bytes per element, triad 24). Each thread streams its own
//!   share of arrays of `--size` bytes each; an op is one pass over that share.
//! - `latency` ([`latency`]): a dependent pointer chase in random order over a working set of
//!   `--size` bytes, so every load waits for the one before; reported as ns per load. Swept from
//!   16 KiB past the last-level cache, the cache levels show as steps.
//! - `lotto` ([`lotto`]): the iGenRAM test: each thread allocates and fills a table of lottery
//!   tickets of `--size` bytes (timed), then searches blocks of it for winners.
//!
//! Bandwidth kernels can share a run; `latency` and `lotto` each run on their own, because
//! their figures mean different things.

pub mod args;
pub mod balance;
pub mod bandwidth;
pub mod cmd;
pub mod kind;
pub mod latency;
pub mod lotto;

pub use kind::KIND;

use super::{OpError, Session, SessionFactory, Workload};
use crate::record::{Headline, Trial};
use crate::vocab::{Axis, SpecError, StepPoint, Sweep};
use crate::workload::Context;
use bandwidth::{BandwidthKernel, BandwidthSession};
use latency::LatencySession;
use lotto::LottoSession;
use serde::Serialize;
use std::sync::Arc;

/// Dependent loads per latency op: long enough (8 µs in L1, ~1 ms in DRAM) that the clock
/// reads around an op are noise, short enough for a smooth time series.
pub const LOADS_PER_OP: u64 = 8192;

/// A kernel of the memory workload: one of the STREAM kernels, the latency chase or lotto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKernel {
    Bandwidth(BandwidthKernel),
    Latency,
    Lotto,
}

/// The three kinds of figure the kernels produce; a run holds one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelClass {
    Bandwidth,
    Latency,
    Lotto,
}

impl MemoryKernel {
    pub fn name(self) -> &'static str {
        match self {
            MemoryKernel::Bandwidth(k) => k.name(),
            MemoryKernel::Latency => "latency",
            MemoryKernel::Lotto => "lotto",
        }
    }

    pub fn parse(text: &str) -> Result<Self, SpecError> {
        match text {
            "latency" => Ok(MemoryKernel::Latency),
            "lotto" => Ok(MemoryKernel::Lotto),
            _ => BandwidthKernel::ALL
                .into_iter()
                .find(|k| k.name() == text)
                .map(MemoryKernel::Bandwidth)
                .ok_or_else(|| {
                    SpecError::new(
                        "kernel",
                        text,
                        "unknown kernel; use read, write, copy, scale, add, triad, latency or lotto",
                    )
                }),
        }
    }

    pub fn class(self) -> KernelClass {
        match self {
            MemoryKernel::Bandwidth(_) => KernelClass::Bandwidth,
            MemoryKernel::Latency => KernelClass::Latency,
            MemoryKernel::Lotto => KernelClass::Lotto,
        }
    }

    /// Arrays of `--size` bytes each the kernel touches (for the memory check).
    pub fn arrays(self) -> u64 {
        match self {
            MemoryKernel::Bandwidth(k) => k.arrays() as u64,
            _ => 1,
        }
    }
}

impl Serialize for MemoryKernel {
    /// A kernel is written by its name, as on the command line.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MemorySpec {
    pub kernel: Sweep<MemoryKernel>,
    /// Per array (bandwidth, split over threads), per thread (latency working set, lotto table).
    pub size_bytes: Sweep<u64>,
    pub loads_per_op: u64,
}

impl MemorySpec {
    /// The one class of kernel this run holds; refuses mixtures.
    pub fn class(kernel: &Sweep<MemoryKernel>) -> Result<KernelClass, SpecError> {
        let first = kernel.first().class();
        if kernel.values().iter().any(|k| k.class() != first) {
            let names: Vec<_> = kernel.values().iter().map(|k| k.name()).collect();
            return Err(SpecError::new(
                "kernel",
                &names.join(","),
                "latency and lotto each run on their own; run them separately from the bandwidth kernels",
            ));
        }
        Ok(first)
    }
}

impl Workload for MemorySpec {
    fn scale_out(&self) -> crate::workload::ScaleOut {
        crate::workload::ScaleOut::EachRank
    }

    fn name(&self) -> &'static str {
        "memory"
    }

    fn target(&self) -> String {
        "memory".into()
    }

    fn settings(&self) -> Vec<crate::record::Setting> {
        use crate::record::Setting;
        vec![
            Setting::new("kernel", self.kernel.text(|k| k.name().to_string())),
            Setting::new(
                "size",
                self.size_bytes
                    .text(|b| crate::vocab::units::format_bytes(*b)),
            ),
        ]
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.kernel, &self.size_bytes]
    }

    fn headline(&self) -> Headline {
        match self.kernel.first().class() {
            KernelClass::Bandwidth => Headline {
                metric: "bytes_per_sec".into(),
                op_name: "passes".into(),
                higher_is_better: true,
            },
            KernelClass::Latency => Headline {
                metric: "ns_per_load".into(),
                op_name: "chases".into(),
                higher_is_better: false,
            },
            KernelClass::Lotto => Headline {
                metric: "ops_per_sec".into(),
                op_name: "searches".into(),
                higher_is_better: true,
            },
        }
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        let kernel = self.kernel.at(point);
        let size = self.size_bytes.at(point) as usize;
        let loads = self.loads_per_op as usize;
        let factory: SessionFactory = match kernel {
            MemoryKernel::Bandwidth(k) => Arc::new(move |_, workers| {
                let elements = (size / 8 / workers.max(1)).max(1);
                Ok(Box::new(BandwidthSession::new(k, elements)?) as Box<dyn Session>)
            }),
            MemoryKernel::Latency => Arc::new(move |worker, _| {
                Ok(
                    Box::new(LatencySession::new(size, loads, seed ^ worker as u64)?)
                        as Box<dyn Session>,
                )
            }),
            MemoryKernel::Lotto => Arc::new(move |worker, _| {
                Ok(
                    Box::new(LottoSession::new(size, seed.wrapping_add(worker as u64))?)
                        as Box<dyn Session>,
                )
            }),
        };
        Ok(factory)
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        match self.kernel.at(point).class() {
            KernelClass::Latency if trial.ops > 0 => {
                trial.figures.insert(
                    "ns_per_load".into(),
                    trial.latency.mean_ns / self.loads_per_op as f64,
                );
            }
            KernelClass::Bandwidth if trial.workers > 0 => {
                trial.figures.insert(
                    "bytes_per_sec_per_thread".into(),
                    trial.bytes_per_sec / trial.workers as f64,
                );
            }
            _ => {}
        }
    }
}
