//! Notes on how a value was read, where perflab's reading may surprise (`--size 64MB` is
//! 64 MiB, as fio reads it): gathered while options are read, deep in the parsers, and
//! printed once by the command before anything runs.

use std::sync::Mutex;

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps a note for the command to print (once, however often the option is read).
pub fn note(text: String) {
    let mut notes = NOTES.lock().unwrap_or_else(|p| p.into_inner());
    if !notes.contains(&text) {
        notes.push(text);
    }
}

/// The notes kept so far, leaving none.
pub fn take() -> Vec<String> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|p| p.into_inner()))
}
