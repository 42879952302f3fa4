//! The throwaway memcached of `perflab kv` without `--target`: started from PATH on a free
//! port of 127.0.0.1, stopped (and its memory returned) when the run ends, restarted with
//! another `-t` when `--server-threads` sweeps.
//!
//! The server gets `-U 0` (no UDP), `-c 4096` (connections beyond any sweep here), `-m` from
//! `--server-memory`, and as root `-u nobody` (memcached refuses to run as root). It is ready
//! when `version` answers.

use super::endpoint::{Control, Endpoint};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long memcached may take to answer after it was started.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Attempts: another process may take the free port between the probe and memcached's bind.
const PORT_TRIES: usize = 5;

/// A memcached process perflab started, and how.
#[derive(Debug)]
pub struct Throwaway {
    child: Child,
    pub port: u16,
    pub threads: u32,
    pub memory_mb: u64,
    pub version: String,
    binary: PathBuf,
}

/// The memcached binary: PATH, then /usr/bin and /usr/local/bin.
fn find_memcached() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join("memcached"))
        .find(|p| p.is_file())
}

fn free_port() -> std::io::Result<u16> {
    crate::env::ports::free_port()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

impl Throwaway {
    /// Starts memcached with `threads` worker threads and `memory_mb` of item memory.
    pub fn start(threads: u32, memory_mb: u64) -> Result<Throwaway, String> {
        let binary = find_memcached().ok_or_else(|| {
            "memcached is not installed: install it (apt-get install memcached) or give --target memcached://HOST:PORT".to_string()
        })?;
        let mut last = String::new();
        for _ in 0..PORT_TRIES {
            let port = free_port().map_err(|e| format!("no free port on 127.0.0.1: {e}"))?;
            match Self::spawn(&binary, port, threads, memory_mb) {
                Ok(t) => return Ok(t),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn spawn(
        binary: &PathBuf,
        port: u16,
        threads: u32,
        memory_mb: u64,
    ) -> Result<Throwaway, String> {
        let mut cmd = Command::new(binary);
        cmd.args(["-l", "127.0.0.1", "-U", "0", "-c", "4096"])
            .arg("-p")
            .arg(port.to_string())
            .arg("-t")
            .arg(threads.to_string())
            .arg("-m")
            .arg(memory_mb.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if is_root() {
            cmd.args(["-u", "nobody"]);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut t = Throwaway {
            child,
            port,
            threads,
            memory_mb,
            version: String::new(),
            binary: binary.clone(),
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        let endpoint = t.endpoint(false);
        loop {
            if let Ok(Some(status)) = t.child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = t.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return Err(format!(
                    "memcached exited at start ({status}): {}",
                    err.lines().next().unwrap_or("no message")
                ));
            }
            if let Ok(mut c) = Control::open(&endpoint, Duration::from_millis(500))
                && let Ok(v) = c.version()
            {
                t.version = v;
                return Ok(t);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "memcached on port {port} did not answer within {}s",
                    READY_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server as a target.
    pub fn endpoint(&self, meta: bool) -> Endpoint {
        Endpoint::local_memcached(self.port, meta)
    }

    /// Stops this memcached and starts another with `threads` worker threads (its items
    /// are gone: the caller loads them again).
    pub fn restart(&mut self, threads: u32) -> Result<(), String> {
        self.stop();
        let mut last = String::new();
        for _ in 0..PORT_TRIES {
            // The same port where it is still free, so the disclosure and URLs stay put.
            match Self::spawn(&self.binary, self.port, threads, self.memory_mb) {
                Ok(t) => {
                    *self = t;
                    return Ok(());
                }
                Err(e) => last = e,
            }
            if let Ok(p) = free_port() {
                self.port = p;
            }
        }
        Err(last)
    }

    /// The process id, for its CPU time in /proc.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.stop();
    }
}
