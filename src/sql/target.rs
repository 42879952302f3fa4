//! The database a command works on: a `--target` URL read into a [`Backend`] with its session
//! settings (`--set`) and op timeout, and opened with one line that says why not. oltp, scan
//! and olap share it.

use super::backend::Backend;
use super::sql::{Conn, DbError, ServerTarget};
use super::sqlite::SqliteSettings;
use crate::spec::SpecError;
use crate::stop::Stop;
use crate::target::url::{self, TargetUrl};

/// A target that cannot be used, in one line naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

/// One database a command works on (one shard).
pub struct Target {
    pub backend: Backend,
    /// As shown and recorded: no password.
    pub shown: String,
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
) -> Result<Target, TargetError> {
    let parsed: TargetUrl = url.parse().map_err(|e: url::UrlError| {
        TargetError(format!("--target {}: {e}", crate::target::url::redact(url)))
    })?;
    let shown = parsed.redacted();
    let backend = match parsed.backend {
        url::Backend::Sqlite => {
            if !set.is_empty() {
                return Err(TargetError(
                    "--set is for servers; SQLite takes --sqlite-journal-mode and --sqlite-synchronous".into(),
                ));
            }
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
        }),
        url::Backend::Mysql => Backend::Mysql(ServerTarget {
            url: url.to_string(),
            set,
            op_timeout,
        }),
        url::Backend::Memcached | url::Backend::Redis | url::Backend::Rediss => {
            return Err(TargetError(format!(
                "--target {shown} is a cache, not a database; measure it with 'perflab kv --target {shown}'"
            )));
        }
    };
    Ok(Target { backend, shown })
}

/// `--op-timeout`: above zero, and short enough that a stuck server is noticed.
pub fn op_timeout(text: &str) -> Result<std::time::Duration, SpecError> {
    let d = crate::spec::units::parse_duration("op-timeout", text)?;
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
