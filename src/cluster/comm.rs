//! The collective operations perflab needs between ranks, and one rank alone.
//!
//! Few and coarse on purpose: a run exchanges a handful of messages per step (an agreement,
//! a release, one gather of every rank's trial), never anything per op.

/// Why a wait for the other ranks ended without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// Ctrl-C (or SIGTERM, which launchers send on Ctrl-C) arrived while waiting.
    Interrupted,
}

/// The operations, each called by every rank at the same point of the run.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// The element-wise maximum of every rank's `values`, waited for without spinning (a
    /// non-blocking all-reduce polled with short sleeps) and given up on Ctrl-C.
    fn agree_max(&self, values: [u64; 2]) -> Result<[u64; 2], Abandoned>;
    /// Releases every rank at once: a barrier, called right after an agreement, when every
    /// rank is already there (so it spins for at most a sleep's length); given up on Ctrl-C.
    fn release(&self) -> Result<(), Abandoned>;
    /// `root`'s bytes, on every rank.
    fn broadcast(&self, root: usize, bytes: Vec<u8>) -> Vec<u8>;
    /// Every rank's bytes, in rank order, on rank 0 (`None` elsewhere); rank 0 gives up on
    /// Ctrl-C.
    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Abandoned>;
    /// Ends every rank's process with `code`.
    fn abort(&self, code: i32);
    /// The MPI library, as it names itself.
    fn library(&self) -> String;
}

/// One rank alone: every operation is immediate.
pub struct Local;

impl Comm for Local {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn agree_max(&self, values: [u64; 2]) -> Result<[u64; 2], Abandoned> {
        Ok(values)
    }
    fn release(&self) -> Result<(), Abandoned> {
        Ok(())
    }
    fn broadcast(&self, _root: usize, bytes: Vec<u8>) -> Vec<u8> {
        bytes
    }
    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Abandoned> {
        Ok(Some(vec![bytes.to_vec()]))
    }
    fn abort(&self, code: i32) {
        std::process::exit(code)
    }
    fn library(&self) -> String {
        String::new()
    }
}
