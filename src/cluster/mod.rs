//! Scale-out: one run driven by several perflab processes (ranks) that an MPI launcher
//! (`mpirun`, Slurm's `srun`, the Kubernetes MPI Operator) started, on one host or many.
//!
//! ```text
//! main ─► cluster::init        MPI when a launcher started us (feature `mpi`), else one rank
//! run::run                     gathers every rank's machine (the record's `cluster`); a
//!                              shared target is prepared on rank 0 only
//!   run_trial ─► Gate          meeting points: sessions open ─► warmup ─► measure;
//!                              each agrees on the outcome so far, then releases every rank
//!                              at once (the start skew is recorded)
//!             ─► Gate::finish  every rank's trial (HDR histograms included) to rank 0,
//!                              merged exactly (merge), one record and archive entry there
//! main ─► cluster::finish      MPI_Finalize, or MPI_Abort when this rank failed
//! ```
//!
//! - [`comm`]: the few collective operations perflab needs, for one rank ([`comm::Local`])
//!   or over MPI (`mpi_comm`, behind the `mpi` feature).
//! - [`gate`]: a trial's meeting points and its end: agreement, release, gather.
//! - [`merge`]: ranks' trials into one, histograms added count for count; the per-rank
//!   figures (`by: rank`) and stragglers.
//! - how workers, `--ops` and the rate are split over the active ranks: [`crate::vocab::share`]
//!   (pure arithmetic, below the workloads, which read it too).
//!
//! MPI lives on the main thread (the coordinator's): its handles are not `Send`, and load
//! threads never touch it. Waits poll a non-blocking collective with a short sleep, so a rank
//! waiting for a slower one costs no CPU (a blocking MPI wait spins a core).

pub mod comm;
pub mod gate;
pub mod merge;
#[cfg(feature = "mpi")]
mod mpi_comm;

use crate::record::RankInfo;
use comm::{Comm, Local};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// The communicator, on the main thread; absent means one rank alone.
    static COMM: RefCell<Option<Box<dyn Comm>>> = const { RefCell::new(None) };
}
static RANK: AtomicUsize = AtomicUsize::new(0);
static SIZE: AtomicUsize = AtomicUsize::new(1);

/// Why the ranks could not start as one run; the message names the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClusterError(pub String);

/// Joins the launcher's job when there is one: MPI with the `mpi` feature, a one-line
/// refusal without it. With no launcher, perflab is one rank alone and MPI is never touched.
/// Waits for other ranks give up when `stop` (Ctrl-C's token) is set.
pub fn init(stop: crate::stop::Stop) -> Result<(), ClusterError> {
    let Some(expected) = crate::env::launcher::expected_ranks() else {
        return Ok(());
    };
    #[cfg(feature = "mpi")]
    {
        let comm = mpi_comm::Mpi::init(expected, stop)?;
        RANK.store(comm.rank(), Ordering::SeqCst);
        SIZE.store(comm.size(), Ordering::SeqCst);
        if comm.rank() != 0 {
            // One rank speaks: the others' terminal output would repeat rank 0's.
            let _ = crate::engine::sys::silence_stdout();
        }
        COMM.with(|c| *c.borrow_mut() = Some(Box::new(comm)));
        Ok(())
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = stop;
        Err(ClusterError(crate::env::launcher::not_built_with_mpi(
            expected,
        )))
    }
}

/// This process's rank, from 0.
pub fn rank() -> usize {
    RANK.load(Ordering::Relaxed)
}

/// How many ranks the run has (1 without a launcher).
pub fn size() -> usize {
    SIZE.load(Ordering::Relaxed)
}

/// Whether this rank speaks for the run: prints, records, archives.
pub fn is_root() -> bool {
    rank() == 0
}

/// Runs `f` with the communicator (one rank alone when there is none).
pub(crate) fn with<R>(f: impl FnOnce(&dyn Comm) -> R) -> R {
    COMM.with(|c| match c.borrow().as_deref() {
        Some(comm) => f(comm),
        None => f(&Local),
    })
}

/// How this rank's part of the job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Done, or failed in a way every rank agreed on: every rank ends alike.
    Together,
    /// Ctrl-C (launchers pass it to every rank as SIGINT or SIGTERM): no rank waits for the
    /// others, and rank 0 must get to save the record.
    Interrupted,
    /// Failed here alone (before any exchange): the others may be waiting for this rank.
    Alone,
}

/// How long a rank other than 0 lingers after Ctrl-C, so that rank 0 saves the record
/// before the launcher ends the job (a rank that exits early makes it kill the others).
const LINGER: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends this rank's part of an MPI job: MPI_Finalize when the ranks end together (a
/// collective: every rank calls it); MPI_Abort, which ends every rank, after a failure here
/// alone; after Ctrl-C, neither (the others may be anywhere): the process just exits.
pub fn finish(code: u8, ending: Ending) {
    let comm = COMM.with(|c| c.borrow_mut().take());
    let Some(comm) = comm else {
        return;
    };
    match ending {
        Ending::Together => {
            let rank = comm.rank();
            drop(comm);
            // After a failure every rank shares, let rank 0 exit first: the launcher reports
            // (and takes its exit code from) the first rank to exit non-zero, and ends the
            // others with SIGTERM, which must not make rank 0 say it was interrupted.
            if code != 0 && rank != 0 {
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
        }
        Ending::Alone => comm.abort(i32::from(code)),
        Ending::Interrupted => {
            if comm.rank() != 0 {
                std::thread::sleep(LINGER);
            }
            // Not finalized: that would wait for ranks that may never call it.
            std::mem::forget(comm);
        }
    }
}

/// Every rank's host and machine, gathered on rank 0 (`None` elsewhere, and with one rank).
pub fn members(env: &crate::env::Environment) -> Option<Vec<RankInfo>> {
    if size() == 1 {
        return None;
    }
    let mine = RankInfo {
        rank: rank() as u64,
        host: host_name(env),
        pid: u64::from(std::process::id()),
        env: Some(env.clone()),
    };
    let bytes = serde_json::to_vec(&mine).unwrap_or_default();
    // Ctrl-C while gathering: the run stops at its next look, with no ranks to record.
    let all = with(|c| c.gather(&bytes)).ok()??;
    let mut members: Vec<RankInfo> = all
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap_or_default())
        .collect();
    let root_host = members.first().map(|m| m.host.clone()).unwrap_or_default();
    for m in &mut members {
        if m.rank == 0 || m.host == root_host {
            m.env = None;
        }
    }
    Some(members)
}

/// The MPI library's own name and version (empty with one rank).
pub fn library() -> String {
    with(|c| c.library())
}

/// This host's name, read once.
pub fn host() -> String {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    })
    .clone()
}

fn host_name(env: &crate::env::Environment) -> String {
    env.hostname.clone().unwrap_or_else(|| "unknown".into())
}
