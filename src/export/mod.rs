//! Exporters: render a saved record in a format. One file per format; adding one is adding a
//! file, a variant of [`ExportFormat`] and a line in [`write`]. A format of one kind's runs
//! only (fio's JSON of io runs) lives with its kind, which declares it
//! ([`crate::workload::kind::Kind::formats`]); [`resolve`] finds either.

mod csv;
mod csv_intervals;
mod json;

use crate::record::RunRecord;
use crate::workload::kind::{KINDS, RecordFormat, by_name};
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

/// A format `perflab export --format NAME` writes: one of every record's, or one its kind
/// declares ([`crate::workload::kind::Kind::formats`]: fio's JSON for io runs).
pub enum Format {
    Common(ExportFormat),
    Kind(&'static RecordFormat),
}

/// The format `name` for `record`, or one line saying which there are.
pub fn resolve(name: &str, record: &RunRecord) -> Result<Format, String> {
    use clap::ValueEnum;
    if let Ok(f) = ExportFormat::from_str(name, true) {
        return Ok(Format::Common(f));
    }
    let own = by_name(&record.workload).map_or(&[][..], |k| k.formats());
    if let Some(f) = own.iter().find(|f| f.name == name) {
        return Ok(Format::Kind(f));
    }
    let common: Vec<String> = ExportFormat::value_variants()
        .iter()
        .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
        .collect();
    let theirs: Vec<&str> = own.iter().map(|f| f.name).collect();
    let elsewhere = KINDS
        .iter()
        .find(|k| k.formats().iter().any(|f| f.name == name))
        .map(|k| format!("{name} is written for {} runs only; ", k.name()))
        .unwrap_or_else(|| format!("no format {name}; "));
    Err(format!(
        "{elsewhere}run {} ({}) is written as {}",
        record.id,
        record.workload,
        common
            .iter()
            .map(String::as_str)
            .chain(theirs)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Writes `record` in `format`.
pub fn write_as(format: &Format, record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Common(f) => write(*f, record, out),
        Format::Kind(f) => (f.write)(record, out),
    }
}

pub fn write(format: ExportFormat, record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => json::write(record, out),
        ExportFormat::Csv => csv::write(record, out),
        ExportFormat::CsvIntervals => csv_intervals::write(record, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kinds_format_is_found_for_its_runs_and_refused_for_others() {
        let mut r = RunRecord {
            workload: "io".into(),
            ..Default::default()
        };
        assert!(matches!(
            resolve("csv", &r),
            Ok(Format::Common(ExportFormat::Csv))
        ));
        assert!(matches!(resolve("fio-json", &r), Ok(Format::Kind(f)) if f.name == "fio-json"));
        r.workload = "oltp".into();
        let why = resolve("fio-json", &r).err().unwrap();
        assert!(why.contains("io runs only") && why.contains("csv"), "{why}");
        let why = resolve("yaml", &r).err().unwrap();
        assert!(why.starts_with("no format yaml"), "{why}");
    }
}
