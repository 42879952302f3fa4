//! The job file's syntax: lines, comments, `[sections]`, `include`, `${VAR}` and the
//! `$ncpus`, `$mb_memory`, `$pagesize` keywords. Text in, sections of entries out; what an
//! option means is [`super::options`]'s.
//!
//! fio's rules (init.c `__parse_jobs_ini`, parse.c `strip_blank_end`, options.c
//! `fio_option_dup_subs`, `fio_keyword_replace`):
//! - a line is cut at its first `;`, then at its first `#` (so values cannot hold either),
//!   and blanks are trimmed at both ends; what is left empty is skipped;
//! - the first non-empty line must be a `[section]`; a section whose name starts with
//!   `global` is a global one;
//! - `include FILE` pulls FILE's lines into the current section; FILE may include others
//!   but may hold no `[section]`;
//! - `${VAR}` is replaced by the environment's value, or nothing; then the keywords are
//!   replaced and, when they were, the value is worked out if it holds `+-*/` (fio pipes it
//!   through `bc`; here the same integer arithmetic is done in-process).

use super::units;
use super::{JobFileError, Origin};
use std::path::{Path, PathBuf};

/// fio reads lines with `fgets` into an 8192-byte buffer (parse.h `OPT_LEN_MAX`): a longer
/// line would be split into two lines silently, so one is refused instead.
pub const MAX_LINE: usize = 8190;

/// How deep includes may nest. fio has no limit (a cycle recurses until it fails); cycles
/// are refused by name here and this bounds a long chain of distinct files.
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Job files bigger than this are refused before reading (a job file is a few KiB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// One option line as written, after substitution.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    /// `None` for a bare flag (`time_based`).
    pub value: Option<String>,
    pub at: Origin,
}

/// One `[section]` and its option lines (includes already pulled in).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub at: Origin,
    pub global: bool,
    /// The implicit stonewall of a later job file, on its first job section.
    pub stonewall: bool,
    pub entries: Vec<Entry>,
}

fn err(at: &Origin, option: Option<&str>, msg: impl Into<String>) -> JobFileError {
    JobFileError::new(Some(at.clone()), option, msg)
}

/// Reads a job file's text; `from` is the `include` line that asked for it, if any.
pub fn read_text(path: &Path, from: Option<&Origin>) -> Result<String, JobFileError> {
    let at = from.cloned();
    let what = if from.is_some() {
        "include"
    } else {
        "job file"
    };
    let fail = |m: String| JobFileError::new(at.clone(), None, m);
    let meta = std::fs::metadata(path)
        .map_err(|e| fail(format!("cannot read {what} {}: {e}", path.display())))?;
    // Not a device or a FIFO either: `include /dev/zero` must not read forever.
    if !meta.is_file() {
        return Err(fail(format!(
            "{what} {} is not a regular file",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!(
            "{what} {} is {} bytes; job files over {} MiB are refused",
            path.display(),
            meta.len(),
            MAX_FILE_BYTES >> 20
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| fail(format!("cannot read {what} {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|_| {
        fail(format!(
            "{what} {} is not UTF-8 text; save it as UTF-8",
            path.display()
        ))
    })
}

/// Splits one file's text into sections. `stonewall_first`: this is a later file of
/// `fio A B`, whose first job gets an implicit stonewall.
pub fn sections(
    text: &str,
    file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    stonewall_first: bool,
) -> Result<Vec<Section>, JobFileError> {
    let keywords = Keywords::of_host();
    let mut out: Vec<Section> = Vec::new();
    let mut pending_stonewall = stonewall_first;
    let mut stack = vec![canonical(file)];
    for (at, line) in lines(text, file) {
        let line = line?;
        if let Some(rest) = line.strip_prefix('[') {
            let name = section_name(rest, &at)?;
            let global = name.starts_with("global");
            let stonewall = !global && std::mem::take(&mut pending_stonewall);
            out.push(Section {
                name,
                at,
                global,
                stonewall,
                entries: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(err(
                &at,
                None,
                format!("`{line}` is outside any [section]: put a [global] or [job] line above it"),
            ));
        };
        take_line(&line, &at, &mut section.entries, env, &keywords, &mut stack)?;
    }
    Ok(out)
}

/// An option line (or an include) of the current section.
fn take_line(
    line: &str,
    at: &Origin,
    entries: &mut Vec<Entry>,
    env: &dyn Fn(&str) -> Option<String>,
    keywords: &Keywords,
    stack: &mut Vec<PathBuf>,
) -> Result<(), JobFileError> {
    if let Some(target) = include_target(line) {
        return include(target, at, entries, env, keywords, stack);
    }
    entries.push(entry(line, at, env, keywords)?);
    Ok(())
}

/// `include FILE`: FILE's option lines join the current section.
fn include(
    target: &str,
    at: &Origin,
    entries: &mut Vec<Entry>,
    env: &dyn Fn(&str) -> Option<String>,
    keywords: &Keywords,
    stack: &mut Vec<PathBuf>,
) -> Result<(), JobFileError> {
    if target.is_empty() {
        return Err(err(at, Some("include"), "include needs a file name"));
    }
    // Relative to the including file's folder. (fio first tries the name from the current
    // directory and only then beside the including file; here the job file's own folder
    // decides, so a run does not depend on where it was started.)
    let path = {
        let t = Path::new(target);
        if t.is_absolute() {
            t.to_path_buf()
        } else {
            at.file
                .parent()
                .map(|d| d.join(t))
                .unwrap_or_else(|| t.to_path_buf())
        }
    };
    let key = canonical(&path);
    if stack.contains(&key) {
        return Err(err(
            at,
            Some("include"),
            format!(
                "{} includes itself (through {}): remove the cycle",
                path.display(),
                stack
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ),
        ));
    }
    if stack.len() > MAX_INCLUDE_DEPTH {
        return Err(err(
            at,
            Some("include"),
            format!("includes nest deeper than {MAX_INCLUDE_DEPTH} files"),
        ));
    }
    let text = read_text(&path, Some(at))?;
    stack.push(key);
    for (inner_at, line) in lines(&text, &path) {
        let line = line?;
        if line.starts_with('[') {
            return Err(err(
                &inner_at,
                None,
                format!(
                    "included files may hold no [section] (included from {at}): move `{line}` to the including file"
                ),
            ));
        }
        take_line(&line, &inner_at, entries, env, keywords, stack)?;
    }
    stack.pop();
    Ok(())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `include FILE` (fio matches any line starting with `include`; here the word must stand
/// alone so that a stray `includes=` is reported as the unknown option it is).
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    if rest.is_empty() {
        return Some("");
    }
    if rest.starts_with(char::is_whitespace) {
        return Some(rest.trim());
    }
    None
}

/// `[name]` (the `[` already taken).
fn section_name(rest: &str, at: &Origin) -> Result<String, JobFileError> {
    let Some(name) = rest.strip_suffix(']') else {
        return Err(err(
            at,
            None,
            format!("section header `[{rest}` does not end with `]`"),
        ));
    };
    if name.is_empty() {
        return Err(err(at, None, "empty section name `[]`: name the job"));
    }
    // fio reads at most 255 characters of a name.
    if name.len() > 255 {
        return Err(err(
            at,
            None,
            "section name longer than 255 characters (fio's limit)",
        ));
    }
    if name.contains('[') || name.contains(']') {
        return Err(err(
            at,
            None,
            format!("section name `{name}` holds a bracket"),
        ));
    }
    Ok(name.to_string())
}

/// The meaningful lines of a text: cut at `;`/`#`, trimmed, empty ones skipped. Each comes
/// with its origin; too long a line or a NUL byte is an error in its place.
fn lines<'a>(
    text: &'a str,
    file: &'a Path,
) -> impl Iterator<Item = (Origin, Result<String, JobFileError>)> + 'a {
    text.split('\n').enumerate().filter_map(move |(i, raw)| {
        let at = Origin {
            file: file.to_path_buf(),
            line: i + 1,
        };
        if raw.len() > MAX_LINE {
            let e = err(
                &at,
                None,
                format!(
                    "line of {} bytes: fio reads at most {MAX_LINE} per line (it would split this one); shorten it",
                    raw.len()
                ),
            );
            return Some((at, Err(e)));
        }
        if raw.contains('\0') {
            let e = err(&at, None, "NUL byte in a job file: this is not a text file");
            return Some((at, Err(e)));
        }
        let cut = strip_comment(raw);
        if cut.is_empty() {
            return None;
        }
        Some((at, Ok(cut.to_string())))
    })
}

/// fio's `strip_blank_end` after `strip_blank_front`: cut at the first `;`, then at the
/// first `#`, trim blanks and control characters.
pub fn strip_comment(raw: &str) -> &str {
    let s = raw.split(';').next().unwrap_or("");
    let s = s.split('#').next().unwrap_or("");
    s.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// `key=value`, `key = value` or a bare `key`, after `${VAR}` and keyword substitution.
fn entry(
    line: &str,
    at: &Origin,
    env: &dyn Fn(&str) -> Option<String>,
    keywords: &Keywords,
) -> Result<Entry, JobFileError> {
    let line = substitute_env(line, env);
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
        None => (line.trim().to_string(), None),
    };
    if key.starts_with("--") {
        return Err(err(
            at,
            Some(&key),
            format!(
                "`--` belongs to the command line; in a job file write `{}`",
                key.trim_start_matches('-')
            ),
        ));
    }
    if key.is_empty() {
        return Err(err(at, None, format!("`{line}` has no option name")));
    }
    let value = match value {
        Some(v) => Some(keywords.replace(&v).map_err(|m| err(at, Some(&key), m))?),
        None => None,
    };
    Ok(Entry {
        key,
        value,
        at: at.clone(),
    })
}

/// `${VAR}` → the variable's value, or nothing when unset (fio). `${}` and an unclosed
/// `${` stay as written, as in fio.
pub fn substitute_env(s: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) if j > 0 => {
                out.push_str(&env(&after[..j]).unwrap_or_default());
                rest = &after[j + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The values of fio's keywords on this host.
#[derive(Debug, Clone)]
pub struct Keywords {
    pub pagesize: u64,
    pub mb_memory: u64,
    pub ncpus: u64,
}

impl Keywords {
    /// Read from the host: `/proc/self/auxv` (AT_PAGESZ), `/proc/meminfo` (MemTotal), the
    /// CPUs this process may use (fio counts the configured CPUs; these differ only under
    /// an affinity mask or a cgroup limit).
    pub fn of_host() -> Keywords {
        let pagesize = std::fs::read("/proc/self/auxv")
            .ok()
            .and_then(|b| {
                b.chunks_exact(16).find_map(|c| {
                    let k = u64::from_ne_bytes(c[..8].try_into().ok()?);
                    let v = u64::from_ne_bytes(c[8..].try_into().ok()?);
                    (k == 6).then_some(v) // AT_PAGESZ
                })
            })
            .unwrap_or(4096);
        let mb_memory = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines().find_map(|l| {
                    let kb = l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?;
                    kb.trim().parse::<u64>().ok()
                })
            })
            .map(|kb| kb / 1024)
            .unwrap_or(0);
        let ncpus = std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1);
        Keywords {
            pagesize,
            mb_memory,
            ncpus,
        }
    }

    /// Replaces the keywords; when any was replaced and the value holds `+-*/`, works the
    /// value out as integer arithmetic (what fio's `bc` call does).
    pub fn replace(&self, v: &str) -> Result<String, String> {
        let mut s = v.to_string();
        let mut any = false;
        for (word, val) in [
            ("$pagesize", self.pagesize),
            ("$mb_memory", self.mb_memory),
            ("$ncpus", self.ncpus),
        ] {
            if s.contains(word) {
                s = s.replace(word, &val.to_string());
                any = true;
            }
        }
        if any && s.contains(['+', '-', '*', '/']) && !s.contains('\'') {
            let n = units::eval_integer(&s).map_err(|m| format!("cannot work out `{s}`: {m}"))?;
            s = n.to_string();
        }
        Ok(s)
    }
}
