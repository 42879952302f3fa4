//! `perflab cpu`: its arguments to a run spec.

use super::CpuSpec;
use super::args::CpuArgs;
use super::fractal::{DEFAULT_MAX_ITER, DEFAULT_SIDE};
use crate::env::Environment;
use crate::vocab::SpecError;
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::parse_count;
use crate::workload::build::{Defaults, all_threads, build_spec};
use crate::workload::{RunSpec, WorkloadSpec};

pub fn cpu_spec(args: &CpuArgs, env: &Environment) -> Result<RunSpec, SpecError> {
    let side = parse_u64(
        "side",
        args.side.as_deref().unwrap_or(&DEFAULT_SIDE.to_string()),
        parse_count,
    )?;
    let max_iter = parse_u64(
        "max-iter",
        args.max_iter
            .as_deref()
            .unwrap_or(&DEFAULT_MAX_ITER.to_string()),
        parse_count,
    )?;
    if side.values().iter().any(|&s| !(2..=16384).contains(&s)) {
        return Err(SpecError::new(
            "side",
            args.side.as_deref().unwrap_or(""),
            "give a side between 2 and 16384 pixels",
        ));
    }
    if max_iter
        .values()
        .iter()
        .any(|&m| !(1..=1_000_000).contains(&m))
    {
        return Err(SpecError::new(
            "max-iter",
            args.max_iter.as_deref().unwrap_or(""),
            "give between 1 and 1000000 iterations",
        ));
    }
    build_spec(
        &args.run,
        WorkloadSpec::new(CpuSpec { side, max_iter }),
        &Defaults {
            threads: format!("1..{}", all_threads(env)),
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )
}
