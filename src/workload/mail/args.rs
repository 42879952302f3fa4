//! `perflab mail`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::RunArgs;
use clap::Args;

/// `perflab mail` (docs/options.md). Threads are the sessions that may be open at once.
#[derive(Debug, Args)]
#[command(mut_arg("threads", |a| a
    .visible_alias(None)
    .help("Sessions open at once at most (each on its own thread and connections); the users' arrivals are shared among them; sweeps")))]
pub struct MailArgs {
    /// The IMAP server: imap://host[:143], or imaps://host[:993] for TLS. Default: a
    /// throwaway Dovecot on 127.0.0.1, started from PATH, with its users and mailboxes made
    /// for the run
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Where messages are submitted: smtp://host[:25], smtps://host[:465] (TLS) or
    /// lmtp://host[:24] (default with --target: lmtp on the IMAP host, port 24)
    #[arg(long, value_name = "URL")]
    pub smtp: Option<String>,
    /// The POP3 server: pop3://host[:110] or pop3s://host[:995] (default with --target: the
    /// IMAP host, port 110, or pop3s on 995 when --target is imaps://)
    #[arg(long, value_name = "URL")]
    pub pop3: Option<String>,
    /// TLS on the throwaway Dovecot: a self-signed certificate made for the run, sessions on
    /// IMAPS and POP3S, LMTP upgraded by STARTTLS (with --target, give imaps:// pop3s://
    /// smtps:// URLs instead)
    #[arg(long, conflicts_with = "starttls")]
    pub tls: bool,
    /// Upgrade every plain connection (imap://, pop3://, smtp://, lmtp://) by STARTTLS (STLS
    /// for POP3); without --target the throwaway Dovecot gets a self-signed certificate
    #[arg(long)]
    pub starttls: bool,
    /// Users at each step; sweeps (100..3200:x2)
    #[arg(
        long,
        short = 'u',
        value_name = "N|SWEEP",
        default_value = "1000,2000,4000,8000"
    )]
    pub users: String,
    /// The user profile: office (enterprise IMAP users), isp (POP3 users, SPECmail2001's
    /// day) or specmail (office's mix at SPECmail2009's published 4.79 sessions per
    /// user-hour); the options below change its numbers
    #[arg(long, value_name = "NAME", default_value = "office")]
    pub profile: String,
    /// Messages a user sends a day
    #[arg(long, value_name = "N")]
    pub sent_per_day: Option<String>,
    /// Recipients of each message: N or MIN-MAX (uniform)
    #[arg(long, value_name = "N|MIN-MAX")]
    pub recipients: Option<String>,
    /// Short IMAP checks an IMAP user makes a day
    #[arg(long, value_name = "N")]
    pub imap_checks_per_day: Option<String>,
    /// Caching-client IMAP syncs an IMAP user makes a day
    #[arg(long, value_name = "N")]
    pub imap_syncs_per_day: Option<String>,
    /// POP3 sessions a POP3 user makes a day
    #[arg(long, value_name = "N")]
    pub pop3_per_day: Option<String>,
    /// Share of the users who read by POP3 (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub pop3_users: Option<String>,
    /// Share of the day's activity in the peak hour (SPECmail2001: 0.15)
    #[arg(long, value_name = "SHARE")]
    pub peak_share: Option<String>,
    /// Bodies a short IMAP check reads at most
    #[arg(long, value_name = "N")]
    pub check_bodies: Option<String>,
    /// Share of the new messages a short IMAP check deletes (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub check_deletes: Option<String>,
    /// Most messages a POP3 session retrieves (rabid -c)
    #[arg(long, value_name = "N")]
    pub pop3_retrieve: Option<String>,
    /// Share of the messages a POP3 session retrieves that it deletes (0 to 1)
    #[arg(long, value_name = "SHARE")]
    pub pop3_deletes: Option<String>,
    /// Messages in every mailbox before the first step (throwaway server)
    #[arg(long, value_name = "N")]
    pub mailbox_messages: Option<String>,
    /// Message sizes with weights, SIZE:WEIGHT,...; larger than 8k are multipart with an
    /// attachment
    #[arg(
        long,
        value_name = "SIZES",
        default_value = "1k:35,3k:30,8k:20,32k:12,256k:3"
    )]
    pub message_size: String,
    /// Users whose INBOX an IDLE-ing reader watches all step: their messages' delivery time
    /// is measured
    #[arg(long, value_name = "N", default_value = "8")]
    pub watchers: String,
    /// Share of the messages that go to a watched user (in place of one recipient), so
    /// delivery is timed on enough messages at any user count
    #[arg(long, value_name = "SHARE", default_value = "0.1")]
    pub watched_share: String,
    /// Check every step against the quality of service: each command within
    /// --command-limit for 95%, delivery within --delivery-limit for 95%, under 1% errors
    #[arg(long)]
    pub qos: bool,
    /// Find the users supported: the largest of --users's values (a range, e.g.
    /// 100..6400:+100) that passes the quality of service at 100%, 120% and 80% of its load,
    /// SPECmail's qualification; implies --qos
    #[arg(long)]
    pub search_users: bool,
    /// Quality of service: a command's limit
    #[arg(long, value_name = "TIME", default_value = "5s")]
    pub command_limit: String,
    /// Quality of service: a message's delivery limit
    #[arg(long, value_name = "TIME", default_value = "60s")]
    pub delivery_limit: String,
    /// User names with a target: a pattern where %d is the user's number from 1
    #[arg(long, value_name = "PATTERN", default_value = "user%d")]
    pub user_pattern: String,
    /// Passwords with a target: a pattern where %d is the user's number (the text is never
    /// printed or archived); default: $PERFLAB_MAIL_PASSWORD, the same for every user
    #[arg(long, value_name = "PATTERN")]
    pub password_pattern: Option<String>,
    /// Users with a target, one NAME:PASSWORD per line (instead of the patterns)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["user_pattern", "password_pattern"])]
    pub users_file: Option<std::path::PathBuf>,
    /// The domain of the users' addresses
    #[arg(long, value_name = "DOMAIN", default_value = "perflab.test")]
    pub domain: String,
    /// POP3 sessions send each RETR with its DELE when the server advertises PIPELINING
    /// (RFC 2449); off: one command at a time, as rabid does
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub pipelining: crate::vocab::Switch,
    /// A command unanswered this long fails its session
    #[arg(long, value_name = "TIME", default_value = "30s")]
    pub op_timeout: String,
    #[command(flatten)]
    pub tls_options: crate::target::tls_args::TlsArgs,
    #[command(flatten)]
    pub run: RunArgs,
}
