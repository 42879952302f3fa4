//! `perflab memory`: its arguments to a run spec, the array sizes following the machine's
//! caches and refused when they would not fit in memory.

use super::args::MemoryArgs;
use super::{KernelClass, LOADS_PER_OP, MemoryKernel, MemorySpec};
use crate::env::Environment;
use crate::vocab::sweep::{parse_names, parse_u64};
use crate::vocab::units::{format_bytes, parse_size};
use crate::vocab::{SpecError, Sweep};
use crate::workload::build::{Defaults, all_threads, build_spec, one_and_all, pow2_at_least};
use crate::workload::{RunSpec, WorkloadSpec};

/// Share of available memory a memory test may take.
const MEMORY_SHARE: f64 = 0.8;

pub fn memory_spec(args: &MemoryArgs, env: &Environment) -> Result<RunSpec, SpecError> {
    let kernel = parse_names("kernel", &args.kernel, MemoryKernel::parse)?;
    let class = MemorySpec::class(&kernel)?;
    let llc = env.llc_total_bytes().filter(|&b| b > 0);
    let default_size = match class {
        // STREAM's rule: each array at least four times the last-level cache.
        KernelClass::Bandwidth => pow2_at_least(llc.map_or(256 << 20, |c| 4 * c))
            .max(64 << 20)
            .to_string(),
        KernelClass::Latency => format!(
            "16k..{}:x2",
            pow2_at_least(llc.map_or(128 << 20, |c| 4 * c)).max(1 << 20)
        ),
        KernelClass::Lotto => "1g".into(),
    };
    let size_bytes = parse_u64(
        "size",
        args.size.as_deref().unwrap_or(&default_size),
        parse_size,
    )?
    .named("size_bytes");
    let threads_default = match class {
        KernelClass::Bandwidth => one_and_all(env),
        KernelClass::Latency => "1".into(),
        KernelClass::Lotto => format!("1..{}", all_threads(env)),
    };
    let spec = build_spec(
        &args.run,
        WorkloadSpec::new(MemorySpec {
            kernel,
            size_bytes: size_bytes.clone(),
            loads_per_op: LOADS_PER_OP,
        }),
        &Defaults {
            threads: threads_default,
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )?;
    check_memory(&spec, &size_bytes, class, env)?;
    Ok(spec)
}

/// Refuses a memory test that would not fit in available memory.
fn check_memory(
    spec: &RunSpec,
    size: &Sweep<u64>,
    class: KernelClass,
    env: &Environment,
) -> Result<(), SpecError> {
    let Some(m) = spec.workload.get::<crate::workload::memory::MemorySpec>() else {
        return Ok(());
    };
    let max_threads = spec.threads.values().iter().copied().max().unwrap_or(1);
    let arrays = m
        .kernel
        .values()
        .iter()
        .map(|k| k.arrays())
        .max()
        .unwrap_or(1);
    for &bytes in size.values() {
        if bytes == 0 {
            return Err(SpecError::new(
                "size",
                "0",
                "give a size above zero, e.g. 64m",
            ));
        }
        if class == KernelClass::Bandwidth && bytes / 8 < max_threads {
            return Err(SpecError::new(
                "size",
                &bytes.to_string(),
                "each thread needs at least one element; give a larger --size",
            ));
        }
        if class == KernelClass::Latency && bytes < 4096 {
            return Err(SpecError::new(
                "size",
                &bytes.to_string(),
                "a latency working set is at least 4k",
            ));
        }
        let needed = match class {
            KernelClass::Bandwidth => bytes.saturating_mul(arrays),
            _ => bytes.saturating_mul(max_threads),
        };
        if let Some(available) = env.memory.available_bytes
            && needed as f64 > available as f64 * MEMORY_SHARE
        {
            return Err(SpecError::new(
                "size",
                &format_bytes(bytes),
                &format!(
                    "needs {} but only {} of memory is available; lower --size or --threads",
                    format_bytes(needed),
                    format_bytes(available)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kind::parse;

    fn env() -> Environment {
        let mut e = Environment::default();
        e.cpu.logical_cpus = Some(2);
        e.memory.available_bytes = Some(8 << 30);
        e
    }

    fn memory(args: &[&str]) -> Result<RunSpec, SpecError> {
        memory_spec(&parse(&super::super::KIND, args).unwrap(), &env())
    }

    #[test]
    fn memory_defaults_follow_the_machine() {
        let s = memory(&[]).unwrap();
        assert_eq!(s.threads.values(), &[1, 2]);
        let s = memory(&["--kernel", "latency"]).unwrap();
        assert_eq!(s.threads.values(), &[1]);
    }

    #[test]
    fn bad_requests_name_the_fix() {
        let e = memory(&["--kernel", "triad,latency"]).unwrap_err();
        assert!(e.to_string().contains("separately"), "{e}");
        let e = memory(&["--size", "64g"]).unwrap_err();
        assert!(e.to_string().contains("lower --size"), "{e}");
        let e = memory(&["--threads", "0"]).unwrap_err();
        assert!(e.to_string().contains("between 1 and"), "{e}");
        // Four swept options make a grid (up to six do; the seventh is refused: tests/scan.rs).
        assert!(
            memory(&[
                "--kernel",
                "triad,copy",
                "--threads",
                "1,2",
                "--size",
                "1m,2m",
                "--rate",
                "1/s,2/s",
            ])
            .is_ok()
        );
        let e = memory(&["--duration", "1ms"]).unwrap_err();
        assert!(e.to_string().contains("at least 10ms"), "{e}");
    }
}
