//! sysbench's OLTP tests, run natively on perflab's SQL sessions: the eleven Lua tests of
//! sysbench 1.0.20 (`oltp_read_write` ... `bulk_insert`) on sysbench's tables `sbtest1..N`,
//! with sysbench's options and defaults, its way of counting queries and its errors that
//! re-run an event; and its command line, as a dialect of `perflab oltp`.
//!
//! - [`test`]: the tests by name and what one event of each is.
//! - [`options`]: the test's options (`--sysbench NAME=VALUE`, sysbench's defaults), the
//!   record's `spec.sysbench`.
//! - [`rand`]: `rand.default` in each `--rand-type`, the digit templates of c and pad,
//!   `rand.unique`.
//! - [`schema`]: the tables' DDL per engine, prepare's load, what a database holds (made by
//!   `sysbench prepare` or by perflab), and dropping only perflab's.
//! - [`client`]: one sysbench thread as an OLTP [`super::client::Client`]: an event per op,
//!   queries counted read/write/other by their answer, ignorable errors re-run.
//! - [`checks`]: the rows (and k's sum) after each step against what the clients did.
//! - [`figures`]: sysbench's figures in the record and its report as tables.
//! - [`cmd`]: what `perflab oltp` asks of sysbench's tests (options, the tables a run needs,
//!   prepare and cleanup).
//! - [`peer`]: `sysbench [TEST] [options] prepare|run|cleanup` as `perflab oltp` reads it;
//!   [`connect`]: the server its driver options name.
//!
//! The test is `--workload oltp_read_write` (any of the eleven names), the family
//! [`super::Mix::Sysbench`]; its options ride in [`super::OltpSpec::sysbench`], as TPC-C's
//! ride in `tpcc`.

pub mod checks;
pub mod client;
pub mod cmd;
pub mod connect;
pub mod figures;
pub mod options;
pub mod peer;
pub mod rand;
pub mod schema;
pub mod test;

pub use options::SysbenchOptions;
pub use peer::SYSBENCH;
pub use test::Test;
