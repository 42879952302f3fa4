//! What kind of failure an op met, as the record counts them (`errors_by_kind`, beside the
//! plain `errors` count of every trial and step).

use std::collections::BTreeMap;

/// Why an op failed, in the words every workload shares. A workload sorts its failures into
/// these where it can tell; what it cannot is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// No answer within the op timeout (or the server's own statement timeout).
    Timeout,
    /// The connection was refused, or the server would not take a session (authentication,
    /// too many connections).
    Refused,
    /// The connection broke mid-op: reset, closed, or cut off by the peer.
    Reset,
    /// The peer answered with bytes that do not follow its protocol.
    Protocol,
    /// The answer was well formed but wrong: a checksum, a scan's count, a value read back.
    WrongAnswer,
    /// The op may or may not have taken effect (the connection broke after a commit was
    /// sent, a message whose delivery was not confirmed).
    InDoubt,
    /// The server refused the op with an error of its own (SQL state, `-ERR`, `SERVER_ERROR`).
    Server,
    /// A conflict the client retries: a serialization failure, a deadlock, a busy lock.
    Conflict,
    /// A local file or device failed (EIO, a full disk).
    Io,
    /// A job (a command run by `jobs`) ended with a failure status or a signal.
    ExitStatus,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// Every kind, in the order tables list them.
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::Timeout,
        ErrorKind::Refused,
        ErrorKind::Reset,
        ErrorKind::Protocol,
        ErrorKind::WrongAnswer,
        ErrorKind::InDoubt,
        ErrorKind::Server,
        ErrorKind::Conflict,
        ErrorKind::Io,
        ErrorKind::ExitStatus,
        ErrorKind::Other,
    ];

    /// The key in the record's `errors_by_kind` (`wrong_answer`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Refused => "refused",
            ErrorKind::Reset => "reset",
            ErrorKind::Protocol => "protocol",
            ErrorKind::WrongAnswer => "wrong_answer",
            ErrorKind::InDoubt => "in_doubt",
            ErrorKind::Server => "server",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Io => "io",
            ErrorKind::ExitStatus => "exit_status",
            ErrorKind::Other => "other",
        }
    }

    /// Its place in [`ErrorKind::ALL`], for counting in an array.
    pub fn index(self) -> usize {
        ErrorKind::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str().replace('_', " "))
    }
}

/// Failed ops by kind, keyed by [`ErrorKind::as_str`]; kinds with none are left out.
pub type ErrorsByKind = BTreeMap<String, u64>;

/// Counts by kind, as an array indexed by [`ErrorKind::index`], into the record's map.
pub fn by_kind(counts: &[u64; ErrorKind::ALL.len()]) -> ErrorsByKind {
    ErrorKind::ALL
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.as_str().to_string(), *n))
        .collect()
}

/// Adds `more` into `into`.
pub fn add(into: &mut ErrorsByKind, more: &ErrorsByKind) {
    for (k, n) in more {
        *into.entry(k.clone()).or_default() += n;
    }
}

/// `2 timeout, 1 reset`: the kinds and their counts, most first.
pub fn describe(errors: &ErrorsByKind) -> String {
    let mut v: Vec<(&String, &u64)> = errors.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("{n} {}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_distinct_keys_and_counts_read_well() {
        let mut keys: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), ErrorKind::ALL.len());
        let mut counts = [0u64; ErrorKind::ALL.len()];
        counts[ErrorKind::Reset.index()] = 1;
        counts[ErrorKind::Timeout.index()] = 2;
        let mut m = by_kind(&counts);
        assert_eq!(describe(&m), "2 timeout, 1 reset");
        add(&mut m, &by_kind(&counts));
        assert_eq!(m.get("timeout"), Some(&4));
        assert_eq!(m.len(), 2);
    }
}
