//! What more than one command does the same way, so that no command's file imports another's.

use crate::archive::{Archive, RunStore};
use crate::cli::{GlobalArgs, ReportFormat};
use crate::error::AppError;
use crate::record::RunRecord;
use crate::ui::output::print;

/// Writes the report of a suite's or a study's runs into the archive's `reports/` folder and
/// says where, with how to write it again (`again`). A report that cannot be written is a
/// warning, not a failure: the runs are archived, and `perflab report` can write it later.
pub fn write_report(
    g: &GlobalArgs,
    archive: &Archive,
    records: &[RunRecord],
    options: &crate::report::Options,
    again: &str,
) -> Result<(), AppError> {
    match crate::report::file::write(archive, records, options, None, ReportFormat::Html) {
        Ok(path) if !g.json => print(&format!("report: {}  ({again})\n", path.display())),
        Ok(_) => Ok(()),
        Err(e) => {
            eprintln!(
                "{}",
                crate::ui::style::warning(&format!("the report was not written: {e}"))
            );
            Ok(())
        }
    }
}

/// The runs the reading commands read: the shared store when one is set (and `--local` is
/// not given), else this machine's results folder.
pub fn store(g: &GlobalArgs) -> Result<Box<dyn RunStore>, AppError> {
    Ok(crate::shared_store::open(
        g.results.as_deref(),
        g.shared_to_read().as_deref(),
        false,
        crate::shared_store::Access::Write,
    )?)
}

/// The names given to runs (their tags), by run id, for reports' legends.
pub fn names(store: &dyn RunStore) -> Result<std::collections::BTreeMap<String, String>, AppError> {
    let mut names = std::collections::BTreeMap::new();
    for (tag, id) in store.tags()? {
        names
            .entry(id)
            .and_modify(|n: &mut String| {
                n.push_str(", ");
                n.push_str(&tag)
            })
            .or_insert(tag);
    }
    Ok(names)
}
