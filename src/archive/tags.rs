//! Tags: names for runs (`perflab tag RUN baseline-v1`), kept in `<results>/tags.json`.
//!
//! A tag names one run; tagging another run with the same name moves it, so `baseline`
//! can follow the latest accepted run. Tag names start with a letter, which run ids (dates)
//! never do, so a tag can never shadow an id or a prefix of one.

use super::{ArchiveError, io, store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tags file: name → run id, sorted by name.
pub type Tags = BTreeMap<String, String>;

fn path(root: &Path) -> PathBuf {
    root.join("tags.json")
}

/// The tags of the archive at `root` (none when the file does not exist yet).
pub fn load(root: &Path) -> Result<Tags, ArchiveError> {
    let p = path(root);
    match std::fs::read_to_string(&p) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| ArchiveError::Corrupt {
            path: p.clone(),
            reason: format!("{e}; remove the file to drop all tags"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tags::new()),
        Err(e) => Err(io(&p)(e)),
    }
}

/// Writes the tags (atomically, as records are written).
pub fn save(root: &Path, tags: &Tags) -> Result<(), ArchiveError> {
    let p = path(root);
    let mut text = serde_json::to_vec_pretty(tags).map_err(|e| ArchiveError::Corrupt {
        path: p.clone(),
        reason: e.to_string(),
    })?;
    text.push(b'\n');
    store::write_atomic(&p, &text).map_err(io(&p))
}

/// Why `name` cannot be a tag, if it cannot.
pub fn invalid_name(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Some("a tag starts with a letter (run ids start with digits)");
    }
    if name == "last" {
        return Some("'last' already means the newest run");
    }
    if name.len() > 64 {
        return Some("a tag has at most 64 characters");
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        return Some("a tag holds only letters, digits, '-', '_' and '.'");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_be_confused_with_ids_are_refused() {
        assert!(invalid_name("baseline-v1").is_none());
        assert!(invalid_name("ssd_2026.11").is_none());
        for bad in ["", "2026", "last", "a b", "a/b", "-x", &"a".repeat(65)] {
            assert!(invalid_name(bad).is_some(), "{bad:?}");
        }
    }
}
