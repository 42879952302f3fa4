//! JSON: the record itself, exactly as archived.

use crate::record::RunRecord;
use std::io::Write;

pub fn write(record: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, record)?;
    out.write_all(b"\n")
}
