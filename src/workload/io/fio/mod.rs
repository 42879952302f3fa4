//! A reader for fio job files: pure parsing and validation, nothing is run.
//!
//! It reads job files the way fio 3.x does (`init.c` `__parse_jobs_ini`, `parse.c`,
//! `options.c`, HOWTO "Job file format") and yields one typed [`FioJob`] per job section,
//! with fio's defaults applied. Whatever perflab cannot honour is refused with one line,
//! `FILE:LINE: OPTION: why, and what to do instead`, never a panic or a hang.
//!
//! The map:
//! - this file: the entry points ([`read_files`], [`read_str`]), [`Origin`],
//!   [`JobFileError`] and [`JobFile`];
//! - [`syntax`]: lines, comments, `[sections]`, `include`, `${VAR}` and `$ncpus`-style
//!   keywords: text in, sections of `key=value` entries out;
//! - [`units`]: numbers as fio reads them: sizes (`kb_base`, the inverted `ki`/`k`), times
//!   (per-option bare unit), `0x` hex, `(expr)` arithmetic, the `R,W,T` splitter;
//! - [`dist`]: the structured values: `random_distribution`, `bssplit`, `steadystate`;
//! - [`buffer_pattern`]: fio's byte patterns (`buffer_pattern=0xdeadface"abcd"-12`);
//! - [`options`]: the one table, option name(s) to handler, plus the names fio knows that
//!   perflab refuses;
//! - [`job`]: [`FioJob`], its enums and defaults, [`FioJob::files_of`];
//! - [`groups`]: fio's groupid, `stonewall`, `new_group`, `wait_for`.
//!
//! Sections are applied as fio applies them: a `[global*]` section changes the defaults
//! that every *later* job starts from; a job section is a copy of those defaults with its
//! own options on top. numjobs clones are not expanded: `numjobs` is kept.
//!
//! Where this is stricter than fio (each is a case where fio silently does something the
//! writer did not mean, so one line saying so is kinder):
//! - an unknown unit (`10min`, `4kx`) is refused; fio reads it as 1 (10 µs, 4 KiB);
//! - a fraction (`1.5g`) is refused; fio keeps the whole part (1 byte);
//! - a line over 8190 bytes is refused; fio would read it as two lines;
//! - an include cycle is refused by name; fio recurses until something gives;
//! - `R,W,T` parts after the first that do not parse are refused; fio ignores them;
//! - more than 256 zones or 64 bssplit sizes are refused; fio drops the rest;
//! - `include` must be followed by a blank; fio takes any line that starts with it.
//!
//! And where it differs on purpose: a relative `include` is read from the including
//! file's folder (fio first tries the current directory); `verify=none` is taken as
//! `verify=0`; `$ncpus` counts the CPUs this process may use (fio: configured CPUs).

pub mod buffer_pattern;
pub mod dist;
pub mod groups;
pub mod job;
pub mod options;
pub mod syntax;
pub mod units;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod where_tests;

pub use job::*;

use std::fmt;
use std::path::{Path, PathBuf};

/// Where something was written: the file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One line, naming the file, line, option and the fix. Display is that one line.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFileError {
    pub at: Option<Origin>,
    pub option: Option<String>,
    pub message: String,
}

impl JobFileError {
    pub(crate) fn new(
        at: Option<Origin>,
        option: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        JobFileError {
            at,
            option: option.map(str::to_string),
            message: message.into(),
        }
    }
}

impl fmt::Display for JobFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(at) = &self.at {
            write!(f, "{at}: ")?;
        }
        if let Some(o) = &self.option {
            write!(f, "{o}: ")?;
        }
        // One line, whatever the message held (a value may carry control characters).
        let one: String = self
            .message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        f.write_str(&one)
    }
}

impl std::error::Error for JobFileError {}

/// The jobs of one or more job files, in order.
#[derive(Debug, Clone)]
pub struct JobFile {
    pub jobs: Vec<FioJob>,
    /// The `[global]` sections' own options as written (key, value), for fio's JSON
    /// "global options". A bare flag has an empty value. Every global section's options,
    /// in order: fio's "global options" is the option list of its one default job, which
    /// every `[global]` section (of every file) adds to. fio prints canonical names there
    /// ([`options::canonical_name`]).
    pub global_options: Vec<(String, String)>,
}

/// Reads job files as `fio A.fio B.fio` does: each later file starts with an implicit
/// stonewall (its first job waits for all before it). Globals carry over from file to
/// file, as fio's defaults do. `env` looks up `${VAR}` (unset is empty, as fio).
/// Returns the first refusal.
pub fn read_files(
    paths: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, JobFileError> {
    let mut sections = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let text = syntax::read_text(p, None)?;
        sections.extend(syntax::sections(&text, p, env, i > 0)?);
    }
    let first = paths.first().cloned().unwrap_or_default();
    build(sections, &first)
}

/// The same from text (for tests and for fio-dialect command lines turned into a section).
/// `include` lines are read relative to `file`'s folder.
pub fn read_str(
    text: &str,
    file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, JobFileError> {
    let sections = syntax::sections(text, file, env, false)?;
    build(sections, file)
}

/// Applies the sections in order: globals to the defaults, jobs on a copy of them.
fn build(sections: Vec<syntax::Section>, file: &Path) -> Result<JobFile, JobFileError> {
    let mut defaults = FioJob::default();
    let mut jobs = Vec::new();
    let mut global_options = Vec::new();
    for s in sections {
        let own: Vec<(String, String)> = s
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
            .collect();
        if s.global {
            options::apply_section(&mut defaults, &s.entries, true)?;
            global_options.extend(own);
        } else {
            let mut job = defaults.clone();
            job.name = s.name.clone();
            job.at = s.at.clone();
            // fio: the implicit stonewall of a later job file goes on its first job.
            if s.stonewall {
                job.stonewall = true;
            }
            options::apply_section(&mut job, &s.entries, false)?;
            job.options = own;
            job.check().map_err(|(opt, msg)| {
                JobFileError::new(Some(job.at.clone()), opt.as_deref(), msg)
            })?;
            jobs.push(job);
        }
    }
    if jobs.is_empty() {
        return Err(JobFileError::new(
            Some(Origin {
                file: file.to_path_buf(),
                line: 1,
            }),
            None,
            "no jobs: add a [name] section (a [global] section alone runs nothing)",
        ));
    }
    groups::assign(&mut jobs)?;
    Ok(JobFile {
        jobs,
        global_options,
    })
}
