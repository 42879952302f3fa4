//! `perflab scan [all|prepare|run|cleanup]`: Gray's scans on a database, and the native
//! ceiling beside them.
//!
//! With a database target (SQLite by default), `all` and `run` make two runs: first the
//! native ceiling (target `native`: the same tables, predicates and thread counts, from
//! memory), then the engine's, whose steps carry the ceiling's rows/s and the engine's share
//! of it. `--native off` skips the first; `--target native` runs it alone.

use super::args::ScanArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::record::RunRecord;
use crate::sql::backend::Backend;
use crate::sql::schema;
use crate::sql::sql::{Conn, DbError, Dialect, count_tables};
use crate::sql::sqlite::SqliteSettings;
use crate::sql::target::{self, Target};
use crate::vocab::sweep::parse_names;
use crate::vocab::units::{format_bytes, parse_count, parse_size};
use crate::vocab::{SpecError, Sweep, Switch};
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::kind::Host;
use crate::workload::phases::Phases;
use crate::workload::run_args::Action;
use crate::workload::scan::predicate::Predicate;
use crate::workload::scan::tables::{ScanTable, TableSize, known_tables};
use crate::workload::scan::{Cache, Ceilings, ScanSpec, load, server};
use crate::workload::{LoadSpec, RateScope, RunSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// SQLite files perflab creates for scans get 8 KiB pages: `page` rows stay whole in one.
const SQLITE_PAGE_SIZE: u32 = 8192;
/// Room an SQLite file needs beyond the row data (row headers, page slack, the WAL while
/// loading).
const SQLITE_OVERHEAD: f64 = 1.6;

/// What `--target` names.
enum Source {
    Native,
    Database {
        target: Target,
        temp_dir: Option<PathBuf>,
    },
}

/// `perflab scan`.
pub fn scan(host: &dyn Host, args: &ScanArgs) -> Result<(), AppError> {
    if matches!(args.action, Action::Prepare | Action::Cleanup) {
        return steps(host, args);
    }
    let env = Environment::collect();
    let mut spec = scan_spec(args, &env)?;
    let native = match spec.workload.get::<ScanSpec>() {
        Some(scan) if scan.backend.is_some() && args.native == Switch::On => {
            let mut native = spec.clone();
            native.workload = WorkloadSpec::new(scan.native());
            // The ceiling runs at full speed: no schedule, no load levels.
            native.load = LoadSpec::Closed {
                think: std::time::Duration::ZERO,
            };
            native.levels = None;
            Some(native)
        }
        _ => None,
    };
    if let Some(native) = native {
        // Under --json, stdout holds the engine's record alone; it names the ceiling's run.
        let record = host.run(&native, env.clone(), !host.json())?;
        if let Some(scan) = spec.workload.get::<ScanSpec>() {
            let mut scan = scan.clone();
            scan.ceilings = ceilings(&record);
            scan.native_run = Some(record.id.clone());
            spec.workload = WorkloadSpec::new(scan);
        }
    }
    host.run(&spec, env, true).map(|_| ())
}

/// The native ceiling's rows/s by table, predicate and threads.
fn ceilings(r: &RunRecord) -> Ceilings {
    let mut out = Ceilings::new();
    for s in &r.steps {
        let text = |k: &str| s.params.get(k).and_then(|v| v.as_str()).unwrap_or("");
        let (Some(t), Some(p), Some(threads)) = (
            ScanTable::parse(text("table")),
            Predicate::parse(text("predicate")),
            s.params.get("threads").and_then(|v| v.as_u64()),
        ) else {
            continue;
        };
        out.insert((t, p, threads), s.summary.headline.mean);
    }
    out
}

fn tables(args: &ScanArgs) -> Result<Sweep<ScanTable>, SpecError> {
    dedup(parse_names("table", &args.table, |w| {
        ScanTable::parse(w).ok_or_else(|| {
            SpecError::new("table", w, "use ten, hundred, thousand or page (or a list)")
        })
    })?)
}

fn predicates(args: &ScanArgs) -> Result<Sweep<Predicate>, SpecError> {
    dedup(parse_names("predicate", &args.predicate, |w| {
        Predicate::parse(w)
            .ok_or_else(|| SpecError::new("predicate", w, "use trivial or complex (or both)"))
    })?)
}

fn caches(args: &ScanArgs, native: bool) -> Result<Sweep<Cache>, SpecError> {
    let text = match (&args.cache, native) {
        (Some(t), _) => t.as_str(),
        (None, true) => "warm",
        (None, false) => "cold,warm",
    };
    let sweep = dedup(parse_names("cache", text, |w| {
        Cache::parse(w).ok_or_else(|| SpecError::new("cache", w, "use cold, warm or both"))
    })?)?;
    if native && sweep.values().contains(&Cache::Cold) {
        return Err(SpecError::new(
            "cache",
            text,
            "the native ceiling scans memory: it has no cold case; use --cache warm",
        ));
    }
    Ok(sweep)
}

/// A list without repeats, in the order given.
fn dedup<T: Clone + PartialEq>(s: Sweep<T>) -> Result<Sweep<T>, SpecError> {
    let mut values: Vec<T> = Vec::new();
    for v in s.values() {
        if !values.contains(v) {
            values.push(v.clone());
        }
    }
    Ok(Sweep::list(s.name(), values))
}

fn size(args: &ScanArgs) -> Result<TableSize, SpecError> {
    if let Some(rows) = &args.rows {
        let n = parse_count("rows", rows)?;
        if n == 0 || n > 1 << 40 {
            return Err(SpecError::new(
                "rows",
                rows,
                "from 1 to 2^40 rows per table",
            ));
        }
        return Ok(TableSize::Rows(n));
    }
    let b = parse_size("size", &args.size)?;
    if b == 0 || b > 1 << 50 {
        return Err(SpecError::new(
            "size",
            &args.size,
            "a size from 1 byte to 1 PiB, e.g. 64m",
        ));
    }
    Ok(TableSize::Bytes(b))
}

fn source(args: &ScanArgs, set: Vec<(String, String)>) -> Result<Source, AppError> {
    let sqlite = SqliteSettings {
        journal_mode: "wal".into(),
        synchronous: "normal".into(),
        page_size: Some(SQLITE_PAGE_SIZE),
    };
    let op_timeout = target::op_timeout(&args.sql.op_timeout)?;
    let query_mode = args.query.mode().map_err(AppError::Usage)?;
    match args.target.as_deref() {
        Some("native") => target::no_protocol(query_mode, "the native scan sends no statements")?,
        None => target::embedded_mode(query_mode)?,
        Some(_) => {}
    }
    match args.target.as_deref() {
        Some("native") => {
            if !set.is_empty() {
                return Err(AppError::Usage(
                    "--set is for servers; the native ceiling has no settings".into(),
                ));
            }
            Ok(Source::Native)
        }
        None => {
            if !set.is_empty() {
                return Err(AppError::Usage(
                    "--set is for servers; give --target postgres://... or mysql://...".into(),
                ));
            }
            let dir = std::env::temp_dir().join(format!("perflab-scan-{}", std::process::id()));
            let path = dir.join("scan.db");
            Ok(Source::Database {
                target: Target {
                    tls: None,
                    query_mode: None,
                    shown: format!("sqlite://{}", path.display()),
                    backend: Backend::Sqlite {
                        path,
                        settings: sqlite,
                    },
                },
                temp_dir: Some(dir),
            })
        }
        Some(url) => Ok(Source::Database {
            target: target::database(url, set, op_timeout, &sqlite, query_mode)?,
            temp_dir: None,
        }),
    }
}

/// Refuses (exit 2) a database holding tables of the scan's names that perflab did not
/// create, or perflab's tables of another workload.
fn refuse_foreign(t: &Target, conn: &mut dyn Conn) -> Result<(), AppError> {
    let decl: Vec<schema::Table> = ScanTable::ALL.iter().map(|s| *s.table()).collect();
    let found = schema::found(conn, &decl)
        .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))?;
    if found.foreign {
        return Err(AppError::Usage(format!(
            "refusing to load into {}: it holds tables perflab did not create ({}); use another --target, or drop them yourself",
            t.shown,
            known_tables().join(", ")
        )));
    }
    if let Some((workload, _)) = &found.ours
        && workload != load::WORKLOAD
    {
        return Err(AppError::Usage(format!(
            "{} holds perflab's {workload} tables: one perflab workload per database; run 'perflab oltp cleanup --workload {workload} --target {}' or use another database",
            t.shown, t.shown
        )));
    }
    Ok(())
}

/// An SQLite file whose row data would not fit in its directory's free space.
fn refuse_full_disk(
    path: &std::path::Path,
    tables: &[ScanTable],
    size: TableSize,
) -> Result<(), AppError> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let probe = if dir.exists() {
        dir
    } else {
        dir.parent().unwrap_or(dir)
    };
    let need: f64 = tables
        .iter()
        .map(|t| size.data_bytes(*t) as f64)
        .sum::<f64>()
        * SQLITE_OVERHEAD;
    if let Ok(space) = crate::engine::sys::space(probe)
        && need > space.free_bytes as f64
    {
        return Err(AppError::Usage(format!(
            "the tables need about {} in {} and {} is free: give a smaller --size (or --rows), or --target sqlite:///elsewhere.db",
            format_bytes(need as u64),
            probe.display(),
            format_bytes(space.free_bytes)
        )));
    }
    Ok(())
}

/// The run specification for `all` and `run` (the engine's run, or the native ceiling's with
/// `--target native`).
pub fn scan_spec(args: &ScanArgs, env: &Environment) -> Result<RunSpec, AppError> {
    let (fixed, swept) = target::swept_settings(&args.sql.set)?;
    let source = source(args, fixed)?;
    let native = matches!(source, Source::Native);
    let (tables, predicates) = (tables(args)?, predicates(args)?);
    let cache = caches(args, native)?;
    let size = size(args)?;
    let spec = match source {
        Source::Native => ScanSpec::new(
            "native".into(),
            tables,
            predicates,
            cache,
            Vec::new(),
            size,
            None,
            Phases::All,
        )
        .native(),
        Source::Database { target, temp_dir } => {
            let phases = if args.action == Action::Run {
                Phases::Run
            } else {
                Phases::All
            };
            if phases == Phases::Run && temp_dir.is_some() {
                return Err(AppError::Usage(
                    "scan run needs --target: the database 'scan prepare --target ...' loaded"
                        .into(),
                ));
            }
            if let Backend::Sqlite { path, .. } = &target.backend
                && phases == Phases::All
            {
                refuse_full_disk(path, tables.values(), size)?;
            }
            let new_file = target.backend.is_new_file() || temp_dir.is_some();
            let found = if new_file {
                Found::default()
            } else {
                look(&target, args, tables.values(), phases)?
            };
            target.try_settings(&swept, &looking())?;
            let sqlite = target.backend.sqlite_settings();
            let query_mode = target.query_mode;
            let mut spec = ScanSpec::new(
                target.shown.clone(),
                tables,
                predicates,
                cache,
                swept,
                found.size.unwrap_or(size),
                Some(Arc::new(target.backend)),
                phases,
            );
            spec.sqlite = sqlite;
            spec.query_mode = query_mode;
            spec.server_settings = found.server_settings;
            spec.server_cache_bytes = found.server_cache_bytes;
            spec.keep = args.sql.keep;
            spec.temp_dir = temp_dir;
            spec
        }
    };
    let cpus = env.cpu.logical_cpus.unwrap_or(1).max(1);
    let threads = if cpus > 1 {
        format!("1,{cpus}")
    } else {
        "1".into()
    };
    Ok(build_spec(
        &args.run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads,
            warmup: "0s",
            duration: "3s",
            rate_scope: RateScope::Total,
        },
    )?)
}

/// What an existing database tells before a run: the tables' size perflab recorded (`run`),
/// the server's cache and parallel-scan setting.
#[derive(Default)]
struct Found {
    size: Option<TableSize>,
    server_settings: BTreeMap<String, String>,
    server_cache_bytes: Option<u64>,
}

/// Looks at the database without changing it: refuses foreign tables, and for `run` tables
/// perflab did not prepare completely.
fn look(
    target: &Target,
    args: &ScanArgs,
    tables: &[ScanTable],
    phases: Phases,
) -> Result<Found, AppError> {
    let mut c = target.open(true, &looking())?;
    let what = |e: DbError| AppError::Usage(format!("--target {}: {e}", target.shown));
    refuse_foreign(target, &mut *c)?;
    let mut found = Found::default();
    if phases == Phases::Run {
        let recorded = load::recorded_size(&mut *c).map_err(what)?;
        let complete = schema::recorded(&mut *c, "complete")
            .map_err(what)?
            .is_some();
        let names: Vec<&str> = tables.iter().map(|t| t.sql_name()).collect();
        let present = count_tables(&mut *c, &names).map_err(what)?;
        match recorded {
            Some(s) if complete && present == names.len() as i64 => found.size = Some(s),
            _ => {
                return Err(AppError::Usage(format!(
                    "{} holds no complete scan tables for --table {}; run 'perflab scan prepare --table {} --target {}' first",
                    target.shown, args.table, args.table, target.shown
                )));
            }
        }
    }
    if let Some((name, shown, bytes)) = server::cache(&mut *c).map_err(what)? {
        found.server_settings.insert(name, shown);
        found.server_cache_bytes = Some(bytes);
    }
    if c.dialect() == Dialect::Postgres
        && let Ok(Some(v)) = c.query_text("SHOW max_parallel_workers_per_gather")
    {
        found
            .server_settings
            .insert("max_parallel_workers_per_gather".into(), v);
    }
    Ok(found)
}

/// `prepare` and `cleanup`: load or drop the tables, no measurement.
pub fn steps(host: &dyn Host, args: &ScanArgs) -> Result<(), AppError> {
    let (fixed, _) = target::swept_settings(&args.sql.set)?;
    let target = match source(args, fixed)? {
        Source::Database {
            target,
            temp_dir: None,
        } => target,
        // Found by tests/fuzz.rs: with `--target native` the line said --target was missing.
        Source::Native => {
            return Err(AppError::Usage(
                "--target native scans rows in memory, with no tables to prepare or clean up; give scan prepare and cleanup a database, e.g. sqlite:///path/to/file.db".into(),
            ));
        }
        _ => {
            return Err(AppError::Usage(
                "scan prepare and cleanup need --target, e.g. sqlite:///path/to/file.db".into(),
            ));
        }
    };
    let note = |text: &str| {
        if !host.quiet() {
            eprintln!("{text}");
        }
    };
    match args.action {
        Action::Prepare => {
            let tables = tables(args)?;
            let size = size(args)?;
            if let Backend::Sqlite { path, .. } = &target.backend {
                refuse_full_disk(path, tables.values(), size)?;
            }
            if !target.backend.is_new_file() {
                refuse_foreign(&target, &mut *target.open(true, &host.stop())?)?;
            }
            let mut c = target.open(false, &host.stop())?;
            if let Err(e) = load::load(&target.backend, &mut *c, tables.values(), size, &note) {
                let _ = schema::drop_ours(&mut *c, &known_tables());
                return Err(AppError::Failed(format!(
                    "prepare failed on {}: {e}",
                    target.shown
                )));
            }
            Ok(())
        }
        Action::Cleanup => {
            if target.backend.is_new_file() {
                note(&format!(
                    "cleanup: {} holds no tables perflab made",
                    target.shown
                ));
                return Ok(());
            }
            let ours = load::recorded_size(&mut *target.open(true, &host.stop())?)
                .map_err(|e| AppError::from(target.unreachable(e)))?
                .is_some();
            if !ours {
                note(&format!(
                    "cleanup: {} holds no scan tables perflab made",
                    target.shown
                ));
                return Ok(());
            }
            let mut c = target.open(false, &host.stop())?;
            schema::drop_ours(&mut *c, &known_tables()).map_err(|e| {
                AppError::Failed(format!("cleanup failed on {}: {e}", target.shown))
            })?;
            note(&format!(
                "cleanup: dropped perflab's scan tables from {}",
                target.shown
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The token for looking at a server before a run (its tables, its settings): one nothing
/// sets, since no Ctrl-C handler is installed yet and Ctrl-C still ends the process.
fn looking() -> crate::stop::Stop {
    crate::stop::Stop::new()
}
