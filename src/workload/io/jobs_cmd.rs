//! `perflab io JOB.fio [MORE.fio ...]`: the job files read ([`super::fio`]), planned
//! ([`super::jobplan`]) into a run, or printed with `--dry-run`.
//!
//! The job files say what each job does; perflab's own test flags beside them would say it
//! twice, so they are refused by name. The run's own options (`--results`, `--json`,
//! `--seed`, `--interval`, `--repeat`, `--keep`, `--destroy-data`) apply.

use super::args::IoArgs;
use super::jobplan::{self, COMMAND_LINE, Options};
use super::jobrun::JobRun;
use crate::error::AppError;
use crate::vocab::units::format_bytes;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::distribution::Distribution;
use crate::workload::{RunSpec, WorkloadSpec};
use clap::ArgMatches;
use clap::parser::ValueSource;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Flags that say what the test does, which a job file says itself.
const TEST_FLAGS: &[&str] = &[
    "path",
    "mode",
    "rw",
    "bs",
    "bssplit",
    "rwmix",
    "iodepth",
    "files",
    "size",
    "offset",
    "direct",
    "fsync",
    "fdatasync",
    "distribution",
    "engine",
    "prefill",
    "verify",
    "each_volume",
    "all_records",
    "cold",
    "steady_state",
    "ss_window",
    "ss_slope",
    "ss_spread",
    "threads",
    "warmup",
    "duration",
    "ops",
    "rate",
    "rate_scope",
    "think",
    "zip",
    "load_levels",
    "active_ranks",
    "arrival",
];

/// The run of the job files in `args` (or of a fio command line's jobs), or `None` after
/// `--dry-run` printed the plan.
pub fn spec(args: &IoArgs, m: &ArgMatches) -> Result<Option<RunSpec>, AppError> {
    let line = args.fio_job.is_some();
    if let Some(flag) = TEST_FLAGS
        .iter()
        .find(|f| m.value_source(f) == Some(ValueSource::CommandLine))
    {
        let flag = flag.replace('_', "-");
        return Err(AppError::Usage(match line {
            true => format!(
                "--{flag} is perflab's, in a line of fio's options: say it as fio does (--directory or --filename for --path, --runtime for --duration, --numjobs for --threads)"
            ),
            false => format!(
                "--{flag} beside a job file: the job file says what each job does; put it in the file (its [global] section for every job)"
            ),
        }));
    }
    if line && !args.job_files.is_empty() {
        return Err(AppError::Usage(
            "fio's options and a job file in one line: put the options in the file".into(),
        ));
    }
    let env = |name: &str| std::env::var(name).ok();
    let (file, names) = match &args.fio_job {
        Some(text) => (
            super::fio::read_str(text, std::path::Path::new(COMMAND_LINE), &env),
            vec![COMMAND_LINE.to_string()],
        ),
        None => {
            let paths: Vec<PathBuf> = args.job_files.iter().map(PathBuf::from).collect();
            (super::fio::read_files(&paths, &env), args.job_files.clone())
        }
    };
    let file = file.map_err(|e| AppError::Usage(said(&e)))?;
    let seed = crate::vocab::units::parse_count("seed", &args.run.seed)?;
    let run = jobplan::plan(
        &file,
        &names,
        &Options {
            destroy: args.destroy_data.as_deref(),
            keep: args.keep,
            seed,
        },
    )
    .map_err(AppError::Usage)?;
    if args.dry_run {
        print!("{}", describe(&run));
        return Ok(None);
    }
    let logs = run.jobs.iter().any(|j| j.logs.is_some());
    // fio's defaults: no warm-up, and the steps' own shapes (the jobs' sizes or runtimes).
    let spec = build_spec(
        &args.run,
        WorkloadSpec::new(run),
        &Defaults {
            threads: "1".into(),
            warmup: "0s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )?;
    // fio runs a job file once and writes each log once; repeats would write them over.
    if logs && spec.repeat > 1 {
        return Err(AppError::Usage(
            "--repeat with a job file that writes fio's logs (write_*_log): each repeat would write them again; drop --repeat, or the log lines".into(),
        ));
    }
    Ok(Some(spec))
}

/// A reader's refusal in the user's terms: a job file's `FILE:LINE`, or the flag of a fio
/// line.
fn said(e: &super::fio::JobFileError) -> String {
    match (&e.at, &e.option) {
        (Some(at), Some(option)) if at.file.as_os_str() == COMMAND_LINE => {
            format!("fio's --{option}: {}", e.message)
        }
        _ => e.to_string(),
    }
}

/// How one job of a step ends, for a step whose jobs each end their own way.
fn own_end(j: &super::jobrun::Job) -> String {
    let until = match (j.time_based, j.runtime) {
        (true, Some(t)) => format!("for {t:.0?}"),
        (false, Some(t)) => format!("until it has moved its bytes or for {t:.0?}"),
        _ => "until it has moved its bytes".to_string(),
    };
    match j.ramp_time.is_zero() {
        true => format!("{} {until}", j.name),
        false => format!(
            "{} {until} after a ramp of {:.0?} from its start",
            j.name, j.ramp_time
        ),
    }
}

/// The plan, as `--dry-run` prints it: each group with how it ends, each job with its
/// pattern, sizes, depth, engine and files.
pub fn describe(run: &JobRun) -> String {
    let mut out = String::new();
    let groups = run.group.values();
    let _ = writeln!(
        out,
        "{}: {} job(s) in {} step(s) (the jobs between two stonewalls run at once)",
        run.job_files.join(" "),
        run.jobs.len(),
        groups.len()
    );
    for (g, label) in groups.iter().enumerate() {
        let jobs: Vec<_> = run.jobs.iter().filter(|j| j.step == g).collect();
        let Some(first) = jobs.first() else { continue };
        // Jobs at once that ramp on their own (each from its own start) or end differently
        // (some for a time, some with their bytes) are described one by one.
        let each_own = jobs.iter().any(|j| {
            j.ramp_time != first.ramp_time
                || j.time_based != first.time_based
                || !(j.ramp_time.is_zero() || j.control.start_delay.1.is_zero())
        });
        let ends = if each_own {
            let each: Vec<String> = jobs.iter().map(|j| own_end(j)).collect();
            format!(
                "each job on its own: {} (a ramp's I/O runs, its figures are thrown away)",
                each.join("; ")
            )
        } else if first.time_based {
            let ramp = match first.ramp_time.is_zero() {
                true => "no ramp".to_string(),
                false => format!("a ramp of {:.0?}", first.ramp_time),
            };
            format!("for {:.0?} after {ramp}", first.runtime.unwrap_or_default())
        } else if !first.ramp_time.is_zero() {
            format!(
                "when each copy has moved its bytes, the first {:.0?} a ramp (its I/O counts, its figures do not)",
                first.ramp_time
            )
        } else {
            match first.runtime {
                Some(t) => format!("when each copy has moved its bytes or after {t:.0?}"),
                None => "when each copy has moved its bytes".to_string(),
            }
        };
        let _ = writeln!(out, "step {} ({label}): at once, {ends}", g + 1);
        for j in jobs {
            let sizes = |s: &[(u64, u32)]| {
                s.iter()
                    .map(|(b, _)| format_bytes(*b))
                    .collect::<Vec<_>>()
                    .join("/")
            };
            let bs = match &j.write_sizes {
                Some(w) => format!("{} reads, {} writes", sizes(&j.sizes), sizes(w)),
                None => sizes(&j.sizes),
            };
            // A fio line's jobs are named by their --name; a job file's by FILE:LINE.
            let at = match j.at.starts_with(COMMAND_LINE) {
                true => format!("--name={}", j.name),
                false => j.at.clone(),
            };
            let _ = writeln!(
                out,
                "  {} x{} ({at}): {} {bs}, depth {}, {} {}{}",
                j.name,
                j.copies,
                j.rw_name(),
                j.iodepth,
                j.spec.engine.name(),
                if j.spec.direct { "direct" } else { "buffered" },
                j.budget_bytes
                    .map(|b| format!(", {} per copy", format_bytes(b)))
                    .unwrap_or_default()
            );
            let mut order: Vec<String> = j.walk.describe(j.rw.random()).into_iter().collect();
            if j.rw.random() && j.spec.distribution != Distribution::Uniform {
                order.push(format!("distribution {}", j.spec.distribution));
            }
            if !order.is_empty() {
                let _ = writeln!(out, "    offsets: {}", order.join(", "));
            }
            let flow = j.flow.as_ref().map(super::flow::FlowSpec::describe);
            for line in j.writes.describe().into_iter().chain(flow) {
                let _ = writeln!(out, "    {line}");
            }
            let control = j.control.describe();
            if !control.is_empty() {
                let _ = writeln!(out, "    each copy {control}");
            }
            if let Some(logs) = &j.logs {
                let files: Vec<String> = logs
                    .files(j.copies)
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let _ = writeln!(out, "    fio's logs: {}", files.join(", "));
            }
            for (c, files) in j.files.iter().enumerate() {
                let names: Vec<String> = files
                    .iter()
                    // The job's own layout: the run's, or names only (the null engine).
                    .filter_map(|&i| j.spec.layout.files.get(i))
                    .map(|f| {
                        format!(
                            "{}{}",
                            f.path.display(),
                            if f.creates { " (made)" } else { "" }
                        )
                    })
                    .collect();
                let at = match j.starts.get(c) {
                    Some(&s) if s > 0 => format!(" from {}", format_bytes(s)),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "    copy {}: {} of {} each{at}: {}",
                    c + 1,
                    files.len(),
                    format_bytes(j.region_bytes),
                    names.join(", ")
                );
            }
        }
    }
    for (_, note) in run.notes.iter().chain(&run.layout.notes) {
        let _ = writeln!(out, "note: {note}");
    }
    out
}
