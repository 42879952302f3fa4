//! fio's `end_fsync` and `fsync_on_close` for one copy of a job that writes (fio's
//! backend.c `do_io`, filesetup.c `td_io_close_file`): at the end of each pass over the
//! job's bytes (each of `loops`, or when its `runtime` cuts the last short), once all of its
//! I/O has completed, an fsync of each of its files in turn, each waited for before the next.
//! fio times these inside the job's running time (its bandwidth is over it) but does not
//! count them among its syncs; so does perflab.
//!
//! `fsync_on_close` is the same here: fio syncs a file as it closes it only if the last I/O
//! was not a sync, and its end-of-pass sync has just been one; perflab closes files only when
//! the copy ends. A periodic `fsync=N` due after the last write of a pass is not issued, as
//! in fio (it goes before the next I/O, and there is none).

/// Where a copy's end-of-pass syncs stand.
#[derive(Debug, Clone)]
pub struct EndSync {
    /// Bytes of one pass.
    every: u64,
    /// Bytes issued so far.
    issued: u64,
    /// A round of syncs in progress: the next file to sync.
    round: Option<usize>,
    /// `issued` when the last round started (a pass ends once).
    last_round_at: Option<u64>,
    /// The copy has issued all it will and its last round has been started.
    finished: bool,
    /// Syncs issued so far.
    syncs: u64,
}

/// What the copy does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing to do here: carry on with I/O.
    Go,
    /// A round is under way and I/O is in flight: wait for it.
    Wait,
    /// Sync file `n` now.
    Sync(usize),
}

impl EndSync {
    /// A pass is `every` bytes (fio's `io_size`, else `size`).
    pub fn new(every: u64) -> EndSync {
        EndSync {
            every: every.max(1),
            issued: 0,
            round: None,
            last_round_at: None,
            finished: false,
            syncs: 0,
        }
    }

    /// An I/O of `len` bytes was issued: a round starts when it ends a pass.
    pub fn issued(&mut self, len: u64) {
        let before = self.issued / self.every;
        self.issued += len;
        if self.issued / self.every > before {
            self.start();
        }
    }

    /// The copy has issued all it will (its bytes or its runtime): its last pass is synced,
    /// unless a round started where it stopped.
    pub fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.last_round_at != Some(self.issued) {
                self.start();
            }
        }
    }

    fn start(&mut self) {
        self.round = Some(0);
        self.last_round_at = Some(self.issued);
    }

    /// What to do now, over `files` files with `in_flight` I/Os in flight.
    pub fn next(&mut self, files: usize, in_flight: usize) -> Next {
        let Some(n) = self.round else {
            return Next::Go;
        };
        if in_flight > 0 {
            return Next::Wait;
        }
        if n < files {
            self.round = Some(n + 1);
            self.syncs += 1;
            return Next::Sync(n);
        }
        self.round = None;
        Next::Go
    }

    /// Syncs issued so far (the record's `end_fsyncs_per_worker`).
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    /// The copy has issued all it will and every sync of its last round has completed.
    pub fn complete(&self) -> bool {
        self.finished && self.round.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_ends_with_a_sync_of_each_file_in_turn() {
        let mut e = EndSync::new(8192);
        e.issued(4096);
        assert_eq!(e.next(2, 1), Next::Go);
        e.issued(4096);
        // The pass is over: wait for its I/O, then file 0, then (once that completed) 1.
        assert_eq!(e.next(2, 1), Next::Wait);
        assert_eq!(e.next(2, 0), Next::Sync(0));
        assert_eq!(e.next(2, 1), Next::Wait);
        assert_eq!(e.next(2, 0), Next::Sync(1));
        assert_eq!(e.next(2, 0), Next::Go);
        assert!(!e.complete());
        // The budget ended with that pass: no second round.
        e.finish();
        assert_eq!(e.next(2, 0), Next::Go);
        assert!(e.complete());
        assert_eq!(e.syncs(), 2);
    }

    #[test]
    fn a_runtime_that_cuts_a_pass_short_syncs_it_too() {
        let mut e = EndSync::new(1 << 20);
        e.issued(4096);
        e.finish();
        assert!(!e.complete());
        assert_eq!(e.next(1, 0), Next::Sync(0));
        assert_eq!(e.next(1, 0), Next::Go);
        assert!(e.complete());
    }
}
