//! `--target` URLs: which database a run measures and how to reach it.
//!
//! ```text
//!  postgres://alice:s3cret@db.example:5432/bank?sslmode=require&host=/var/run/postgresql
//!  └─scheme─┘ └userinfo──┘ └──host──┘ └port┘└db─┘└──────────── params ─────────────────┘
//!                  │                                      │
//!                  ▼                                      ▼
//!   TargetUrl { user, password: Secret, host, port, database, params }
//!                  │
//!                  ├─► redacted() / Display ─► the record, the terminal, reports (password = ***)
//!                  └─► with_password_from_environment ─► PGPASSWORD, ~/.pgpass   (postgres)
//!                                                        MYSQL_PWD, ~/.my.cnf   (mysql)
//!  sqlite:///abs/bank.db   sqlite://relative/bank.db   ─► TargetUrl { path, .. }
//!
//!  redact_command_line(argv) ─► the record's `command`, with every URL's password as ***
//! ```
//!
//! Parsing rules, and why:
//! - Schemes: `postgres`/`postgresql`, `mysql`/`mariadb` (one wire protocol) and `sqlite`, any
//!   case. `sqlite::memory:` is refused: a benchmark of a database that vanishes with the
//!   connection measures nothing the user can keep or inspect.
//! - The user information ends at the *last* `@` before the query, so that a password with a
//!   raw `/` (base64 passwords have them) still parses; `?` and `%` in a password must be
//!   percent-encoded, as the error messages say.
//! - User, password, host, database, path and parameters are percent-decoded. A host that
//!   decodes to an absolute path is a Unix socket directory, as in libpq; for postgres
//!   `?host=`, `?port=`, `?user=` and `?dbname=` override the authority, as in libpq.
//! - `?password=` (any case) is lifted out of `params` into [`TargetUrl::password`] so it is
//!   never printed. Other parameters whose names look secret (`sslpassword`, …) stay in `params`
//!   but are printed as `***` by `redacted()`, `Debug` and [`redact_command_line`].
//! - Error messages never quote the user information: a malformed URL may hold a password in
//!   any position, so only pieces that cannot be one (the scheme, a numeric port, the host,
//!   the database) are quoted.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Which kind of database server (or file) the URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
    /// memcached's text and meta protocols (`memcached://host:11211`, `memcached:///path.sock`).
    Memcached,
    /// Redis, Valkey or KeyDB over RESP (`redis://[user:pass@]host:6379/0`).
    Redis,
    /// The same over TLS (`rediss://`).
    Rediss,
}

impl Backend {
    /// The scheme `redacted()` writes (the canonical one of the accepted spellings).
    pub fn scheme(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
            Backend::Memcached => "memcached",
            Backend::Redis => "redis",
            Backend::Rediss => "rediss",
        }
    }

    /// The server's standard port, when it has one.
    pub fn default_port(self) -> Option<u16> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some(5432),
            Backend::Mysql => Some(3306),
            Backend::Memcached => Some(11211),
            Backend::Redis | Backend::Rediss => Some(6379),
        }
    }
}

/// A password. `Debug` prints `***` and there is no `Display`, so it cannot leak through
/// `{:?}` of a struct that holds it or through an accidental `format!`; [`Secret::expose`]
/// is the one, greppable, way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The password itself, for handing to a driver.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A parsed `--target` URL.
#[derive(Clone, PartialEq, Eq)]
pub struct TargetUrl {
    pub backend: Backend,
    /// sqlite: the database file path (`sqlite:///abs/path` or `sqlite://relative/path`;
    /// `sqlite::memory:` is refused: benchmarks need a file).
    pub path: Option<PathBuf>,
    /// A host name, an IP address (IPv6 without its brackets), or a Unix socket directory
    /// (an absolute path: `?host=/var/run/postgresql` or `%2Fvar%2Frun%2Fpostgresql`).
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    /// Never printed: see [`Secret`].
    pub password: Option<Secret>,
    pub database: Option<String>,
    /// Query parameters other than the password (`sslmode=require`, …), in order.
    pub params: Vec<(String, String)>,
}

/// Why a `--target` URL was refused. Each message is one line that names the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// No `scheme://` at the front.
    #[error(
        "not a URL: missing the scheme; use sqlite://, postgres://, mysql://, memcached:// or redis://"
    )]
    MissingScheme,
    /// A scheme this build does not know.
    #[error("unknown scheme '{0}'; use sqlite://, postgres://, mysql://, memcached:// or redis://")]
    UnknownScheme(String),
    /// `postgres:host` and the like: the `//` is missing.
    #[error("'{0}:' must be followed by '//'; write {0}://...")]
    MissingSlashes(String),
    /// A libpq `key=value` string that does not parse (the reason never quotes a value).
    #[error("not a PostgreSQL key=value string: {0}")]
    Keywords(String),
    /// `sqlite::memory:` or `mode=memory`.
    #[error(
        "an in-memory SQLite database cannot be benchmarked; give a file: sqlite:///abs/path.db or sqlite://relative/path.db"
    )]
    SqliteMemory,
    /// `sqlite://` with nothing after it.
    #[error(
        "the SQLite URL names no file; write sqlite:///abs/path.db or sqlite://relative/path.db"
    )]
    SqliteNoPath,
    /// The port is not made of digits. Not quoted: it may be part of a mangled password.
    #[error(
        "the port is not a number; write host:PORT with PORT from 1 to 65535 (and percent-encode '?' as %3F and '%' as %25 in a password)"
    )]
    BadPort,
    /// The port is a number outside 1..=65535. Not quoted either: an all-digit password
    /// followed by a raw `?` lands where the port is looked for.
    #[error("the port is out of range; use a port from 1 to 65535")]
    PortOutOfRange,
    /// A host name with characters no host name has.
    #[error(
        "bad host '{0}'; use a host name, an IP address ([::1] for IPv6) or a socket directory (?host=/path)"
    )]
    BadHost(String),
    /// An IPv6 address without brackets (its colons would be read as a port).
    #[error("IPv6 addresses go in brackets: write [{0}] (with :PORT after the bracket)")]
    Ipv6NeedsBrackets(String),
    /// `[` without `]`, or something other than `:PORT` after `]`.
    #[error("bad bracketed IPv6 host; write [ADDRESS] or [ADDRESS]:PORT, e.g. [::1]:5432")]
    BadIpv6,
    /// `host1,host2`: libpq's failover lists.
    #[error("several hosts in one URL are not supported; give one host")]
    MultipleHosts,
    /// A raw `/` inside the database name.
    #[error("the database name '{0}' has a '/'; percent-encode it as %2F")]
    BadDatabase(String),
    /// A `%` not followed by two hex digits.
    #[error(
        "bad percent-encoding in the {0}: '%' must be followed by two hex digits (write %25 for '%')"
    )]
    BadPercent(&'static str),
    /// Percent-decoding gave bytes that are not UTF-8.
    #[error("the {0} is not UTF-8 after percent-decoding")]
    NotUtf8(&'static str),
    /// A query parameter without `=`. Not quoted: it may be a mangled password.
    #[error(
        "a query parameter has no value; write ?NAME=VALUE&NAME=VALUE (and percent-encode '?' as %3F in a password)"
    )]
    ParamWithoutValue,
    /// `?=value`.
    #[error("a query parameter has an empty name; write ?NAME=VALUE")]
    EmptyParamName,
    /// `unix://` without a socket path.
    #[error("unix:// takes a socket's path, e.g. unix:///run/redis/redis.sock?db=1")]
    UnixNoPath,
}

/// The part of the URL a percent-decoding error is in (for the message).
const PART_USER: &str = "user name";
const PART_PASSWORD: &str = "password";
const PART_HOST: &str = "host";
const PART_DATABASE: &str = "database name";
const PART_PATH: &str = "file path";
const PART_QUERY: &str = "query";

/// The accepted scheme spellings, in any case.
fn backend_of(scheme: &str) -> Option<Backend> {
    match scheme.to_ascii_lowercase().as_str() {
        "sqlite" => Some(Backend::Sqlite),
        "postgres" | "postgresql" => Some(Backend::Postgres),
        "mysql" | "mariadb" => Some(Backend::Mysql),
        "memcached" | "memcache" => Some(Backend::Memcached),
        "redis" | "valkey" => Some(Backend::Redis),
        "rediss" | "valkeys" => Some(Backend::Rediss),
        _ => None,
    }
}

/// RFC 3986's scheme characters, and a length no scheme exceeds: anything else before `://`
/// is not a scheme, and may not be quoted (it could be a password).
fn looks_like_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && s.len() <= 24
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

impl FromStr for TargetUrl {
    type Err = UrlError;

    fn from_str(s: &str) -> Result<Self, UrlError> {
        let s = s.trim();
        if super::conninfo::looks_like_keywords(s) {
            return parse_keywords(s);
        }
        let Some((scheme, rest)) = s.split_once("://") else {
            return Err(without_slashes(s));
        };
        if !looks_like_scheme(scheme) {
            return Err(UrlError::MissingScheme);
        }
        if is_unix_scheme(scheme) {
            return parse_unix(rest);
        }
        let backend =
            backend_of(scheme).ok_or_else(|| UrlError::UnknownScheme(scheme.to_string()))?;
        match backend {
            Backend::Sqlite => parse_sqlite(rest),
            Backend::Postgres | Backend::Mysql => parse_server(backend, rest),
            Backend::Memcached | Backend::Redis | Backend::Rediss => parse_cache(backend, rest),
        }
    }
}

/// The error for a string without `://`: the in-memory SQLite spelling, a known scheme that
/// lost its slashes, or no scheme at all.
fn without_slashes(s: &str) -> UrlError {
    let Some((head, tail)) = s.split_once(':') else {
        return UrlError::MissingScheme;
    };
    match backend_of(head) {
        Some(Backend::Sqlite) if tail.trim_start_matches(':').starts_with("memory") => {
            UrlError::SqliteMemory
        }
        Some(_) => UrlError::MissingSlashes(head.to_ascii_lowercase()),
        None => UrlError::MissingScheme,
    }
}

/// A libpq `key=value` string: a PostgreSQL target with the same fields a URL would give.
fn parse_keywords(s: &str) -> Result<TargetUrl, UrlError> {
    let mut url = TargetUrl::empty(Backend::Postgres);
    for (k, v) in super::conninfo::parse_keywords(s)? {
        url.take_param(k, v)?;
    }
    Ok(url)
}

fn parse_sqlite(rest: &str) -> Result<TargetUrl, UrlError> {
    let (path_text, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    if path_text.is_empty() {
        return Err(UrlError::SqliteNoPath);
    }
    let path = decode(path_text, PART_PATH)?;
    if path.starts_with(":memory") {
        return Err(UrlError::SqliteMemory);
    }
    let mut url = TargetUrl::empty(Backend::Sqlite);
    url.path = Some(PathBuf::from(path));
    for (k, v) in parse_query(query)? {
        if k.eq_ignore_ascii_case("mode") && v.eq_ignore_ascii_case("memory") {
            return Err(UrlError::SqliteMemory);
        }
        url.take_param(k, v)?;
    }
    Ok(url)
}

/// Redis clients' spellings of a Unix socket: redis-py's `unix://`, redis-rs's
/// `redis+unix://` (and Valkey's).
fn is_unix_scheme(scheme: &str) -> bool {
    matches!(
        scheme.to_ascii_lowercase().as_str(),
        "unix" | "redis+unix" | "valkey+unix"
    )
}

/// `unix://[user:password@]/path/redis.sock[?db=N&password=...]`: Redis over a Unix socket,
/// as redis-py and redis-rs write it.
fn parse_unix(rest: &str) -> Result<TargetUrl, UrlError> {
    let (userinfo, path) = match rest.split_once("@/") {
        Some((info, p)) if !info.contains('/') => (Some(info), format!("/{p}")),
        _ => (None, rest.to_string()),
    };
    if !path.starts_with('/') || path.len() < 2 {
        return Err(UrlError::UnixNoPath);
    }
    let mut url = parse_cache(Backend::Redis, &path)?;
    if let Some(info) = userinfo {
        let (user, password) = match info.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (info, None),
        };
        if !user.is_empty() {
            url.user = Some(decode(user, PART_USER)?);
        }
        if let Some(p) = password {
            url.password = Some(Secret(decode(p, PART_PASSWORD)?));
        }
    }
    Ok(url)
}

/// A cache: a server URL, or a Unix socket as the path after an empty authority
/// (`memcached:///run/memcached.sock`, `redis:///run/redis.sock?db=1`).
fn parse_cache(backend: Backend, rest: &str) -> Result<TargetUrl, UrlError> {
    if let Some(path) = rest.strip_prefix('/') {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        let mut url = TargetUrl::empty(backend);
        url.path = Some(PathBuf::from(format!("/{}", decode(path, PART_PATH)?)));
        for (k, v) in parse_query(query)? {
            // A socket has no path left for the database: redis-py's and redis-rs's
            // parameters name it, and the user and password.
            match (backend, k.as_str()) {
                (Backend::Redis, "db") => url.database = Some(v),
                (Backend::Redis, "pass") => url.password = Some(Secret(v)),
                (Backend::Redis, "user" | "username") => url.user = Some(v),
                _ => url.take_param(k, v)?,
            }
        }
        return Ok(url);
    }
    parse_server(backend, rest)
}

fn parse_server(backend: Backend, rest: &str) -> Result<TargetUrl, UrlError> {
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    // The last '@' before the query: a raw '/' or '@' in a password stays in the password.
    let (userinfo, after_at) = match before_query.rfind('@') {
        Some(i) => (Some(&before_query[..i]), &before_query[i + 1..]),
        None => (None, before_query),
    };
    let (hostport, db) = match after_at.split_once('/') {
        Some((h, d)) => (h, Some(d)),
        None => (after_at, None),
    };

    let mut url = TargetUrl::empty(backend);
    if let Some(info) = userinfo {
        let (user, password) = match info.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (info, None),
        };
        let user = decode(user, PART_USER)?;
        url.user = (!user.is_empty()).then_some(user);
        url.password = password
            .map(|p| decode(p, PART_PASSWORD).map(Secret))
            .transpose()?;
    }
    let (host, port) = split_host_port(hostport)?;
    url.host = host;
    url.port = port;
    if let Some(db) = db.filter(|d| !d.is_empty()) {
        if db.contains('/') {
            return Err(UrlError::BadDatabase(db.to_string()));
        }
        url.database = Some(decode(db, PART_DATABASE)?);
    }
    for (k, v) in parse_query(query)? {
        url.take_param(k, v)?;
    }
    Ok(url)
}

/// `host`, `host:port`, `[v6]:port`, `:port` or nothing.
fn split_host_port(s: &str) -> Result<(Option<String>, Option<u16>), UrlError> {
    if s.contains(',') {
        return Err(UrlError::MultipleHosts);
    }
    if let Some(inner) = s.strip_prefix('[') {
        let (addr, after) = inner.split_once(']').ok_or(UrlError::BadIpv6)?;
        let port = match after {
            "" => None,
            p => parse_port(p.strip_prefix(':').ok_or(UrlError::BadIpv6)?)?,
        };
        // The zone of a link-local address is written %25eth0.
        let addr = decode(addr, PART_HOST)?;
        let (ip, zone) = addr.split_once('%').unwrap_or((&addr, ""));
        let ip_ok = ip.contains(':')
            && ip
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
        let zone_ok = zone
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ip_ok || !zone_ok {
            return Err(UrlError::BadIpv6);
        }
        return Ok((Some(addr), port));
    }
    if s.matches(':').count() > 1 {
        // Quoted only when it is an address: `user:pass:word?` would land here too.
        let address = s
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
        return Err(if address {
            UrlError::Ipv6NeedsBrackets(s.to_string())
        } else {
            UrlError::BadPort
        });
    }
    let (host, port) = match s.split_once(':') {
        Some((h, p)) => (h, parse_port(p)?),
        None => (s, None),
    };
    if host.is_empty() {
        return Ok((None, port));
    }
    Ok((Some(check_host(decode(host, PART_HOST)?)?), port))
}

/// A socket directory (absolute path) passes as it is; anything else must look like a host
/// name or an IPv4 address, so a typo fails here rather than as a DNS error later.
fn check_host(host: String) -> Result<String, UrlError> {
    let name_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if host.starts_with('/') || name_ok {
        Ok(host)
    } else if host.contains(':') {
        Err(UrlError::Ipv6NeedsBrackets(host))
    } else {
        Err(UrlError::BadHost(host))
    }
}

/// An empty port means the default (RFC 3986 allows `host:`).
fn parse_port(p: &str) -> Result<Option<u16>, UrlError> {
    if p.is_empty() {
        return Ok(None);
    }
    if !p.chars().all(|c| c.is_ascii_digit()) {
        return Err(UrlError::BadPort);
    }
    match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(UrlError::PortOutOfRange),
    }
}

/// `a=1&b=2`, each name and value percent-decoded, empty pieces (`&&`) skipped.
fn parse_query(query: Option<&str>) -> Result<Vec<(String, String)>, UrlError> {
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    query
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            let (k, v) = piece.split_once('=').ok_or(UrlError::ParamWithoutValue)?;
            if k.is_empty() {
                return Err(UrlError::EmptyParamName);
            }
            Ok((decode(k, PART_QUERY)?, decode(v, PART_QUERY)?))
        })
        .collect()
}

/// Names of parameters whose values are printed as `***`: the password itself, and libpq's
/// and the MySQL drivers' other secrets (`sslpassword`, …) that stay in `params`.
fn is_secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["pass", "pwd", "secret", "token"]
        .iter()
        .any(|s| n.contains(s))
}

impl TargetUrl {
    fn empty(backend: Backend) -> Self {
        TargetUrl {
            backend,
            path: None,
            host: None,
            port: None,
            user: None,
            password: None,
            database: None,
            params: Vec::new(),
        }
    }

    /// A query parameter: the password is lifted out; for postgres, libpq's connection
    /// keywords override the authority (as libpq does); the rest are kept in order.
    fn take_param(&mut self, key: String, value: String) -> Result<(), UrlError> {
        if key.eq_ignore_ascii_case("password") {
            self.password = Some(Secret(value));
            return Ok(());
        }
        if self.backend == Backend::Postgres {
            match key.as_str() {
                "host" => {
                    if value.contains(',') {
                        return Err(UrlError::MultipleHosts);
                    }
                    self.host = Some(check_host(value)?);
                    return Ok(());
                }
                "port" => {
                    self.port = parse_port(&value)?;
                    return Ok(());
                }
                "user" => {
                    self.user = Some(value);
                    return Ok(());
                }
                "dbname" => {
                    self.database = Some(value);
                    return Ok(());
                }
                _ => {}
            }
        }
        self.params.push((key, value));
        Ok(())
    }

    /// The URL with any password replaced by `***` (for the record, the terminal and
    /// reports). It is rebuilt from the fields, so it is canonical: `postgresql://` and
    /// `mariadb://` come out as `postgres://` and `mysql://`, and parsing it again gives the
    /// same target (with `***` as the password).
    pub fn redacted(&self) -> String {
        let mut out = format!("{}://", self.backend.scheme());
        let mut params: Vec<(&str, &str)> = Vec::new();
        if let Some(path) = self
            .path
            .as_ref()
            .filter(|_| self.backend != Backend::Sqlite)
        {
            // A cache's Unix socket: an empty authority, then the absolute path; the
            // database and user as parameters (the password as one, hidden).
            out.push_str(&encode(&path.to_string_lossy(), "/:~+,;=@"));
            if let Some(db) = &self.database {
                params.push(("db", db));
            }
            if let Some(user) = &self.user {
                params.push(("user", user));
            }
            if self.password.is_some() {
                params.push(("password", "***"));
            }
        } else if self.backend == Backend::Sqlite {
            if let Some(path) = &self.path {
                out.push_str(&encode(&path.to_string_lossy(), "/:~+,;=@"));
            }
        } else {
            if self.user.is_some() || self.password.is_some() {
                out.push_str(&encode(self.user.as_deref().unwrap_or(""), ""));
                if self.password.is_some() {
                    out.push_str(":***");
                }
                out.push('@');
            }
            match self.host.as_deref() {
                // libpq's own spelling for a socket directory is the readable one.
                Some(h) if h.starts_with('/') && self.backend == Backend::Postgres => {
                    params.push(("host", h));
                }
                Some(h) if h.starts_with('/') => out.push_str(&encode(h, "")),
                Some(h) if h.contains(':') => {
                    out.push('[');
                    out.push_str(&h.replace('%', "%25"));
                    out.push(']');
                }
                Some(h) => out.push_str(h),
                None => {}
            }
            if let Some(p) = self.port {
                out.push_str(&format!(":{p}"));
            }
            if let Some(db) = &self.database {
                out.push('/');
                out.push_str(&encode(db, ""));
            }
        }
        params.extend(self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        for (i, (k, v)) in params.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(&encode(k, ""));
            out.push('=');
            if is_secret_param(k) {
                out.push_str("***");
            } else {
                out.push_str(&encode(v, "/:,"));
            }
        }
        out
    }

    /// Fills the password when the URL has none, as the database's own clients would:
    /// postgres: `PGPASSWORD`, then the password file (`PGPASSFILE` or `~/.pgpass`);
    /// mysql: `MYSQL_PWD`, then the `[client]` section of `~/.my.cnf`. A file that is ignored
    /// (group- or world-accessible `.pgpass`, world-writable `.my.cnf`, unreadable) is named
    /// with the reason on stderr; [`TargetUrl::password_from_environment`] returns the
    /// reasons instead. `env` and `home` are passed in so tests need not touch the process's.
    pub fn with_password_from_environment(
        mut self,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Self {
        let found = self.password_from_environment(env, home);
        for note in &found.notes {
            eprintln!("warning: {note}");
        }
        if let Some(p) = found.password {
            self.password = Some(p);
        }
        self
    }

    /// What [`TargetUrl::with_password_from_environment`] would fill, where from, and why
    /// any file was skipped. Looks nowhere when the URL has a password.
    pub fn password_from_environment(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> PasswordLookup {
        let mut found = PasswordLookup::default();
        if self.password.is_some() {
            return found;
        }
        match self.backend {
            Backend::Sqlite | Backend::Memcached => {}
            // redis-cli's variable.
            Backend::Redis | Backend::Rediss => {
                if let Some(pw) = env("REDISCLI_AUTH").filter(|p| !p.is_empty()) {
                    found.password = Some(Secret(pw));
                    found.source = Some("REDISCLI_AUTH".to_string());
                }
            }
            Backend::Postgres => {
                if let Some(pw) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
                    found.password = Some(Secret(pw));
                    found.source = Some("PGPASSWORD".to_string());
                    return found;
                }
                let file = env("PGPASSFILE")
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| home.map(|h| h.join(".pgpass")));
                if let Some(file) = file {
                    let key = self.pgpass_key(env);
                    if let Some(text) = read_private(&file, 0o077, &mut found.notes)
                        && let Some(pw) = pgpass_lookup(&text, &key)
                    {
                        found.password = Some(Secret(pw));
                        found.source = Some(file.display().to_string());
                    }
                }
            }
            Backend::Mysql => {
                if let Some(pw) = env("MYSQL_PWD").filter(|p| !p.is_empty()) {
                    found.password = Some(Secret(pw));
                    found.source = Some("MYSQL_PWD".to_string());
                    return found;
                }
                if let Some(file) = home.map(|h| h.join(".my.cnf")) {
                    // The MySQL clients skip only world-writable option files.
                    if let Some(text) = read_private(&file, 0o002, &mut found.notes)
                        && let Some(pw) = my_cnf_password(&text)
                    {
                        found.password = Some(Secret(pw));
                        found.source = Some(file.display().to_string());
                    }
                }
            }
        }
        found
    }

    /// The four values a `.pgpass` line is matched against, with libpq's defaults for what
    /// the URL leaves out: host `localhost` (also for the default socket directory), port
    /// 5432, the OS user, and a database named after the user.
    fn pgpass_key(&self, env: &dyn Fn(&str) -> Option<String>) -> [String; 4] {
        let host = match self.host.as_deref() {
            None | Some("") => "localhost".to_string(),
            Some(h) if DEFAULT_SOCKET_DIRS.contains(&h.trim_end_matches('/')) => {
                "localhost".to_string()
            }
            Some(h) => h.to_string(),
        };
        let port = self.port.unwrap_or(5432).to_string();
        let user = self
            .user
            .clone()
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
            .unwrap_or_default();
        let database = self.database.clone().unwrap_or_else(|| user.clone());
        [host, port, database, user]
    }
}

impl fmt::Display for TargetUrl {
    /// The redacted form: a `TargetUrl` can be printed anywhere.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for TargetUrl {
    /// By hand rather than derived so that secret-looking `params` (`sslpassword`) are masked
    /// as the password is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<(&str, &str)> = self
            .params
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str(),
                    if is_secret_param(k) {
                        "***"
                    } else {
                        v.as_str()
                    },
                )
            })
            .collect();
        f.debug_struct("TargetUrl")
            .field("backend", &self.backend)
            .field("path", &self.path)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password)
            .field("database", &self.database)
            .field("params", &params)
            .finish()
    }
}

/// What the environment gave for a password, and why any file was skipped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PasswordLookup {
    pub password: Option<Secret>,
    /// `PGPASSWORD`, `MYSQL_PWD` or the file's path, for the record's disclosure.
    pub source: Option<String>,
    /// One line each: a file that was ignored, and why.
    pub notes: Vec<String>,
}

/// libpq's compiled-in socket directory on Debian (`/run` is the same directory): a socket
/// connection there is matched in `.pgpass` as host `localhost`, as libpq does.
const DEFAULT_SOCKET_DIRS: [&str; 2] = ["/var/run/postgresql", "/run/postgresql"];

/// The file's text, or `None` when it is missing (silently) or must be ignored: not a plain
/// file, any of the `forbidden` mode bits set, or unreadable (each with a note).
fn read_private(path: &Path, forbidden: u32, notes: &mut Vec<String>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            notes.push(format!("{} ignored: {e}", path.display()));
            return None;
        }
    };
    if !meta.is_file() {
        notes.push(format!("{} ignored: not a plain file", path.display()));
        return None;
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & forbidden != 0 {
        let who = if forbidden == 0o002 {
            "is world-writable"
        } else {
            "has group or world access"
        };
        notes.push(format!(
            "{p} ignored: it {who} (mode {mode:03o}); run chmod 600 {p}",
            p = path.display()
        ));
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) => {
            notes.push(format!("{} ignored: {e}", path.display()));
            None
        }
    }
}

/// One `.pgpass` field: its text with escapes undone, and whether it was a bare `*`
/// (an escaped `\*` is a literal star, as in libpq).
struct PgpassField {
    text: String,
    wildcard: bool,
}

/// A `.pgpass` line's four match fields and its password, or `None` for a line with fewer
/// than five fields. The password ends at the next unescaped `:` (libpq ignores the rest).
fn pgpass_fields(line: &str) -> Option<([PgpassField; 4], String)> {
    let mut fields: Vec<PgpassField> = Vec::with_capacity(5);
    let mut text = String::new();
    let mut raw_star = true; // the raw field so far is exactly "*"
    let mut raw_len = 0usize;
    let mut chars = line.chars();
    let mut ended = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                raw_star = false;
                raw_len += 2;
                if let Some(n) = chars.next() {
                    text.push(n);
                }
            }
            ':' => {
                fields.push(PgpassField {
                    wildcard: raw_star && raw_len == 1,
                    text: std::mem::take(&mut text),
                });
                raw_star = true;
                raw_len = 0;
                if fields.len() == 5 {
                    ended = true;
                    break;
                }
            }
            c => {
                raw_star &= c == '*';
                raw_len += 1;
                text.push(c);
            }
        }
    }
    if !ended {
        fields.push(PgpassField {
            wildcard: raw_star && raw_len == 1,
            text,
        });
    }
    if fields.len() < 5 {
        return None;
    }
    let password = fields.pop().map(|f| f.text).unwrap_or_default();
    let four: [PgpassField; 4] = fields.try_into().ok()?;
    Some((four, password))
}

/// The password of the first line whose host, port, database and user match `key`.
fn pgpass_lookup(text: &str, key: &[String; 4]) -> Option<String> {
    text.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(pgpass_fields)
        .find(|(fields, _)| {
            fields
                .iter()
                .zip(key)
                .all(|(f, want)| f.wildcard || f.text == *want)
        })
        .map(|(_, pw)| pw)
}

/// The `password` of the `[client]` section(s) of a MySQL option file; the last one wins, as
/// later settings override earlier ones there. Comments (`#`, `;` at the start of a line, `#`
/// after a value outside quotes), quotes and the option-file escapes are handled;
/// `!include` directives are not followed.
fn my_cnf_password(text: &str) -> Option<String> {
    let mut in_client = false;
    let mut password = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with(';')
            || line.starts_with('!')
        {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let name = section.split(']').next().unwrap_or("").trim();
            in_client = name.eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        let line = strip_cnf_comment(line);
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line.trim(), None),
        };
        if key.replace('_', "-").eq_ignore_ascii_case("password") {
            // A bare `password` means "ask", which a benchmark cannot do.
            password = value.map(cnf_value);
        }
    }
    password
}

/// The line up to an unquoted, unescaped `#`.
fn strip_cnf_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '\'' | '"' if quote.is_none() => quote = Some(c),
            c if quote == Some(c) => quote = None,
            '#' if quote.is_none() => return &line[..i],
            _ => {}
        }
    }
    line
}

/// A value without its surrounding quotes, with `\n \t \r \b \s \\` and escaped quotes undone
/// (other backslashes are kept, as the MySQL clients keep them).
fn cnf_value(v: &str) -> String {
    let v = v.trim();
    let inner = [('"', '"'), ('\'', '\'')]
        .iter()
        .find_map(|(open, close)| {
            v.strip_prefix(*open)
                .and_then(|rest| rest.strip_suffix(*close))
        })
        .unwrap_or(v);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(c @ ('\\' | '"' | '\'')) => out.push(c),
            Some(c) => {
                out.push('\\');
                out.push(c);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Percent-decoding into UTF-8; `part` names the piece for the error.
fn decode(s: &str, part: &'static str) -> Result<String, UrlError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Checked digit by digit: `from_str_radix` alone would take "+1".
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(UrlError::BadPercent(part))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UrlError::NotUtf8(part))
}

/// Percent-encoding of everything but RFC 3986's unreserved characters and `keep`.
fn encode(s: &str, keep: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~') || keep.contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Replaces the password of any URL-looking argument in a command line with `***` (for the
/// record's `command`): `--target=URL`, `--target URL`, and bare URLs anywhere. The text is
/// kept as typed apart from the secret. An argument that does not parse as a target is
/// redacted more widely (everything between `://` and its last `@`), since where its
/// password ends cannot be known.
pub fn redact_command_line(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_target_flag = false;
    for arg in args {
        let redacted = if after_target_flag {
            redact_url_text(arg)
        } else if let Some((flag, value)) = arg.split_once('=').filter(|_| arg.starts_with('-')) {
            if value.contains("://") || flag == "--target" {
                format!("{flag}={}", redact_url_text(value))
            } else {
                arg.clone()
            }
        } else if arg.contains("://") || super::conninfo::looks_like_keywords(arg) {
            redact_url_text(arg)
        } else {
            arg.clone()
        };
        after_target_flag = arg == "--target";
        out.push(redacted);
    }
    out
}

/// `scheme://user:password@host/...` with the password replaced by `***`: the parser's
/// redaction where the URL parses, else a plain cut of the password.
pub fn redact(url: &str) -> String {
    match url.parse::<TargetUrl>() {
        Ok(parsed) => parsed.redacted(),
        Err(_) => redact_url_text(url),
    }
}

/// One URL's text with its password(s) replaced by `***`, whether or not it parses.
pub fn redact_url_text(u: &str) -> String {
    if super::conninfo::looks_like_keywords(u) {
        return redact_keywords_text(u);
    }
    let (prefix, rest) = match u.find("://") {
        Some(i) => u.split_at(i + 3),
        None => ("", u),
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let parsed = u.parse::<TargetUrl>().ok();
    let mut out = String::from(prefix);
    match parsed.map(|t| t.backend) {
        // A file path has no user information, whatever '@' and ':' it holds.
        Some(Backend::Sqlite) => out.push_str(before_query),
        // The same rule as the parser: user information ends at the last '@' before '?'.
        Some(_) => match before_query.rfind('@') {
            Some(at) => {
                let info = &before_query[..at];
                match info.split_once(':') {
                    Some((user, _)) => out.push_str(&format!("{user}:***")),
                    None => out.push_str(info),
                }
                out.push_str(&before_query[at..]);
            }
            None => out.push_str(before_query),
        },
        // Unparsed: hide everything up to the last '@' of the whole text, query included,
        // since a raw '?' in a password would have ended the part before the query early.
        None => match rest.rfind('@') {
            Some(at) => {
                out.push_str("***");
                let tail = &rest[at..];
                return match tail.split_once('?') {
                    Some((t, q)) => format!("{out}{t}?{}", redact_query(q)),
                    None => format!("{out}{tail}"),
                };
            }
            None => out.push_str(before_query),
        },
    }
    if let Some(q) = query {
        out.push('?');
        out.push_str(&redact_query(q));
    }
    out
}

/// A libpq `key=value` string with its secrets' values replaced by `***`; kept as typed when
/// it holds none, and hidden whole when it does not parse but may hold one.
fn redact_keywords_text(s: &str) -> String {
    let secret = |text: &str| {
        let lower = text.to_ascii_lowercase();
        ["pass", "pwd", "secret", "token"]
            .iter()
            .any(|w| lower.contains(w))
    };
    if !secret(s) {
        return s.to_string();
    }
    match super::conninfo::parse_keywords(s) {
        Ok(pairs) if !pairs.iter().any(|(k, _)| is_secret_param(k)) => s.to_string(),
        Ok(_) => super::conninfo::redact_keywords(s).unwrap_or_else(|| "***".into()),
        Err(_) => "***".into(),
    }
}

/// A query string with the values of secret-looking parameters replaced by `***`.
fn redact_query(q: &str) -> String {
    q.split('&')
        .map(|piece| match piece.split_once('=') {
            Some((k, _))
                if is_secret_param(&decode(k, PART_QUERY).unwrap_or_else(|_| k.into())) =>
            {
                format!("{k}=***")
            }
            _ => piece.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> TargetUrl {
        match s.parse() {
            Ok(t) => t,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn err(s: &str) -> UrlError {
        match s.parse::<TargetUrl>() {
            Ok(t) => panic!("{s} parsed as {t:?}"),
            Err(e) => e,
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// A fresh, empty directory under the temporary folder, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let dir = std::env::temp_dir().join(format!(
                "perflab-url-{tag}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temp dir");
            TempDir(dir)
        }

        fn write(&self, name: &str, text: &str, mode: u32) -> PathBuf {
            use std::os::unix::fs::PermissionsExt;
            let p = self.0.join(name);
            std::fs::write(&p, text).expect("write");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
            p
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn postgres_full_url() {
        let t = parse(
            "postgres://alice:s3cret@db.example.com:6543/bank?sslmode=require&application_name=perflab",
        );
        assert_eq!(t.backend, Backend::Postgres);
        assert_eq!(t.host.as_deref(), Some("db.example.com"));
        assert_eq!(t.port, Some(6543));
        assert_eq!(t.user.as_deref(), Some("alice"));
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("s3cret"));
        assert_eq!(t.database.as_deref(), Some("bank"));
        assert_eq!(
            t.params,
            vec![
                ("sslmode".to_string(), "require".to_string()),
                ("application_name".to_string(), "perflab".to_string())
            ]
        );
        assert_eq!(t.path, None);
    }

    #[test]
    fn every_scheme_spelling() {
        for (s, b) in [
            ("postgres://h/d", Backend::Postgres),
            ("postgresql://h/d", Backend::Postgres),
            ("POSTGRES://h/d", Backend::Postgres),
            ("mysql://h/d", Backend::Mysql),
            ("mariadb://h/d", Backend::Mysql),
            ("MariaDB://h/d", Backend::Mysql),
            ("sqlite:///tmp/x.db", Backend::Sqlite),
            ("SQLite://x.db", Backend::Sqlite),
        ] {
            assert_eq!(parse(s).backend, b, "{s}");
        }
    }

    /// redis-py's `unix://` and redis-rs's `redis+unix://` are Redis over a socket, with the
    /// database, user and password as parameters (or redis-py's `user:pass@` before the path).
    #[test]
    fn redis_sockets_in_the_clients_spellings() {
        for s in [
            "unix:///run/redis.sock?db=2",
            "redis+unix:///run/redis.sock?db=2",
            "REDIS+UNIX:///run/redis.sock?db=2",
            "redis:///run/redis.sock?db=2",
        ] {
            let u = parse(s);
            assert_eq!(u.backend, Backend::Redis, "{s}");
            assert_eq!(u.path, Some(PathBuf::from("/run/redis.sock")), "{s}");
            assert_eq!(u.database.as_deref(), Some("2"), "{s}");
        }
        let u = parse("unix://bob:s3cret@/run/redis.sock");
        assert_eq!(u.user.as_deref(), Some("bob"));
        assert_eq!(u.password.as_ref().map(|p| p.expose()), Some("s3cret"));
        assert!(!u.redacted().contains("s3cret"));
        let u = parse("redis+unix:///run/redis.sock?pass=pw&user=al");
        assert_eq!(u.password.as_ref().map(|p| p.expose()), Some("pw"));
        assert_eq!(u.user.as_deref(), Some("al"));
        assert_eq!("unix://".parse::<TargetUrl>(), Err(UrlError::UnixNoPath));
        assert_eq!(
            "unix://host:6379".parse::<TargetUrl>(),
            Err(UrlError::UnixNoPath)
        );
    }

    #[test]
    fn sqlite_paths() {
        assert_eq!(
            parse("sqlite:///abs/bank.db").path,
            Some(PathBuf::from("/abs/bank.db"))
        );
        assert_eq!(
            parse("sqlite://rel/bank.db").path,
            Some(PathBuf::from("rel/bank.db"))
        );
        assert_eq!(
            parse("sqlite://bank.db").path,
            Some(PathBuf::from("bank.db"))
        );
        assert_eq!(
            parse("sqlite:///my%20dir/b%3Fank.db").path,
            Some(PathBuf::from("/my dir/b?ank.db"))
        );
        let t = parse("sqlite:///x.db?cache=shared");
        assert_eq!(t.params, vec![("cache".into(), "shared".into())]);
        assert_eq!(
            (t.host, t.port, t.user, t.database),
            (None, None, None, None)
        );
    }

    #[test]
    fn sqlite_memory_and_empty_are_refused() {
        for s in [
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite:memory",
            "sqlite:///x.db?mode=memory",
        ] {
            assert_eq!(err(s), UrlError::SqliteMemory, "{s}");
        }
        assert_eq!(err("sqlite://"), UrlError::SqliteNoPath);
        assert_eq!(err("sqlite://?cache=shared"), UrlError::SqliteNoPath);
        assert_eq!(
            err("sqlite:/x.db"),
            UrlError::MissingSlashes("sqlite".into())
        );
        assert!(err("sqlite::memory:").to_string().contains("sqlite:///"));
    }

    #[test]
    fn ports() {
        assert_eq!(parse("postgres://h:1/d").port, Some(1));
        assert_eq!(parse("mysql://h:65535/d").port, Some(65535));
        assert_eq!(
            parse("mysql://h:/d").port,
            None,
            "an empty port is the default"
        );
        assert_eq!(parse("mysql://h/d").port, None);
        assert_eq!(parse("postgres://:5433/d").port, Some(5433));
        assert_eq!(parse("postgres://:5433/d").host, None);
        assert_eq!(err("postgres://h:0/d"), UrlError::PortOutOfRange);
        assert_eq!(err("postgres://h:65536/d"), UrlError::PortOutOfRange);
        assert_eq!(
            err("postgres://h:99999999999999999999/d"),
            UrlError::PortOutOfRange
        );
        assert_eq!(err("postgres://h:54x2/d"), UrlError::BadPort);
        assert_eq!(err("postgres://h:-1/d"), UrlError::BadPort);
        assert_eq!(err("postgres://h/d?port=abc"), UrlError::BadPort);
        assert_eq!(parse("postgres://h/d?port=5555").port, Some(5555));
    }

    #[test]
    fn unix_sockets() {
        // libpq's query form, and the percent-encoded host form.
        let t = parse("postgres://me@/bank?host=/var/run/postgresql");
        assert_eq!(t.host.as_deref(), Some("/var/run/postgresql"));
        assert_eq!(t.database.as_deref(), Some("bank"));
        assert!(t.params.is_empty(), "host= is lifted out of params");
        let t = parse("postgresql://%2Fvar%2Frun%2Fpostgresql/bank");
        assert_eq!(t.host.as_deref(), Some("/var/run/postgresql"));
        // The query overrides the authority, as in libpq.
        let t = parse("postgres://h:1/x?host=/tmp&port=5433&user=bob&dbname=other");
        assert_eq!(t.host.as_deref(), Some("/tmp"));
        assert_eq!(t.port, Some(5433));
        assert_eq!(t.user.as_deref(), Some("bob"));
        assert_eq!(t.database.as_deref(), Some("other"));
        // mysql: a socket file in the host; its `socket=` stays a driver parameter.
        let t = parse("mysql://root@%2Frun%2Fmysqld%2Fmysqld.sock/test");
        assert_eq!(t.host.as_deref(), Some("/run/mysqld/mysqld.sock"));
        let t = parse("mysql://root@localhost/test?socket=/run/mysqld/mysqld.sock");
        assert_eq!(
            t.params,
            vec![("socket".into(), "/run/mysqld/mysqld.sock".into())]
        );
    }

    #[test]
    fn percent_encoding() {
        let t = parse("postgres://al%40ice:p%40ss%3Aw%2Fo%3Frd%25@h/my%20db");
        assert_eq!(t.user.as_deref(), Some("al@ice"));
        assert_eq!(
            t.password.as_ref().map(Secret::expose),
            Some("p@ss:w/o?rd%")
        );
        assert_eq!(t.database.as_deref(), Some("my db"));
        let t = parse("mysql://u:%C3%A9t%C3%A9@h/d?opt=a%26b");
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("été"));
        assert_eq!(t.params, vec![("opt".into(), "a&b".into())]);
        assert_eq!(
            err("postgres://u:p%zz@h/d"),
            UrlError::BadPercent("password")
        );
        assert_eq!(err("postgres://u%4@h/d"), UrlError::BadPercent("user name"));
        assert_eq!(
            err("postgres://h/d%"),
            UrlError::BadPercent("database name")
        );
        assert_eq!(err("postgres://h/d%FF"), UrlError::NotUtf8("database name"));
        assert_eq!(err("postgres://h/d?a=%+1"), UrlError::BadPercent("query"));
    }

    #[test]
    fn raw_slash_and_at_in_a_password() {
        // Base64 passwords have '/' and '+'; the last '@' before '?' ends the user info.
        let t = parse("postgres://u:ab/c+d@e@db:5432/bank");
        assert_eq!(t.user.as_deref(), Some("u"));
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("ab/c+d@e"));
        assert_eq!(t.host.as_deref(), Some("db"));
        assert_eq!(t.database.as_deref(), Some("bank"));
    }

    #[test]
    fn ipv6_hosts() {
        let t = parse("postgres://u@[::1]:5433/d");
        assert_eq!(t.host.as_deref(), Some("::1"));
        assert_eq!(t.port, Some(5433));
        let t = parse("mysql://[2001:db8::7]/d");
        assert_eq!(t.host.as_deref(), Some("2001:db8::7"));
        assert_eq!(t.port, None);
        let t = parse("postgres://[fe80::1%25eth0]:5432/d");
        assert_eq!(t.host.as_deref(), Some("fe80::1%eth0"));
        assert_eq!(
            parse("postgres://[::ffff:127.0.0.1]/d").host.as_deref(),
            Some("::ffff:127.0.0.1")
        );
        assert_eq!(
            err("postgres://::1/d"),
            UrlError::Ipv6NeedsBrackets("::1".into())
        );
        assert_eq!(err("postgres://[::1/d"), UrlError::BadIpv6);
        assert_eq!(err("postgres://[::1]5432/d"), UrlError::BadIpv6);
        assert_eq!(err("postgres://[nothex]/d"), UrlError::BadIpv6);
        assert_eq!(err("postgres://[::1]:x/d"), UrlError::BadPort);
    }

    #[test]
    fn missing_pieces_are_none() {
        let t = parse("postgres://");
        assert_eq!(
            (
                t.host,
                t.port,
                t.user,
                t.password,
                t.database,
                t.params.len()
            ),
            (None, None, None, None, None, 0)
        );
        let t = parse("mysql://root@db");
        assert_eq!(t.user.as_deref(), Some("root"));
        assert_eq!((t.password, t.database), (None, None));
        let t = parse("postgres://db/");
        assert_eq!(t.database, None, "an empty database is the default");
        let t = parse("postgres://:@db/x");
        assert_eq!(t.user, None);
        assert_eq!(
            t.password.as_ref().map(Secret::expose),
            Some(""),
            "an explicit empty password"
        );
        let t = parse("postgres://u@/x");
        assert_eq!(t.host, None);
        let t = parse("postgres://h/d?&&a=1&");
        assert_eq!(t.params, vec![("a".into(), "1".into())]);
        assert_eq!(
            parse("mysql://h/d?flag=").params,
            vec![("flag".into(), String::new())]
        );
    }

    #[test]
    fn bad_schemes_and_shapes() {
        let e = err("postgress://h/d");
        assert_eq!(e, UrlError::UnknownScheme("postgress".into()));
        assert_eq!(
            e.to_string(),
            "unknown scheme 'postgress'; use sqlite://, postgres://, mysql://, memcached:// or redis://"
        );
        assert_eq!(err("http://h/d"), UrlError::UnknownScheme("http".into()));
        assert_eq!(err("localhost:5432/bank"), UrlError::MissingScheme);
        assert_eq!(err("bank.db"), UrlError::MissingScheme);
        assert_eq!(err(""), UrlError::MissingScheme);
        assert_eq!(err("://h/d"), UrlError::MissingScheme);
        assert_eq!(
            err("postgres:h/d"),
            UrlError::MissingSlashes("postgres".into())
        );
        assert_eq!(err("postgres://a,b/d"), UrlError::MultipleHosts);
        assert_eq!(err("postgres://h/d?host=a,b"), UrlError::MultipleHosts);
        assert_eq!(
            err("postgres://bad host/d"),
            UrlError::BadHost("bad host".into())
        );
        assert_eq!(err("postgres://h/a/b"), UrlError::BadDatabase("a/b".into()));
        assert_eq!(err("postgres://h/d?novalue"), UrlError::ParamWithoutValue);
        assert_eq!(err("postgres://h/d?=v"), UrlError::EmptyParamName);
        for e in [err("postgres://h/d?novalue"), err("postgress://x")] {
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
    }

    /// Mangled URLs whose errors must not quote the password.
    #[test]
    fn errors_never_quote_a_password() {
        for (url, secret) in [
            ("postgres://u:zq?ss@h/d", "zq"),
            ("postgres://u:hunter2?@h/d", "hunter2"),
            ("postgres://u:hunter2", "hunter2"),
            ("mysql://u:hunter2@h:x/d", "hunter2"),
            ("user:hunter2@h", "hunter2"),
            ("user:hunter2@h://", "hunter2"),
            ("postgres://u:xy%ter2@h", "xy"),
            ("postgres://u:123456?x@h/d", "123456"),
            ("postgres://u:99999?x@h/d", "99999"),
            ("postgres://u:p:w?x@h/d", "p:w"),
        ] {
            let e = err(url);
            assert!(!e.to_string().contains(secret), "{url}: {e}");
            assert!(!format!("{e:?}").contains(secret), "{url}: {e:?}");
        }
    }

    #[test]
    fn password_in_the_query_is_lifted_out() {
        let t = parse("postgres://u@h/d?sslmode=require&password=hunter2&x=1");
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("hunter2"));
        assert_eq!(
            t.params,
            vec![
                ("sslmode".into(), "require".into()),
                ("x".into(), "1".into())
            ]
        );
        // The query wins over the user information, as in libpq.
        let t = parse("mysql://u:old@h/d?Password=new");
        assert_eq!(t.password.as_ref().map(Secret::expose), Some("new"));
    }

    #[test]
    fn redacted_hides_the_password_and_parses_back() {
        for (url, secret) in [
            (
                "postgres://alice:hunter2@db:5432/bank?sslmode=require",
                "hunter2",
            ),
            ("postgresql://alice:hunter2@[::1]/bank", "hunter2"),
            ("mysql://root:hunter2@127.0.0.1:3306/test", "hunter2"),
            ("mariadb://:hunter2@h", "hunter2"),
            ("postgres://u@h/d?password=hunter2", "hunter2"),
            ("postgres://u:hun%74er2@h/d", "hunter2"),
            ("postgres://u:hun%74er2@h/d", "hun%74er2"),
            (
                "postgres://u@/d?host=/var/run/postgresql&password=hunter2",
                "hunter2",
            ),
            ("postgres://u@h/d?sslpassword=hunter2", "hunter2"),
        ] {
            let t = parse(url);
            let r = t.redacted();
            assert!(!r.contains(secret), "{url} -> {r}");
            assert!(!format!("{t:?}").contains(secret), "{url} -> {t:?}");
            assert!(!t.to_string().contains(secret), "{url} -> {t}");
            // Parsing the redacted form gives the same target, with *** as the password.
            let mut back = parse(&r);
            if t.password.is_some() {
                assert_eq!(
                    back.password.as_ref().map(Secret::expose),
                    Some("***"),
                    "{r}"
                );
                back.password = t.password.clone();
            }
            if let Some(i) = t.params.iter().position(|(k, _)| k == "sslpassword") {
                back.params[i].1 = t.params[i].1.clone();
            }
            assert_eq!(back, t, "{url} -> {r}");
        }
    }

    #[test]
    fn redacted_is_canonical() {
        assert_eq!(
            parse("postgresql://alice:x@db:5432/bank?sslmode=require").redacted(),
            "postgres://alice:***@db:5432/bank?sslmode=require"
        );
        assert_eq!(
            parse("mariadb://root@h/test").redacted(),
            "mysql://root@h/test"
        );
        assert_eq!(
            parse("postgres://%2Fvar%2Frun%2Fpostgresql/bank").redacted(),
            "postgres:///bank?host=/var/run/postgresql"
        );
        assert_eq!(
            parse("postgres://[::1]:5433/d").redacted(),
            "postgres://[::1]:5433/d"
        );
        assert_eq!(
            parse("sqlite:///abs/my%20bank.db").redacted(),
            "sqlite:///abs/my%20bank.db"
        );
        assert_eq!(
            parse("sqlite://rel/bank.db").redacted(),
            "sqlite://rel/bank.db"
        );
        assert_eq!(parse("postgres://").redacted(), "postgres://");
        assert_eq!(
            parse("postgres://u:p@h/d?sslpassword=k").redacted(),
            "postgres://u:***@h/d?sslpassword=***"
        );
    }

    #[test]
    fn secret_prints_stars() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(s.expose(), "hunter2");
        assert_eq!(s.clone(), s);
    }

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_lines_are_redacted() {
        let out = redact_command_line(&argv(&[
            "perflab",
            "oltp",
            "--target=postgres://alice:hunter2@db/bank",
            "--target",
            "mysql://root:hunter3@h/test",
            "postgres://u@h/d?sslmode=require&password=hunter4",
            "--scale",
            "10",
        ]));
        assert_eq!(
            out,
            argv(&[
                "perflab",
                "oltp",
                "--target=postgres://alice:***@db/bank",
                "--target",
                "mysql://root:***@h/test",
                "postgres://u@h/d?sslmode=require&password=***",
                "--scale",
                "10",
            ])
        );
        // Things that are not URLs, and URLs without passwords, are left as typed.
        let plain = argv(&[
            "perflab",
            "io",
            "/dev/nvme0n1",
            "--rate=1k",
            "sqlite:///a:b@c.db",
        ]);
        assert_eq!(redact_command_line(&plain), plain);
    }

    #[test]
    fn command_line_never_shows_a_password() {
        let cases = [
            "postgres://u:hunter2@h/d",
            "postgresql://u:hunter2@[::1]:5432/d",
            "mysql://:hunter2@h",
            "postgres://u:hun/ter2@h/d",
            "postgres://u:hunter2@h/d?x=a@b",
            "postgres://u@h/d?PassWord=hunter2",
            "postgres://u@h/d?pass%77ord=hunter2",
            "postgres://u@h/d?sslpassword=hunter2",
            // Mangled or unknown: redacted more widely rather than not at all.
            "postgres://u:hunter2?x@h/d",
            "postgres://u:hunter2?x@h/d?password=hunter2",
            "http://u:hunter2@h/",
            "postgres://u:hunter2@h:bad/d",
        ];
        for url in cases {
            for args in [
                argv(&["perflab", "--target", url]),
                argv(&["perflab", &format!("--target={url}")]),
                argv(&["perflab", url]),
            ] {
                let out = redact_command_line(&args);
                assert!(
                    out.iter()
                        .all(|a| !a.contains("hunter2") && !a.contains("hun/ter2")),
                    "{args:?} -> {out:?}"
                );
            }
        }
        // Where the URL parses, only the password goes.
        assert_eq!(
            redact_command_line(&argv(&["postgres://u:hunter2@h/d?x=a@b"])),
            argv(&["postgres://u:***@h/d?x=a@b"])
        );
        assert_eq!(
            redact_command_line(&argv(&["http://u:hunter2@h/x?password=p&y=1"])),
            argv(&["http://***@h/x?password=***&y=1"])
        );
    }

    fn pg(url: &str) -> TargetUrl {
        parse(url)
    }

    fn lookup(
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Option<String> {
        parse(url)
            .with_password_from_environment(env, home)
            .password
            .map(|s| s.expose().to_string())
    }

    #[test]
    fn a_password_in_the_url_is_kept() {
        let env = |k: &str| (k == "PGPASSWORD" || k == "MYSQL_PWD").then(|| "env".to_string());
        assert_eq!(
            lookup("postgres://u:url@h/d", &env, None).as_deref(),
            Some("url")
        );
        assert_eq!(
            lookup("mysql://u:url@h/d", &env, None).as_deref(),
            Some("url")
        );
        assert_eq!(
            lookup("postgres://u@h/d", &env, None).as_deref(),
            Some("env")
        );
        assert_eq!(lookup("mysql://u@h/d", &env, None).as_deref(), Some("env"));
        assert_eq!(lookup("sqlite:///x.db", &env, None), None);
        assert_eq!(lookup("postgres://u@h/d", &no_env, None), None);
    }

    #[test]
    fn pgpassword_comes_before_the_file() {
        let dir = TempDir::new("pgpw");
        dir.write(".pgpass", "*:*:*:*:fromfile\n", 0o600);
        let env = |k: &str| (k == "PGPASSWORD").then(|| "fromenv".to_string());
        assert_eq!(
            lookup("postgres://u@h/d", &env, Some(&dir.0)).as_deref(),
            Some("fromenv")
        );
        let empty = |k: &str| (k == "PGPASSWORD").then(String::new);
        assert_eq!(
            lookup("postgres://u@h/d", &empty, Some(&dir.0)).as_deref(),
            Some("fromfile"),
            "an empty PGPASSWORD is no password, as in libpq"
        );
        let found = pg("postgres://u@h/d").password_from_environment(&no_env, Some(&dir.0));
        assert_eq!(
            found.source,
            Some(dir.0.join(".pgpass").display().to_string())
        );
    }

    #[test]
    fn pgpass_matching() {
        let dir = TempDir::new("pgpass");
        let text = "\
# comment:*:*:*:nope
db.example:5432:bank:alice:first
db.example:5432:bank:alice:second
*:5433:*:bob:wild-host
db\\:odd:*:*:*:escaped-host
h:*:*:*:pa\\:ss\\\\word:ignored-after-colon
\\*:*:*:*:literal-star
short:line
localhost:5432:carol:carol:defaults
/tmp:5432:*:*:socket-dir
";
        dir.write(".pgpass", text, 0o600);
        let home = Some(dir.0.as_path());
        let user_env = |k: &str| (k == "USER").then(|| "carol".to_string());
        for (url, want) in [
            ("postgres://alice@db.example/bank", Some("first")),
            ("postgres://alice@db.example:5432/bank", Some("first")),
            ("postgres://alice@db.example:5433/bank", None),
            ("postgres://bob@anything:5433/x", Some("wild-host")),
            ("postgres://bob@anything:5432/x", None),
            ("postgres://u@db%3Aodd/x", None), // a ':' cannot be in a host name
            ("postgres://u@h/x", Some("pa:ss\\word")),
            ("postgres://short/line", None),
            ("postgres://", Some("defaults")), // localhost, 5432, $USER, database = user
            (
                "postgres:///x?host=/var/run/postgresql&user=carol&dbname=carol",
                Some("defaults"),
            ),
            ("postgres:///x?host=/tmp", Some("socket-dir")),
        ] {
            let got = match url.parse::<TargetUrl>() {
                Ok(t) => t
                    .password_from_environment(&user_env, home)
                    .password
                    .map(|s| s.expose().to_string()),
                Err(_) => None,
            };
            assert_eq!(got.as_deref(), want, "{url}");
        }
        // An escaped star is a literal one (no URL has host "*", so match a key directly).
        let key = ["*", "5432", "x", "u"].map(String::from);
        assert_eq!(pgpass_lookup(text, &key).as_deref(), Some("literal-star"));
        // The escaped host itself, through the field parser.
        let (fields, pw) = pgpass_fields("db\\:odd:*:*:*:escaped-host").expect("five fields");
        assert_eq!(fields[0].text, "db:odd");
        assert!(!fields[0].wildcard && fields[1].wildcard);
        assert_eq!(pw, "escaped-host");
        assert!(pgpass_fields("a:b:c:d").is_none());
        let (_, pw) = pgpass_fields("a:b:c:d:").expect("an empty password is a field");
        assert_eq!(pw, "");
    }

    #[test]
    fn pgpass_file_from_pgpassfile_and_crlf() {
        let dir = TempDir::new("pgpassfile");
        let file = dir.write("custom", "h:5432:d:u:crlf\r\n", 0o400);
        let path = file.display().to_string();
        let env = move |k: &str| (k == "PGPASSFILE").then(|| path.clone());
        assert_eq!(
            lookup("postgres://u@h/d", &env, None).as_deref(),
            Some("crlf")
        );
    }

    #[test]
    fn pgpass_with_group_or_world_access_is_ignored_with_a_reason() {
        let dir = TempDir::new("pgperm");
        for mode in [0o640, 0o604, 0o660, 0o644, 0o610] {
            dir.write(".pgpass", "*:*:*:*:secret\n", mode);
            let found = pg("postgres://u@h/d").password_from_environment(&no_env, Some(&dir.0));
            assert_eq!(found.password, None, "mode {mode:o}");
            assert_eq!(found.notes.len(), 1, "mode {mode:o}");
            assert!(found.notes[0].contains("chmod 600"), "{}", found.notes[0]);
            assert!(!found.notes[0].contains("secret"));
        }
        dir.write(".pgpass", "*:*:*:*:secret\n", 0o600);
        let found = pg("postgres://u@h/d").password_from_environment(&no_env, Some(&dir.0));
        assert_eq!(found.password.as_ref().map(Secret::expose), Some("secret"));
        assert!(found.notes.is_empty());
        // A directory in its place is skipped with a reason; a missing file silently.
        let other = TempDir::new("pgdir");
        std::fs::create_dir(other.0.join(".pgpass")).expect("mkdir");
        let found = pg("postgres://u@h/d").password_from_environment(&no_env, Some(&other.0));
        assert_eq!((found.password, found.notes.len()), (None, 1));
        let empty = TempDir::new("pgnone");
        let found = pg("postgres://u@h/d").password_from_environment(&no_env, Some(&empty.0));
        assert_eq!((found.password, found.notes.len()), (None, 0));
    }

    #[test]
    fn my_cnf_parsing() {
        let cases = [
            ("[client]\npassword=plain\n", Some("plain")),
            ("[client]\n  password = spaced  \n", Some("spaced")),
            (
                "[client]\npassword=\"dq # not a comment\"\n",
                Some("dq # not a comment"),
            ),
            (
                "[client]\npassword='sq;x' # trailing comment\n",
                Some("sq;x"),
            ),
            ("[client]\npassword=abc # comment\n", Some("abc")),
            ("[client]\npassword=abc#comment\n", Some("abc")),
            ("[client]\npassword=a\\sb\\\\c\n", Some("a b\\c")),
            ("[client]\n# password=commented\n; password=also\n", None),
            ("[mysqld]\npassword=server\n[mysql]\npassword=cli\n", None),
            ("[client]\nuser=me\n[mysqld]\npassword=server\n", None),
            (
                "[mysqld]\npassword=server\n[client]\npassword=mine\n[mysql]\npassword=cli\n",
                Some("mine"),
            ),
            (
                "[client]\npassword=first\n[client]\npassword=last\n",
                Some("last"),
            ),
            ("[ Client ]\nPASSWORD=case\n", Some("case")),
            ("[client]\npassword\n", None),
            (
                "!includedir /etc/mysql/conf.d/\n[client]\npassword=x\n",
                Some("x"),
            ),
            ("password=outside\n[client]\nhost=h\n", None),
            ("[client]\r\npassword=crlf\r\n", Some("crlf")),
        ];
        for (text, want) in cases {
            assert_eq!(my_cnf_password(text).as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn my_cnf_from_home() {
        let dir = TempDir::new("mycnf");
        dir.write(
            ".my.cnf",
            "[client]\nuser=root\npassword=\"from file\"\n",
            0o600,
        );
        assert_eq!(
            lookup("mariadb://root@h/d", &no_env, Some(&dir.0)).as_deref(),
            Some("from file")
        );
        let env = |k: &str| (k == "MYSQL_PWD").then(|| "fromenv".to_string());
        assert_eq!(
            lookup("mysql://root@h/d", &env, Some(&dir.0)).as_deref(),
            Some("fromenv")
        );
        // A postgres target does not read it, nor a mysql one .pgpass.
        assert_eq!(lookup("postgres://root@h/d", &no_env, Some(&dir.0)), None);
        // Group-readable is fine for the MySQL clients; world-writable is ignored.
        dir.write(".my.cnf", "[client]\npassword=x\n", 0o644);
        assert_eq!(
            lookup("mysql://root@h/d", &no_env, Some(&dir.0)).as_deref(),
            Some("x")
        );
        dir.write(".my.cnf", "[client]\npassword=x\n", 0o666);
        let found = parse("mysql://root@h/d").password_from_environment(&no_env, Some(&dir.0));
        assert_eq!(found.password, None);
        assert!(
            found.notes[0].contains("world-writable"),
            "{:?}",
            found.notes
        );
    }

    #[test]
    fn backend_facts() {
        assert_eq!(Backend::Postgres.default_port(), Some(5432));
        assert_eq!(Backend::Mysql.default_port(), Some(3306));
        assert_eq!(Backend::Sqlite.default_port(), None);
    }
}
