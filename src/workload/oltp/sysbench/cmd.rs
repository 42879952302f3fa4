//! What `perflab oltp` asks of sysbench's tests ([`crate::workload::oltp::cmd`] calls these):
//! the options of a line, the tables a run needs and whose they are, prepare and cleanup.
//!
//! - `run` works on the tables as it finds them: made by `sysbench prepare` (the run changes
//!   their rows as sysbench's would; it creates and drops nothing) or by perflab; every table
//!   of `--tables` must be there.
//! - `prepare` (and `all`) load only where none of the test's tables exist, or where perflab
//!   made them itself; tables of these names perflab did not make are refused in one line.
//! - `cleanup` drops what perflab made; sysbench's own tables are left to sysbench's cleanup.

use super::options::SysbenchOptions;
use super::schema::{self, Found, names};
use super::test::Test;
use crate::error::AppError;
use crate::sql::sql::Conn;
use crate::sql::target::Target;
use crate::stop::Stop;
use crate::vocab::notes::note;
use crate::workload::oltp::args::OltpArgs;
use std::sync::Arc;

/// The test and its options from `--workload TEST` and `--sysbench NAME=VALUE`, with what
/// perflab's own options must not say beside them.
pub fn options(args: &OltpArgs) -> Result<SysbenchOptions, AppError> {
    let test = Test::parse(&args.workload).ok_or_else(|| {
        AppError::Usage(format!(
            "--workload {}: name sysbench's test: {}",
            args.workload,
            Test::names()
        ))
    })?;
    for (given, option, instead) in [
        (
            args.scale != "1",
            "--scale",
            "--sysbench table_size=N (sysbench's --table-size)",
        ),
        (
            args.select_only,
            "--select-only",
            "oltp_read_only or oltp_point_select",
        ),
        (
            args.shards.is_some(),
            "--shards",
            "one database (sysbench's --tables=N for more tables)",
        ),
    ] {
        if given {
            return Err(AppError::Usage(format!(
                "{option} is not for sysbench's tests: use {instead}"
            )));
        }
    }
    if args.target.len() > 1 {
        return Err(AppError::Usage(
            "sysbench's tests work on one database: give one --target".into(),
        ));
    }
    let mut o = SysbenchOptions::read(test, &args.sysbench).map_err(AppError::Usage)?;
    // bulk_insert: a table per client, as many as the most clients of the run.
    if test.bulk() {
        let threads = args.run.threads.as_deref().unwrap_or("1,2,4");
        let most =
            crate::vocab::sweep::parse_u64("clients", threads, crate::vocab::units::parse_count)?
                .values()
                .iter()
                .copied()
                .max()
                .unwrap_or(1);
        o.bulk_tables = o
            .bulk_tables
            .max(most.min(u64::from(super::options::MAX_TABLES)) as u32);
    }
    let seed = crate::vocab::units::parse_count("seed", &args.run.seed)?;
    o.seed = seed;
    o.unique = Arc::new(super::rand::Unique::new(seed ^ 0x756e_6971_7565));
    Ok(o)
}

/// What the target holds of the test's tables, looking only.
fn look(t: &Target, o: &SysbenchOptions) -> Result<Found, AppError> {
    if t.backend.is_new_file() {
        return Ok(Found {
            present: Vec::new(),
            missing: o.table_names(),
            ours: Vec::new(),
            complete: false,
            shape: None,
        });
    }
    let stop = Stop::new();
    schema::found(&mut *t.open(true, &stop)?, o)
        .map_err(|e| AppError::Usage(format!("--target {}: {e}", t.shown)))
}

/// The list of a test's tables, `sbtest1 ... sbtest4`.
fn listed(list: &[String]) -> String {
    let refs: Vec<&str> = list.iter().map(String::as_str).collect();
    names(&refs)
}

/// `run`: the tables must all be there; returns who made them when not perflab, with a
/// note saying what the run does to them.
pub fn for_run(t: &Target, o: &SysbenchOptions) -> Result<Option<String>, AppError> {
    let found = look(t, o)?;
    let test = o.test.name();
    if !found.missing.is_empty() {
        let why = match found.present.is_empty() {
            true => format!("{} holds no {}", t.shown, listed(&found.missing)),
            false => format!(
                "{} holds {} but not {}",
                t.shown,
                listed(&found.present),
                listed(&found.missing)
            ),
        };
        let tables = match o.test.bulk() {
            true => "a table per client".to_string(),
            false => format!("--tables={}", o.tables),
        };
        return Err(AppError::Usage(format!(
            "{why}: {test} with {tables} needs them; prepare them first ('perflab oltp {test} ... prepare', or sysbench's own prepare)"
        )));
    }
    let foreign = found.foreign();
    if foreign.is_empty() {
        if !found.complete {
            return Err(AppError::Usage(format!(
                "{}: perflab's last prepare there did not finish; run prepare again",
                t.shown
            )));
        }
        if let Some(shape) = &found.shape
            && let Some(size) = shape
                .split(';')
                .find_map(|p| p.strip_prefix("table_size="))
                .and_then(|v| v.parse::<u32>().ok())
            && size != o.table_size
            && !o.test.bulk()
        {
            note(format!(
                "{}: perflab prepared {size} rows a table; this run draws ids from 1 to {} (--table-size), as sysbench would",
                t.shown, o.table_size
            ));
        }
        return Ok(None);
    }
    let what = match o.test.reads_only() {
        true => "the run only reads them",
        false => "the run changes their rows as sysbench's would",
    };
    note(format!(
        "{}: {} made by sysbench prepare (not perflab): {what}; it creates and drops nothing",
        t.shown,
        names(&foreign)
    ));
    Ok(Some("sysbench prepare".to_string()))
}

/// `prepare` and `all`: refused where tables of the test's names exist that perflab did
/// not make.
pub fn refuse_foreign(t: &Target, o: &SysbenchOptions) -> Result<(), AppError> {
    let found = look(t, o)?;
    let foreign = found.foreign();
    if foreign.is_empty() {
        return Ok(());
    }
    Err(AppError::Usage(format!(
        "refusing to prepare {}: it holds {} that perflab did not make (sysbench prepare's?); run on them as they are with 'run', or drop them with sysbench's cleanup",
        t.shown,
        names(&foreign)
    )))
}

/// `prepare`: the test's tables loaded, as sysbench's prepare loads them.
pub fn prepare(
    conn: &mut dyn Conn,
    o: &SysbenchOptions,
    note: &dyn Fn(&str),
) -> Result<(), String> {
    schema::prepare(conn, o, o.seed, note).map_err(|e| e.message)
}

/// `cleanup`: perflab's tables dropped; sysbench's own refused in one line.
pub fn cleanup(
    t: &Target,
    o: &SysbenchOptions,
    note: &dyn Fn(&str),
    stop: &Stop,
) -> Result<(), AppError> {
    let found = look(t, o)?;
    let foreign = found.foreign();
    if !foreign.is_empty() {
        return Err(AppError::Usage(format!(
            "{} holds {} that perflab did not make (sysbench prepare's?): perflab drops only what it made; drop them with sysbench's own cleanup",
            t.shown,
            names(&foreign)
        )));
    }
    if t.backend.is_new_file() {
        note(&format!(
            "cleanup: {} holds no tables perflab made",
            t.shown
        ));
        return Ok(());
    }
    let mut c = t.open(false, stop)?;
    let dropped = schema::drop_ours(&mut *c)
        .map_err(|e| AppError::Failed(format!("cleanup failed on {}: {e}", t.shown)))?;
    note(&match dropped {
        true => format!("cleanup: dropped perflab's tables from {}", t.shown),
        false => format!("cleanup: {} holds no tables perflab made", t.shown),
    });
    Ok(())
}
