//! Reports: saved records rendered as one self-contained HTML file (or Markdown with SVG files
//! beside it) of curves, tables and the full disclosure.
//!
//! ```text
//! records ──► build (one Section per run, a cover for several) ──► Document ──► html | markdown
//!               └─ figures: charts from a record ─► svg (hand-written SVG: line charts, heatmaps)
//! ```
//!
//! - [`Document`] is the report as content (sections of headings, text, figures, tables), so
//!   HTML and Markdown say the same things.
//! - [`build`] decides what a record shows; [`comparison`] what a comparison shows;
//!   [`study`] what a study's answer shows (the paper's tables and figures beside this machine's);
//!   [`figures`] turns records into charts (one file per family: curves, heatmaps, hockey
//!   sticks, timeline, spectra, load levels, comparison), and asks the record's kind for its own;
//!   [`landscape`] is the seed reports' table of runs ranked by their headline figure;
//!   [`downsample`] keeps long time series drawable (min and max kept).
//! - [`file`] writes a report where it belongs: a new file the user names, or the archive's
//!   `reports/` folder.
//! - [`html`] and [`markdown`] render a document. Output depends only on the records and the
//!   options: the same input gives byte-identical output (no clock, no random ids).
//!
//! Reports never read live state, so an old record re-renders the same way forever.

pub mod build;
pub mod comparison;
pub mod downsample;
pub mod figures;
pub mod file;
pub mod html;
pub mod landscape;
pub mod markdown;
pub mod study;
pub mod trend;

use crate::record::RunRecord;
use crate::vocab::Slo;

/// What a report shows beyond the records themselves.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Mark the highest throughput meeting this objective on every curve.
    pub slo: Option<Slo>,
    /// Put the landscape table (runs ranked by their headline figure) first.
    pub landscape: bool,
    /// The report's title; default from the runs.
    pub title: Option<String>,
    /// A comparison of the runs (`perflab compare -o`), shown first.
    pub comparison: Option<crate::compare::Report>,
    /// A study's answer (`perflab study`, `report --study`), shown first.
    pub study: Option<crate::study::evaluate::Outcome>,
    /// The names the user gave runs (their tags, by run id): legends and titles use them.
    pub names: std::collections::BTreeMap<String, String>,
}

/// A report as content, before it is rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub title: String,
    /// One line under the title: what the report covers.
    pub subtitle: String,
    pub sections: Vec<Section>,
}

/// One part of a report: a run, or the cover of several.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// An anchor, unique in the document (`run-20261123-182935-b3d3`).
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

/// The pieces a section is made of.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(String),
    Paragraph(String),
    /// Short findings, one per line ("peak: 141k/s at iodepth=16").
    Findings(Vec<String>),
    Warnings(Vec<String>),
    Figure(Figure),
    Table(Table),
    /// Folded text (the exact specification as JSON), shown on demand without JavaScript.
    Details {
        summary: String,
        text: String,
    },
}

pub use crate::present::Figure;

/// A table of text cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub caption: Option<String>,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// From the terminal's table, so both show the same columns.
    pub fn from_ui(caption: Option<String>, t: &crate::present::table::Table) -> Table {
        Table {
            caption,
            head: t.header().to_vec(),
            rows: t.rows().to_vec(),
        }
    }

    /// Whether column `i` holds numbers (right-aligned).
    pub fn numeric(&self, i: usize) -> bool {
        crate::present::table::is_numeric_column(&self.rows, i)
    }
}

/// The report of `records` as a document.
pub fn document(records: &[RunRecord], options: &Options) -> Document {
    build::document(records, options)
}

/// One self-contained HTML file.
pub fn to_html(records: &[RunRecord], options: &Options) -> String {
    html::render(&document(records, options))
}

/// Markdown, and the SVG files it links to (relative names, beside the Markdown file).
pub fn to_markdown(
    records: &[RunRecord],
    options: &Options,
    figures_dir: &str,
) -> (String, Vec<(String, String)>) {
    markdown::render(&document(records, options), figures_dir)
}
