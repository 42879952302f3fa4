//! The throwaway Dovecot of `perflab mail` without `--target`: started from PATH (or
//! Debian's /usr/sbin) with a configuration of its own in a temporary directory, on free
//! ports of 127.0.0.1 (IMAP, POP3 and LMTP), with passwd-file users and maildirs perflab
//! fills itself; stopped, and its directory removed, when the run ends.
//!
//! As root, Dovecot's processes and the mail run as `nobody` (Dovecot refuses mail owned
//! by root); otherwise as the current user. The server leads a process group of its own,
//! so stopping it (or a test crashing it) takes every Dovecot process at once.
//!
//! Its durability is Dovecot's default, disclosed in the record: `mail_fsync = optimized`
//! (a delivered message is fsynced before LMTP answers 250) on maildir. If the server dies
//! during a run, [`Throwaway::revive`] starts it again on the same ports and mail.
//!
//! With TLS ([`Throwaway::start_with`], for `--tls` and `--starttls`) it gets a self-signed
//! RSA 2048 certificate made for the run by `openssl req -x509` in its directory, `ssl = yes`
//! (STARTTLS offered on the plain ports: IMAP, POP3, and LMTP) and IMAPS and POP3S listeners
//! on two more free ports; TLS 1.2 and 1.3 (`ssl_min_protocol = TLSv1.2`), Dovecot's
//! OpenSSL cipher defaults, disclosed by [`Throwaway::tls_settings`].

use super::message::{self, Envelope, Sizes};
use crate::workload::rng::Rng;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long Dovecot may take to answer after it was started.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a stop may take before the processes are killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts: another process may take a free port between the probe and Dovecot's bind.
const PORT_TRIES: usize = 5;

/// What must be installed, by file under Dovecot's library directory, and its package.
const PARTS: [(&str, &str); 3] = [
    ("imap", "dovecot-imapd"),
    ("pop3", "dovecot-pop3d"),
    ("lmtp", "dovecot-lmtpd"),
];

/// The configuration settings that decide durability, as disclosed.
pub const DURABILITY: [(&str, &str); 3] = [
    ("mail_location", "maildir"),
    ("mail_fsync", "optimized"),
    (
        "fsync_on_delivery",
        "yes (LMTP answers after the message file is fsynced)",
    ),
];

/// The certificate and protocols of a throwaway with TLS, as disclosed.
pub const TLS_SETTINGS: [(&str, &str); 3] = [
    (
        "certificate",
        "RSA 2048 for localhost and 127.0.0.1, signed by a CA made for the run (openssl), verified by perflab's clients",
    ),
    (
        "server_protocols",
        "TLSv1.2 and TLSv1.3 (ssl_min_protocol = TLSv1.2), Dovecot's default ciphers",
    ),
    (
        "server_listeners",
        "imaps and pop3s on their own ports; STARTTLS offered on imap, pop3 and lmtp",
    ),
];

/// Which account the server's processes and the mail run as.
#[derive(Debug, Clone)]
struct Account {
    user: String,
    group: String,
    uid: u32,
    gid: u32,
}

/// A Dovecot perflab started, and how.
#[derive(Debug)]
pub struct Throwaway {
    child: Option<Child>,
    dir: PathBuf,
    pub imap_port: u16,
    pub pop3_port: u16,
    pub lmtp_port: u16,
    /// The IMAPS and POP3S ports, with TLS (else 0).
    pub imaps_port: u16,
    pub pop3s_port: u16,
    /// Whether it has a certificate and offers TLS.
    tls: bool,
    pub version: String,
    binary: PathBuf,
    account: Account,
    /// Times the server was found dead and started again.
    pub revived: u32,
}

fn find(name: &str, extra: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A field of /etc/passwd or /etc/group: the id of `name`.
fn id_of(file: &str, name: &str) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then(|| f.nth(1)?.parse().ok())?
    })
}

/// The name of id `id` in /etc/passwd or /etc/group (the third field).
fn name_of(file: &str, id: u32) -> Option<String> {
    std::fs::read_to_string(file).ok()?.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2].parse() == Ok(id)).then(|| f[0].to_string())
    })
}

fn account() -> Result<Account, String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| -> Option<u32> {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
    };
    let (uid, gid) = (field("Uid:").unwrap_or(0), field("Gid:").unwrap_or(0));
    if uid == 0 {
        let nobody = id_of("/etc/passwd", "nobody")
            .ok_or("no user 'nobody' in /etc/passwd for the throwaway Dovecot's mail")?;
        let (group, gid) = ["nogroup", "nobody"]
            .iter()
            .find_map(|g| id_of("/etc/group", g).map(|id| (g.to_string(), id)))
            .ok_or("no group 'nogroup' or 'nobody' in /etc/group for the throwaway Dovecot")?;
        return Ok(Account {
            user: "nobody".into(),
            group,
            uid: nobody,
            gid,
        });
    }
    let user = name_of("/etc/passwd", uid)
        .ok_or_else(|| format!("uid {uid} has no name in /etc/passwd; Dovecot needs one"))?;
    let group = name_of("/etc/group", gid)
        .ok_or_else(|| format!("gid {gid} has no name in /etc/group; Dovecot needs one"))?;
    Ok(Account {
        user,
        group,
        uid,
        gid,
    })
}

/// The directory's name: unique per process and per server.
fn fresh_dir() -> std::io::Result<PathBuf> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "perflab-mail-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

impl Throwaway {
    /// Checks what must be installed: one line naming the package if something is missing.
    pub fn binary() -> Result<PathBuf, String> {
        let binary = find("dovecot", &["/usr/sbin", "/usr/local/sbin"]).ok_or(
            "dovecot is not installed: install it (apt-get install dovecot-core dovecot-imapd dovecot-pop3d dovecot-lmtpd) or give --target imap://HOST:PORT --smtp lmtp://HOST:PORT",
        )?;
        let libexec = [
            "/usr/lib/dovecot",
            "/usr/libexec/dovecot",
            "/usr/local/libexec/dovecot",
        ];
        for (part, package) in PARTS {
            if !libexec.iter().any(|d| Path::new(d).join(part).is_file()) {
                return Err(format!(
                    "Dovecot's {part} service is not installed: install it (apt-get install {package})"
                ));
            }
        }
        Ok(binary)
    }

    /// Starts Dovecot with `users` (name, password) and empty maildirs, without TLS.
    pub fn start(users: &[(String, String)]) -> Result<Throwaway, String> {
        Self::start_with(users, false)
    }

    /// Starts Dovecot with `users` (name, password) and empty maildirs; with `tls`, a
    /// self-signed certificate made by `openssl`, STARTTLS on the plain ports and IMAPS and
    /// POP3S listeners.
    pub fn start_with(users: &[(String, String)], tls: bool) -> Result<Throwaway, String> {
        let binary = Self::binary()?;
        let account = account()?;
        let dir = fresh_dir().map_err(|e| format!("cannot make a directory for Dovecot: {e}"))?;
        let mut t = Throwaway {
            child: None,
            dir,
            imap_port: 0,
            pop3_port: 0,
            lmtp_port: 0,
            imaps_port: 0,
            pop3s_port: 0,
            tls,
            version: String::new(),
            binary,
            account,
            revived: 0,
        };
        t.version = t.ask_version();
        t.lay_out(users)?;
        if tls {
            t.make_certificate()?;
        }
        let mut last = String::new();
        for _ in 0..PORT_TRIES {
            let ports = crate::env::ports::free_ports(if tls { 5 } else { 3 })
                .map_err(|e| format!("no free port on 127.0.0.1: {e}"))?;
            (t.imap_port, t.pop3_port, t.lmtp_port) = (ports[0], ports[1], ports[2]);
            if tls {
                (t.imaps_port, t.pop3s_port) = (ports[3], ports[4]);
            }
            match t.spawn() {
                Ok(()) => return Ok(t),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The certificate and its key, in the directory: a CA made for the run (`ca.pem`; its
    /// key is deleted once it signed) and the server's certificate signed by it for
    /// `localhost` and `127.0.0.1`, so that perflab's clients verify it in full, as they
    /// verify any server's.
    fn make_certificate(&self) -> Result<(), String> {
        let openssl = find("openssl", &[]).ok_or(
            "openssl is not installed: the throwaway Dovecot's TLS certificate is made with it (apt-get install openssl)",
        )?;
        let d = |name: &str| self.dir.join(name);
        std::fs::write(
            d("server.ext"),
            "subjectAltName = DNS:localhost, IP:127.0.0.1\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\n",
        )
        .map_err(|e| format!("cannot write the certificate's extensions: {e}"))?;
        let key = |name: &str| {
            ["-newkey", "rsa:2048", "-nodes", "-keyout"]
                .map(str::to_string)
                .into_iter()
                .chain([d(name).display().to_string()])
        };
        let steps: [Vec<String>; 3] = [
            [
                "req",
                "-x509",
                "-days",
                "1",
                "-subj",
                "/CN=perflab throwaway CA",
                "-out",
            ]
            .map(str::to_string)
            .into_iter()
            .chain([d("ca.pem").display().to_string()])
            .chain(key("ca-key.pem"))
            .collect(),
            ["req", "-new", "-subj", "/CN=localhost", "-out"]
                .map(str::to_string)
                .into_iter()
                .chain([d("server.csr").display().to_string()])
                .chain(key("key.pem"))
                .collect(),
            ["x509", "-req", "-days", "1", "-set_serial", "1", "-in"]
                .map(str::to_string)
                .into_iter()
                .chain([d("server.csr").display().to_string()])
                .chain(["-CA".to_string(), d("ca.pem").display().to_string()])
                .chain(["-CAkey".to_string(), d("ca-key.pem").display().to_string()])
                .chain([
                    "-extfile".to_string(),
                    d("server.ext").display().to_string(),
                ])
                .chain(["-out".to_string(), d("cert.pem").display().to_string()])
                .collect(),
        ];
        for args in steps {
            let out = Command::new(&openssl)
                .args(&args)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run {}: {e}", openssl.display()))?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(format!(
                    "openssl could not make the throwaway Dovecot's certificate ({}): {}",
                    out.status,
                    err.lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no message")
                ));
            }
        }
        for leftover in ["ca-key.pem", "server.csr", "server.ext"] {
            let _ = std::fs::remove_file(d(leftover));
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            self.dir.join("key.pem"),
            std::fs::Permissions::from_mode(0o600),
        )
        .map_err(|e| format!("cannot protect the certificate's key: {e}"))?;
        Ok(())
    }

    fn ask_version(&self) -> String {
        Command::new(&self.binary)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .next()
                    .map(|v| format!("Dovecot {v}"))
            })
            .unwrap_or_else(|| "Dovecot".into())
    }

    /// The directories, the users file and the configuration.
    fn lay_out(&self, users: &[(String, String)]) -> Result<(), String> {
        let fail = |what: &str, e: std::io::Error| {
            format!("cannot write {what} in {}: {e}", self.dir.display())
        };
        for sub in ["run", "state", "mail"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(|e| fail(sub, e))?;
        }
        // Dovecot's unprivileged processes must reach the mail and their sockets.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| fail("permissions", e))?;
        std::os::unix::fs::chown(
            self.dir.join("mail"),
            Some(self.account.uid),
            Some(self.account.gid),
        )
        .map_err(|e| fail("mail", e))?;
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(self.dir.join("users")).map_err(|e| fail("users", e))?,
        );
        for (name, password) in users {
            writeln!(file, "{name}:{{PLAIN}}{password}").map_err(|e| fail("users", e))?;
        }
        file.flush().map_err(|e| fail("users", e))?;
        Ok(())
    }

    fn config(&self) -> String {
        let d = self.dir.display();
        let a = &self.account;
        let ssl = if self.tls {
            format!(
                "ssl = yes
ssl_cert = <{d}/cert.pem
ssl_key = <{d}/key.pem
ssl_min_protocol = TLSv1.2"
            )
        } else {
            "ssl = no".to_string()
        };
        format!(
            "# Written by perflab for one run; removed when the run ends.
base_dir = {d}/run
state_dir = {d}/state
log_path = {d}/log
info_log_path = /dev/null
instance_name = perflab-mail-{port}
protocols = imap pop3 lmtp
listen = 127.0.0.1
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_username_format = %Ln
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
mail_location = maildir:{d}/mail/%n
mail_uid = {user}
mail_gid = {group}
first_valid_uid = 0
mail_fsync = optimized
default_process_limit = 1000
default_client_limit = 4000
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%n {d}/users
}}
userdb {{
  driver = static
  args = uid={user} gid={group} home={d}/mail/%n
}}
service imap-login {{
  inet_listener imap {{
    port = {imap}
  }}
  inet_listener imaps {{
    port = {imaps}
  }}
}}
service pop3-login {{
  inet_listener pop3 {{
    port = {pop3}
  }}
  inet_listener pop3s {{
    port = {pop3s}
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    port = {lmtp}
  }}
  unix_listener lmtp {{
    mode = 0666
  }}
}}
service stats {{
  unix_listener stats-reader {{
    mode = 0666
  }}
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
protocol lmtp {{
  postmaster_address = postmaster@perflab.test
}}
",
            port = self.imap_port,
            user = a.user,
            group = a.group,
            imap = self.imap_port,
            pop3 = self.pop3_port,
            lmtp = self.lmtp_port,
            imaps = self.imaps_port,
            pop3s = self.pop3s_port,
        )
    }

    fn spawn(&mut self) -> Result<(), String> {
        let conf = self.dir.join("dovecot.conf");
        std::fs::write(&conf, self.config())
            .map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
        // A file, not a pipe: nobody drains a pipe during the run, and reading one after the
        // master exits would wait for every child that inherited it.
        let stderr_path = self.dir.join("stderr");
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| format!("cannot write {}: {e}", stderr_path.display()))?;
        let mut cmd = Command::new(&self.binary);
        cmd.arg("-F")
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.binary.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
                let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
                self.child = None;
                return Err(format!(
                    "dovecot exited at start ({status}): {}",
                    err.lines()
                        .chain(log.lines())
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no message")
                ));
            }
            if self.answers() {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(format!(
                    "dovecot on port {} did not answer within {}s",
                    self.imap_port,
                    READY_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the IMAP and LMTP listeners greet.
    fn answers(&self) -> bool {
        let greets = |port: u16, start: &str| {
            TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
                Duration::from_millis(500),
            )
            .ok()
            .and_then(|s| {
                s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
                let mut line = String::new();
                BufReader::new(s).read_line(&mut line).ok()?;
                Some(line.starts_with(start))
            })
            .unwrap_or(false)
        };
        // The TLS listeners are bound with the others; a connection shows they are.
        let listens = |port: u16| {
            TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
                Duration::from_millis(500),
            )
            .is_ok()
        };
        greets(self.imap_port, "* OK")
            && greets(self.lmtp_port, "220")
            && (!self.tls || (listens(self.imaps_port) && listens(self.pop3s_port)))
    }

    pub fn imap(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.imap_port))
    }
    pub fn pop3(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.pop3_port))
    }
    pub fn lmtp(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.lmtp_port))
    }
    /// IMAPS and POP3S (port 0 without TLS).
    pub fn imaps(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.imaps_port))
    }
    pub fn pop3s(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.pop3s_port))
    }

    /// Dovecot's log (the run's directory), for what it said about TLS.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// Where the mail is (for the device under it).
    pub fn mail_dir(&self) -> PathBuf {
        self.dir.join("mail")
    }

    /// The master's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the server is running.
    pub fn alive(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Starts the server again if it died (a crash, a test killing it): same ports, same
    /// mail. Returns whether it had to.
    pub fn revive(&mut self) -> Result<bool, String> {
        if self.alive() {
            return Ok(false);
        }
        self.stop();
        // The dead server's processes may hold the ports for a moment.
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match self.spawn() {
                Ok(()) => {
                    self.revived += 1;
                    return Ok(true);
                }
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Dovecot's settings that decide durability, for the disclosure.
    pub fn settings(&self) -> BTreeMap<String, String> {
        DURABILITY
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The CA that signed the server's certificate, with TLS: what perflab's clients trust.
    pub fn ca_certificate(&self) -> Option<PathBuf> {
        self.tls.then(|| self.dir.join("ca.pem"))
    }

    /// The certificate and protocols, with TLS (else empty), for the disclosure.
    pub fn tls_settings(&self) -> BTreeMap<String, String> {
        if !self.tls {
            return BTreeMap::new();
        }
        TLS_SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Stops every Dovecot process (the group), politely first.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let group = |signal: &str| {
            let _ = Command::new("sh")
                .arg("-c")
                .arg(format!("kill -s {signal} -- -{pid} 2>/dev/null"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        group("TERM");
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                // Its children leave with it; give them a moment to close their files.
                std::thread::sleep(Duration::from_millis(50));
                group("KILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        group("KILL");
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Fills the mailboxes of `users` (by index) with `per_user` messages each, written as
    /// Dovecot's maildir stores delivered mail (bare LF, flagged seen), on a few threads;
    /// `progress` gets the share done about every second.
    pub fn populate(
        &self,
        users: &[String],
        per_user: u32,
        sizes: &Sizes,
        seed: u64,
        progress: &dyn Fn(f64),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<u64, String> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4);
        let done = AtomicU64::new(0);
        let bytes = AtomicU64::new(0);
        let next = AtomicU64::new(0);
        let result: Result<(), String> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| -> Result<(), String> {
                        let mut buf = Vec::new();
                        let mut lf = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                            if i >= users.len() || stop() {
                                return Ok(());
                            }
                            let b =
                                self.fill(&users[i], i, per_user, sizes, seed, &mut buf, &mut lf);
                            done.fetch_add(1, Ordering::Relaxed);
                            match b {
                                Ok(b) => bytes.fetch_add(b, Ordering::Relaxed),
                                Err(e) => {
                                    next.store(users.len() as u64, Ordering::Relaxed);
                                    return Err(e);
                                }
                            };
                        }
                    })
                })
                .collect();
            let mut last = Instant::now();
            while !workers.iter().all(|w| w.is_finished()) {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= Duration::from_secs(2) {
                    last = Instant::now();
                    progress(done.load(Ordering::Relaxed) as f64 / users.len().max(1) as f64);
                }
            }
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a mailbox writer failed".into()))
            })
        });
        result?;
        if stop() {
            return Err("interrupted while filling the mailboxes".into());
        }
        Ok(bytes.into_inner())
    }

    /// One user's maildir.
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &self,
        user: &str,
        index: usize,
        per_user: u32,
        sizes: &Sizes,
        seed: u64,
        buf: &mut Vec<u8>,
        lf: &mut Vec<u8>,
    ) -> Result<u64, String> {
        let home = self.mail_dir().join(user);
        let fail = |e: std::io::Error| format!("cannot fill {}: {e}", home.display());
        let (uid, gid) = (Some(self.account.uid), Some(self.account.gid));
        std::fs::create_dir_all(&home).map_err(fail)?;
        std::os::unix::fs::chown(&home, uid, gid).map_err(fail)?;
        for sub in ["cur", "new", "tmp"] {
            let d = home.join(sub);
            std::fs::create_dir_all(&d).map_err(fail)?;
            std::os::unix::fs::chown(&d, uid, gid).map_err(fail)?;
        }
        let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let to = [format!("{user}@perflab.test")];
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut total = 0;
        for m in 0..per_user {
            let token = format!("init.{index}.{m}");
            let e = Envelope {
                from: "colleague@perflab.test",
                to: &to,
                token: &token,
                date: now.saturating_sub(u64::from(per_user - m) * 3600),
            };
            message::build(buf, &e, sizes.pick(&mut rng), &mut rng);
            lf.clear();
            lf.extend(buf.iter().copied().filter(|&b| b != b'\r'));
            let name = home.join("cur").join(format!(
                "{}.P{index}Q{m}.perflab,S={}:2,S",
                now - u64::from(per_user - m),
                lf.len()
            ));
            std::fs::write(&name, &*lf).map_err(fail)?;
            std::os::unix::fs::chown(&name, uid, gid).map_err(fail)?;
            total += lf.len() as u64;
        }
        Ok(total)
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
