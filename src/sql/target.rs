//! The database a command works on: a `--target` URL read into a [`Backend`] with its session
//! settings (`--set`) and op timeout, and opened with one line that says why not. oltp, scan
//! and olap share it, and the sweep of a setting over several values ([`swept_settings`]).

use super::backend::Backend;
use super::query_mode::QueryMode;
use super::sql::{Conn, DbError, ServerTarget};
use super::sqlite::SqliteSettings;
use crate::stop::Stop;
use crate::target::conninfo::{self, SslMode};
use crate::target::url::{self, TargetUrl};
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::parse_count;
use crate::vocab::{SpecError, Sweep};

/// A target that cannot be used, in one line naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

/// One database a command works on (one shard).
pub struct Target {
    pub backend: Backend,
    /// As shown and recorded: no password; for PostgreSQL, with what the `PG*` variables
    /// filled in.
    pub shown: String,
    /// What the connection's TLS verifies, for the record (`sslmode=verify-full: verified:
    /// chain to ca.pem and host name`); None for SQLite.
    pub tls: Option<String>,
    /// How the sessions send their statements (`-M`), for the record; None for SQLite.
    pub query_mode: Option<QueryMode>,
}

impl Target {
    /// Connects (an SQLite file read-only when `look_only`), or says in one line why not.
    pub fn open(&self, look_only: bool, stop: &Stop) -> Result<Box<dyn Conn>, TargetError> {
        let opened = match look_only {
            true => self.backend.inspect(stop),
            false => self.backend.connect(stop),
        };
        opened.map_err(|e| self.unreachable(e))
    }

    /// Why the target could not be reached, naming it without its password.
    pub fn unreachable(&self, e: DbError) -> TargetError {
        TargetError(format!("cannot connect to {}: {e}", self.shown))
    }
}

/// A database `--target` URL with its session settings (`--set`), op timeout and SQLite
/// settings: how oltp, scan and olap reach a database, or one line saying why not.
pub fn database(
    url: &str,
    set: Vec<(String, String)>,
    op_timeout: std::time::Duration,
    sqlite: &SqliteSettings,
    query_mode: QueryMode,
) -> Result<Target, TargetError> {
    let parsed: TargetUrl = url.parse().map_err(|e: url::UrlError| {
        TargetError(format!("--target {}: {e}", crate::target::url::redact(url)))
    })?;
    let mut shown = parsed.redacted();
    let mut tls = None;
    if parsed.backend == url::Backend::Postgres {
        // libpq's rules, checked now: a bad sslmode or a missing root file is one line
        // before anything runs, and the record names what the environment filled in.
        let env = |k: &str| std::env::var(k).ok();
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let resolved = conninfo::resolve(&parsed, &env, home.as_deref())
            .map_err(|e| TargetError(format!("--target {shown}: {e}")))?;
        shown = conninfo::with_environment(&parsed, &env).redacted();
        tls = Some(postgres_tls(&resolved));
    }
    if parsed.backend == url::Backend::Mysql {
        tls = Some(super::mysql::tls_description(&parsed));
    }
    let backend = match parsed.backend {
        url::Backend::Sqlite => {
            if !set.is_empty() {
                return Err(TargetError(
                    "--set is for servers; SQLite takes --sqlite-journal-mode and --sqlite-synchronous".into(),
                ));
            }
            embedded_mode(query_mode)?;
            let path = parsed.path.unwrap_or_default();
            if let Some(dir) = path.parent()
                && !dir.as_os_str().is_empty()
                && !dir.is_dir()
            {
                return Err(TargetError(format!(
                    "--target {shown}: the directory {} does not exist",
                    dir.display()
                )));
            }
            Backend::Sqlite {
                path,
                settings: sqlite.clone(),
            }
        }
        url::Backend::Postgres => Backend::Postgres(ServerTarget {
            url: url.to_string(),
            set,
            op_timeout,
            query_mode,
        }),
        url::Backend::Mysql if query_mode == QueryMode::Extended => {
            return Err(TargetError(
                "--query-mode extended: MySQL has no extended protocol; use -M simple (the text protocol) or -M prepared (the binary protocol)".into(),
            ));
        }
        url::Backend::Mysql => Backend::Mysql(ServerTarget {
            url: url.to_string(),
            set,
            op_timeout,
            query_mode,
        }),
        url::Backend::Memcached | url::Backend::Redis | url::Backend::Rediss => {
            return Err(TargetError(format!(
                "--target {shown} is a cache, not a database; measure it with 'perflab kv --target {shown}'"
            )));
        }
    };
    let query_mode = (!matches!(backend, Backend::Sqlite { .. })).then_some(query_mode);
    Ok(Target {
        backend,
        shown,
        tls,
        query_mode,
    })
}

/// `-M` on SQLite: only the default means anything.
pub fn embedded_mode(query_mode: QueryMode) -> Result<(), TargetError> {
    no_protocol(
        query_mode,
        "SQLite prepares every statement and has no protocol to choose",
    )
}

/// `-M` where no statement crosses a wire (SQLite, the native scan): `why`, in one line.
pub fn no_protocol(query_mode: QueryMode, why: &str) -> Result<(), TargetError> {
    match query_mode {
        QueryMode::Prepared => Ok(()),
        other => Err(TargetError(format!(
            "--query-mode {}: {why}; leave -M out, or give a postgres:// or mysql:// --target",
            other.name()
        ))),
    }
}

/// What a PostgreSQL connection's TLS verifies, in the record's words.
fn postgres_tls(r: &conninfo::Resolved) -> String {
    if r.host.starts_with('/') {
        return "a Unix socket: not encrypted".into();
    }
    let mode = r.sslmode.name();
    match r.sslmode {
        SslMode::Disable => format!("sslmode={mode}: not encrypted"),
        SslMode::Allow | SslMode::Prefer => format!(
            "sslmode={mode}: {} (in the clear if the server offers no TLS)",
            r.trust.describe()
        ),
        _ => format!("sslmode={mode}: {}", r.trust.describe()),
    }
}

/// `--op-timeout`: above zero, and short enough that a stuck server is noticed.
pub fn op_timeout(text: &str) -> Result<std::time::Duration, SpecError> {
    let d = crate::vocab::units::parse_duration("op-timeout", text)?;
    if d.is_zero() || d > std::time::Duration::from_secs(24 * 3600) {
        return Err(SpecError::new(
            "op-timeout",
            text,
            "a time from 1ms to 24h, e.g. 30s",
        ));
    }
    Ok(d)
}

/// `--set NAME=VALUE` pairs, names trimmed.
pub fn settings(items: &[String]) -> Result<Vec<(String, String)>, SpecError> {
    settings_as_given(items).map(|all| {
        all.into_iter()
            .map(|(name, value)| (name, unescape(&value)))
            .collect()
    })
}

/// `--set` as settings for every step, and the ones that sweep.
pub type Settings = (Vec<(String, String)>, Vec<Sweep<String>>);

/// `--set` split into settings for every step and settings that sweep: several values,
/// comma-separated or a numeric range (`0,2,4`, `0..8:x2`), one axis `set.NAME` each. A
/// value that holds a comma escapes it (`--set 'DateStyle=ISO\, MDY'`).
pub fn swept_settings(items: &[String]) -> Result<Settings, SpecError> {
    let mut fixed = Vec::new();
    let mut swept = Vec::new();
    for (name, value) in settings_as_given(items)? {
        let values: Vec<String> = match parse_u64("set", &value, parse_count) {
            Ok(s) if s.is_swept() => s.values().iter().map(u64::to_string).collect(),
            _ if split_unescaped(&value).len() > 1 => split_unescaped(&value),
            _ => {
                fixed.push((name, unescape(&value)));
                continue;
            }
        };
        // The axis's name lives as long as the run (a handful per command).
        let axis: &'static str = Box::leak(format!("set.{name}").into_boxed_str());
        swept.push(Sweep::list(axis, values));
    }
    Ok((fixed, swept))
}

/// The values of a list, split at the commas a backslash does not escape, each unescaped.
fn split_unescaped(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut value = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                chars.next();
                value.push(',');
            }
            ',' => out.push(std::mem::take(&mut value)),
            c => value.push(c),
        }
    }
    out.push(value);
    out.into_iter().map(|v| v.trim().to_string()).collect()
}

/// A single value with its escaped commas as commas.
fn unescape(text: &str) -> String {
    text.replace("\\,", ",")
}

impl Target {
    /// Connects once with every value of every swept setting, so a bad one stops the run
    /// before anything is loaded or measured.
    pub fn try_settings(&self, swept: &[Sweep<String>], stop: &Stop) -> Result<(), TargetError> {
        if swept.is_empty() {
            return Ok(());
        }
        if matches!(self.backend, Backend::Sqlite { .. }) {
            return Err(TargetError(
                "--set is for servers; SQLite takes --sqlite-journal-mode and --sqlite-synchronous"
                    .into(),
            ));
        }
        for s in swept {
            let name = s.name().trim_start_matches("set.");
            for v in s.values() {
                let one = [(name.to_string(), v.clone())];
                self.backend
                    .with_settings(&one)
                    .connect_session(stop)
                    .map_err(|e| TargetError(format!("--set {name}={v} on {}: {e}", self.shown)))?;
            }
        }
        Ok(())
    }
}

/// `--set`'s items as NAME and VALUE, values as given (escapes kept).
fn settings_as_given(items: &[String]) -> Result<Vec<(String, String)>, SpecError> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_string(), value.trim().to_string()))
            }
            _ => Err(SpecError::new(
                "set",
                item,
                "give NAME=VALUE, e.g. synchronous_commit=off",
            )),
        })
        .collect()
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    #[test]
    fn settings_sweep_on_commas_and_ranges_and_keep_escaped_commas() {
        let items = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (fixed, swept) = swept_settings(&items(&[
            "synchronous_commit=on,off",
            "commit_delay=1..1000:x10",
            "DateStyle=ISO\\, MDY",
            "work_mem=64MB",
        ]))
        .unwrap();
        assert_eq!(
            fixed,
            [
                ("DateStyle".to_string(), "ISO, MDY".to_string()),
                ("work_mem".to_string(), "64MB".to_string())
            ]
        );
        assert_eq!(swept.len(), 2);
        assert_eq!(swept[0].name(), "set.synchronous_commit");
        assert_eq!(swept[0].values(), ["on", "off"]);
        assert_eq!(swept[1].values(), ["1", "10", "100", "1000"]);
        let (_, swept) = swept_settings(&items(&["search_path=a\\,b,c"])).unwrap();
        assert_eq!(swept[0].values(), ["a,b", "c"]);
    }
}
