//! A study invocation planned before anything runs: each chosen leg's command line, checked
//! by its command's own parser and its spec built ([`plan_legs`]), so a bad leg cannot waste
//! the ones before it; the legs that cannot run here, each with why; the time and the files
//! it will take ([`heading`]). [`catalog`] plans every built-in study the same way for the
//! list `perflab study` prints.

use super::legs::{self, Machine, Overrides};
use super::store::Invocation;
use super::{Leg, Study, builtin};
use crate::cli::StudyArgs;
use crate::env::Environment;
use crate::error::AppError;
use std::path::Path;
use std::time::Duration;

/// A leg, planned: its command line, and its spec or why it does not run here.
pub struct Planned {
    pub name: String,
    pub argv: Vec<String>,
    pub line: String,
    pub spec: Result<crate::workload::RunSpec, String>,
}

pub fn machine(env: &Environment, io_path: &Path) -> Machine {
    Machine {
        cpus: u64::from(env.cpu.logical_cpus.unwrap_or(1)),
        ram_bytes: env.memory.total_bytes.unwrap_or(0),
        io_path: io_path.display().to_string(),
        postgres: None,
    }
}

/// The legs that use `{postgres}` (after the flags).
pub fn on_postgres(study: &Study, names: &[String], overrides: &Overrides) -> bool {
    study.legs.iter().any(|l| {
        l.external.is_none()
            && names.contains(&l.name)
            && legs::options(study, l, false, overrides)
                .iter()
                .any(|o| matches!(&o.value, super::OptValue::Values(v) if v.iter().any(|x| x.contains("{postgres}"))))
    })
}

/// How far a leg is checked before it runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Its spec, or the leg is an error.
    Spec,
    /// Its spec, or a note of why it would be refused (--dry-run, the list).
    Note,
    /// Its command line only (a server not started for --dry-run).
    No,
}

/// Checks a leg's command line as the command would, and builds its spec.
pub fn plan(
    study: &Study,
    leg: &Leg,
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
    let (kind, args, _) = crate::launch::parse(&argv).map_err(|e| at(e.to_string()))?;
    let spec = match build {
        Build::Spec | Build::Note => match kind.spec(&args, env) {
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
pub fn estimate(spec: &crate::workload::RunSpec) -> Option<Duration> {
    // A search runs as many steps as its outcome asks for, and a step of fixed work (a batch
    // of jobs) until its work is done: neither is steps times a duration.
    let workload = spec.workload.workload();
    if spec.search.is_some()
        || spec
            .points()
            .iter()
            .any(|p| workload.fixed_work(p).is_some())
    {
        return None;
    }
    let per = match &spec.stop {
        crate::workload::run_spec::StopSpec::Duration(d) => *d + spec.warmup,
        crate::workload::run_spec::StopSpec::Ops(_) => return None,
    };
    let steps = spec.points().len() as u32 * spec.repeat.max(1);
    Some((per + Duration::from_secs(1)) * steps)
}

/// A planned leg's time: from its spec, else the study's own estimate for it (`time`,
/// `quick-time`: a leg that runs until its work is done, or one refused here).
pub fn leg_time(study: &Study, p: &Planned, quick: bool) -> Option<Duration> {
    p.spec.as_ref().ok().and_then(estimate).or_else(|| {
        let leg = study.leg(&p.name)?;
        leg.time[usize::from(quick)].or(leg.time[0].filter(|_| !quick))
    })
}

pub fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s < 90 {
        format!("{s} s")
    } else {
        format!("{} min", s.div_ceil(60))
    }
}

/// The line said before the study starts (legs, time, files), and the bytes of files.
pub fn heading(
    study: &Study,
    args: &StudyArgs,
    planned: &[Planned],
    io_path: &Path,
) -> (String, u64) {
    let time: Duration = planned
        .iter()
        .filter_map(|p| leg_time(study, p, args.quick))
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
        .filter(|p| leg_time(study, p, args.quick).is_none())
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
                crate::vocab::units::format_bytes(disk),
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
pub fn plan_legs(
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

/// The built-in studies, each with its seed, question, legs, the time it takes here (and
/// with `--quick`), the legs that cannot run here and why: what `perflab study` lists.
/// `io_root` is where the storage legs would put their files.
pub fn catalog(env: &Environment, io_root: &Path) -> Result<String, AppError> {
    let m = machine(env, io_root);
    let pg_missing = crate::sql::throwaway::ThrowawayPostgres::unavailable();
    let w = super::summary::width();
    let mut out = String::new();
    for (name, _) in builtin::STUDIES {
        let study = super::load(name)?;
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
                if let Ok(p) = plan(&study, leg, argv, env, build)
                    && let Some(t) = leg_time(&study, &p, quick)
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
            out.push_str(&super::summary::wrap("  question: ", &study.question, 4, w));
        }
        out.push_str(&super::summary::wrap("  legs: ", &study.leg_names(), 4, w));
        out.push_str(&format!(
            "  time: about {} (--quick: about {}), without loading databases\n",
            minutes(time[0]),
            minutes(time[1])
        ));
        for n in not_here {
            out.push_str(&super::summary::wrap("  not here: ", &n, 4, w));
        }
        for n in notes {
            out.push_str(&super::summary::wrap("  here: ", &n, 4, w));
        }
        out.push('\n');
    }
    out.push_str("Run one: perflab study NAME [--quick] [--dry-run]; as a file to edit: perflab study NAME --print > mine.toml\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::file::{self, Origin};

    const STUDY: &str = r#"
[study]
title = "plans"

[defaults]
command = "null"
warmup = "1s"

[[leg]]
name = "ramp"
threads = "1,2"
duration = "2s"

[[leg]]
name = "counted"
ops = "1000"

[[leg]]
name = "broken"
threads = "0"
"#;

    fn study() -> Study {
        file::parse(
            STUDY,
            &Origin {
                name: "plans",
                label: "plans.toml",
            },
        )
        .unwrap()
    }

    fn args(dry_run: bool, legs: &[&str]) -> StudyArgs {
        StudyArgs {
            study: Some("plans".into()),
            quick: false,
            leg: legs.iter().map(|l| l.to_string()).collect(),
            dry_run,
            print: false,
            resume: false,
            check_shapes: false,
            io_path: None,
            flags: Vec::new(),
        }
    }

    fn machine() -> Machine {
        Machine {
            cpus: 2,
            ram_bytes: 1 << 30,
            io_path: "/tmp".into(),
            postgres: None,
        }
    }

    #[test]
    fn every_chosen_leg_is_checked_before_any_runs() {
        let s = study();
        let env = Environment::default();
        let none = Overrides::default();
        let chosen = vec!["ramp".to_string(), "counted".to_string()];
        let (planned, inv) = plan_legs(
            &s,
            &args(false, &[]),
            &none,
            &chosen,
            &machine(),
            None,
            &env,
        )
        .unwrap();
        assert_eq!(planned.len(), 2);
        assert_eq!(inv.not_run["broken"], "not chosen (--leg)");
        assert_eq!(
            inv.commands["ramp"],
            "perflab null --warmup 1s --threads 1,2 --duration 2s"
        );
        // Two steps of 1 s + 2 s, a second of setting up each; a counted leg has no time.
        assert_eq!(
            estimate(planned[0].spec.as_ref().unwrap()),
            Some(Duration::from_secs(8))
        );
        assert_eq!(estimate(planned[1].spec.as_ref().unwrap()), None);
        let (head, disk) = heading(&s, &args(false, &[]), &planned, Path::new("/tmp"));
        assert_eq!(disk, 0);
        assert_eq!(
            head,
            "study plans: 2 of 3 legs here, about 8 s of measuring and 1 leg(s) that run until their work is done"
        );

        // A leg its command refuses stops the study before anything runs, naming the line.
        let all: Vec<String> = s.legs.iter().map(|l| l.name.clone()).collect();
        let e = plan_legs(&s, &args(false, &[]), &none, &all, &machine(), None, &env)
            .err()
            .expect("refused");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("plans:"), "{e}");
        assert!(e.to_string().contains("leg 'broken'"), "{e}");
        // --dry-run lists it with why instead.
        let (planned, inv) =
            plan_legs(&s, &args(true, &[]), &none, &all, &machine(), None, &env).unwrap();
        assert_eq!(planned.len(), 3);
        assert!(
            inv.not_run["broken"].starts_with("would be refused:"),
            "{:?}",
            inv.not_run
        );
    }

    #[test]
    fn times_read_as_people_say_them() {
        assert_eq!(minutes(Duration::from_secs(89)), "89 s");
        assert_eq!(minutes(Duration::from_secs(90)), "2 min");
        assert_eq!(minutes(Duration::from_secs(3600)), "60 min");
    }

    #[test]
    fn the_catalog_lists_every_built_in_study() {
        let text = catalog(&Environment::default(), Path::new("/tmp")).unwrap();
        for (name, _) in builtin::STUDIES {
            assert!(text.contains(&format!("{name}: ")), "{name} missing");
        }
        assert!(text.ends_with("mine.toml\n"));
    }
}
