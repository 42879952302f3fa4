//! Mail: SPECmail-style users on a mail server. Their sessions (SMTP or LMTP submissions,
//! IMAP checks and syncs, POP3 sessions) arrive open loop at the rate the user count
//! implies in the peak hour; every command is timed, every message is accounted for, and
//! the step passes its quality of service or not. SPECmail was retired in 2011: this is
//! "SPECmail-style", never a SPECmail result.
//!
//! - this file: [`MailSpec`] and its [`Workload`] impl: users sweep, the offered rate,
//!   the step's ledger and watchers, the scan and the figures after each step, the checks
//!   (`mail_accounting`, `mail_qos`), the server's CPU and the device under its mail.
//! - [`profile`]: a user's day and the session mix; [`message`]: sizes, MIME structure,
//!   tokens and body digests; [`ledger`]: every copy of every message, and what became of
//!   it; [`session`]: one worker's sessions; [`watcher`]: IDLE readers that time delivery;
//!   [`audit`]: the scan after the step.
//! - [`wire`], [`smtp`], [`pop3`], [`imap`]: perflab's own small clients; [`endpoint`]:
//!   where each server listens and whether its connections use TLS (implicit, as IMAPS,
//!   POP3S and SMTPS, or STARTTLS), which every client, session, watcher and the scan obey.
//! - [`server`]: the throwaway Dovecot (with a self-signed certificate for `--tls` and
//!   `--starttls`).

pub mod args;
pub mod audit;
pub mod cmd;
pub mod endpoint;
pub mod figures;
pub mod imap;
pub mod kind;
pub mod ledger;
pub mod message;
pub mod pop3;
pub mod present;
pub mod profile;
pub mod server;
pub mod session;
pub mod smtp;
pub mod watcher;
pub mod wire;

pub use kind::KIND;

use super::{OpError, Prepared, Session, SessionFactory, Workload};
use crate::record::{Check, Headline, StepResult, Trial, Warning, step_number};
use crate::vocab::{Axis, StepPoint, Sweep};
use crate::workload::Context;
use ledger::Ledger;
use message::Sizes;
use profile::Profile;
use serde::Serialize;
use session::{Endpoints, MailSession, Plan, Qos};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use watcher::Watchers;

/// How long the watchers may take, after a step, to see the messages accepted at its end.
const WATCH_GRACE: Duration = Duration::from_secs(5);
/// SPECmail's criteria: the share of commands (and deliveries) that must be within their
/// limit, and the share of sessions that may fail.
pub const QOS_SHARE: f64 = 0.95;
pub const QOS_ERRORS: f64 = 0.01;

/// The throwaway server, shared with the supervisor that restarts it if it dies.
pub type SharedServer = Arc<Mutex<server::Throwaway>>;

#[derive(Debug, Clone, Serialize)]
pub struct MailSpec {
    /// The IMAP server, without secrets (`imaps://` for implicit TLS).
    pub target: String,
    /// Where messages are submitted (`lmtp://...`, `smtp://...`, `smtps://...`).
    pub submit: String,
    pub pop3: String,
    /// Each server's TLS, by protocol (`imap`, `pop3`, `submit`): `off`, `implicit` or
    /// `starttls`.
    pub tls: BTreeMap<String, String>,
    /// How TLS was set up, when any connection uses it: the client's settings (rustls,
    /// certificate not verified, session resumption), what the server agreed, and the
    /// throwaway's certificate and protocols.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tls_settings: BTreeMap<String, String>,
    /// The server's name and version (`Dovecot 2.3.19.1`) when perflab knows it.
    pub server: String,
    /// Whether perflab started the server for this run.
    pub throwaway: bool,
    /// Users at each step; sweeps.
    pub users: Sweep<u64>,
    pub profile: Profile,
    pub message_size: String,
    pub mean_message_bytes: f64,
    /// Users whose INBOX a watcher reads in IDLE (their copies get a delivery time).
    pub watchers: u32,
    /// Share of the messages sent to a watched user (as one of their recipients).
    pub watched_share: f64,
    /// Whether each step is checked against the quality of service.
    pub qos: bool,
    pub command_limit_ns: u64,
    pub delivery_limit_ns: u64,
    /// How the accounts were made (the names' pattern; passwords are never recorded).
    pub accounts: String,
    pub domain: String,
    /// Whether POP3 sessions pipeline (`--pipelining` on and the server advertises it).
    pub pop3_pipelining: bool,
    /// The settings that decide whether an acknowledged message survives a crash.
    pub durability: BTreeMap<String, String>,
    pub op_timeout_ns: u64,
    #[serde(skip)]
    pub endpoints: Endpoints,
    /// (name, password), as many as the largest step has users.
    #[serde(skip)]
    pub credentials: Arc<Vec<(String, String)>>,
    #[serde(skip)]
    pub sizes: Sizes,
    #[serde(skip)]
    pub throwaway_server: Option<SharedServer>,
    /// The step in progress: its plan and watchers.
    #[serde(skip)]
    pub step: Arc<Mutex<Option<StepState>>>,
    /// Checks of finished trials, for their step.
    #[serde(skip)]
    pub checks: Arc<Mutex<Vec<Check>>>,
    /// Steps begun, for each step's token tag.
    #[serde(skip)]
    pub steps_begun: Arc<AtomicU64>,
    /// Times the server was found dead and restarted during the run.
    #[serde(skip)]
    pub revived: Arc<AtomicU64>,
    /// Why the server could not be started again, once it could not: the supervisor stops
    /// trying rather than hold the server for the rest of the run.
    #[serde(skip)]
    pub revive_failure: Arc<Mutex<Option<String>>>,
    /// The run's seed, for the mailboxes' contents.
    #[serde(skip)]
    pub seed: u64,
}

/// A step's shared state.
#[derive(Debug)]
pub struct StepState {
    pub plan: Arc<Plan>,
    pub watchers: Option<Watchers>,
}

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watchers")
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MailSpec {
    fn users_at(&self, point: &StepPoint) -> u32 {
        self.users.at(point).min(self.credentials.len() as u64) as u32
    }

    /// The step's plan: who reads by POP3, who is watched, a fresh ledger.
    fn plan(&self, users: u32, seed: u64) -> Plan {
        let pop3_users = ((f64::from(users) * self.profile.pop3_users).round() as u32).min(users);
        let imap_users = users - pop3_users;
        // Watch at most half the IMAP users: the others are the sessions'.
        let watched = self.watchers.min(imap_users / 2);
        let watched_from = users - watched;
        let step = self.steps_begun.fetch_add(1, Ordering::Relaxed);
        // Unique to this run (the clock and the process), not only to its seed: a server
        // keeps earlier runs' mail, whose tokens must never be taken for this step's.
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 40)
            ^ seed;
        let tag = format!("{:012x}s{step}", nonce & 0xffff_ffff_ffff);
        Plan {
            endpoints: self.endpoints.clone(),
            accounts: Arc::clone(&self.credentials),
            users,
            pop3_users,
            watched_from,
            watched_share: self.watched_share,
            profile: self.profile.clone(),
            sizes: self.sizes.clone(),
            ledger: Arc::new(Ledger::new(
                tag,
                (watched_from..users).collect::<BTreeSet<_>>(),
            )),
            qos: Qos::default(),
            handshakes: session::Handshakes::default(),
            command_limit: Duration::from_nanos(self.command_limit_ns),
            timeout: Duration::from_nanos(self.op_timeout_ns),
        }
    }

    /// Restarts the throwaway server if it died; counted for the warning.
    fn revive(&self) -> Result<(), String> {
        if let Some(s) = &self.throwaway_server
            && lock(s).revive()?
        {
            self.revived.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn server_pid(&self) -> Option<u32> {
        self.throwaway_server.as_ref().and_then(|s| lock(s).pid())
    }

    /// The figures and checks of a finished trial.
    fn account(&self, users: u32, state: StepState, trial: &mut Trial) {
        let StepState { plan, watchers } = state;
        if let Some(w) = watchers {
            w.finish(&plan, WATCH_GRACE);
        }
        let revive = self.revive();
        let scan = revive.and_then(|()| audit::scan(&plan));
        let mut delivery = ledger::delivery_histogram();
        let limit = Duration::from_nanos(self.delivery_limit_ns);
        let t = plan.ledger.tally(limit, &mut delivery);
        let f = &mut trial.figures;
        let kind_rate = |kinds: &[&str]| -> f64 {
            trial
                .groups
                .iter()
                .filter(|g| g.by == "kind" && kinds.contains(&g.key.as_str()))
                .map(|g| g.ops_per_sec)
                .sum()
        };
        let smtp_rate = kind_rate(&["smtp"]);
        let imap_rate = kind_rate(&["imap_check", "imap_sync"]);
        f.insert("sessions_per_hour".into(), trial.ops_per_sec * 3600.0);
        f.insert("imap_sessions_per_hour".into(), imap_rate * 3600.0);
        f.insert("messages_per_min".into(), smtp_rate * 60.0);
        let copies_per_message = if t.messages > 0 {
            t.accepted as f64 / t.messages as f64
        } else {
            0.0
        };
        f.insert(
            "deliveries_per_min".into(),
            smtp_rate * 60.0 * copies_per_message,
        );
        if t.watched > 0 {
            f.insert(
                "delivery_on_time_pct".into(),
                100.0 * t.on_time as f64 / t.watched as f64,
            );
        }
        if !delivery.is_empty() {
            f.insert(
                "delivery_p95_ns".into(),
                delivery.value_at_quantile(0.95) as f64,
            );
        }
        // The server's CPU per user-hour: what one user costs it, over an hour of peak.
        if let Some(cpu) = f.remove("server_cpu_per_sec")
            && users > 0
        {
            f.insert(
                "server_cpu_per_user_hour_ns".into(),
                cpu * 3600.0 * 1e9 / f64::from(users),
            );
        }
        let deliveries_per_sec = smtp_rate * copies_per_message;
        if !trial.devices.is_empty() && deliveries_per_sec > 0.0 {
            let flushes: f64 = trial
                .devices
                .iter()
                .map(|d| d.activity.flushes_per_sec)
                .sum();
            f.insert(
                "device_flushes_per_delivery".into(),
                flushes / deliveries_per_sec,
            );
        }
        if let Some(ns) = trial.resources.process_cpu_ns_per_op {
            f.insert("client_cpu_per_session_ns".into(), ns);
        }
        // TLS: how many of the sessions' handshakes resumed an earlier session.
        let full = plan.handshakes.full.load(Ordering::Relaxed);
        let resumed = plan.handshakes.resumed.load(Ordering::Relaxed);
        if full + resumed > 0 {
            f.insert(
                "tls_resumed_pct".into(),
                100.0 * resumed as f64 / (full + resumed) as f64,
            );
        }
        // Quality of service: the worst command's share over its limit, the errors.
        let counts = plan.qos.snapshot();
        let worst = counts
            .iter()
            .filter(|(_, c)| c[0] > 0)
            .map(|(k, c)| (*k, c[1] as f64 / c[0] as f64))
            .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let commands: u64 = counts.values().map(|c| c[0]).sum();
        let command_errors: u64 = counts.values().map(|c| c[2]).sum();
        f.insert("commands_over_limit_pct".into(), 100.0 * worst.1);
        // A session the schedule had due but no worker started before the step ended is a
        // user turned away: it fails like one that broke (an overloaded server, or a
        // generator short of workers, must not pass by leaving its backlog unstarted).
        let missed = trial.schedule.as_ref().map_or(0, |s| s.missed_ops);
        let sessions = trial.ops + trial.errors + missed;
        let error_share = if sessions > 0 {
            (trial.errors + missed) as f64 / sessions as f64
        } else {
            0.0
        };
        f.insert("session_errors_pct".into(), 100.0 * error_share);
        let command_errors_permille = if commands > 0 {
            (1000.0 * command_errors as f64 / commands as f64).round() as i64
        } else {
            0
        };
        let mut checks = vec![accounting_check(&t, scan, plan.ledger.unknown())];
        if self.qos {
            let q = QosFigures {
                worst,
                error_share,
                missed,
                command_errors_permille,
            };
            checks.push(self.qos_check(users, &t, &q));
        }
        lock(&self.checks).extend(checks);
    }

    /// SPECmail's quality of service for a step: 95% of each command within its limit, 95%
    /// of the watched messages delivered in time, fewer than 1% of sessions failed.
    fn qos_check(&self, users: u32, t: &ledger::Tally, q: &QosFigures) -> Check {
        let QosFigures {
            worst,
            error_share,
            missed,
            command_errors_permille,
        } = *q;
        let on_time = if t.watched > 0 {
            t.on_time as f64 / t.watched as f64
        } else {
            1.0
        };
        let limit_s = self.command_limit_ns as f64 / 1e9;
        let mut broken = Vec::new();
        if worst.1 > 1.0 - QOS_SHARE {
            broken.push(format!(
                "{:.1}% of {} over {limit_s} s",
                worst.1 * 100.0,
                worst.0
            ));
        }
        if on_time < QOS_SHARE {
            broken.push(format!(
                "{:.1}% of the watched messages delivered within {} s",
                on_time * 100.0,
                self.delivery_limit_ns / 1_000_000_000
            ));
        }
        if error_share >= QOS_ERRORS {
            broken.push(if missed > 0 {
                format!(
                    "{:.2}% of the sessions failed or never started ({missed} due sessions not started by the step's end)",
                    error_share * 100.0
                )
            } else {
                format!("{:.2}% of the sessions failed", error_share * 100.0)
            });
        }
        Check {
            name: "mail_qos".into(),
            shard: None,
            passed: broken.is_empty(),
            figures: BTreeMap::from([
                ("users".to_string(), i64::from(users)),
                (
                    "worst_command_over_limit_permille".to_string(),
                    (worst.1 * 1000.0).round() as i64,
                ),
                (
                    "delivered_on_time_permille".to_string(),
                    (on_time * 1000.0).round() as i64,
                ),
                (
                    "session_errors_permille".to_string(),
                    (error_share * 1000.0).round() as i64,
                ),
                (
                    "command_errors_permille".to_string(),
                    command_errors_permille,
                ),
                ("delivery_watched".to_string(), t.watched as i64),
                ("delivery_seen".to_string(), t.watched_seen as i64),
            ]),
            summary: if broken.is_empty() {
                // A short step at few users may send no message to a watched user: its
                // delivery is not judged (nothing says it was late), and the summary says so.
                let delivery = if t.watched == 0 {
                    "delivery not timed (no message to a watched user in the step: run longer or raise --watched-share)".to_string()
                } else {
                    format!(
                        "delivery within {} s for {:.1}%",
                        self.delivery_limit_ns / 1_000_000_000,
                        on_time * 100.0
                    )
                };
                format!(
                    "{users} users: every command within {limit_s} s for at least 95%, {delivery}, {:.2}% errors",
                    error_share * 100.0
                )
            } else {
                format!("{users} users: {}", broken.join("; "))
            },
        }
    }
}

/// A step's quality-of-service figures, for [`MailSpec::qos_check`].
struct QosFigures {
    /// The command most often over its limit, and the share of it that was.
    worst: (&'static str, f64),
    /// Sessions failed or never started, of those due.
    error_share: f64,
    /// Due sessions no worker started before the step ended.
    missed: u64,
    command_errors_permille: i64,
}

/// The accounting check: every accepted copy found once, intact.
fn accounting_check(t: &ledger::Tally, scan: Result<audit::Scan, String>, unknown: u64) -> Check {
    let figures = BTreeMap::from([
        ("sent".to_string(), t.copies as i64),
        ("accepted".to_string(), t.accepted as i64),
        ("refused".to_string(), t.refused as i64),
        ("in_doubt".to_string(), (t.in_doubt + t.pending) as i64),
        ("found".to_string(), t.found as i64),
        ("lost".to_string(), t.lost as i64),
        ("duplicated".to_string(), t.duplicated as i64),
        ("corrupt".to_string(), t.bodies_corrupt as i64),
        ("compared".to_string(), t.bodies_checked as i64),
        ("misdelivered".to_string(), unknown as i64),
    ]);
    let scan = match scan {
        Ok(s) => s,
        Err(e) => {
            return Check {
                name: "mail_accounting".into(),
                shard: None,
                passed: false,
                figures,
                summary: format!("could not run: {e}"),
            };
        }
    };
    let passed = t.lost == 0 && t.duplicated == 0 && t.bodies_corrupt == 0 && unknown == 0;
    let summary = if passed {
        format!(
            "{} copies sent = {} accepted + {} refused + {} in doubt; every accepted copy found once ({} bodies compared; {} mailboxes scanned in {:.1}s)",
            t.copies,
            t.accepted,
            t.refused,
            t.in_doubt + t.pending,
            t.bodies_checked,
            scan.mailboxes,
            scan.elapsed.as_secs_f64()
        )
    } else {
        format!(
            "{} accepted copies lost, {} duplicated, {} with a corrupt body, {} in a mailbox they were not sent to (of {} sent, {} accepted)",
            t.lost, t.duplicated, t.bodies_corrupt, unknown, t.copies, t.accepted
        )
    };
    Check {
        name: "mail_accounting".into(),
        shard: None,
        passed,
        figures,
        summary,
    }
}

/// Restarts the throwaway server whenever it dies, until dropped.
struct Supervisor {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Workload for MailSpec {
    fn name(&self) -> &'static str {
        "mail"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn axes(&self) -> Vec<&dyn Axis> {
        vec![&self.users]
    }

    fn headline(&self) -> Headline {
        Headline {
            metric: "sessions_per_hour".into(),
            op_name: "sessions".into(),
            higher_is_better: true,
        }
    }

    fn offered_rate(&self, point: &StepPoint) -> Option<f64> {
        Some(self.profile.rate(u64::from(self.users_at(point))))
    }

    fn sessions(
        &self,
        point: &StepPoint,
        seed: u64,
        _ctx: &Context,
    ) -> Result<SessionFactory, OpError> {
        self.revive().map_err(OpError::other)?;
        let users = self.users_at(point);
        let plan = Arc::new(self.plan(users, seed));
        let watchers = Watchers::start(&plan).map_err(OpError::other)?;
        *lock(&self.step) = Some(StepState {
            plan: Arc::clone(&plan),
            watchers: Some(watchers),
        });
        Ok(Arc::new(move |worker, _workers| {
            Ok(Box::new(MailSession::new(Arc::clone(&plan), seed, worker)) as Box<dyn Session>)
        }))
    }

    fn derive(&self, point: &StepPoint, trial: &mut Trial) {
        let Some(state) = lock(&self.step).take() else {
            return;
        };
        self.account(self.users_at(point), state, trial);
    }

    fn prepare(&self, ctx: &Context, note: &dyn Fn(&str)) -> Result<Prepared, OpError> {
        let Some(server) = &self.throwaway_server else {
            return Ok(Box::new(()));
        };
        let users: Vec<String> = self.credentials.iter().map(|c| c.0.clone()).collect();
        let per_user = self.profile.mailbox_messages;
        if per_user > 0 {
            note(&format!(
                "mail: filling {} mailboxes with {per_user} messages each ({} on average)",
                users.len(),
                crate::vocab::units::format_bytes(self.sizes.mean() as u64)
            ));
            let started = std::time::Instant::now();
            let s = lock(server);
            let progress = |share: f64| note(&format!("  {:.0}%", share * 100.0));
            let token = ctx.stop.clone();
            let stop = move || token.is_set();
            let bytes = s
                .populate(&users, per_user, &self.sizes, self.seed, &progress, &stop)
                .map_err(OpError::other)?;
            note(&format!(
                "mail: {} messages, {} in {:.1}s",
                users.len() as u64 * u64::from(per_user),
                crate::vocab::units::format_bytes(bytes),
                started.elapsed().as_secs_f64()
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, watched, revived, failure) = (
            Arc::clone(&stop),
            Arc::clone(server),
            Arc::clone(&self.revived),
            Arc::clone(&self.revive_failure),
        );
        let handle = std::thread::Builder::new()
            .name("mail-supervisor".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(100));
                    // Bound by the server's start timeout; one failure ends the watch (the
                    // sessions fail from then on, and the step's warning says why).
                    let outcome = lock(&watched).revive();
                    match outcome {
                        Ok(true) => {
                            revived.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(false) => {}
                        Err(e) => {
                            *lock(&failure) = Some(e);
                            return;
                        }
                    }
                }
            })
            .map_err(|e| OpError::other(format!("cannot start the server's supervisor: {e}")))?;
        Ok(Box::new(Supervisor {
            stop,
            handle: Some(handle),
        }))
    }

    fn devices(&self) -> Vec<String> {
        self.throwaway_server
            .as_ref()
            .and_then(|s| crate::env::disk::device_of(&lock(s).mail_dir()))
            .map(|d| vec![d.name])
            .unwrap_or_default()
    }

    fn server_counters(&self, _ctx: &Context) -> Vec<(String, f64)> {
        let cpu = match self.server_pid() {
            Some(pid) => crate::env::usage::cpu_time_of_tree(pid),
            None if self.is_local() => crate::env::usage::cpu_time_of(&DOVECOT_PROCESSES),
            None => None,
        };
        cpu.map(|d| vec![("server_cpu".to_string(), d.as_secs_f64())])
            .unwrap_or_default()
    }

    fn finish_step(&self, step: &mut StepResult, _ctx: &Context) {
        step.checks.extend(lock(&self.checks).drain(..));
    }

    fn step_warnings(&self, step: &StepResult) -> Vec<Warning> {
        let mut out: Vec<Warning> = step
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| Warning {
                code: if c.name == "mail_qos" {
                    "qos_not_met".into()
                } else {
                    "mail_lost".into()
                },
                message: if c.name == "mail_qos" {
                    format!(
                        "step {} misses the quality of service: {}",
                        step_number(step.index),
                        c.summary
                    )
                } else {
                    format!(
                        "step {}: MAIL NOT ACCOUNTED FOR: {}",
                        step_number(step.index),
                        c.summary
                    )
                },
                step: Some(step.index),
            })
            .collect();
        if let Some(why) = lock(&self.revive_failure).take() {
            out.push(Warning {
                code: "server_down".into(),
                message: format!(
                    "the throwaway Dovecot died during step {} and could not be started again: {why}",
                    step_number(step.index)
                ),
                step: Some(step.index),
            });
        }
        let revived = self.revived.swap(0, Ordering::Relaxed);
        if revived > 0 {
            out.push(Warning {
                code: "server_restarted".into(),
                message: format!(
                    "the throwaway Dovecot died during step {} and was started again ({revived} times); the step's accounting says whether acknowledged mail survived",
                    step_number(step.index)
                ),
                step: Some(step.index),
            });
        }
        out
    }

    fn scale_out(&self) -> super::ScaleOut {
        super::ScaleOut::Unsupported("mail does not run under MPI yet")
    }
}

/// Dovecot's processes, by command name, for a local server perflab did not start.
const DOVECOT_PROCESSES: [&str; 10] = [
    "dovecot",
    "imap",
    "pop3",
    "lmtp",
    "imap-login",
    "pop3-login",
    "auth",
    "anvil",
    "log",
    "stats",
];

impl MailSpec {
    /// Whether the IMAP server is on this machine.
    fn is_local(&self) -> bool {
        self.endpoints.imap.addr.ip().is_loopback()
    }
}
