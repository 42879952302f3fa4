//! What a command fails with, and the exit code each failure gives: 0 done, 1 the run
//! failed, 2 bad usage or refused, 3 a comparison found a regression, 130 interrupted.
//!
//! It sits below the workload kinds, since their commands fail the same ways as the generic
//! ones, and above what the errors wrap (the archive, the spec, the SQL target).

use crate::archive::ArchiveError;
use crate::vocab::SpecError;

/// The exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Bad usage outside one option's value; the message names the fix.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// Writing output failed.
    #[error("{0}")]
    Output(String),
    /// The run finished but found what it was checking for broken (e.g. `--verify`).
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C stopped a command's work outside a run (a prepare, a cleanup): what it was doing.
    #[error("interrupted (Ctrl-C): {0}")]
    Interrupted(String),
    /// `compare --fail-on regression` found a candidate slower beyond the noise.
    #[error("{0}")]
    Regression(String),
}

impl From<crate::sql::target::TargetError> for AppError {
    fn from(e: crate::sql::target::TargetError) -> Self {
        AppError::Usage(e.0)
    }
}

/// The exit code of `compare --fail-on regression` when a figure got worse.
pub const EXIT_REGRESSION: u8 = 3;

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Spec(_)
            | AppError::Usage(_)
            | AppError::Run(RunError::Power(_) | RunError::Refused(_)) => 2,
            AppError::Run(RunError::Interrupted { .. }) | AppError::Interrupted(_) => {
                EXIT_INTERRUPTED
            }
            AppError::Run(RunError::Archive(e)) | AppError::Archive(e) => match e {
                ArchiveError::NotFound(_)
                | ArchiveError::NotAFolder(_)
                | ArchiveError::NoArchive(_)
                | ArchiveError::BadTag { .. }
                | ArchiveError::Ambiguous { .. }
                | ArchiveError::SharedRefused(_)
                | ArchiveError::ReadOnly(_)
                | ArchiveError::Empty => 2,
                _ => 1,
            },
            AppError::Run(_) | AppError::Output(_) | AppError::Failed(_) => 1,
            AppError::Regression(_) => EXIT_REGRESSION,
        }
    }
}

/// Why a run stopped early. The record is saved in every case.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("interrupted; the {steps} finished step(s) are saved as run {id} (status incomplete)")]
    Interrupted { id: String, steps: usize },
    #[error(
        "{} failed: {message} (run {id} saved with status failed)",
        failed_where(.phase, *.step)
    )]
    Failed {
        id: String,
        /// The step's index (0-based); the message shows its number. 0 for a failure
        /// before any step (`phase` "prepare").
        step: usize,
        /// Where the run was, as the record's `cut_short.phase` says: "prepare" (the
        /// workload's own, before any step), or a step's ("open", "measure" ...).
        phase: String,
        message: String,
    },
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// `--power-cmd` does not work; nothing ran.
    #[error("{0}")]
    Power(String),
    /// The run cannot start as asked (a workload that does not run over MPI ranks); nothing
    /// ran.
    #[error("{0}")]
    Refused(String),
}

/// The phase of a failure before any step: the workload's prepare (a load, a server's
/// start), as the record's `cut_short.phase` names it.
pub const PREPARE_PHASE: &str = "prepare";

/// What failed, as people read it: the prepare, or step N (counted from 1).
fn failed_where(phase: &str, step: usize) -> String {
    match phase {
        PREPARE_PHASE => PREPARE_PHASE.to_string(),
        _ => format!("step {}", crate::record::step_number(step)),
    }
}

/// The environment variable of the deliberate panics, for tests only (the crash report's
/// tests set it; the null workload panics where it says).
pub const TEST_PANIC_VAR: &str = "PERFLAB_TEST_PANIC";

/// Whether the tests asked for a deliberate panic `place` (`main`, `worker`, `open`).
pub fn test_panic_requested(place: &str) -> bool {
    std::env::var_os(TEST_PANIC_VAR).is_some_and(|v| v == place)
}
