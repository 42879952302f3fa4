//! Which database a run talks to, and what perflab reads from it besides transactions: the
//! settings recorded with the run, the log counters sampled around each step, the server's
//! CPU when it runs on this machine, and the block device under an SQLite file.

use super::mysql;
use super::postgres;
use super::sql::ServerTarget;
use super::sql::{Conn, DbError};
use super::sqlite::{self, SqliteSettings};
use crate::stop::Stop;
use crate::vocab::{StepPoint, Sweep};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The database, with what it takes to connect (passwords included: never serialized,
/// never shown; `Debug` prints none).
#[derive(Debug, Clone)]
pub enum Backend {
    Sqlite {
        path: PathBuf,
        settings: SqliteSettings,
    },
    Postgres(ServerTarget),
    Mysql(ServerTarget),
}

/// Process names of local database servers, for their CPU time.
const SERVER_PROCESSES: [&str; 3] = ["postgres", "mariadbd", "mysqld"];

impl Backend {
    /// The same database with `settings` applied on top of `--set`'s (a value given again
    /// replaces the earlier one); SQLite has none and stays as it is.
    pub fn with_settings(&self, settings: &[(String, String)]) -> Backend {
        let with = |t: &ServerTarget| {
            let mut t = t.clone();
            for (name, value) in settings {
                t.set.retain(|(n, _)| n != name);
                t.set.push((name.clone(), value.clone()));
            }
            t
        };
        match self {
            Backend::Postgres(t) => Backend::Postgres(with(t)),
            Backend::Mysql(t) => Backend::Mysql(with(t)),
            other => other.clone(),
        }
    }

    /// The database for the step at `point`: the swept settings' values at that step on top.
    pub fn at_step(&self, swept: &[Sweep<String>], point: &StepPoint) -> Backend {
        let settings: Vec<(String, String)> = swept
            .iter()
            .map(|s| (s.name().trim_start_matches("set.").to_string(), s.at(point)))
            .collect();
        self.with_settings(&settings)
    }

    /// A new connection, ready for work. Its statements stop when `stop` is set (see
    /// [`super::cancel`]).
    pub fn connect(&self, stop: &Stop) -> Result<Box<dyn Conn>, DbError> {
        Ok(match self {
            Backend::Sqlite { path, settings } => Box::new(sqlite::connect(path, settings, stop)?),
            Backend::Postgres(t) => Box::new(postgres::connect(t, stop)?),
            Backend::Mysql(t) => Box::new(mysql::connect(t, stop)?),
        })
    }

    /// A connection for a session of the run: every statement's answer is bounded by the
    /// op timeout (`--op-timeout`; SQLite has its busy timeout instead).
    pub fn connect_session(&self, stop: &Stop) -> Result<Box<dyn Conn>, DbError> {
        let answer = self.op_timeout();
        Ok(match self {
            Backend::Sqlite { .. } => self.connect(stop)?,
            Backend::Postgres(t) => Box::new(postgres::connect_with(t, answer, stop)?),
            Backend::Mysql(t) => Box::new(mysql::connect_with(t, answer, stop)?),
        })
    }

    /// The op timeout of a server; None for SQLite.
    pub fn op_timeout(&self) -> Option<std::time::Duration> {
        match self {
            Backend::Sqlite { .. } => None,
            Backend::Postgres(t) | Backend::Mysql(t) => Some(t.op_timeout),
        }
    }

    /// A connection that changes nothing (its answers bounded by the op timeout, like a
    /// session's, since it only looks): an SQLite file is opened read-only (not even its
    /// journal mode is set) so perflab can look before deciding whether it may write.
    pub fn inspect(&self, stop: &Stop) -> Result<Box<dyn Conn>, DbError> {
        match self {
            Backend::Sqlite { path, .. } => Ok(Box::new(sqlite::inspect(path, stop)?)),
            _ => self.connect_session(stop),
        }
    }

    /// SQLite's settings, for the record; None for a server.
    pub fn sqlite_settings(&self) -> Option<super::sqlite::SqliteSettings> {
        match self {
            Backend::Sqlite { settings, .. } => Some(settings.clone()),
            _ => None,
        }
    }

    /// Whether the database is a file that does not exist yet (nothing to look at).
    pub fn is_new_file(&self) -> bool {
        matches!(self, Backend::Sqlite { path, .. } if !path.exists())
    }

    /// The settings that decide durability and group commit, as the server reports them.
    pub fn settings(&self, stop: &Stop) -> Result<BTreeMap<String, String>, DbError> {
        let answer = self.op_timeout();
        match self {
            Backend::Sqlite { .. } => Ok(BTreeMap::new()),
            Backend::Postgres(t) => {
                postgres::settings(&mut postgres::connect_with(t, answer, stop)?)
            }
            Backend::Mysql(t) => mysql::settings(&mut mysql::connect_with(t, answer, stop)?),
        }
    }

    /// Cumulative counters sampled around each measure phase (the runner turns them into
    /// `<name>_per_sec`): the log's writes and syncs, commits, and (`with_cpu`) the CPU
    /// seconds of the database servers running on this machine, if this one is local.
    pub fn counters(&self, with_cpu: bool, stop: &Stop) -> Vec<(String, f64)> {
        let mut out = match self {
            Backend::Sqlite { .. } => Vec::new(),
            Backend::Postgres(t) => postgres::counters(t, stop).unwrap_or_default(),
            Backend::Mysql(t) => mysql::counters(t, stop).unwrap_or_default(),
        };
        if with_cpu && let Some(cpu) = self.server_cpu() {
            out.push(("server_cpu".into(), cpu));
        }
        out
    }

    /// The CPU seconds of the database servers running on this machine, if this one is
    /// local (10 ms resolution); None for SQLite and remote servers.
    pub fn server_cpu(&self) -> Option<f64> {
        if !self.is_local_server() {
            return None;
        }
        crate::env::usage::cpu_time_of(&SERVER_PROCESSES).map(|d| d.as_secs_f64())
    }

    /// Which server this is (scheme, host, port), so that counters of the whole server are
    /// read once however many of its databases are shards. None for SQLite.
    pub fn server_key(&self) -> Option<String> {
        let url = match self {
            Backend::Sqlite { .. } => return None,
            Backend::Postgres(t) => &t.url,
            Backend::Mysql(t) => &t.url,
        };
        let u = url.parse::<crate::target::url::TargetUrl>().ok()?;
        Some(format!(
            "{}://{}:{}",
            u.backend.scheme(),
            u.host.unwrap_or_default(),
            u.port.or(u.backend.default_port()).unwrap_or(0)
        ))
    }

    /// A server on this machine: a Unix socket, `localhost` or a loopback address.
    fn is_local_server(&self) -> bool {
        let url = match self {
            Backend::Sqlite { .. } => return false,
            Backend::Postgres(t) => &t.url,
            Backend::Mysql(t) => &t.url,
        };
        match url.parse::<crate::target::url::TargetUrl>() {
            Ok(u) => match u.host.as_deref() {
                None => true,
                Some(h) => {
                    h.starts_with('/') || h == "localhost" || h == "::1" || h.starts_with("127.")
                }
            },
            Err(_) => false,
        }
    }

    /// The block devices to sample: the one under an SQLite file.
    pub fn devices(&self) -> Vec<String> {
        match self {
            Backend::Sqlite { path, .. } => path
                .parent()
                .and_then(crate::env::disk::device_of)
                .map(|d| vec![d.name])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}
