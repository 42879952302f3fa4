//! One worker's mail sessions: each op is one whole session of a user (an SMTP or LMTP
//! submission, a short IMAP check, a caching client's IMAP sync, a POP3 session), of a
//! kind drawn from the profile's mix, on connections opened for it and closed after, as
//! mail clients do.
//!
//! The runner times the session from its intended start (the open-loop schedule); the
//! session times each command itself, into one group per command (`imap_select`,
//! `pop3_retr`, `smtp_data` ...), the first (the connect) from the session's intended
//! start too, and counts the commands over the quality-of-service
//! limit into the step's [`Qos`]. Every message sent is registered in the step's
//! [`Ledger`] before its submission and settled with the server's answers; every message
//! a reader sees is reported to it.
//!
//! Over TLS the handshake (and for STARTTLS the command's round trip) is a command group of
//! its own, `imap_tls`, `pop3_tls` or `smtp_tls`, taken out of the connect (or, for SMTP's
//! STARTTLS, the hello) it happened in, so the groups add up to the session without
//! overlapping. Each handshake is counted full or resumed for the step.

use super::endpoint::Endpoint;
use super::imap::{Fetched, ImapClient, uid_set};
use super::ledger::{Ident, Ledger, State};
use super::message::{self, Envelope, Sizes, body_of, token_of};
use super::pop3::Pop3Client;
use super::profile::{Kind, Profile};
use super::smtp::{Delivery, Dialect, SmtpClient};
use super::wire::MailError;
use crate::record::ErrorKind;
use crate::record::histogram::new_histogram;
use crate::workload::rng::Rng;
use crate::workload::{Figures, GroupTotals, OpError, OpOutcome, Session};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Headers a check fetches: what a mail client lists, and the token.
pub const HEADER_ITEMS: &str =
    "(UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE X-PERFLAB-TOKEN)])";
/// The token alone, for watchers and the scan.
pub const TOKEN_ITEMS: &str = "(UID BODY.PEEK[HEADER.FIELDS (X-PERFLAB-TOKEN)])";
/// Most new messages whose headers one session lists (a client shows the newest).
const LIST_MAX: usize = 50;
/// Most messages a sync downloads whole.
const DOWNLOAD_MAX: usize = 20;

/// Where the servers listen, and how their connections are secured.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub imap: Endpoint,
    pub pop3: Endpoint,
    pub submit: Endpoint,
    pub dialect: Dialect,
    /// The name perflab greets the submission server with.
    pub helo: String,
    /// The domain of every user's address.
    pub domain: String,
    /// Whether POP3 sessions pipeline (the server advertised PIPELINING, and
    /// `--pipelining` is on).
    pub pop3_pipelining: bool,
}

/// Commands over the limit, per command, over a step's sessions.
#[derive(Debug, Default)]
pub struct Qos {
    /// command -> (commands, over the limit, failed)
    counts: Mutex<BTreeMap<&'static str, [u64; 3]>>,
}

impl Qos {
    fn add(&self, local: &BTreeMap<&'static str, [u64; 3]>) {
        let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        for (k, v) in local {
            let e = c.entry(k).or_default();
            for i in 0..3 {
                e[i] += v[i];
            }
        }
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, [u64; 3]> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// TLS handshakes over a step's measured sessions: full, and resumed (an earlier session's
/// ticket or id, no certificate signature).
#[derive(Debug, Default)]
pub struct Handshakes {
    pub full: AtomicU64,
    pub resumed: AtomicU64,
}

/// What every session of a step shares.
#[derive(Debug)]
pub struct Plan {
    pub endpoints: Endpoints,
    /// Every account (name, password), the step's users first.
    pub accounts: Arc<Vec<(String, String)>>,
    /// Users in this step.
    pub users: u32,
    /// Users below this index read by POP3.
    pub pop3_users: u32,
    /// Users from this index on are watched (IDLE): sessions leave their mail alone.
    pub watched_from: u32,
    /// Share of the messages with a watched user among their recipients.
    pub watched_share: f64,
    pub profile: Profile,
    pub sizes: Sizes,
    pub ledger: Arc<Ledger>,
    pub qos: Qos,
    pub handshakes: Handshakes,
    /// A command slower than this is over the quality-of-service limit.
    pub command_limit: Duration,
    pub timeout: Duration,
}

impl Plan {
    pub fn address(&self, user: u32) -> String {
        format!("{}@{}", self.name(user), self.endpoints.domain)
    }

    pub fn name(&self, user: u32) -> &str {
        &self.accounts[user as usize].0
    }

    pub fn password(&self, user: u32) -> &str {
        &self.accounts[user as usize].1
    }
}

/// One worker's session state: its random stream, buffers and per-command figures.
pub struct MailSession {
    plan: Arc<Plan>,
    rng: Rng,
    mix: [(Kind, f64); 4],
    last: &'static str,
    commands: Vec<GroupTotals>,
    qos: BTreeMap<&'static str, [u64; 3]>,
    buf: Vec<u8>,
    fetched: Vec<Fetched>,
    bytes: u64,
    items: u64,
    /// TLS handshakes since measuring began: full, resumed.
    handshakes: [u64; 2],
    /// When the session in hand was due (the runner's intended start).
    due: Option<Instant>,
}

/// How a session failed: the command and the error.
fn failed(command: &str, e: &MailError) -> OpError {
    let kind = match e {
        _ if e.is_timeout() => ErrorKind::Timeout,
        MailError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            ErrorKind::Refused
        }
        MailError::Io(_) => ErrorKind::Reset,
        MailError::Refused(_) => ErrorKind::Server,
        MailError::Protocol(_) => ErrorKind::Protocol,
        MailError::Trust(_) => ErrorKind::Refused,
    };
    OpError::new(kind, format!("{command}: {e}"))
}

impl MailSession {
    pub fn new(plan: Arc<Plan>, seed: u64, worker: usize) -> MailSession {
        MailSession {
            mix: plan.profile.mix(),
            plan,
            rng: Rng::new(seed ^ (worker as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f)),
            last: "",
            commands: Vec::new(),
            qos: BTreeMap::new(),
            buf: Vec::new(),
            fetched: Vec::new(),
            bytes: 0,
            items: 0,
            handshakes: [0; 2],
            due: None,
        }
    }

    /// Where a session's first command is timed from: when the session was due, so that
    /// the time it waited for a worker counts against that command, as the runner counts it
    /// against the session (an open loop's backlog must show in the quality of service).
    fn first_command_start(&mut self) -> Instant {
        let now = Instant::now();
        self.due.take().filter(|d| *d < now).unwrap_or(now)
    }

    /// Records one command's time since `start` (and whether it failed), and passes its
    /// result on, with the command named in the error.
    fn note<T>(
        &mut self,
        command: &'static str,
        start: Instant,
        result: Result<T, MailError>,
    ) -> Result<T, OpError> {
        self.note_took(command, start.elapsed(), result)
    }

    /// [`Self::note`] for a command that opened a connection (or said hello on it) and
    /// may have done TLS meanwhile: the TLS, `tls` long, is recorded as `tls_command`, and
    /// `command` gets the rest of `took`. `resumed` says what kind the handshake was.
    fn note_with_tls<T>(
        &mut self,
        command: &'static str,
        tls_command: &'static str,
        took: Duration,
        tls: Option<(Duration, Option<bool>)>,
        result: Result<T, MailError>,
    ) -> Result<T, OpError> {
        let Some((tls, resumed)) = tls else {
            return self.note_took(command, took, result);
        };
        self.handshakes[usize::from(resumed == Some(true))] += 1;
        self.note_took(tls_command, tls, Ok(()))?;
        self.note_took(command, took.saturating_sub(tls), result)
    }

    /// Records one command that took `took`.
    fn note_took<T>(
        &mut self,
        command: &'static str,
        took: Duration,
        result: Result<T, MailError>,
    ) -> Result<T, OpError> {
        let over = took > self.plan.command_limit;
        let g = match self.commands.iter().position(|g| g.key == command) {
            Some(i) => &mut self.commands[i],
            None => {
                self.commands.push(GroupTotals {
                    by: "command",
                    key: command.to_string(),
                    label: command.to_string(),
                    ops: 0,
                    bytes: 0,
                    errors: 0,
                    latency: new_histogram(),
                    active: None,
                });
                self.commands.last_mut().expect("just pushed")
            }
        };
        let q = self.qos.entry(command).or_default();
        q[0] += 1;
        q[1] += u64::from(over);
        match result {
            Ok(v) => {
                g.ops += 1;
                g.latency.saturating_record(took.as_nanos() as u64);
                Ok(v)
            }
            Err(e) => {
                g.errors += 1;
                q[2] += 1;
                Err(failed(command, &e))
            }
        }
    }

    fn kind(&mut self) -> Kind {
        let u = self.rng.next_f64();
        self.mix
            .iter()
            .find(|m| u < m.1)
            .map_or(Kind::Smtp, |m| m.0)
    }

    /// A reading user of the kind: POP3 users are the first, watched users the last.
    fn reader(&mut self, pop3: bool) -> u32 {
        let p = &self.plan;
        let (lo, hi) = if pop3 {
            (0, p.pop3_users)
        } else {
            (p.pop3_users, p.watched_from)
        };
        if hi <= lo {
            // No user of that kind in this step (a tiny step): any user will do.
            return self.rng.below(u64::from(p.users.max(1))) as u32;
        }
        lo + self.rng.below(u64::from(hi - lo)) as u32
    }

    fn smtp(&mut self) -> Result<(), OpError> {
        let plan = Arc::clone(&self.plan);
        let p = &*plan;
        let from = self.rng.below(u64::from(p.users)) as u32;
        let span = p.profile.recipients_max - p.profile.recipients_min;
        let want =
            (p.profile.recipients_min + self.rng.below(u64::from(span) + 1) as u32).min(p.users);
        let mut users: Vec<u32> = Vec::with_capacity(want as usize);
        while users.len() < want as usize {
            let u = self.rng.below(u64::from(p.users)) as u32;
            if !users.contains(&u) {
                users.push(u);
            }
        }
        // A share of the messages goes to a watched user too (in place of its first
        // recipient), so delivery is timed on enough messages however many users there are.
        let watched = p.users - p.watched_from;
        if watched > 0 && self.rng.next_f64() < p.watched_share {
            let w = p.watched_from + self.rng.below(u64::from(watched)) as u32;
            if !users.contains(&w) {
                users[0] = w;
            }
        }
        let to: Vec<String> = users.iter().map(|&u| p.address(u)).collect();
        let sender = p.address(from);
        let size = p.sizes.pick(&mut self.rng);
        let seq = p.ledger.next();
        let token = p.ledger.token(seq);
        let date = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut buf = std::mem::take(&mut self.buf);
        let digest = message::build(
            &mut buf,
            &Envelope {
                from: &sender,
                to: &to,
                token: &token,
                date,
            },
            size,
            &mut self.rng,
        );
        let e = &p.endpoints;
        let t = self.first_command_start();
        let r = SmtpClient::open(&e.submit, e.dialect, p.timeout);
        let tls = r
            .as_ref()
            .ok()
            .and_then(|c| Some((c.wire().tls_time()?, c.wire().tls_resumed())));
        let mut c = self.note_with_tls("smtp_connect", "smtp_tls", t.elapsed(), tls, r)?;
        // STARTTLS happens within the hello.
        let before = c.wire().tls_time();
        let t = Instant::now();
        let r = c.hello(&e.helo);
        let tls = match before {
            None => c.wire().tls_time().map(|d| (d, c.wire().tls_resumed())),
            Some(_) => None,
        };
        self.note_with_tls("smtp_hello", "smtp_tls", t.elapsed(), tls, r)?;
        // Registered from here: whatever happens next, the copies are accounted for.
        p.ledger.register(seq, &users, digest);
        let rcpts: Vec<&str> = to.iter().map(String::as_str).collect();
        let t = Instant::now();
        let r = c.envelope(&sender, &rcpts);
        let envelope = match self.note("smtp_envelope", t, r) {
            Ok(env) => env,
            Err(err) => {
                // No message went out: nothing can be delivered.
                p.ledger.withdraw(seq);
                self.buf = buf;
                return Err(err);
            }
        };
        let t = Instant::now();
        let r = c.data(&envelope, &buf);
        let outcome = self.note("smtp_data", t, r);
        match &outcome {
            Ok(d) => {
                let states: Vec<State> = d
                    .iter()
                    .map(|d| match d {
                        Delivery::Accepted => State::Accepted,
                        Delivery::Refused(_) => State::Refused,
                        Delivery::InDoubt => State::InDoubt,
                    })
                    .collect();
                p.ledger.settle(seq, &states);
            }
            // The message's terminating line never left (`SmtpClient::data` writes it
            // last): the server cannot have it.
            Err(_) => p.ledger.withdraw(seq),
        }
        self.bytes += buf.len() as u64;
        self.items += 1;
        self.buf = buf;
        let deliveries = outcome?;
        let t = Instant::now();
        c.quit();
        self.note("smtp_quit", t, Ok(()))?;
        if let Some(Delivery::Refused(why)) = deliveries
            .iter()
            .find(|d| matches!(d, Delivery::Refused(_)))
        {
            return Err(OpError::new(
                ErrorKind::Server,
                format!("smtp_data: refused: {why}"),
            ));
        }
        if deliveries.contains(&Delivery::InDoubt) {
            return Err(OpError::new(
                ErrorKind::InDoubt,
                "smtp_data: the connection broke before the server answered",
            ));
        }
        Ok(())
    }

    /// Reports what a listing fetched: every message of this step's, by token.
    fn sight(&mut self, user: u32, whole: bool) -> Vec<u32> {
        let ledger = &self.plan.ledger;
        let mut ours = Vec::new();
        for f in &self.fetched {
            let Some(uid) = f.uid else { continue };
            let Some((_, bytes)) = f.sections.first() else {
                continue;
            };
            let Some(seq) = token_of(bytes).and_then(|t| ledger.parse(t)) else {
                continue;
            };
            let body = whole.then(|| message::digest(body_of(bytes)));
            ledger.sighted(seq, user, Ident::Imap(uid), body, None);
            ours.push(uid);
        }
        ours
    }

    fn imap(&mut self, sync: bool) -> Result<(), OpError> {
        let plan = Arc::clone(&self.plan);
        let p = &*plan;
        let user = self.reader(false);
        let t = self.first_command_start();
        let r = ImapClient::open(&p.endpoints.imap, p.timeout);
        let tls = r
            .as_ref()
            .ok()
            .and_then(|c| Some((c.wire().tls_time()?, c.wire().tls_resumed())));
        let mut c = self.note_with_tls("imap_connect", "imap_tls", t.elapsed(), tls, r)?;
        let t = Instant::now();
        let r = c.login(p.name(user), p.password(user));
        self.note("imap_login", t, r)?;
        let t = Instant::now();
        let r = c.select("INBOX", false);
        self.note("imap_select", t, r)?;
        if sync {
            // A caching client first brings every message's flags up to date.
            let mut all = std::mem::take(&mut self.fetched);
            let t = Instant::now();
            let r = c.uid_fetch("1:*", "(UID FLAGS)", &mut all);
            self.fetched = all;
            self.note("imap_fetch_flags", t, r)?;
            self.fetched.clear();
        }
        let t = Instant::now();
        let r = c.uid_search("UNSEEN");
        let mut unseen = self.note("imap_search", t, r)?;
        unseen.sort_unstable();
        let newest = &unseen[unseen.len().saturating_sub(LIST_MAX)..];
        if !newest.is_empty() {
            let mut fetched = std::mem::take(&mut self.fetched);
            fetched.clear();
            let t = Instant::now();
            let r = c.uid_fetch(&uid_set(newest), HEADER_ITEMS, &mut fetched);
            self.fetched = fetched;
            self.note("imap_fetch_headers", t, r)?;
            self.items += self.fetched.len() as u64;
            let ours = self.sight(user, false);
            // Bodies: a check reads the newest few (marking them seen); a caching client
            // downloads every new one without marking it.
            let (count, item) = if sync {
                (DOWNLOAD_MAX, "(UID BODY.PEEK[])")
            } else {
                (p.profile.check_bodies as usize, "(UID BODY[])")
            };
            for &uid in newest.iter().rev().take(count) {
                let mut fetched = std::mem::take(&mut self.fetched);
                fetched.clear();
                let t = Instant::now();
                let r = c.uid_fetch(&uid.to_string(), item, &mut fetched);
                self.fetched = fetched;
                self.note("imap_fetch_body", t, r)?;
                self.bytes += self
                    .fetched
                    .iter()
                    .flat_map(|f| f.sections.iter())
                    .map(|s| s.1.len() as u64)
                    .sum::<u64>();
                self.sight(user, true);
            }
            if !sync && !ours.is_empty() && p.profile.check_deletes > 0.0 {
                let n = ((ours.len() as f64) * p.profile.check_deletes).round() as usize;
                if n > 0 {
                    let t = Instant::now();
                    let r = c.uid_store(&uid_set(&ours[..n]), "+FLAGS.SILENT (\\Deleted)");
                    self.note("imap_store", t, r)?;
                    let t = Instant::now();
                    let r = c.expunge();
                    self.note("imap_expunge", t, r)?;
                }
            }
        }
        let t = Instant::now();
        c.logout();
        self.note("imap_logout", t, Ok(()))?;
        Ok(())
    }

    fn pop3(&mut self) -> Result<(), OpError> {
        let plan = Arc::clone(&self.plan);
        let p = &*plan;
        let user = self.reader(true);
        let t = self.first_command_start();
        let r = Pop3Client::open(&p.endpoints.pop3, p.timeout);
        let tls = r
            .as_ref()
            .ok()
            .and_then(|c| Some((c.wire().tls_time()?, c.wire().tls_resumed())));
        let mut c = self.note_with_tls("pop3_connect", "pop3_tls", t.elapsed(), tls, r)?;
        c.pipeline(p.endpoints.pop3_pipelining);
        let t = Instant::now();
        let r = c.login(p.name(user), p.password(user));
        self.note("pop3_login", t, r)?;
        let t = Instant::now();
        let r = c.stat();
        self.note("pop3_stat", t, r)?;
        let t = Instant::now();
        let r = c.uidl();
        let list = self.note("pop3_uidl", t, r)?;
        let mut buf = std::mem::take(&mut self.buf);
        let retrieve = list.len().min(p.profile.pop3_retrieve as usize);
        let delete = ((retrieve as f64) * p.profile.pop3_deletes).round() as usize;
        for (i, (n, uidl)) in list.iter().take(retrieve).enumerate() {
            let t = Instant::now();
            let dele = i < delete;
            buf.clear();
            let r = c.retr_dele(*n, dele, &mut buf);
            // Another session of the same user took the message first (Dovecot locks no
            // POP3 maildrop: "-ERR Message 1 expunged."). It is accounted by that session,
            // so here it is passed over, not counted as an error; both answers were read.
            if let Err(e) = &r
                && e.to_string().contains("expunged")
            {
                continue;
            }
            // RETR's time runs to its answer; DELE's from there (pipelined, it was sent
            // with RETR).
            let (r, retrieved) = match r {
                Ok((size, at)) => (Ok(size), at),
                Err(e) => (Err(e), Instant::now()),
            };
            let failed = r.is_err();
            let retr = self.note("pop3_retr", t, r.map(|_| ()));
            if !buf.is_empty() {
                self.bytes += buf.len() as u64;
                self.items += 1;
                if let Some(seq) = token_of(&buf).and_then(|t| p.ledger.parse(t)) {
                    let body = message::digest(body_of(&buf));
                    p.ledger
                        .sighted(seq, user, Ident::pop3(uidl), Some(body), None);
                }
            }
            if let Err(e) = retr {
                self.buf = buf;
                return Err(e);
            }
            if dele && !failed {
                self.note("pop3_dele", retrieved, Ok(()))?;
            }
        }
        self.buf = buf;
        let t = Instant::now();
        let r = c.quit();
        self.note("pop3_quit", t, r)?;
        Ok(())
    }
}

impl Session for MailSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        let kind = self.kind();
        self.last = kind.name();
        let (bytes, items) = (self.bytes, self.items);
        match kind {
            Kind::Smtp => self.smtp(),
            Kind::ImapCheck => self.imap(false),
            Kind::ImapSync => self.imap(true),
            Kind::Pop3 => self.pop3(),
        }?;
        Ok(OpOutcome {
            bytes: self.bytes - bytes,
            items: self.items - items,
            kind: kind.name(),
        })
    }

    fn last_kind(&self) -> &'static str {
        self.last
    }

    fn scheduled(&mut self, due: Instant) {
        self.due = Some(due);
    }

    fn measuring(&mut self) {
        self.commands.clear();
        self.qos.clear();
        self.handshakes = [0; 2];
    }

    fn groups(&mut self) -> Vec<GroupTotals> {
        std::mem::take(&mut self.commands)
    }

    fn finish(&mut self) -> Figures {
        self.plan.qos.add(&self.qos);
        self.qos.clear();
        let h = &self.plan.handshakes;
        h.full.fetch_add(self.handshakes[0], Ordering::Relaxed);
        h.resumed.fetch_add(self.handshakes[1], Ordering::Relaxed);
        self.handshakes = [0; 2];
        Figures::new()
    }
}
