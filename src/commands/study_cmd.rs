//! `perflab study [NAME|FILE.toml] [--quick] [--leg L] [--dry-run] [--print] [--resume]
//! [--check-shapes] [FLAGS]`: a seed report's experiments as one command.
//!
//! Every leg is checked before the first one runs (the file whole, then each leg's command
//! line by the command's own parser and spec), the time and the disk space are said before it
//! starts, and each leg's run is archived as it ends, tagged with the study, the leg and the
//! study invocation. A leg on `{postgres}` gets the user's server (`--target`) or a throwaway
//! PostgreSQL started for the study. The answer (the paper's values beside this machine's,
//! the shape checks) is printed and written as a report.

use super::{AppError, print};
use crate::archive::Archive;
use crate::cli::{GlobalArgs, ReportFormat, StudyArgs};
use crate::env::Environment;
use crate::present::table::Table as TextTable;
use crate::record::{RunRecord, Status, StudyRef, step_number};
use crate::run::{self, RunError, RunOptions, interrupt};
use crate::spec::numbers::sig3;
use crate::study::evaluate::{self, Cell, Inputs, LegState, Outcome, ShapeResult};
use crate::study::file::{self, Origin};
use crate::study::legs::{self, Machine, Overrides};
use crate::study::{Study, builtin};
use crate::ui::style;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the archive keeps beside a study invocation's runs, so that its report can be
/// written again later: the file, and how it was run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Invocation {
    name: String,
    quick: bool,
    overrides: Vec<String>,
    /// Leg → the command line it ran (or, run elsewhere, would run).
    commands: BTreeMap<String, String>,
    /// Leg → why it did not run here.
    not_run: BTreeMap<String, String>,
    /// Leg → the run that stands for it, made elsewhere and imported (`import --study --leg`).
    #[serde(default)]
    attached: BTreeMap<String, String>,
}

/// Reads a built-in study by name, or a study file by path.
pub(crate) fn load(what: &str) -> Result<Study, AppError> {
    if let Some(text) = builtin::text(what) {
        return file::parse(
            text,
            &Origin {
                name: what,
                label: &format!("{what} (built in)"),
            },
        )
        .map_err(AppError::Usage);
    }
    let path = Path::new(what);
    if !what.ends_with(".toml") && !what.contains('/') {
        return Err(AppError::Usage(format!(
            "no built-in study {what:?}; they are {} (or give a study file, FILE.toml)",
            builtin::names().join(", ")
        )));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| AppError::Usage(format!("{what}: {e}")))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "study".into());
    file::parse(
        &text,
        &Origin {
            name: &stem,
            label: what,
        },
    )
    .map_err(AppError::Usage)
}

/// The study's own flags, wherever they were typed (clap hands everything after the first
/// flag it does not know to FLAGS).
fn own_flags(
    g: &GlobalArgs,
    args: &StudyArgs,
) -> Result<(GlobalArgs, StudyArgs, Vec<String>), AppError> {
    let mut g = g.clone();
    let mut a = StudyArgs {
        study: args.study.clone(),
        quick: args.quick,
        leg: args.leg.clone(),
        dry_run: args.dry_run,
        print: args.print,
        resume: args.resume,
        check_shapes: args.check_shapes,
        io_path: args.io_path.clone(),
        flags: Vec::new(),
    };
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.flags.len() {
        let f = args.flags[i].as_str();
        let value = |i: &mut usize| -> Result<String, AppError> {
            *i += 1;
            args.flags
                .get(*i)
                .cloned()
                .ok_or_else(|| AppError::Usage(format!("{f} needs a value")))
        };
        match f {
            "--quick" => a.quick = true,
            "--json" => g.json = true,
            "--quiet" | "-q" => g.quiet = true,
            "--results" => g.results = Some(PathBuf::from(value(&mut i)?)),
            "--dry-run" => a.dry_run = true,
            "--print" => a.print = true,
            "--resume" => a.resume = true,
            "--check-shapes" => a.check_shapes = true,
            "--leg" => a.leg.push(value(&mut i)?),
            "--io-path" => a.io_path = Some(PathBuf::from(value(&mut i)?)),
            _ if f.starts_with("--leg=") => a.leg.push(f["--leg=".len()..].to_string()),
            _ if f.starts_with("--io-path=") => {
                a.io_path = Some(PathBuf::from(&f["--io-path=".len()..]))
            }
            _ if f.starts_with("--results=") => {
                g.results = Some(PathBuf::from(&f["--results=".len()..]))
            }
            _ => rest.push(f.to_string()),
        }
        i += 1;
    }
    Ok((g, a, rest))
}

pub fn study(g: &GlobalArgs, args: &StudyArgs) -> Result<(), AppError> {
    let (g, args, flags) = own_flags(g, args)?;
    let g = &g;
    let Some(what) = args.study.clone() else {
        if !flags.is_empty() || args.quick || args.dry_run || args.resume {
            return Err(AppError::Usage(
                "name a study first: perflab study NAME [--quick] [FLAGS] (the list: perflab study)"
                    .into(),
            ));
        }
        return list(g);
    };
    let study = load(&what)?;
    if args.print {
        return print(&study.text);
    }
    run_study(g, &study, &args, &flags)
}

/// `perflab run FILE.toml`.
pub fn run_file(
    g: &GlobalArgs,
    path: &str,
    quick: bool,
    io_path: Option<PathBuf>,
) -> Result<(), AppError> {
    let study = load(path)?;
    let args = StudyArgs {
        study: Some(path.to_string()),
        quick,
        leg: Vec::new(),
        dry_run: false,
        print: false,
        resume: false,
        check_shapes: false,
        io_path,
        flags: Vec::new(),
    };
    run_study(g, &study, &args, &[])
}

/// A leg, planned: its command line, and its spec or why it does not run here.
struct Planned {
    name: String,
    argv: Vec<String>,
    line: String,
    spec: Result<crate::workload::RunSpec, String>,
}

fn machine(env: &Environment, io_path: &Path) -> Machine {
    Machine {
        cpus: u64::from(env.cpu.logical_cpus.unwrap_or(1)),
        ram_bytes: env.memory.total_bytes.unwrap_or(0),
        io_path: io_path.display().to_string(),
        postgres: None,
    }
}

/// The legs that use `{postgres}` (after the flags).
fn on_postgres(study: &Study, names: &[String], overrides: &Overrides) -> bool {
    study.legs.iter().any(|l| {
        l.external.is_none()
            && names.contains(&l.name)
            && legs::options(study, l, false, overrides)
                .iter()
                .any(|o| matches!(&o.value, crate::study::OptValue::Values(v) if v.iter().any(|x| x.contains("{postgres}"))))
    })
}

/// Checks a leg's command line as the command would, and builds its spec.
/// How far a leg is checked before it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// Its spec, or the leg is an error.
    Spec,
    /// Its spec, or a note of why it would be refused (--dry-run, the list).
    Note,
    /// Its command line only (a server not started for --dry-run).
    No,
}

fn plan(
    study: &Study,
    leg: &crate::study::Leg,
    argv: Vec<String>,
    env: &Environment,
    build: Build,
) -> Result<Planned, AppError> {
    let at = |m: String| {
        AppError::Usage(format!(
            "{}:{}: leg '{}': {m}",
            study.name, leg.line, leg.name
        ))
    };
    let line = legs::shell_line(&argv);
    let inv = crate::cli::parse(std::iter::once("perflab".to_string()).chain(argv.iter().cloned()))
        .map_err(|e| {
            let text = e.render().to_string();
            at(text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("bad usage")
                .trim_start_matches("error: ")
                .to_string())
        })?;
    let spec = match build {
        Build::Spec | Build::Note => match super::workload_spec(&inv.what, env) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => return Err(at("not a workload command".into())),
            // --dry-run shows what the run would refuse, beside its line.
            Err(e) if build == Build::Note => Err(e.to_string()),
            Err(e) => return Err(at(e.to_string())),
        },
        Build::No => Err("not built".into()),
    };
    Ok(Planned {
        name: leg.name.clone(),
        argv,
        line,
        spec,
    })
}

/// About how long a spec runs: steps x repeats x (warmup + duration), plus a second of
/// setting up per step.
fn estimate(spec: &crate::workload::RunSpec) -> Option<Duration> {
    let per = match &spec.stop {
        crate::workload::run_spec::StopSpec::Duration(d) => *d + spec.warmup,
        crate::workload::run_spec::StopSpec::Ops(_) => return None,
    };
    let steps = spec.points().len() as u32 * spec.repeat.max(1);
    Some((per + Duration::from_secs(1)) * steps)
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s < 90 {
        format!("{s} s")
    } else {
        format!("{} min", s.div_ceil(60))
    }
}

fn list(g: &GlobalArgs) -> Result<(), AppError> {
    let env = Environment::collect();
    let archive = Archive::open(g.results.as_deref())?;
    let m = machine(&env, archive.root());
    let pg_missing = crate::sql::throwaway::ThrowawayPostgres::unavailable();
    let mut out = String::new();
    for (name, _) in builtin::STUDIES {
        let study = load(name)?;
        let none = Overrides::default();
        let mut time = [Duration::ZERO; 2];
        let mut not_here = Vec::new();
        let mut notes = Vec::new();
        for leg in &study.legs {
            let mut mm = m.clone();
            mm.postgres = Some("postgres://perflab@127.0.0.1:1/perflab".into());
            if let Some(why) = legs::unrunnable(&study, leg, &none, &mm) {
                not_here.push(format!("{}: {why}", leg.name));
                continue;
            }
            if let Some(note) = legs::shared_device(&study, leg, &none, &m) {
                notes.push(format!("{}: {note}", leg.name));
            }
            if pg_missing.is_some() && legs::unrunnable(&study, leg, &none, &m).is_some() {
                not_here.push(format!(
                    "{}: needs PostgreSQL (apt-get install postgresql, or --target postgres://...)",
                    leg.name
                ));
            }
            for (i, quick) in [false, true].into_iter().enumerate() {
                let argv = legs::argv(&study, leg, quick, &none, &mm);
                let build = match on_postgres(&study, std::slice::from_ref(&leg.name), &none) {
                    true => Build::No,
                    false => Build::Note,
                };
                if let Ok(p) = plan(&study, leg, argv, &env, build)
                    && let Ok(spec) = &p.spec
                    && let Some(t) = estimate(spec)
                {
                    time[i] += t;
                }
            }
        }
        out.push_str(&format!("{name}: {}\n", study.title));
        if let Some(seed) = &study.seed {
            out.push_str(&format!(
                "  seed: {seed}{}\n",
                study
                    .source
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ));
        }
        if !study.question.is_empty() {
            out.push_str(&format!("  question: {}\n", study.question));
        }
        out.push_str(&format!("  legs: {}\n", study.leg_names()));
        out.push_str(&format!(
            "  time: about {} (--quick: about {}), without loading databases\n",
            minutes(time[0]),
            minutes(time[1])
        ));
        for n in not_here {
            out.push_str(&format!("  not here: {n}\n"));
        }
        for n in notes {
            out.push_str(&format!("  here: {n}\n"));
        }
        out.push('\n');
    }
    out.push_str("Run one: perflab study NAME [--quick] [--dry-run]; as a file to edit: perflab study NAME --print > mine.toml\n");
    if g.json {
        let v: Vec<_> = builtin::names();
        return print(&(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"));
    }
    print(&out)
}

fn run_study(
    g: &GlobalArgs,
    study: &Study,
    args: &StudyArgs,
    flags: &[String],
) -> Result<(), AppError> {
    let overrides = Overrides::parse(study, flags).map_err(AppError::Usage)?;
    for l in &args.leg {
        if study.leg(l).is_none() {
            return Err(AppError::Usage(format!(
                "study {} has no leg {l:?}; its legs are {}",
                study.name,
                study.leg_names()
            )));
        }
    }
    let chosen: Vec<String> = study
        .legs
        .iter()
        .filter(|l| args.leg.is_empty() || args.leg.contains(&l.name))
        .map(|l| l.name.clone())
        .collect();
    let env = Environment::collect();
    let archive = Archive::open(g.results.as_deref())?;
    let io_path = args
        .io_path
        .clone()
        .unwrap_or_else(|| archive.root().to_path_buf());
    let mut m = machine(&env, &io_path);

    // PostgreSQL for the legs on {postgres}: a throwaway server, started only for a real run.
    let mut server = None;
    let mut pg_missing = None;
    if on_postgres(study, &chosen, &overrides) {
        match crate::sql::throwaway::ThrowawayPostgres::unavailable() {
            Some(why) => pg_missing = Some(why),
            None if args.dry_run => {
                m.postgres = Some("postgres://postgres@127.0.0.1:PORT/perflab".into())
            }
            None => {
                let s = crate::sql::throwaway::ThrowawayPostgres::start(&[]).map_err(|e| {
                    AppError::Usage(format!("the study's throwaway PostgreSQL: {e}"))
                })?;
                m.postgres = Some(s.url());
                server = Some(s);
            }
        }
    }

    // Every leg planned and checked before the first runs.
    let (planned, invocation) = plan_legs(
        study,
        args,
        &overrides,
        &chosen,
        &m,
        pg_missing.as_deref(),
        &env,
    )?;

    let digest = crate::study::digest(&format!(
        "{}\n{}\n{}",
        study.digest,
        args.quick,
        overrides.words().join(" ")
    ));
    let (head, disk) = heading(study, args, &planned, &io_path);

    if args.dry_run {
        let mut out = format!("# {head}\n");
        for leg in &study.legs {
            let line = &invocation.commands[&leg.name];
            let about = if leg.about.is_empty() {
                String::new()
            } else {
                format!(": {}", leg.about)
            };
            out.push_str(&format!("\n# leg {}{about}\n", leg.name));
            if let Some(why) = invocation.not_run.get(&leg.name) {
                out.push_str(&format!("# not run here: {why}\n# "));
            } else if line.contains("{=") {
                out.push_str(
                    "# each {= ...} is computed from the legs before it when they have run\n",
                );
            }
            out.push_str(&format!("{line}\n"));
        }
        return print(&out);
    }

    if disk > 0
        && let Ok(space) = crate::engine::sys::space(&io_path)
        && space.free_bytes < disk
    {
        return Err(AppError::Usage(format!(
            "study {} needs {} of files at {} but {} is free; free some, choose another place (--io-path DIR), or run --quick",
            study.name,
            crate::spec::units::format_bytes(disk),
            io_path.display(),
            crate::spec::units::format_bytes(space.free_bytes)
        )));
    }

    let (study_run, mut done) = match args.resume {
        true => resumed(&archive, study, &digest)?,
        false => (
            crate::record::timestamp::run_id(std::time::SystemTime::now()),
            BTreeMap::new(),
        ),
    };

    save_invocation(&archive, &study_run, study, &invocation)?;
    interrupt::install();
    let watch = super::watch::Watch::open(g, &archive)?;
    let progress = &watch;
    progress.line(&format!("== {head}"));
    for leg in study.legs.iter().filter(|l| chosen.contains(&l.name)) {
        if let Some(note) = legs::shared_device(study, leg, &overrides, &m) {
            progress.line(&style::warning(&format!("== leg {}: {note}", leg.name)));
        }
    }
    for (leg, why) in &invocation.not_run {
        progress.line(&style::warning(&format!(
            "== leg {leg}: not run here: {why}"
        )));
    }
    let stamp = StudyRef {
        name: study.name.clone(),
        leg: String::new(),
        run: study_run.clone(),
        digest: digest.clone(),
    };
    let legs_run = LegsRun {
        study,
        stamp: &stamp,
        env: &env,
        archive: &archive,
        progress: &watch,
    };
    let (records, outcome) = match run_legs(&planned, &mut done, &legs_run) {
        Ok(done) => done,
        Err(e) => {
            watch.finish();
            return Err(e);
        }
    };
    watch.finish();
    drop(server);

    let answer = answer(g, study, args, &study_run, &invocation, &records, &archive)?;
    outcome?;
    let failed = answer.failed_shapes();
    if args.check_shapes && failed > 0 {
        return Err(AppError::Failed(format!(
            "{failed} shape check(s) failed (--check-shapes)"
        )));
    }
    Ok(())
}

/// The line said before the study starts (legs, time, files), and the bytes of files.
fn heading(study: &Study, args: &StudyArgs, planned: &[Planned], io_path: &Path) -> (String, u64) {
    let time: Duration = planned
        .iter()
        .filter_map(|p| p.spec.as_ref().ok().and_then(estimate))
        .sum();
    let disk = planned
        .iter()
        .filter_map(|p| {
            p.spec
                .as_ref()
                .ok()
                .map(|s| s.workload.workload().disk_bytes())
        })
        .max()
        .unwrap_or(0);
    let open_ended = planned
        .iter()
        .filter(|p| p.spec.as_ref().is_ok_and(|s| estimate(s).is_none()))
        .count();
    let head = format!(
        "study {}{}: {} of {} legs here, about {} of measuring{}{}",
        study.name,
        if args.quick { " (quick)" } else { "" },
        planned.len(),
        study.legs.len(),
        minutes(time),
        match open_ended {
            0 => String::new(),
            n => format!(" and {n} leg(s) that run until their work is done"),
        },
        if disk > 0 {
            format!(
                ", {} of files at {}",
                crate::spec::units::format_bytes(disk),
                io_path.display()
            )
        } else {
            String::new()
        }
    );

    (head, disk)
}

/// Each leg's command line, checked (and its spec built) before any runs; the legs not run
/// here, with the reason.
fn plan_legs(
    study: &Study,
    args: &StudyArgs,
    overrides: &Overrides,
    chosen: &[String],
    m: &Machine,
    pg_missing: Option<&str>,
    env: &Environment,
) -> Result<(Vec<Planned>, Invocation), AppError> {
    let mut planned: Vec<Planned> = Vec::new();
    let mut invocation = Invocation {
        name: study.name.clone(),
        quick: args.quick,
        overrides: overrides.words(),
        ..Invocation::default()
    };
    for leg in &study.legs {
        let argv = legs::argv(study, leg, args.quick, overrides, m);
        invocation
            .commands
            .insert(leg.name.clone(), legs::shell_line(&argv));
        if !chosen.contains(&leg.name) {
            invocation
                .not_run
                .insert(leg.name.clone(), "not chosen (--leg)".into());
            continue;
        }
        let why = legs::unrunnable(study, leg, overrides, m).or_else(|| {
            pg_missing.map(str::to_string).filter(|_| {
                legs::unrunnable(
                    study,
                    leg,
                    overrides,
                    &Machine {
                        postgres: None,
                        ..m.clone()
                    },
                )
                .is_some()
            })
        });
        if let Some(why) = why {
            invocation.not_run.insert(leg.name.clone(), why);
            continue;
        }
        let build = match (
            args.dry_run,
            on_postgres(study, std::slice::from_ref(&leg.name), overrides),
        ) {
            // Values computed from earlier legs are known only when those have run.
            _ if legs::is_derived(&argv) => Build::No,
            (false, _) => Build::Spec,
            (true, false) => Build::Note,
            (true, true) => Build::No,
        };
        let p = plan(study, leg, argv, env, build)?;
        if build == Build::Note
            && let Err(why) = &p.spec
        {
            invocation
                .not_run
                .insert(leg.name.clone(), format!("would be refused: {why}"));
        }
        planned.push(p);
    }

    Ok((planned, invocation))
}

/// The study's answer over its runs: printed, and written as its report.
fn answer(
    g: &GlobalArgs,
    study: &Study,
    args: &StudyArgs,
    study_run: &str,
    invocation: &Invocation,
    records: &[RunRecord],
    archive: &Archive,
) -> Result<Outcome, AppError> {
    let answer = evaluate::evaluate(
        study,
        &Inputs {
            run: study_run.to_string(),
            quick: args.quick,
            records,
            commands: invocation.commands.clone(),
            not_run: invocation.not_run.clone(),
        },
    );
    if g.json {
        let value =
            serde_json::json!({ "study": study.name, "study_run": study_run, "runs": records });
        print(
            &(serde_json::to_string_pretty(&value).map_err(|e| AppError::Output(e.to_string()))?
                + "\n"),
        )?;
    } else {
        print(&summary(&answer))?;
    }
    if !records.is_empty() {
        let options = crate::report::Options {
            study: Some(answer.clone()),
            ..Default::default()
        };
        match super::report_cmd::write(archive, records, &options, None, ReportFormat::Html) {
            Ok(path) if !g.json => print(&format!(
                "report: {}  ('perflab report --study last' writes it again)\n",
                path.display()
            ))?,
            Ok(_) => {}
            Err(e) => eprintln!("perflab: the report was not written: {e}"),
        }
    }
    Ok(answer)
}

/// What running the legs needs besides the plan.
struct LegsRun<'a> {
    study: &'a Study,
    stamp: &'a StudyRef,
    env: &'a Environment,
    archive: &'a Archive,
    progress: &'a super::watch::Watch,
}

/// Runs the planned legs in order (a complete one of `done` is taken as it is): the records,
/// and whether a Ctrl-C cut the study short. A leg that fails is noted and the others go on;
/// a leg whose values come from earlier legs (`{= EXPR}`) gets them just before it runs.
fn run_legs(
    planned: &[Planned],
    done: &mut BTreeMap<String, RunRecord>,
    ctx: &LegsRun,
) -> Result<(Vec<RunRecord>, Result<(), AppError>), AppError> {
    let LegsRun {
        study,
        stamp,
        env,
        archive,
        progress,
    } = *ctx;
    let mut records: Vec<RunRecord> = Vec::new();
    let mut outcome = Ok(());
    let total = planned.len();
    for (i, p) in planned.iter().enumerate() {
        if let Some(r) = done.remove(&p.name) {
            progress.line(&format!(
                "== leg {} ({}/{total}): complete in run {} (--resume)",
                p.name,
                i + 1,
                r.id
            ));
            records.push(r);
            continue;
        }
        let derived;
        let p = if legs::is_derived(&p.argv) {
            let runs: crate::study::expr::Runs = records
                .iter()
                .filter_map(|r| Some((r.study.as_ref()?.leg.clone(), r)))
                .collect();
            let leg = study.legs.iter().find(|l| l.name == p.name);
            let planned = legs::derive(&p.argv, &runs)
                .map_err(|e| e.to_string())
                .and_then(|argv| {
                    let leg = leg.ok_or_else(|| "no such leg".to_string())?;
                    plan(study, leg, argv, env, Build::Spec).map_err(|e| e.to_string())
                });
            match planned {
                Ok(p) => {
                    derived = p;
                    &derived
                }
                Err(e) => {
                    progress.line(&style::warning(&format!(
                        "== leg {} ({}/{total}): not run: {e}",
                        p.name,
                        i + 1
                    )));
                    continue;
                }
            }
        } else {
            p
        };
        let Ok(spec) = &p.spec else { continue };
        progress.line(&format!(
            "== leg {} ({}/{total}): {}",
            p.name,
            i + 1,
            p.line
        ));
        let options = RunOptions {
            command: std::iter::once("perflab".to_string())
                .chain(p.argv.iter().cloned())
                .collect(),
            suite: None,
            suite_run: None,
            study: Some(StudyRef {
                leg: p.name.clone(),
                ..stamp.clone()
            }),
        };
        match run::run(spec, env, archive, &options, &progress.observer()) {
            Ok(record) => {
                // `perflab compare gray-thumper.force gray-thumper.group`: the leg's latest run.
                let tag = format!("{}.{}", stamp.name, p.name);
                if let Err(e) = archive.tag(&record.id, &tag) {
                    progress.line(&style::warning(&format!("the tag {tag} was not set: {e}")));
                }
                records.push(record)
            }
            Err(e @ RunError::Interrupted { .. }) => {
                outcome = Err(AppError::Run(e));
                break;
            }
            Err(RunError::Failed {
                id, step, message, ..
            }) => {
                progress.line(&style::warning(&format!(
                    "leg {}: step {} failed: {message} (run {id}); the other legs go on",
                    p.name,
                    step_number(step)
                )));
                if let Ok(r) = archive.load(&id) {
                    records.push(r);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok((records, outcome))
}

/// The last invocation of the study with the same file and flags, and its complete legs.
fn resumed(
    archive: &Archive,
    study: &Study,
    digest: &str,
) -> Result<(String, BTreeMap<String, RunRecord>), AppError> {
    let mut done = BTreeMap::new();
    let mine = study_runs(archive, &study.name)?;
    let Some((run, records)) = mine.into_iter().rev().find(|(_, rs)| {
        rs.iter()
            .any(|r| r.study.as_ref().is_some_and(|s| s.digest == digest))
    }) else {
        return Ok((
            crate::record::timestamp::run_id(std::time::SystemTime::now()),
            done,
        ));
    };
    for r in records {
        if r.status == Status::Complete
            && let Some(s) = &r.study
            && s.digest == digest
        {
            done.insert(s.leg.clone(), r);
        }
    }
    Ok((run, done))
}

fn invocation_path(archive: &Archive, run: &str) -> PathBuf {
    archive.root().join("studies").join(run)
}

/// Keeps the study file and how it was run beside the runs (perflab's own folder).
fn save_invocation(
    archive: &Archive,
    run: &str,
    study: &Study,
    inv: &Invocation,
) -> Result<(), AppError> {
    let dir = invocation_path(archive, run);
    let err = |e: std::io::Error| AppError::Output(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(err)?;
    std::fs::write(dir.join("study.toml"), &study.text).map_err(err)?;
    // A --resume keeps the legs imported from elsewhere.
    let mut inv = inv.clone();
    if let Some(before) = std::fs::read_to_string(dir.join("invocation.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Invocation>(&t).ok())
    {
        inv.attached = before.attached;
    }
    let json = serde_json::to_string_pretty(&inv).map_err(|e| AppError::Output(e.to_string()))?;
    std::fs::write(dir.join("invocation.json"), json).map_err(err)
}

/// Every invocation of study `name` in the archive, oldest first, with its runs.
fn study_runs(archive: &Archive, name: &str) -> Result<Vec<(String, Vec<RunRecord>)>, AppError> {
    let mut by_run: BTreeMap<String, Vec<RunRecord>> = BTreeMap::new();
    for s in archive.list()? {
        let Ok(r) = archive.load(&s.id) else { continue };
        if let Some(st) = &r.study
            && st.name == name
        {
            by_run.entry(st.run.clone()).or_default().push(r);
        }
    }
    Ok(by_run.into_iter().collect())
}

/// Makes imported run `id` stand for leg `leg` of the study invocation that run `study`
/// belongs to (the record stays as it was made; the invocation's folder notes it). Returns
/// the study's name.
/// The run a `--study RUN` option names: `last` is the newest run made by a study (not the
/// newest run, which may be a record imported since), anything else as any run query.
pub(crate) fn study_run(archive: &Archive, query: &str) -> Result<RunRecord, AppError> {
    if query.trim() != "last" {
        return Ok(archive.load(query)?);
    }
    for row in archive.list()?.iter().rev() {
        if let Ok(r) = archive.load(&row.id)
            && r.study.is_some()
        {
            return Ok(r);
        }
    }
    Err(AppError::Usage(
        "no run here was made by a study; run one first (perflab study NAME)".into(),
    ))
}

pub(crate) fn attach(
    archive: &Archive,
    study: &str,
    leg: &str,
    id: &str,
) -> Result<String, AppError> {
    let r = archive.load(study)?;
    // An imported record that was a leg elsewhere names its own study invocation; only a
    // study invocation of this archive has the folder to attach to.
    let Some(sref) = r.study.clone() else {
        return Err(AppError::Usage(format!(
            "run {} was not started by a study; --study names a run of one (e.g. last)",
            r.id
        )));
    };
    let dir = invocation_path(archive, &sref.run);
    let text = std::fs::read_to_string(dir.join("study.toml")).map_err(|e| {
        AppError::Usage(format!(
            "study run {}: its folder {} cannot be read ({e})",
            sref.run,
            dir.display()
        ))
    })?;
    let s = file::parse(
        &text,
        &Origin {
            name: &sref.name,
            label: &dir.join("study.toml").display().to_string(),
        },
    )
    .map_err(AppError::Usage)?;
    if s.leg(leg).is_none() {
        return Err(AppError::Usage(format!(
            "study {} has no leg {leg:?}; its legs are {}",
            s.name,
            s.leg_names()
        )));
    }
    let path = dir.join("invocation.json");
    let mut inv: Invocation = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    inv.attached.insert(leg.to_string(), id.to_string());
    archive.tag(id, &format!("{}.{leg}", s.name))?;
    let json = serde_json::to_string_pretty(&inv).map_err(|e| AppError::Output(e.to_string()))?;
    std::fs::write(&path, json)
        .map_err(|e| AppError::Output(format!("{}: {e}", path.display())))?;
    Ok(s.name)
}

/// The runs of the study invocation `record` belongs to, and the study's answer over them:
/// what `perflab report --study RUN` shows.
pub(crate) fn report_of(
    archive: &Archive,
    record: &RunRecord,
) -> Result<(Vec<RunRecord>, Outcome), AppError> {
    let Some(sref) = record.study.clone() else {
        return Err(AppError::Usage(format!(
            "run {} was not started by a study ('perflab study'); name its runs instead",
            record.id
        )));
    };
    let records: Vec<RunRecord> = study_runs(archive, &sref.name)?
        .into_iter()
        .find(|(run, _)| *run == sref.run)
        .map(|(_, rs)| rs)
        .unwrap_or_default();
    let dir = invocation_path(archive, &sref.run);
    let study = match std::fs::read_to_string(dir.join("study.toml")) {
        Ok(text) => file::parse(
            &text,
            &Origin {
                name: &sref.name,
                label: &dir.join("study.toml").display().to_string(),
            },
        )
        .map_err(AppError::Usage)?,
        // Imported from another machine without its study folder: the built-in one.
        Err(_) => load(&sref.name)?,
    };
    let mut inv: Invocation = std::fs::read_to_string(dir.join("invocation.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut records = records;
    // Legs run elsewhere and imported: their records, as they are, stand for the leg.
    for (leg, id) in &inv.attached {
        let mut r = archive.load(id)?;
        r.study = Some(StudyRef {
            leg: leg.clone(),
            ..sref.clone()
        });
        inv.not_run.remove(leg);
        records.push(r);
    }
    let answer = evaluate::evaluate(
        &study,
        &Inputs {
            run: sref.run.clone(),
            quick: inv.quick,
            records: &records,
            commands: inv.commands,
            not_run: inv.not_run,
        },
    );
    Ok((records, answer))
}

fn cell_text(c: &Cell) -> [String; 3] {
    let paper = format!(
        "{}{}",
        c.printed,
        if c.erratum.is_some() { "†" } else { "" }
    );
    let here = match &c.here {
        Ok(v) => sig3(*v),
        Err(_) => "-".into(),
    };
    let ratio = c
        .ratio()
        .map(|r| format!("{}x", sig3(r)))
        .unwrap_or_else(|| "-".into());
    [paper, here, ratio]
}

/// The answer in the terminal: the legs, the paper's values beside this machine's, the shape
/// checks.
pub(crate) fn summary(a: &Outcome) -> String {
    let mut out = format!("\n{}\n", a.title);
    if !a.question.is_empty() {
        out.push_str(&format!("{}\n", a.question));
    }
    out.push('\n');
    let mut legs = TextTable::new(["leg", "run", "command"].map(String::from).to_vec());
    for l in &a.legs {
        let run = match &l.state {
            LegState::Ran { id, complete: true } => id.clone(),
            LegState::Ran {
                id,
                complete: false,
            } => format!("{id} (incomplete)"),
            LegState::NotRun(why) => format!("not run: {why}"),
        };
        legs.row(vec![l.name.clone(), run, l.command.clone()]);
    }
    out.push_str(&legs.render());
    if !a.paper.is_empty() {
        out.push('\n');
        let mut t = TextTable::new(
            [
                "the paper's figure",
                "paper",
                "here",
                "here/paper",
                "seed line",
            ]
            .map(String::from)
            .to_vec(),
        );
        for p in &a.paper {
            let [_, here, ratio] = cell_text(&p.cell);
            t.row(vec![
                format!(
                    "{} [{}{}]",
                    p.what,
                    p.leg,
                    if p.at.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", p.at)
                    }
                ),
                format!(
                    "{} {}{}",
                    p.cell.printed,
                    p.unit,
                    if p.cell.erratum.is_some() { " †" } else { "" }
                )
                .trim()
                .to_string(),
                here,
                ratio,
                p.line.to_string(),
            ]);
        }
        out.push_str(&t.render());
    }
    for t in &a.tables {
        out.push_str(&format!(
            "\n{}{}: paper | here | here/paper\n",
            t.title,
            crate::report::study::seed_line(t.line)
        ));
        let mut head = vec![String::new()];
        head.extend(t.head.iter().cloned());
        let mut tt = TextTable::new(head);
        for (label, _, cells) in &t.rows {
            let mut row = vec![label.clone()];
            row.extend(cells.iter().map(|c| cell_text(c).join(" | ")));
            tt.row(row);
        }
        out.push_str(&tt.render());
    }
    let errata = a.paper.iter().any(|p| p.cell.erratum.is_some())
        || a.tables.iter().any(|t| {
            t.rows
                .iter()
                .any(|r| r.2.iter().any(|c| c.erratum.is_some()))
        });
    if errata {
        out.push_str(
            "† the paper's value does not follow from its own figures (the report says why)\n",
        );
    }
    let efficiencies: Vec<String> = a
        .figures
        .iter()
        .filter_map(crate::report::study::efficiency_line)
        .collect();
    if !efficiencies.is_empty() {
        out.push('\n');
        for e in efficiencies {
            out.push_str(&format!("{e}\n"));
        }
    }
    if !a.shapes.is_empty() {
        out.push_str("\nshape checks\n");
        for s in &a.shapes {
            let (mark, numbers) = match &s.result {
                ShapeResult::Passed(n) => (style::good("pass"), n.clone()),
                ShapeResult::Failed(n) => (style::bad("FAIL"), n.clone()),
                ShapeResult::NotApplicable(why) => ("n/a ".to_string(), why.clone()),
            };
            out.push_str(&format!("  {mark}  {}: {numbers}\n", s.name));
            if let (ShapeResult::Failed(_), Some(why)) = (&s.result, &s.why) {
                out.push_str(&format!("        why it may fall short: {why}\n"));
            }
        }
    }
    for v in &a.verdicts {
        out.push_str(&format!(
            "\n{}: {}\n",
            v.question,
            crate::ui::compare::summary_line(&v.comparison)
        ));
        if let Some(e) = v.expectation() {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
