//! Small safe wrappers over libc for what std does not offer.
//!
//! ```text
//!  process_cpu_time, thread_cpu_time   clock_gettime(CLOCK_*_CPUTIME_ID)
//!  space                               statvfs
//!  allocate                            fallocate(mode 0)
//!  drop_cache                          fdatasync + posix_fadvise(DONTNEED)
//!  advise_dontneed                     posix_fadvise(DONTNEED) alone (fio's invalidate)
//!  open_options                        OpenOptions + O_DIRECT (no unsafe needed)
//!  open_options_synced                 the same + O_SYNC or O_DSYNC (fio's sync=)
//!  is_no_space                         ENOSPC | EDQUOT
//!  logical_block_size                  ioctl(BLKSSZGET) on block devices
//!  silence_stdout                      dup2(/dev/null, 1) on MPI ranks other than 0
//! ```

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

/// Reads a CPU-time clock; zero if the clock cannot be read (it always can on Linux).
fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call; the clock ids
    // used are constants the kernel knows.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

/// CPU time used by this process, all threads together, at nanosecond resolution.
pub fn process_cpu_time() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time used by the calling thread.
pub fn thread_cpu_time() -> Duration {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Size and free space of a filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged user may still allocate (`f_bavail * f_frsize`).
    pub free_bytes: u64,
    /// Size of the filesystem (`f_blocks * f_frsize`).
    pub total_bytes: u64,
}

/// Size and free space of the filesystem holding `path`.
pub fn space(path: &Path) -> io::Result<Space> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path contains a NUL byte: {}", path.display()),
        )
    })?;
    // SAFETY: statvfs is plain old data; all-zero bytes are a valid value of it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is a NUL-terminated string and `st` a writable statvfs, both alive
    // for the whole call.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // The field types are platform aliases (u64 on 64-bit Linux, narrower elsewhere).
    let frsize = st.f_frsize as u64;
    Ok(Space {
        free_bytes: (st.f_bavail as u64).saturating_mul(frsize),
        total_bytes: (st.f_blocks as u64).saturating_mul(frsize),
    })
}

/// Reserves `len` bytes for `file` (posix_fallocate / fallocate mode 0). Ok(false) when the filesystem cannot (EOPNOTSUPP, EINVAL); ENOSPC comes back as an error.
///
/// Mode 0 allocates real blocks from offset 0 and grows the file to `len` if shorter, so
/// later writes cannot fail for space. Unlike glibc's posix_fallocate this never falls back
/// to writing zeros, which would take as long as the test itself.
pub fn allocate(file: &File, len: u64) -> io::Result<bool> {
    if len == 0 {
        return Ok(true);
    }
    let len = libc::off_t::try_from(len).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{len} bytes is more than a file can hold"),
        )
    })?;
    loop {
        // SAFETY: fallocate only reads its integer arguments; the fd is open for the
        // duration of the call because `file` is borrowed.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        if rc == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP | libc::EINVAL) => return Ok(false),
            _ => return Err(err),
        }
    }
}

/// Drops `file`'s pages from the page cache (POSIX_FADV_DONTNEED, after sync_data) so a buffered read test starts cold.
///
/// Dirty pages cannot be dropped, hence the flush first. The kernel may keep pages that
/// are mapped or in use elsewhere; this is advice, not a guarantee.
pub fn drop_cache(file: &File) -> io::Result<()> {
    file.sync_data()?;
    // SAFETY: posix_fadvise only reads its integer arguments; the fd is open for the
    // duration of the call because `file` is borrowed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    // posix_fadvise returns the error number instead of setting errno.
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Advises the kernel to drop `file`'s clean pages (POSIX_FADV_DONTNEED), without a flush
/// first: what fio's `invalidate` does as a job opens its files. Dirty pages are only queued
/// for writeback, not waited for, and stay until written.
pub fn advise_dontneed(file: &File) -> io::Result<()> {
    // SAFETY: posix_fadvise only reads its integer arguments; the fd is open for the
    // duration of the call because `file` is borrowed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// OpenOptions with O_DIRECT set when `direct` (safe: OpenOptionsExt::custom_flags), O_CLOEXEC is std's default.
///
/// The caller adds read/write/create as usual. Filesystems without O_DIRECT (tmpfs on older
/// kernels, some FUSE) fail the open with EINVAL.
pub fn open_options(direct: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options
}

/// How each write through a file completes: into the page cache, or stable before `write`
/// returns (open(2)'s O_DSYNC for the data, O_SYNC for data and metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteSync {
    #[default]
    None,
    /// O_DSYNC.
    Data,
    /// O_SYNC.
    Full,
}

/// [`open_options`] with `sync`'s flag too (fio's `sync=1` / `sync=dsync`).
pub fn open_options_synced(direct: bool, sync: WriteSync) -> OpenOptions {
    let mut flags = if direct { libc::O_DIRECT } else { 0 };
    flags |= match sync {
        WriteSync::None => 0,
        WriteSync::Data => libc::O_DSYNC,
        WriteSync::Full => libc::O_SYNC,
    };
    let mut options = OpenOptions::new();
    options.custom_flags(flags);
    options
}

/// Whether `e` means the disk or the quota is full (ENOSPC or EDQUOT).
pub fn is_no_space(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// Logical block size for O_DIRECT alignment of a block device file: BLKSSZGET ioctl; None for regular files.
pub fn logical_block_size(file: &File) -> Option<u32> {
    let is_block = file
        .metadata()
        .is_ok_and(|m| m.file_type().is_block_device());
    if !is_block {
        return None;
    }
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points to `size`, alive
    // and writable for the call; the fd refers to a block device (checked above) and is
    // open because `file` is borrowed.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET, &mut size) };
    if rc != 0 {
        return None;
    }
    u32::try_from(size).ok().filter(|&s| s > 0)
}

/// Points this process's stdout at /dev/null (an MPI rank other than 0: rank 0 speaks for
/// the run).
pub fn silence_stdout() -> io::Result<()> {
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    // SAFETY: dup2 on two descriptors this process owns; fd 1 is replaced atomically and
    // `null` is closed when dropped, leaving fd 1 open on /dev/null.
    let rc = unsafe { libc::dup2(null.as_raw_fd(), 1) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::TempPath;
    use super::*;
    use std::time::Instant;

    /// Spins until this thread has had `d` of CPU time (or 10 s of wall time have passed, on
    /// a machine too busy to give it that); returns something so the work is not optimised
    /// away. Counting the thread's own time, not the wall's, keeps the test true however
    /// often a loaded machine deschedules it.
    fn spin_cpu(d: Duration) -> u64 {
        let (start, cpu) = (Instant::now(), thread_cpu_time());
        let mut x = 1u64;
        while thread_cpu_time() - cpu < d && start.elapsed() < Duration::from_secs(10) {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        x
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let (p0, t0) = (process_cpu_time(), thread_cpu_time());
        assert!(p0 > Duration::ZERO);
        std::hint::black_box(spin_cpu(Duration::from_millis(30)));
        let (p1, t1) = (process_cpu_time(), thread_cpu_time());
        assert!(
            t1 - t0 >= Duration::from_millis(30),
            "thread: {t0:?} -> {t1:?}"
        );
        assert!(p1 - p0 >= t1 - t0, "process time includes this thread's");
    }

    #[test]
    fn space_of_root_is_sane() {
        let s = space(Path::new("/")).expect("statvfs /");
        assert!(s.total_bytes > 0);
        assert!(s.free_bytes > 0, "{s:?}");
        assert!(s.total_bytes > s.free_bytes, "{s:?}");
        assert!(space(Path::new("/no/such/dir")).is_err());
        assert!(space(Path::new("a\0b")).is_err());
    }

    #[test]
    fn allocate_grows_a_file() {
        let tmp = TempPath::new("alloc");
        let f = tmp.create_rw();
        assert!(allocate(&f, 0).expect("zero"));
        match allocate(&f, 1 << 20) {
            Ok(true) => assert_eq!(f.metadata().expect("stat").len(), 1 << 20),
            Ok(false) => eprintln!("allocate: the temp filesystem cannot fallocate; skipped"),
            Err(e) => panic!("allocate: {e}"),
        }
        assert!(allocate(&f, u64::MAX).is_err());
    }

    #[test]
    fn drop_cache_works_on_a_file() {
        let tmp = TempPath::new("fadv");
        let f = tmp.create_rw();
        std::os::unix::fs::FileExt::write_all_at(&f, &[3u8; 8192], 0).expect("write");
        drop_cache(&f).expect("drop cache");
    }

    #[test]
    fn open_options_direct_sets_the_flag() {
        let tmp = TempPath::new("odirect");
        drop(tmp.create_rw());
        let f = open_options(false).read(true).open(&tmp.0).expect("open");
        // SAFETY: F_GETFL takes no pointer argument; the fd is open.
        let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_DIRECT, 0);
        match open_options(true).read(true).open(&tmp.0) {
            Ok(f) => {
                // SAFETY: as above.
                let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
                assert_ne!(flags & libc::O_DIRECT, 0);
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("O_DIRECT unsupported on the temp filesystem; skipped");
            }
            Err(e) => panic!("open O_DIRECT: {e}"),
        }
    }

    #[test]
    fn no_space_errors_are_recognised() {
        assert!(is_no_space(&io::Error::from_raw_os_error(libc::ENOSPC)));
        assert!(is_no_space(&io::Error::from_raw_os_error(libc::EDQUOT)));
        assert!(!is_no_space(&io::Error::from_raw_os_error(libc::EIO)));
        assert!(!is_no_space(&io::Error::other("x")));
    }

    #[test]
    fn block_size_is_none_for_regular_files() {
        let tmp = TempPath::new("bsz");
        assert_eq!(logical_block_size(&tmp.create_rw()), None);
        // A block device, when the test can open one.
        for dev in ["/dev/vda", "/dev/sda", "/dev/nvme0n1"] {
            if let Ok(f) = File::open(dev) {
                let size = logical_block_size(&f);
                eprintln!("{dev}: logical block size {size:?}");
                assert!(size.is_some_and(|s| s >= 512 && s.is_power_of_two()));
                break;
            }
        }
    }
}
