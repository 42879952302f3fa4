//! Child processes of the jobs workload: the two system calls std does not offer.
//!
//! ```text
//!  pin_current_thread(cpus)   sched_setaffinity(0, ..) on the calling thread: a child it
//!                             spawns inherits the mask at fork, so the pin holds from the
//!                             child's first instruction (no race with a pin after spawn)
//!  allowed_cpus()             sched_getaffinity(0, ..): the CPUs this thread may run on
//!  wait_child(pid)            wait4(pid, .., 0, &rusage): blocks until the child ends, and
//!                             returns how it ended and the kernel's account of its CPU
//!                             time and peak memory (no polling, no /proc reads)
//! ```
//!
//! A child reaped by [`wait_child`] is gone: its `std::process::Child` must then be dropped
//! without `wait` (std would wait for a pid that may already belong to another process).

use std::io;
use std::time::Duration;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It called exit with this status.
    Code(i32),
    /// A signal ended it (SIGKILL is 9).
    Signal(i32),
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit status {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// What the kernel accounted to one child (and the children it waited for).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rusage {
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in the kernel on its behalf.
    pub sys: Duration,
    /// Its largest resident set, in bytes.
    pub max_rss_bytes: u64,
}

impl Rusage {
    /// User plus system time.
    pub fn cpu(&self) -> Duration {
        self.user + self.sys
    }
}

/// Pins the calling thread to `cpus` (logical CPU numbers, as in /sys/devices/system/cpu).
/// Threads and processes it creates afterwards inherit the mask.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no CPU to pin to",
        ));
    }
    // SAFETY: cpu_set_t is a plain bit array; all-zero bytes are the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu >= capacity {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond the {capacity} a CPU set holds"),
            ));
        }
        // SAFETY: `cpu` is below the set's capacity (checked above), so the bit is inside it.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed,
    // alive for the whole call, which only reads it.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on (its affinity mask, which a cgroup's cpuset or
/// `taskset` may have narrowed), in order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: as in `pin_current_thread`: all-zero bytes are the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the kernel writes at most `size_of` bytes into
    // `set`, which is writable and alive for the whole call.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is below the set's capacity; CPU_ISSET only reads the set.
    Ok((0..capacity)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Sends SIGKILL to every process of the process group `pgid` (a job started as the leader
/// of a group of its own, with whatever it started). A group that is gone already is fine.
pub fn kill_group(pgid: u32) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid)
        .ok()
        .filter(|&p| p > 1)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("bad group {pgid}")))?;
    // SAFETY: kill only sends a signal; a negative pid names the group, and pgid > 1 rules out
    // every process (-1) and perflab's own group by accident (0).
    let rc = unsafe { libc::kill(-pgid, libc::SIGKILL) };
    if rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Waits for the child `pid` to end, blocking the calling thread in the kernel (no
/// polling), and reaps it. Returns how it ended and what the kernel accounted to it.
pub fn wait_child(pid: u32) -> io::Result<(Exit, Rusage)> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("bad pid {pid}")))?;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; all-zero bytes are a valid value of it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are writable and alive for the whole call; options 0
        // waits for this one child to terminate.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Err(err);
    }
    let exit = if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        // wait4 without WUNTRACED/WCONTINUED reports terminations only.
        Exit::Code(-1)
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok((
        exit,
        Rusage {
            user: tv(usage.ru_utime),
            sys: tv(usage.ru_stime),
            // Linux counts ru_maxrss in KiB.
            max_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_reaped_with_its_status_and_usage() {
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("sh runs");
        let (exit, usage) = wait_child(child.id()).expect("wait4");
        // Reaped by wait4: dropped, never waited for again.
        drop(child);
        assert_eq!(exit, Exit::Code(3));
        assert!(usage.max_rss_bytes > 0);
    }

    #[test]
    fn pinning_narrows_the_allowed_cpus_of_the_thread_only() {
        let before = allowed_cpus().expect("affinity");
        let first = before[0];
        std::thread::spawn(move || {
            pin_current_thread(&[first]).expect("pin");
            assert_eq!(allowed_cpus().expect("affinity"), vec![first]);
        })
        .join()
        .expect("thread");
        assert_eq!(allowed_cpus().expect("affinity"), before);
        assert!(pin_current_thread(&[]).is_err());
        assert!(pin_current_thread(&[1 << 20]).is_err());
    }
}
