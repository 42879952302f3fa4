//! The transaction workloads, by name: what each creates, loads, runs and checks.

use super::client::Client;
use super::debitcredit::{self, DebitCredit};
use super::orderentry::{self, OrderEntry};
use super::tpcc;
use crate::sql::schema::Table;
use crate::sql::sql::{Conn, DbError};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mix {
    /// TPC-B's transaction on pgbench's schema.
    Debitcredit,
    /// Customers, orders and order lines, 90/10 by statements.
    Orderentry,
    /// TPC-C-style order processing: five transactions over nine tables.
    Tpcc,
    /// One of sysbench's OLTP tests on its `sbtestN` tables (the test and its options are
    /// [`super::sysbench::SysbenchOptions`]).
    Sysbench,
}

impl Mix {
    pub const ALL: [Mix; 4] = [Mix::Debitcredit, Mix::Orderentry, Mix::Tpcc, Mix::Sysbench];

    pub fn parse(name: &str) -> Option<Mix> {
        match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "debitcredit" | "tpcb" => Some(Mix::Debitcredit),
            "orderentry" => Some(Mix::Orderentry),
            "tpcc" | "orderprocessing" => Some(Mix::Tpcc),
            _ if super::sysbench::Test::parse(name).is_some() => Some(Mix::Sysbench),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mix::Debitcredit => "debitcredit",
            Mix::Orderentry => "orderentry",
            Mix::Tpcc => "tpcc",
            Mix::Sysbench => "sysbench",
        }
    }

    /// What one unit of `--scale` is.
    pub fn unit(self) -> &'static str {
        match self {
            Mix::Debitcredit => "branches: 100,000 accounts and 10 tellers each",
            Mix::Orderentry => "thousands of customers, 10 orders of 5 lines each",
            Mix::Tpcc => "warehouses: 10 districts, 30,000 customers and 100,000 stock rows each",
            Mix::Sysbench => "rows a table (sysbench's --table-size)",
        }
    }

    /// The largest scale accepted: a billion accounts, or 100 million customers.
    pub fn max_scale(self) -> u64 {
        match self {
            Mix::Debitcredit => 10_000,
            Mix::Orderentry => 100_000,
            Mix::Tpcc => tpcc::MAX_WAREHOUSES,
            Mix::Sysbench => i32::MAX as u64,
        }
    }

    pub fn tables(self) -> &'static [Table] {
        match self {
            Mix::Debitcredit => &debitcredit::TABLES,
            Mix::Orderentry => &orderentry::TABLES,
            Mix::Tpcc => &tpcc::load::TABLES,
            // sysbench's tables are numbered (`sbtest1..N`): its own module finds them.
            Mix::Sysbench => &[],
        }
    }

    /// Every table any workload creates: what cleanup may drop when perflab listed it.
    pub fn known_tables() -> Vec<&'static str> {
        Mix::ALL
            .iter()
            .flat_map(|m| m.tables().iter().map(|t| t.name))
            .collect()
    }

    /// Creates and loads the tables; `constants` are TPC-C's NURand constants (recorded
    /// beside its tables), which the other workloads do not use.
    pub fn load(
        self,
        conn: &mut dyn Conn,
        scale: u64,
        note: &dyn Fn(&str),
        constants: &tpcc::input::Constants,
    ) -> Result<(), DbError> {
        match self {
            Mix::Debitcredit => debitcredit::load(conn, scale, note),
            Mix::Orderentry => orderentry::load(conn, scale, note),
            Mix::Tpcc => tpcc::load::load(conn, scale, constants, note),
            Mix::Sysbench => Err(DbError::other(
                "sysbench's tables are loaded with their options (sysbench::schema::prepare)",
            )),
        }
    }

    /// One user's transactions; `reads_only` is `--select-only`. None for TPC-C and
    /// sysbench, whose clients need the run's options ([`tpcc::Tpcc::new`],
    /// [`super::sysbench::client::Sysbench::new`]).
    pub fn client(self, scale: u64, reads_only: bool, seed: u64) -> Option<Box<dyn Client>> {
        match self {
            Mix::Debitcredit => Some(Box::new(DebitCredit::new(scale, reads_only, seed))),
            Mix::Orderentry => Some(Box::new(OrderEntry::new(scale, reads_only, seed))),
            Mix::Tpcc | Mix::Sysbench => None,
        }
    }
}
