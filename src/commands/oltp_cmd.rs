//! `perflab oltp [all|prepare|run|cleanup]`: DebitCredit on a database, in one go or in
//! sysbench-style steps.

use super::AppError;
use super::build::{Defaults, build_spec};
use crate::cli::{GlobalArgs, OltpAction, OltpArgs};
use crate::env::Environment;
use crate::spec::units::parse_count;
use crate::spec::{RunSpec, SpecError};
use crate::workload::WorkloadSpec;
use crate::workload::oltp::postgres::{self as pg_backend, PgTarget};
use crate::workload::oltp::sqlite::{self, SqliteSettings};
use crate::workload::oltp::{OltpSpec, Phases};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Largest scale accepted: 10,000 branches is a billion accounts.
const MAX_SCALE: u64 = 10_000;

/// The database a command works on.
struct Target {
    path: PathBuf,
    temp_dir: Option<PathBuf>,
    /// PostgreSQL: how to connect.
    pg: Option<PgTarget>,
    /// As shown and recorded: no password.
    shown: String,
}

/// `scheme://user:password@host/...` with the password replaced by `***`: the target
/// parser's redaction where the URL parses, else a plain cut of the password.
pub fn redact(url: &str) -> String {
    if let Ok(parsed) = url.parse::<crate::target::url::TargetUrl>() {
        return parsed.redacted();
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(parts) => parts,
        None => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

fn target(args: &OltpArgs) -> Result<Target, AppError> {
    match args.target.as_deref() {
        None => {
            let dir = std::env::temp_dir().join(format!("perflab-oltp-{}", std::process::id()));
            Ok(Target {
                path: dir.join("bank.db"),
                shown: format!("sqlite://{}", dir.join("bank.db").display()),
                temp_dir: Some(dir),
                pg: None,
            })
        }
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            let mut set = Vec::new();
            for item in &args.pg_set {
                let Some((name, value)) = item.split_once('=') else {
                    return Err(SpecError::new(
                        "pg-set",
                        item,
                        "give NAME=VALUE, e.g. synchronous_commit=off",
                    )
                    .into());
                };
                set.push((name.trim().to_string(), value.trim().to_string()));
            }
            Ok(Target {
                path: PathBuf::new(),
                temp_dir: None,
                pg: Some(PgTarget {
                    url: url.to_string(),
                    set,
                }),
                shown: redact(url),
            })
        }
        Some(url) => {
            let Some(rest) = url.strip_prefix("sqlite://") else {
                let scheme = url.split("://").next().unwrap_or(url);
                return Err(AppError::Usage(if url.contains("://") {
                    format!(
                        "--target {scheme}://...: MySQL targets are not built yet; use sqlite:///path/to/file.db or postgres://user@host/db"
                    )
                } else {
                    format!(
                        "--target {:?}: give a URL such as sqlite:///path/to/file.db or postgres://user@host/db",
                        redact(url)
                    )
                }));
            };
            if rest.is_empty() || rest == ":memory:" {
                return Err(AppError::Usage(
                    "--target sqlite://: give a file path, e.g. sqlite:///tmp/bank.db (a benchmark needs a file)".into(),
                ));
            }
            let path = PathBuf::from(rest);
            if path
                .parent()
                .is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir())
            {
                return Err(AppError::Usage(format!(
                    "--target {url}: the directory {} does not exist",
                    path.parent().unwrap_or(&path).display()
                )));
            }
            Ok(Target {
                path,
                temp_dir: None,
                pg: None,
                shown: url.to_string(),
            })
        }
    }
}

/// Connects to a PostgreSQL target, or says in one line why not.
fn pg_connect(t: &Target, pg: &PgTarget) -> Result<postgres::Client, AppError> {
    pg_backend::connect(pg)
        .map_err(|e| AppError::Usage(format!("cannot connect to {}: {e}", t.shown)))
}

fn settings(args: &OltpArgs) -> Result<SqliteSettings, SpecError> {
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
    })
}

fn scale(args: &OltpArgs) -> Result<u64, SpecError> {
    let s = parse_count("scale", &args.scale)?;
    if s == 0 || s > MAX_SCALE {
        return Err(SpecError::new(
            "scale",
            &args.scale,
            "a scale from 1 to 10000 (100,000 accounts each)",
        ));
    }
    Ok(s)
}

/// The run specification for `all` and `run`.
pub fn oltp_spec(args: &OltpArgs, _env: &Environment) -> Result<RunSpec, AppError> {
    if args.workload != "debitcredit" {
        return Err(SpecError::new(
            "workload",
            &args.workload,
            "debitcredit is the one built so far (order entry is coming)",
        )
        .into());
    }
    if args.run.think.is_some() && args.run.rate.is_some() {
        return Err(AppError::Usage("give --think or --rate, not both".into()));
    }
    let t = target(args)?;
    let sqlite = settings(args)?;
    let mut scale = scale(args)?;
    let mut server_settings = BTreeMap::new();
    if let Some(pg) = &t.pg {
        let mut c = pg_connect(&t, pg)?;
        server_settings = pg_backend::settings(&mut c).map_err(AppError::Usage)?;
    }
    let phases = match args.action {
        OltpAction::Run => {
            if t.temp_dir.is_some() {
                return Err(AppError::Usage(
                    "oltp run needs --target: the bank 'oltp prepare --target ...' loaded".into(),
                ));
            }
            let found = match &t.pg {
                Some(pg) => pg_backend::scale_of(&mut pg_connect(&t, pg)?),
                None => sqlite::inspect(&t.path)
                    .map_err(|e| format!("{e}"))
                    .and_then(|c| sqlite::scale_of(&c)),
            }
            .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))?;
            match found {
                Some(s) => scale = s,
                None => {
                    return Err(AppError::Usage(format!(
                        "{} holds no bank perflab prepared; run 'perflab oltp prepare --target {}' first",
                        t.shown, t.shown
                    )));
                }
            }
            Phases::Run
        }
        _ => {
            refuse_foreign(&t)?;
            Phases::All
        }
    };
    let spec = OltpSpec {
        transaction: "debitcredit",
        select_only: args.select_only,
        scale,
        target: t.shown,
        sqlite: t.pg.is_none().then_some(sqlite),
        server_settings,
        phases,
        keep: args.keep,
        path: t.path,
        temp_dir: t.temp_dir,
        pg: t.pg,
    };
    Ok(build_spec(
        &args.run,
        WorkloadSpec::Oltp(spec),
        &Defaults {
            threads: "1,2,4".into(),
            warmup: "1s",
            duration: "5s",
        },
    )?)
}

/// Refuses (exit 2) a database that holds pgbench tables perflab did not create.
fn refuse_foreign(t: &Target) -> Result<(), AppError> {
    let found = match &t.pg {
        Some(pg) => pg_backend::existing(&mut pg_connect(t, pg)?),
        None if !t.path.exists() => return Ok(()),
        None => sqlite::inspect(&t.path)
            .map_err(|e| e.to_string())
            .and_then(|c| sqlite::existing(&c)),
    }
    .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))?;
    match found {
        (true, false) => Err(AppError::Usage(format!(
            "refusing to load into {}: it holds pgbench tables perflab did not create; use another --target, or drop them yourself",
            t.shown
        ))),
        _ => Ok(()),
    }
}

/// `prepare` and `cleanup`: load or drop the bank, no measurement.
pub fn steps(g: &GlobalArgs, args: &OltpArgs) -> Result<(), AppError> {
    let t = target(args)?;
    if t.temp_dir.is_some() {
        return Err(AppError::Usage(
            "oltp prepare and cleanup need --target sqlite:///path/to/file.db".into(),
        ));
    }
    let s = settings(args)?;
    let note = |text: &str| {
        if !g.quiet {
            eprintln!("{text}");
        }
    };
    match args.action {
        OltpAction::Prepare => {
            refuse_foreign(&t)?;
            crate::run::interrupt::install();
            let scale = scale(args)?;
            match &t.pg {
                Some(pg) => pg_backend::prepare(pg, scale, &note),
                None => sqlite::prepare(&t.path, &s, scale, &note),
            }
            .map_err(AppError::Failed)
        }
        OltpAction::Cleanup => {
            match &t.pg {
                Some(pg) => pg_backend::drop_bank(&mut pg_connect(&t, pg)?),
                None => sqlite::connect(&t.path, &s)
                    .map_err(|e| format!("--target {}: {e}", t.shown))
                    .and_then(|conn| sqlite::drop_bank(&conn)),
            }
            .map_err(AppError::Failed)?;
            note(&format!(
                "cleanup: dropped perflab's tables from {}",
                t.shown
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}
