//! The stop token: one value that tells every wait of a run to end.
//!
//! The runner makes one for each run (a child of the Ctrl-C token, `run::interrupt`) and
//! hands it to every session, prepare, load, check and cleanup path. Code that waits looks at
//! it ([`Stop::is_set`], [`Stop::sleep`]); code that waits where it cannot look (a statement
//! running on a server, a blocking read) registers what would end that wait
//! ([`Stop::on_stop`]: send the server a cancel, close a socket, kill a process group), and
//! the token runs it when it is set.
//!
//! It depends on nothing else in perflab, so every layer can take one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// A shared stop flag with the actions that end the waits it cannot see. Cloning shares it.
#[derive(Clone, Default)]
pub struct Stop(Arc<Inner>);

type Action = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Inner {
    set: AtomicBool,
    next: AtomicU64,
    actions: Mutex<BTreeMap<u64, Action>>,
    /// A child's registration with its parent, removed when the child goes.
    parent: Mutex<Option<OnStop>>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop").field("set", &self.is_set()).finish()
    }
}

impl Stop {
    /// A token that nothing has set yet.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A token that is set when this one is (and may also be set on its own).
    pub fn child(&self) -> Stop {
        let child = Stop::new();
        let weak = Arc::downgrade(&child.0);
        let link = self.on_stop(move || {
            if let Some(inner) = weak.upgrade() {
                Stop(inner).set();
            }
        });
        if self.is_set() {
            child.set();
        }
        *lock(&child.0.parent) = Some(link);
        child
    }

    /// Whether `other` is this token (a clone of it), not just one in the same state.
    pub fn same(&self, other: &Stop) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether the run should stop.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.set.load(Ordering::Relaxed)
    }

    /// Sets the token and runs every registered action, once, on this thread.
    pub fn set(&self) {
        if self.0.set.swap(true, Ordering::SeqCst) {
            return;
        }
        let actions = std::mem::take(&mut *lock(&self.0.actions));
        for action in actions.into_values() {
            action();
        }
    }

    /// Runs `action` when the token is set, unless the returned guard is dropped first. On a
    /// token that is already set it never runs: what starts after the stop (cleanup) bounds
    /// its own waits. A caller that started something before registering (a job's process)
    /// and must end it either way looks at [`Stop::is_set`] after this returns: either the
    /// action is registered before [`Stop::set`] takes the actions, or the token reads set.
    pub fn on_stop(&self, action: impl FnOnce() + Send + 'static) -> OnStop {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed);
        // Looked at under the lock `set` takes the actions under: looked at before it, a
        // `set` between the look and the insert took the actions without this one, and it
        // never ran.
        let mut actions = lock(&self.0.actions);
        if !self.0.set.load(Ordering::SeqCst) {
            actions.insert(id, Box::new(action));
        }
        drop(actions);
        OnStop {
            token: Arc::downgrade(&self.0),
            id,
        }
    }

    /// Sleeps for `duration`, or less when the token is set meanwhile; returns whether it is
    /// set. Looks every 20 ms: a stop is seen well within the 2 s a Ctrl-C may take.
    pub fn sleep(&self, duration: Duration) -> bool {
        const SLICE: Duration = Duration::from_millis(20);
        let end = Instant::now() + duration;
        loop {
            if self.is_set() {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return self.is_set();
            }
            std::thread::sleep(left.min(SLICE));
        }
    }
}

/// A registered stop action; dropping it withdraws the action.
pub struct OnStop {
    token: Weak<Inner>,
    id: u64,
}

impl Drop for OnStop {
    fn drop(&mut self) {
        if let Some(inner) = self.token.upgrade() {
            lock(&inner.actions).remove(&self.id);
        }
    }
}

/// The lock, even after a panic elsewhere: the map stays usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn actions_run_once_when_set_and_not_after_their_guard_is_dropped() {
        let stop = Stop::new();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let _kept = stop.on_stop(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        let r = ran.clone();
        let dropped = stop.on_stop(move || {
            r.fetch_add(10, Ordering::SeqCst);
        });
        drop(dropped);
        stop.set();
        stop.set();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(stop.is_set());
        // After the stop, a new action never runs: cleanup's connections stay usable.
        let r = ran.clone();
        let _late = stop.on_stop(move || {
            r.fetch_add(100, Ordering::SeqCst);
        });
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_action_registered_while_another_thread_sets_runs_or_sees_the_token_set() {
        // The race `on_stop` closes: every registration either runs or finds the token set.
        for _ in 0..200 {
            let stop = Stop::new();
            let ran = Arc::new(AtomicUsize::new(0));
            let setter = {
                let stop = stop.clone();
                std::thread::spawn(move || stop.set())
            };
            let r = ran.clone();
            let guard = stop.on_stop(move || {
                r.fetch_add(1, Ordering::SeqCst);
            });
            let seen_set = stop.is_set();
            setter.join().unwrap();
            assert!(
                ran.load(Ordering::SeqCst) == 1 || seen_set,
                "the action never ran and the token read unset"
            );
            drop(guard);
        }
    }

    #[test]
    fn a_child_is_set_with_its_parent_but_not_the_other_way() {
        let parent = Stop::new();
        let child = parent.child();
        child.set();
        assert!(!parent.is_set());
        let other = parent.child();
        parent.set();
        assert!(other.is_set());
        assert!(parent.child().is_set());
    }

    #[test]
    fn sleep_ends_early_when_set() {
        let stop = Stop::new();
        let s = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            s.set();
        });
        let start = Instant::now();
        assert!(stop.sleep(Duration::from_secs(10)));
        // Well before the 10 s asked for; seconds of room for a loaded machine.
        assert!(start.elapsed() < Duration::from_secs(5));
        t.join().unwrap();
        assert!(!Stop::new().sleep(Duration::from_millis(1)));
    }
}
