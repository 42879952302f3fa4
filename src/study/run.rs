//! A study invocation from start to answer: the legs chosen and planned (`super::plan`), a
//! throwaway PostgreSQL for the legs on `{postgres}`, the time, files and free space said
//! before anything runs, `--resume`, then the legs run one after the other through
//! [`crate::launch`] (the one path every run takes, with its exit rule), each archived and
//! tagged `STUDY.LEG`, and the study's answer over their records. What is printed and written
//! of the answer is the command's.

use super::Study;
use super::evaluate::{self, Inputs, Outcome};
use super::legs::{self, Overrides};
use super::plan::{Build, Planned, heading, machine, on_postgres, plan, plan_legs};
use super::store::{resumed, save_invocation};
use crate::archive::Archive;
use crate::cli::{GlobalArgs, StudyArgs};
use crate::env::Environment;
use crate::error::AppError;
use crate::launch::{Flow, Launcher, Tally};
use crate::record::{RunRecord, StudyRef};
use crate::run::RunOptions;
use crate::ui::style;
use std::collections::BTreeMap;

/// What a study invocation came to.
pub enum Done {
    /// `--dry-run`: the plan, as text (each leg's command line, or why it does not run here).
    Plan(String),
    /// The legs ran (or some did).
    Ran(Box<Answered>),
}

/// The answer over the legs that ran, and how they ended.
pub struct Answered {
    pub answer: Outcome,
    pub records: Vec<RunRecord>,
    /// The invocation the records are stamped with.
    pub study_run: String,
    pub archive: Archive,
    /// Exit 1 naming each leg that failed (a step, or its kind's checks); 130 after a Ctrl-C.
    pub end: Result<(), AppError>,
}

/// Runs study `study` as `args` and `flags` (the options the legs take) ask.
pub fn run(
    g: &GlobalArgs,
    study: &Study,
    args: &StudyArgs,
    flags: &[String],
) -> Result<Done, AppError> {
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
        return Ok(Done::Plan(dry_run(
            study,
            args,
            &planned,
            &invocation,
            &head,
        )));
    }

    if disk > 0
        && let Ok(space) = crate::engine::sys::space(&io_path)
        && space.free_bytes < disk
    {
        return Err(AppError::Usage(format!(
            "study {} needs {} of files at {} but {} is free; free some, choose another place (--io-path DIR), or run --quick",
            study.name,
            crate::vocab::units::format_bytes(disk),
            io_path.display(),
            crate::vocab::units::format_bytes(space.free_bytes)
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
    let stamp = StudyRef {
        name: study.name.clone(),
        leg: String::new(),
        run: study_run.clone(),
        digest: digest.clone(),
    };
    let mut launcher = Launcher::batch(g, archive, RunOptions::default())?;
    launcher.line(&format!("== {head}"));
    for leg in study.legs.iter().filter(|l| chosen.contains(&l.name)) {
        if let Some(note) = legs::shared_device(study, leg, &overrides, &m) {
            launcher.line(&style::warning(&format!("== leg {}: {note}", leg.name)));
        }
    }
    for (leg, why) in &invocation.not_run {
        launcher.line(&style::warning(&format!(
            "== leg {leg}: not run here: {why}"
        )));
    }
    let (records, end) = run_legs(&planned, &mut done, study, &stamp, &env, &mut launcher);
    launcher.finish();
    drop(server);
    let archive = launcher.archive()?.clone();
    let answer = evaluate::evaluate(
        study,
        &Inputs {
            run: study_run.clone(),
            quick: args.quick,
            records: &records,
            commands: invocation.commands.clone(),
            not_run: invocation.not_run.clone(),
        },
    );
    Ok(Done::Ran(Box::new(Answered {
        answer,
        records,
        study_run,
        archive,
        end,
    })))
}

/// Runs the planned legs in order through `launcher` (a complete one of `done` is taken as
/// it is): every leg's records, and how the legs ended. A leg that fails is named and the
/// others go on; a Ctrl-C stops them; a leg whose values come from earlier legs
/// (`{= EXPR}`) gets them just before it runs, and is listed as not run when they cannot be
/// had.
fn run_legs(
    planned: &[Planned],
    done: &mut BTreeMap<String, RunRecord>,
    study: &Study,
    stamp: &StudyRef,
    env: &Environment,
    launcher: &mut Launcher,
) -> (Vec<RunRecord>, Result<(), AppError>) {
    let mut records: Vec<RunRecord> = Vec::new();
    let mut tally = Tally::new("leg");
    let total = planned.len();
    for (i, p) in planned.iter().enumerate() {
        if let Some(r) = done.remove(&p.name) {
            launcher.line(&format!(
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
                    launcher.line(&style::warning(&format!(
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
        if p.spec.is_err() {
            continue;
        }
        launcher.line(&format!(
            "== leg {} ({}/{total}): {}",
            p.name,
            i + 1,
            p.line
        ));
        let entry = launcher.entry(
            &p.argv,
            Some(StudyRef {
                leg: p.name.clone(),
                ..stamp.clone()
            }),
        );
        // `perflab compare gray-thumper.force gray-thumper.group`: the leg's latest run.
        let tag = format!("{}.{}", stamp.name, p.name);
        if let Some(last) = entry.records.last()
            && let Ok(archive) = launcher.archive()
            && let Err(e) = archive.tag(&last.id, &tag)
        {
            launcher.line(&style::warning(&format!("the tag {tag} was not set: {e}")));
        }
        // The team's store too: `STUDY.LEG.HOST` where another host ran the same leg.
        if let Some(last) = entry.records.last() {
            match launcher.shared_tag(last, &tag) {
                Some(Ok(set)) if set != tag => launcher.line(&format!(
                    "perflab: another host's run holds {tag} in the shared store; this one is {set}"
                )),
                Some(Err(e)) => launcher.line(&style::warning(&format!(
                    "the tag {tag} was not set in the shared store: {e}"
                ))),
                _ => {}
            }
        }
        records.extend(entry.records);
        let failed = entry.result.as_ref().err().map(|e| e.to_string());
        if tally.add(&p.name, entry.result) == Flow::Stop {
            break;
        }
        if let Some(why) = failed {
            launcher.line(&style::warning(&format!(
                "== leg {} failed: {why}; the other legs go on",
                p.name
            )));
        }
    }
    (records, tally.result())
}

/// `--dry-run`: the heading, then each leg as the command line it runs, with its time, its
/// scale-down and why it does not run here; then the seed's experiments not reproduced.
fn dry_run(
    study: &Study,
    args: &StudyArgs,
    planned: &[Planned],
    invocation: &super::store::Invocation,
    head: &str,
) -> String {
    let mut out = format!("# {head}\n");
    for leg in &study.legs {
        let line = &invocation.commands[&leg.name];
        let about = if leg.about.is_empty() {
            String::new()
        } else {
            format!(": {}", leg.about)
        };
        out.push_str(&format!("\n# leg {}{about}\n", leg.name));
        if let Some(p) = planned.iter().find(|p| p.name == leg.name) {
            match crate::study::plan::leg_time(study, p, args.quick) {
                Some(d) => out.push_str(&format!("# about {}\n", crate::study::plan::minutes(d))),
                None => out.push_str(
                    "# runs until its work is done (the study file gives no time for it)\n",
                ),
            }
        }
        if let Some(scaled) = &leg.scaled {
            out.push_str(&format!("# smaller than the paper: {scaled}\n"));
        }
        if let Some(why) = invocation.not_run.get(&leg.name) {
            out.push_str(&format!("# not run here: {why}\n# "));
        } else if line.contains("{=") {
            out.push_str("# each {= ...} is computed from the legs before it when they have run\n");
        }
        out.push_str(&format!("{line}\n"));
    }
    if !study.omitted.is_empty() {
        out.push_str("\n# the seed's experiments not reproduced here\n");
        for o in &study.omitted {
            let lines = o
                .lines
                .as_ref()
                .map(|l| format!(" (lines {l})"))
                .unwrap_or_default();
            out.push_str(&format!("# {}{lines}: {}\n", o.what, o.why));
        }
    }
    out
}
