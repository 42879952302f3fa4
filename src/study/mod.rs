//! Studies: a seed report's experiments as one command, and the paper's figures beside this
//! machine's.
//!
//! ```text
//! study file (TOML) ─► file: validated Study ─► legs: each leg as a perflab command line
//!   ─► plan: every leg checked by its command's parser, time and disk said, before any runs
//!   ─► run: the legs through crate::launch, one after the other, archived and tagged
//! the legs' records ─► evaluate: paper | here | ratio, shape checks, overlays, verdicts
//!   ─► summary (the terminal) and report::study (HTML); store keeps the invocation
//! ```
//!
//! - [`file`] reads a study file and checks it whole (keys, options, expressions, legs), one
//!   line with the file and line number for the first problem.
//! - [`legs`] turns a leg into the command line it runs: defaults, the leg's options, `--quick`
//!   overrides, then the command line's, with the machine's placeholders filled in.
//! - [`expr`] is the little language of figures and shape checks.
//! - [`evaluate`] reads the legs' records into the study's answer; nothing there reads live
//!   state, so a study re-renders the same way from its archived runs.
//! - [`builtin`]: the studies perflab carries (Gray's Thumper report, RAL's IOzone report).
//! - [`plan`]: each leg's command line checked and its spec built before the first runs, the
//!   time and the files it will take, the legs that cannot run here and why; the list of the
//!   built-in studies with their times.
//! - [`run`]: a study invocation from start to answer: its PostgreSQL, the plan, the disk
//!   check, `--resume`, the legs run through [`crate::launch`], the answer.
//! - [`store`]: what the archive keeps beside an invocation's runs, and the answer worked out
//!   again from them (`perflab report --study`), `--resume`, legs imported from elsewhere.
//! - [`summary`]: the answer as text for the terminal; [`answer_json`] the same for `--json`.
//!
//! A study never names a workload here: a leg is a command line, checked by the command's own
//! parser, so every workload (and every later one) can be a leg.

pub mod answer_json;
pub mod builtin;
pub mod evaluate;
pub mod expr;
pub mod file;
pub mod legs;
pub mod plan;
pub mod run;
pub mod store;
pub mod summary;

use crate::error::AppError;
use expr::{Check, Expr};
use file::Origin;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads a built-in study by name, or a study file by path.
pub fn load(what: &str) -> Result<Study, AppError> {
    if let Some(text) = builtin::text(what) {
        return file::parse(
            text,
            &Origin {
                name: what,
                label: &format!("{what} (built in)"),
            },
        )
        .map_err(AppError::Usage);
    }
    let path = Path::new(what);
    if !what.ends_with(".toml") && !what.contains('/') {
        return Err(AppError::Usage(format!(
            "no built-in study {what:?}; they are {} (or give a study file, FILE.toml)",
            builtin::names().join(", ")
        )));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| AppError::Usage(format!("{what}: {e}")))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "study".into());
    file::parse(
        &text,
        &Origin {
            name: &stem,
            label: what,
        },
    )
    .map_err(AppError::Usage)
}

/// What a leg may need from the machine, beyond its command (the legs that cannot run here
/// are listed with the reason).
///
/// - `postgres`: a PostgreSQL server (the user's `--target`, or a throwaway one);
/// - `volumes`: one `--path` per disk; a ramp over files on one disk still runs, with a note
///   that its volumes share a device.
pub const NEEDS: [&str; 2] = ["postgres", "volumes"];

/// A study, read and validated.
#[derive(Debug, Clone, Default)]
pub struct Study {
    pub name: String,
    pub title: String,
    /// The seed file the study follows (`000_e291a0a21341f819.txt`).
    pub seed: Option<String>,
    /// The paper, as cited.
    pub source: Option<String>,
    pub question: String,
    /// The file's text, as read (what `--print` writes and the archive keeps).
    pub text: String,
    /// A digest of `text`: `--resume` trusts only runs of the same file.
    pub digest: String,
    pub defaults: Vec<Opt>,
    pub quick: Vec<Opt>,
    pub legs: Vec<Leg>,
    pub paper: Vec<Paper>,
    pub tables: Vec<Table>,
    pub shapes: Vec<Shape>,
    pub figures: Vec<Overlay>,
    pub compare: Vec<Compare>,
    /// The seed's experiments this study does not run, each with the reason.
    pub omitted: Vec<Omitted>,
}

/// One of the seed's experiments the study leaves out, and why (`[[omitted]]`).
#[derive(Debug, Clone, Default)]
pub struct Omitted {
    pub what: String,
    pub lines: Option<String>,
    pub why: String,
}

/// One long option as the file (or the command line) gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Opt {
    pub key: String,
    pub value: OptValue,
    /// The file's line (0 for the command line).
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// A switch: `direct-io = true`.
    Flag(bool),
    /// One value, or a list: the option given once per value (`path = ["/a", "/b"]`).
    Values(Vec<String>),
}

/// One run of the study.
#[derive(Debug, Clone, Default)]
pub struct Leg {
    pub name: String,
    /// The workload command (`io`, `oltp`); empty: the defaults' `command`.
    pub command: String,
    pub about: String,
    /// The seed's lines this leg follows (`107-185`).
    pub lines: Option<String>,
    /// A leg that runs elsewhere (another OS, an NFS client): what to do there.
    pub external: Option<String>,
    pub needs: Vec<String>,
    /// How the leg is smaller than the paper's experiment, and why (said in `--dry-run`,
    /// the report, and beside every value compared with it).
    pub scaled: Option<String>,
    /// How long the leg takes where its spec cannot say (it runs until its work is done, or
    /// it would be refused here): `time` for the full leg, `quick-time` with `--quick`.
    pub time: [Option<std::time::Duration>; 2],
    pub options: Vec<Opt>,
    pub quick: Vec<Opt>,
    pub line: usize,
}

/// A published figure.
#[derive(Debug, Clone, PartialEq)]
pub enum PaperValue {
    One(f64),
    Range(f64, f64),
}

impl Default for PaperValue {
    fn default() -> Self {
        PaperValue::One(0.0)
    }
}

/// One published value and where the paper prints it.
#[derive(Debug, Clone, Default)]
pub struct Paper {
    pub leg: String,
    /// The step it is compared with.
    pub at: Vec<(String, String)>,
    pub what: String,
    /// The figure here, in the paper's unit (default: none; the value is shown alone).
    pub here: Option<(String, Expr)>,
    pub value: PaperValue,
    /// The value as printed.
    pub printed: String,
    pub unit: String,
    /// The seed's line (1-based) and a verbatim piece of it holding the value.
    pub line: usize,
    pub quote: String,
    /// What the value counts, where the paper says: per disk or per volume, logical or
    /// physical writes, at the peak or at a given load, which table and column. The figure
    /// here must count the same.
    pub basis: Option<String>,
    /// Why the printed value does not follow from the paper's own numbers.
    pub erratum: Option<String>,
    pub note: Option<String>,
    pub file_line: usize,
}

/// A published table, in its own shape.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: String,
    pub leg: String,
    pub line: usize,
    pub note: Option<String>,
    /// A row's label: the table is shown again with every row over this one ("E25k = 1").
    pub base: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub file_line: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Column {
    pub label: String,
    pub unit: String,
    /// This machine's figure in the column's unit; the row's `vars` may appear in it.
    pub here: Option<(String, Expr)>,
}

#[derive(Debug, Clone, Default)]
pub struct Row {
    pub label: String,
    /// `here = false`: another machine's row in a landscape, with no figures of this one.
    pub no_here: bool,
    /// The leg of this row, when not the table's (a row from another OS's leg).
    pub leg: Option<String>,
    pub at: Vec<(String, String)>,
    pub line: usize,
    pub quote: String,
    /// The cells as printed (`-` for none).
    pub values: Vec<String>,
    /// Numbers the columns' `here` may use (the paper's row count, to scale a time).
    pub vars: BTreeMap<String, f64>,
    /// Column label → why the printed cell is wrong.
    pub errata: BTreeMap<String, String>,
    pub file_line: usize,
}

/// A shape check: a claim of the paper that should hold on any machine.
#[derive(Debug, Clone)]
pub struct Shape {
    pub name: String,
    pub text: String,
    pub check: Check,
    /// The leg that gives figures without `[leg]`.
    pub leg: Option<String>,
    /// What the paper saw.
    pub paper: Option<String>,
    pub lines: Option<String>,
    /// Why it may fall short on some machines (shown with a failure).
    pub why: Option<String>,
    /// When it applies (`devices[random]@files=max >= 2`: volumes on separate disks);
    /// otherwise it is reported as not applicable, not as failed.
    pub when: Option<(String, Check)>,
    /// The property this machine lacks when `when` does not hold ("one disk: the volumes
    /// share it"), said with "not applicable here".
    pub when_not: Option<String>,
    /// perflab's own sanity check of its measurement, not a claim of the paper.
    pub sanity: bool,
    pub file_line: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            name: String::new(),
            text: String::new(),
            check: Check::Cmp(Expr::Num(0.0), expr::Rel::Le, Expr::Num(0.0)),
            leg: None,
            paper: None,
            lines: None,
            why: None,
            when: None,
            when_not: None,
            sanity: false,
            file_line: 0,
        }
    }
}

/// Legs overlaid on one chart.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    pub title: String,
    pub legs: Vec<String>,
    pub x: String,
    pub y: Option<(String, Expr)>,
    /// The steps to draw (the other swept parameters pinned).
    pub at: Vec<(String, String)>,
    /// Each curve divided by its own peak (thirty years of hardware do not compare).
    pub normalise: bool,
    /// The naive expectation: linear in x from the first point.
    pub expect_linear: bool,
    pub lines: Option<String>,
    /// The paper's points, read off its figure.
    pub paper: Vec<(f64, f64)>,
    pub file_line: usize,
}

/// Verdicts between two legs (perflab compare).
#[derive(Debug, Clone, Default)]
pub struct Compare {
    pub baseline: String,
    pub candidate: String,
    pub question: String,
    /// The naive expectation the headline ratio is set against (`clock`, `2.2x`).
    pub expect: Option<crate::compare::Expectation>,
    pub file_line: usize,
}

pub use crate::record::StudyRef;

impl Study {
    /// The command a leg runs.
    pub fn command_of(&self, leg: &Leg) -> String {
        if !leg.command.is_empty() {
            return leg.command.clone();
        }
        match self.defaults.iter().find(|o| o.key == "command") {
            Some(Opt {
                value: OptValue::Values(v),
                ..
            }) if v.len() == 1 => v[0].clone(),
            _ => String::new(),
        }
    }

    pub fn leg(&self, name: &str) -> Option<&Leg> {
        self.legs.iter().find(|l| l.name == name)
    }

    /// The legs' names, for messages: `memory, random, scan`.
    pub fn leg_names(&self) -> String {
        self.legs
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A hex digest of a study's text, to tell files apart (not a security measure).
pub fn digest(text: &str) -> String {
    use md5::Digest;
    let d = md5::Md5::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Names of studies and legs: letters, digits and '-', starting with a letter.
pub fn invalid_name(name: &str) -> bool {
    !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}
