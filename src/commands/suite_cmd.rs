//! `perflab run [SUITE] [--quick]`: every run of a suite (`crate::suite::run`), then the
//! balance sheet and its report.

use super::shared::write_report;
use crate::cli::{GlobalArgs, SuiteArgs};
use crate::error::AppError;
use crate::ui::balance;
use crate::ui::output::print;

pub fn run(g: &GlobalArgs, args: &SuiteArgs) -> Result<(), AppError> {
    let ran = crate::suite::run::run(g, &args.suite, args.quick, args.io_path.clone())?;
    if g.json {
        let value = serde_json::json!({ "suite": ran.name, "runs": ran.records });
        let text =
            serde_json::to_string_pretty(&value).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))?;
    } else {
        print(&balance::render(&ran.name, &ran.env, &ran.records))?;
    }
    // The first thing a new user opens: a picture of their machine, beside its runs.
    if !ran.records.is_empty() {
        write_report(
            g,
            &ran.archive,
            &ran.records,
            &crate::report::Options::default(),
            "open it in a browser; 'perflab report --suite last' writes it again",
        )?;
    }
    ran.end
}
