//! `perflab report RUN... [-o FILE]`: archived runs as one HTML file (or Markdown + SVG).

use crate::archive::{Archive, Listing, RunStore};
use crate::cli::{GlobalArgs, ReportArgs, ReportFormat};
use crate::error::AppError;
use crate::record::RunRecord;
use crate::report::{self, Options};
use crate::ui::output::print;
use crate::vocab::Slo;

pub fn report(g: &GlobalArgs, args: &ReportArgs) -> Result<(), AppError> {
    let slo = args
        .slo
        .as_deref()
        .map(|s| Slo::parse("slo", s))
        .transpose()?;
    let archive = Archive::open(g.results.as_deref())?;
    // A study's invocation is kept in the results folder that ran it (`studies/`); runs
    // otherwise come from the shared store when one is set.
    let store = super::shared::store(g)?;
    let mut study = None;
    let records = if args.study {
        let [one] = args.runs.as_slice() else {
            return Err(AppError::Usage(
                "--study takes one run of the study (e.g. last)".into(),
            ));
        };
        let (records, answer) = crate::study::store::report_of(
            &archive,
            &crate::study::store::study_run(&archive, one)?,
        )?;
        study = Some(answer);
        records
    } else if args.suite {
        suite_records(super::shared::store(g)?.as_ref(), &args.runs)?
    } else {
        args.runs
            .iter()
            .map(|q| store.load(q))
            .collect::<Result<Vec<_>, _>>()?
    };
    let options = Options {
        slo,
        landscape: args.landscape,
        title: args.title.clone(),
        comparison: None,
        study,
        names: super::shared::names(store.as_ref())?,
    };
    let format = args.format.unwrap_or(match &args.output {
        Some(p) if p.extension().is_some_and(|e| e == "md" || e == "markdown") => ReportFormat::Md,
        _ => ReportFormat::Html,
    });
    if args.landscape && !g.quiet {
        let (t, note) = report::landscape::table(&records);
        let mut text = crate::present::table::Table::new(t.head.clone());
        for row in t.rows {
            text.row(row);
        }
        print(&text.render())?;
        if let Some(n) = note {
            print(&format!("{n}\n"))?;
        }
    }
    let path = report::file::write(&archive, &records, &options, args.output.as_deref(), format)?;
    print(&format!("report: {}\n", path.display()))
}

/// Every run of the suite invocations the queried runs belong to, oldest first.
fn suite_records(archive: &dyn RunStore, queries: &[String]) -> Result<Vec<RunRecord>, AppError> {
    let mut out: Vec<RunRecord> = Vec::new();
    for q in queries {
        let r = archive.load(q)?;
        let Some(invocation) = r.suite_run.clone() else {
            return Err(AppError::Usage(format!(
                "run {} was not started by a suite ('perflab run'); name its runs instead",
                r.id
            )));
        };
        for summary in archive.list(&Listing::default())? {
            if summary.suite != r.suite || out.iter().any(|x| x.id == summary.id) {
                continue;
            }
            let candidate = archive.load(&summary.id)?;
            if candidate.suite_run.as_deref() == Some(invocation.as_str()) {
                out.push(candidate);
            }
        }
    }
    Ok(out)
}
