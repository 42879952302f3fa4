//! The per-worker side of a workload: a [`Session`] issues one op at a time.
//!
//! The runner creates one session per worker, inside that worker's thread (so memory a
//! session allocates is first touched by the thread that uses it), calls [`Session::execute`]
//! in its timed loop, and asks [`Session::finish`] for per-worker figures at the end of a step.
//! Sessions never time themselves: the runner does, around `execute`, so every workload is
//! measured the same way.
//!
//! Storage I/O at a queue depth above one does not fit "one op at a time": a
//! [`QueuedSession`] keeps several ops in flight and times each from its submission to its
//! completion. The runner drives it through a [`Pump`], which decides when an op may start
//! (closed loop, `--ops` quota, open-loop schedule) and records each completion.

use crate::record::ErrorKind;
use crate::record::histogram::LatencyHistogram;
use std::collections::BTreeMap;
use std::time::Instant;

/// What one op did, beyond taking time. The runner sums these over a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpOutcome {
    /// Bytes the op moved, counted as the workload's docs say (STREAM counting for memory).
    pub bytes: u64,
    /// Work items the op completed (loads of a pointer chase, tickets checked, pixels ...).
    pub items: u64,
    /// Which kind of op this was (`new_order`, `lookup`), for a breakdown by kind; empty for
    /// workloads with one kind.
    pub kind: &'static str,
}

/// A failed op: what kind of failure it was (counted by kind in the step) and the message
/// (the first few distinct ones are kept).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
    /// The target refuses to work the way the command line asked (an option it cannot take,
    /// such as named prepared statements through a pooler): where this ends a session's
    /// opening or a workload's prepare, the run stops with exit 2 and the message, which
    /// names the option to change, rather than as a failed run.
    pub refusal: bool,
}

impl OpError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            message: message.into(),
            refusal: false,
        }
    }

    /// A statement that failed, as its error says (a conflict, a broken connection, a
    /// timeout, the server's refusal), with `context` before the server's message. An
    /// error that says the target cannot work as asked ([`DbErrorKind::Unsupported`]) is a
    /// refusal, its message alone: it names what was refused and the fix.
    ///
    /// [`DbErrorKind::Unsupported`]: crate::sql::sql::DbErrorKind::Unsupported
    pub fn db(context: &str, e: &crate::sql::sql::DbError) -> OpError {
        let refusal = e.kind == crate::sql::sql::DbErrorKind::Unsupported;
        let message = match context {
            "" => e.message.clone(),
            _ if refusal => e.message.clone(),
            c => format!("{c}: {e}"),
        };
        OpError {
            refusal,
            ..OpError::new(e.op_kind(), message)
        }
    }

    /// A failure the workload does not sort further.
    pub fn other(message: impl Into<String>) -> OpError {
        OpError::new(ErrorKind::Other, message)
    }
}

/// Per-worker figures a session reports at the end of a step, by name with a unit suffix
/// (`alloc_ns`, `checksum`); the runner averages them over workers.
pub type Figures = BTreeMap<String, f64>;

/// One worker's handle on the work of one step.
pub trait Session: Send {
    /// Issue one op and return what it did.
    fn execute(&mut self) -> Result<OpOutcome, OpError>;

    /// Whether this session has done all its work, in a step of fixed work
    /// ([`crate::workload::Workload::fixed_work`]): asked before each op there, never in a
    /// timed step.
    fn exhausted(&self) -> bool {
        false
    }

    /// In an open loop, the lateness past which an op is skipped rather than started
    /// (pgbench's `-L` with `-R`): asked once per step. A skipped op is counted apart
    /// (`schedule.skipped_ops`) and told to the session ([`Session::skipped`]).
    fn skip_late(&self) -> Option<std::time::Duration> {
        None
    }

    /// An op due at `due` was skipped ([`Session::skip_late`]), for a session that logs
    /// its ops.
    fn skipped(&mut self, _due: std::time::Instant) {}

    /// Whether this session has given up for good (pgbench's client aborted on an error):
    /// asked after each op in every phase; the worker then issues nothing more this step
    /// and its schedule's later ops are not counted as missed.
    fn aborted(&self) -> bool {
        false
    }

    /// Figures this worker measured outside the timed ops (e.g. setup time), reported once
    /// when the step ends.
    fn finish(&mut self) -> Figures {
        Figures::new()
    }

    /// Whether [`Session::between`] has work to do. Asked once per step, so that sessions
    /// without any cost the timed loop nothing.
    fn wants_between(&self) -> bool {
        false
    }

    /// Untimed work after one op and before the next, in a closed or open loop: a cold scan
    /// drops its table's cached pages here, so each scan starts cold and the drop is not
    /// part of its time. (An open-loop op that falls behind because of it counts as late.)
    fn between(&mut self) {}

    /// The measure phase begins (after warmup, in a closed or open loop): a session that
    /// keeps figures of its own ([`Session::groups`], [`Session::finish`]) drops what
    /// warmup counted, so they cover the measure phase as the runner's do.
    fn measuring(&mut self) {}

    /// Just before each op: when it was due (its intended start on an open-loop schedule,
    /// else now). A session that times parts of its op itself (mail's commands) times the
    /// first from here, so the time an op waited for its worker counts, as the runner's
    /// response time counts it.
    fn scheduled(&mut self, _due: std::time::Instant) {}

    /// Whether this session sets its own pace ([`Session::pace`]): a terminal with keying
    /// and think times. Asked once per step.
    fn paces(&self) -> bool {
        false
    }

    /// Before each op of a session that [`Session::paces`] (closed loop only): how long
    /// after now the next op is due. The runner waits until then and times the op from that
    /// intended start, so a late wake-up counts in the response time, as in an open loop.
    fn pace(&mut self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// A session that keeps several ops in flight returns itself here; the runner then drives
    /// it through [`QueuedSession::pump`] and never calls `execute`.
    fn as_queued(&mut self) -> Option<&mut dyn QueuedSession> {
        None
    }

    /// Figures broken down by group (direction, block size, file), reported once when the
    /// step ends; the runner merges them over workers.
    fn groups(&mut self) -> Vec<GroupTotals> {
        Vec::new()
    }

    /// The kind of the op `execute` last ran (as `OpOutcome::kind` says for one that
    /// succeeded), so a failed op is counted in its kind's group too.
    fn last_kind(&self) -> &'static str {
        ""
    }

    /// The group every op of this session belongs to, as `(by, key)`: e.g. `("shard",
    /// "2")` for a user routed to shard 2. The runner times them into it, beside the step.
    fn group(&self) -> Option<(&'static str, String)> {
        None
    }
}

/// The runner's side of a [`QueuedSession`]: admission of new ops and recording of finished
/// ones.
pub trait Pump {
    /// Asks to start one op now: `Some(intended start)` if it may, `None` if it may not (the
    /// phase is over, the `--ops` quota is issued, or the open-loop schedule is not yet due).
    fn admit(&mut self) -> Option<Instant>;
    /// Whether the session may block waiting for a completion. False in an open loop, where
    /// the next start may come due first.
    fn may_block(&self) -> bool;
    /// Records a finished op: `start` is when it was submitted, `end` when its completion
    /// was seen, `intended` what [`Pump::admit`] returned for it.
    fn done(&mut self, intended: Instant, start: Instant, end: Instant, outcome: OpResult<'_>);
    /// Records a finished op that was not timed, for a session that keeps no per-op latency
    /// (fio's `gtod_reduce`): counted, with no response time, in the interval `at` falls in
    /// (a clock read the session shares among many ops). A failed one is counted as an
    /// error, with no time either.
    fn done_untimed(&mut self, at: Instant, outcome: OpResult<'_>);
    /// Records a failure found outside an op (a verify pass after the run): an error with
    /// its message, not an op.
    fn fail(&mut self, cause: ErrorKind, message: &str);
    /// In an open loop, when the next op is due: a session may wait for completions until
    /// then, not longer. None in a closed loop.
    fn next_due(&self) -> Option<Instant> {
        None
    }
    /// Whether completions count (false during warmup): a session keeping its own
    /// breakdown counts only these.
    fn measuring(&self) -> bool {
        true
    }
    /// Whether ops follow an open-loop schedule (their response time then counts from
    /// `intended`).
    fn open_loop(&self) -> bool {
        false
    }
}

/// How one queued op ended.
pub type OpResult<'a> = Result<OpOutcome, Failure<'a>>;

/// A queued op that failed: why, and which kind of op it was (as `OpOutcome::kind`; empty
/// for workloads with one kind), so it counts in its kind's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure<'a> {
    pub kind: &'static str,
    /// What kind of failure it was.
    pub cause: ErrorKind,
    pub message: &'a str,
}

impl<'a> Failure<'a> {
    /// A failure of a workload with one kind of op.
    pub fn new(cause: ErrorKind, message: &'a str) -> Self {
        Failure {
            kind: "",
            cause,
            message,
        }
    }
}

/// A session with several ops in flight, which times them itself.
pub trait QueuedSession {
    /// Starts as many ops as the pump admits and the queue holds, then reports every
    /// completion available, waiting for at least one if the pump allows and any is in flight.
    /// An `Err` is fatal to the step (a full disk, a broken engine), not a failed op.
    fn pump(&mut self, pump: &mut dyn Pump) -> Result<(), OpError>;
    /// Ops submitted and not yet completed.
    fn in_flight(&self) -> usize;
    /// Whether this session has done its part: it then admits nothing more, and the worker
    /// ends once nothing is in flight (a job file's job that has done its bytes, reached its
    /// `runtime` or its `number_ios`, or was ended by another job or by steady state). Asked
    /// in every step: in a timed step a worker whose session is done ends before the time is
    /// up, and the step ends early once every worker has.
    fn exhausted(&self) -> bool {
        false
    }
    /// When nothing is in flight and the session holds its next op until a later time (a
    /// delayed start, a think time, its own pace per direction): that time. The worker then
    /// sleeps until it (and until the open-loop schedule's next start, if later), waking
    /// early when the phase ends or the session is done ([`QueuedSession::exhausted`]).
    fn resumes_at(&self) -> Option<Instant> {
        None
    }
    /// Work after the measure phase, with every op completed (e.g. reading back what was
    /// written to verify it). Problems go to `pump.fail`.
    fn after(&mut self, _pump: &mut dyn Pump) -> Result<(), OpError> {
        Ok(())
    }
}

/// One group's totals from one worker, e.g. the reads, the 8 KiB I/Os, or file 3.
#[derive(Debug, Clone)]
pub struct GroupTotals {
    /// What the groups divide by: `direction`, `block_size` or `file`.
    pub by: &'static str,
    /// The group within it: `read`, `8192`, `3`.
    pub key: String,
    /// What a reader sees, e.g. the file's path.
    pub label: String,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency: LatencyHistogram,
    /// How long the group's ops ran, when not the whole measure phase (a job of a fixed
    /// step that finished before the others): its rates are over this time.
    pub active: Option<std::time::Duration>,
}
