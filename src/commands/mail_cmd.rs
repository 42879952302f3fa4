//! `perflab mail`: SPECmail-style users on an IMAP/POP3 server and its submission server
//! (`--target`, `--smtp`, `--pop3`), or on a throwaway Dovecot started for the run.
//!
//! Everything is checked before the server is started: the profile's numbers, the sizes,
//! the accounts. With a target, users come from `--user-pattern` and `--password-pattern`
//! (or `$PERFLAB_MAIL_PASSWORD`), or from `--users-file`; passwords are never printed or
//! recorded.

use super::AppError;
use super::build::{Defaults, build_spec};
use crate::cli::MailArgs;
use crate::spec::sweep::parse_u64;
use crate::spec::units::{parse_count, parse_duration};
use crate::spec::{Arrival, LoadSpec, RateScope, RunSpec, SpecError, Switch};
use crate::workload::WorkloadSpec;
use crate::workload::mail::MailSpec;
use crate::workload::mail::message::Sizes;
use crate::workload::mail::profile::Profile;
use crate::workload::mail::server::Throwaway;
use crate::workload::mail::session::Endpoints;
use crate::workload::mail::smtp::Dialect;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most users in one step: each is an account and a mailbox.
const MAX_USERS: u64 = 10_000_000;
/// The default sessions open at once: enough that arrivals rarely wait for a free one.
const DEFAULT_THREADS: &str = "32";

/// A server named by a URL: its scheme, address and host as written.
struct Url {
    scheme: String,
    addr: SocketAddr,
    host: String,
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

/// Checks that the servers answer and the first user can log in, in one line if not.
fn introduce(e: &Endpoints, first: &(String, String), pop3: bool) -> Result<(), AppError> {
    use crate::workload::mail::{imap::ImapClient, pop3::Pop3Client, smtp::SmtpClient};
    let wait = Duration::from_secs(5);
    let fail =
        |what: String, err: &dyn std::fmt::Display| AppError::Usage(format!("{what}: {err}"));
    let mut c = ImapClient::open(e.imap, wait)
        .map_err(|err| fail(format!("--target imap://{}", e.imap), &err))?;
    c.login(&first.0, &first.1).map_err(|err| {
        fail(
            format!(
                "--target imap://{}: {} cannot log in (check the users and passwords)",
                e.imap, first.0
            ),
            &err,
        )
    })?;
    c.logout();
    let scheme = match e.dialect {
        Dialect::Lmtp => "lmtp",
        Dialect::Smtp => "smtp",
    };
    let mut s = SmtpClient::open(e.submit, e.dialect, wait)
        .map_err(|err| fail(format!("--smtp {scheme}://{}", e.submit), &err))?;
    s.hello(&e.helo)
        .map_err(|err| fail(format!("--smtp {scheme}://{}", e.submit), &err))?;
    s.quit();
    if pop3 {
        let mut p = Pop3Client::open(e.pop3, wait)
            .map_err(|err| fail(format!("--pop3 pop3://{}", e.pop3), &err))?;
        p.login(&first.0, &first.1).map_err(|err| {
            fail(
                format!("--pop3 pop3://{}: {} cannot log in", e.pop3, first.0),
                &err,
            )
        })?;
        let _ = p.quit();
    }
    Ok(())
}

/// Whether the POP3 server advertises PIPELINING (RFC 2449 CAPA); false if it cannot say.
fn pop3_pipelines(addr: SocketAddr) -> bool {
    use crate::workload::mail::pop3::Pop3Client;
    let Ok(mut c) = Pop3Client::open(addr, Duration::from_secs(5)) else {
        return false;
    };
    let pipelines = c
        .capa()
        .is_ok_and(|caps| caps.iter().any(|c| c.eq_ignore_ascii_case("PIPELINING")));
    let _ = c.quit();
    pipelines
}

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
    let (endpoints, credentials, accounts_shown, server, durability, throwaway) = match &args.target
    {
        None => {
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
            let t = Throwaway::start(&credentials).map_err(AppError::Usage)?;
            let endpoints = Endpoints {
                imap: t.imap(),
                pop3: t.pop3(),
                submit: t.lmtp(),
                dialect: Dialect::Lmtp,
                helo: "perflab".into(),
                domain: args.domain.clone(),
                pop3_pipelining: args.pipelining == Switch::On && pop3_pipelines(t.pop3()),
            };
            let durability = t.settings();
            let server = t.version.clone();
            (
                endpoints,
                credentials,
                "user1.. (made for the run)".to_string(),
                server,
                durability,
                Some(t),
            )
        }
        Some(target) => {
            let imap = url("target", target, &[("imap", 143)])?;
            let smtp_text = args
                .smtp
                .clone()
                .unwrap_or_else(|| format!("lmtp://{}:24", imap.host));
            let submit = url("smtp", &smtp_text, &[("smtp", 25), ("lmtp", 24)])?;
            let pop3_text = args
                .pop3
                .clone()
                .unwrap_or_else(|| format!("pop3://{}:110", imap.host));
            let pop3 = url("pop3", &pop3_text, &[("pop3", 110)])?;
            let (credentials, shown) = accounts(args, most)?;
            let endpoints = Endpoints {
                imap: imap.addr,
                pop3: pop3.addr,
                submit: submit.addr,
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
                    "unknown: perflab did not start this server; state its fsync settings beside the figures".to_string(),
                )]);
            let uses_pop3 = profile.per_user_hour(crate::workload::mail::profile::Kind::Pop3) > 0.0;
            introduce(&endpoints, &credentials[0], uses_pop3)?;
            let mut endpoints = endpoints;
            endpoints.pop3_pipelining =
                args.pipelining == Switch::On && uses_pop3 && pop3_pipelines(endpoints.pop3);
            (
                endpoints,
                credentials,
                shown,
                String::new(),
                durability,
                None,
            )
        }
    };
    let shown = |scheme: &str, a: SocketAddr| format!("{scheme}://{a}");
    let submit_scheme = match endpoints.dialect {
        Dialect::Lmtp => "lmtp",
        Dialect::Smtp => "smtp",
    };
    let spec = MailSpec {
        target: shown("imap", endpoints.imap),
        submit: shown(submit_scheme, endpoints.submit),
        pop3: shown("pop3", endpoints.pop3),
        server,
        throwaway: throwaway.is_some(),
        users,
        mean_message_bytes: sizes.mean(),
        message_size: sizes.shown().to_string(),
        profile,
        watchers,
        watched_share,
        qos: args.qos,
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
        seed,
    };
    let mut run = build_spec(
        &args.run,
        WorkloadSpec::Mail(Box::new(spec)),
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
    };
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_take_their_default_ports_and_refuse_credentials() {
        let u = url("target", "imap://127.0.0.1", &[("imap", 143)]).unwrap();
        assert_eq!(u.addr.port(), 143);
        let u = url(
            "smtp",
            "LMTP://127.0.0.1:2424/",
            &[("smtp", 25), ("lmtp", 24)],
        )
        .unwrap();
        assert_eq!((u.scheme.as_str(), u.addr.port()), ("lmtp", 2424));
        for bad in [
            "127.0.0.1:143",
            "imaps://127.0.0.1",
            "imap://u:p@127.0.0.1",
            "imap://127.0.0.1:x",
            "imap://127.0.0.1/INBOX",
        ] {
            assert!(url("target", bad, &[("imap", 143)]).is_err(), "{bad}");
        }
    }
}
