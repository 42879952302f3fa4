//! Throwaway servers for the integration tests: a real PostgreSQL, MariaDB, memcached, Redis
//! or Redis cluster in a fresh temporary folder, on a free port of 127.0.0.1, gone on drop.
//! Never a mock, and never the machine's own instances (their ports, sockets, data and config
//! files are not used).
//!
//! ```text
//!                 PgServer::start()                          MariaDbServer::start()
//!  binaries       /usr/lib/postgresql/N/bin (highest N),     mariadbd, mariadb-install-db
//!                 else PATH: initdb, pg_ctl                  (PATH, /usr/sbin)
//!  folder         TMP/perflab-pg-PID-N  (chown postgres)     TMP/perflab-mariadb-PID-N (chown mysql)
//!  create         initdb -U postgres --auth=trust            mariadb-install-db
//!                                                              --auth-root-authentication-method=normal
//!  start          pg_ctl start -w as `postgres`              mariadbd --user=mysql (drops root itself)
//!                 port P, 127.0.0.1, socket in the folder    port P, 127.0.0.1, socket in the folder,
//!                                                            --init-file: CREATE DATABASE test
//!  ready when     pg_ctl -w says so and TCP connects         the server's greeting arrives on TCP
//!                 (a port taken meanwhile: the next free one, up to 5 tries; ≤ 20 s each)
//!  url()          postgres://postgres@127.0.0.1:P/postgres   mysql://root@127.0.0.1:P/test
//!  kill()         pg_ctl stop -m immediate                   SIGKILL
//!  start_again()  pg_ctl start -w, same port
//!  drop           pg_ctl stop -m fast, rm -r folder          SIGTERM (SIGKILL after 20 s), rm -r
//! ```
//!
//! ```text
//!                 MemcachedServer::start[_with|_unix]()      RedisServer::start[_with_password]()
//!  binaries       memcached (PATH, /usr/bin)                 redis-server (PATH, /usr/bin)
//!  folder         TMP/perflab-memcached-PID-N (chown nobody) TMP/perflab-redis-PID-N
//!  start          memcached -l 127.0.0.1 -p P -U 0 -t T      redis-server --port P --bind 127.0.0.1
//!                   -m MB -c 4096 [-u nobody as root]          --save '' --appendonly no --dir FOLDER
//!                 _unix: -s FOLDER/memcached.sock -a 0700      --protected-mode no [--requirepass]
//!                   (no TCP at all)
//!  ready when     `version` gets VERSION ...                 PING gets +PONG (-NOAUTH with a password)
//!                 (a port taken meanwhile: the next free one, up to 5 tries; ≤ 20 s each)
//!  url()          memcached://127.0.0.1:P                    redis://127.0.0.1:P/0
//!                 memcached:///FOLDER/memcached.sock         redis://:PASSWORD@127.0.0.1:P/0
//!  freeze(cont)   SIGSTOP / SIGCONT the server process       (the same)
//!  kill()         SIGKILL                                    SIGKILL
//!  drop           SIGTERM (+SIGCONT; SIGKILL after 20 s),    (the same)
//!                 rm -r folder
//!
//!                 RedisCluster::start(n ≥ 3)
//!  nodes          n RedisServers in TMP/perflab-redis-cluster-PID-N/node-I, each with
//!                 --cluster-enabled yes --cluster-config-file nodes.conf
//!                 --cluster-node-timeout 5000 --cluster-port B (a free port too)
//!  create         redis-cli --cluster create 127.0.0.1:P1 ... --cluster-replicas 0 --cluster-yes
//!  ready when     CLUSTER INFO says cluster_state:ok on every node (≤ 30 s)
//!  url(), urls()  the first node's URL, every node's; nodes() to freeze or kill one
//!  freeze, kill   every node;   drop: every node as above, then rm -r folder
//! ```
//!
//! `PgBouncer::start(&pg, mode)` puts pgbouncer (PATH, /usr/sbin) in front of a PgServer:
//! a config file in its own folder (pool_mode, one server connection per pool, trust
//! authentication), a free port of 127.0.0.1, no unix socket, `-u postgres` as root; ready
//! when TCP connects; SIGTERM on drop.
//!
//! Why the OS users: initdb and postgres refuse to run as root, so as root the PostgreSQL
//! commands run as `postgres` through `runuser`, and mariadbd is told `--user=mysql` (it then
//! drops root itself, so the child process *is* the server and `kill()` is a plain SIGKILL).
//! memcached refuses to run as root, so as root it is told `-u nobody` (it drops root
//! in-process, and makes its unix socket only afterwards, hence the folder owned by nobody).
//! redis-server runs as whoever starts it (as root it only warns). As any other user
//! everything runs as that user.
//!
//! When the binaries (redis-cli too, for a cluster) or the OS user are missing, `start()`
//! goes through [`skip_or_fail`](super::skip::skip_or_fail): a failure under
//! `PERFLAB_REQUIRE_SERVERS` (CI), else `None` with "SKIPPED <test>: ..., install <package>"
//! on stderr, and the test returns. It panics with the server's log when they are there but
//! the server does not come up, since that is a broken machine that a skip would hide. The
//! databases' durability settings are the servers' defaults (fsync on), so tests that count
//! flushes see real ones; Redis keeps nothing on disk (no snapshots, no append-only file),
//! which is how a cache is run. Only std is used: this file is compiled into every test
//! binary that uses `common`.

use super::skip::{find_program, skip_or_fail};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a one-shot command (initdb, install-db) may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// Start attempts: another process may take the free port between our probe and the bind.
const PORT_TRIES: usize = 5;

/// Why a server could not be had.
enum StartError {
    /// Not installed here: skip, or fail in CI.
    Missing {
        reason: String,
        package: &'static str,
    },
    /// Installed but broken: fail loudly.
    Failed(String),
}

impl StartError {
    fn missing(reason: impl Into<String>, package: &'static str) -> Self {
        StartError::Missing {
            reason: reason.into(),
            package,
        }
    }
}

/// The outcome of `start()`: `None` for missing software (a panic under
/// `PERFLAB_REQUIRE_SERVERS`), a panic for a broken start.
fn settle<T>(kind: &str, r: Result<T, StartError>) -> Option<T> {
    match r {
        Ok(s) => Some(s),
        Err(StartError::Missing { reason, package }) => {
            skip_or_fail(&format!("no {kind} test server: {reason}"), package);
            None
        }
        Err(StartError::Failed(why)) => panic!("{kind} test server did not start: {why}"),
    }
}

// ───────────────────────────── PostgreSQL ─────────────────────────────

/// A PostgreSQL server of its own: trust authentication on 127.0.0.1, superuser `postgres`.
pub struct PgServer {
    dir: PathBuf,
    data: PathBuf,
    pg_ctl: PathBuf,
    /// `Some("postgres")` when running as root.
    run_as: Option<RunAs>,
    port: u16,
}

impl PgServer {
    /// initdb into a fresh temporary folder, start it on a free port and wait until it
    /// accepts connections. `None` (with the reason on stderr) when PostgreSQL is not
    /// installed.
    pub fn start() -> Option<PgServer> {
        settle("PostgreSQL", Self::try_start())
    }

    fn try_start() -> Result<PgServer, StartError> {
        let bin = pg_bin_dir().ok_or_else(|| {
            StartError::missing(
                "initdb not found (looked in /usr/lib/postgresql/*/bin and PATH)",
                "postgresql",
            )
        })?;
        let run_as = RunAs::when_root("postgres", "postgresql")?;
        let dir = scratch_dir("pg", run_as.as_ref())?;
        // From here on, a failure must not leave the folder behind.
        let mut server = PgServer {
            data: dir.join("data"),
            dir,
            pg_ctl: bin.join("pg_ctl"),
            run_as,
            port: 0,
        };
        server.create(&bin)?;
        server.boot()?;
        Ok(server)
    }

    /// As [`PgServer::start`], with TLS: the certificate `server` of `pki` (for `localhost`),
    /// clients' certificates checked against its CA, and the role `certuser` allowed only
    /// over TLS with a client certificate for it (`clientcert=verify-full`).
    pub fn start_tls(pki: &super::pki::Pki) -> Option<PgServer> {
        settle("PostgreSQL with TLS", Self::try_start_tls(pki))
    }

    fn try_start_tls(pki: &super::pki::Pki) -> Result<PgServer, StartError> {
        let bin = pg_bin_dir().ok_or_else(|| {
            StartError::missing(
                "initdb not found (looked in /usr/lib/postgresql/*/bin and PATH)",
                "postgresql",
            )
        })?;
        let run_as = RunAs::when_root("postgres", "postgresql")?;
        let dir = scratch_dir("pg-tls", run_as.as_ref())?;
        let mut server = PgServer {
            data: dir.join("data"),
            dir,
            pg_ctl: bin.join("pg_ctl"),
            run_as,
            port: 0,
        };
        server.create(&bin)?;
        server.use_certificate(pki, "server")?;
        fs::copy(pki.path("ca.pem"), server.data.join("ca.pem"))
            .map_err(|e| StartError::Failed(format!("cannot copy the test CA: {e}")))?;
        append(
            &server.data.join("postgresql.conf"),
            "ssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\nssl_ca_file = 'ca.pem'\n",
        )?;
        fs::write(
            server.data.join("pg_hba.conf"),
            "local all all trust\n\
             hostssl all certuser 127.0.0.1/32 trust clientcert=verify-full\n\
             host all certuser 127.0.0.1/32 reject\n\
             host all all 127.0.0.1/32 trust\n",
        )
        .map_err(|e| StartError::Failed(format!("cannot write pg_hba.conf: {e}")))?;
        if let Some(u) = &server.run_as {
            for f in ["ca.pem", "pg_hba.conf"] {
                u.chown(&server.data.join(f))?;
            }
        }
        server.boot()?;
        Ok(server)
    }

    /// Serves `pki`'s certificate `name` (`server`, `expired`) from now on: copied over the
    /// server's own, and the server told to reload (PostgreSQL rereads its TLS files then).
    pub fn serve_certificate(&self, pki: &super::pki::Pki, name: &str) {
        if let Err(StartError::Failed(e) | StartError::Missing { reason: e, .. }) =
            self.use_certificate(pki, name)
        {
            panic!("{e}");
        }
        let mut reload = self.pg_ctl(&["reload"]);
        run_logged(&mut reload, &self.dir.join("pg_ctl.log"), COMMAND_TIMEOUT)
            .expect("pg_ctl reload");
        // The postmaster reloads on SIGHUP, asynchronously; new connections see it after.
        std::thread::sleep(Duration::from_millis(500));
    }

    fn use_certificate(&self, pki: &super::pki::Pki, name: &str) -> Result<(), StartError> {
        for (from, to) in [("pem", "server.pem"), ("key", "server.key")] {
            let target = self.data.join(to);
            fs::copy(pki.path(&format!("{name}.{from}")), &target)
                .map_err(|e| StartError::Failed(format!("cannot copy {name}.{from}: {e}")))?;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o600))
                .map_err(|e| StartError::Failed(format!("cannot chmod {to}: {e}")))?;
            if let Some(u) = &self.run_as {
                u.chown(&target)?;
            }
        }
        Ok(())
    }

    fn create(&self, bin: &Path) -> Result<(), StartError> {
        let mut initdb = command(&bin.join("initdb"), self.run_as.as_ref(), &self.dir);
        initdb
            .arg("-D")
            .arg(&self.data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"])
            // The folder is thrown away: syncing it to disk only slows the start.
            .arg("--no-sync");
        run_logged(&mut initdb, &self.dir.join("initdb.log"), COMMAND_TIMEOUT)
            .map_err(StartError::Failed)?;
        // In the config file rather than on pg_ctl's -o, which goes through a shell.
        let socket_dir = self.dir.to_string_lossy().replace('\'', "''");
        append(
            &self.data.join("postgresql.conf"),
            &format!(
                "\n# perflab test server\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{socket_dir}'\n"
            ),
        )
    }

    /// Starts the server on a free port, trying another when the port was taken meanwhile.
    fn boot(&mut self) -> Result<(), StartError> {
        let log = self.dir.join("server.log");
        for attempt in 1..=PORT_TRIES {
            self.port = free_port()?;
            // A later `port` line overrides an earlier one.
            append(
                &self.data.join("postgresql.conf"),
                &format!("port = {}\n", self.port),
            )?;
            let seen = file_len(&log);
            let mut start = self.pg_ctl(&["start", "-w", "-t", "20", "-l"]);
            start.arg(&log);
            let result = run_logged(&mut start, &self.dir.join("pg_ctl.log"), COMMAND_TIMEOUT);
            let server_log = read_from(&log, seen);
            match result {
                Ok(()) => {
                    return wait_for_tcp(self.port).map_err(|e| {
                        StartError::Failed(format!("{e}\n{}", last_lines(&server_log, 20)))
                    });
                }
                Err(_) if server_log.contains("already in use") && attempt < PORT_TRIES => {}
                Err(e) => {
                    return Err(StartError::Failed(format!(
                        "{e}\nserver log:\n{}",
                        last_lines(&server_log, 20)
                    )));
                }
            }
        }
        Err(StartError::Failed(
            "no free port after several tries".into(),
        ))
    }

    fn pg_ctl(&self, args: &[&str]) -> Command {
        let mut c = command(&self.pg_ctl, self.run_as.as_ref(), &self.dir);
        c.arg("-D").arg(&self.data).args(args);
        c
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary folder (data, socket, logs); gone after drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGSTOPs the postmaster and every backend (`cont: false`), or lets them go on
    /// (`cont: true`) — to test a server that stops answering without closing anything.
    pub fn freeze(&self, cont: bool) {
        let pid = fs::read_to_string(self.data.join("postmaster.pid"))
            .ok()
            .and_then(|s| s.lines().next().map(str::trim).map(String::from))
            .unwrap_or_default();
        if pid.is_empty() {
            return;
        }
        let children = Command::new("pgrep")
            .args(["-P", &pid])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let pids: Vec<&str> = std::iter::once(pid.as_str())
            .chain(children.split_whitespace())
            .collect();
        signal(&pids, cont);
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`, the closest to a crash that
    /// leaves no stray processes) — to test "server dies mid-run".
    pub fn kill(&self) {
        self.stop("immediate");
    }

    /// Starts a server that [`PgServer::kill`] stopped, on its port again (a server that
    /// was down and came back).
    pub fn start_again(&self) {
        let log = self.dir.join("server.log");
        let mut start = self.pg_ctl(&["start", "-w", "-t", "20", "-l"]);
        start.arg(&log);
        run_logged(&mut start, &self.dir.join("pg_ctl.log"), COMMAND_TIMEOUT)
            .expect("pg_ctl start again");
        wait_for_tcp(self.port).expect("the server accepts connections again");
    }

    fn stop(&self, mode: &str) {
        if !self.data.join("postmaster.pid").exists() {
            return;
        }
        let mut stop = self.pg_ctl(&["stop", "-w", "-t", "20", "-m", mode]);
        if let Err(e) = run_logged(&mut stop, &self.dir.join("pg_ctl.log"), COMMAND_TIMEOUT) {
            eprintln!("PostgreSQL test server on port {}: {e}", self.port);
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop("fast");
        // A fast stop that timed out (a stuck session) still must not outlive the test.
        self.stop("immediate");
        remove_dir(&self.dir);
    }
}

/// The folder with initdb and pg_ctl: Debian's /usr/lib/postgresql/N/bin with the highest N,
/// else wherever PATH has initdb.
/// A PostgreSQL program (`pgbench`, `psql`): beside the server's, else on PATH.
pub fn pg_program(name: &str) -> Option<PathBuf> {
    pg_bin_dir()
        .map(|b| b.join(name))
        .filter(|p| is_executable(p))
        .or_else(|| find_program(name))
}

fn pg_bin_dir() -> Option<PathBuf> {
    let versioned = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            (is_executable(&bin.join("initdb")) && is_executable(&bin.join("pg_ctl")))
                .then_some((version, bin))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, bin)| bin);
    versioned.or_else(|| {
        let bin = find_program("initdb")?.parent()?.to_path_buf();
        is_executable(&bin.join("pg_ctl")).then_some(bin)
    })
}

// ───────────────────────────── PgBouncer ─────────────────────────────

/// A PgBouncer of its own in front of a [`PgServer`]: `pool_mode` as asked, one server
/// connection per pool (`default_pool_size = 1`, so that clients share it, as a busy pool's
/// clients do), trust authentication for `postgres`, on a free port of 127.0.0.1 and no unix
/// socket. Started as our child process with its own config file, never the system's
/// service; as root it is told `-u postgres` (it refuses root, and drops it itself).
pub struct PgBouncer {
    dir: PathBuf,
    process: ServerProcess,
    port: u16,
}

impl PgBouncer {
    /// `None` (with the reason on stderr) when pgbouncer is not installed: a failure under
    /// `PERFLAB_REQUIRE_SERVERS`.
    pub fn start(pg: &PgServer, pool_mode: &str) -> Option<PgBouncer> {
        settle("PgBouncer", Self::try_start(pg, pool_mode))
    }

    fn try_start(pg: &PgServer, pool_mode: &str) -> Result<PgBouncer, StartError> {
        let pgbouncer = find_program("pgbouncer").ok_or_else(|| {
            StartError::missing(
                "pgbouncer not found (looked in PATH and the sbin folders)",
                "pgbouncer",
            )
        })?;
        let run_as = RunAs::when_root("postgres", "postgresql")?;
        let dir = scratch_dir("pgbouncer", run_as.as_ref())?;
        // trust still wants the user listed.
        let users = dir.join("users.txt");
        if let Err(e) = fs::write(&users, "\"postgres\" \"\"\n") {
            remove_dir(&dir);
            return Err(StartError::Failed(format!(
                "cannot write {}: {e}",
                users.display()
            )));
        }
        // 1.21 and later keep prepared statements across server connections when
        // max_prepared_statements is above 0 (the default from 1.24): off here, as in the
        // poolers perflab must recognise. Older ones do not know the setting and refuse it.
        let prepared = match keeps_prepared_statements(&pgbouncer) {
            true => "max_prepared_statements = 0\n",
            false => "",
        };
        let config = |port: u16| {
            format!(
                "[databases]\n* = host=127.0.0.1 port={}\n\n[pgbouncer]\n\
                 listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
                 auth_type = trust\nauth_file = {}\npool_mode = {pool_mode}\n\
                 default_pool_size = 1\n{prepared}",
                pg.port(),
                users.display()
            )
        };
        let ini = dir.join("pgbouncer.ini");
        let log = dir.join("pgbouncer.log");
        let spawn = |ports: &[u16; 1]| {
            // Written before each try: the port is in it. A failed write shows in the log.
            if let Err(e) = fs::write(&ini, config(ports[0])) {
                let _ = append(&log, &format!("cannot write {}: {e}\n", ini.display()));
            }
            let mut cmd = Command::new(&pgbouncer);
            if let Some(u) = &run_as {
                cmd.args(["-u", u.name]);
            }
            cmd.arg(&ini).current_dir(&dir);
            cmd
        };
        let ready = |ports: &[u16; 1], child: &mut Child| {
            let deadline = Instant::now() + READY_TIMEOUT;
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, ports[0]));
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("pgbouncer exited ({status}) before listening"));
                }
                if TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "pgbouncer did not listen on {addr} within {READY_TIMEOUT:?}"
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        match boot_on_free_ports(&log, PORT_TRIES, spawn, ready) {
            Ok(([port], process)) => Ok(PgBouncer { dir, process, port }),
            Err(e) => {
                remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`: the server's database, through the
    /// pooler.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        self.process.stop();
        remove_dir(&self.dir);
    }
}

/// Whether this pgbouncer knows `max_prepared_statements` (1.21 and later), from its
/// `--version` ("PgBouncer 1.18.0").
fn keeps_prepared_statements(pgbouncer: &Path) -> bool {
    let out = Command::new(pgbouncer)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let version: Vec<u32> = out
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('.')
        .map_while(|n| n.parse().ok())
        .collect();
    matches!(version.as_slice(), [1, minor, ..] if *minor >= 21) || version.first() > Some(&1)
}

// ───────────────────────────── MariaDB ─────────────────────────────

/// A MariaDB server of its own: `root` with no password from 127.0.0.1, database `test`.
pub struct MariaDbServer {
    dir: PathBuf,
    /// The server process itself (not a wrapper), so `kill()` is a real crash.
    child: Mutex<Option<Child>>,
    port: u16,
    /// Server options beyond the defaults (TLS).
    extra: Vec<String>,
}

impl MariaDbServer {
    /// mariadb-install-db into a fresh temporary folder, start mariadbd on a free port and
    /// wait until it greets. `None` (with the reason on stderr) when MariaDB is not installed.
    pub fn start() -> Option<MariaDbServer> {
        settle("MariaDB", Self::try_start(false))
    }

    /// As [`MariaDbServer::start`], with a self-signed certificate (made by `openssl`) and
    /// `require_secure_transport`: a server that refuses plain TCP.
    pub fn start_requiring_tls() -> Option<MariaDbServer> {
        settle("MariaDB with TLS", Self::try_start(true))
    }

    fn try_start(tls: bool) -> Result<MariaDbServer, StartError> {
        let missing = |what: &str| {
            StartError::missing(
                format!("{what} not found (looked in PATH and /usr/sbin)"),
                "mariadb-server",
            )
        };
        let mariadbd = find_program("mariadbd")
            .or_else(|| find_program("mysqld"))
            .ok_or_else(|| missing("mariadbd"))?;
        let install = find_program("mariadb-install-db")
            .or_else(|| find_program("mysql_install_db"))
            .ok_or_else(|| missing("mariadb-install-db"))?;
        let run_as = RunAs::when_root("mysql", "mariadb-server")?;
        let dir = scratch_dir("mariadb", run_as.as_ref())?;
        let mut server = MariaDbServer {
            dir,
            child: Mutex::new(None),
            port: 0,
            extra: Vec::new(),
        };
        if tls {
            server.make_certificate(run_as.as_ref())?;
        }
        server.create(&install, run_as.as_ref())?;
        server.boot(&mariadbd, run_as.as_ref())?;
        Ok(server)
    }

    /// As [`MariaDbServer::start`], with `pki`'s certificate `server` (for `localhost`) and
    /// its CA for client certificates (`ssl-ca`): a user created `REQUIRE X509` must show one.
    pub fn start_tls_with(pki: &super::pki::Pki) -> Option<MariaDbServer> {
        settle("MariaDB with TLS", Self::try_start_with(pki))
    }

    fn try_start_with(pki: &super::pki::Pki) -> Result<MariaDbServer, StartError> {
        let mariadbd = find_program("mariadbd")
            .or_else(|| find_program("mysqld"))
            .ok_or_else(|| StartError::missing("mariadbd not found", "mariadb-server"))?;
        let install = find_program("mariadb-install-db")
            .or_else(|| find_program("mysql_install_db"))
            .ok_or_else(|| StartError::missing("mariadb-install-db not found", "mariadb-server"))?;
        let run_as = RunAs::when_root("mysql", "mariadb-server")?;
        let dir = scratch_dir("mariadb-tls", run_as.as_ref())?;
        let mut server = MariaDbServer {
            dir,
            child: Mutex::new(None),
            port: 0,
            extra: Vec::new(),
        };
        for name in ["server.pem", "server.key", "ca.pem"] {
            let to = server.dir.join(name);
            fs::copy(pki.path(name), &to)
                .map_err(|e| StartError::Failed(format!("cannot copy {name}: {e}")))?;
            if let Some(u) = &run_as {
                u.chown(&to)?;
            }
        }
        server.extra = ["ssl-cert=server.pem", "ssl-key=server.key", "ssl-ca=ca.pem"]
            .iter()
            .map(|o| {
                let (k, f) = o.split_once('=').unwrap();
                format!("--{k}={}", server.dir.join(f).display())
            })
            .collect();
        server.create(&install, run_as.as_ref())?;
        server.boot(&mariadbd, run_as.as_ref())?;
        Ok(server)
    }

    fn make_certificate(&mut self, run_as: Option<&RunAs>) -> Result<(), StartError> {
        let (key, cert) = self_signed_certificate(&self.dir)?;
        if let Some(u) = run_as {
            u.chown(&key)?;
            u.chown(&cert)?;
        }
        self.extra = vec![
            format!("--ssl-cert={}", cert.display()),
            format!("--ssl-key={}", key.display()),
            "--require-secure-transport=ON".into(),
        ];
        Ok(())
    }

    fn create(&self, install: &Path, run_as: Option<&RunAs>) -> Result<(), StartError> {
        let mut cmd = Command::new(install);
        // --no-defaults first: the machine's /etc/mysql must not leak in.
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            // root@localhost and root@127.0.0.1 with an empty password, not unix_socket auth.
            .arg("--auth-root-authentication-method=normal")
            .args(["--skip-test-db", "--skip-name-resolve"])
            // Its bootstrap server deletes every `#sql*` file in its tmpdir at start: in the
            // shared /tmp those are other servers' temporary tables (seen with two at once).
            .arg(format!("--tmpdir={}", self.dir.display()))
            .current_dir(&self.dir);
        if let Some(u) = run_as {
            cmd.arg(format!("--user={}", u.name));
        }
        run_logged(&mut cmd, &self.dir.join("install.log"), COMMAND_TIMEOUT)
            .map_err(StartError::Failed)?;
        // Run by the server before it takes connections: ready means these are done. The
        // user line makes root@127.0.0.1 sure on versions whose install-db does not add it.
        let init = self.dir.join("init.sql");
        append(
            &init,
            "CREATE DATABASE IF NOT EXISTS test;\n\
             CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\n\
             GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n",
        )?;
        if let Some(u) = run_as {
            u.chown(&init)?;
        }
        Ok(())
    }

    fn boot(&mut self, mariadbd: &Path, run_as: Option<&RunAs>) -> Result<(), StartError> {
        let log = self.dir.join("error.log");
        for attempt in 1..=PORT_TRIES {
            self.port = free_port()?;
            let seen = file_len(&log);
            let d = |name: &str| self.dir.join(name).display().to_string();
            let mut cmd = Command::new(mariadbd);
            cmd.arg("--no-defaults")
                .arg(format!("--datadir={}", d("data")))
                .arg(format!("--socket={}", d("mysqld.sock")))
                .arg(format!("--pid-file={}", d("mysqld.pid")))
                .arg(format!("--log-error={}", d("error.log")))
                .arg(format!("--init-file={}", d("init.sql")))
                // As for install-db: a tmpdir of its own, or it deletes others' temp tables.
                .arg(format!("--tmpdir={}", self.dir.display()))
                .arg(format!("--port={}", self.port))
                .args(["--bind-address=127.0.0.1", "--skip-name-resolve"])
                // Saving and reloading the buffer pool's page list only slows start and stop.
                .args([
                    "--innodb-buffer-pool-dump-at-shutdown=0",
                    "--innodb-buffer-pool-load-at-startup=0",
                ])
                .args(&self.extra)
                .current_dir(&self.dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Some(u) = run_as {
                cmd.arg(format!("--user={}", u.name));
            }
            let mut child = cmd.spawn().map_err(|e| {
                StartError::Failed(format!("cannot run {}: {e}", mariadbd.display()))
            })?;
            match wait_for_greeting(self.port, &mut child) {
                Ok(()) => {
                    self.child = Mutex::new(Some(child));
                    return Ok(());
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let server_log = read_from(&log, seen);
                    let port_taken = server_log.contains("Address already in use")
                        || server_log.contains("Bind on TCP/IP port");
                    if !(port_taken && attempt < PORT_TRIES) {
                        return Err(StartError::Failed(format!(
                            "{e}\nserver log:\n{}",
                            last_lines(&server_log, 20)
                        )));
                    }
                }
            }
        }
        Err(StartError::Failed(
            "no free port after several tries".into(),
        ))
    }

    /// `mysql://root@127.0.0.1:PORT/test`
    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/test", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary folder (data, socket, logs); gone after drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGSTOPs the server (`cont: false`) or lets it go on (`cont: true`) — to test a
    /// server that stops answering without closing anything.
    pub fn freeze(&self, cont: bool) {
        let guard = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(child) = guard.as_ref() {
            signal(&[&child.id().to_string()], cont);
        }
    }

    /// SIGKILLs the server — to test "server dies mid-run".
    pub fn kill(&self) {
        let mut guard = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(child) = guard.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for MariaDbServer {
    fn drop(&mut self) {
        let slot = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(mut child) = slot.take()
            && matches!(child.try_wait(), Ok(None))
        {
            // std can only SIGKILL; a clean shutdown asks for SIGTERM through kill(1).
            let asked = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            let deadline = Instant::now() + READY_TIMEOUT;
            while asked && Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        remove_dir(&self.dir);
    }
}

/// Waits until the server on `port` sends its handshake (protocol 10), or `child` exits,
/// or [`READY_TIMEOUT`] passes. The greeting comes only once the init file has run.
fn wait_for_greeting(port: u16, child: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "mariadbd exited ({status}) before accepting connections"
            ));
        }
        if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            // 3 bytes of length, 1 of sequence, then the payload: 10 for a handshake, 0xFF
            // for an error packet (too early, or refused).
            let mut head = [0u8; 5];
            if s.read_exact(&mut head).is_ok() && head[4] == 10 {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err(format!(
                "mariadbd did not greet on 127.0.0.1:{port} within {READY_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ───────────────────────────── shared ─────────────────────────────

/// The OS user a server runs as when the tests run as root.
struct RunAs {
    name: &'static str,
    uid: u32,
    gid: u32,
    /// util-linux's runuser: su without a password or a login shell.
    runuser: PathBuf,
}

impl RunAs {
    /// `None` when not root (everything runs as the current user).
    fn when_root(name: &'static str, package: &'static str) -> Result<Option<RunAs>, StartError> {
        if !is_root() {
            return Ok(None);
        }
        let (uid, gid) = os_user(name).ok_or_else(|| {
            StartError::missing(
                format!("running as root needs the OS user '{name}' to run the server as"),
                package,
            )
        })?;
        let runuser = find_program("runuser")
            .ok_or_else(|| StartError::missing("runuser not found", "util-linux"))?;
        Ok(Some(RunAs {
            name,
            uid,
            gid,
            runuser,
        }))
    }

    fn chown(&self, path: &Path) -> Result<(), StartError> {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)).map_err(|e| {
            StartError::Failed(format!(
                "cannot chown {} to {}: {e}",
                path.display(),
                self.name
            ))
        })
    }
}

/// `program`, run as `run_as` when given, in `dir` (the caller's folder may be /root, which
/// the server's user cannot enter), with nothing on stdin.
fn command(program: &Path, run_as: Option<&RunAs>, dir: &Path) -> Command {
    let mut c = match run_as {
        Some(u) => {
            let mut c = Command::new(&u.runuser);
            c.args(["-u", u.name, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    };
    c.current_dir(dir).stdin(Stdio::null());
    c
}

/// Runs `cmd` with its output appended to `log`, killed after `timeout`. The output goes to a
/// file, not a pipe, because pg_ctl's server inherits it and would keep a pipe open forever.
fn run_logged(cmd: &mut Command, log: &Path, timeout: Duration) -> Result<(), String> {
    let program = format!("{:?}", cmd.get_program());
    let seen = file_len(log);
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let mut child = cmd
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} did not finish within {timeout:?}"));
            }
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?} failed ({status}):\n{}",
            std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .collect::<Vec<_>>(),
            last_lines(&read_from(log, seen), 20)
        ))
    }
}

/// Until 127.0.0.1:`port` accepts a TCP connection, for at most [`READY_TIMEOUT`].
fn wait_for_tcp(port: u16) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    while TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err() {
        if Instant::now() > deadline {
            return Err(format!(
                "nothing accepts on 127.0.0.1:{port} after {READY_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// A port nobody listens on now, outside the ephemeral range (perflab's own pick for its
/// throwaways). Another process may take it before the server binds it: the callers retry.
fn free_port() -> Result<u16, StartError> {
    perflab::env::ports::free_port()
        .map_err(|e| StartError::Failed(format!("cannot find a free port on 127.0.0.1: {e}")))
}

/// A new, empty folder for one server, owned by the server's user. Under the temporary
/// folder if the server's user can reach it, else /tmp.
fn scratch_dir(kind: &str, run_as: Option<&RunAs>) -> Result<PathBuf, StartError> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let mut base = std::env::temp_dir();
    if run_as.is_some() && !others_can_enter(&base) {
        base = PathBuf::from("/tmp");
    }
    let dir = base.join(format!(
        "perflab-{kind}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    // A leftover of an earlier process with the same id.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir)
        .map_err(|e| StartError::Failed(format!("cannot create {}: {e}", dir.display())))?;
    if let Some(u) = run_as
        && let Err(e) = u.chown(&dir)
    {
        remove_dir(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// Whether every folder on the way to `dir` lets other users through.
fn others_can_enter(dir: &Path) -> bool {
    dir.ancestors()
        .all(|a| fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

fn remove_dir(dir: &Path) {
    if let Err(e) = fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!("cannot remove test server folder {}: {e}", dir.display());
    }
}

fn append(path: &Path, text: &str) -> Result<(), StartError> {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| StartError::Failed(format!("cannot write {}: {e}", path.display())))
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// What was written to `path` after its first `from` bytes.
fn read_from(path: &Path, from: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(from).unwrap_or(0).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The log lines that say what went wrong (install-db buries its error under a page of
/// advice), then the last `n` lines.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let tail_from = lines.len().saturating_sub(n);
    let errors = lines[..tail_from].iter().filter(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("error") || l.contains("fatal")
    });
    let mut out: Vec<&str> = errors.take(10).copied().collect();
    if !out.is_empty() {
        out.push("...");
    }
    out.extend(&lines[tail_from..]);
    out.join("\n")
}

/// The effective user is root: /proc/self belongs to the process's effective uid.
fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The uid and gid of an OS user, from /etc/passwd.
fn os_user(name: &str) -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut f = line.split(':');
        if f.next()? != name {
            return None;
        }
        let _password = f.next()?;
        Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
    })
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// SIGSTOP (or SIGCONT) to each process, through kill(1): std sends only SIGKILL.
fn signal(pids: &[&str], cont: bool) {
    let _ = Command::new("kill")
        .arg(if cont { "-CONT" } else { "-STOP" })
        .args(pids)
        .stderr(Stdio::null())
        .status();
}

// ───────────────────────────── memcached ─────────────────────────────

/// memcached's own defaults (`-t 4 -m 64`): `start()` is a stock server.
const MEMCACHED_THREADS: u32 = 4;
const MEMCACHED_MB: u32 = 64;
/// memcached refuses to run as root; as root it is told `-u nobody` and drops root itself.
const MEMCACHED_USER: &str = "nobody";

/// A memcached of its own, on 127.0.0.1 (TCP, no UDP) or on a unix socket in its folder.
pub struct MemcachedServer {
    dir: PathBuf,
    process: ServerProcess,
    /// 0 for the unix-socket server: memcached listens on no TCP port when given `-s`.
    port: u16,
    socket: Option<PathBuf>,
}

impl MemcachedServer {
    /// memcached with its default threads (4) and memory (64 MB) on a free port, once it
    /// answers `version`. `None` (with the reason on stderr) when memcached is not installed.
    pub fn start() -> Option<MemcachedServer> {
        Self::start_with(MEMCACHED_THREADS, MEMCACHED_MB)
    }

    /// As [`MemcachedServer::start`], with `-t threads -m memory_mb`.
    pub fn start_with(threads: u32, memory_mb: u32) -> Option<MemcachedServer> {
        settle("memcached", Self::try_start(threads, memory_mb, false))
    }

    /// As [`MemcachedServer::start`], listening only on a unix socket in its folder (mode
    /// 0700: the server's user, or root, may connect); `url()` is `memcached:///path`.
    pub fn start_unix() -> Option<MemcachedServer> {
        settle(
            "memcached (unix socket)",
            Self::try_start(MEMCACHED_THREADS, MEMCACHED_MB, true),
        )
    }

    fn try_start(threads: u32, memory_mb: u32, unix: bool) -> Result<MemcachedServer, StartError> {
        let memcached = find_in_path_or_usr_bin("memcached").ok_or_else(|| {
            StartError::missing(
                "memcached not found (looked in PATH and /usr/bin)",
                "memcached",
            )
        })?;
        let run_as = RunAs::when_root(MEMCACHED_USER, "memcached")?;
        // Owned by `nobody` as root: memcached makes its unix socket after dropping root.
        let dir = scratch_dir(
            if unix { "memcached-unix" } else { "memcached" },
            run_as.as_ref(),
        )?;
        let socket = unix.then(|| dir.join("memcached.sock"));
        if let Some(s) = &socket
            && s.as_os_str().len() >= UNIX_PATH_MAX
        {
            let why = format!(
                "the socket path {} is longer than a unix socket address allows ({UNIX_PATH_MAX} bytes): set TMPDIR to a shorter folder",
                s.display()
            );
            remove_dir(&dir);
            return Err(StartError::Failed(why));
        }
        let log = dir.join("memcached.log");
        let spawn = |ports: &[u16; 1]| {
            let mut cmd = Command::new(&memcached);
            match &socket {
                Some(s) => {
                    cmd.arg("-s").arg(s).args(["-a", "0700"]);
                }
                None => {
                    cmd.args(["-l", "127.0.0.1", "-p", &ports[0].to_string()]);
                }
            }
            // -U 0: no UDP port (memcached ≥ 1.5.6 has it off already; older ones would
            // bind 11211/udp, which may be taken). -c 4096: more clients than the default
            // 1024, for client sweeps; memcached raises its open-files limit to match.
            cmd.args(["-U", "0"])
                .args(["-t", &threads.to_string(), "-m", &memory_mb.to_string()])
                .args(["-c", "4096"])
                .current_dir(&dir);
            if let Some(u) = &run_as {
                cmd.args(["-u", u.name]);
            }
            cmd
        };
        let ready = |ports: &[u16; 1], child: &mut Child| {
            let at = match &socket {
                Some(s) => Addr::Unix(s),
                None => Addr::Tcp(ports[0]),
            };
            wait_for_reply("memcached", child, &at, b"version\r\n", |line| {
                line.starts_with("VERSION ")
            })
        };
        // On a unix socket there is no port to lose to another process: one try is enough,
        // and the port drawn for it is not used.
        let tries = if unix { 1 } else { PORT_TRIES };
        match boot_on_free_ports(&log, tries, spawn, ready) {
            Ok(([port], process)) => Ok(MemcachedServer {
                dir,
                process,
                port: if unix { 0 } else { port },
                socket,
            }),
            Err(e) => {
                remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// `memcached://127.0.0.1:PORT`, or `memcached:///path/to/memcached.sock` for
    /// [`MemcachedServer::start_unix`].
    pub fn url(&self) -> String {
        match &self.socket {
            Some(s) => format!("memcached://{}", s.display()),
            None => format!("memcached://127.0.0.1:{}", self.port),
        }
    }

    /// The TCP port. Panics for the unix-socket server, which has none.
    pub fn port(&self) -> u16 {
        assert!(
            self.socket.is_none(),
            "a unix-socket memcached has no TCP port"
        );
        self.port
    }

    /// The unix socket of [`MemcachedServer::start_unix`]; `None` for a TCP server.
    pub fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// The server's process id (memcached itself: it drops root in-process).
    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    /// The temporary folder (log, socket); gone after drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGSTOPs the server (`cont: false`) or lets it go on (`cont: true`) — to test a
    /// server that stops answering without closing anything.
    pub fn freeze(&self, cont: bool) {
        self.process.freeze(cont);
    }

    /// SIGKILLs the server — to test "server dies mid-run".
    pub fn kill(&self) {
        self.process.kill();
    }
}

impl Drop for MemcachedServer {
    fn drop(&mut self) {
        self.process.stop();
        remove_dir(&self.dir);
    }
}

// ───────────────────────────── Redis ─────────────────────────────

/// How long a cluster may take from `redis-cli --cluster create` to `cluster_state:ok` on
/// every node (the nodes learn of each other by gossip, about once a second).
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(30);

/// A key and a self-signed certificate for `localhost` in `dir` (`key.pem`, `cert.pem`),
/// made by the openssl command, valid for a day.
fn self_signed_certificate(dir: &Path) -> Result<(PathBuf, PathBuf), StartError> {
    let openssl = find_program("openssl")
        .ok_or_else(|| StartError::missing("openssl not found", "openssl"))?;
    let (key, cert) = (dir.join("key.pem"), dir.join("cert.pem"));
    let mut cmd = Command::new(openssl);
    cmd.args([
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
    ])
    .args(["-subj", "/CN=localhost", "-keyout"])
    .arg(&key)
    .arg("-out")
    .arg(&cert);
    run_logged(&mut cmd, &dir.join("openssl.log"), COMMAND_TIMEOUT).map_err(StartError::Failed)?;
    Ok((key, cert))
}

/// A redis-server of its own: database 0 on 127.0.0.1, no persistence (neither RDB
/// snapshots nor an append-only file), optionally a password (`requirepass`).
pub struct RedisServer {
    dir: PathBuf,
    process: ServerProcess,
    port: u16,
    password: Option<String>,
    /// With [`RedisServer::start_tls`]: the TLS port, beside the plain one.
    tls_port: Option<u16>,
}

impl RedisServer {
    /// redis-server on a free port, once it answers `PING`. `None` (with the reason on
    /// stderr) when Redis is not installed.
    pub fn start() -> Option<RedisServer> {
        settle("Redis", Self::try_start(None))
    }

    /// As [`RedisServer::start`], with `--requirepass password`: the default user must
    /// `AUTH password` first. `url()` carries the password.
    pub fn start_with_password(password: &str) -> Option<RedisServer> {
        settle("Redis with a password", Self::try_start(Some(password)))
    }

    /// As [`RedisServer::start`], also listening for TLS (`--tls-port`, a self-signed
    /// certificate, no client certificates asked): `tls_url()` names that port.
    pub fn start_tls() -> Option<RedisServer> {
        settle("Redis with TLS", Self::try_start_tls())
    }

    /// As [`RedisServer::start_tls`], with `pki`'s certificate `server` (for `localhost`) and
    /// clients required to show a certificate signed by its CA (`tls-auth-clients yes`).
    pub fn start_tls_with(pki: &super::pki::Pki) -> Option<RedisServer> {
        settle(
            "Redis with TLS and client certificates",
            Self::try_start_tls_with(pki),
        )
    }

    fn try_start_tls_with(pki: &super::pki::Pki) -> Result<RedisServer, StartError> {
        let redis = redis_server_program()?;
        let dir = scratch_dir("redis-tls", None)?;
        for (from, to) in [
            ("server.pem", "cert.pem"),
            ("server.key", "key.pem"),
            ("ca.pem", "ca.pem"),
        ] {
            if let Err(e) = fs::copy(pki.path(from), dir.join(to)) {
                remove_dir(&dir);
                return Err(StartError::Failed(format!("cannot copy {from}: {e}")));
            }
        }
        Self::boot(&redis, dir, None, Role::Tls)
    }

    /// Serves `pki`'s certificate `name` (`expired`) from now on, by `CONFIG SET` on the
    /// plain port (Redis loads the new files at once).
    pub fn serve_certificate(&self, pki: &super::pki::Pki, name: &str) {
        let (cert, key) = (
            self.dir.join(format!("{name}.pem")),
            self.dir.join(format!("{name}.key")),
        );
        fs::copy(pki.path(&format!("{name}.pem")), &cert).expect("copy the certificate");
        fs::copy(pki.path(&format!("{name}.key")), &key).expect("copy the key");
        let args = [
            "CONFIG".to_string(),
            "SET".into(),
            "tls-cert-file".into(),
            cert.display().to_string(),
            "tls-key-file".into(),
            key.display().to_string(),
        ];
        let mut command = format!("*{}\r\n", args.len());
        for a in &args {
            command.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("the plain port");
        s.set_read_timeout(Some(READY_TIMEOUT)).unwrap();
        s.write_all(command.as_bytes()).unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        assert_eq!(line.trim_end(), "+OK", "CONFIG SET tls-cert-file");
    }

    /// The server's Unix socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("redis.sock")
    }

    /// The TLS port, with [`RedisServer::start_tls`] or [`RedisServer::start_tls_with`].
    pub fn tls_port(&self) -> Option<u16> {
        self.tls_port
    }

    fn try_start(password: Option<&str>) -> Result<RedisServer, StartError> {
        let redis = redis_server_program()?;
        let dir = scratch_dir("redis", None)?;
        Self::boot(&redis, dir, password, Role::Plain)
    }

    fn try_start_tls() -> Result<RedisServer, StartError> {
        let redis = redis_server_program()?;
        let dir = scratch_dir("redis-tls", None)?;
        match self_signed_certificate(&dir) {
            Ok(_) => Self::boot(&redis, dir, None, Role::Tls),
            Err(e) => {
                remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Starts redis-server in `dir`, which it owns from here on (removed on failure too).
    /// A cluster node's bus port (normally port + 10000), or the TLS port, is drawn free too.
    fn boot(
        redis: &Path,
        dir: PathBuf,
        password: Option<&str>,
        role: Role,
    ) -> Result<RedisServer, StartError> {
        let log = dir.join("redis.log");
        let spawn = |ports: &[u16; 2]| {
            let mut cmd = Command::new(redis);
            // Only command-line options and no config file: nothing of the machine's
            // /etc/redis applies. `--save ''` and `--appendonly no`: nothing is written to
            // disk, so no fork for snapshots and a single process to freeze or kill.
            cmd.args(["--port", &ports[0].to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--dir")
                .arg(&dir)
                .args(["--protected-mode", "no"])
                // A Unix socket beside the TCP port, for the socket URL spellings.
                .arg("--unixsocket")
                .arg(dir.join("redis.sock"))
                .args(["--unixsocketperm", "700"])
                .current_dir(&dir);
            if let Some(p) = password {
                cmd.args(["--requirepass", p]);
            }
            if role == Role::Tls {
                // The plain port stays: readiness is checked there, as for the others.
                cmd.args(["--tls-port", &ports[1].to_string()])
                    .arg("--tls-cert-file")
                    .arg(dir.join("cert.pem"))
                    .arg("--tls-key-file")
                    .arg(dir.join("key.pem"));
                // With a CA (start_tls_with), clients must show a certificate it signed.
                if dir.join("ca.pem").exists() {
                    cmd.arg("--tls-ca-cert-file")
                        .arg(dir.join("ca.pem"))
                        .args(["--tls-auth-clients", "yes"]);
                } else {
                    cmd.args(["--tls-auth-clients", "no"]);
                }
            }
            if role == Role::ClusterNode {
                cmd.args(["--cluster-enabled", "yes"])
                    .args(["--cluster-config-file", "nodes.conf"])
                    .args(["--cluster-node-timeout", "5000"])
                    // The default bus port is port + 10000, past 65535 for a free port
                    // above 55535 (the kernel draws them up to 60999): a free one of its own.
                    .args(["--cluster-port", &ports[1].to_string()]);
            }
            cmd
        };
        let ready = |ports: &[u16; 2], child: &mut Child| {
            // With a password, PING before AUTH gets -NOAUTH: the server is up all the same.
            wait_for_reply(
                "redis-server",
                child,
                &Addr::Tcp(ports[0]),
                b"PING\r\n",
                |line| line == "+PONG" || (password.is_some() && line.starts_with("-NOAUTH")),
            )
        };
        match boot_on_free_ports(&log, PORT_TRIES, spawn, ready) {
            Ok(([port, second], process)) => Ok(RedisServer {
                dir,
                process,
                port,
                password: password.map(String::from),
                tls_port: (role == Role::Tls).then_some(second),
            }),
            Err(e) => {
                remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// `redis://127.0.0.1:PORT/0`, or `redis://:PASSWORD@127.0.0.1:PORT/0` (percent-encoded)
    /// for [`RedisServer::start_with_password`].
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{}@127.0.0.1:{}/0", percent_encode(p), self.port),
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `rediss://127.0.0.1:TLS_PORT/0` for [`RedisServer::start_tls`].
    pub fn tls_url(&self) -> Option<String> {
        self.tls_port.map(|p| format!("rediss://127.0.0.1:{p}/0"))
    }

    /// The server's process id (redis-server itself, a single process).
    pub fn pid(&self) -> u32 {
        self.process.pid
    }

    /// The temporary folder (log, `nodes.conf` for a cluster node); gone after drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGSTOPs the server (`cont: false`) or lets it go on (`cont: true`) — to test a
    /// server that stops answering without closing anything.
    pub fn freeze(&self, cont: bool) {
        self.process.freeze(cont);
    }

    /// SIGKILLs the server — to test "server dies mid-run".
    pub fn kill(&self) {
        self.process.kill();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.process.stop();
        remove_dir(&self.dir);
    }
}

/// What a redis-server is started as; each draws its second port for its own use.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    Tls,
    ClusterNode,
}

fn redis_server_program() -> Result<PathBuf, StartError> {
    find_in_path_or_usr_bin("redis-server").ok_or_else(|| {
        StartError::missing(
            "redis-server not found (looked in PATH and /usr/bin)",
            "redis-server",
        )
    })
}

/// A Redis cluster of its own: `nodes` masters (no replicas) sharing the 16384 slots, each a
/// [`RedisServer`] in a folder of its own under the cluster's folder.
pub struct RedisCluster {
    /// Dropped (stopped) before the folder is removed.
    nodes: Vec<RedisServer>,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts `nodes` cluster-enabled redis-servers (at least 3, Redis's minimum of masters),
    /// joins them with `redis-cli --cluster create`, and waits until every node says
    /// `cluster_state:ok`. `None` (with the reason on stderr) when redis-server or
    /// redis-cli is not installed.
    pub fn start(nodes: usize) -> Option<RedisCluster> {
        settle("Redis cluster", Self::try_start(nodes))
    }

    fn try_start(count: usize) -> Result<RedisCluster, StartError> {
        if count < 3 {
            return Err(StartError::Failed(format!(
                "a Redis cluster needs at least 3 masters, not {count}"
            )));
        }
        let redis = redis_server_program()?;
        let cli = find_in_path_or_usr_bin("redis-cli").ok_or_else(|| {
            StartError::missing(
                "redis-cli not found (looked in PATH and /usr/bin)",
                "redis-tools",
            )
        })?;
        let dir = scratch_dir("redis-cluster", None)?;
        // From here on, dropping `cluster` stops the nodes started so far and removes all.
        let mut cluster = RedisCluster {
            nodes: Vec::with_capacity(count),
            dir,
        };
        for i in 1..=count {
            let node_dir = cluster.dir.join(format!("node-{i}"));
            fs::create_dir(&node_dir).map_err(|e| {
                StartError::Failed(format!("cannot create {}: {e}", node_dir.display()))
            })?;
            let node = RedisServer::boot(&redis, node_dir, None, Role::ClusterNode)?;
            cluster.nodes.push(node);
        }
        let mut create = Command::new(&cli);
        create
            .args(["--cluster", "create"])
            .args(
                cluster
                    .nodes
                    .iter()
                    .map(|n| format!("127.0.0.1:{}", n.port)),
            )
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .current_dir(&cluster.dir)
            .stdin(Stdio::null());
        run_logged(
            &mut create,
            &cluster.dir.join("create.log"),
            COMMAND_TIMEOUT,
        )
        .map_err(StartError::Failed)?;
        cluster.wait_until_ok()?;
        Ok(cluster)
    }

    /// redis-cli returns once the nodes agree on the slots, but a node says
    /// `cluster_state:ok` only after it has heard from every other one.
    fn wait_until_ok(&self) -> Result<(), StartError> {
        let deadline = Instant::now() + CLUSTER_TIMEOUT;
        loop {
            let states: Vec<String> = self
                .nodes
                .iter()
                .map(|n| match redis_query(n.port, &["CLUSTER", "INFO"]) {
                    Ok(info) => info
                        .lines()
                        .find_map(|l| l.trim().strip_prefix("cluster_state:").map(String::from))
                        .unwrap_or_else(|| format!("no cluster_state in {info:?}")),
                    Err(e) => e.to_string(),
                })
                .collect();
            if states.iter().all(|s| s == "ok") {
                return Ok(());
            }
            if Instant::now() > deadline {
                let ports: Vec<u16> = self.nodes.iter().map(|n| n.port).collect();
                return Err(StartError::Failed(format!(
                    "the cluster of {ports:?} is not ok after {CLUSTER_TIMEOUT:?}: {states:?}\nredis-cli --cluster create said:\n{}",
                    last_lines(&read_from(&self.dir.join("create.log"), 0), 20)
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Every node's `redis://127.0.0.1:PORT/0`, in the order they were started.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// The first node's URL: a cluster client finds the others from it.
    pub fn url(&self) -> String {
        self.nodes[0].url()
    }

    /// The nodes, to freeze or kill one of them.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The cluster's folder (one folder per node, redis-cli's log); gone after drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// SIGSTOPs every node (`cont: false`) or lets them go on (`cont: true`). Nodes stopped
    /// for longer than the node timeout (5 s) may be marked failed by the others when only
    /// some are frozen; freezing all at once leaves no node to judge.
    pub fn freeze(&self, cont: bool) {
        for n in &self.nodes {
            n.freeze(cont);
        }
    }

    /// SIGKILLs every node.
    pub fn kill(&self) {
        for n in &self.nodes {
            n.kill();
        }
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        remove_dir(&self.dir);
    }
}

/// One command to the Redis server on `port`, its reply as text: a status or error line as
/// is (`+OK`, `-ERR ...`), a bulk string's content. Enough for `CLUSTER INFO`.
fn redis_query(port: u16, args: &[&str]) -> std::io::Result<String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut request = format!("*{}\r\n", args.len());
    for a in args {
        request.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(request.as_bytes())?;
    let mut reader = BufReader::new(s);
    let mut head = String::new();
    reader.read_line(&mut head)?;
    let head = head.trim_end();
    match head.strip_prefix('$').map(str::parse::<usize>) {
        Some(Ok(len)) => {
            let mut body = vec![0; len + 2];
            reader.read_exact(&mut body)?;
            body.truncate(len);
            Ok(String::from_utf8_lossy(&body).into_owned())
        }
        _ => Ok(head.to_string()),
    }
}

/// Everything but RFC 3986's unreserved characters as `%XX`: a password in a URL's userinfo.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// ─────────────────── shared by memcached and Redis ───────────────────

/// A socket address's path holds at most 108 bytes with its terminating NUL (Linux).
const UNIX_PATH_MAX: usize = 108;

/// `name` on PATH (or the sbin folders), else in /usr/bin, where Debian puts memcached and
/// Redis, for a PATH that lacks it.
fn find_in_path_or_usr_bin(name: &str) -> Option<PathBuf> {
    find_program(name).or_else(|| {
        let p = Path::new("/usr/bin").join(name);
        is_executable(&p).then_some(p)
    })
}

/// A server that is our own child process (memcached drops root in-process, redis-server
/// keeps it), so a signal to the child reaches the server and `kill()` is a real crash.
struct ServerProcess {
    child: Mutex<Child>,
    pid: u32,
}

impl ServerProcess {
    fn new(child: Child) -> Self {
        ServerProcess {
            pid: child.id(),
            child: Mutex::new(child),
        }
    }

    /// Whether it has not exited yet. Until we reap it (`wait`), an exited child stays a
    /// zombie, so while the lock is held its pid cannot be another process's.
    fn running(child: &mut Child) -> bool {
        matches!(child.try_wait(), Ok(None))
    }

    fn freeze(&self, cont: bool) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if Self::running(&mut child) {
            signal(&[&self.pid.to_string()], cont);
        }
    }

    fn kill(&self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }

    /// SIGTERM (a clean shutdown), SIGKILL if it has not ended after [`READY_TIMEOUT`].
    /// SIGCONT after the SIGTERM: a frozen server would otherwise sit on it until the
    /// SIGKILL.
    fn stop(&mut self) {
        let pid = self.pid.to_string();
        let child = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        if !Self::running(child) {
            let _ = child.wait();
            return;
        }
        // std can only SIGKILL; SIGTERM and SIGCONT go through kill(1).
        let asked = Command::new("kill")
            .args(["-TERM", &pid])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        signal(&[&pid], true);
        let deadline = Instant::now() + READY_TIMEOUT;
        while asked && Instant::now() < deadline && Self::running(child) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Starts a server on `N` ports that are free (and distinct), until it is ready: `spawn`
/// makes its command for the ports, whose stdout and stderr go to `log`; `ready` waits for
/// its answer. A start whose log says a port was taken meanwhile (by another test's server,
/// say) is tried again on other ports, up to `tries` times; any other failure comes back
/// with the log's last lines.
fn boot_on_free_ports<const N: usize>(
    log: &Path,
    tries: usize,
    spawn: impl Fn(&[u16; N]) -> Command,
    ready: impl Fn(&[u16; N], &mut Child) -> Result<(), String>,
) -> Result<([u16; N], ServerProcess), StartError> {
    let open_log = || {
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| StartError::Failed(format!("cannot open {}: {e}", log.display())))
    };
    for attempt in 1..=tries {
        let ports = free_ports::<N>()?;
        let seen = file_len(log);
        let (out, err) = (open_log()?, open_log()?);
        let mut cmd = spawn(&ports);
        let program = cmd.get_program().to_owned();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| {
                StartError::Failed(format!("cannot run {}: {e}", Path::new(&program).display()))
            })?;
        let e = match ready(&ports, &mut child) {
            Ok(()) => return Ok((ports, ServerProcess::new(child))),
            Err(e) => e,
        };
        let _ = child.kill();
        let _ = child.wait();
        let server_log = read_from(log, seen);
        if !(server_log.contains("Address already in use") && attempt < tries) {
            return Err(StartError::Failed(format!(
                "{e}\nserver log ({}):\n{}",
                log.display(),
                last_lines(&server_log, 20)
            )));
        }
    }
    Err(StartError::Failed(
        "no free port after several tries".into(),
    ))
}

/// `N` distinct ports that nobody listens on now (as [`free_port`]). Another process may
/// take one before the server binds it: [`boot_on_free_ports`] retries.
fn free_ports<const N: usize>() -> Result<[u16; N], StartError> {
    let ports = perflab::env::ports::free_ports(N)
        .map_err(|e| StartError::Failed(format!("cannot find a free port on 127.0.0.1: {e}")))?;
    let mut out = [0; N];
    out.copy_from_slice(&ports);
    Ok(out)
}

/// Where a server listens.
enum Addr<'a> {
    Tcp(u16),
    Unix(&'a Path),
}

impl std::fmt::Display for Addr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Tcp(port) => write!(f, "127.0.0.1:{port}"),
            Addr::Unix(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Until the server at `at` answers `ask` with a first line that `ok` accepts, or `child`
/// exits, or [`READY_TIMEOUT`] passes. A protocol answer, not just a connection: a server
/// accepts before it is ready only rarely, but a stranger on the port would pass a mere
/// connect.
fn wait_for_reply(
    name: &str,
    child: &mut Child,
    at: &Addr,
    ask: &[u8],
    ok: impl Fn(&str) -> bool,
) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{name} exited ({status}) before answering on {at}"));
        }
        let last = match first_line(at, ask) {
            Ok(line) if ok(&line) => return Ok(()),
            Ok(line) => format!("it answered {line:?}"),
            Err(e) => e.to_string(),
        };
        if Instant::now() > deadline {
            return Err(format!(
                "{name} did not answer {:?} on {at} within {READY_TIMEOUT:?} (last: {last})",
                String::from_utf8_lossy(ask)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `ask` to `at` and returns the first line of the answer, without its CRLF.
fn first_line(at: &Addr, ask: &[u8]) -> std::io::Result<String> {
    let timeout = Some(Duration::from_secs(2));
    match at {
        Addr::Tcp(port) => {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, *port));
            let s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
            s.set_read_timeout(timeout)?;
            exchange(s, ask)
        }
        Addr::Unix(path) => {
            let s = UnixStream::connect(path)?;
            s.set_read_timeout(timeout)?;
            exchange(s, ask)
        }
    }
}

fn exchange(mut s: impl Read + Write, ask: &[u8]) -> std::io::Result<String> {
    s.write_all(ask)?;
    let mut line = String::new();
    BufReader::new(s).take(4096).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}
