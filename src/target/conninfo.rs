//! PostgreSQL connections as libpq resolves them: `key=value` strings, the environment's
//! `PG*` variables, libpq's defaults, and what `sslmode` and the certificate files mean.
//!
//! ```text
//!  "host=db dbname=bank sslmode=verify-full"  ─► parse_keywords ─► TargetUrl (as a URL's)
//!  postgres://db/bank?sslmode=verify-full     ─────────────────────► TargetUrl
//!                                                                      │
//!  PGHOST PGPORT PGUSER PGDATABASE PGAPPNAME PGCONNECT_TIMEOUT         │ with_environment:
//!  PGSSLMODE PGSSLROOTCERT PGSSLCERT PGSSLKEY  ───────────────────────►│ only what the target
//!                                                                      │ leaves out
//!                                                                      ▼
//!  resolve ─► Resolved { host, port, user, database, application_name, connect_timeout,
//!                        sslmode, trust }   (libpq's defaults for the rest)
//! ```
//!
//! Precedence, as libpq's: what the URL or string says, then the environment, then the
//! defaults (the Unix socket directory, port 5432, the login name, a database named after the
//! user, `sslmode=prefer`). The environment only fills in a target that is PostgreSQL
//! already; it never makes one (a default SQLite run stays SQLite).
//!
//! TLS, as libpq decides it:
//! - `disable` never asks; `allow` asks only when the server refused a plain session;
//!   `prefer` (the default) asks and goes on in the clear if the server says no; `require`
//!   insists; none of them checks the certificate, except that a root file that exists
//!   (`sslrootcert`, default `~/.postgresql/root.crt`) makes them check the chain, as libpq does.
//! - `verify-ca` checks the chain to `sslrootcert`, `verify-full` the host name too; a missing
//!   root file is an error then. `sslrootcert=system` is the system's roots and needs
//!   `verify-full` (libpq 16's rule: the system's roots trust every public CA, so only the
//!   name makes the check mean something).
//! - `sslcert` and `sslkey` (default `~/.postgresql/postgresql.crt` and `.key`) are sent when
//!   the certificate exists. Departure: a certificate or key named explicitly that does not
//!   exist is an error here, where libpq would silently send none.

use super::tls::{Identity, Roots, Trust, Verify};
use super::url::{Backend, TargetUrl, UrlError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode, String> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other}: use disable, allow, prefer, require, verify-ca or verify-full"
                ));
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether a session without TLS is refused.
    pub fn needs_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

/// A PostgreSQL connection with everything libpq would decide decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// A host name, an address, or a Unix socket directory (absolute path).
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
    pub application_name: String,
    pub connect_timeout: Option<Duration>,
    pub sslmode: SslMode,
    /// How far the server is trusted when TLS is on.
    pub trust: Trust,
}

/// The connection keywords perflab's client takes; others are refused.
pub const KEYWORDS: [&str; 6] = [
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "application_name",
    "connect_timeout",
];

/// The variables the environment fills in, and the keyword each stands for.
const ENVIRONMENT: [(&str, &str); 10] = [
    ("PGHOST", "host"),
    ("PGPORT", "port"),
    ("PGUSER", "user"),
    ("PGDATABASE", "dbname"),
    ("PGAPPNAME", "application_name"),
    ("PGCONNECT_TIMEOUT", "connect_timeout"),
    ("PGSSLMODE", "sslmode"),
    ("PGSSLROOTCERT", "sslrootcert"),
    ("PGSSLCERT", "sslcert"),
    ("PGSSLKEY", "sslkey"),
];

/// libpq's socket directory on Debian: the host when none is given.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// Whether `s` is a libpq `key=value` string rather than a URL: no `://`, and it starts with
/// a keyword and `=`.
pub fn looks_like_keywords(s: &str) -> bool {
    let s = s.trim_start();
    if s.contains("://") {
        return false;
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    !word.is_empty() && s[word.len()..].trim_start().starts_with('=')
}

/// The pairs of a `key=value` string, as libpq reads them: pairs separated by white space,
/// white space around `=` allowed, a value in single quotes may hold spaces, and `\` escapes
/// the next character (`\'`, `\\`).
pub fn parse_keywords(s: &str) -> Result<Vec<(String, String)>, UrlError> {
    let bad = |why: &str| UrlError::Keywords(why.to_string());
    let mut pairs = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        // libpq refuses an '=' with no keyword before it ("a=1 =2"): no option has an
        // empty name, and a URL could not say it again.
        if key.is_empty() {
            return Err(bad(
                "an '=' has no keyword before it; write key=value pairs, e.g. host=db dbname=bank",
            ));
        }
        if chars.next() != Some('=') {
            // The key may be quoted: it cannot be a password.
            return Err(bad(&format!(
                "'{key}' has no '='; write key=value pairs, e.g. host=db dbname=bank"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => {
                        return Err(bad(&format!("the value of {key} has no closing quote")));
                    }
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                match c {
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        }
        pairs.push((key, value));
    }
    if pairs.is_empty() {
        return Err(bad("it is empty"));
    }
    Ok(pairs)
}

/// A `key=value` string with its password's value (and other secrets') replaced by `***`;
/// `None` when it does not parse (the caller hides more).
pub fn redact_keywords(s: &str) -> Option<String> {
    let pairs = parse_keywords(s).ok()?;
    Some(
        pairs
            .iter()
            .map(|(k, v)| {
                let lower = k.to_ascii_lowercase();
                if ["pass", "pwd", "secret", "token"]
                    .iter()
                    .any(|w| lower.contains(w))
                {
                    format!("{k}=***")
                } else if v.is_empty() || v.contains(char::is_whitespace) || v.contains('\'') {
                    format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The target with what it leaves out filled in from the `PG*` variables (`env`), as libpq
/// does. Anything but PostgreSQL is returned as it is.
pub fn with_environment(url: &TargetUrl, env: &dyn Fn(&str) -> Option<String>) -> TargetUrl {
    let mut out = url.clone();
    if url.backend != Backend::Postgres {
        return out;
    }
    for (var, key) in ENVIRONMENT {
        let Some(value) = env(var).filter(|v| !v.is_empty()) else {
            continue;
        };
        match key {
            "host" if out.host.is_none() => out.host = Some(value),
            "port" if out.port.is_none() => out.port = value.parse().ok().or(Some(0)),
            "user" if out.user.is_none() => out.user = Some(value),
            "dbname" if out.database.is_none() => out.database = Some(value),
            "host" | "port" | "user" | "dbname" => {}
            _ if out.params.iter().any(|(k, _)| k == key) => {}
            _ => out.params.push((key.to_string(), value)),
        }
    }
    out
}

/// What libpq would connect to for `url`, the environment (`env`) and the home directory
/// (`home`, for `~/.postgresql`) taken into account; one line naming the fix otherwise.
pub fn resolve(
    url: &TargetUrl,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Result<Resolved, String> {
    let url = with_environment(url, env);
    if let Some((name, _)) = url
        .params
        .iter()
        .find(|(k, _)| !KEYWORDS.contains(&k.as_str()))
    {
        return Err(format!(
            "the connection parameter {name:?} is not supported; perflab takes host, port, user, password, dbname, {}",
            KEYWORDS.join(", ")
        ));
    }
    let param = |name: &str| {
        url.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if url.port == Some(0) {
        return Err("PGPORT is not a port number; give 1 to 65535".into());
    }
    let user = url
        .user
        .clone()
        .or_else(|| env("USER"))
        .or_else(|| env("LOGNAME"))
        .unwrap_or_else(|| "postgres".into());
    let database = url.database.clone().unwrap_or_else(|| user.clone());
    let host = url
        .host
        .clone()
        .unwrap_or_else(|| DEFAULT_SOCKET_DIR.into());
    if host.contains(',') {
        return Err(
            "several hosts (host=a,b): perflab connects to one server; give one host".into(),
        );
    }
    let connect_timeout = match param("connect_timeout") {
        None => None,
        Some(s) => Some(
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .map(Duration::from_secs)
                .ok_or_else(|| format!("connect_timeout={s}: give whole seconds, e.g. 10"))?,
        ),
    };
    let rootcert = param("sslrootcert");
    let system = rootcert == Some("system");
    let sslmode = match param("sslmode") {
        Some(m) => SslMode::parse(m)?,
        None if system => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if system && sslmode != SslMode::VerifyFull {
        return Err(format!(
            "sslmode={} may not be used with sslrootcert=system: use sslmode=verify-full",
            sslmode.name()
        ));
    }
    let dot = home.map(|h| h.join(".postgresql"));
    let roots = match rootcert {
        Some("system") => Some(Roots::System),
        Some(file) => Some(Roots::File(PathBuf::from(file))),
        None => dot
            .as_ref()
            .map(|d| d.join("root.crt"))
            .filter(|p| p.exists())
            .map(Roots::File),
    };
    let roots = match roots {
        Some(Roots::File(f)) if !f.exists() => {
            if matches!(sslmode, SslMode::VerifyCa | SslMode::VerifyFull) {
                return Err(format!(
                    "the root certificate file {} does not exist; name the CA's certificate with sslrootcert=FILE, use the system's roots with sslrootcert=system, or sslmode=require to connect without verifying",
                    f.display()
                ));
            }
            // libpq checks against a root file only when it exists.
            None
        }
        other => other,
    };
    let verify = match (sslmode, &roots) {
        (SslMode::VerifyFull, _) => Verify::Full,
        (SslMode::VerifyCa, _) => Verify::Chain,
        // libpq: a root file that exists makes the weaker modes check the chain too.
        (_, Some(_)) => Verify::Chain,
        (_, None) => Verify::Off,
    };
    let roots = match roots {
        Some(r) => r,
        None if verify == Verify::Off => Roots::System,
        None => {
            let default = dot.map_or_else(
                || "~/.postgresql/root.crt".to_string(),
                |d| d.join("root.crt").display().to_string(),
            );
            return Err(format!(
                "sslmode={} needs the server's CA: {default} does not exist; name it with sslrootcert=FILE, or use sslrootcert=system",
                sslmode.name()
            ));
        }
    };
    let identity = identity(param("sslcert"), param("sslkey"), home)?;
    Ok(Resolved {
        host,
        port: url.port.unwrap_or(5432),
        user,
        database,
        application_name: param("application_name").unwrap_or("perflab").to_string(),
        connect_timeout,
        sslmode,
        trust: Trust {
            verify,
            roots,
            identity,
        },
    })
}

/// The client certificate to send: the one named, or libpq's default when it exists.
fn identity(
    cert: Option<&str>,
    key: Option<&str>,
    home: Option<&Path>,
) -> Result<Option<Identity>, String> {
    let dot = home.map(|h| h.join(".postgresql"));
    let default = |name: &str| dot.as_ref().map(|d| d.join(name));
    let (cert, named) = match cert {
        Some(c) => (PathBuf::from(c), true),
        None => match default("postgresql.crt").filter(|p| p.exists()) {
            Some(p) => (p, false),
            None => {
                if let Some(k) = key {
                    return Err(format!(
                        "sslkey={k} without a certificate; name it with sslcert=FILE"
                    ));
                }
                return Ok(None);
            }
        },
    };
    if named && !cert.exists() {
        return Err(format!(
            "the client certificate {} does not exist; fix sslcert=",
            cert.display()
        ));
    }
    let key = match key {
        Some(k) => PathBuf::from(k),
        None => default("postgresql.key").ok_or_else(|| {
            format!(
                "sslcert={} needs its key: name it with sslkey=FILE",
                cert.display()
            )
        })?,
    };
    if !key.exists() {
        return Err(format!(
            "the client key {} does not exist; name the certificate's key with sslkey=FILE",
            key.display()
        ));
    }
    Ok(Some(Identity { cert, key }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn url(s: &str) -> TargetUrl {
        s.parse().unwrap()
    }

    #[test]
    fn keyword_strings_read_as_libpq_reads_them() {
        assert!(looks_like_keywords("host=db dbname=bank"));
        assert!(looks_like_keywords(" host = db"));
        assert!(!looks_like_keywords("postgres://db/bank?host=x"));
        assert!(!looks_like_keywords("bank.db"));
        let pairs = parse_keywords(r"host=db  port = 6543 password='it''s' user=a\ b").unwrap_err();
        assert!(matches!(pairs, UrlError::Keywords(_)));
        let pairs =
            parse_keywords(r"host=db  port = 6543 password='it\'s a secret' user=a\ b dbname=''")
                .unwrap();
        assert_eq!(
            pairs,
            vec![
                ("host".into(), "db".into()),
                ("port".into(), "6543".into()),
                ("password".into(), "it's a secret".into()),
                ("user".into(), "a b".into()),
                ("dbname".into(), String::new()),
            ]
        );
        assert!(parse_keywords("host").is_err());
        // Found by tests/fuzz.rs: an empty keyword parsed, and its URL did not parse back.
        let empty = parse_keywords("A=A =").unwrap_err().to_string();
        assert!(empty.contains("no keyword before it"), "{empty}");
        assert!("host=db =x".parse::<TargetUrl>().is_err());
        assert!(parse_keywords("host='db").is_err());
    }

    #[test]
    fn keyword_strings_become_targets_and_hide_their_password() {
        let t = url(
            "host=db.example port=6543 dbname=bank user=alice password=hunter2 sslmode=verify-full",
        );
        assert_eq!(t.backend, Backend::Postgres);
        assert_eq!(t.host.as_deref(), Some("db.example"));
        assert_eq!(t.port, Some(6543));
        assert_eq!(t.database.as_deref(), Some("bank"));
        assert_eq!(t.password.as_ref().unwrap().expose(), "hunter2");
        assert_eq!(
            t.redacted(),
            "postgres://alice:***@db.example:6543/bank?sslmode=verify-full"
        );
        assert_eq!(
            redact_keywords("host=db password='a b' sslpassword=x").unwrap(),
            "host=db password=*** sslpassword=***"
        );
    }

    #[test]
    fn the_environment_fills_only_what_the_target_leaves_out() {
        let env = env_of(&[
            ("PGHOST", "envhost"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGDATABASE", "envdb"),
            ("PGSSLMODE", "require"),
            ("PGAPPNAME", "app"),
            ("USER", "login"),
        ]);
        let r = resolve(&url("postgres://alice@db/bank"), &env, None).unwrap();
        assert_eq!(
            (
                r.host.as_str(),
                r.port,
                r.user.as_str(),
                r.database.as_str()
            ),
            ("db", 7000, "alice", "bank")
        );
        assert_eq!(r.sslmode, SslMode::Require);
        assert_eq!(r.application_name, "app");
        let r = resolve(&url("postgres://db?sslmode=disable"), &env, None).unwrap();
        assert_eq!(r.sslmode, SslMode::Disable);
        assert_eq!(r.user, "envuser");
        assert_eq!(r.database, "envdb");
        let none = env_of(&[("USER", "login")]);
        let r = resolve(&url("postgres://"), &none, None).unwrap();
        assert_eq!(r.host, DEFAULT_SOCKET_DIR);
        assert_eq!((r.port, r.user.as_str()), (5432, "login"));
        assert_eq!(r.database, "login");
        assert_eq!(r.sslmode, SslMode::Prefer);
        assert_eq!(r.trust.verify, Verify::Off);
        // The environment never makes a target PostgreSQL.
        let sqlite = url("sqlite://bank.db");
        assert_eq!(with_environment(&sqlite, &env), sqlite);
    }

    #[test]
    fn sslmodes_decide_the_trust() {
        let dir = std::env::temp_dir().join(format!("perflab-conninfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, "x").unwrap();
        let none = env_of(&[]);
        let with = |q: &str| resolve(&url(&format!("postgres://db/x?{q}")), &none, Some(&dir));
        let r = with(&format!("sslmode=verify-full&sslrootcert={}", ca.display())).unwrap();
        assert_eq!(r.trust.verify, Verify::Full);
        assert_eq!(r.trust.roots, Roots::File(ca.clone()));
        let r = with(&format!("sslmode=verify-ca&sslrootcert={}", ca.display())).unwrap();
        assert_eq!(r.trust.verify, Verify::Chain);
        // A root file that exists makes require check the chain, as libpq does.
        let r = with(&format!("sslmode=require&sslrootcert={}", ca.display())).unwrap();
        assert_eq!(r.trust.verify, Verify::Chain);
        let r = with("sslrootcert=system").unwrap();
        assert_eq!(
            (r.sslmode, r.trust.verify),
            (SslMode::VerifyFull, Verify::Full)
        );
        assert_eq!(r.trust.roots, Roots::System);
        let e = with("sslrootcert=system&sslmode=verify-ca").unwrap_err();
        assert!(e.contains("use sslmode=verify-full"), "{e}");
        let e = with("sslmode=verify-full").unwrap_err();
        assert!(e.contains("root.crt does not exist"), "{e}");
        let e = with("sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem").unwrap_err();
        assert!(e.contains("/nonexistent/ca.pem does not exist"), "{e}");
        let e = with("sslmode=secure").unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        let e = with("sslcert=/nonexistent/c.pem&sslkey=/nonexistent/k.pem").unwrap_err();
        assert!(e.contains("/nonexistent/c.pem does not exist"), "{e}");
        let e = with("gssencmode=disable").unwrap_err();
        assert!(e.contains("\"gssencmode\" is not supported"), "{e}");
        // libpq's default files under ~/.postgresql.
        std::fs::create_dir_all(dir.join(".postgresql")).unwrap();
        std::fs::write(dir.join(".postgresql/root.crt"), "x").unwrap();
        std::fs::write(dir.join(".postgresql/postgresql.crt"), "x").unwrap();
        std::fs::write(dir.join(".postgresql/postgresql.key"), "x").unwrap();
        let r = with("sslmode=verify-full").unwrap();
        assert_eq!(r.trust.roots, Roots::File(dir.join(".postgresql/root.crt")));
        assert_eq!(
            r.trust.identity.unwrap().key,
            dir.join(".postgresql/postgresql.key")
        );
        let r = with("").unwrap();
        assert_eq!(r.trust.verify, Verify::Chain);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
