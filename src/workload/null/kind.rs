//! The null kind in the registry.

use super::args::NullArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::workload::RunSpec;
use crate::workload::kind::{args, subcommand};
use clap::ArgMatches;
/// What `perflab null --help` says it does.
const ABOUT: &str = "The null target: ops that do nothing, to measure perflab itself";

/// null, as the registry sees it.
pub struct NullKind;

pub static KIND: NullKind = NullKind;

impl crate::workload::kind::Kind for NullKind {
    fn name(&self) -> &'static str {
        "null"
    }

    fn targets(&self) -> &'static [crate::target::TargetEntry] {
        &[crate::target::TargetEntry {
            name: "null",
            description: "does nothing: measures perflab's own overhead per op",
        }]
    }

    fn command(&self) -> clap::Command {
        subcommand::<NullArgs>("null", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, _env: &Environment) -> Result<Option<RunSpec>, AppError> {
        Ok(Some(super::cmd::null_spec(&args(m)?)?))
    }
}
