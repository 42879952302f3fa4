//! The scan after every step: the mailboxes of every user with a copy no reader has seen
//! (or seen but never compared whole) are listed over IMAP, by token, and those copies'
//! bodies fetched and compared, so that the ledger can say of every accepted copy whether
//! it is there, once, intact.
//!
//! The scan reads with EXAMINE (read-only), so it changes no flag, and runs on a few
//! connections at once. A server that restarts under it is tried again. It connects as the
//! sessions do, with the IMAP endpoint's TLS.

use super::imap::{Fetched, ImapClient, uid_set};
use super::ledger::Ident;
use super::message::{body_of, digest, token_of};
use super::session::{Plan, TOKEN_ITEMS};
use super::wire::MailError;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Connections the scan reads mailboxes on.
const CONNECTIONS: usize = 4;
/// Tries per mailbox (a server restarting refuses connections for a moment).
const TRIES: u32 = 5;

/// What the scan did.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub mailboxes: u64,
    pub bodies: u64,
    pub elapsed: Duration,
}

/// Scans the mailboxes of the ledger's unsettled users.
pub fn scan(plan: &Plan) -> Result<Scan, String> {
    let started = Instant::now();
    let users: Vec<u32> = plan.ledger.unsettled_users().into_iter().collect();
    let next = AtomicUsize::new(0);
    let bodies = AtomicU64::new(0);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..CONNECTIONS.min(users.len()) {
            s.spawn(|| {
                let mut fetched = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&user) = users.get(i) else { return };
                    let mut tries = 0;
                    let done = loop {
                        tries += 1;
                        match mailbox(plan, user, &mut fetched) {
                            Ok(n) => break Ok(n),
                            Err(e) if tries >= TRIES => break Err(e),
                            Err(_) => std::thread::sleep(Duration::from_millis(200)),
                        }
                    };
                    match done {
                        Ok(n) => {
                            bodies.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(e) => {
                            let mut first = first_error.lock().unwrap_or_else(|p| p.into_inner());
                            first.get_or_insert(format!(
                                "the mailbox of {} could not be read: {e}",
                                plan.name(user)
                            ));
                            // Every mailbox left unread would be reported lost: stop.
                            next.store(users.len(), Ordering::Relaxed);
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(Scan {
        mailboxes: users.len() as u64,
        bodies: bodies.into_inner(),
        elapsed: started.elapsed(),
    })
}

/// Lists one mailbox and compares the bodies not compared yet; returns how many.
fn mailbox(plan: &Plan, user: u32, fetched: &mut Vec<Fetched>) -> Result<u64, MailError> {
    let ledger = &plan.ledger;
    let mut c = ImapClient::open(&plan.endpoints.imap, plan.timeout)?;
    c.login(plan.name(user), plan.password(user))?;
    let selected = c.select("INBOX", true)?;
    let mut need = Vec::new();
    if selected.exists > 0 {
        fetched.clear();
        c.uid_fetch("1:*", TOKEN_ITEMS, fetched)?;
        for f in fetched.iter() {
            let (Some(uid), Some((_, head))) = (f.uid, f.sections.first()) else {
                continue;
            };
            if let Some(seq) = token_of(head).and_then(|t| ledger.parse(t)) {
                ledger.sighted(seq, user, Ident::Imap(uid), None, None);
                if ledger.needs_body(seq, user) {
                    need.push((uid, seq));
                }
            }
        }
    }
    let mut compared = 0;
    for chunk in need.chunks(50) {
        let uids: Vec<u32> = chunk.iter().map(|c| c.0).collect();
        fetched.clear();
        c.uid_fetch(&uid_set(&uids), "(UID BODY.PEEK[])", fetched)?;
        for f in fetched.iter() {
            let (Some(uid), Some((_, whole))) = (f.uid, f.sections.first()) else {
                continue;
            };
            if let Some(&(_, seq)) = chunk.iter().find(|c| c.0 == uid) {
                ledger.sighted(
                    seq,
                    user,
                    Ident::Imap(uid),
                    Some(digest(body_of(whole))),
                    None,
                );
                compared += 1;
            }
        }
    }
    c.logout();
    Ok(compared)
}
