//! `perflab compare BASELINE CANDIDATE...`: saved runs side by side, with verdicts.

use crate::archive::Archive;
use crate::cli::{CompareArgs, FailOn, GlobalArgs, ReportFormat};
use crate::compare::{self, Expectation, Options};
use crate::error::AppError;
use crate::ui::output::print;
use crate::vocab::SpecError;

pub fn compare(g: &GlobalArgs, args: &CompareArgs) -> Result<(), AppError> {
    let options = Options {
        noise: parse_noise(&args.noise)?,
        expect: args.expect.as_deref().map(parse_expect).transpose()?,
    };
    let archive = Archive::open(g.results.as_deref())?;
    let records = args
        .runs
        .iter()
        .map(|q| archive.load_or_file(q))
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
            ..Default::default()
        };
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

/// `2%`, `2` (percent) or `0.5%`.
fn parse_noise(text: &str) -> Result<f64, SpecError> {
    let bad = || SpecError::new("noise", text, "give a percentage from 0 to 50, e.g. 2%");
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| bad())?;
    if !(0.0..=50.0).contains(&v) {
        return Err(bad());
    }
    Ok(v / 100.0)
}

fn parse_expect(text: &str) -> Result<Expectation, SpecError> {
    Expectation::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_and_expectations() {
        assert_eq!(parse_noise("2%").unwrap(), 0.02);
        assert_eq!(parse_noise("0.5").unwrap(), 0.005);
        assert!(parse_noise("-1%").is_err() && parse_noise("x").is_err());
        assert_eq!(parse_expect("clock").unwrap(), Expectation::Clock);
        assert_eq!(parse_expect("2x").unwrap(), Expectation::Factor(2.0));
        assert!(parse_expect("0x").is_err() && parse_expect("fast").is_err());
    }
}
