//! [`NullEngine`]: no I/O at all, every request complete at once (fio's `null`).
//!
//! ```text
//!  push ─► pending: Vec<Completion>     the result decided now: len (reads, writes,
//!                                       trims), 0 (syncs), -errno (a bad request)
//!  submit ─► every pending completion handed out, in push order
//! ```
//!
//! fio's null engine pretends: a read or write "moves" its length without touching a
//! byte or the kernel, so a job over it measures the harness itself (fio's loop, here
//! perflab's session, pump and recorder). Nothing here costs a system call or an
//! allocation per request: `pending` is sized for the whole queue once. The files are
//! never opened and need not exist: requests name them by index only, checked against
//! [`EngineConfig::paths`] as the other engines check theirs.
//!
//! The slot buffers exist as for any engine (the caller fills them before a write and
//! reads them after a read), but nothing ever writes into them: a read leaves the buffer
//! as it was, as fio's null does.

use std::io;

use super::buffer::AlignedBuf;
use super::{Admit, Completion, Engine, EngineConfig, EngineError, EngineKind, Op, SlotTable};
use super::{Request, moved};

/// The engine that moves nothing.
#[derive(Debug)]
pub struct NullEngine {
    bufs: AlignedBuf,
    slots: SlotTable,
    /// Completions decided at push, handed out at the next submit.
    pending: Vec<Completion>,
    /// How many files requests may name.
    files: usize,
    depth: u32,
}

impl NullEngine {
    /// Builds the engine: allocates `depth` aligned buffers; nothing is opened.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let bufs = AlignedBuf::new(config.depth as usize, config.buf_len, config.align)?;
        Ok(NullEngine {
            bufs,
            slots: SlotTable::trimming(config.depth),
            pending: Vec::with_capacity(config.depth as usize),
            files: config.paths.len().max(config.files.len()),
            depth: config.depth,
        })
    }
}

impl Engine for NullEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
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

    #[inline]
    fn push(&mut self, req: Request) {
        let result = match self.slots.admit(&req, self.files, self.bufs.slot_len()) {
            Admit::Issue => match req.op {
                Op::Read | Op::Write | Op::Trim => moved(req.len),
                Op::Fsync | Op::Fdatasync => 0,
            },
            Admit::Fail(errno) => -errno,
            Admit::Reject => return,
        };
        self.pending.push(Completion {
            slot: req.slot,
            result,
        });
    }

    #[inline]
    fn submit(&mut self, _min_complete: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(breach) = self.slots.take_breach() {
            return Err(breach);
        }
        for c in self.pending.drain(..) {
            self.slots.complete(c.slot);
            out.push(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::TempPath;
    use super::*;
    use std::path::PathBuf;

    fn open(depth: u32, paths: Vec<PathBuf>) -> Box<dyn Engine> {
        super::super::open(
            EngineKind::Null,
            EngineConfig {
                depth,
                buf_len: 4096,
                paths,
                ..Default::default()
            },
        )
        .expect("null engine")
    }

    #[test]
    fn every_request_completes_at_once_with_its_length_and_no_file_is_made() {
        let missing = TempPath::new("null");
        let mut e = open(4, vec![missing.0.clone()]);
        assert_eq!(e.kind(), EngineKind::Null);
        let ops = [Op::Read, Op::Write, Op::Trim, Op::Fsync];
        for (slot, op) in ops.into_iter().enumerate() {
            e.push(Request {
                slot: slot as u32,
                file: 0,
                op,
                offset: 1 << 40,
                len: 4096,
            });
        }
        assert_eq!(e.in_flight(), 4);
        let mut out = Vec::new();
        e.submit(0, &mut out).expect("submit");
        assert_eq!(e.in_flight(), 0);
        let results: Vec<(u32, i32)> = out.iter().map(|c| (c.slot, c.result)).collect();
        assert_eq!(results, [(0, 4096), (1, 4096), (2, 4096), (3, 0)]);
        assert!(!missing.0.exists(), "the null engine touches no file");
    }

    #[test]
    fn bad_requests_fail_as_on_any_engine() {
        let mut e = open(2, vec![PathBuf::from("/nonexistent/null")]);
        for (slot, file, len) in [(0, 3, 512), (1, 0, 8192)] {
            e.push(Request {
                slot,
                file,
                op: Op::Read,
                offset: 0,
                len,
            });
        }
        let mut out = Vec::new();
        e.submit(2, &mut out).expect("submit");
        let results: Vec<i32> = out.iter().map(|c| c.result).collect();
        assert_eq!(results, [-libc::EBADF, -libc::EINVAL]);
    }

    #[test]
    fn slot_contract_is_enforced() {
        super::super::testutil::contract(|c| {
            let paths = vec![PathBuf::from("unused"); c.files.len()];
            Box::new(
                NullEngine::new(EngineConfig {
                    paths,
                    files: Vec::new(),
                    ..c
                })
                .expect("null"),
            )
        });
    }
}
