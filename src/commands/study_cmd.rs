//! `perflab study [NAME|FILE.toml] [--quick] [--leg L] [--dry-run] [--print] [--resume]
//! [--check-shapes] [FLAGS]` and `perflab run FILE.toml`: a seed report's experiments as one
//! command. The study is planned and run by `crate::study::run` (its legs through the one path
//! every run takes, `crate::launch`); this file reads the command's flags and prints the
//! answer, and writes it as a report.

use super::shared::write_report;
use crate::cli::{GlobalArgs, StudyArgs};
use crate::error::AppError;
use crate::study::Study;
use crate::study::run::Done;
use crate::ui::output::print;
use std::path::PathBuf;

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
            "--live" => g.live.live = Some(value(&mut i)?),
            "--metrics-listen" => g.live.metrics_listen = Some(value(&mut i)?),
            "--hlog" => g.live.hlog = Some(PathBuf::from(value(&mut i)?)),
            "--progress" => g.live.progress = Some(value(&mut i)?),
            "--io-path" => a.io_path = Some(PathBuf::from(value(&mut i)?)),
            _ if f.starts_with("--leg=") => a.leg.push(f["--leg=".len()..].to_string()),
            _ if f.starts_with("--io-path=") => {
                a.io_path = Some(PathBuf::from(&f["--io-path=".len()..]))
            }
            _ if f.starts_with("--live=") => g.live.live = Some(f["--live=".len()..].into()),
            _ if f.starts_with("--metrics-listen=") => {
                g.live.metrics_listen = Some(f["--metrics-listen=".len()..].into())
            }
            _ if f.starts_with("--hlog=") => {
                g.live.hlog = Some(PathBuf::from(&f["--hlog=".len()..]))
            }
            _ if f.starts_with("--progress=") => {
                g.live.progress = Some(f["--progress=".len()..].into())
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
    let study = crate::study::load(&what)?;
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
    let study = crate::study::load(path)?;
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

fn list(g: &GlobalArgs) -> Result<(), AppError> {
    if g.json {
        let names = crate::study::builtin::names();
        return print(&(serde_json::to_string_pretty(&names).unwrap_or_default() + "\n"));
    }
    let env = crate::env::Environment::collect();
    let archive = crate::archive::Archive::open(g.results.as_deref())?;
    print(&crate::study::plan::catalog(&env, archive.root())?)
}

fn run_study(
    g: &GlobalArgs,
    study: &Study,
    args: &StudyArgs,
    flags: &[String],
) -> Result<(), AppError> {
    let ran = match crate::study::run::run(g, study, args, flags)? {
        Done::Plan(text) => return print(&text),
        Done::Ran(ran) => ran,
    };
    if g.json {
        let value = serde_json::json!({
            "study": study.name,
            "study_run": ran.study_run,
            "answer": crate::study::answer_json::answer(&ran.answer),
            "runs": ran.records,
        });
        let text =
            serde_json::to_string_pretty(&value).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))?;
    } else {
        print(&crate::study::summary::summary(&ran.answer))?;
    }
    if !ran.records.is_empty() {
        let options = crate::report::Options {
            study: Some(ran.answer.clone()),
            ..Default::default()
        };
        write_report(
            g,
            &ran.archive,
            &ran.records,
            &options,
            "'perflab report --study last' writes it again",
        )?;
    }
    ran.end?;
    let failed = ran.answer.failed_shapes();
    if args.check_shapes && failed > 0 {
        return Err(AppError::Failed(format!(
            "{failed} shape check(s) failed (--check-shapes)"
        )));
    }
    Ok(())
}
