//! DebitCredit (TPC-B), with pgbench's schema and scale so results compare directly.
//!
//! Per scale unit: 1 branch, 10 tellers, 100,000 accounts. One transaction, as TPC-B and
//! pgbench's built-in "tpcb-like" script define it:
//!
//! ```sql
//! UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//! SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//! UPDATE pgbench_tellers  SET tbalance = tbalance + :delta WHERE tid = :tid;
//! UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//! INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, now);
//! COMMIT;
//! ```
//!
//! with `aid` uniform over all accounts, `bid` over branches, `tid` over tellers and `delta`
//! uniform in -5000..=5000 (pgbench's choices). The select-only variant (`pgbench -S`) runs the
//! SELECT alone. After a run, the books must balance: the sums of account, teller and branch
//! balances and of the history's deltas are all equal ([`Books`]).

use crate::workload::rng::Rng;

/// Accounts, tellers and branches per scale unit (pgbench's and TPC-B's ratios).
pub const ACCOUNTS_PER_SCALE: u64 = 100_000;
pub const TELLERS_PER_SCALE: u64 = 10;

/// The tables, in the order they are created and dropped.
pub const TABLES: [&str; 4] = [
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_accounts",
    "pgbench_history",
];

/// One transaction's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Txn {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
}

impl Txn {
    /// Draws a transaction at `scale`, as pgbench does.
    pub fn draw(rng: &mut Rng, scale: u64) -> Txn {
        Txn {
            aid: 1 + rng.below(ACCOUNTS_PER_SCALE * scale) as i64,
            bid: 1 + rng.below(scale) as i64,
            tid: 1 + rng.below(TELLERS_PER_SCALE * scale) as i64,
            delta: rng.below(10_001) as i64 - 5000,
        }
    }
}

/// The four sums that must agree after any number of committed transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Books {
    pub accounts: i64,
    pub tellers: i64,
    pub branches: i64,
    pub history: i64,
}

impl Books {
    pub fn balanced(&self) -> bool {
        self.accounts == self.tellers
            && self.tellers == self.branches
            && self.branches == self.history
    }
}

impl std::fmt::Display for Books {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "accounts {}, tellers {}, branches {}, history {}",
            self.accounts, self.tellers, self.branches, self.history
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range() {
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            let t = Txn::draw(&mut rng, 2);
            assert!((1..=200_000).contains(&t.aid));
            assert!((1..=2).contains(&t.bid));
            assert!((1..=20).contains(&t.tid));
            assert!((-5000..=5000).contains(&t.delta));
        }
    }

    #[test]
    fn books_balance_only_when_all_four_agree() {
        let b = Books {
            accounts: 7,
            tellers: 7,
            branches: 7,
            history: 7,
        };
        assert!(b.balanced());
        assert!(!Books { history: 6, ..b }.balanced());
    }
}
