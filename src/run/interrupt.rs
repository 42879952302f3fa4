//! Ctrl-C (and SIGTERM, which schedulers and MPI launchers send): the first stops the run
//! after saving the finished steps; a second exits at once.
//!
//! Ctrl-C sets the process's stop token ([`token`]); each run's token is a child of it, so
//! the same press reaches every wait of the run, and the actions registered on it (a server
//! statement cancelled, a job's processes killed) run at once.

use crate::stop::Stop;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The process's token: Ctrl-C and SIGTERM set it.
static CTRL_C: LazyLock<Stop> = LazyLock::new(Stop::new);

/// The token Ctrl-C sets. Runs, and commands that wait outside a run (`oltp prepare`), take
/// a child of it.
pub fn token() -> Stop {
    CTRL_C.clone()
}

pub use crate::error::EXIT_INTERRUPTED;

/// Installs the handler. Safe to call more than once; later calls do nothing.
pub fn install() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = ctrlc::set_handler(|| {
        // Under MPI only rank 0 speaks: the launcher passes a Ctrl-C to every rank.
        let speak = crate::cluster::is_root();
        if CTRL_C.is_set() {
            if speak {
                eprintln!(
                    "\nperflab: interrupted twice, exiting without saving the step in progress"
                );
            }
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        if speak {
            eprintln!(
                "\nperflab: interrupted; saving finished steps (Ctrl-C again to quit at once)"
            );
        }
        CTRL_C.set();
    });
}

pub fn is_interrupted() -> bool {
    CTRL_C.is_set()
}

/// Marks the run as interrupted, as Ctrl-C would (used by tests and by fatal paths).
pub fn request_stop() {
    CTRL_C.set();
}
