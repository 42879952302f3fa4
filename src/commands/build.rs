//! Arguments to a validated [`RunSpec`]: units and sweeps read, defaults that depend on the
//! machine filled in, impossible requests refused with a line that names the fix.

use crate::cli::{CpuArgs, MemoryArgs, NullArgs, RunArgs};
use crate::env::Environment;
use crate::run::{LoadSpec, RunSpec, StopSpec};
use crate::spec::sweep::{parse_names, parse_numeric, parse_u64};
use crate::spec::units::{format_bytes, parse_count, parse_duration, parse_rate, parse_size};
use crate::spec::{SpecError, Sweep};
use crate::workload::WorkloadSpec;
use crate::workload::cpu::CpuSpec;
use crate::workload::cpu::fractal::{DEFAULT_MAX_ITER, DEFAULT_SIDE};
use crate::workload::memory::{KernelClass, LOADS_PER_OP, MemoryKernel, MemorySpec};
use crate::workload::null::NullSpec;

/// More threads than this is a typo, not a test.
const MAX_THREADS: u64 = 4096;
/// More steps than this in one run is a typo (a range without its `:x2`), and the grid of
/// steps would take gigabytes before the first one ran.
const MAX_STEPS: usize = 10_000;
/// Most options that sweep in one run: a scan study sweeps table, predicate, cold or warm,
/// clients and a server setting or two (`--set max_parallel_workers_per_gather=0,2,4`);
/// reports draw one curve per combination of all but the innermost, and [`MAX_STEPS`] bounds
/// the grid.
const MAX_SWEPT: usize = 6;
/// Share of available memory a memory test may take.
const MEMORY_SHARE: f64 = 0.8;

/// Defaults a workload gives the shared options.
pub struct Defaults {
    pub threads: String,
    pub warmup: &'static str,
    pub duration: &'static str,
    /// What `--rate` counts when `--rate-scope` is not given: all workers together, or each
    /// (OLTP's stabilized load is a rate per user).
    pub rate_scope: crate::run::RateScope,
}

/// The shared options plus a workload: the run specification.
pub fn build_spec(
    args: &RunArgs,
    workload: WorkloadSpec,
    defaults: &Defaults,
) -> Result<RunSpec, SpecError> {
    let threads = threads(args, defaults)?;
    let warmup = parse_duration("warmup", args.warmup.as_deref().unwrap_or(defaults.warmup))?;
    let stop = stop(args, defaults)?;
    let repeat = parse_count("repeat", &args.repeat)?;
    if repeat == 0 || repeat > 1000 {
        return Err(SpecError::new(
            "repeat",
            &args.repeat,
            "repeat between 1 and 1000 times",
        ));
    }
    let load = load(args, defaults)?;
    let seed = parse_count("seed", &args.seed)?;
    let interval = parse_duration("interval", &args.interval)?;
    if interval.as_millis() < 10 {
        return Err(SpecError::new(
            "interval",
            &args.interval,
            "use an interval of at least 10ms",
        ));
    }
    if args.resources == crate::spec::Switch::Off && args.power_cmd.is_some() {
        return Err(SpecError::new(
            "power-cmd",
            args.power_cmd.as_deref().unwrap_or_default(),
            "the power meter is read by the sampler, which --resources off turns off; drop one of the two",
        ));
    }
    let spec = RunSpec {
        workload,
        threads,
        warmup,
        stop,
        load,
        repeat: repeat as u32,
        seed,
        interval,
        resources: args.resources == crate::spec::Switch::On,
        power_cmd: args.power_cmd.clone().filter(|c| !c.trim().is_empty()),
        levels: None,
        search: None,
        active_ranks: active_ranks(args)?,
        per_rank: args.rate_scope == Some(crate::run::RateScope::Rank),
    };
    let swept = grid(&spec)?;
    if let Some(text) = &args.load_levels {
        if crate::cluster::size() > 1 {
            return Err(SpecError::new(
                "load-levels",
                text,
                "load levels are calibrated on one process; run them without mpirun",
            ));
        }
        let mut spec = spec;
        let mut swept: Vec<&str> = swept;
        // The default thread sweep becomes its largest value: the levels load the machine.
        if args.threads.is_none() && spec.threads.is_swept() {
            let most = spec.threads.values().iter().copied().max().unwrap_or(1);
            spec.threads = Sweep::single(spec.threads.name(), most);
            swept.retain(|a| *a != spec.threads.name());
        }
        return with_levels(spec, text, &args.calibrate, &swept);
    }
    if swept.len() > MAX_SWEPT {
        return Err(SpecError::new(
            swept[MAX_SWEPT],
            "",
            &format!(
                "at most {MAX_SWEPT} options sweep at once ({} do); fix the others to one value",
                swept.join(", ")
            ),
        ));
    }
    Ok(spec)
}

/// `--threads` (or the workload's default), each from 1 to [`MAX_THREADS`].
fn threads(args: &RunArgs, defaults: &Defaults) -> Result<Sweep<u64>, SpecError> {
    let threads = parse_u64(
        "threads",
        args.threads.as_deref().unwrap_or(&defaults.threads),
        parse_count,
    )?;
    if let Some(&bad) = threads
        .values()
        .iter()
        .find(|&&t| t == 0 || t > MAX_THREADS)
    {
        return Err(SpecError::new(
            "threads",
            &bad.to_string(),
            "threads must be between 1 and 4096",
        ));
    }
    Ok(threads)
}

/// When a step ends: after `--ops` ops, or after `--duration` (or the workload's default).
fn stop(args: &RunArgs, defaults: &Defaults) -> Result<StopSpec, SpecError> {
    Ok(match (&args.ops, &args.duration) {
        (Some(ops), _) => {
            let n = parse_count("ops", ops)?;
            if n == 0 {
                return Err(SpecError::new("ops", ops, "give at least one op"));
            }
            StopSpec::Ops(n)
        }
        (None, d) => {
            let text = d.as_deref().unwrap_or(defaults.duration);
            let d = parse_duration("duration", text)?;
            if d.as_millis() < 10 {
                return Err(SpecError::new(
                    "duration",
                    text,
                    "measure for at least 10ms",
                ));
            }
            StopSpec::Duration(d)
        }
    })
}

/// The load model: open loop at `--rate`, else closed with `--think` between ops.
fn load(args: &RunArgs, defaults: &Defaults) -> Result<LoadSpec, SpecError> {
    if let Some(scope) = args.rate_scope
        && scope != crate::run::RateScope::Rank
        && args.rate.is_none()
    {
        return Err(SpecError::new(
            "rate-scope",
            if scope == crate::run::RateScope::Total {
                "total"
            } else {
                "worker"
            },
            "says what --rate counts; give --rate too",
        ));
    }
    Ok(match (&args.rate, &args.think) {
        (Some(rate), _) => {
            let rate = parse_numeric("rate", rate, |s| parse_rate("rate", s), |v| *v, |f| f)?;
            LoadSpec::Open {
                rate,
                scope: args.rate_scope.unwrap_or(defaults.rate_scope),
                arrival: args.arrival,
            }
        }
        (None, think) => LoadSpec::Closed {
            think: think
                .as_deref()
                .map(|t| parse_duration("think", t))
                .transpose()?
                .unwrap_or_default(),
        },
    })
}

/// The swept options of the spec's grid, refused when the grid has more than [`MAX_STEPS`].
fn grid(spec: &RunSpec) -> Result<Vec<&'static str>, SpecError> {
    let axes = spec.axes();
    let swept: Vec<&'static str> = axes
        .iter()
        .filter(|a| a.count() > 1)
        .map(|a| a.axis_name())
        .collect();
    let steps = axes.iter().fold(1usize, |n, a| n.saturating_mul(a.count()));
    if steps > MAX_STEPS {
        return Err(SpecError::new(
            swept.first().copied().unwrap_or("threads"),
            "",
            &format!(
                "the sweep makes {steps} steps, more than {MAX_STEPS}; sweep fewer values (e.g. 1..64:x2)"
            ),
        ));
    }
    Ok(swept)
}

/// `--active-ranks` against the ranks the launcher started: `None` with one rank (and then
/// the option is refused: there is nothing to divide).
fn active_ranks(args: &RunArgs) -> Result<Option<Sweep<u64>>, SpecError> {
    let ranks = crate::cluster::size() as u64;
    let text = match (&args.active_ranks, ranks) {
        (Some(t), 1) => {
            return Err(SpecError::new(
                "active-ranks",
                t,
                "only a run started by an MPI launcher has ranks (mpirun -np N perflab ...)",
            ));
        }
        (Some(t), _) => t.clone(),
        (None, 1) => return Ok(None),
        (None, n) => n.to_string(),
    };
    let sweep = parse_u64("active_ranks", &text, parse_count)?;
    if let Some(&bad) = sweep.values().iter().find(|&&n| n == 0 || n > ranks) {
        return Err(SpecError::new(
            "active-ranks",
            &bad.to_string(),
            &format!("the job has {ranks} ranks: give 1 to {ranks}"),
        ));
    }
    Ok(Some(sweep))
}

/// A spec with SPECpower's load levels: the levels are the run's only sweep.
fn with_levels(
    mut spec: RunSpec,
    text: &str,
    calibrate: &str,
    swept: &[&str],
) -> Result<RunSpec, SpecError> {
    let levels_pct = crate::spec::levels::parse_levels(text)?;
    if let Some(first) = swept.first() {
        let values = spec
            .axes()
            .iter()
            .find(|a| a.axis_name() == *first)
            .map(|a| {
                (0..a.count())
                    .map(|i| a.value_json(i).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        // The option as typed: the axis `bs_bytes` is `--bs`, `spin_ns` is `--spin`.
        let option = first
            .trim_end_matches("_bytes")
            .trim_end_matches("_ns")
            .replace('_', "-");
        return Err(SpecError::new(
            &option,
            &values,
            &format!("--load-levels is the run's sweep; give --{option} one value"),
        ));
    }
    let n = parse_count("calibrate", calibrate)?;
    if n == 0 || n > u64::from(crate::spec::levels::MAX_CALIBRATE) {
        return Err(SpecError::new(
            "calibrate",
            calibrate,
            "calibrate between 1 and 10 times (SPECpower: 3)",
        ));
    }
    spec.levels = Some(crate::spec::LevelsSpec {
        levels_pct,
        calibrate: n as u32,
    });
    Ok(spec)
}

fn all_threads(env: &Environment) -> u64 {
    env.cpu
        .logical_cpus
        .map(u64::from)
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// `1,N` for the machine's N logical CPUs (just `1` on one CPU).
fn one_and_all(env: &Environment) -> String {
    match all_threads(env) {
        1 => "1".into(),
        n => format!("1,{n}"),
    }
}

/// Power of two at or above `n`.
fn pow2_at_least(n: u64) -> u64 {
    n.max(1).next_power_of_two()
}

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
        WorkloadSpec::Memory(MemorySpec {
            kernel,
            size_bytes: size_bytes.clone(),
            loads_per_op: LOADS_PER_OP,
        }),
        &Defaults {
            threads: threads_default,
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::run::RateScope::Total,
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
    let WorkloadSpec::Memory(m) = &spec.workload else {
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
        WorkloadSpec::Cpu(CpuSpec { side, max_iter }),
        &Defaults {
            threads: format!("1..{}", all_threads(env)),
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::run::RateScope::Total,
        },
    )
}

pub fn null_spec(args: &NullArgs) -> Result<RunSpec, SpecError> {
    let spin = parse_numeric(
        "spin",
        &args.spin,
        |s| parse_duration("spin", s),
        |d| d.as_nanos() as f64,
        |f| std::time::Duration::from_nanos(f as u64),
    )?;
    let spin_ns = spin.map(|d| d.as_nanos() as u64).named("spin_ns");
    let fail_every = parse_count("fail-every", &args.fail_every)?;
    build_spec(
        &args.run,
        WorkloadSpec::Null(NullSpec {
            spin_ns,
            fail_every,
            test_panic: super::crash::test_panic_requested("worker"),
            test_panic_open: super::crash::test_panic_requested("open"),
        }),
        &Defaults {
            threads: "1".into(),
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::run::RateScope::Total,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn env() -> Environment {
        let mut e = Environment::default();
        e.cpu.logical_cpus = Some(2);
        e.memory.available_bytes = Some(8 << 30);
        e
    }

    fn memory(args: &[&str]) -> Result<RunSpec, SpecError> {
        let cli = Cli::try_parse_from(["perflab", "memory"].iter().chain(args)).unwrap();
        let Command::Memory(m) = cli.command else {
            unreachable!()
        };
        memory_spec(&m, &env())
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

    #[test]
    fn grids_of_more_than_ten_thousand_steps_are_refused() {
        let null = |args: &[&str]| {
            let cli = Cli::try_parse_from(["perflab", "null"].iter().chain(args)).unwrap();
            let Command::Null(n) = cli.command else {
                unreachable!()
            };
            null_spec(&n)
        };
        // 4000 x 4000 steps: the grid alone would take gigabytes.
        let e = null(&["--threads", "1..4000", "--spin", "1ns..4000ns"]).unwrap_err();
        assert!(e.to_string().contains("16000000 steps"), "{e}");
        assert!(null(&["--threads", "1..100", "--spin", "1ns..100ns"]).is_ok());
    }
}
