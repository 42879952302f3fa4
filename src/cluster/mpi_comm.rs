//! [`Comm`] over MPI (the `mpi` crate, feature `mpi`).

use super::ClusterError;
use super::comm::{Abandoned, Comm};
use crate::run::interrupt::is_interrupted;
use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::request::StaticScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::time::Duration;

/// How long a waiting rank sleeps between looks at a pending collective: short, so the
/// ranks' arrivals are known within it; the release that follows aligns them to microseconds.
const POLL: Duration = Duration::from_micros(500);

pub struct Mpi {
    /// Dropping it calls MPI_Finalize.
    _universe: Universe,
    world: SimpleCommunicator,
}

impl Mpi {
    /// Initializes MPI (only the main thread calls it) and checks that the job is the one
    /// the launcher announced: a binary built against another MPI than the launcher's starts
    /// as N separate one-rank jobs, silently, unless this catches it.
    pub fn init(expected: usize) -> Result<Mpi, ClusterError> {
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
            if is_interrupted() {
                std::mem::forget(request);
                return Err(Abandoned::Interrupted);
            }
            std::thread::sleep(POLL);
        }
    }

    fn release(&self) {
        self.world.barrier();
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

    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = bytes.len() as i32;
        if self.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return None;
        }
        let mut lens = vec![0i32; self.size()];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<i32> = lens
            .iter()
            .scan(0i32, |at, &l| {
                let d = *at;
                *at += l;
                Some(d)
            })
            .collect();
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut parts = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut parts);
        }
        Some(
            lens.iter()
                .zip(&displs)
                .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
                .collect(),
        )
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
