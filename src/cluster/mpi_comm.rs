//! [`Comm`] over MPI (the `mpi` crate, feature `mpi`).

use super::ClusterError;
use super::comm::{Abandoned, Comm};
use crate::stop::Stop;
use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::request::StaticScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::time::Duration;

/// How long a waiting rank sleeps between looks at a pending collective: short, so the
/// ranks' arrivals are known within it; the release that follows aligns them to microseconds.
const POLL: Duration = Duration::from_micros(500);
/// The tag of the messages [`Comm::gather`] sends to rank 0.
const GATHER_TAG: mpi::Tag = 17;

pub struct Mpi {
    /// Dropping it calls MPI_Finalize.
    _universe: Universe,
    world: SimpleCommunicator,
    /// Ctrl-C's token: a wait for other ranks gives up when it is set.
    stop: Stop,
}

impl Mpi {
    /// Initializes MPI (only the main thread calls it) and checks that the job is the one
    /// the launcher announced: a binary built against another MPI than the launcher's starts
    /// as N separate one-rank jobs, silently, unless this catches it.
    pub fn init(expected: usize, stop: Stop) -> Result<Mpi, ClusterError> {
        let (universe, _) =
            mpi::initialize_with_threading(Threading::Funneled).ok_or_else(|| {
                ClusterError("MPI was already initialized; this is a bug in perflab".into())
            })?;
        let world = universe.world();
        let size = world.size() as usize;
        if size != expected {
            return Err(ClusterError(format!(
                "the launcher started {expected} ranks but MPI sees {size}: perflab was built against another MPI than the launcher's; rebuild it with the launcher's MPI (MPI_PKG_CONFIG=<its pkg-config name> cargo build --release --features mpi) or use that MPI's mpirun"
            )));
        }
        Ok(Mpi {
            _universe: universe,
            world,
            stop,
        })
    }
}

impl Comm for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn agree_max(&self, values: [u64; 2]) -> Result<[u64; 2], Abandoned> {
        // The buffers must outlive the request, which is forgotten (not completed) when the
        // wait is abandoned: a few bytes leaked per abandoned wait, then the process exits.
        let send: &'static [u64; 2] = Box::leak(Box::new(values));
        let recv: &'static mut [u64; 2] = Box::leak(Box::new([0; 2]));
        let mut request =
            self.world
                .immediate_all_reduce_into(StaticScope, send, recv, SystemOperation::max());
        loop {
            match request.test_with_data() {
                Ok((_, out)) => return Ok(*out),
                Err(pending) => request = pending,
            }
            if self.stop.is_set() {
                std::mem::forget(request);
                return Err(Abandoned::Interrupted);
            }
            std::thread::sleep(POLL);
        }
    }

    fn release(&self) -> Result<(), Abandoned> {
        // Every rank has arrived (the agreement said so): spin, but still give up on Ctrl-C,
        // since a rank that dies right now would leave a blocking barrier waiting for ever.
        let mut request = self.world.immediate_barrier();
        loop {
            match request.test() {
                Ok(_) => return Ok(()),
                Err(pending) => request = pending,
            }
            if self.stop.is_set() {
                // A barrier has no buffers: forgetting its request leaves nothing dangling.
                std::mem::forget(request);
                return Err(Abandoned::Interrupted);
            }
            std::hint::spin_loop();
        }
    }

    fn broadcast(&self, root: usize, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(root as i32);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank() == root.rank() as usize {
            bytes
        } else {
            vec![0u8; len as usize]
        };
        if len > 0 {
            root.broadcast_into(&mut buf[..]);
        }
        buf
    }

    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Abandoned> {
        // Point to point rather than a collective: rank 0, which must always get to save the
        // record, then never blocks on a rank that died. It looks for each rank's message
        // without blocking and receives it once it is there. The other ranks may block in
        // their send: if rank 0 is gone, the launcher ends them anyway.
        if self.rank() != 0 {
            self.world
                .process_at_rank(0)
                .send_with_tag(bytes, GATHER_TAG);
            return Ok(None);
        }
        let mut all = vec![bytes.to_vec()];
        for rank in 1..self.size() {
            let from = self.world.process_at_rank(rank as i32);
            while from.immediate_probe_with_tag(GATHER_TAG).is_none() {
                if self.stop.is_set() {
                    return Err(Abandoned::Interrupted);
                }
                std::thread::sleep(POLL);
            }
            all.push(from.receive_vec_with_tag::<u8>(GATHER_TAG).0);
        }
        Ok(Some(all))
    }

    fn abort(&self, code: i32) {
        self.world.abort(code)
    }

    fn library(&self) -> String {
        // Open MPI ends its string with a NUL byte.
        mpi::environment::library_version()
            .unwrap_or_default()
            .trim_end_matches('\0')
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    }
}
