//! Exporters: render a saved record in a format. One file per format; adding one is adding a
//! file, a variant of [`ExportFormat`] and a line in [`write`].

mod csv;
mod csv_intervals;
pub mod fio_json;
mod json;

use crate::record::RunRecord;
use std::io::Write;

/// The formats `perflab export` writes (the enum is clap's value list too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The record itself
    Json,
    /// One row per trial of each step
    Csv,
    /// One row per interval of each trial: the time series
    CsvIntervals,
    /// fio's JSON output (`fio --output-format=json`) of an io run
    FioJson,
    /// fio's json+ output: fio-json with each latency's histogram bins
    #[value(name = "fio-jsonplus")]
    FioJsonPlus,
}

impl ExportFormat {
    /// Why this format cannot render `record` (one line for the user), if it cannot: fio's
    /// JSON exists only for io runs.
    pub fn refusal(self, record: &RunRecord) -> Option<String> {
        match self {
            ExportFormat::FioJson | ExportFormat::FioJsonPlus => fio_json::refusal(record),
            _ => None,
        }
    }
}

pub fn write(format: ExportFormat, record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => json::write(record, out),
        ExportFormat::Csv => csv::write(record, out),
        ExportFormat::CsvIntervals => csv_intervals::write(record, out),
        ExportFormat::FioJson => fio_json::write(record, false, out),
        ExportFormat::FioJsonPlus => fio_json::write(record, true, out),
    }
}
