//! The shared options to a validated [`RunSpec`], given a kind's workload and defaults: units and sweeps read, defaults that depend on the
//! machine filled in, impossible requests refused with a line that names the fix.

use super::run_args::RunArgs;
use crate::env::Environment;
use crate::vocab::sweep::{parse_numeric, parse_u64};
use crate::vocab::units::{parse_count, parse_duration, parse_rate};
use crate::vocab::{SpecError, Sweep};
use crate::workload::WorkloadSpec;
use crate::workload::{LoadSpec, RunSpec, StopSpec};

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

/// Defaults a workload gives the shared options.
pub struct Defaults {
    pub threads: String,
    pub warmup: &'static str,
    pub duration: &'static str,
    /// What `--rate` counts when `--rate-scope` is not given: all workers together, or each
    /// (OLTP's stabilized load is a rate per user).
    pub rate_scope: crate::workload::RateScope,
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
    if args.resources == crate::vocab::Switch::Off && args.power_cmd.is_some() {
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
        resources: args.resources == crate::vocab::Switch::On,
        power_cmd: args.power_cmd.clone().filter(|c| !c.trim().is_empty()),
        levels: None,
        search: None,
        active_ranks: active_ranks(args)?,
        per_rank: args.rate_scope == Some(crate::workload::RateScope::Rank),
        zip: Vec::new(),
    };
    let spec = with_zip(spec, &args.zip)?;
    let swept = grid(&spec)?;
    if let Some(text) = &args.load_levels {
        if crate::env::launcher::ranks() > 1 {
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

/// `--threads` (or the workload's default), each from 1 to [`MAX_THREADS`]. Under a
/// launcher the default is per rank (N ranks run N times the default, so no rank idles);
/// a `--threads` given is the run's, as docs/scale-out.md says, and fewer than the ranks is
/// warned about by the runner.
fn threads(args: &RunArgs, defaults: &Defaults) -> Result<Sweep<u64>, SpecError> {
    let mut threads = parse_u64(
        "threads",
        args.threads.as_deref().unwrap_or(&defaults.threads),
        parse_count,
    )?;
    let ranks = crate::env::launcher::ranks() as u64;
    let per_rank = args.rate_scope == Some(crate::workload::RateScope::Rank);
    if args.threads.is_none() && ranks > 1 && !per_rank {
        threads = threads.map(|t| t * ranks);
    }
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
        && scope != crate::workload::RateScope::Rank
        && args.rate.is_none()
    {
        return Err(SpecError::new(
            "rate-scope",
            if scope == crate::workload::RateScope::Total {
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

/// `--zip A,B`: options that step together, checked: each an option of this workload that
/// sweeps, as many values in each, in one group at most.
fn with_zip(mut spec: RunSpec, groups: &[String]) -> Result<RunSpec, SpecError> {
    for text in groups {
        let names: Vec<String> = text
            .split(',')
            .map(|n| n.trim().replace('-', "_"))
            .filter(|n| !n.is_empty())
            .collect();
        let bad = |why: &str| SpecError::new("zip", text, why);
        if names.len() < 2 {
            return Err(bad(
                "name two options or more that step together, e.g. threads,files",
            ));
        }
        let axes = spec.axes();
        // As the user names an option (`spin`), or as the record does (`spin_ns`).
        let option = |axis: &str| {
            ["_ns", "_bytes"]
                .iter()
                .find_map(|u| axis.strip_suffix(u))
                .unwrap_or(axis)
                .to_string()
        };
        let mut count = None;
        let mut group: Vec<String> = Vec::new();
        for name in &names {
            let Some(axis) = axes
                .iter()
                .find(|a| a.axis_name() == name || option(a.axis_name()) == *name)
            else {
                let known: Vec<String> = axes.iter().map(|a| option(a.axis_name())).collect();
                return Err(bad(&format!(
                    "{name} is not an option that sweeps here; the options are {}",
                    known.join(", ")
                )));
            };
            if axis.count() < 2 {
                return Err(bad(&format!(
                    "{name} has one value; give it as many as the others"
                )));
            }
            match count {
                Some(c) if c != axis.count() => {
                    return Err(bad(&format!(
                        "{name} has {} values and {} has {c}; zipped options step together, so give each as many",
                        axis.count(),
                        names[0]
                    )));
                }
                _ => count = Some(axis.count()),
            }
            let axis_name = axis.axis_name().to_string();
            if spec.zip.iter().flatten().any(|n| *n == axis_name) || group.contains(&axis_name) {
                return Err(bad(&format!("{name} is zipped twice")));
            }
            group.push(axis_name);
        }
        spec.zip.push(group);
    }
    Ok(spec)
}

/// The swept options of the spec's grid, refused when the grid has more than [`MAX_STEPS`].
fn grid(spec: &RunSpec) -> Result<Vec<&'static str>, SpecError> {
    let axes = spec.axes();
    let swept = spec.swept();
    let steps = axes
        .iter()
        .filter(|a| swept.contains(&a.axis_name()) || a.count() == 1)
        .fold(1usize, |n, a| n.saturating_mul(a.count()));
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
    let ranks = crate::env::launcher::ranks() as u64;
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
    let levels_pct = crate::vocab::levels::parse_levels(text)?;
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
    if n == 0 || n > u64::from(crate::vocab::levels::MAX_CALIBRATE) {
        return Err(SpecError::new(
            "calibrate",
            calibrate,
            "calibrate between 1 and 10 times (SPECpower: 3)",
        ));
    }
    spec.levels = Some(crate::vocab::LevelsSpec {
        levels_pct,
        calibrate: n as u32,
    });
    Ok(spec)
}

pub fn all_threads(env: &Environment) -> u64 {
    env.cpu
        .logical_cpus
        .map(u64::from)
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// `1,N` for the machine's N logical CPUs (just `1` on one CPU).
pub fn one_and_all(env: &Environment) -> String {
    match all_threads(env) {
        1 => "1".into(),
        n => format!("1,{n}"),
    }
}

/// Power of two at or above `n`.
pub fn pow2_at_least(n: u64) -> u64 {
    n.max(1).next_power_of_two()
}
