//! `perflab olap [all|prepare|run|cleanup]`: the star schema's load, aggregate and query
//! phases on a database.
//!
//! `all` runs the three phases as one run (steps `phase=load`, `phase=aggregate`, then
//! `phase=query` at each client count) and drops the tables; `prepare` runs the first two
//! and keeps them; `run` runs the query phase against tables a prepare left (the data is
//! generated again from the seed perflab recorded beside them, for the answers); `cleanup`
//! drops what perflab made.

use super::args::OlapArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::sql::backend::Backend;
use crate::sql::schema as meta;
use crate::sql::sql::{Conn, DbError};
use crate::sql::sqlite::SqliteSettings;
use crate::sql::target::{self, Target};
use crate::vocab::SpecError;
use crate::vocab::units::{format_bytes, parse_count};
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::kind::Host;
use crate::workload::olap::queries::QueryKind;
use crate::workload::olap::{OlapSpec, Phase, WORKLOAD, schema};
use crate::workload::run_args::Action;
use crate::workload::{RateScope, RunSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes of flat file per sales row (about 40), with room to spare.
const FILE_BYTES_PER_ROW: f64 = 48.0;
/// Bytes an SQLite file takes per sales row with the summaries, with room for the WAL.
const SQLITE_BYTES_PER_ROW: f64 = 80.0;
/// The largest fact table accepted.
const MAX_ROWS: u64 = 1 << 36;

/// `perflab olap`.
pub fn olap(host: &dyn Host, args: &OlapArgs) -> Result<(), AppError> {
    if args.action == Action::Cleanup {
        return cleanup(host, args);
    }
    let env = Environment::collect();
    let spec = olap_spec(args, &env)?;
    host.run(&spec, env, true).map(|_| ())
}

fn count(option: &str, text: &str, max: u64, hint: &str) -> Result<u64, SpecError> {
    let n = parse_count(option, text)?;
    if n == 0 || n > max {
        return Err(SpecError::new(option, text, hint));
    }
    Ok(n)
}

/// `--mix rollup=2,slice=1`: kinds and weights (a kind alone weighs 1).
fn mix(text: &str) -> Result<Vec<(QueryKind, u64)>, SpecError> {
    let hint = "kinds rollup, drill, slice, topn with weights, e.g. rollup=2,slice=1";
    let mut out: Vec<(QueryKind, u64)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, weight) = item.split_once('=').unwrap_or((item, "1"));
        let kind = QueryKind::parse(name).ok_or_else(|| SpecError::new("mix", item, hint))?;
        let weight: u64 = weight
            .trim()
            .parse()
            .ok()
            .filter(|w| *w <= 1_000_000)
            .ok_or_else(|| SpecError::new("mix", item, hint))?;
        if out.iter().any(|(k, _)| *k == kind) {
            return Err(SpecError::new("mix", item, "each kind once"));
        }
        if weight > 0 {
            out.push((kind, weight));
        }
    }
    if out.is_empty() {
        return Err(SpecError::new("mix", text, hint));
    }
    Ok(out)
}

/// The database, and the temporary directory perflab makes for the flat files (and the
/// default SQLite file).
fn target(args: &OlapArgs, temp_dir: &Path) -> Result<Target, AppError> {
    let sqlite = SqliteSettings {
        journal_mode: "wal".into(),
        synchronous: "normal".into(),
        page_size: None,
    };
    let (set, swept) = target::swept_settings(&args.sql.set)?;
    if let Some(s) = swept.first() {
        // OLAP's steps are its phases; a setting crossed with them is not a curve.
        return Err(AppError::Usage(format!(
            "--set {}: olap takes one value per setting (its steps are its phases); run it once per value",
            s.name().trim_start_matches("set.")
        )));
    }
    let op_timeout = target::op_timeout(&args.sql.op_timeout)?;
    let query_mode = args.query.mode().map_err(AppError::Usage)?;
    match args.target.as_deref() {
        None => {
            target::embedded_mode(query_mode)?;
            if !set.is_empty() {
                return Err(AppError::Usage(
                    "--set is for servers; give --target postgres://... or mysql://...".into(),
                ));
            }
            let path = temp_dir.join("olap.db");
            Ok(Target {
                tls: None,
                query_mode: None,
                shown: format!("sqlite://{}", path.display()),
                backend: Backend::Sqlite {
                    path,
                    settings: sqlite,
                },
            })
        }
        Some(url) => Ok(target::database(url, set, op_timeout, &sqlite, query_mode)?),
    }
}

fn temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!("perflab-olap-{}", std::process::id()))
}

/// What a database holds of perflab's OLAP tables: refuses foreign tables and other
/// workloads' (for a load), or anything but a complete prepare (for `run`), whose rows and
/// seed it returns.
fn look(t: &Target, phases: &[Phase]) -> Result<Option<(u64, u64)>, AppError> {
    if t.backend.is_new_file() {
        if phases.contains(&Phase::Load) {
            return Ok(None);
        }
        return Err(not_prepared(t));
    }
    let mut c = t.open(true, &looking())?;
    let what = |e: DbError| AppError::Usage(format!("--target {}: {e}", t.shown));
    let found = meta::found(&mut *c, &schema::LOADED).map_err(what)?;
    let summaries_foreign = found.ours.is_none()
        && crate::sql::sql::count_tables(&mut *c, &schema::SUMMARIES.map(|s| s.name))
            .map_err(what)?
            > 0;
    if found.foreign || summaries_foreign {
        return Err(AppError::Usage(format!(
            "refusing to load into {}: it holds tables perflab did not create ({}); use another --target, or drop them yourself",
            t.shown,
            schema::known_tables().join(", ")
        )));
    }
    if let Some((workload, _)) = &found.ours
        && workload != WORKLOAD
    {
        return Err(AppError::Usage(format!(
            "{} holds perflab's {workload} tables: one perflab workload per database; clean them up with perflab's {workload} command, or use another database",
            t.shown
        )));
    }
    if phases.contains(&Phase::Load) {
        return Ok(None);
    }
    match found.ours {
        Some((_, rows)) if found.complete => {
            let seed = meta::recorded(&mut *c, "seed")
                .map_err(what)?
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| not_prepared(t))?;
            Ok(Some((rows, seed)))
        }
        _ => Err(not_prepared(t)),
    }
}

fn not_prepared(t: &Target) -> AppError {
    AppError::Usage(format!(
        "{} holds no complete OLAP tables; run 'perflab olap prepare --target {}' first",
        t.shown, t.shown
    ))
}

/// Refuses (exit 2) a load whose flat files, or SQLite file, would not fit.
fn refuse_full_disk(t: &Target, rows: u64, temp_dir: &Path) -> Result<(), AppError> {
    let mut need = vec![(
        temp_dir.parent().unwrap_or(temp_dir).to_path_buf(),
        rows as f64 * FILE_BYTES_PER_ROW,
        "the flat files",
    )];
    if let Backend::Sqlite { path, .. } = &t.backend {
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.exists() {
            dir
        } else {
            dir.parent().unwrap_or(dir)
        };
        need.push((
            dir.to_path_buf(),
            rows as f64 * SQLITE_BYTES_PER_ROW,
            "the database",
        ));
    }
    for (dir, bytes, what) in need {
        if let Ok(space) = crate::engine::sys::space(&dir)
            && bytes > space.free_bytes as f64
        {
            return Err(AppError::Usage(format!(
                "{what} need about {} in {} and {} is free: give fewer --rows (or TMPDIR elsewhere)",
                format_bytes(bytes as u64),
                dir.display(),
                format_bytes(space.free_bytes)
            )));
        }
    }
    Ok(())
}

/// The run specification for `all`, `prepare` and `run`.
pub fn olap_spec(args: &OlapArgs, env: &Environment) -> Result<RunSpec, AppError> {
    let phases = match args.action {
        Action::Run => vec![Phase::Query],
        Action::Prepare => vec![Phase::Load, Phase::Aggregate],
        _ => vec![Phase::Load, Phase::Aggregate, Phase::Query],
    };
    if args.action == Action::Run && args.target.is_none() {
        return Err(AppError::Usage(
            "olap run needs --target: the database 'olap prepare --target ...' loaded".into(),
        ));
    }
    let cpus = env.cpu.logical_cpus.unwrap_or(1).max(1) as u64;
    let mut rows = count(
        "rows",
        &args.rows,
        MAX_ROWS,
        "from 1 to 2^36 sales rows, e.g. 1m",
    )?;
    let files = count("files", &args.files, 10_000, "from 1 to 10000 files")?;
    let loaders = match &args.loaders {
        Some(l) => count("loaders", l, 256, "from 1 to 256 loaders")?,
        None => cpus,
    };
    let mix = mix(&args.mix)?;
    let mut data_seed = parse_count("seed", &args.run.seed)?;
    let dir = temp_dir();
    let t = target(args, &dir)?;
    if let Some((recorded_rows, recorded_seed)) = look(&t, &phases)? {
        rows = recorded_rows;
        data_seed = recorded_seed;
    }
    if phases.contains(&Phase::Load) {
        refuse_full_disk(&t, rows, &dir)?;
        // Found while looking for a prepare that fails: a file here failed the run at its
        // prepare ("cannot create ...: File exists"), after the spec was built.
        if let Some(d) = args
            .files_dir
            .as_ref()
            .filter(|d| d.exists() && !d.is_dir())
        {
            return Err(AppError::Usage(format!(
                "--files-dir: {} is not a directory; give a new or empty directory",
                d.display()
            )));
        }
        if let Some(d) = &args.files_dir
            && let Some(f) = crate::workload::olap::data::plan_files(d, rows, files)
                .iter()
                .find(|f| f.path.exists())
        {
            return Err(AppError::Usage(format!(
                "--files-dir: {} exists and perflab does not overwrite files; give a new or empty directory",
                f.path.display()
            )));
        }
    }
    let server_settings = match &t.backend {
        Backend::Sqlite { .. } => Default::default(),
        b => b
            .settings(&looking())
            .map_err(|e| AppError::from(t.unreachable(e)))?,
    };
    let sqlite = t.backend.sqlite_settings();
    let query_mode = t.query_mode;
    let mut spec = OlapSpec::new(
        t.shown.clone(),
        phases,
        rows,
        files,
        loaders,
        mix,
        data_seed,
        Arc::new(t.backend),
        dir,
    );
    spec.sqlite = sqlite;
    spec.query_mode = query_mode;
    spec.server_settings = server_settings;
    spec.files_dir = args.files_dir.clone();
    spec.keep = args.sql.keep || args.action == Action::Prepare;
    Ok(build_spec(
        &args.run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: format!("1..{}:x2", cpus * 2),
            warmup: "1s",
            duration: "5s",
            rate_scope: RateScope::Total,
        },
    )?)
}

/// `cleanup`: drop what perflab made, nothing else.
fn cleanup(host: &dyn Host, args: &OlapArgs) -> Result<(), AppError> {
    let Some(_) = &args.target else {
        return Err(AppError::Usage(
            "olap cleanup needs --target, e.g. sqlite:///path/to/file.db".into(),
        ));
    };
    let t = target(args, &temp_dir())?;
    let note = |text: &str| {
        if !host.quiet() {
            eprintln!("{text}");
        }
    };
    if t.backend.is_new_file() {
        note(&format!(
            "cleanup: {} holds no tables perflab made",
            t.shown
        ));
        return Ok(());
    }
    let ours = meta::recorded(&mut *t.open(true, &host.stop())?, "workload")
        .map_err(|e| AppError::from(t.unreachable(e)))?;
    if ours.as_deref() != Some(WORKLOAD) {
        note(&format!(
            "cleanup: {} holds no OLAP tables perflab made",
            t.shown
        ));
        return Ok(());
    }
    let mut c: Box<dyn Conn> = t.open(false, &host.stop())?;
    meta::drop_ours(&mut *c, &schema::known_tables())
        .map_err(|e| AppError::Failed(format!("cleanup failed on {}: {e}", t.shown)))?;
    note(&format!(
        "cleanup: dropped perflab's OLAP tables from {}",
        t.shown
    ));
    Ok(())
}

/// The token for looking at a server before a run (its tables, its settings): one nothing
/// sets, since no Ctrl-C handler is installed yet and Ctrl-C still ends the process.
fn looking() -> crate::stop::Stop {
    crate::stop::Stop::new()
}
