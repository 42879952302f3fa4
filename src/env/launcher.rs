//! What the environment says about an MPI launcher: whether one started this process as
//! one of several ranks, and which.
//!
//! Each launcher sets its own variables: Open MPI's `mpirun` `OMPI_COMM_WORLD_SIZE` and
//! `OMPI_COMM_WORLD_RANK`; MPICH's Hydra (and Intel MPI) `PMI_SIZE` and `PMI_RANK`; Slurm's
//! `srun` `SLURM_STEP_NUM_TASKS` and `SLURM_PROCID` for each task of a job step (not in a
//! batch script itself, where `SLURM_NTASKS` is set but nothing was launched).

use std::env;

/// (size, rank) variables, in the order they are believed.
const LAUNCHERS: [(&str, &str); 3] = [
    ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
    ("PMI_SIZE", "PMI_RANK"),
    ("SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),
];

fn number(name: &str) -> Option<usize> {
    env::var(name).ok()?.trim().parse().ok()
}

/// How many ranks a launcher started, when it started more than one.
pub fn expected_ranks() -> Option<usize> {
    LAUNCHERS
        .iter()
        .find_map(|(size, _)| number(size))
        .filter(|&n| n > 1)
}

/// How many ranks the job has, as the launcher says: 1 without one. Once
/// `crate::cluster::init` has joined the job this is its size, so the specs built from the
/// command line (which sit below `cluster`) read it here.
pub fn ranks() -> usize {
    expected_ranks().unwrap_or(1)
}

/// This process's rank as the launcher numbered it (0 without a launcher).
pub fn launcher_rank() -> usize {
    LAUNCHERS
        .iter()
        .find_map(|(size, rank)| number(size).and(number(rank)))
        .unwrap_or(0)
}

/// What a build without MPI says when a launcher started it as one of `ranks`: running
/// anyway would be `ranks` separate runs, each archived, none merged.
pub fn not_built_with_mpi(ranks: usize) -> String {
    format!(
        "started by an MPI launcher as one of {ranks} ranks, but this perflab was built without MPI; rebuild it with 'cargo build --release --features mpi' (needs openmpi-bin libopenmpi-dev libclang-dev), or run it without mpirun"
    )
}
