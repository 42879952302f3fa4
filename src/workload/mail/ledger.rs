//! The ledger: every message a step sent, each recipient's copy, and every sighting of it,
//! so that at the end of the step every copy is accounted for.
//!
//! A copy is *accepted* when the server took responsibility for it (SMTP's 250 after DATA,
//! LMTP's per-recipient 250), *refused* with a 4xx or 5xx, or *in doubt* when the
//! connection broke before its answer. Readers (IMAP checks and syncs, POP3 sessions, the
//! IDLE watchers, and the scan after the step) report each copy they see by its token, with
//! the message's identity in the mailbox (IMAP UID, POP3 UIDL) and, when they fetched it
//! whole, its body's digest. Then:
//!
//! - sent copies = accepted + refused + in doubt;
//! - an accepted copy never seen is **lost**;
//! - a copy seen under two identities by the same protocol is **duplicated**;
//! - a body whose digest differs from the one sent is **corrupt**.
//!
//! Delivery time is the time from the start of the submission to the first sighting by a
//! watcher (an IDLE-ing reader): only the watched users' copies have one.

use super::message::Digest;
use crate::record::histogram::{LatencyHistogram, new_histogram};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// What became of one copy at its submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Submitted, no answer yet.
    Pending,
    Accepted,
    Refused,
    InDoubt,
}

/// Which reader saw a copy, and under what identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ident {
    /// An IMAP UID in the user's INBOX.
    Imap(u32),
    /// A POP3 UIDL, hashed.
    Pop3(u64),
}

impl Ident {
    pub fn pop3(uidl: &str) -> Ident {
        Ident::Pop3(super::message::digest(uidl.as_bytes()).hash)
    }

    fn same_protocol(self, other: Ident) -> bool {
        matches!(
            (self, other),
            (Ident::Imap(_), Ident::Imap(_)) | (Ident::Pop3(_), Ident::Pop3(_))
        )
    }
}

#[derive(Debug, Clone)]
struct Copy {
    user: u32,
    state: State,
    /// Distinct identities it was seen under (rarely more than one).
    seen: Vec<Ident>,
    duplicated: bool,
    /// Bodies compared: how many matched and how many did not.
    bodies_ok: u32,
    bodies_bad: u32,
    /// First sighting by a watcher.
    watched_at: Option<Instant>,
}

#[derive(Debug)]
struct Message {
    submitted: Instant,
    digest: Digest,
    copies: Vec<Copy>,
}

#[derive(Debug, Default)]
struct Inner {
    messages: HashMap<u64, Message>,
    next: u64,
    /// Sightings of this step's tokens that arrived before their message was registered
    /// (cannot happen with a correct server; counted, not lost).
    unknown: u64,
}

/// One step's ledger, shared by its sessions and watchers.
#[derive(Debug)]
pub struct Ledger {
    /// The step's tag: tokens of other steps and runs are not this ledger's.
    pub tag: String,
    /// Users whose mail a watcher reads (their copies have a delivery time).
    watched: BTreeSet<u32>,
    inner: Mutex<Inner>,
}

/// The accounting of a step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    pub messages: u64,
    pub copies: u64,
    pub accepted: u64,
    pub refused: u64,
    pub in_doubt: u64,
    /// Copies still without an answer (a session stopped mid-submission).
    pub pending: u64,
    /// Accepted or in-doubt copies seen by a reader.
    pub found: u64,
    /// In-doubt copies that were found: the server had them.
    pub in_doubt_found: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub bodies_checked: u64,
    pub bodies_corrupt: u64,
    /// Accepted copies to watched users, and how many a watcher saw.
    pub watched: u64,
    pub watched_seen: u64,
    /// Watched copies seen within the delivery limit.
    pub on_time: u64,
}

impl Ledger {
    pub fn new(tag: String, watched: BTreeSet<u32>) -> Ledger {
        Ledger {
            tag,
            watched,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing panics while holding it; a poisoned ledger is still whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn is_watched(&self, user: u32) -> bool {
        self.watched.contains(&user)
    }

    pub fn watched_users(&self) -> impl Iterator<Item = u32> + '_ {
        self.watched.iter().copied()
    }

    /// A number for the next message (its token is built before it is registered).
    pub fn next(&self) -> u64 {
        let mut inner = self.lock();
        inner.next += 1;
        inner.next - 1
    }

    /// Registers message `seq`, about to be submitted to `users`: its submission starts now.
    pub fn register(&self, seq: u64, users: &[u32], digest: Digest) {
        let mut inner = self.lock();
        inner.messages.insert(
            seq,
            Message {
                submitted: Instant::now(),
                digest,
                copies: users
                    .iter()
                    .map(|&user| Copy {
                        user,
                        state: State::Pending,
                        seen: Vec::new(),
                        duplicated: false,
                        bodies_ok: 0,
                        bodies_bad: 0,
                        watched_at: None,
                    })
                    .collect(),
            },
        );
    }

    /// The token a message carries.
    pub fn token(&self, seq: u64) -> String {
        format!("{}.{seq}", self.tag)
    }

    /// The message number in a token of this step, if it is one.
    pub fn parse(&self, token: &str) -> Option<u64> {
        let (tag, seq) = token.rsplit_once('.')?;
        (tag == self.tag).then(|| seq.parse().ok())?
    }

    /// The answer for each recipient, in the order registered.
    /// Message `seq` never went out whole (its envelope failed, or the connection broke
    /// before its terminating line left): the server cannot deliver it, so it was not sent.
    /// Were a copy of it found, it would count as unknown mail, as any stranger does.
    pub fn withdraw(&self, seq: u64) {
        self.lock().messages.remove(&seq);
    }

    pub fn settle(&self, seq: u64, states: &[State]) {
        let mut inner = self.lock();
        if let Some(m) = inner.messages.get_mut(&seq) {
            for (c, &s) in m.copies.iter_mut().zip(states) {
                c.state = s;
            }
        }
    }

    /// A reader saw the copy of message `seq` in `user`'s mailbox, as `ident`; `body` is
    /// the digest of its body when the reader fetched it whole. Returns false if the body
    /// differs from the one sent.
    pub fn sighted(
        &self,
        seq: u64,
        user: u32,
        ident: Ident,
        body: Option<Digest>,
        watcher_at: Option<Instant>,
    ) -> bool {
        let mut inner = self.lock();
        let Some(m) = inner.messages.get_mut(&seq) else {
            inner.unknown += 1;
            return true;
        };
        let sent = m.digest;
        let Some(c) = m.copies.iter_mut().find(|c| c.user == user) else {
            // Delivered to a user it was not sent to: as bad as a duplicate.
            inner.unknown += 1;
            return true;
        };
        if !c.seen.contains(&ident) {
            if c.seen.iter().any(|&s| s.same_protocol(ident)) {
                c.duplicated = true;
            }
            c.seen.push(ident);
        }
        if let Some(at) = watcher_at
            && c.watched_at.is_none()
        {
            c.watched_at = Some(at);
        }
        match body {
            Some(d) if d == sent => {
                c.bodies_ok += 1;
                true
            }
            Some(_) => {
                c.bodies_bad += 1;
                false
            }
            None => true,
        }
    }

    /// Users with copies that were accepted (or are in doubt) and never seen, or seen but
    /// never compared whole: the scan after the step reads their mailboxes.
    pub fn unsettled_users(&self) -> BTreeSet<u32> {
        let inner = self.lock();
        inner
            .messages
            .values()
            .flat_map(|m| m.copies.iter())
            .filter(|c| {
                matches!(c.state, State::Accepted | State::InDoubt | State::Pending)
                    && (c.seen.is_empty() || c.bodies_ok + c.bodies_bad == 0)
            })
            .map(|c| c.user)
            .collect()
    }

    /// Whether a copy still needs its body compared (the scan fetches only those).
    pub fn needs_body(&self, seq: u64, user: u32) -> bool {
        let inner = self.lock();
        inner
            .messages
            .get(&seq)
            .and_then(|m| m.copies.iter().find(|c| c.user == user))
            .is_some_and(|c| c.bodies_ok + c.bodies_bad == 0)
    }

    /// Accepted copies to watched users that no watcher has seen yet.
    pub fn watched_unseen(&self) -> u64 {
        let inner = self.lock();
        inner
            .messages
            .values()
            .flat_map(|m| m.copies.iter())
            .filter(|c| {
                c.state == State::Accepted
                    && self.watched.contains(&c.user)
                    && c.watched_at.is_none()
            })
            .count() as u64
    }

    /// Sightings of this step's tokens the ledger could not place.
    pub fn unknown(&self) -> u64 {
        self.lock().unknown
    }

    /// The accounting, and the delivery times of watched copies (ns) into `delivery`.
    pub fn tally(&self, limit: std::time::Duration, delivery: &mut LatencyHistogram) -> Tally {
        let inner = self.lock();
        let mut t = Tally {
            messages: inner.messages.len() as u64,
            ..Tally::default()
        };
        for m in inner.messages.values() {
            for c in &m.copies {
                t.copies += 1;
                let found = !c.seen.is_empty();
                match c.state {
                    State::Accepted => t.accepted += 1,
                    State::Refused => t.refused += 1,
                    State::InDoubt => t.in_doubt += 1,
                    State::Pending => t.pending += 1,
                }
                match (c.state, found) {
                    (State::Accepted, true) => t.found += 1,
                    (State::Accepted, false) => t.lost += 1,
                    (State::InDoubt | State::Pending, true) => {
                        t.found += 1;
                        t.in_doubt_found += 1;
                    }
                    _ => {}
                }
                t.duplicated += u64::from(c.duplicated);
                t.bodies_checked += u64::from(c.bodies_ok + c.bodies_bad > 0);
                t.bodies_corrupt += u64::from(c.bodies_bad > 0);
                if c.state == State::Accepted && self.watched.contains(&c.user) {
                    t.watched += 1;
                    if let Some(at) = c.watched_at {
                        t.watched_seen += 1;
                        let took = at.saturating_duration_since(m.submitted);
                        t.on_time += u64::from(took <= limit);
                        delivery.saturating_record(took.as_nanos() as u64);
                    }
                }
            }
        }
        t
    }
}

/// An empty histogram for delivery times.
pub fn delivery_histogram() -> LatencyHistogram {
    new_histogram()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn d(hash: u64) -> Digest {
        Digest { len: 10, hash }
    }

    #[test]
    fn every_copy_is_accounted_for() {
        let l = Ledger::new("t1".into(), BTreeSet::from([2]));
        let (a, b, c) = (l.next(), l.next(), l.next());
        l.register(a, &[1, 2], d(7));
        l.register(b, &[3], d(8));
        l.register(c, &[1], d(9));
        assert_eq!(l.parse(&l.token(a)), Some(a));
        assert_eq!(l.parse("t0.1"), None);
        assert_eq!(l.parse("t1.x"), None);
        l.settle(a, &[State::Accepted, State::Accepted]);
        l.settle(b, &[State::Refused]);
        l.settle(c, &[State::InDoubt]);
        assert!(l.sighted(a, 1, Ident::Imap(5), Some(d(7)), None));
        assert!(l.sighted(a, 2, Ident::Imap(1), None, Some(Instant::now())));
        assert_eq!(l.unsettled_users(), BTreeSet::from([1, 2]));
        // The scan sees message a again under the same UID: not a duplicate.
        l.sighted(a, 1, Ident::Imap(5), None, None);
        let mut h = delivery_histogram();
        let t = l.tally(Duration::from_secs(60), &mut h);
        assert_eq!((t.messages, t.copies), (3, 4));
        assert_eq!((t.accepted, t.refused, t.in_doubt), (2, 1, 1));
        assert_eq!((t.found, t.lost, t.duplicated), (2, 0, 0));
        assert_eq!((t.bodies_checked, t.bodies_corrupt), (1, 0));
        assert_eq!((t.watched, t.watched_seen, t.on_time), (1, 1, 1));
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn lost_duplicated_and_corrupt_copies_are_caught() {
        let l = Ledger::new("t".into(), BTreeSet::new());
        let (a, b) = (l.next(), l.next());
        l.register(a, &[1], d(1));
        l.register(b, &[1], d(2));
        l.settle(a, &[State::Accepted]);
        l.settle(b, &[State::Accepted]);
        l.sighted(a, 1, Ident::Imap(1), None, None);
        l.sighted(a, 1, Ident::Imap(2), None, None);
        l.sighted(a, 1, Ident::pop3("x"), None, None);
        assert!(!l.sighted(a, 1, Ident::Imap(1), Some(d(3)), None));
        let t = l.tally(Duration::from_secs(60), &mut delivery_histogram());
        assert_eq!(
            (t.found, t.lost, t.duplicated, t.bodies_corrupt),
            (1, 1, 1, 1)
        );
    }
}
