//! The mail kind in the registry.

use crate::record::RunRecord;
use crate::target::TargetEntry;
use crate::workload::kind::warnings_with;

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
}
