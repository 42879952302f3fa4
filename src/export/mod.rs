//! Exporters: render a saved record in a format. One file per format; adding one is adding a
//! file, a variant of [`ExportFormat`] and a line in [`write`].

mod csv;
mod csv_intervals;
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
}

pub fn write(format: ExportFormat, record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => json::write(record, out),
        ExportFormat::Csv => csv::write(record, out),
        ExportFormat::CsvIntervals => csv_intervals::write(record, out),
    }
}
