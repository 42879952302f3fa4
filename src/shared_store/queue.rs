//! Runs waiting to be sent to the shared store: one empty file per run in the results
//! folder, `<results>/shared-queue/<id>`, made before the first try and removed once the
//! store holds the run. A file per run rather than one list: two runs ending at once on one
//! machine (two shells, a suite and a manual run) each add theirs without a lock, and a
//! crash between the send and the removal only sends the run again, which is a no-op.
//!
//! A run's end ([`after_run`]) and `perflab shared sync` ([`send`]) send every queued run,
//! oldest id first.

use super::Access;
use super::conn::Address;
use super::read::SharedStore;
use super::upload::upload;
use crate::archive::{Archive, ArchiveError, Imported};
use std::path::{Path, PathBuf};

/// The queue's folder in a results folder.
pub const FOLDER: &str = "shared-queue";

fn folder(archive: &Archive) -> PathBuf {
    archive.root().join(FOLDER)
}

/// Puts run `id` in the queue.
pub fn enqueue(archive: &Archive, id: &str) -> Result<(), ArchiveError> {
    let dir = folder(archive);
    let io = |p: &Path| {
        let path = p.to_path_buf();
        move |source| ArchiveError::Io { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let file = dir.join(id);
    std::fs::write(&file, b"").map_err(io(&file))
}

/// The runs queued, oldest id first (ids start with their time).
pub fn queued(archive: &Archive) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder(archive)) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    ids.sort();
    ids
}

/// What a send came to.
#[derive(Debug, Default)]
pub struct Sent {
    /// Each run sent: its id here and what the store did with it.
    pub done: Vec<(String, Imported)>,
    /// Runs queued whose record is no longer in the folder (dropped from the queue).
    pub gone: Vec<String>,
    /// Why sending stopped, if it did; the rest stay queued.
    pub failed: Option<ArchiveError>,
    /// Runs still queued.
    pub left: usize,
}

/// Sends every queued run to the store at `address`, each removed from the queue once sent.
pub fn send(archive: &Archive, address: &Address) -> Sent {
    let mut sent = Sent::default();
    let ids = queued(archive);
    if ids.is_empty() {
        return sent;
    }
    let store = match SharedStore::open(address, Access::Write) {
        Ok(s) => s,
        Err(e) => {
            sent.failed = Some(e);
            sent.left = ids.len();
            return sent;
        }
    };
    for (i, id) in ids.iter().enumerate() {
        let record = match archive.load(id) {
            Ok(r) if r.id == *id => r,
            _ => {
                let _ = std::fs::remove_file(folder(archive).join(id));
                sent.gone.push(id.clone());
                continue;
            }
        };
        match store.with_db(|db| upload(db, &record)) {
            Ok(done) => {
                let _ = std::fs::remove_file(folder(archive).join(id));
                sent.done.push((id.clone(), done));
            }
            Err(e) => {
                sent.failed = Some(e);
                sent.left = ids.len() - i;
                return sent;
            }
        }
    }
    sent
}

/// A run has ended and is saved: queue it and send the queue. Says in one line on stderr
/// what could not be sent (the run is saved either way; a later run or `perflab shared
/// sync` sends it), and nothing when all went.
pub fn after_run(archive: &Archive, address: &Address, id: &str, quiet: bool) {
    if let Err(e) = enqueue(archive, id) {
        eprintln!("perflab: warning: run {id} not queued for the shared store: {e}");
        return;
    }
    let sent = send(archive, address);
    if let Some(e) = sent.failed {
        eprintln!(
            "perflab: warning: {} run{} queued for the shared store ({e}); 'perflab shared sync' sends them",
            sent.left,
            if sent.left == 1 { "" } else { "s" }
        );
    } else if !quiet {
        for (queued, done) in &sent.done {
            if let Imported::New { id: stored, .. } = done
                && stored != queued
            {
                eprintln!(
                    "perflab: run {queued} is {stored} in the shared store (another host's run has its id)"
                );
            }
        }
    }
}
