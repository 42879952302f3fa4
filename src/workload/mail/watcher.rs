//! The watchers: readers that stay logged in for the whole step, each on one user's INBOX,
//! waiting in IDLE (RFC 2177) as an always-on mail client does, and that note the moment
//! each new message appears. A message's delivery time is the time from the start of its
//! submission to that moment, so only the watched users' copies have one; sessions leave
//! their mail alone (they never read or delete it).
//!
//! A server without IDLE is polled with NOOP every [`POLL`]. A watcher whose connection
//! breaks (a server restart) logs in again and first lists what arrived meanwhile, so a
//! message that arrived during the outage is still seen (late).
//!
//! Watchers connect as the sessions do, with the IMAP endpoint's TLS (IMAPS or STARTTLS);
//! their handshakes are not timed (they happen once per watcher, before the step).

use super::imap::{Fetched, IdleEvent, ImapClient};
use super::ledger::Ident;
use super::message::token_of;
use super::session::{Plan, TOKEN_ITEMS};
use super::wire::MailError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a watcher without IDLE polls, and how long an IDLE wait lasts before the
/// watcher looks at its stop flag.
const POLL: Duration = Duration::from_millis(100);
/// A server may end an IDLE after 30 minutes (RFC 2177): renewed well before.
const IDLE_RENEW: Duration = Duration::from_secs(600);

/// The step's watchers.
pub struct Watchers {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
    /// Connections that failed (a watcher logs in again after each).
    pub failures: Arc<AtomicU64>,
}

impl Watchers {
    /// One thread per watched user of the plan's ledger, each logged in before this returns
    /// (so the step's first messages are watched), or the first login's error.
    pub fn start(plan: &Arc<Plan>) -> Result<Watchers, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let failures = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::new();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
        for user in plan.ledger.watched_users() {
            let (plan, flag, failed, tx) = (
                Arc::clone(plan),
                Arc::clone(&stop),
                Arc::clone(&failures),
                tx.clone(),
            );
            let spawned = std::thread::Builder::new()
                .name(format!("watch-{user}"))
                .spawn(move || watch(&plan, user, &flag, &failed, tx));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    return Err(format!("cannot start a watcher thread: {e}"));
                }
            }
        }
        drop(tx);
        let w = Watchers {
            stop,
            handles,
            failures,
        };
        for _ in 0..w.handles.len() {
            match rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    w.stop.store(true, Ordering::SeqCst);
                    return Err(e);
                }
                Err(_) => break,
            }
        }
        Ok(w)
    }

    /// Waits up to `grace` for the watchers to see every accepted watched copy, then stops
    /// them.
    pub fn finish(mut self, plan: &Plan, grace: Duration) {
        let deadline = Instant::now() + grace;
        while plan.ledger.watched_unseen() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop.store(true, Ordering::SeqCst);
        for h in std::mem::take(&mut self.handles) {
            let _ = h.join();
        }
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One watcher: log in, list what is new, wait, list again, until stopped.
fn watch(
    plan: &Plan,
    user: u32,
    stop: &AtomicBool,
    failures: &AtomicU64,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let mut ready = Some(ready);
    // The highest UID seen: older messages were there before the step.
    let mut last: Option<u32> = None;
    while !stop.load(Ordering::SeqCst) {
        match session(plan, user, stop, &mut last, &mut ready) {
            Ok(()) => return,
            Err(e) => {
                failures.fetch_add(1, Ordering::Relaxed);
                if let Some(tx) = ready.take() {
                    let _ = tx.send(Err(format!(
                        "the watcher of {} could not log in: {e}",
                        plan.name(user)
                    )));
                    return;
                }
                std::thread::sleep(POLL);
            }
        }
    }
}

fn session(
    plan: &Plan,
    user: u32,
    stop: &AtomicBool,
    last: &mut Option<u32>,
    ready: &mut Option<std::sync::mpsc::Sender<Result<(), String>>>,
) -> Result<(), MailError> {
    let mut c = ImapClient::open(&plan.endpoints.imap, plan.timeout)?;
    c.login(plan.name(user), plan.password(user))?;
    let selected = c.select("INBOX", true)?;
    let mut fetched = Vec::new();
    match *last {
        // Logged in again: what arrived while it was away.
        Some(_) => list(plan, user, &mut c, last, &mut fetched, Instant::now())?,
        None => *last = Some(selected.uidnext.saturating_sub(1)),
    }
    if let Some(tx) = ready.take() {
        let _ = tx.send(Ok(()));
    }
    let idle = c.has_capability("IDLE");
    while !stop.load(Ordering::SeqCst) {
        if idle {
            c.idle_start()?;
            let began = Instant::now();
            let mut arrived = None;
            while !stop.load(Ordering::SeqCst) && began.elapsed() < IDLE_RENEW {
                match c.idle_wait(POLL)? {
                    IdleEvent::Exists(_) => {
                        arrived = Some(Instant::now());
                        break;
                    }
                    _ => continue,
                }
            }
            c.idle_done()?;
            if let Some(at) = arrived {
                list(plan, user, &mut c, last, &mut fetched, at)?;
            }
        } else {
            std::thread::sleep(POLL);
            let at = Instant::now();
            if c.noop()?.is_some() {
                list(plan, user, &mut c, last, &mut fetched, at)?;
            }
        }
    }
    c.logout();
    Ok(())
}

/// Lists the messages above `last` and reports this step's to the ledger as seen at `at`.
fn list(
    plan: &Plan,
    user: u32,
    c: &mut ImapClient,
    last: &mut Option<u32>,
    fetched: &mut Vec<Fetched>,
    at: Instant,
) -> Result<(), MailError> {
    let from = last.unwrap_or(0) + 1;
    fetched.clear();
    c.uid_fetch(&format!("{from}:*"), TOKEN_ITEMS, fetched)?;
    for f in fetched.iter() {
        // `n:*` always includes the last message, even below n.
        let Some(uid) = f.uid.filter(|&u| u >= from) else {
            continue;
        };
        *last = Some(last.map_or(uid, |l| l.max(uid)));
        if let Some(seq) = f
            .sections
            .first()
            .and_then(|(_, b)| token_of(b))
            .and_then(|t| plan.ledger.parse(t))
        {
            plan.ledger
                .sighted(seq, user, Ident::Imap(uid), None, Some(at));
        }
    }
    Ok(())
}
