//! TPC-C-style order processing: the five transactions of the TPC-C specification
//! (new-order, payment, order-status, delivery, stock-level) on SQLite, PostgreSQL and
//! MySQL/MariaDB, written once over the connection interface like the other OLTP workloads.
//! perflab reports new orders per minute (NOPM); "TPC-C" and "tpmC" name audited results.
//!
//! - [`input`]: the specification's random inputs (NURand and its constants, last names,
//!   the deck of transaction cards, remote warehouses, think times), with the statistical
//!   self-tests.
//! - [`load`]: the nine tables and their initial population, generated here and sent
//!   through each engine's bulk path.
//! - [`txn`]: the five transactions as prepared statements.
//! - [`consistency`]: the twelve consistency conditions, after the load and every step.
//! - this file: [`Tpcc`], one terminal as a [`Client`], in either [`Mode`].
//!
//! Two modes share everything but the waits. **Throughput** (the default): terminals run
//! transactions back to back, each on a warehouse drawn uniformly from those in play, as
//! HammerDB, BenchBase and go-tpc are usually run. **Spec**: ten terminals per warehouse,
//! each bound to its warehouse and district, each transaction preceded by its keying time
//! and followed by an exponential think time (clause 5.2.5); the runner waits them out
//! ([`crate::workload::Session::pace`]) and times each transaction from its intended start,
//! so a slow system shows as response time, not as a slower schedule. A spec run whose NOPM
//! exceeds 12.86 per warehouse (the most ten terminals with these waits can do) is flagged
//! invalid. Departures from the specification are listed in docs/workloads.md.

pub mod consistency;
pub mod figures;
pub mod input;
pub mod load;
pub mod txn;

use super::client::Client;
use crate::sql::sql::{Conn, DbError};
use crate::vocab::Sweep;
use crate::workload::rng::Rng;
use input::{Constants, Deck, Home, Kind};
use serde::Serialize;
use std::time::Duration;

pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS_PER_DISTRICT: u64 = 3_000;
pub const ITEMS: u64 = 100_000;
pub const STOCK_PER_WAREHOUSE: u64 = 100_000;
/// Orders from this id on are undelivered after loading: 900 new orders per district.
pub const NEW_ORDERS_FROM: u64 = 2_101;
/// Terminals per warehouse in spec mode.
pub const TERMINALS_PER_WAREHOUSE: u64 = 10;
/// The most NOPM one warehouse's ten terminals can reach with the specification's keying
/// and think times (clause 5.4.3 notes about 12.86).
pub const MAX_NOPM_PER_WAREHOUSE: f64 = 12.86;
/// The most warehouses accepted: about 100 MB each.
pub const MAX_WAREHOUSES: u64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// No keying or think times: terminals as fast as they go.
    Throughput,
    /// Ten terminals per warehouse with the specification's keying and think times.
    Spec,
}

/// The workload's own settings, recorded with the run.
#[derive(Debug, Clone, Serialize)]
pub struct TpccOptions {
    pub mode: Mode,
    /// Warehouses in play per step; the database holds the largest.
    pub warehouses: Sweep<u64>,
    /// NURand's constants: drawn for a load, read back from the database for `run`.
    pub constants: Constants,
    /// Keying and think times are multiplied by this (spec mode); anything but 1 makes
    /// the run invalid by the specification's rules, and the record says so.
    pub wait_factor: f64,
}

/// The constants as perflab records them beside the tables: `load,run,c_id,ol_i_id`.
pub fn constants_text(k: &Constants) -> String {
    format!(
        "{},{},{},{}",
        k.c_last_load, k.c_last_run, k.c_id, k.ol_i_id
    )
}

pub fn parse_constants(text: &str) -> Option<Constants> {
    let v: Vec<u64> = text
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    let k = match v[..] {
        [c_last_load, c_last_run, c_id, ol_i_id] => Constants {
            c_last_load,
            c_last_run,
            c_id,
            ol_i_id,
        },
        _ => return None,
    };
    k.valid().then_some(k)
}

/// The inputs of the transaction drawn last, one slot per kind.
#[derive(Default)]
pub struct Drawn {
    pub new_order: input::NewOrder,
    pub payment: Option<input::Payment>,
    pub order_status: Option<input::OrderStatus>,
    pub delivery: Option<input::Delivery>,
    pub stock_level: Option<input::StockLevel>,
}

/// One terminal.
pub struct Tpcc {
    rng: Rng,
    constants: Constants,
    mode: Mode,
    /// Warehouses in play.
    warehouses: u64,
    /// Spec mode: the terminal's warehouse and district.
    bound: Option<(u64, u64)>,
    deck: Deck,
    kind: Kind,
    drawn: Drawn,
    statements: Option<txn::Statements>,
    scratch: txn::Scratch,
    wait_factor: f64,
    /// The think time owed after the transaction in hand (spec mode), in seconds.
    think_after: f64,
    /// New orders run (over warmup and measure), and those rolled back.
    new_orders: u64,
    rollbacks: u64,
    skipped_districts: u64,
}

impl Tpcc {
    /// Terminal `terminal` (numbered from 0 over the run) with `warehouses` in play; in
    /// spec mode it is bound to warehouse `terminal / 10 + 1`, district `terminal % 10 + 1`.
    pub fn new(options: &TpccOptions, warehouses: u64, terminal: u64, seed: u64) -> Self {
        let bound = (options.mode == Mode::Spec).then(|| {
            (
                (terminal / TERMINALS_PER_WAREHOUSE) % warehouses.max(1) + 1,
                terminal % TERMINALS_PER_WAREHOUSE + 1,
            )
        });
        Tpcc {
            rng: Rng::new(seed),
            constants: options.constants,
            mode: options.mode,
            warehouses: warehouses.max(1),
            bound,
            deck: Deck::new(),
            kind: Kind::NewOrder,
            drawn: Drawn::default(),
            statements: None,
            scratch: txn::Scratch::default(),
            wait_factor: options.wait_factor,
            think_after: 0.0,
            new_orders: 0,
            rollbacks: 0,
            skipped_districts: 0,
        }
    }
}

impl Client for Tpcc {
    fn prepare(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        self.statements = Some(txn::Statements::prepare(conn)?);
        Ok(())
    }

    fn draw(&mut self) -> &'static str {
        let rng = &mut self.rng;
        self.kind = self.deck.deal(rng);
        let home = match self.bound {
            Some((w, d)) => Home {
                warehouse: w,
                district: Some(d),
                warehouses: self.warehouses,
            },
            None => Home {
                warehouse: input::uniform(rng, 1, self.warehouses),
                district: None,
                warehouses: self.warehouses,
            },
        };
        let k = &self.constants;
        let d = &mut self.drawn;
        match self.kind {
            Kind::NewOrder => input::new_order(rng, k, &home, &mut d.new_order),
            Kind::Payment => d.payment = Some(input::payment(rng, k, &home)),
            Kind::OrderStatus => d.order_status = Some(input::order_status(rng, k, &home)),
            Kind::Delivery => d.delivery = Some(input::delivery(rng, &home)),
            Kind::StockLevel => d.stock_level = Some(input::stock_level(rng, &home)),
        }
        self.kind.name()
    }

    fn run(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let st = self
            .statements
            .as_ref()
            .ok_or_else(|| DbError::other("the statements are not prepared"))?;
        let out = txn::run(self.kind, conn, st, &mut self.drawn, &mut self.scratch)?;
        self.new_orders += u64::from(self.kind == Kind::NewOrder);
        self.rollbacks += u64::from(out.rolled_back);
        self.skipped_districts += out.skipped_districts;
        Ok(())
    }

    fn paces(&self) -> bool {
        self.mode == Mode::Spec
    }

    /// The think time owed for the last transaction, then the keying time of the one just
    /// drawn.
    fn pause(&mut self) -> Duration {
        let (keying, think) = self.kind.keying_and_think();
        let wait = self.think_after + keying;
        self.think_after = input::think_secs(&mut self.rng, think);
        Duration::from_secs_f64((wait * self.wait_factor).max(0.0))
    }

    fn figures(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("new_orders_per_client", self.new_orders as f64),
            ("new_order_rollbacks_per_client", self.rollbacks as f64),
            (
                "delivery_skipped_districts_per_client",
                self.skipped_districts as f64,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_round_trip_and_bad_ones_are_refused() {
        let k = Constants::draw(&mut Rng::new(4));
        assert_eq!(parse_constants(&constants_text(&k)), Some(k));
        assert_eq!(parse_constants("1,2,3"), None);
        assert_eq!(parse_constants("10,10,3,4"), None);
    }

    #[test]
    fn spec_terminals_are_bound_ten_to_a_warehouse() {
        let options = TpccOptions {
            mode: Mode::Spec,
            warehouses: Sweep::single("warehouses", 2),
            constants: Constants::draw(&mut Rng::new(1)),
            wait_factor: 1.0,
        };
        assert_eq!(Tpcc::new(&options, 2, 0, 1).bound, Some((1, 1)));
        assert_eq!(Tpcc::new(&options, 2, 13, 1).bound, Some((2, 4)));
        let mut t = Tpcc::new(&options, 2, 19, 1);
        // Every pause is at least the keying time of what was drawn.
        for _ in 0..200 {
            let kind = t.draw();
            let keying = t.kind.keying_and_think().0;
            assert_eq!(kind, t.kind.name());
            assert!(t.pause().as_secs_f64() >= keying);
        }
    }
}
