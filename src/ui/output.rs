//! What perflab writes for the user besides its archive: text on stdout, and new files named
//! with `-o`. Both refuse what would lose the user's data: a closed pipe is reported as such,
//! and a file that exists is never replaced.

use crate::error::AppError;
use std::path::Path;

/// Writes text to stdout, reporting a closed pipe as such.
pub fn print(text: &str) -> Result<(), AppError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| AppError::Output(format!("stdout: {e}")))
}

/// Refuses an output file whose folder does not exist: perflab creates no folders the user
/// did not ask for (a typo in `-o` would scatter them).
pub fn check_output_folder(path: &Path) -> Result<(), AppError> {
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if folder.is_dir() {
        Ok(())
    } else {
        Err(AppError::Usage(format!(
            "{}: the folder {} does not exist; create it first or choose another file",
            path.display(),
            folder.display()
        )))
    }
}

/// Writes a new file; perflab never replaces a file it did not create.
pub fn write_new_file(path: &Path, bytes: &[u8]) -> Result<(), AppError> {
    check_output_folder(path)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                AppError::Usage(format!(
                    "{} exists; choose a new file name (perflab does not overwrite files)",
                    path.display()
                ))
            } else {
                AppError::Output(format!("{}: {e}", path.display()))
            }
        })?;
    std::io::Write::write_all(&mut file, bytes)
        .map_err(|e| AppError::Output(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_once_and_never_replaced() {
        let dir = std::env::temp_dir().join(format!("perflab-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        let _ = std::fs::remove_file(&path);
        write_new_file(&path, b"one").unwrap();
        let again = write_new_file(&path, b"two").unwrap_err();
        assert_eq!(again.exit_code(), 2, "{again}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let missing = write_new_file(&dir.join("no/such/b.txt"), b"x").unwrap_err();
        assert!(missing.to_string().contains("does not exist"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
