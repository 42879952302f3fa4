//! Exporters: render a saved record in a format. One file per format; adding one is adding a
//! file, a variant of [`crate::cli::ExportFormat`] and a line in [`write`].

mod csv;
mod json;

use crate::cli::ExportFormat;
use crate::record::RunRecord;
use std::io::Write;

pub fn write(format: ExportFormat, record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => json::write(record, out),
        ExportFormat::Csv => csv::write(record, out),
    }
}
