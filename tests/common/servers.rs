//! Throwaway real database servers for the integration tests (never mocks): a PostgreSQL
//! cluster made with `initdb` in a temporary directory and started with `pg_ctl` on a free
//! port, stopped and removed when dropped. As root, the server runs as the `postgres` user
//! (initdb refuses root).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A PostgreSQL server of the test's own.
pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The newest installed PostgreSQL's bin directory.
fn pg_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists() && p.join("pg_ctl").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions.pop()
}

fn free_port() -> Option<u16> {
    TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()
        .map(|a| a.port())
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

impl PgServer {
    /// Starts a fresh server, or says what is missing and returns None.
    pub fn start() -> Option<PgServer> {
        let Some(bin) = pg_bin() else {
            eprintln!("initdb not found under /usr/lib/postgresql: apt-get install postgresql");
            return None;
        };
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!(
            "perflab-pg-{}-{}",
            std::process::id(),
            free_port()?
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).ok()?;
        let mut server = PgServer {
            dir,
            bin,
            port: 0,
            as_postgres,
        };
        if as_postgres {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&server.dir)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!("cannot hand {} to the postgres user", server.dir.display());
                return None;
            }
        }
        let data = server.dir.join("data");
        let init = server
            .command("initdb")
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !init.is_ok_and(|s| s.success()) {
            eprintln!("initdb failed in {}", server.dir.display());
            return None;
        }
        for _ in 0..5 {
            let port = free_port()?;
            let started = server
                .command("pg_ctl")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(server.dir.join("log"))
                .arg("-o")
                .arg(format!(
                    "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                    server.dir.display()
                ))
                .args(["-w", "-t", "30", "start"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if started && wait_for(port) {
                server.port = port;
                return Some(server);
            }
        }
        eprintln!(
            "the test PostgreSQL did not start; see {}",
            server.dir.join("log").display()
        );
        None
    }

    /// A command from the server's bin directory, as the postgres user when we are root.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server at once, as a crash would.
    pub fn kill(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn wait_for(port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
