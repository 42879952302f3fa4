//! `perflab mail`: SPECmail-style users on an IMAP/POP3 server and its submission server
//! (`--target`, `--smtp`, `--pop3`), or on a throwaway Dovecot started for the run.
//!
//! Everything is checked before the server is started: the profile's numbers, the sizes,
//! the accounts. With a target, users come from `--user-pattern` and `--password-pattern`
//! (or `$PERFLAB_MAIL_PASSWORD`), or from `--users-file`; passwords are never printed or
//! recorded.
//!
//! TLS: `imaps://`, `pop3s://` and `smtps://` are implicit TLS; `--starttls` upgrades every
//! plain URL by STARTTLS; without a target, `--tls` and `--starttls` give the throwaway
//! Dovecot a certificate. Every TLS connection is tried before the run, so a server that
//! does not offer it is one line at the start.

use super::args::MailArgs;
use crate::error::AppError;
use crate::target::tls::{Roots, Trust};
use crate::vocab::sweep::parse_u64;
use crate::vocab::units::{parse_count, parse_duration};
use crate::vocab::{SearchSpec, SpecError, Switch};
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::mail::MailSpec;
use crate::workload::mail::endpoint::{Endpoint, Security};
use crate::workload::mail::message::Sizes;
use crate::workload::mail::profile::Profile;
use crate::workload::mail::server::Throwaway;
use crate::workload::mail::session::Endpoints;
use crate::workload::mail::smtp::Dialect;
use crate::workload::{Arrival, LoadSpec, RateScope, RunSpec};
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most users in one step: each is an account and a mailbox.
const MAX_USERS: u64 = 10_000_000;
/// The default sessions open at once: enough that arrivals rarely wait for a free one.
const DEFAULT_THREADS: &str = "32";

/// The schemes of each option, with their default ports; those ending in `s` are implicit
/// TLS.
const IMAP_SCHEMES: [(&str, u16); 2] = [("imap", 143), ("imaps", 993)];
const SUBMIT_SCHEMES: [(&str, u16); 3] = [("smtp", 25), ("smtps", 465), ("lmtp", 24)];
const POP3_SCHEMES: [(&str, u16); 2] = [("pop3", 110), ("pop3s", 995)];

/// A server named by a URL: its scheme, address and host as written.
struct Url {
    scheme: String,
    addr: SocketAddr,
    host: String,
}

impl Url {
    /// Whether the scheme is the implicit-TLS one (`imaps`, `pop3s`, `smtps`).
    fn implicit_tls(&self) -> bool {
        self.scheme.ends_with('s')
    }

    /// The endpoint: implicit TLS by scheme, else STARTTLS with `starttls`, else plain.
    fn endpoint(&self, starttls: bool, trust: &Trust) -> Endpoint {
        Endpoint {
            addr: self.addr,
            host: self.host.clone(),
            trust: trust.clone(),
            security: if self.implicit_tls() {
                Security::Implicit
            } else if starttls {
                Security::StartTls
            } else {
                Security::Plain
            },
        }
    }
}

fn url(option: &str, text: &str, schemes: &[(&str, u16)]) -> Result<Url, AppError> {
    let bad = |why: &str| AppError::Usage(format!("--{option} {text}: {why}"));
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| bad("give a URL such as imap://host:143"))?;
    let scheme = scheme.to_ascii_lowercase();
    let &(_, default_port) = schemes.iter().find(|s| s.0 == scheme).ok_or_else(|| {
        bad(&format!(
            "the scheme must be {}",
            schemes
                .iter()
                .map(|s| format!("{}://", s.0))
                .collect::<Vec<_>>()
                .join(" or ")
        ))
    })?;
    if rest.contains('@') {
        return Err(bad(
            "no user or password in the URL: users come from --user-pattern and --password-pattern or --users-file",
        ));
    }
    let hostport = rest.trim_end_matches('/');
    if hostport.is_empty() || hostport.contains('/') {
        return Err(bad("give host[:port] after the scheme, nothing else"));
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => match p.parse::<u16>() {
            Ok(p) => (h.trim_matches(['[', ']']).to_string(), p),
            Err(_) => return Err(bad(&format!("{p} is not a port"))),
        },
        _ => (hostport.trim_matches(['[', ']']).to_string(), default_port),
    };
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| bad(&format!("cannot resolve {host}: {e}")))?
        .next()
        .ok_or_else(|| bad(&format!("{host} has no address")))?;
    Ok(Url { scheme, addr, host })
}

fn number(option: &str, text: &Option<String>, default: f64) -> Result<f64, AppError> {
    match text {
        None => Ok(default),
        Some(t) => t
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| SpecError::new(option, t, "give a number, e.g. 0.15 or 40").into()),
    }
}

/// The profile with the options' numbers.
fn profile(args: &MailArgs) -> Result<Profile, AppError> {
    let mut p = Profile::named(&args.profile).ok_or_else(|| {
        AppError::Usage(format!(
            "--profile {}: give one of {}",
            args.profile,
            Profile::NAMES
        ))
    })?;
    p.sent_per_day = number("sent-per-day", &args.sent_per_day, p.sent_per_day)?;
    p.imap_checks_per_day = number(
        "imap-checks-per-day",
        &args.imap_checks_per_day,
        p.imap_checks_per_day,
    )?;
    p.imap_syncs_per_day = number(
        "imap-syncs-per-day",
        &args.imap_syncs_per_day,
        p.imap_syncs_per_day,
    )?;
    p.pop3_per_day = number("pop3-per-day", &args.pop3_per_day, p.pop3_per_day)?;
    p.pop3_users = number("pop3-users", &args.pop3_users, p.pop3_users)?;
    p.peak_share = number("peak-share", &args.peak_share, p.peak_share)?;
    p.check_deletes = number("check-deletes", &args.check_deletes, p.check_deletes)?;
    p.pop3_deletes = number("pop3-deletes", &args.pop3_deletes, p.pop3_deletes)?;
    if let Some(t) = &args.check_bodies {
        p.check_bodies = count("check-bodies", t, 1000)? as u32;
    }
    if let Some(t) = &args.pop3_retrieve {
        p.pop3_retrieve = count("pop3-retrieve", t, 100_000)? as u32;
    }
    if let Some(t) = &args.mailbox_messages {
        p.mailbox_messages = count("mailbox-messages", t, 100_000)? as u32;
    }
    if let Some(t) = &args.recipients {
        let bad = || SpecError::new("recipients", t, "give N or MIN-MAX, from 1 to 100");
        let (lo, hi) = match t.split_once('-') {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let n: u32 = t.trim().parse().map_err(|_| bad())?;
                (n, n)
            }
        };
        p.recipients_min = lo;
        p.recipients_max = hi;
    }
    p.check().map_err(AppError::Usage)?;
    Ok(p)
}

fn count(option: &str, text: &str, max: u64) -> Result<u64, AppError> {
    let n = parse_count(option, text)?;
    if n > max {
        return Err(SpecError::new(option, text, &format!("at most {max}")).into());
    }
    Ok(n)
}

/// Accounts for a target: from the file, or the patterns.
fn accounts(args: &MailArgs, n: u64) -> Result<(Vec<(String, String)>, String), AppError> {
    if let Some(path) = &args.users_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AppError::Usage(format!("--users-file {}: {e}", path.display())))?;
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, password) = line.split_once(':').ok_or_else(|| {
                AppError::Usage(format!(
                    "--users-file {} line {}: give NAME:PASSWORD",
                    path.display(),
                    i + 1
                ))
            })?;
            out.push((name.to_string(), password.to_string()));
        }
        if (out.len() as u64) < n {
            return Err(AppError::Usage(format!(
                "--users-file {} has {} users; the largest step needs {n}: add users or give fewer --users",
                path.display(),
                out.len()
            )));
        }
        out.truncate(n as usize);
        return Ok((out, format!("from a file ({n} of them)")));
    }
    if !args.user_pattern.contains("%d") {
        return Err(SpecError::new(
            "user-pattern",
            &args.user_pattern,
            "put %d where the user's number goes, e.g. user%d",
        )
        .into());
    }
    let password = match &args.password_pattern {
        Some(p) => p.clone(),
        None => std::env::var("PERFLAB_MAIL_PASSWORD").map_err(|_| {
            AppError::Usage(
                "with --target, give --password-pattern (e.g. pass%d), or set PERFLAB_MAIL_PASSWORD, or --users-file".into(),
            )
        })?,
    };
    let out = (1..=n)
        .map(|i| {
            let d = i.to_string();
            (
                args.user_pattern.replace("%d", &d),
                password.replace("%d", &d),
            )
        })
        .collect();
    Ok((out, format!("pattern {}", args.user_pattern)))
}

/// The endpoints' URLs as shown: the real scheme (`imaps://` for implicit TLS).
fn submit_scheme(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Lmtp => "lmtp",
        Dialect::Smtp => "smtp",
    }
}

/// Checks that the servers answer (with TLS as their endpoints say) and, given `first`,
/// that the first user can log in, in one line if not; `who` names the servers in it
/// (`--target` ...). Returns what each TLS connection agreed (`imap TLSv1_3 ...`).
fn introduce(
    e: &Endpoints,
    first: Option<&(String, String)>,
    pop3: bool,
    throwaway: bool,
) -> Result<Vec<String>, AppError> {
    use crate::workload::mail::{imap::ImapClient, pop3::Pop3Client, smtp::SmtpClient};
    let wait = Duration::from_secs(5);
    let option = |name: &str| {
        if throwaway {
            "the throwaway Dovecot's".to_string()
        } else {
            format!("--{name}")
        }
    };
    let fail =
        |what: String, err: &dyn std::fmt::Display| AppError::Usage(format!("{what}: {err}"));
    let mut agreed = Vec::new();
    let imap_url = format!("{} {}", option("target"), e.imap.url("imap"));
    let mut c = ImapClient::open(&e.imap, wait).map_err(|err| fail(imap_url.clone(), &err))?;
    if let Some(t) = c.wire().tls_negotiated() {
        agreed.push(format!("imap {t}"));
    }
    if let Some(first) = first {
        c.login(&first.0, &first.1).map_err(|err| {
            fail(
                format!(
                    "{imap_url}: {} cannot log in (check the users and passwords)",
                    first.0
                ),
                &err,
            )
        })?;
    }
    c.logout();
    let smtp_url = format!(
        "{} {}",
        option("smtp"),
        e.submit.url(submit_scheme(e.dialect))
    );
    let mut s =
        SmtpClient::open(&e.submit, e.dialect, wait).map_err(|err| fail(smtp_url.clone(), &err))?;
    s.hello(&e.helo)
        .map_err(|err| fail(smtp_url.clone(), &err))?;
    if let Some(t) = s.wire().tls_negotiated() {
        agreed.push(format!("submit {t}"));
    }
    s.quit();
    if pop3 {
        let pop3_url = format!("{} {}", option("pop3"), e.pop3.url("pop3"));
        let mut p = Pop3Client::open(&e.pop3, wait).map_err(|err| fail(pop3_url.clone(), &err))?;
        if let Some(t) = p.wire().tls_negotiated() {
            agreed.push(format!("pop3 {t}"));
        }
        if let Some(first) = first {
            p.login(&first.0, &first.1)
                .map_err(|err| fail(format!("{pop3_url}: {} cannot log in", first.0), &err))?;
        }
        let _ = p.quit();
    }
    Ok(agreed)
}

/// Whether the POP3 server advertises PIPELINING (RFC 2449 CAPA); false if it cannot say.
fn pop3_pipelines(endpoint: &Endpoint) -> bool {
    use crate::workload::mail::pop3::Pop3Client;
    let Ok(mut c) = Pop3Client::open(endpoint, Duration::from_secs(5)) else {
        return false;
    };
    let pipelines = c
        .capa()
        .is_ok_and(|caps| caps.iter().any(|c| c.eq_ignore_ascii_case("PIPELINING")));
    let _ = c.quit();
    pipelines
}

/// Whether an LMTP (or SMTP) server lists STARTTLS after LHLO; false if it cannot say.
fn offers_starttls(endpoint: &Endpoint, dialect: Dialect) -> bool {
    use crate::workload::mail::smtp::SmtpClient;
    let Ok(mut c) = SmtpClient::open(endpoint, dialect, Duration::from_secs(5)) else {
        return false;
    };
    let offered = c.hello("perflab").is_ok() && c.offers_starttls();
    c.quit();
    offered
}

/// The client's TLS settings, as disclosed with any TLS run, after what was verified.
const TLS_CLIENT: &str = "rustls 0.23 (ring); session resumption on (rustls's default: TLS 1.3 tickets, TLS 1.2 session ids and tickets, in an in-memory cache per server address), so a handshake may skip the certificate signature: tls_resumed_pct says how many did";

/// Accounts for the throwaway server: user1, user2 ... with passwords drawn for this run.
fn throwaway_accounts(n: u64, seed: u64) -> Vec<(String, String)> {
    let mut rng = crate::workload::rng::Rng::new(seed ^ std::process::id() as u64 ^ 0x6d61_696c);
    (1..=n)
        .map(|i| (format!("user{i}"), format!("{:016x}", rng.next_u64())))
        .collect()
}

/// The run specification; starts the throwaway Dovecot when there is no `--target` (it
/// stops when the spec is dropped).
pub fn mail_spec(args: &MailArgs) -> Result<RunSpec, AppError> {
    let users = parse_u64("users", &args.users, parse_count)?.named("users");
    if let Some(&bad) = users.values().iter().find(|&&v| v == 0 || v > MAX_USERS) {
        return Err(
            SpecError::new("users", &bad.to_string(), &format!("from 1 to {MAX_USERS}")).into(),
        );
    }
    let most = users.values().iter().copied().max().unwrap_or(1);
    if args.search_users
        && (users.values().len() < 2 || users.values().windows(2).any(|w| w[0] >= w[1]))
    {
        return Err(SpecError::new(
            "users",
            &args.users,
            "--search-users searches the values of --users: give them rising, as a range (e.g. 100..6400:+100)",
        )
        .into());
    }
    if args.run.rate.is_some() {
        return Err(AppError::Usage(
            "--rate: mail's rate follows from --users and the profile (sessions a user starts in the peak hour); change those instead".into(),
        ));
    }
    let profile = profile(args)?;
    let sizes = Sizes::parse(&args.message_size).map_err(AppError::Usage)?;
    let watchers = count("watchers", &args.watchers, 1000)? as u32;
    let watched_share = number("watched-share", &Some(args.watched_share.clone()), 0.1)?;
    if !(0.0..=1.0).contains(&watched_share) {
        return Err(SpecError::new(
            "watched-share",
            &args.watched_share,
            "give a share from 0 to 1 (e.g. 0.1)",
        )
        .into());
    }
    let command_limit = parse_duration("command-limit", &args.command_limit)?;
    let delivery_limit = parse_duration("delivery-limit", &args.delivery_limit)?;
    let op_timeout = parse_duration("op-timeout", &args.op_timeout)?;
    for (name, text, d) in [
        ("command-limit", &args.command_limit, command_limit),
        ("delivery-limit", &args.delivery_limit, delivery_limit),
        ("op-timeout", &args.op_timeout, op_timeout),
    ] {
        if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
            return Err(SpecError::new(name, text, "a time from 1ms to 1h").into());
        }
    }
    let seed = args.run.seed.trim().parse::<u64>().unwrap_or(1);
    let uses_pop3 = profile.per_user_hour(crate::workload::mail::profile::Kind::Pop3) > 0.0;
    let Servers {
        endpoints,
        credentials,
        accounts_shown,
        server,
        durability,
        mut tls_settings,
        throwaway,
    } = match &args.target {
        None => throwaway_servers(args, most, seed, uses_pop3)?,
        Some(target) => target_servers(args, target, most, uses_pop3)?,
    };
    let e = &endpoints;
    let tls: BTreeMap<String, String> =
        [("imap", &e.imap), ("pop3", &e.pop3), ("submit", &e.submit)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.security.name().to_string()))
            .collect();
    if let Some(secured) = [&e.imap, &e.pop3, &e.submit]
        .into_iter()
        .find(|e| e.security.is_tls())
    {
        // One trust for every server of the run.
        tls_settings.insert(
            "client".into(),
            format!("{}; {TLS_CLIENT}", secured.trust.describe()),
        );
    }
    let spec = MailSpec {
        target: e.imap.url("imap"),
        submit: e.submit.url(submit_scheme(e.dialect)),
        pop3: e.pop3.url("pop3"),
        tls,
        tls_settings,
        server,
        throwaway: throwaway.is_some(),
        users,
        mean_message_bytes: sizes.mean(),
        message_size: sizes.shown().to_string(),
        profile,
        watchers,
        watched_share,
        qos: args.qos || args.search_users,
        command_limit_ns: command_limit.as_nanos() as u64,
        delivery_limit_ns: delivery_limit.as_nanos() as u64,
        accounts: accounts_shown,
        domain: args.domain.clone(),
        pop3_pipelining: endpoints.pop3_pipelining,
        durability,
        op_timeout_ns: op_timeout.as_nanos() as u64,
        endpoints,
        credentials: Arc::new(credentials),
        sizes,
        throwaway_server: throwaway.map(|t| Arc::new(Mutex::new(t))),
        step: Arc::new(Mutex::new(None)),
        checks: Arc::new(Mutex::new(Vec::new())),
        steps_begun: Arc::new(AtomicU64::new(0)),
        revived: Arc::new(AtomicU64::new(0)),
        revive_failure: Arc::new(Mutex::new(None)),
        seed,
    };
    let mut run = build_spec(
        &args.run,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: DEFAULT_THREADS.into(),
            warmup: "2s",
            duration: "10s",
            rate_scope: RateScope::Total,
        },
    )?;
    // The users arrive independently, at the rate their count implies.
    run.load = LoadSpec::Offered {
        arrival: Arrival::Poisson,
        load_pct: 100.0,
    };
    if args.search_users {
        if run.levels.is_some() {
            return Err(AppError::Usage(
                "--search-users and --load-levels are two ways to run the steps: choose one".into(),
            ));
        }
        run.search = Some(SearchSpec::specmail("users"));
    }
    Ok(run)
}

/// The servers a mail run uses, how to reach and log into them, and what the record says of
/// them.
struct Servers {
    endpoints: Endpoints,
    credentials: Vec<(String, String)>,
    accounts_shown: String,
    server: String,
    durability: BTreeMap<String, String>,
    tls_settings: BTreeMap<String, String>,
    throwaway: Option<Throwaway>,
}

/// Without `--target`: a throwaway Dovecot with accounts made for the run.
fn throwaway_servers(
    args: &MailArgs,
    most: u64,
    seed: u64,
    uses_pop3: bool,
) -> Result<Servers, AppError> {
    for (given, option) in [(&args.smtp, "smtp"), (&args.pop3, "pop3")] {
        if given.is_some() {
            return Err(AppError::Usage(format!(
                "--{option} needs --target: without it perflab starts its own Dovecot and delivers by its LMTP"
            )));
        }
    }
    if args.users_file.is_some() || args.password_pattern.is_some() {
        return Err(AppError::Usage(
            "--users-file and --password-pattern are for a --target server; the throwaway Dovecot gets accounts made for the run".into(),
        ));
    }
    let credentials = throwaway_accounts(most, seed);
    let secure = args.tls || args.starttls;
    if args.tls_options.cacert.is_some() || args.tls_options.cert.is_some() {
        return Err(AppError::Usage(
            "--cacert, --cert and --key are for a --target server: the throwaway Dovecot's certificate is perflab's own, and trusted as such".into(),
        ));
    }
    if args.tls_options.insecure && !secure {
        return Err(AppError::Usage(
            "--insecure is for TLS: add --tls or --starttls, or leave it out".into(),
        ));
    }
    let t = Throwaway::start_with(&credentials, secure).map_err(AppError::Usage)?;
    // The throwaway's certificate is signed by a CA perflab made for it: trusted in full,
    // host name included, unless --insecure says not to check.
    let trust = match (t.ca_certificate(), args.tls_options.insecure) {
        (Some(ca), false) => Trust::full(Roots::File(ca)),
        _ => Trust::unverified(),
    };
    let local = |addr: SocketAddr, security: Security| Endpoint {
        addr,
        host: "localhost".into(),
        security,
        trust: trust.clone(),
    };
    // LMTP has no implicit-TLS port: it is upgraded by STARTTLS where Dovecot's LMTP
    // offers it, else it stays plain and the record says so.
    let lmtp_tls = secure && offers_starttls(&local(t.lmtp(), Security::Plain), Dialect::Lmtp);
    let (imap, pop3) = if args.tls {
        (
            local(t.imaps(), Security::Implicit),
            local(t.pop3s(), Security::Implicit),
        )
    } else if args.starttls {
        (
            local(t.imap(), Security::StartTls),
            local(t.pop3(), Security::StartTls),
        )
    } else {
        (
            local(t.imap(), Security::Plain),
            local(t.pop3(), Security::Plain),
        )
    };
    let submit_security = if lmtp_tls {
        Security::StartTls
    } else {
        Security::Plain
    };
    let mut endpoints = Endpoints {
        imap,
        pop3,
        submit: local(t.lmtp(), submit_security),
        dialect: Dialect::Lmtp,
        helo: "perflab".into(),
        domain: args.domain.clone(),
        pop3_pipelining: false,
    };
    let mut tls_settings = t.tls_settings();
    if secure {
        let agreed = introduce(&endpoints, None, uses_pop3, true)?;
        tls_settings.insert("negotiated".into(), agreed.join("; "));
        tls_settings.insert(
            "lmtp".into(),
            if lmtp_tls {
                "STARTTLS (Dovecot's LMTP offers it with ssl = yes)"
            } else {
                "plain: Dovecot's LMTP did not offer STARTTLS"
            }
            .into(),
        );
    }
    endpoints.pop3_pipelining = args.pipelining == Switch::On && pop3_pipelines(&endpoints.pop3);
    let durability = t.settings();
    let server = t.version.clone();
    Ok(Servers {
        endpoints,
        credentials,
        accounts_shown: "user1.. (made for the run)".to_string(),
        server,
        durability,
        tls_settings,
        throwaway: Some(t),
    })
}

/// With `--target`: the user's servers, checked before anything runs.
fn target_servers(
    args: &MailArgs,
    target: &str,
    most: u64,
    uses_pop3: bool,
) -> Result<Servers, AppError> {
    if args.tls {
        return Err(AppError::Usage(
        "--tls is for the throwaway Dovecot: with --target, give imaps://, pop3s:// and smtps:// URLs (implicit TLS), or --starttls".into(),
    ));
    }
    let imap = url("target", target, &IMAP_SCHEMES)?;
    let trust = args.tls_options.trust();
    let smtp_text = args
        .smtp
        .clone()
        .unwrap_or_else(|| format!("lmtp://{}:24", imap.host));
    let submit = url("smtp", &smtp_text, &SUBMIT_SCHEMES)?;
    let pop3_text = args.pop3.clone().unwrap_or_else(|| {
        if imap.implicit_tls() {
            format!("pop3s://{}:995", imap.host)
        } else {
            format!("pop3://{}:110", imap.host)
        }
    });
    let pop3 = url("pop3", &pop3_text, &POP3_SCHEMES)?;
    let any_tls = args.starttls || [&imap, &submit, &pop3].iter().any(|u| u.implicit_tls());
    if args.tls_options.any() && !any_tls {
        return Err(AppError::Usage(
            "--cacert, --insecure, --cert and --key are for TLS: give imaps://, pop3s:// or smtps:// URLs, or --starttls".into(),
        ));
    }
    let (credentials, shown) = accounts(args, most)?;
    let endpoints = Endpoints {
        imap: imap.endpoint(args.starttls, &trust),
        pop3: pop3.endpoint(args.starttls, &trust),
        submit: submit.endpoint(args.starttls, &trust),
        dialect: if submit.scheme == "lmtp" {
            Dialect::Lmtp
        } else {
            Dialect::Smtp
        },
        helo: "perflab".into(),
        domain: args.domain.clone(),
        pop3_pipelining: false,
    };
    let durability = BTreeMap::from([(
        "disclosed".to_string(),
        "unknown: perflab did not start this server; state its fsync settings beside the figures"
            .to_string(),
    )]);
    let agreed = introduce(&endpoints, credentials.first(), uses_pop3, false)?;
    let mut tls_settings = BTreeMap::new();
    if !agreed.is_empty() {
        tls_settings.insert("negotiated".to_string(), agreed.join("; "));
    }
    let mut endpoints = endpoints;
    endpoints.pop3_pipelining =
        args.pipelining == Switch::On && uses_pop3 && pop3_pipelines(&endpoints.pop3);
    Ok(Servers {
        endpoints,
        credentials,
        accounts_shown: shown,
        server: String::new(),
        durability,
        tls_settings,
        throwaway: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_take_their_default_ports_and_refuse_credentials() {
        let u = url("target", "imap://127.0.0.1", &IMAP_SCHEMES).unwrap();
        assert_eq!(u.addr.port(), 143);
        let u = url("smtp", "LMTP://127.0.0.1:2424/", &SUBMIT_SCHEMES).unwrap();
        assert_eq!((u.scheme.as_str(), u.addr.port()), ("lmtp", 2424));
        for bad in [
            "127.0.0.1:143",
            "imap://u:p@127.0.0.1",
            "imap://127.0.0.1:x",
            "imap://127.0.0.1/INBOX",
            "pop3s://127.0.0.1",
        ] {
            assert!(url("target", bad, &IMAP_SCHEMES).is_err(), "{bad}");
        }
        assert!(url("smtp", "lmtps://127.0.0.1", &SUBMIT_SCHEMES).is_err());
    }

    #[test]
    fn tls_schemes_are_implicit_and_starttls_upgrades_the_plain_ones() {
        let cases = [
            ("imaps://127.0.0.1", &IMAP_SCHEMES[..], 993),
            ("pop3s://127.0.0.1", &POP3_SCHEMES[..], 995),
            ("smtps://127.0.0.1", &SUBMIT_SCHEMES[..], 465),
        ];
        for (text, schemes, port) in cases {
            let u = url("x", text, schemes).unwrap();
            assert_eq!(u.addr.port(), port, "{text}");
            for starttls in [false, true] {
                let e = u.endpoint(starttls, &Trust::unverified());
                assert_eq!(e.security, Security::Implicit, "{text}");
                assert_eq!(e.host, "127.0.0.1");
            }
        }
        let u = url("target", "IMAPS://localhost:1993", &IMAP_SCHEMES).unwrap();
        assert_eq!(
            (
                u.addr.port(),
                u.host.as_str(),
                u.endpoint(false, &Trust::unverified()).url("imap")
            ),
            (1993, "localhost", format!("imaps://{}", u.addr))
        );
        for (text, schemes) in [
            ("imap://127.0.0.1", &IMAP_SCHEMES[..]),
            ("pop3://127.0.0.1", &POP3_SCHEMES[..]),
            ("smtp://127.0.0.1", &SUBMIT_SCHEMES[..]),
            ("lmtp://127.0.0.1", &SUBMIT_SCHEMES[..]),
        ] {
            let u = url("x", text, schemes).unwrap();
            assert_eq!(
                u.endpoint(false, &Trust::unverified()).security,
                Security::Plain,
                "{text}"
            );
            assert_eq!(
                u.endpoint(true, &Trust::unverified()).security,
                Security::StartTls,
                "{text}"
            );
        }
    }
}
