//! A throwaway PostgreSQL for the studies that need one when the user gave none: a cluster
//! of its own in a fresh temporary directory, made and started from the installed binaries,
//! stopped and removed when perflab is done with it. Never the machine's own server: its
//! port, socket, data and configuration are not touched.
//!
//! ```text
//!  binaries     initdb, pg_ctl, postgres in one directory: PATH (symlinks followed), then
//!               /usr/lib/postgresql/<newest>/bin (Debian's)
//!  directory    TMP/perflab-pg-PID-N, mode 0700 (owned by `postgres` as root)
//!                 data/         initdb -U postgres -E UTF8 --locale=C --no-sync
//!                 server.log    the server's stdout and stderr
//!                 initdb.log, pg_ctl.log
//!                 .s.PGSQL.P    the unix socket (unix_socket_directories), so it never
//!                               meets a system server's
//!  config       postgresql.conf + listen_addresses = '127.0.0.1', the socket directory and
//!               the caller's settings; pg_hba.conf: trust, loopback and the socket only
//!  start        postgres -D data -p P (a child of perflab's, its own process group), on a
//!               free port (another try if it was taken meanwhile); ready when postmaster.pid
//!               says `ready` and a connection succeeds (≤ 30 s); then CREATE DATABASE perflab
//!  url()        postgres://postgres@127.0.0.1:P/perflab
//!  restart_cold pg_ctl stop -m fast, every file under data/ dropped from the page cache,
//!               postgres started again on the same port
//!  drop         pg_ctl stop -m immediate (the child killed if that fails), directory removed
//! ```
//!
//! As root, initdb, pg_ctl and postgres refuse to run, so they run as the OS user `postgres`
//! (which Debian's package creates): std's `Command::uid`/`gid` set it in the child before
//! the exec, dropping root's supplementary groups too, so no `runuser` or `su` is needed.
//! Otherwise everything runs as the current user.
//!
//! Durability is PostgreSQL's default (fsync on, synchronous_commit on) unless the caller's
//! settings say otherwise; only initdb skips its final sync (`--no-sync`), since the cluster
//! is thrown away and the server's first checkpoint writes what it needs.

use super::sql::{Conn, ServerTarget};
use crate::stop::Stop;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long the server may take to accept connections after it was started.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long initdb may take (it writes a few MB and runs the bootstrap backend).
const INITDB_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a fast stop may take: it ends the sessions and writes a shutdown checkpoint.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the stop on drop may take before the postmaster is killed: cleanup, perhaps
/// after Ctrl-C, must not hang.
const DROP_TIMEOUT: Duration = Duration::from_secs(2);
/// Attempts: another process may take the free port between the probe and the server's bind.
const PORT_TRIES: usize = 5;
/// The superuser initdb makes, and the OS user the server runs as when perflab is root.
const SUPERUSER: &str = "postgres";
/// The database made for the study.
const DATABASE: &str = "perflab";
/// The fix when the binaries are missing.
const NOT_INSTALLED: &str = "PostgreSQL is not installed (no initdb, pg_ctl and postgres on PATH or in /usr/lib/postgresql/*/bin): install it (apt-get install postgresql)";
/// Settings that place the server; they are perflab's to choose.
const RESERVED: [&str; 5] = [
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "data_directory",
    "hba_file",
];

/// The OS account the server runs as when perflab is root.
#[derive(Debug, Clone, Copy)]
struct OsUser {
    uid: u32,
    gid: u32,
}

/// A PostgreSQL server perflab made and started, gone (processes and files) on drop.
#[derive(Debug)]
pub struct ThrowawayPostgres {
    /// The temporary directory: data, socket, logs.
    dir: PathBuf,
    /// The cluster's data directory, inside `dir`.
    data: PathBuf,
    /// Where initdb, pg_ctl and postgres are.
    bin: PathBuf,
    /// Who the server runs as: `Some` when perflab is root.
    user: Option<OsUser>,
    port: u16,
    /// The postmaster, while it runs.
    server: Option<Child>,
    /// `SELECT version()`, for the disclosure.
    version: String,
}

impl ThrowawayPostgres {
    /// Finds the binaries, makes a cluster in a fresh temporary directory with `settings`
    /// in its postgresql.conf, starts it on a free port of 127.0.0.1, waits until it accepts
    /// connections (at most 30 s) and creates the database `perflab`. A failure says why in
    /// one line (with the end of the server's log when it did not come up) and leaves
    /// nothing behind.
    pub fn start(settings: &[(String, String)]) -> Result<Self, String> {
        // Checked first: a bad setting should not cost an initdb.
        let extra = setting_lines(settings)?;
        let bin = bin_dir().ok_or(NOT_INSTALLED)?;
        let user = server_user()?;
        let dir = fresh_dir(user)?;
        // From here on a failure drops `pg`, which removes the directory.
        let mut pg = ThrowawayPostgres {
            data: dir.join("data"),
            dir,
            bin,
            user,
            port: 0,
            server: None,
            version: String::new(),
        };
        pg.init(&extra)?;
        let mut conn = pg.boot()?;
        let port = pg.port;
        let fail =
            move |e: super::sql::DbError| format!("the throwaway PostgreSQL on port {port}: {e}");
        conn.batch(&format!("CREATE DATABASE {DATABASE}"))
            .map_err(fail)?;
        pg.version = conn
            .query_text("SELECT version()")
            .map_err(fail)?
            .unwrap_or_else(|| "PostgreSQL".into());
        Ok(pg)
    }

    /// Why the throwaway server cannot be had here, in one line naming the package; None
    /// when [`start`](Self::start) can try. Nothing is started.
    pub fn unavailable() -> Option<String> {
        if bin_dir().is_none() {
            return Some(NOT_INSTALLED.into());
        }
        server_user().err()
    }

    /// `postgres://postgres@127.0.0.1:PORT/perflab`: the superuser, trusted on loopback.
    pub fn url(&self) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// The server's version line (`SELECT version()`), for the disclosure.
    pub fn version(&self) -> String {
        self.version.clone()
    }

    /// Stops the server (fast: sessions ended, shutdown checkpoint), drops every file of
    /// the data directory from the OS page cache and starts it again on the same port, so
    /// the next scan reads from storage rather than from either cache. Each wait is bounded;
    /// connections open before it are broken after it.
    pub fn restart_cold(&mut self) -> Result<(), String> {
        self.stop("fast", STOP_TIMEOUT)?;
        // Dropped while nothing has the files open, so no page is in use; perflab made
        // every file under the data directory, so these pages are its own to drop.
        drop_pages(&self.data)?;
        self.spawn_ready().map(drop).map_err(|(_, e)| e)
    }

    /// initdb, then the configuration files.
    fn init(&self, extra: &str) -> Result<(), String> {
        let mut initdb = self.command("initdb");
        initdb
            .arg("-D")
            .arg(&self.data)
            .args(["-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C"])
            .arg("--no-sync");
        run(&mut initdb, &self.dir.join("initdb.log"), INITDB_TIMEOUT)?;
        let socket_dir = quote(&self.dir.to_string_lossy());
        append(
            &self.data.join("postgresql.conf"),
            &format!(
                "\n# perflab's throwaway server, removed when perflab is done with it.\n\
                 listen_addresses = '127.0.0.1'\n\
                 unix_socket_directories = '{socket_dir}'\n{extra}"
            ),
        )?;
        // initdb's own file trusts the same places; written out so that no version's
        // defaults can widen it.
        let hba = self.data.join("pg_hba.conf");
        fs::write(
            &hba,
            "# perflab's throwaway server: trust on its socket and loopback only.\n\
             local all all trust\n\
             host all all 127.0.0.1/32 trust\n",
        )
        .map_err(|e| format!("cannot write {}: {e}", hba.display()))
    }

    /// Starts the server on a free port, another if the port was taken meanwhile; returns a
    /// connection to the `postgres` database.
    fn boot(&mut self) -> Result<Box<dyn Conn>, String> {
        let mut last = String::new();
        for _ in 0..PORT_TRIES {
            self.port = free_port()?;
            match self.spawn_ready() {
                Ok(conn) => return Ok(conn),
                Err((true, e)) => last = e,
                Err((false, e)) => return Err(e),
            }
        }
        Err(last)
    }

    /// Starts the postmaster on `self.port` and waits until it takes connections. The error
    /// says whether the port was taken (worth another port) and why, in one line.
    fn spawn_ready(&mut self) -> Result<Box<dyn Conn>, (bool, String)> {
        let log_path = self.dir.join("server.log");
        let seen = file_len(&log_path);
        let open_log = || {
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
        };
        let (out, err) = open_log()
            .and_then(|o| Ok((o.try_clone()?, o)))
            .map_err(|e| (false, format!("cannot open {}: {e}", log_path.display())))?;
        let mut postgres = self.command("postgres");
        postgres
            .arg("-D")
            .arg(&self.data)
            .arg("-p")
            .arg(self.port.to_string())
            .stdout(out)
            .stderr(err)
            // Ctrl-C at the terminal reaches the foreground group; the server must stop
            // when perflab says so (drop), not on its own halfway through the cleanup.
            .process_group(0);
        let child = postgres.spawn().map_err(|e| {
            let path = self.bin.join("postgres");
            (false, format!("cannot start {}: {e}", path.display()))
        })?;
        self.server = Some(child);
        let failed = |this: &Self, why: String| {
            let log = log_since(&log_path, seen);
            let taken = log.contains("already in use");
            let port = this.port;
            let said = format!(
                "the throwaway PostgreSQL on port {port}: {why}; its log: {}",
                tail(&log)
            );
            (taken, said)
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut last = String::from("not ready");
        loop {
            if let Some(status) = self
                .server
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.server = None;
                return Err(failed(
                    self,
                    format!("the server exited at start ({status})"),
                ));
            }
            if self.pid_file_ready() {
                match self.connect("postgres") {
                    Ok(conn) => return Ok(conn),
                    Err(e) => last = e,
                }
            }
            if Instant::now() > deadline {
                let _ = self.stop("immediate", DROP_TIMEOUT);
                let why = format!(
                    "no connection within {} s ({last})",
                    READY_TIMEOUT.as_secs()
                );
                return Err(failed(self, why));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether postmaster.pid names our postmaster and says it takes connections (its
    /// eighth line, since PostgreSQL 10; an older server is simply tried).
    fn pid_file_ready(&self) -> bool {
        let Some(pid) = self.server.as_ref().map(Child::id) else {
            return false;
        };
        let text = fs::read_to_string(self.data.join("postmaster.pid")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.first().and_then(|l| l.parse::<u32>().ok()) == Some(pid)
            && lines.get(7).is_none_or(|s| *s == "ready")
    }

    /// A connection by perflab's own client, as the superuser over loopback.
    fn connect(&self, database: &str) -> Result<Box<dyn Conn>, String> {
        let target = ServerTarget {
            url: format!(
                "postgres://{SUPERUSER}@127.0.0.1:{}/{database}?sslmode=disable&connect_timeout=5",
                self.port
            ),
            set: Vec::new(),
            op_timeout: READY_TIMEOUT,
            query_mode: Default::default(),
        };
        let conn = super::postgres::connect_with(&target, Some(READY_TIMEOUT), &Stop::new())
            .map_err(|e| e.to_string())?;
        Ok(Box::new(conn))
    }

    /// Stops the server with pg_ctl's `mode` within `limit`; the postmaster is killed if it
    /// is still there after that. Errors only when the stop did not go as asked.
    fn stop(&mut self, mode: &str, limit: Duration) -> Result<(), String> {
        let Some(child) = self.server.as_mut() else {
            return Ok(());
        };
        if matches!(child.try_wait(), Ok(Some(_))) {
            self.server = None;
            return Ok(());
        }
        let mut pg_ctl = self.command("pg_ctl");
        pg_ctl.arg("-D").arg(&self.data).args([
            "stop",
            "-m",
            mode,
            "-w",
            "-t",
            &limit.as_secs().max(1).to_string(),
        ]);
        // pg_ctl's own limit first; ours only catches a pg_ctl that hangs.
        let stopped = run(
            &mut pg_ctl,
            &self.dir.join("pg_ctl.log"),
            limit + Duration::from_secs(2),
        );
        let Some(mut child) = self.server.take() else {
            return stopped;
        };
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return stopped;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The backends notice their postmaster is gone and exit by themselves.
        let _ = child.kill();
        let _ = child.wait();
        Err(match stopped {
            Err(e) => format!("{e}; the server was killed"),
            Ok(()) => "pg_ctl stopped the server but it did not exit; it was killed".into(),
        })
    }

    /// One of the binaries, run as the server's user, in the directory (perflab's own
    /// working directory may be one that user cannot enter), with nothing on stdin.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin.join(program));
        c.current_dir(&self.dir).stdin(Stdio::null());
        if let Some(u) = self.user {
            c.uid(u.uid).gid(u.gid);
        }
        c
    }
}

impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        let _ = self.stop("immediate", DROP_TIMEOUT);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The caller's settings as postgresql.conf lines, or one line saying which is refused.
/// Values are quoted (the server reads a quoted number as the number).
fn setting_lines(settings: &[(String, String)]) -> Result<String, String> {
    let mut out = String::new();
    for (name, value) in settings {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !plain {
            return Err(format!(
                "{name:?} is not a PostgreSQL setting name: give letters, digits, '_' and '.'"
            ));
        }
        if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "{name} places the throwaway PostgreSQL, so perflab sets it: leave it out, or measure a server of your own"
            ));
        }
        if value.chars().any(char::is_control) {
            return Err(format!(
                "the value of {name} has a control character (a newline?); give it on one line"
            ));
        }
        out.push_str(&format!("{name} = '{}'\n", quote(value)));
    }
    Ok(out)
}

/// Text for inside a quoted postgresql.conf value: the file's parser reads `\` as an escape.
fn quote(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\'', "''")
}

/// The directory with initdb, pg_ctl and postgres: where PATH's initdb really is (a symlink
/// on PATH is followed, since the three must be one version), else Debian's
/// /usr/lib/postgresql/<version>/bin with the highest version.
fn bin_dir() -> Option<PathBuf> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|p| is_executable(&dir.join(p)))
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path = std::env::split_paths(&path)
        .map(|d| d.join("initdb"))
        .filter(|p| is_executable(p))
        .filter_map(|p| Some(fs::canonicalize(p).ok()?.parent()?.to_path_buf()))
        .find(|d| complete(d));
    on_path.or_else(|| {
        fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let version: Vec<u32> = name
                    .to_str()?
                    .split('.')
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .ok()?;
                Some((version, e.path().join("bin")))
            })
            .filter(|(_, bin)| complete(bin))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, bin)| bin)
    })
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Who the server runs as: None (the current user) unless perflab is root, where PostgreSQL
/// refuses to run and the `postgres` account takes over.
fn server_user() -> Result<Option<OsUser>, String> {
    // /proc/self belongs to the effective user.
    if !fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        return Ok(None);
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            (f.len() > 3 && f[0] == SUPERUSER).then(|| {
                Some(OsUser {
                    uid: f[2].parse().ok()?,
                    gid: f[3].parse().ok()?,
                })
            })?
        })
        .map(Some)
        .ok_or_else(|| {
            "PostgreSQL refuses to run as root, and there is no OS user 'postgres' to run the throwaway server as: install the package that makes it (apt-get install postgresql) or run perflab as another user".into()
        })
}

/// A new directory of perflab's for one server, mode 0700, owned by the server's user.
/// Under the temporary directory when that user can reach it and the socket's path fits,
/// else under /tmp.
fn fresh_dir(user: Option<OsUser>) -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let mut base = std::env::temp_dir();
    // A unix socket's path is at most 107 bytes: DIR/.s.PGSQL.65535 must fit.
    let too_long = base.as_os_str().len() > 60;
    let closed = user.is_some()
        && !base
            .ancestors()
            .all(|a| fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0));
    if too_long || closed {
        base = PathBuf::from("/tmp");
    }
    let dir = loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("perflab-pg-{}-{n}", std::process::id()));
        // Never reuse a directory that is there already: it is not ours to empty.
        match fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
            Err(e) => {
                return Err(format!(
                    "cannot make {} for the throwaway PostgreSQL: {e}",
                    dir.display()
                ));
            }
        }
    };
    let owned =
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).and_then(|()| match user {
            Some(u) => std::os::unix::fs::chown(&dir, Some(u.uid), Some(u.gid)),
            None => Ok(()),
        });
    if let Err(e) = owned {
        let _ = fs::remove_dir_all(&dir);
        return Err(format!(
            "cannot give {} to the throwaway PostgreSQL's user: {e}",
            dir.display()
        ));
    }
    Ok(dir)
}

/// A port nobody listens on now; the server may still lose it to another process before
/// it binds, which [`ThrowawayPostgres::boot`] retries.
fn free_port() -> Result<u16, String> {
    crate::env::ports::free_port()
        .map_err(|e| format!("no free port on 127.0.0.1 for the throwaway PostgreSQL: {e}"))
}

/// Runs `cmd` with its output appended to `log`, killed after `limit`; on a failure, one
/// line with the end of what it wrote. A file, not a pipe: nothing is left to drain.
fn run(cmd: &mut Command, log: &Path, limit: Duration) -> Result<(), String> {
    let program = Path::new(cmd.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let seen = file_len(log);
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|o| Ok((o.try_clone()?, o)))
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let mut child = cmd
        .stdout(out.0)
        .stderr(out.1)
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(format!(
                    "{program} failed ({status}): {}",
                    tail(&log_since(log, seen))
                ));
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} did not finish within {} s: {}",
                    limit.as_secs(),
                    tail(&log_since(log, seen))
                ));
            }
        }
    }
}

/// Drops the pages of every file under `root` from the OS page cache (after writing back
/// any dirty ones, which cannot be dropped). Symbolic links are not followed.
fn drop_pages(root: &Path) -> Result<(), String> {
    let fail = |path: &Path, e: std::io::Error| {
        format!("cannot drop {} from the page cache: {e}", path.display())
    };
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| fail(&dir, e))? {
            let entry = entry.map_err(|e| fail(&dir, e))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| fail(&path, e))?;
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() {
                File::open(&path)
                    .and_then(|f| crate::engine::sys::drop_cache(&f))
                    .map_err(|e| fail(&path, e))?;
            }
        }
    }
    Ok(())
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// What `path` got after its first `from` bytes.
fn log_since(path: &Path, from: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(from).unwrap_or(0).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The last lines of a log as one line: what a failure message quotes. The server's
/// closing "database system is shut down" says nothing about why, so it is left out.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.ends_with("database system is shut down"))
        .collect();
    match lines.len() {
        0 => "nothing in its log".into(),
        n => lines[n.saturating_sub(4)..].join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says the test was skipped on the real stderr (libtest hides `eprintln!` of a test
    /// that passes), or fails it where servers are required (CI).
    fn skip(why: &str) {
        assert!(
            std::env::var_os("PERFLAB_REQUIRE_SERVERS").is_none(),
            "{why}; PERFLAB_REQUIRE_SERVERS is set, so this is a failure, not a skip"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED throwaway PostgreSQL test: {why}"
        );
    }

    fn ask(url: &str, sql: &str) -> Option<String> {
        let sqlite = crate::sql::sqlite::SqliteSettings {
            journal_mode: "wal".into(),
            synchronous: "full".into(),
            page_size: None,
        };
        let target = crate::sql::target::database(
            url,
            vec![],
            Duration::from_secs(10),
            &sqlite,
            Default::default(),
        )
        .expect("a postgres URL");
        let mut conn = target.open(false, &Stop::new()).expect("connects");
        conn.query_text(sql).expect("answers")
    }

    #[test]
    fn starts_with_settings_restarts_cold_and_leaves_nothing() {
        if let Some(why) = ThrowawayPostgres::unavailable() {
            return skip(&why);
        }
        let mut pg = ThrowawayPostgres::start(&[("commit_delay".into(), "1000".into())])
            .expect("the throwaway PostgreSQL starts");
        let dir = pg.dir.clone();
        assert!(pg.url().ends_with("/perflab"), "{}", pg.url());
        assert!(pg.version().starts_with("PostgreSQL "), "{}", pg.version());
        assert_eq!(ask(&pg.url(), "SHOW commit_delay").as_deref(), Some("1000"));
        pg.restart_cold().expect("restarts cold");
        assert_eq!(ask(&pg.url(), "SELECT 1").as_deref(), Some("1"));
        drop(pg);
        assert!(!dir.exists(), "{} is left behind", dir.display());
    }

    #[test]
    fn settings_are_quoted_and_placement_is_refused() {
        let s = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(
            setting_lines(&s("search_path", r"a'b\c")).as_deref(),
            Ok("search_path = 'a''b\\\\c'\n")
        );
        assert!(setting_lines(&s("port", "5432")).is_err());
        assert!(setting_lines(&s("work_mem", "1MB\nfsync = off")).is_err());
        assert!(setting_lines(&s("fsync = off #", "on")).is_err());
    }

    #[test]
    fn a_failure_quotes_the_end_of_the_log_on_one_line() {
        let log = "\
LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use
HINT:  Is another postmaster already running on port 5432?
WARNING:  could not create listen socket for \"127.0.0.1\"
FATAL:  could not create any TCP/IP sockets

LOG:  database system is shut down
";
        assert_eq!(
            tail(log),
            "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use | \
             HINT:  Is another postmaster already running on port 5432? | \
             WARNING:  could not create listen socket for \"127.0.0.1\" | \
             FATAL:  could not create any TCP/IP sockets"
        );
        assert_eq!(tail(""), "nothing in its log");
    }
}
