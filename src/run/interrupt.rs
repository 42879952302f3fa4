//! Ctrl-C (and SIGTERM, which schedulers and MPI launchers send): the first stops the run
//! after saving the finished steps; a second exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit code after an interrupt (128 + SIGINT), as shells expect.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Installs the handler. Safe to call more than once; later calls do nothing.
pub fn install() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = ctrlc::set_handler(|| {
        // Under MPI only rank 0 speaks: the launcher passes a Ctrl-C to every rank.
        let speak = crate::cluster::is_root();
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
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
    });
}

pub fn is_interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Marks the run as interrupted, as Ctrl-C would (used by tests and by fatal paths).
pub fn request_stop() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}
