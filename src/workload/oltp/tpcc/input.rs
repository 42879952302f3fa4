//! The specification's random inputs (TPC-C clause 2 and 4.3, 5.2): NURand and its
//! constants, last names, strings, and the transaction deck. Pure functions over perflab's
//! seeded [`Rng`], so the statistical self-tests can check them on generated inputs.

use crate::workload::rng::Rng;
use serde::Serialize;

/// The syllables of a customer's last name (clause 4.3.2.3): a number from 0 to 999 names
/// the syllables of its three digits.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0 to 999): 371 is PRICALLYOUGHT.
pub fn last_name(n: u64) -> String {
    let n = n % 1000;
    let mut s = String::with_capacity(15);
    for d in [n / 100, n / 10 % 10, n % 10] {
        s.push_str(SYLLABLES[d as usize]);
    }
    s
}

/// The run's constants C of NURand (clause 2.1.6): one for last names at load time, one
/// for last names at run time (|C_run - C_load| in 65..=119, but not 96 or 112, so the run
/// does not look up exactly the names the load favoured), one for customer ids and one for
/// item ids. Drawn once per run from its seed, and recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Constants {
    pub c_last_load: u64,
    pub c_last_run: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

impl Constants {
    pub fn draw(rng: &mut Rng) -> Self {
        let c_last_load = rng.below(256);
        let c_last_run = loop {
            let c = rng.below(256);
            let delta = c.abs_diff(c_last_load);
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break c;
            }
        };
        Constants {
            c_last_load,
            c_last_run,
            c_id: rng.below(1024),
            ol_i_id: rng.below(8192),
        }
    }

    /// Whether the run-time constant keeps the specification's distance from the load's.
    pub fn valid(&self) -> bool {
        let delta = self.c_last_run.abs_diff(self.c_last_load);
        (65..=119).contains(&delta)
            && delta != 96
            && delta != 112
            && self.c_last_load < 256
            && self.c_id < 1024
            && self.ol_i_id < 8192
    }
}

/// A uniform integer in `lo..=hi`.
#[inline]
pub fn uniform(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.below(hi - lo + 1)
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
#[inline]
pub fn nurand(rng: &mut Rng, a: u64, c: u64, x: u64, y: u64) -> u64 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

/// A customer id, NURand(1023, 1, 3000).
pub fn customer_id(rng: &mut Rng, k: &Constants) -> u64 {
    nurand(rng, 1023, k.c_id, 1, super::CUSTOMERS_PER_DISTRICT)
}

/// An item id, NURand(8191, 1, 100000).
pub fn item_id(rng: &mut Rng, k: &Constants) -> u64 {
    nurand(rng, 8191, k.ol_i_id, 1, super::ITEMS)
}

/// A last name's number at run time, NURand(255, 0, 999) with the run's constant.
pub fn last_name_number(rng: &mut Rng, k: &Constants) -> u64 {
    nurand(rng, 255, k.c_last_run, 0, 999)
}

const LETTERS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A random a-string of `lo..=hi` characters (letters and digits: nothing COPY or LOAD
/// DATA would treat specially).
pub fn astring(rng: &mut Rng, lo: u64, hi: u64, out: &mut String) {
    for _ in 0..uniform(rng, lo, hi) {
        out.push(LETTERS[rng.below(62) as usize] as char);
    }
}

/// A random n-string (digits) of `len` characters.
pub fn nstring(rng: &mut Rng, len: u64, out: &mut String) {
    for _ in 0..len {
        out.push((b'0' + rng.below(10) as u8) as char);
    }
}

/// I_DATA and S_DATA: 26 to 50 characters, 10% of them holding "ORIGINAL" at a random place.
pub fn data_with_original(rng: &mut Rng, out: &mut String) {
    let start = out.len();
    astring(rng, 26, 50, out);
    if rng.below(10) == 0 {
        let len = out.len() - start;
        let at = start + rng.below((len - 8) as u64 + 1) as usize;
        out.replace_range(at..at + 8, "ORIGINAL");
    }
}

/// A zip code: four random digits and "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut Rng, out: &mut String) {
    nstring(rng, 4, out);
    out.push_str("11111");
}

/// The five transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new_order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order_status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock_level",
        }
    }

    /// The smallest share of the mix the specification allows (clause 5.2.3); new-order
    /// takes the rest.
    pub fn min_share(self) -> f64 {
        match self {
            Kind::NewOrder => 0.0,
            Kind::Payment => 0.43,
            _ => 0.04,
        }
    }

    /// The limit on the 90th percentile of the response time (clause 5.2.5.4). Delivery
    /// runs in the terminal here, so its whole time is held to the interactive part's 5 s
    /// (the deferred part's limit is 80 s).
    pub fn limit_secs(self) -> f64 {
        match self {
            Kind::StockLevel => 20.0,
            _ => 5.0,
        }
    }

    /// Keying time and mean think time in seconds (clause 5.2.5.7).
    pub fn keying_and_think(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery => (2.0, 5.0),
            Kind::StockLevel => (2.0, 5.0),
        }
    }
}

/// Cards per deck: 10 new-orders, 10 payments and one of each other transaction.
pub const DECK: usize = 23;

/// A terminal's deck of transaction cards (clause 5.2.4.2): each deck of 23 is shuffled
/// and dealt in turn, so every 23 transactions hold exactly 10 new-orders (43.5%), 10
/// payments (43.5%) and one of each of the others (4.3%), above every minimum share.
pub struct Deck {
    cards: [Kind; DECK],
    next: usize,
}

impl Deck {
    pub fn new() -> Self {
        let mut cards = [Kind::NewOrder; DECK];
        cards[10..20].fill(Kind::Payment);
        cards[20] = Kind::OrderStatus;
        cards[21] = Kind::Delivery;
        cards[22] = Kind::StockLevel;
        Deck { cards, next: DECK }
    }

    pub fn deal(&mut self, rng: &mut Rng) -> Kind {
        if self.next == DECK {
            // Fisher-Yates.
            for i in (1..DECK).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

impl Default for Deck {
    fn default() -> Self {
        Deck::new()
    }
}

/// Another warehouse than `home`, uniformly among the other `warehouses - 1`; `home` when
/// there is only one. (sysbench-tpcc's equivalent could return only the home warehouse.)
pub fn other_warehouse(rng: &mut Rng, home: u64, warehouses: u64) -> u64 {
    if warehouses <= 1 {
        return home;
    }
    let w = uniform(rng, 1, warehouses - 1);
    if w >= home { w + 1 } else { w }
}

/// A think time: exponential with the given mean, cut at ten times the mean (clause
/// 5.2.5.4).
pub fn think_secs(rng: &mut Rng, mean: f64) -> f64 {
    (-(1.0 - rng.next_f64()).ln() * mean).min(10.0 * mean)
}

/// The most order lines a new order has.
pub const MAX_LINES: usize = 15;

/// Where a terminal works: its home warehouse, and in spec mode its own district (for
/// stock-level); the warehouses in play.
#[derive(Debug, Clone, Copy)]
pub struct Home {
    pub warehouse: u64,
    pub district: Option<u64>,
    pub warehouses: u64,
}

/// How a payment or order-status finds its customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Customer {
    Id(u64),
    /// The number of the last name ([`last_name`]).
    LastName(u64),
}

/// A drawn customer: 60% by last name, NURand(255, 0, 999); else by id, NURand(1023, 1,
/// 3000) (clause 2.5.1.2, 2.6.1.2).
pub fn customer(rng: &mut Rng, k: &Constants) -> Customer {
    if rng.below(100) < 60 {
        Customer::LastName(last_name_number(rng, k))
    } else {
        Customer::Id(customer_id(rng, k))
    }
}

/// One order line's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Line {
    pub item: u64,
    pub supply_warehouse: u64,
    pub quantity: u64,
}

/// New-order's input (clause 2.4.1).
#[derive(Debug, Clone, Default)]
pub struct NewOrder {
    pub warehouse: u64,
    pub district: u64,
    pub customer: u64,
    /// 5 to 15 lines; in 1% of orders the last line's item does not exist (100,001), and
    /// the order is rolled back.
    pub lines: Vec<Line>,
    pub rollback: bool,
}

/// The item id no item has: 1% of new orders end on it and roll back.
pub const UNUSED_ITEM: u64 = super::ITEMS + 1;

pub fn new_order(rng: &mut Rng, k: &Constants, home: &Home, out: &mut NewOrder) {
    out.warehouse = home.warehouse;
    out.district = uniform(rng, 1, super::DISTRICTS);
    out.customer = customer_id(rng, k);
    let count = uniform(rng, 5, MAX_LINES as u64) as usize;
    out.rollback = uniform(rng, 1, 100) == 1;
    out.lines.clear();
    for i in 0..count {
        let item = if out.rollback && i == count - 1 {
            UNUSED_ITEM
        } else {
            item_id(rng, k)
        };
        // 1% of lines are supplied by another warehouse (when there is one).
        let supply_warehouse = if home.warehouses > 1 && uniform(rng, 1, 100) == 1 {
            other_warehouse(rng, home.warehouse, home.warehouses)
        } else {
            home.warehouse
        };
        out.lines.push(Line {
            item,
            supply_warehouse,
            quantity: uniform(rng, 1, 10),
        });
    }
}

/// Payment's input (clause 2.5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payment {
    pub warehouse: u64,
    pub district: u64,
    pub customer_warehouse: u64,
    pub customer_district: u64,
    pub customer: Customer,
    /// 1.00 to 5,000.00, in cents.
    pub amount: u64,
}

pub fn payment(rng: &mut Rng, k: &Constants, home: &Home) -> Payment {
    let district = uniform(rng, 1, super::DISTRICTS);
    // 85% pay through their own district; 15% through a district of another warehouse
    // (of the home warehouse when it is the only one).
    let (customer_warehouse, customer_district) = if uniform(rng, 1, 100) <= 85 {
        (home.warehouse, district)
    } else {
        (
            other_warehouse(rng, home.warehouse, home.warehouses),
            uniform(rng, 1, super::DISTRICTS),
        )
    };
    Payment {
        warehouse: home.warehouse,
        district,
        customer_warehouse,
        customer_district,
        customer: customer(rng, k),
        amount: uniform(rng, 100, 500_000),
    }
}

/// Order-status's input (clause 2.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderStatus {
    pub warehouse: u64,
    pub district: u64,
    pub customer: Customer,
}

pub fn order_status(rng: &mut Rng, k: &Constants, home: &Home) -> OrderStatus {
    OrderStatus {
        warehouse: home.warehouse,
        district: uniform(rng, 1, super::DISTRICTS),
        customer: customer(rng, k),
    }
}

/// Delivery's input (clause 2.7.1): the warehouse and a carrier from 1 to 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    pub warehouse: u64,
    pub carrier: u64,
}

pub fn delivery(rng: &mut Rng, home: &Home) -> Delivery {
    Delivery {
        warehouse: home.warehouse,
        carrier: uniform(rng, 1, 10),
    }
}

/// Stock-level's input (clause 2.8.1): the terminal's own district (a random one in
/// throughput mode, where terminals have none) and a threshold from 10 to 20.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StockLevel {
    pub warehouse: u64,
    pub district: u64,
    pub threshold: u64,
}

pub fn stock_level(rng: &mut Rng, home: &Home) -> StockLevel {
    StockLevel {
        warehouse: home.warehouse,
        district: home
            .district
            .unwrap_or_else(|| uniform(rng, 1, super::DISTRICTS)),
        threshold: uniform(rng, 10, 20),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllables() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn constants_keep_their_distance() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let k = Constants::draw(&mut rng);
            assert!(k.valid(), "{k:?}");
        }
    }

    #[test]
    fn the_deck_deals_the_mix_exactly() {
        let mut rng = Rng::new(3);
        let mut deck = Deck::new();
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..DECK * 100 {
            *counts.entry(deck.deal(&mut rng)).or_insert(0) += 1;
        }
        assert_eq!(counts[&Kind::NewOrder], 1000);
        assert_eq!(counts[&Kind::Payment], 1000);
        assert_eq!(counts[&Kind::Delivery], 100);
    }

    #[test]
    fn other_warehouse_is_never_home_and_covers_the_rest() {
        let mut rng = Rng::new(5);
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            let w = other_warehouse(&mut rng, 3, 4);
            assert_ne!(w, 3);
            seen[w as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(
            seen[1] > 3000 && seen[2] > 3000 && seen[4] > 3000,
            "{seen:?}"
        );
        assert_eq!(other_warehouse(&mut rng, 1, 1), 1);
    }

    #[test]
    fn original_is_placed_in_a_tenth_of_the_data() {
        let mut rng = Rng::new(9);
        let mut hits = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            data_with_original(&mut rng, &mut s);
            assert!((26..=50).contains(&s.len()));
            hits += usize::from(s.contains("ORIGINAL"));
        }
        assert!((800..1200).contains(&hits), "{hits}");
    }
    /// Share of `hits` in `n`, within `tol` of `p` (the tolerance is several standard
    /// errors at these sample sizes: the seed is fixed, the test is about the rules).
    fn near(hits: usize, n: usize, p: f64, tol: f64) -> bool {
        ((hits as f64 / n as f64) - p).abs() <= tol
    }

    fn range_of(x: u64, y: u64) -> u64 {
        y - x + 1
    }

    fn home(warehouses: u64) -> Home {
        Home {
            warehouse: 2,
            district: Some(4),
            warehouses,
        }
    }

    /// The histogram of NURand(A, x, y) has the specification's shape: not uniform (the
    /// most frequent values are drawn several times as often as the mean), every value in
    /// range, and the same frequencies a direct computation of the formula gives.
    #[test]
    fn nurand_is_in_range_and_skewed_as_specified() {
        let mut rng = Rng::new(11);
        let k = Constants::draw(&mut rng);
        for (a, c, x, y) in [
            (1023, k.c_id, 1, 3000),
            (8191, k.ol_i_id, 1, 100_000),
            (255, k.c_last_run, 0, 999),
        ] {
            let n = 400_000;
            let mut counts = vec![0u32; (y - x + 1) as usize];
            for _ in 0..n {
                let v = nurand(&mut rng, a, c, x, y);
                assert!((x..=y).contains(&v), "{v} outside {x}..={y}");
                counts[(v - x) as usize] += 1;
            }
            if a > 1023 {
                // Enumerating the item law would take 800 million steps: its skew is
                // checked on the draws alone (the busiest 1% of items take over 3%).
                let mut sorted = counts.clone();
                sorted.sort_unstable_by(|p, q| q.cmp(p));
                let top: u32 = sorted[..(range_of(x, y) / 100) as usize].iter().sum();
                assert!(top as f64 / n as f64 > 0.03, "A={a}: top 1% {top}");
                continue;
            }
            // The exact probabilities of the formula, by enumerating random(0, A).
            let range = y - x + 1;
            let mut exact = vec![0f64; range as usize];
            let p = 1.0 / ((a + 1) as f64 * range as f64);
            for r1 in 0..=a {
                for r2 in x..=y {
                    exact[(((r1 | r2) + c) % range) as usize] += p;
                }
            }
            let top = exact.iter().cloned().fold(0.0, f64::max);
            assert!(top * range as f64 > 2.0, "A={a}: not skewed ({top})");
            // Chi-square against the exact law over buckets of 100 values.
            let mut chi = 0.0;
            let mut buckets = 0;
            for (obs, exp) in counts.chunks(100).zip(exact.chunks(100)) {
                let o: f64 = obs.iter().map(|&c| c as f64).sum();
                let e: f64 = exp.iter().sum::<f64>() * n as f64;
                chi += (o - e) * (o - e) / e;
                buckets += 1;
            }
            // Mean buckets - 1, standard deviation sqrt(2 (buckets - 1)): 6 sigma is loose.
            let df = (buckets - 1) as f64;
            assert!(
                chi < df + 6.0 * (2.0 * df).sqrt(),
                "A={a}: chi2 {chi} over {df}"
            );
        }
    }

    #[test]
    fn remote_lines_payments_and_lookups_take_their_shares() {
        let mut rng = Rng::new(13);
        let k = Constants::draw(&mut rng);
        let four = home(4);
        let (mut lines, mut remote_lines, mut rollbacks) = (0, 0, 0);
        let orders = 100_000;
        let mut o = NewOrder::default();
        for _ in 0..orders {
            new_order(&mut rng, &k, &four, &mut o);
            assert!((5..=15).contains(&o.lines.len()));
            lines += o.lines.len();
            remote_lines += o.lines.iter().filter(|l| l.supply_warehouse != 2).count();
            rollbacks += usize::from(o.rollback);
            assert_eq!(o.rollback, o.lines.last().unwrap().item == UNUSED_ITEM);
        }
        assert!(
            near(remote_lines, lines, 0.01, 0.001),
            "{remote_lines}/{lines}"
        );
        assert!(near(rollbacks, orders, 0.01, 0.002), "{rollbacks}");
        let n = 100_000;
        let (mut remote, mut by_name) = (0, 0);
        for _ in 0..n {
            let p = payment(&mut rng, &k, &four);
            remote += usize::from(p.customer_warehouse != p.warehouse);
            by_name += usize::from(matches!(p.customer, Customer::LastName(_)));
            assert!((100..=500_000).contains(&p.amount));
        }
        // A check that would catch a remote pick that never leaves home.
        assert!(near(remote, n, 0.15, 0.005), "{remote}");
        assert!(near(by_name, n, 0.60, 0.005), "{by_name}");
        // One warehouse: nothing is remote, payments still pick other districts.
        let one = home(1);
        for _ in 0..1000 {
            new_order(&mut rng, &k, &one, &mut o);
            assert!(o.lines.iter().all(|l| l.supply_warehouse == 2));
            assert_eq!(payment(&mut rng, &k, &one).customer_warehouse, 2);
        }
        assert_eq!(stock_level(&mut rng, &four).district, 4);
    }

    #[test]
    fn think_times_are_exponential_and_cut_at_ten_means() {
        let mut rng = Rng::new(17);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| think_secs(&mut rng, 12.0)).collect();
        assert!(draws.iter().all(|&t| (0.0..=120.0).contains(&t)));
        let mean = draws.iter().sum::<f64>() / n as f64;
        // The cut removes e^-10 of the mass: the mean stays 12 within sampling error.
        assert!((mean - 12.0).abs() < 0.15, "{mean}");
    }
}
