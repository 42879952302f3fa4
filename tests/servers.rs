//! The throwaway servers of `tests/common/servers.rs`, proven with the real command-line
//! clients: each server starts, answers `select 1` over TCP on 127.0.0.1, stops answering
//! after `kill()`, and after drop neither listens nor leaves its folder behind. Two of a kind
//! start side by side to exercise the free-port choice.
//!
//! Skipped, with "SKIPPED <test>: ..." on stderr, where PostgreSQL or MariaDB (or their
//! clients) is not installed — unless `PERFLAB_REQUIRE_SERVERS` is set (CI), where a missing
//! server or client is a failure (`common::skip`).

mod common;

use common::servers::{MariaDbServer, PgServer};
use common::skip::{self, named_thread};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The server, timed; `None` (after a SKIPPED line, or a panic in CI) when it is missing.
fn started<T>(kind: &str, start: fn() -> Option<T>) -> Option<T> {
    let t0 = Instant::now();
    let server = start();
    if server.is_some() {
        eprintln!("{kind} test server started in {:?}", t0.elapsed());
    }
    server
}

/// Whether the command-line clients these tests talk through are here (skip or fail if not).
fn have_client(program: &str, package: &str) -> bool {
    skip::program(program, package).is_some()
}

/// A client's answer (trimmed stdout), or its stderr when it fails.
fn client(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        // Nothing of the caller's own client setup may steer the connection.
        .env_remove("PGPASSWORD")
        .env_remove("PGSERVICE")
        .env_remove("MYSQL_PWD")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn psql(port: u16, sql: &str) -> Result<String, String> {
    let port = port.to_string();
    client(
        "psql",
        &[
            "-X",
            "-tA",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ],
    )
}

fn mariadb(port: u16, sql: &str) -> Result<String, String> {
    let port = port.to_string();
    client(
        "mariadb",
        &[
            "--no-defaults",
            "--connect-timeout=5",
            "-h",
            "127.0.0.1",
            "-P",
            &port,
            "-u",
            "root",
            "-N",
            "-B",
            "test",
            "-e",
            sql,
        ],
    )
}

fn listening(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok()
}

#[test]
fn postgres_answers_dies_on_kill_and_is_removed() {
    if !have_client("psql", "postgresql-client") {
        return;
    }
    let Some(pg) = started("PostgreSQL", PgServer::start) else {
        return;
    };
    let port = pg.port();
    assert_eq!(
        pg.url(),
        format!("postgres://postgres@127.0.0.1:{port}/postgres")
    );
    assert_eq!(psql(port, "select 1").as_deref(), Ok("1"));
    assert_eq!(
        psql(
            port,
            "select current_user || ' ' || current_setting('listen_addresses')"
        )
        .as_deref(),
        Ok("postgres 127.0.0.1")
    );
    let dir: PathBuf = pg.dir().to_path_buf();
    assert!(dir.join("data/PG_VERSION").exists());

    pg.kill();
    assert!(psql(port, "select 1").is_err(), "answers after kill()");
    assert!(!listening(port));
    drop(pg);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn postgres_servers_side_by_side_stop_cleanly_on_drop() {
    if !have_client("psql", "postgresql-client") {
        return;
    }
    let starts: Vec<_> = (0..2)
        .map(|_| named_thread(|| started("PostgreSQL", PgServer::start)))
        .collect();
    let servers: Vec<PgServer> = starts
        .into_iter()
        .filter_map(|t| t.join().expect("start thread"))
        .collect();
    if servers.len() < 2 {
        // Both starts skipped (a broken start panics): said on stderr by each.
        return;
    }
    assert_ne!(servers[0].port(), servers[1].port());
    let mut gone = Vec::new();
    for pg in servers {
        assert_eq!(psql(pg.port(), "select 2").as_deref(), Ok("2"));
        let t0 = Instant::now();
        let (port, dir) = (pg.port(), pg.dir().to_path_buf());
        drop(pg); // a fast stop, then removal
        eprintln!(
            "PostgreSQL test server stopped and removed in {:?}",
            t0.elapsed()
        );
        gone.push((port, dir));
    }
    for (port, dir) in gone {
        assert!(!listening(port), "port {port} still listens");
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

#[test]
fn mariadb_answers_dies_on_kill_and_is_removed() {
    if !have_client("mariadb", "mariadb-client") {
        return;
    }
    let Some(db) = started("MariaDB", MariaDbServer::start) else {
        return;
    };
    let port = db.port();
    assert_eq!(db.url(), format!("mysql://root@127.0.0.1:{port}/test"));
    assert_eq!(mariadb(port, "select 1").as_deref(), Ok("1"));
    // The database of the URL exists, and root may create tables in it.
    assert_eq!(
        mariadb(
            port,
            "create table t (x int primary key) engine=InnoDB; insert into t values (7); select x from t"
        )
        .as_deref(),
        Ok("7")
    );
    let dir = db.dir().to_path_buf();

    db.kill();
    assert!(mariadb(port, "select 1").is_err(), "answers after kill()");
    assert!(!listening(port));
    drop(db);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn mariadb_servers_side_by_side_stop_cleanly_on_drop() {
    if !have_client("mariadb", "mariadb-client") {
        return;
    }
    let starts: Vec<_> = (0..2)
        .map(|_| named_thread(|| started("MariaDB", MariaDbServer::start)))
        .collect();
    let servers: Vec<MariaDbServer> = starts
        .into_iter()
        .filter_map(|t| t.join().expect("start thread"))
        .collect();
    if servers.len() < 2 {
        // Both starts skipped (a broken start panics): said on stderr by each.
        return;
    }
    assert_ne!(servers[0].port(), servers[1].port());
    let mut gone = Vec::new();
    for db in servers {
        assert_eq!(mariadb(db.port(), "select 2").as_deref(), Ok("2"));
        let t0 = Instant::now();
        let (port, dir) = (db.port(), db.dir().to_path_buf());
        drop(db);
        eprintln!(
            "MariaDB test server stopped and removed in {:?}",
            t0.elapsed()
        );
        gone.push((port, dir));
    }
    for (port, dir) in gone {
        assert!(!listening(port), "port {port} still listens");
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
