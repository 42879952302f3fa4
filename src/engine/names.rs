//! [`NameEngine`]: a file's name acted on, the file itself never opened (fio's `filestat`
//! and `filedelete`).
//!
//! ```text
//!  new ─► each path as a C string, once (no allocation per request)
//!  push ─► pending: Vec<(Request, errno)>       no syscall
//!  submit ─► for each read, write or trim, in push order:
//!               Stat   → stat(path)      (fio's filestat, its default stat_type)
//!               Unlink → unlink(path)    (fio's filedelete)
//!            syncs complete with 0, doing nothing (as fio's engines do)
//!  ─► Completion { slot, len | -errno }
//! ```
//!
//! fio does these operations when it "opens" a file, once per file in each pass over the
//! job's files, and counts the file's blocks as I/Os that do nothing more. This engine acts
//! on every request; the job file's reader keeps fio's meaning by running such jobs only
//! where each file is one block, so each I/O is one stat or one unlink, timed alone, and
//! counted as an I/O of its length as fio counts it.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;

use super::buffer::AlignedBuf;
use super::{
    Admit, Completion, Engine, EngineConfig, EngineError, EngineKind, Op, Request, SlotTable, moved,
};

/// What a request does to its file's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// stat(2): fio's filestat (stat_type=stat).
    Stat,
    /// unlink(2): fio's filedelete.
    Unlink,
}

/// The engine of fio's filestat and filedelete.
#[derive(Debug)]
pub struct NameEngine {
    action: Action,
    paths: Vec<CString>,
    bufs: AlignedBuf,
    slots: SlotTable,
    /// Pushed requests with the errno they fail with without a syscall (0: issue them).
    pending: Vec<(Request, i32)>,
    depth: u32,
}

impl NameEngine {
    /// Builds the engine over [`EngineConfig::paths`]; a path with a NUL byte cannot name a
    /// file and is refused here.
    pub fn new(action: Action, config: EngineConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let paths = config
            .paths
            .iter()
            .map(|p| {
                CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                    EngineError::Config(format!("{} has a NUL byte in its name", p.display()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let bufs = AlignedBuf::new(config.depth as usize, config.buf_len, config.align)?;
        Ok(NameEngine {
            action,
            paths,
            bufs,
            slots: SlotTable::trimming(config.depth),
            pending: Vec::with_capacity(config.depth as usize),
            depth: config.depth,
        })
    }
}

/// Runs `action` on `path`; 0 or the errno it failed with. EINTR is retried.
fn act(action: Action, path: &CString) -> i32 {
    loop {
        let rc = match action {
            Action::Stat => {
                // SAFETY: stat is plain old data; all-zero bytes are a valid value of it.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: `path` is NUL-terminated and `st` writable, both alive for the call.
                unsafe { libc::stat(path.as_ptr(), &mut st) }
            }
            // SAFETY: `path` is NUL-terminated and alive for the call.
            Action::Unlink => unsafe { libc::unlink(path.as_ptr()) },
        };
        if rc == 0 {
            return 0;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return err.raw_os_error().unwrap_or(libc::EIO);
        }
    }
}

impl Engine for NameEngine {
    fn kind(&self) -> EngineKind {
        match self.action {
            Action::Stat => EngineKind::FileStat,
            Action::Unlink => EngineKind::FileDelete,
        }
    }

    fn depth(&self) -> u32 {
        self.depth
    }

    fn in_flight(&self) -> u32 {
        self.slots.in_flight()
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        if self.slots.is_free(slot) {
            self.bufs.slot(slot as usize)
        } else {
            &mut []
        }
    }

    fn push(&mut self, req: Request) {
        match self
            .slots
            .admit(&req, self.paths.len(), self.bufs.slot_len())
        {
            Admit::Issue => self.pending.push((req, 0)),
            Admit::Fail(errno) => self.pending.push((req, errno)),
            Admit::Reject => {}
        }
    }

    fn submit(&mut self, _min_complete: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(breach) = self.slots.take_breach() {
            return Err(breach);
        }
        out.reserve(self.pending.len());
        for (req, errno) in self.pending.drain(..) {
            let result = match (errno, req.op) {
                (0, Op::Fsync | Op::Fdatasync) => 0,
                (0, Op::Read | Op::Write | Op::Trim) => {
                    match self
                        .paths
                        .get(req.file as usize)
                        .map(|p| act(self.action, p))
                    {
                        Some(0) => moved(req.len),
                        Some(errno) => -errno,
                        None => -libc::EBADF,
                    }
                }
                (errno, _) => -errno,
            };
            self.slots.complete(req.slot);
            out.push(Completion {
                slot: req.slot,
                result,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{self, TempPath};
    use super::*;
    use std::path::PathBuf;

    fn open(kind: EngineKind, paths: Vec<PathBuf>) -> Box<dyn Engine> {
        super::super::open(
            kind,
            EngineConfig {
                depth: 4,
                paths,
                ..Default::default()
            },
        )
        .expect("engine")
    }

    fn run(e: &mut dyn Engine, reqs: &[(u32, Op)]) -> Vec<i32> {
        for (slot, &(file, op)) in reqs.iter().enumerate() {
            e.push(Request {
                slot: slot as u32,
                file,
                op,
                offset: 0,
                len: 4096,
            });
        }
        let mut out = Vec::new();
        e.submit(reqs.len() as u32, &mut out).expect("submit");
        out.iter().map(|c| c.result).collect()
    }

    #[test]
    fn filestat_stats_each_file_by_name_and_counts_its_length() {
        let here = TempPath::new("stat");
        drop(here.create_rw());
        let gone = TempPath::new("stat-gone");
        let mut e = open(EngineKind::FileStat, vec![here.0.clone(), gone.0.clone()]);
        assert_eq!(e.kind(), EngineKind::FileStat);
        let got = run(
            e.as_mut(),
            &[(0, Op::Read), (1, Op::Read), (0, Op::Write), (0, Op::Fsync)],
        );
        assert_eq!(got, [4096, -libc::ENOENT, 4096, 0]);
        assert!(here.0.exists(), "stat leaves the file");
        assert!(!gone.0.exists(), "stat makes no file");
    }

    #[test]
    fn filedelete_unlinks_each_file_once() {
        let a = TempPath::new("delete");
        drop(a.create_rw());
        let mut e = open(EngineKind::FileDelete, vec![a.0.clone()]);
        assert_eq!(e.kind(), EngineKind::FileDelete);
        assert_eq!(run(e.as_mut(), &[(0, Op::Read)]), [4096]);
        assert!(!a.0.exists(), "the file is gone");
        assert_eq!(run(e.as_mut(), &[(0, Op::Read)]), [-libc::ENOENT]);
        assert_eq!(run(e.as_mut(), &[(2, Op::Read)]), [-libc::EBADF]);
    }

    #[test]
    fn a_name_with_a_nul_byte_is_refused_at_open() {
        use std::os::unix::ffi::OsStringExt;
        let bad = PathBuf::from(std::ffi::OsString::from_vec(b"a\0b".to_vec()));
        let r = super::super::open(
            EngineKind::FileStat,
            EngineConfig {
                paths: vec![bad],
                ..Default::default()
            },
        );
        assert!(matches!(r, Err(EngineError::Config(_))));
    }

    #[test]
    fn slot_contract_is_enforced() {
        // "/" always exists, and stat only looks at it.
        testutil::contract(|c| {
            let config = EngineConfig {
                paths: vec![PathBuf::from("/")],
                files: Vec::new(),
                ..c
            };
            Box::new(NameEngine::new(Action::Stat, config).expect("filestat"))
        });
    }
}
