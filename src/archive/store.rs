//! Reading and writing record files.

use super::ArchiveError;
use super::index::Stamp;
use crate::record::{RunRecord, SCHEMA_VERSION};
use std::io::{Read, Write};
use std::path::Path;

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a torn one:
/// a temporary file beside it, fsync, rename, fsync of the folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // One writer at a time in this process: a stop action (an early save on SIGTERM) and the
    // run's own save may write the same record, through the same temporary file.
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent()
        && let Ok(d) = std::fs::File::open(dir)
    {
        // Not every filesystem can fsync a directory; the rename is done either way.
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads a record, refusing ones from a newer schema and migrating older ones.
pub fn read_record(path: &Path) -> Result<RunRecord, ArchiveError> {
    let text = std::fs::read_to_string(path).map_err(super::io(path))?;
    parse_record(path, &text)
}

/// [`read_record`], with the stamp of the very file read: both come from one open file, so
/// a save renaming a newer version over `path` meanwhile cannot pair one's stamp with the
/// other's content.
pub fn read_stamped(path: &Path) -> Result<(RunRecord, Stamp), ArchiveError> {
    let mut f = std::fs::File::open(path).map_err(super::io(path))?;
    let stamp = Stamp::of(&f.metadata().map_err(super::io(path))?);
    let mut text = String::new();
    f.read_to_string(&mut text).map_err(super::io(path))?;
    Ok((parse_record(path, &text)?, stamp))
}

/// Parses a record's text (`path` only names it in errors).
pub fn parse_record(path: &Path, text: &str) -> Result<RunRecord, ArchiveError> {
    let corrupt = |reason: String| ArchiveError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
    let version = value
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| corrupt("no schema_version".into()))?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(ArchiveError::NewerSchema {
            path: path.to_path_buf(),
            version,
        });
    }
    // Version 1 is the first; older versions would be migrated here, field by field.
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}
