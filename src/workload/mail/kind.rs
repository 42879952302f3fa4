//! The mail kind in the registry.

use super::args::MailArgs;
use crate::env::Environment;
use crate::error::AppError;
use crate::present::breakdown::Words;
use crate::present::{Figure, table::Table};
use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::kind::breakdowns;
use crate::workload::kind::warnings_with;
use crate::workload::kind::{args, subcommand};
use clap::ArgMatches;

/// What `perflab mail --help` says it does.
const ABOUT: &str = "Mail, SPECmail-style: users' SMTP/LMTP submissions, IMAP checks and syncs and POP3 sessions at the rate the user count implies in the peak hour; per-command response times, delivery time, every message accounted for, the quality of service per step; with no --target, a throwaway Dovecot";

/// mail, as the registry sees it.
pub struct MailKind;

pub static KIND: MailKind = MailKind;

impl crate::workload::kind::Kind for MailKind {
    fn name(&self) -> &'static str {
        "mail"
    }

    fn targets(&self) -> &'static [TargetEntry] {
        &[TargetEntry {
            name: "imap://HOST",
            description: "a mail server: IMAP with --smtp smtp://|lmtp://HOST and --pop3 pop3://HOST (imaps://, pop3s://, smtps:// or --starttls for TLS; the mail default is a throwaway Dovecot started from PATH)",
        }]
    }

    /// Mail lost, duplicated or corrupted; a missed quality of service is a finding.
    fn failure(&self, record: &RunRecord) -> Option<String> {
        let bad = warnings_with(record, "mail_lost");
        (bad > 0).then(|| {
            format!(
                "mail was lost, duplicated or corrupted in {bad} step(s) (run {})",
                record.id
            )
        })
    }

    fn command(&self) -> clap::Command {
        subcommand::<MailArgs>("mail", ABOUT)
    }

    fn spec(&self, m: &ArgMatches, _env: &Environment) -> Result<Option<RunSpec>, AppError> {
        Ok(Some(super::cmd::mail_spec(&args(m)?)?))
    }

    fn words(&self) -> Words {
        Words {
            title: "by session kind (response times, from the intended start)",
            group: "session",
            group_rate: "sessions/s",
            shard_rate: "tx/s",
        }
    }

    /// The breakdowns, then the quality of service by step.
    fn tables(&self, record: &RunRecord) -> Vec<(String, Table)> {
        let mut out = breakdowns(record, self.words());
        out.extend(super::present::table(record).map(|t| (super::present::TITLE.to_string(), t)));
        out
    }

    fn findings(&self, record: &RunRecord) -> Vec<String> {
        super::present::findings(record)
    }

    fn figures(&self, record: &RunRecord) -> Vec<Figure> {
        super::figures::figures(record)
    }
}
