//! The server a sysbench line names, as perflab's `--target` URL: `--db-driver` (mysql by
//! default) with its `--mysql-*` or `--pgsql-*` options and sysbench's defaults for the
//! rest (`localhost`, port 3306 or 5432, user `sbtest`, no password, database `sbtest`).
//!
//! libmysqlclient reads the host `localhost` as the server's Unix socket (`MYSQL_UNIX_PORT`,
//! else the usual places), not TCP; so does perflab, with a note. libpq's `localhost` is
//! TCP. Options of the driver the line does not use are refused, naming the flag to add:
//! sysbench would ignore them and connect elsewhere.

use crate::workload::peer::Reading;

/// perflab's URL spelling of a value: percent-encoded where a URL could not hold it.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Where libmysqlclient looks for the server's socket when the host is `localhost`:
/// `MYSQL_UNIX_PORT`, else Debian's and the usual places.
fn mysql_socket() -> Option<String> {
    if let Some(s) = std::env::var("MYSQL_UNIX_PORT")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Some(s);
    }
    [
        "/run/mysqld/mysqld.sock",
        "/var/run/mysqld/mysqld.sock",
        "/tmp/mysql.sock",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .map(String::from)
}

/// The target sysbench's driver options name, with sysbench's defaults.
pub fn target(r: &mut Reading) -> Result<String, String> {
    let kept = |r: &Reading, k: &str| r.kept(k).map(str::to_string);
    let driver = kept(r, "driver").unwrap_or_else(|| "mysql".into());
    let (ours, theirs) = match driver.as_str() {
        "pgsql" => ("pgsql_", "mysql_"),
        _ => ("mysql_", "pgsql_"),
    };
    // Options of the other driver would be ignored by sysbench: a line that gives them
    // means that driver, so say which to add.
    for slot in ["host", "port", "user", "password", "db", "socket"] {
        if r.kept(&format!("{theirs}{slot}")).is_some() {
            let flag = format!("--{}-{slot}", theirs.trim_end_matches('_'));
            return Err(match driver.as_str() {
                "pgsql" => format!(
                    "sysbench's {flag} is for --db-driver=mysql; this line says --db-driver=pgsql"
                ),
                _ => format!(
                    "sysbench's {flag} is for --db-driver=pgsql; add it (sysbench's default driver is mysql, which ignores {flag})"
                ),
            });
        }
    }
    let get = |slot: &str| r.kept(&format!("{ours}{slot}")).map(str::to_string);
    let user = get("user").unwrap_or_else(|| "sbtest".into());
    let password = get("password").unwrap_or_default();
    let db = get("db").unwrap_or_else(|| "sbtest".into());
    let host = get("host").unwrap_or_else(|| "localhost".into());
    let auth = match password.is_empty() {
        true => encode(&user),
        false => format!("{}:{}", encode(&user), encode(&password)),
    };
    if driver == "pgsql" {
        let port = get("port").unwrap_or_else(|| "5432".into());
        return Ok(match host.starts_with('/') {
            true => format!(
                "postgres://{auth}@/{}?host={}&port={port}",
                encode(&db),
                encode(&host)
            ),
            false => format!("postgres://{auth}@{host}:{port}/{}", encode(&db)),
        });
    }
    let port = get("port").unwrap_or_else(|| "3306".into());
    let mut query = Vec::new();
    let socket = match get("socket") {
        Some(s) => Some(s),
        // libmysqlclient's `localhost` is the socket, not TCP.
        None if host == "localhost" => {
            let s = mysql_socket();
            if let Some(path) = &s {
                r.note(format!(
                    "sysbench's --mysql-host=localhost: the server's Unix socket {path}, as libmysqlclient reads localhost (--mysql-host=127.0.0.1 for TCP)"
                ));
            }
            s
        }
        None => None,
    };
    if let Some(s) = socket {
        query.push(format!("socket={}", encode(&s)));
    }
    if r.kept("mysql_ssl").is_some() {
        query.push("ssl-mode=REQUIRED".into());
    }
    let query = match query.is_empty() {
        true => String::new(),
        false => format!("?{}", query.join("&")),
    };
    let host = match host.as_str() {
        "localhost" => "127.0.0.1",
        h => h,
    };
    Ok(format!(
        "mysql://{auth}@{host}:{port}/{}{query}",
        encode(&db)
    ))
}
