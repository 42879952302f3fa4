//! `perflab oltp [all|prepare|run|cleanup]`: DebitCredit or order entry on a database, in one
//! go or in sysbench-style steps.

use super::args::OltpArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::sql::backend::Backend;
use crate::sql::query_mode::QueryMode;
use crate::sql::schema::{self, Found};
use crate::sql::shard_db::{self, ShardDatabases};
use crate::sql::sql::{Conn, DbError, Dialect, count_tables};
use crate::sql::sqlite::SqliteSettings;
use crate::sql::target::{Target, database, embedded_mode, op_timeout, swept_settings};
use crate::target::url::TargetUrl;
use crate::vocab::SpecError;
use crate::vocab::Sweep;
use crate::vocab::notes::note;
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::parse_count;
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::kind::Host;
use crate::workload::oltp::shards;
use crate::workload::oltp::{Mix, OltpSpec, debitcredit, script, tpcc, txlog};
use crate::workload::phases::Phases;
use crate::workload::run_args::Action;
use crate::workload::{RateScope, RunSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The shards, in order, and the temporary directory of the default SQLite files.
struct Targets {
    shards: Vec<Target>,
    temp_dir: Option<PathBuf>,
    /// `--shards N` with one server URL: the databases for the shards.
    databases: Option<ShardDatabases>,
}

/// Most shards accepted: the sharding study went to 32 instances.
const MAX_SHARDS: u64 = 256;

/// `FILE.db` as shard `i` of several: `FILE-i.db`.
fn shard_path(path: &std::path::Path, i: u64) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{i}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{i}"),
    };
    path.with_file_name(name)
}

/// `--shards N` or a sweep of shard counts.
fn shard_sweep(args: &OltpArgs) -> Result<Option<Sweep<u64>>, AppError> {
    let Some(text) = args.shards.as_deref() else {
        return Ok(None);
    };
    let sweep = parse_u64("shards", text, parse_count)?;
    if sweep.values().iter().any(|&n| n == 0 || n > MAX_SHARDS) {
        return Err(SpecError::new("shards", text, "from 1 to 256 shards").into());
    }
    Ok(Some(sweep))
}

fn targets(args: &OltpArgs) -> Result<Targets, AppError> {
    // A sweep (`1,2,4`) prepares the most and uses the first N at each step.
    let shards = shard_sweep(args)?.map(|s| s.values().iter().copied().max().unwrap_or(1));
    let sqlite = sqlite_settings(args)?;
    if args.target.is_empty() {
        embedded_mode(query_mode(args)?)?;
        let dir = std::env::temp_dir().join(format!("perflab-oltp-{}", std::process::id()));
        let path = dir.join("bank.db");
        let paths = match shards {
            None | Some(1) => vec![path],
            Some(n) => (1..=n).map(|i| shard_path(&path, i)).collect(),
        };
        return Ok(Targets {
            shards: paths
                .into_iter()
                .map(|path| Target {
                    tls: None,
                    query_mode: None,
                    shown: format!("sqlite://{}", path.display()),
                    backend: Backend::Sqlite {
                        path,
                        settings: sqlite.clone(),
                    },
                })
                .collect(),
            temp_dir: Some(dir),
            databases: None,
        });
    }
    let mut out = Vec::new();
    for url in &args.target {
        out.push(target(args, url, &sqlite)?);
    }
    match shards {
        Some(n) if n > 1 && out.len() == 1 => {
            let base = out.remove(0);
            if let Backend::Sqlite { path, settings } = &base.backend {
                for i in 1..=n {
                    let path = shard_path(path, i);
                    out.push(Target {
                        tls: None,
                        query_mode: None,
                        shown: format!("sqlite://{}", path.display()),
                        backend: Backend::Sqlite {
                            path,
                            settings: settings.clone(),
                        },
                    });
                }
            } else {
                // One server: databases <db>_1 ... <db>_N beside the one the URL names.
                let url = &args.target[0];
                let database = url
                    .parse::<TargetUrl>()
                    .ok()
                    .and_then(|u| u.database)
                    .unwrap_or_default();
                let mut names = Vec::new();
                for i in 1..=n {
                    let Some(shard) = shard_db::shard_url(url, &database, i) else {
                        return Err(AppError::Usage(format!(
                            "--shards {n} on {}: the URL must name a database of letters, digits and _ (shards are <database>_1 ... <database>_{n})",
                            base.shown
                        )));
                    };
                    names.push(format!("{database}_{i}"));
                    out.push(target(args, &shard, &sqlite)?);
                }
                return Ok(Targets {
                    shards: out,
                    temp_dir: None,
                    databases: Some(ShardDatabases {
                        creator: Arc::new(base.backend),
                        names,
                        created: Vec::new(),
                    }),
                });
            }
        }
        Some(n) if n as usize != out.len() && out.len() > 1 => {
            return Err(AppError::Usage(format!(
                "--shards {n} with {} --target URLs: give one or the other",
                out.len()
            )));
        }
        _ => {}
    }
    for (i, t) in out.iter().enumerate() {
        if out[..i].iter().any(|o| o.shown == t.shown) {
            return Err(AppError::Usage(format!(
                "--target {} is given twice: every shard needs a database of its own",
                t.shown
            )));
        }
    }
    Ok(Targets {
        shards: out,
        temp_dir: None,
        databases: None,
    })
}

fn target(args: &OltpArgs, url: &str, sqlite: &SqliteSettings) -> Result<Target, AppError> {
    Ok(database(
        url,
        swept_settings(&args.sql.set)?.0,
        op_timeout(&args.sql.op_timeout)?,
        sqlite,
        query_mode(args)?,
    )?)
}

fn query_mode(args: &OltpArgs) -> Result<QueryMode, AppError> {
    args.query.mode().map_err(AppError::Usage)
}

fn sqlite_settings(args: &OltpArgs) -> Result<SqliteSettings, SpecError> {
    let journal = args.sqlite_journal_mode.to_ascii_lowercase();
    if !SqliteSettings::JOURNAL_MODES.contains(&journal.as_str()) {
        return Err(SpecError::new(
            "sqlite-journal-mode",
            &args.sqlite_journal_mode,
            "use wal, delete, truncate, persist, memory or off",
        ));
    }
    let sync = args.sqlite_synchronous.to_ascii_lowercase();
    if !SqliteSettings::SYNCHRONOUS.contains(&sync.as_str()) {
        return Err(SpecError::new(
            "sqlite-synchronous",
            &args.sqlite_synchronous,
            "use full, normal, off or extra",
        ));
    }
    Ok(SqliteSettings {
        journal_mode: journal,
        synchronous: sync,
        page_size: None,
    })
}

fn mix(args: &OltpArgs) -> Result<Mix, AppError> {
    let mix = Mix::parse(&args.workload).ok_or_else(|| {
        SpecError::new(
            "workload",
            &args.workload,
            "use debitcredit (TPC-B), orderentry, tpcc or a sysbench test (oltp_read_write, oltp_point_select, ...)",
        )
    })?;
    if mix != Mix::Sysbench && !args.sysbench.is_empty() {
        return Err(AppError::Usage(format!(
            "--sysbench is for sysbench's tests (--workload {}), not {}",
            super::sysbench::Test::names(),
            mix.name()
        )));
    }
    if mix != Mix::Tpcc {
        for (given, option) in [
            (args.warehouses.is_some(), "--warehouses"),
            (args.mode.is_some(), "--mode"),
            (args.wait_factor.is_some(), "--wait-factor"),
        ] {
            if given {
                return Err(AppError::Usage(format!(
                    "{option} is for --workload tpcc; {}",
                    match mix {
                        Mix::Sysbench => "sysbench's tests take --sysbench table_size=N".into(),
                        _ => format!("{} takes --scale", mix.name()),
                    }
                )));
            }
        }
    }
    Ok(mix)
}

/// tpcc's warehouses: `--warehouses`, else `--scale`; each from 1 to the most accepted.
fn warehouses(args: &OltpArgs) -> Result<Sweep<u64>, SpecError> {
    let (name, text) = match &args.warehouses {
        Some(w) => ("warehouses", w.as_str()),
        None => ("scale", args.scale.as_str()),
    };
    let sweep = parse_u64(name, text, parse_count)?;
    if sweep
        .values()
        .iter()
        .any(|&w| w == 0 || w > tpcc::MAX_WAREHOUSES)
    {
        return Err(SpecError::new(
            name,
            text,
            &format!(
                "from 1 to {} warehouses, e.g. 1,2,4 or 1..8:x2",
                tpcc::MAX_WAREHOUSES
            ),
        ));
    }
    Ok(sweep.named("warehouses"))
}

fn tpcc_mode(args: &OltpArgs) -> Result<tpcc::Mode, SpecError> {
    match args.mode.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("throughput") => Ok(tpcc::Mode::Throughput),
        Some("spec") => Ok(tpcc::Mode::Spec),
        Some(_) => Err(SpecError::new(
            "mode",
            args.mode.as_deref().unwrap_or_default(),
            "use throughput or spec",
        )),
    }
}

fn wait_factor(args: &OltpArgs) -> Result<f64, SpecError> {
    let Some(text) = &args.wait_factor else {
        return Ok(1.0);
    };
    match text.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 100.0 => Ok(f),
        _ => Err(SpecError::new(
            "wait-factor",
            text,
            "a factor above 0 and up to 100, e.g. 0.01 for short tests",
        )),
    }
}

/// The scale to load: tpcc's largest warehouse count, or `--scale`.
fn scale(args: &OltpArgs, mix: Mix) -> Result<u64, SpecError> {
    if mix == Mix::Tpcc {
        return Ok(warehouses(args)?
            .values()
            .iter()
            .copied()
            .max()
            .unwrap_or(1));
    }
    let s = parse_count("scale", &args.scale)?;
    if s == 0 || s > mix.max_scale() {
        return Err(SpecError::new(
            "scale",
            &args.scale,
            &format!("a scale from 1 to {} ({})", mix.max_scale(), mix.unit()),
        ));
    }
    Ok(s)
}

/// What the database holds of the workload's tables, changing nothing.
fn look(t: &Target, mix: Mix) -> Result<Found, AppError> {
    if t.backend.is_new_file() {
        return Ok(Found {
            foreign: false,
            ours: None,
            complete: false,
        });
    }
    schema::found(&mut *t.open(true, &looking())?, mix.tables())
        .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))
}

/// The scale of a bank `pgbench -i` made (its four tables, none of them perflab's), if the
/// database holds one: pgbench's own reading, the number of branches. DebitCredit's tables
/// are pgbench's, so `oltp run` works on them as they are.
fn pgbench_bank(t: &Target, mix: Mix, found: &Found) -> Result<Option<u64>, AppError> {
    if mix != Mix::Debitcredit || !found.foreign || found.ours.is_some() {
        return Ok(None);
    }
    let names: Vec<&str> = mix.tables().iter().map(|t| t.name).collect();
    let asked = |e: DbError| AppError::Usage(format!("--target {}: {e}", t.shown));
    let mut c = t.open(true, &looking())?;
    if count_tables(&mut *c, &names).map_err(asked)? < names.len() as i64 {
        return Ok(None);
    }
    let branches = c
        .query_text("SELECT count(*) FROM pgbench_branches")
        .map_err(asked)?
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let accounts = c
        .query_text("SELECT count(*) FROM pgbench_accounts")
        .map_err(asked)?
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if branches == 0 || accounts != branches * debitcredit::ACCOUNTS_PER_SCALE {
        return Err(AppError::Usage(format!(
            "{} holds pgbench's tables, but {branches} branches and {accounts} accounts are not a bank of pgbench's shape (100,000 accounts a branch); initialise it again with 'pgbench -i -s N'",
            t.shown
        )));
    }
    Ok(Some(branches))
}

/// Refuses (exit 2) a database that holds tables of the workload's names perflab did not
/// create.
fn refuse_foreign(t: &Target, mix: Mix) -> Result<(), AppError> {
    let found = look(t, mix)?;
    if let Some(scale) = pgbench_bank(t, mix, &found)? {
        return Err(AppError::Usage(format!(
            "{} holds pgbench's bank (pgbench -i, scale {scale}); perflab loads only where no such tables are: run on them as they are with 'perflab oltp run --target {}' (it changes balances and adds history rows, as pgbench does; it creates and drops nothing), or give another --target",
            t.shown, t.shown
        )));
    }
    if found.foreign {
        let names: Vec<&str> = mix.tables().iter().map(|t| t.name).collect();
        return Err(AppError::Usage(format!(
            "refusing to load into {}: it holds tables perflab did not create ({}); use another --target, or drop them yourself",
            t.shown,
            names.join(", ")
        )));
    }
    Ok(())
}

/// sysbench's test and options, for `--workload oltp_read_write` and the other tests.
fn sysbench_options(
    args: &OltpArgs,
    mix: Mix,
) -> Result<Option<Arc<super::sysbench::SysbenchOptions>>, AppError> {
    Ok(match mix {
        Mix::Sysbench => Some(Arc::new(super::sysbench::cmd::options(args)?)),
        _ => None,
    })
}

/// The run specification for `all` and `run`.
pub fn oltp_spec(args: &OltpArgs, _env: &Environment) -> Result<RunSpec, AppError> {
    let mix = mix(args)?;
    let sysbench = sysbench_options(args, mix)?;
    let builtins = builtins_asked(args);
    let asked = script::setup::Asked {
        files: &args.script,
        builtins: &builtins,
        defines: &args.define,
        max_tries: args.max_tries.as_deref(),
        per_statement: args.per_statement,
    };
    // A lone tpcb-like or select-only is perflab's own DebitCredit: the same statements,
    // with its books checked after every step.
    let lone = asked.lone_builtin();
    let script_mode = asked.any() && lone.is_none();
    if script_mode && mix != Mix::Debitcredit {
        return Err(AppError::Usage(format!(
            "scripts run instead of --workload {}: give one or the other",
            mix.name()
        )));
    }
    if args.run.think.is_some() && args.run.rate.is_some() {
        return Err(AppError::Usage("give --think or --rate, not both".into()));
    }
    let ts = targets(args)?;
    // A setting given several values sweeps (`--set synchronous_commit=on,off`): each step's
    // sessions connect with its value; a value a server refuses stops the run here.
    let (_, swept) = swept_settings(&args.sql.set)?;
    for t in &ts.shards {
        t.try_settings(&swept, &looking())?;
    }
    let mut scale = match &sysbench {
        Some(o) => u64::from(o.table_size),
        None => scale(args, mix)?,
    };
    // Whose tables the run works on, when not perflab's.
    let mut tables_of = None;
    let phases = match args.action {
        Action::Run if script_mode => {
            if ts.temp_dir.is_some() {
                return Err(AppError::Usage(
                    "scripts with 'oltp run' need --target: the database they work on".into(),
                ));
            }
            Phases::Run
        }
        Action::Run => {
            // sysbench's tests work on one database (`options` refuses shards).
            let (s, by) = match &sysbench {
                Some(o) if ts.temp_dir.is_none() => {
                    (scale, super::sysbench::cmd::for_run(&ts.shards[0], o)?)
                }
                _ => prepared_scale(args, &ts, mix, scale, lone)?,
            };
            scale = s;
            tables_of = by;
            Phases::Run
        }
        _ => {
            // Shard databases not made yet hold nothing to look at; the run creates them.
            let missing = match &ts.databases {
                Some(d) => shard_db::missing(&d.creator, &d.names, &looking())
                    .map_err(|e| AppError::from(ts.shards[0].unreachable(e)))?,
                None => Vec::new(),
            };
            for (i, t) in ts.shards.iter().enumerate() {
                let name = ts.databases.as_ref().and_then(|d| d.names.get(i));
                if !name.is_some_and(|n| missing.contains(n)) {
                    match &sysbench {
                        Some(o) => super::sysbench::cmd::refuse_foreign(t, o)?,
                        None => refuse_foreign(t, mix)?,
                    }
                }
            }
            Phases::All
        }
    };
    let first = &ts.shards[0];
    let settings_from = match &ts.databases {
        // The shard databases may not exist yet: ask the server through the URL's own.
        Some(d) => &*d.creator,
        None => &first.backend,
    };
    let server_settings: BTreeMap<String, String> = match settings_from {
        Backend::Sqlite { .. } => BTreeMap::new(),
        b => b
            .settings(&looking())
            .map_err(|e| AppError::from(first.unreachable(e)))?,
    };
    let sqlite = first.backend.sqlite_settings();
    let mut run = args.run.clone();
    let tpcc = match mix {
        Mix::Tpcc => Some(tpcc_options(args, &ts, phases, scale, &mut run)?),
        _ => None,
    };
    let scripts = match script_mode {
        false => None,
        true => Some(Arc::new(script_set(args, &asked, first, phases, scale)?)),
    };
    let script_names = match &scripts {
        Some(set) => (set.scripts.iter())
            .map(|s| format!("{}@{}", s.name, s.weight))
            .collect(),
        None => Vec::new(),
    };
    let txlog = transaction_log(args)?;
    let latency_limit = latency_limit(args)?;
    let spec = OltpSpec {
        latency_limit,
        txlog,
        connect_each: args.connect_each,
        abort_on_error: args.abort_on_error,
        script_names,
        scripts,
        sysbench,
        mix,
        select_only: args.select_only || lone == Some("select-only"),
        scale,
        target: first.shown.clone(),
        tls: first.tls.clone(),
        query_mode: first.query_mode,
        shards: if ts.shards.len() > 1 {
            ts.shards.iter().map(|t| t.shown.clone()).collect()
        } else {
            Vec::new()
        },
        shards_in_play: shard_sweep(args)?.filter(|s| s.is_swept()),
        sqlite,
        server_settings,
        tables_of,
        phases,
        keep: args.sql.keep,
        backends: ts.shards.into_iter().map(|t| Arc::new(t.backend)).collect(),
        shard_databases: ts.databases,
        temp_dir: ts.temp_dir,
        ledger: Default::default(),
        tpcc,
        set: swept,
    };
    Ok(build_spec(
        &run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: "1,2,4".into(),
            warmup: "1s",
            duration: "5s",
            rate_scope: RateScope::Worker,
        },
    )?)
}

/// `oltp run` on what is there: the scale of the bank a target holds (perflab's prepare or
/// `pgbench -i`, the same on every shard), and whose tables they are when not perflab's.
fn prepared_scale(
    args: &OltpArgs,
    ts: &Targets,
    mix: Mix,
    mut scale: u64,
    lone: Option<&str>,
) -> Result<(u64, Option<String>), AppError> {
    let mut tables_of = None;
    if ts.temp_dir.is_some() {
        return Err(AppError::Usage(
            "oltp run needs --target: the database 'oltp prepare --target ...' loaded".into(),
        ));
    }
    let mut scales = Vec::new();
    for t in &ts.shards {
        let found = look(t, mix)?;
        if let Some(s) = pgbench_bank(t, mix, &found)? {
            let what = match args.select_only || lone == Some("select-only") {
                true => "the run only reads its balances",
                false => "the run changes its balances and adds history rows, as pgbench does",
            };
            note(format!(
                "{}: pgbench's bank (pgbench -i, scale {s}): {what}; it creates and drops nothing",
                t.shown
            ));
            if args.scale != "1" && args.scale.parse::<u64>().ok() != Some(s) {
                note(format!(
                    "scale option ignored, using count from pgbench_branches table ({s}), as pgbench does"
                ));
            }
            scales.push(s);
            tables_of = Some("pgbench -i".to_string());
            continue;
        }
        match found.ours {
            Some((workload, s)) if workload == mix.name() && !found.foreign && found.complete => {
                scales.push(s)
            }
            Some(_) if !found.complete => {
                return Err(AppError::Usage(format!(
                    "{}: perflab's last prepare there did not finish; run 'perflab oltp prepare --workload {} --target {}' again",
                    t.shown,
                    mix.name(),
                    t.shown
                )));
            }
            _ => {
                return Err(AppError::Usage(format!(
                    "{} holds no {} tables perflab prepared; run 'perflab oltp prepare --workload {} --target {}' first",
                    t.shown,
                    mix.name(),
                    mix.name(),
                    t.shown
                )));
            }
        }
    }
    scales.dedup();
    match scales[..] {
        [s] if mix == Mix::Tpcc && s < scale => {
            return Err(AppError::Usage(format!(
                "--warehouses {scale}: {} holds {s} warehouses; sweep up to {s}, or prepare {scale}",
                ts.shards[0].shown
            )));
        }
        [s] => scale = s,
        _ => {
            return Err(AppError::Usage(format!(
                "the shards were prepared at different scales ({scales:?}); prepare them again with one --scale"
            )));
        }
    }
    Ok((scale, tables_of))
}

/// The built-in scripts asked for: `-b`'s, with `-S` as one more beside other scripts, and
/// `-r` alone timing the default script's commands (tpcb-like, or `-S`'s select-only).
fn builtins_asked(args: &OltpArgs) -> Vec<String> {
    let mut builtins = args.builtin.clone();
    if args.select_only && (!args.script.is_empty() || !builtins.is_empty()) {
        builtins.push("select-only".into());
    }
    // `-r` alone times the statements of the default script, tpcb-like (or `-S`'s).
    if args.per_statement && args.script.is_empty() && builtins.is_empty() {
        builtins.push(match args.select_only {
            true => "select-only".into(),
            false => "tpcb-like".into(),
        });
    }
    builtins
}

/// The run's pgbench scripts, for the first target's engine; `:scale` as pgbench reads it.
fn script_set(
    args: &OltpArgs,
    asked: &script::setup::Asked<'_>,
    first: &Target,
    phases: Phases,
    scale: u64,
) -> Result<script::client::ScriptSet, AppError> {
    let dialect = match &first.backend {
        Backend::Sqlite { .. } => Dialect::Sqlite,
        Backend::Postgres(_) => Dialect::Postgres,
        Backend::Mysql(_) => Dialect::Mysql,
    };
    let script_scale = match (phases, asked.uses_builtin()) {
        // pgbench's reading: the number of branches when a built-in script runs.
        (Phases::Run, true) => {
            let branches = first
                .open(true, &looking())?
                .query_text("SELECT count(*) FROM pgbench_branches")
                .map_err(|e| {
                    AppError::Usage(format!(
                        "{}: the built-in scripts work on pgbench's tables, which cannot be read there ({e}); make them with 'pgbench -i' or 'perflab oltp prepare'",
                        first.shown
                    ))
                })?
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(0);
            if args.scale != "1" && args.scale.parse::<u64>().ok() != Some(branches) {
                note(format!(
                    "scale option ignored, using count from pgbench_branches table ({branches}), as pgbench does"
                ));
            }
            branches
        }
        _ => scale,
    };
    let seed = args.run.seed.trim().parse::<u64>().unwrap_or(1);
    let mode = first.query_mode.unwrap_or_default();
    let set = script::setup::build(asked, dialect, mode, script_scale as i64, seed)
        .map_err(AppError::Usage)?;
    note(if args.abort_on_error {
        "scripts: nothing is checked after the steps".into()
    } else {
        "scripts: an SQL error other than a serialization failure or deadlock is counted and the client goes on (pgbench ends that client: --abort-on-error); nothing is checked after the steps".into()
    });
    Ok(set)
}

/// `-l`: pgbench's per-transaction log, when asked for.
fn transaction_log(args: &OltpArgs) -> Result<Option<Arc<txlog::TxLog>>, AppError> {
    let aggregate = aggregate_interval(args)?;
    Ok(match (args.log_transactions, &args.sampling_rate) {
        (false, None) => None,
        (false, Some(_)) => {
            return Err(AppError::Usage(
                "--sampling-rate samples the transaction log: give --log-transactions (pgbench's -l) too".into(),
            ));
        }
        (true, rate) => {
            let sampling = match rate {
                None => 1.0,
                Some(t) => match t.trim().parse::<f64>() {
                    Ok(f) if f > 0.0 && f <= 1.0 => f,
                    _ => {
                        return Err(AppError::Usage(format!(
                            "--sampling-rate {t:?}: a share above 0 and up to 1, e.g. 0.01"
                        )));
                    }
                },
            };
            let retries = args.max_tries.as_deref().is_some_and(|t| t.trim() != "1");
            let log = txlog::TxLog::new(&args.log_prefix, sampling, args.run.rate.is_some())
                .with_retries(retries)
                .aggregated(aggregate);
            note(format!(
                "transactions logged to {} in pgbench's format",
                log.path().display()
            ));
            Some(Arc::new(log))
        }
    })
}

/// `--aggregate-interval`: whole seconds, with `-l` and without `--sampling-rate`, as
/// pgbench allows it.
fn aggregate_interval(args: &OltpArgs) -> Result<Option<u64>, AppError> {
    let Some(text) = &args.aggregate_interval else {
        return Ok(None);
    };
    let seconds = match text.trim().parse::<u64>() {
        Ok(s) if s > 0 => s,
        _ => {
            return Err(AppError::Usage(format!(
                "--aggregate-interval {text:?}: whole seconds above 0, e.g. 10"
            )));
        }
    };
    if !args.log_transactions {
        return Err(AppError::Usage(
            "--aggregate-interval aggregates the transaction log: give --log-transactions (pgbench's -l) too".into(),
        ));
    }
    if args.sampling_rate.is_some() {
        return Err(AppError::Usage(
            "--sampling-rate and --aggregate-interval cannot be used together (as in pgbench): keep one".into(),
        ));
    }
    Ok(Some(seconds))
}

/// `-L`: the limit above which a transaction counts as late.
fn latency_limit(args: &OltpArgs) -> Result<Option<std::time::Duration>, AppError> {
    Ok(match &args.latency_limit {
        None => None,
        Some(t) => Some(
            crate::vocab::units::parse_duration("latency-limit", t)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    AppError::Usage(format!("--latency-limit {t:?}: a time, e.g. 10ms"))
                })?,
        ),
    })
}

/// tpcc's options for a run; in spec mode the clients follow from the warehouses (ten
/// terminals each), so `run`'s threads are set here.
fn tpcc_options(
    args: &OltpArgs,
    ts: &Targets,
    phases: Phases,
    loaded: u64,
    run: &mut crate::workload::run_args::RunArgs,
) -> Result<tpcc::TpccOptions, AppError> {
    let mode = tpcc_mode(args)?;
    // `oltp run` without a count works on every warehouse prepared.
    let warehouses = if phases == Phases::Run && args.warehouses.is_none() && args.scale == "1" {
        Sweep::single("warehouses", loaded)
    } else {
        warehouses(args)?
    };
    let wait_factor = wait_factor(args)?;
    if args.select_only {
        return Err(AppError::Usage(
            "--select-only is for debitcredit and orderentry; tpcc's mix is fixed".into(),
        ));
    }
    if mode == tpcc::Mode::Spec {
        if run.threads.is_some() {
            return Err(AppError::Usage(
                "--mode spec runs 10 terminals per warehouse: sweep --warehouses, not --clients"
                    .into(),
            ));
        }
        if run.think.is_some() || run.rate.is_some() {
            return Err(AppError::Usage(
                "--mode spec waits the specification's keying and think times: drop --think and --rate (--wait-factor scales them)".into(),
            ));
        }
        let terminals: Vec<String> = warehouses
            .values()
            .iter()
            .map(|w| (w * tpcc::TERMINALS_PER_WAREHOUSE).to_string())
            .collect();
        run.threads = Some(terminals.join(","));
    } else if args.wait_factor.is_some() {
        return Err(AppError::Usage(
            "--wait-factor is for --mode spec: throughput mode has no waits".into(),
        ));
    }
    let constants = match phases {
        Phases::Run => {
            let t = &ts.shards[0];
            let mut c = t.open(true, &looking())?;
            let text = schema::recorded(&mut *c, "tpcc_constants")
                .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))?
                .unwrap_or_default();
            tpcc::parse_constants(&text).ok_or_else(|| {
                AppError::Usage(format!(
                    "{} holds no NURand constants perflab recorded; prepare it again with 'perflab oltp prepare --workload tpcc'",
                    t.shown
                ))
            })?
        }
        Phases::All => load_constants(&run.seed)?,
    };
    Ok(tpcc::TpccOptions {
        mode,
        warehouses,
        constants,
        wait_factor,
    })
}

/// TPC-C's twelve conditions on a database just loaded: one line each way.
fn tpcc_after_load(c: &mut dyn Conn, note: &dyn Fn(&str)) -> Result<(), String> {
    let checks = tpcc::consistency::check(c, true, None)
        .map_err(|e| format!("the consistency check could not run: {e}"))?;
    match checks.iter().find(|c| !c.passed) {
        Some(bad) => Err(format!(
            "the loaded database is inconsistent: {}",
            bad.summary
        )),
        None => {
            note("prepare: the twelve consistency conditions hold");
            Ok(())
        }
    }
}

/// NURand's constants for a load, drawn from the run's seed: repeatable, and recorded.
fn load_constants(seed: &str) -> Result<tpcc::input::Constants, SpecError> {
    let seed = parse_count("seed", seed)?;
    Ok(tpcc::input::Constants::draw(
        &mut crate::workload::rng::Rng::new(seed ^ 0x7470_6363),
    ))
}

/// `prepare` and `cleanup`: load or drop the tables of every shard, no measurement.
pub fn steps(host: &dyn Host, args: &OltpArgs) -> Result<(), AppError> {
    let mix = mix(args)?;
    let sysbench = sysbench_options(args, mix)?;
    let ts = targets(args)?;
    if ts.temp_dir.is_some() {
        return Err(AppError::Usage(
            "oltp prepare and cleanup need --target, e.g. sqlite:///path/to/file.db".into(),
        ));
    }
    let note = |text: &str| {
        if !host.quiet() {
            eprintln!("{text}");
        }
    };
    match args.action {
        Action::Prepare => {
            let scale = scale(args, mix)?;
            let created = match &ts.databases {
                Some(d) => shard_db::ensure(&d.creator, &d.names, &host.stop()).map_err(|e| {
                    AppError::Usage(format!(
                        "cannot create the shard databases on {}: {e}",
                        ts.shards[0].shown
                    ))
                })?,
                None => Vec::new(),
            };
            for t in &ts.shards {
                match &sysbench {
                    Some(o) => super::sysbench::cmd::refuse_foreign(t, o)?,
                    None => refuse_foreign(t, mix)?,
                }
            }
            for (i, t) in ts.shards.iter().enumerate() {
                if ts.shards.len() > 1 {
                    note(&format!(
                        "prepare: shard {} of {}: {}",
                        i + 1,
                        ts.shards.len(),
                        t.shown
                    ));
                }
                let made = ts
                    .databases
                    .as_ref()
                    .is_some_and(|d| d.names.get(i).is_some_and(|n| created.contains(n)));
                // An SQLite file this prepare makes is removed whole if loading fails (a full
                // disk): perflab leaves nothing it made half-done.
                let new_file = match &t.backend {
                    Backend::Sqlite { path, .. } if !path.exists() => Some(path.clone()),
                    _ => None,
                };
                let mut c = t.open(false, &host.stop())?;
                let constants = load_constants(&args.run.seed)?;
                let loaded = match &sysbench {
                    Some(o) => super::sysbench::cmd::prepare(&mut *c, o, &note),
                    None => shards::load(&mut *c, mix, scale, &note, made, &constants)
                        .map_err(|e| e.message),
                }
                .and_then(|()| match mix {
                    Mix::Tpcc => tpcc_after_load(&mut *c, &note),
                    _ => Ok(()),
                });
                if let Err(e) = loaded {
                    // Leave nothing half-loaded behind.
                    let _ = super::sysbench::schema::drop_ours(&mut *c);
                    drop(c);
                    let removed = new_file
                        .map(|p| remove_sqlite_files(&p))
                        .unwrap_or_default();
                    return Err(AppError::Failed(format!(
                        "prepare failed on {}: {e}{removed}",
                        t.shown
                    )));
                }
            }
            Ok(())
        }
        Action::Cleanup if sysbench.is_some() => {
            for t in &ts.shards {
                if let Some(o) = &sysbench {
                    super::sysbench::cmd::cleanup(t, o, &note, &host.stop())?;
                }
            }
            Ok(())
        }
        Action::Cleanup => {
            for (i, t) in ts.shards.iter().enumerate() {
                let dbs = ts.databases.as_ref().map(|d| (d, i));
                let dropped = shards::clear(&t.backend, dbs, &host.stop())
                    .map_err(|e| AppError::Failed(format!("cleanup failed on {}: {e}", t.shown)))?;
                note(&if dropped {
                    format!("cleanup: dropped perflab's tables from {}", t.shown)
                } else {
                    format!("cleanup: {} holds no tables perflab made", t.shown)
                });
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Removes an SQLite database file and its journals (`-wal`, `-shm`, `-journal`); says so
/// for the error message.
fn remove_sqlite_files(path: &std::path::Path) -> String {
    let mut gone = false;
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        gone |= std::fs::remove_file(&p).is_ok();
    }
    match gone {
        true => format!("; {} (made by this prepare) was removed", path.display()),
        false => String::new(),
    }
}

/// The token for looking at a server before a run (its tables, its settings): one nothing
/// sets, since no Ctrl-C handler is installed yet and Ctrl-C still ends the process.
fn looking() -> crate::stop::Stop {
    crate::stop::Stop::new()
}
