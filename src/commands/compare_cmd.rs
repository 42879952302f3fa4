//! `perflab compare BASELINE CANDIDATE...`: saved runs side by side, with verdicts.

use crate::archive::{Archive, load_or_file};
use crate::cli::{CompareArgs, FailOn, GlobalArgs, ReportFormat};
use crate::compare::{self, Expectation, Options};
use crate::error::AppError;
use crate::ui::output::print;
use crate::vocab::SpecError;

pub fn compare(g: &GlobalArgs, args: &CompareArgs) -> Result<(), AppError> {
    let options = Options {
        noise: compare::parse_noise(&args.noise)?,
        expect: args.expect.as_deref().map(parse_expect).transpose()?,
    };
    let store = super::shared::store(g)?;
    let records = args
        .runs
        .iter()
        .map(|q| load_or_file(store.as_ref(), q))
        .collect::<Result<Vec<_>, _>>()?;
    let report = compare::compare(&records, &options);
    if g.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))?;
    } else {
        print(&crate::ui::compare::render(&report))?;
    }
    if let Some(path) = &args.output {
        let format = if path.extension().is_some_and(|e| e == "md") {
            ReportFormat::Md
        } else {
            ReportFormat::Html
        };
        let opts = crate::report::Options {
            comparison: Some(report.clone()),
            names: super::shared::names(store.as_ref())?,
            ..Default::default()
        };
        let archive = Archive::open(g.results.as_deref())?;
        let written = crate::report::file::write(&archive, &records, &opts, Some(path), format)?;
        eprintln!("perflab: report written to {}", written.display());
    }
    if args.fail_on == Some(FailOn::Regression) && report.has_regression() {
        let slower: usize = report.pairs.iter().map(|p| p.tally.slower).sum();
        return Err(AppError::Regression(format!(
            "{slower} figure{} slower beyond the noise (exit code 3, as --fail-on regression asks)",
            if slower == 1 { " is" } else { "s are" }
        )));
    }
    Ok(())
}

fn parse_expect(text: &str) -> Result<Expectation, SpecError> {
    Expectation::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_and_expectations() {
        assert_eq!(compare::parse_noise("2%").unwrap(), 0.02);
        assert_eq!(compare::parse_noise("0.5").unwrap(), 0.005);
        assert!(compare::parse_noise("-1%").is_err() && compare::parse_noise("x").is_err());
        assert_eq!(parse_expect("clock").unwrap(), Expectation::Clock);
        assert_eq!(parse_expect("2x").unwrap(), Expectation::Factor(2.0));
        assert!(parse_expect("0x").is_err() && parse_expect("fast").is_err());
    }
}
