//! The nine tables and their initial population (clause 4.3.3.1), generated here from a
//! seeded generator and sent through each engine's bulk path ([`Conn::load_file`]: `COPY`,
//! `LOAD DATA LOCAL INFILE`, one SQLite transaction), one warehouse at a time, so a load
//! shows progress and stops on Ctrl-C between warehouses. Secondary indexes are built after
//! the rows (and PostgreSQL's primary keys, as for the other workloads).
//!
//! Money is kept in cents and rates in hundredths of a percent, as integers (see the module
//! docs of [`super`]).

use super::input::{self, Constants, astring, data_with_original, nstring, uniform, zip};
use super::{CUSTOMERS_PER_DISTRICT, DISTRICTS, ITEMS, NEW_ORDERS_FROM, STOCK_PER_WAREHOUSE};
use crate::sql::schema::{self, Table};
use crate::sql::sql::{Conn, DbError, Dialect, stopped};
use crate::stop::Stop;
use crate::workload::rng::Rng;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

pub const TABLES: [Table; 9] = [
    Table {
        name: "warehouse",
        columns: "w_id integer NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax integer, w_ytd bigint",
        key: "w_id",
    },
    Table {
        name: "district",
        columns: "d_id integer NOT NULL, d_w_id integer NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax integer, d_ytd bigint, d_next_o_id integer",
        key: "d_w_id, d_id",
    },
    Table {
        name: "customer",
        columns: "c_id integer NOT NULL, c_d_id integer NOT NULL, c_w_id integer NOT NULL, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp NULL, c_credit char(2), c_credit_lim bigint, c_discount integer, c_balance bigint, c_ytd_payment bigint, c_payment_cnt integer, c_delivery_cnt integer, c_data varchar(500)",
        key: "c_w_id, c_d_id, c_id",
    },
    Table {
        name: "history",
        columns: "h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, h_w_id integer, h_date timestamp NULL, h_amount bigint, h_data varchar(24)",
        key: "",
    },
    Table {
        name: "new_order",
        columns: "no_o_id integer NOT NULL, no_d_id integer NOT NULL, no_w_id integer NOT NULL",
        key: "no_w_id, no_d_id, no_o_id",
    },
    Table {
        name: "orders",
        columns: "o_id integer NOT NULL, o_d_id integer NOT NULL, o_w_id integer NOT NULL, o_c_id integer, o_entry_d timestamp NULL, o_carrier_id integer, o_ol_cnt integer, o_all_local integer",
        key: "o_w_id, o_d_id, o_id",
    },
    Table {
        name: "order_line",
        columns: "ol_o_id integer NOT NULL, ol_d_id integer NOT NULL, ol_w_id integer NOT NULL, ol_number integer NOT NULL, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d timestamp NULL, ol_quantity integer, ol_amount integer, ol_dist_info char(24)",
        key: "ol_w_id, ol_d_id, ol_o_id, ol_number",
    },
    Table {
        name: "item",
        columns: "i_id integer NOT NULL, i_im_id integer, i_name varchar(24), i_price integer, i_data varchar(50)",
        key: "i_id",
    },
    Table {
        name: "stock",
        columns: "s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_quantity integer, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd integer, s_order_cnt integer, s_remote_cnt integer, s_data varchar(50)",
        key: "s_w_id, s_i_id",
    },
];

/// The indexes the transactions need beyond the keys: customers by last name (payment and
/// order-status), a customer's orders (order-status).
const INDEXES: [(&str, &str, &str); 2] = [
    (
        "customer_by_name",
        "customer",
        "c_w_id, c_d_id, c_last, c_first",
    ),
    (
        "orders_by_customer",
        "orders",
        "o_w_id, o_d_id, o_c_id, o_id",
    ),
];

/// The columns the transactions and the consistency checks filter, join, group and sort on:
/// PostgreSQL gathers statistics on these alone (the random text columns would take most of
/// `ANALYZE`'s time and tell the planner nothing it uses).
const STATISTICS: [(&str, &str); 9] = [
    ("warehouse", "w_id"),
    ("district", "d_w_id, d_id, d_next_o_id"),
    ("customer", "c_w_id, c_d_id, c_id, c_last, c_first"),
    ("history", "h_c_w_id, h_c_d_id, h_c_id, h_w_id, h_d_id"),
    ("new_order", "no_w_id, no_d_id, no_o_id"),
    ("orders", "o_w_id, o_d_id, o_id, o_c_id, o_carrier_id"),
    (
        "order_line",
        "ol_w_id, ol_d_id, ol_o_id, ol_i_id, ol_delivery_d",
    ),
    ("item", "i_id"),
    ("stock", "s_w_id, s_i_id, s_quantity"),
];

/// The columns of each table, in the order the generator writes them.
fn columns(table: &Table) -> Vec<&'static str> {
    table
        .columns
        .split(", ")
        .map(|c| c.split(' ').next().unwrap_or(c))
        .collect()
}

/// Rows written per table as the load goes, for the closing note.
#[derive(Default)]
struct Written {
    rows: u64,
}

/// Where the generator writes one table's rows for one warehouse before they are loaded.
struct Files {
    dir: PathBuf,
}

impl Files {
    fn new() -> Result<Self, DbError> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("perflab-tpcc-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| DbError::other(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Files { dir })
    }

    /// Writes `text` as the file for `table` and loads it.
    fn load(
        &self,
        conn: &mut dyn Conn,
        table: &Table,
        text: &str,
        written: &mut Written,
    ) -> Result<(), DbError> {
        let path = self.dir.join(format!("{}.tsv", table.name));
        write_file(&path, text)?;
        written.rows += conn.load_file(table.name, &columns(table), &path)?;
        let _ = std::fs::remove_file(&path);
        Ok(())
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), DbError> {
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| DbError::other(format!("cannot write {}: {e}", path.display())))
}

fn table(name: &str) -> &'static Table {
    TABLES.iter().find(|t| t.name == name).unwrap_or(&TABLES[0])
}

/// `2026-11-25 20:17:31`: the load's timestamp, in the form all three engines read.
fn load_time() -> String {
    let t = crate::record::timestamp::now_rfc3339();
    t.get(..19).unwrap_or(&t).replace('T', " ")
}

/// Creates and loads `warehouses` warehouses, recording the run's NURand constants beside
/// the tables so a later `oltp run` uses the same.
pub fn load(
    conn: &mut dyn Conn,
    warehouses: u64,
    constants: &Constants,
    note: &dyn Fn(&str),
) -> Result<(), DbError> {
    note(&format!(
        "prepare: loading {warehouses} warehouses ({} customers, {} stock rows, {ITEMS} items)",
        warehouses * DISTRICTS * CUSTOMERS_PER_DISTRICT,
        warehouses * STOCK_PER_WAREHOUSE
    ));
    schema::create(conn, "tpcc", warehouses, &TABLES)?;
    schema::record(conn, "tpcc_constants", &super::constants_text(constants))?;
    let started = std::time::Instant::now();
    let files = Files::new()?;
    let now = load_time();
    let mut written = Written::default();
    // One thread generates the next tables while this one loads: the generator's CPU and
    // the server's overlap instead of taking turns.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, &'static str, String)>(2);
    let stop = conn.stop().clone();
    let loaded = std::thread::scope(|scope| -> Result<(), DbError> {
        let now = now.as_str();
        scope.spawn(move || generate(warehouses, constants, now, tx, &stop));
        let mut shown = started;
        for (w, name, text) in rx {
            stopped(conn)?;
            files.load(conn, table(name), &text, &mut written)?;
            if name == "new_order" && (shown.elapsed().as_secs() >= 2 || w == warehouses) {
                shown = std::time::Instant::now();
                note(&format!(
                    "prepare: {w} of {warehouses} warehouses ({:.0} rows/s)",
                    written.rows as f64 / started.elapsed().as_secs_f64().max(1e-9)
                ));
            }
        }
        // The generator stops early only when interrupted.
        stopped(conn)
    });
    // Dropping the receiver on an error ends the generator at its next table.
    loaded?;
    let rows_secs = started.elapsed().as_secs_f64();
    for (name, on, cols) in INDEXES {
        conn.batch(&format!("CREATE INDEX {name} ON {on} ({cols})"))?;
    }
    schema::finish_with_statistics(conn, &TABLES, &STATISTICS, note)?;
    // The helper table schema::create made is not used here; finish dropped it.
    let secs = started.elapsed().as_secs_f64();
    note(&format!(
        "prepare: done in {secs:.1} s ({} rows, {:.0} rows/s; rows {rows_secs:.1} s, keys, indexes and statistics {:.1} s)",
        written.rows,
        written.rows as f64 / secs.max(1e-9),
        secs - rows_secs
    ));
    Ok(())
}

/// Writes one warehouse's rows of one table.
type Fill = fn(&mut Rng, u64, &Constants, &str, &mut String);

/// The item table, then each warehouse's tables in loading order, sent as text; stops when
/// the loader hangs up or the user presses Ctrl-C.
fn generate(
    warehouses: u64,
    constants: &Constants,
    now: &str,
    tx: std::sync::mpsc::SyncSender<(u64, &'static str, String)>,
    stop: &Stop,
) {
    let mut text = String::with_capacity(16 << 20);
    items(&mut Rng::new(0x7063_6300 ^ warehouses), &mut text);
    if tx.send((0, "item", text)).is_err() {
        return;
    }
    for w in 1..=warehouses {
        if stop.is_set() {
            return;
        }
        let mut rng = Rng::new(0x7063_6300 ^ w.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for (name, fill) in [
            ("warehouse", warehouse as Fill),
            ("district", district),
            ("stock", stock),
            ("customer", customer),
            ("history", history),
            ("orders", orders),
            ("order_line", order_lines),
            ("new_order", new_orders),
        ] {
            let mut text = String::with_capacity(1 << 20);
            fill(&mut rng, w, constants, now, &mut text);
            if tx.send((w, name, text)).is_err() {
                return;
            }
        }
    }
}

fn items(rng: &mut Rng, out: &mut String) {
    for i in 1..=ITEMS {
        let _ = write!(out, "{i}\t{}\t", uniform(rng, 1, 10_000));
        astring(rng, 14, 24, out);
        let _ = write!(out, "\t{}\t", uniform(rng, 100, 10_000));
        data_with_original(rng, out);
        out.push('\n');
    }
}

/// Name, two streets, city, state, zip: the address columns of warehouses, districts and
/// customers.
fn address(rng: &mut Rng, out: &mut String) {
    for (lo, hi) in [(10, 20), (10, 20), (10, 20)] {
        astring(rng, lo, hi, out);
        out.push('\t');
    }
    astring(rng, 2, 2, out);
    out.push('\t');
    zip(rng, out);
}

fn warehouse(rng: &mut Rng, w: u64, _: &Constants, _: &str, out: &mut String) {
    let _ = write!(out, "{w}\t");
    astring(rng, 6, 10, out);
    out.push('\t');
    address(rng, out);
    // W_TAX 0.0000 to 0.2000 in hundredths of a percent; W_YTD 300,000.00 in cents.
    let _ = writeln!(out, "\t{}\t{}", uniform(rng, 0, 2000), 30_000_000);
}

fn district(rng: &mut Rng, w: u64, _: &Constants, _: &str, out: &mut String) {
    for d in 1..=DISTRICTS {
        let _ = write!(out, "{d}\t{w}\t");
        astring(rng, 6, 10, out);
        out.push('\t');
        address(rng, out);
        let _ = writeln!(
            out,
            "\t{}\t{}\t{}",
            uniform(rng, 0, 2000),
            3_000_000,
            CUSTOMERS_PER_DISTRICT + 1
        );
    }
}

fn stock(rng: &mut Rng, w: u64, _: &Constants, _: &str, out: &mut String) {
    for i in 1..=STOCK_PER_WAREHOUSE {
        let _ = write!(out, "{i}\t{w}\t{}\t", uniform(rng, 10, 100));
        for _ in 0..10 {
            astring(rng, 24, 24, out);
            out.push('\t');
        }
        out.push_str("0\t0\t0\t");
        data_with_original(rng, out);
        out.push('\n');
    }
}

fn customer(rng: &mut Rng, w: u64, k: &Constants, now: &str, out: &mut String) {
    for d in 1..=DISTRICTS {
        for c in 1..=CUSTOMERS_PER_DISTRICT {
            let _ = write!(out, "{c}\t{d}\t{w}\t");
            astring(rng, 8, 16, out);
            out.push_str("\tOE\t");
            // The first 1,000 customers of a district take every last name once; the rest
            // are drawn with the load's constant.
            let name = if c <= 1000 {
                c - 1
            } else {
                input::nurand(rng, 255, k.c_last_load, 0, 999)
            };
            out.push_str(&input::last_name(name));
            out.push('\t');
            address(rng, out);
            out.push('\t');
            nstring(rng, 16, out);
            let credit = if rng.below(10) == 0 { "BC" } else { "GC" };
            // C_CREDIT_LIM 50,000.00; C_DISCOUNT 0 to 0.5000; C_BALANCE -10.00;
            // C_YTD_PAYMENT 10.00; one payment, no delivery.
            let _ = write!(
                out,
                "\t{now}\t{credit}\t5000000\t{}\t-1000\t1000\t1\t0\t",
                uniform(rng, 0, 5000)
            );
            astring(rng, 300, 500, out);
            out.push('\n');
        }
    }
}

fn history(rng: &mut Rng, w: u64, _: &Constants, now: &str, out: &mut String) {
    for d in 1..=DISTRICTS {
        for c in 1..=CUSTOMERS_PER_DISTRICT {
            let _ = write!(out, "{c}\t{d}\t{w}\t{d}\t{w}\t{now}\t1000\t");
            astring(rng, 12, 24, out);
            out.push('\n');
        }
    }
}

/// The order lines' counts, drawn once per warehouse for orders and lines alike: the
/// generator runs orders first and keeps them in this order.
fn line_counts(w: u64) -> Vec<u8> {
    let mut rng = Rng::new(0x6f6c_0000 ^ w);
    (0..DISTRICTS * CUSTOMERS_PER_DISTRICT)
        .map(|_| uniform(&mut rng, 5, 15) as u8)
        .collect()
}

fn orders(rng: &mut Rng, w: u64, _: &Constants, now: &str, out: &mut String) {
    let counts = line_counts(w);
    for d in 1..=DISTRICTS {
        // O_C_ID: a random permutation of the customers.
        let mut customers: Vec<u64> = (1..=CUSTOMERS_PER_DISTRICT).collect();
        for i in (1..customers.len()).rev() {
            customers.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for o in 1..=CUSTOMERS_PER_DISTRICT {
            let carrier = if o < NEW_ORDERS_FROM {
                uniform(rng, 1, 10).to_string()
            } else {
                "\\N".to_string()
            };
            let lines = counts[((d - 1) * CUSTOMERS_PER_DISTRICT + o - 1) as usize];
            let _ = writeln!(
                out,
                "{o}\t{d}\t{w}\t{}\t{now}\t{carrier}\t{lines}\t1",
                customers[(o - 1) as usize]
            );
        }
    }
}

fn order_lines(rng: &mut Rng, w: u64, _: &Constants, now: &str, out: &mut String) {
    let counts = line_counts(w);
    for d in 1..=DISTRICTS {
        for o in 1..=CUSTOMERS_PER_DISTRICT {
            let lines = counts[((d - 1) * CUSTOMERS_PER_DISTRICT + o - 1) as usize];
            for n in 1..=lines as u64 {
                let item = uniform(rng, 1, ITEMS);
                // Delivered orders have their date and no amount; the newest 900 have an
                // amount of 0.01 to 9,999.99 and no date yet.
                let (date, amount) = if o < NEW_ORDERS_FROM {
                    (now, 0)
                } else {
                    ("\\N", uniform(rng, 1, 999_999))
                };
                let _ = write!(
                    out,
                    "{o}\t{d}\t{w}\t{n}\t{item}\t{w}\t{date}\t5\t{amount}\t"
                );
                astring(rng, 24, 24, out);
                out.push('\n');
            }
        }
    }
}

fn new_orders(_: &mut Rng, w: u64, _: &Constants, _: &str, out: &mut String) {
    for d in 1..=DISTRICTS {
        for o in NEW_ORDERS_FROM..=CUSTOMERS_PER_DISTRICT {
            let _ = writeln!(out, "{o}\t{d}\t{w}");
        }
    }
}

/// The SQL that adds text pieces, per engine: `||` for SQLite and PostgreSQL, `concat()`
/// for MySQL (where `||` means OR).
pub fn concat(d: Dialect, parts: &[&str]) -> String {
    match d {
        Dialect::Mysql => format!("concat({})", parts.join(", ")),
        _ => format!("({})", parts.join(" || ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_tables_columns() {
        let k = Constants {
            c_last_load: 1,
            c_last_run: 100,
            c_id: 2,
            ol_i_id: 3,
        };
        let mut rng = Rng::new(1);
        let fills: [(&str, Fill); 8] = [
            ("warehouse", warehouse),
            ("district", district),
            ("stock", stock),
            ("customer", customer),
            ("history", history),
            ("orders", orders),
            ("order_line", order_lines),
            ("new_order", new_orders),
        ];
        for (name, fill) in fills {
            let mut text = String::new();
            fill(&mut rng, 1, &k, "2026-01-01 00:00:00", &mut text);
            let width = columns(table(name)).len();
            for line in text.lines() {
                assert_eq!(line.split('\t').count(), width, "{name}: {line}");
            }
        }
        let mut text = String::new();
        items(&mut rng, &mut text);
        assert_eq!(text.lines().count() as u64, ITEMS);
    }

    #[test]
    fn orders_and_lines_agree_on_the_line_counts() {
        let k = Constants {
            c_last_load: 1,
            c_last_run: 100,
            c_id: 2,
            ol_i_id: 3,
        };
        let (mut o, mut l) = (String::new(), String::new());
        orders(&mut Rng::new(1), 2, &k, "t", &mut o);
        order_lines(&mut Rng::new(1), 2, &k, "t", &mut l);
        let declared: u64 = o
            .lines()
            .map(|r| r.split('\t').nth(6).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(declared, l.lines().count() as u64);
    }
}
