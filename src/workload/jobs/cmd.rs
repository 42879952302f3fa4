//! `perflab jobs`: K copies of a command at once, or a batch of N jobs through K slots.
//!
//! Everything the user typed is checked here, before anything runs, each refusal one line
//! naming the fix (exit 2): no or empty command, unbalanced quotes, a program not on PATH,
//! `--copies 0`, `--jobs 0`, weights or names that do not match the commands, an unknown
//! placement. A run in which any job failed exits 1 (`JobsKind::failure`; its record has each
//! failure's exit status and the end of its stderr).

use super::args::JobsArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::parse_count;
use crate::vocab::{SpecError, Sweep};
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::jobs::JobsSpec;
use crate::workload::jobs::command::{self, JobCommand};
use crate::workload::jobs::placement::Placement;
use crate::workload::run_args::RunArgs;
use crate::workload::{Arrival, RateScope, RunSpec};

/// More copies than this is a typo (the threads limit of every workload).
const MAX_COPIES: u64 = 4096;
/// A batch larger than this is a typo.
const MAX_JOBS: u64 = 10_000_000;

/// The run specification: the commands checked and resolved, the copies as the threads axis.
pub fn jobs_spec(args: &JobsArgs, env: &Environment) -> Result<RunSpec, AppError> {
    let commands = commands(args)?;
    // A list sweeps: `compact,spread` runs each copy count both ways.
    let placements = args
        .placement
        .split(',')
        .map(|p| {
            Placement::parse(p).ok_or_else(|| {
                SpecError::new(
                    "placement",
                    &args.placement,
                    "give none (not pinned), compact or spread, or a list such as compact,spread",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let placement = Sweep::list("placement", placements);
    let all = env
        .cpu
        .logical_cpus
        .map(u64::from)
        .filter(|&n| n > 0)
        .unwrap_or(1);
    let default_copies = if all == 1 {
        "1".to_string()
    } else {
        format!("1,{all}")
    };
    let copies_text = args.copies.clone().unwrap_or(default_copies);
    let copies = parse_u64("copies", &copies_text, parse_count)?;
    if let Some(&bad) = copies.values().iter().find(|&&c| c == 0 || c > MAX_COPIES) {
        return Err(SpecError::new(
            "copies",
            &bad.to_string(),
            "give from 1 to 4096 copies, e.g. 1,2,4",
        )
        .into());
    }
    let batch = match &args.jobs {
        Some(text) => {
            let n = parse_count("jobs", text)?;
            if n == 0 || n > MAX_JOBS {
                return Err(SpecError::new(
                    "jobs",
                    text,
                    "give a batch of at least one job, e.g. --jobs 400 (or leave it out: one job per copy)",
                )
                .into());
            }
            Some(n)
        }
        None => None,
    };
    let spec = JobsSpec::new(
        commands,
        args.shell,
        batch,
        placement.clone(),
        copies.clone().named("threads"),
    );
    if placement.values().iter().any(|p| *p != Placement::None) && spec.cpus.is_empty() {
        return Err(AppError::Usage(
            "--placement: perflab cannot read which CPUs it may use (/sys/devices/system/cpu); run with --placement none".into(),
        ));
    }
    let run = RunArgs {
        threads: Some(copies_text),
        warmup: Some("0s".into()),
        duration: None,
        ops: None,
        repeat: args.repeat.clone(),
        rate: None,
        rate_scope: None,
        active_ranks: None,
        arrival: Arrival::Poisson,
        think: None,
        seed: args.seed.clone(),
        interval: args.interval.clone(),
        resources: args.resources,
        power_cmd: None,
        load_levels: None,
        calibrate: "3".into(),
        zip: Vec::new(),
    };
    Ok(build_spec(
        &run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: "1".into(),
            warmup: "0s",
            // Steps of fixed work have no time limit; this is never used.
            duration: "1s",
            rate_scope: RateScope::Total,
        },
    )?)
}

/// The `--command`s with their names and weights, each program found.
fn commands(args: &JobsArgs) -> Result<Vec<JobCommand>, AppError> {
    if args.command.is_empty() {
        return Err(AppError::Usage(
            "give the job with --command \"PROGRAM ARGS\" (repeat --command for a mixed batch)"
                .into(),
        ));
    }
    let n = args.command.len();
    let weights: Vec<u64> = match &args.weights {
        None => vec![1; n],
        Some(text) => {
            let w: Vec<u64> = text
                .split(',')
                .map(|w| {
                    w.trim()
                        .parse::<u64>()
                        .ok()
                        .filter(|&w| (1..=1_000_000).contains(&w))
                })
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    SpecError::new(
                        "weights",
                        text,
                        "give one whole number from 1 to 1000000 per --command, e.g. 3,1",
                    )
                })?;
            if w.len() != n {
                return Err(SpecError::new(
                    "weights",
                    text,
                    &format!(
                        "give one weight per --command: {n} command(s), {} weight(s)",
                        w.len()
                    ),
                )
                .into());
            }
            w
        }
    };
    let given_names: Option<Vec<String>> = match &args.name {
        None => None,
        Some(text) => {
            let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
            if names.len() != n {
                return Err(SpecError::new(
                    "name",
                    text,
                    &format!(
                        "give one name per --command: {n} command(s), {} name(s)",
                        names.len()
                    ),
                )
                .into());
            }
            if let Some(bad) = names.iter().find(|s| !valid_name(s)) {
                return Err(SpecError::new(
                    "name",
                    bad,
                    "a name is 1 to 40 letters, digits, '-', '_' or '.'",
                )
                .into());
            }
            Some(names)
        }
    };
    let mut out: Vec<JobCommand> = Vec::with_capacity(n);
    for (i, text) in args.command.iter().enumerate() {
        let words = command::split(text).map_err(|e| {
            SpecError::new(
                "command",
                text,
                &format!("{e}; close it, or escape it with a backslash"),
            )
        })?;
        if words.is_empty() {
            return Err(SpecError::new(
                "command",
                text,
                "the command is empty; give a program and its arguments, e.g. --command \"gzip -9 -c file\"",
            )
            .into());
        }
        let argv = if args.shell {
            command::find_program("sh").map_err(AppError::Usage)?;
            vec!["sh".to_string(), "-c".to_string(), text.clone()]
        } else {
            command::find_program(&words[0]).map_err(|e| SpecError::new("command", text, &e))?;
            words.clone()
        };
        let mut name = match &given_names {
            Some(names) => names[i].clone(),
            None => short_name(&words[0]),
        };
        if given_names.is_none() {
            // Two commands of one program: `gzip`, `gzip#2`.
            let base = name.clone();
            let mut k = 2;
            while out.iter().any(|c| c.name == name) {
                name = format!("{base}#{k}");
                k += 1;
            }
        } else if out.iter().any(|c| c.name == name) {
            return Err(SpecError::new("name", &name, "give each command its own name").into());
        }
        out.push(JobCommand {
            // The op kind is a &'static str: one small string per command, kept for the run.
            name: Box::leak(name.into_boxed_str()),
            argv,
            weight: weights[i],
        });
    }
    Ok(out)
}

/// A program's name without its folder (`/usr/bin/gzip` is `gzip`), at most 40 characters.
fn short_name(word: &str) -> String {
    let base = word.rsplit('/').next().unwrap_or(word);
    let name: String = base.chars().take(40).collect();
    if name.is_empty() { "job".into() } else { name }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
