//! The star schema's data: three dimensions of fixed size and a fact table of any size, every
//! row a pure function of the run's seed and its number, so files can be written in parallel
//! and perflab can compute every answer (the [`Truth`]) without asking the database.
//!
//! - `olap_date`: every day of 2024 to 2026 (1,096 rows): year, quarter, month, day.
//! - `olap_product`: 1,000 products in 20 categories and 100 brands, each with a unit price.
//! - `olap_store`: 200 stores in 10 regions and 50 cities.
//! - `olap_sales`: one row per sale: day, product, store, quantity (1..10) and amount
//!   (quantity x the product's price, in cents). Days and stores are uniform; products are
//!   skewed (the square of a uniform draw: product 0 sells most), so a top-N has a shape.
//!
//! Flat files are tab-separated text, one row per line, the format of COPY's and LOAD DATA's
//! text modes.

use std::io::Write;
use std::path::Path;

pub const FIRST_YEAR: i64 = 2024;
pub const YEARS: usize = 3;
pub const MONTHS: usize = YEARS * 12;
pub const PRODUCTS: usize = 1000;
pub const CATEGORIES: usize = 20;
pub const STORES: usize = 200;
pub const REGIONS: usize = 10;

/// One day of the date dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    pub year: i64,
    pub quarter: i64,
    pub month: i64,
    pub day: i64,
}

impl Day {
    /// The month's index from the first month of the first year (0..36).
    pub fn month_index(&self) -> usize {
        (self.year - FIRST_YEAR) as usize * 12 + (self.month - 1) as usize
    }
}

fn leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Every day of the years, in order: `date_id` is the index.
pub fn days() -> Vec<Day> {
    let mut out = Vec::with_capacity(YEARS * 366);
    for year in FIRST_YEAR..FIRST_YEAR + YEARS as i64 {
        for month in 1..=12i64 {
            let len = match month {
                2 if leap(year) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            for day in 1..=len {
                out.push(Day {
                    year,
                    quarter: (month - 1) / 3 + 1,
                    month,
                    day,
                });
            }
        }
    }
    out
}

pub fn category(product: usize) -> usize {
    (product * 7) % CATEGORIES
}

pub fn brand(product: usize) -> usize {
    product / 10
}

/// The unit price in cents: 1.00 to 99.99.
pub fn price(product: usize) -> i64 {
    100 + ((product * 7919) % 9900) as i64
}

pub fn region(store: usize) -> usize {
    (store * 3) % REGIONS
}

pub fn city(store: usize) -> usize {
    store / 4
}

/// One row of the fact table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sale {
    pub date: usize,
    pub product: usize,
    pub store: usize,
    pub quantity: i64,
    pub amount: i64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A number in `0..n` from the high bits of `h` (multiply-shift: no modulo bias worth the
/// name at these sizes).
fn pick(h: u64, n: usize) -> usize {
    ((u128::from(h) * n as u128) >> 64) as usize
}

/// Sale number `i` of a run seeded `seed`; `days` is the length of the date dimension.
pub fn sale(seed: u64, i: u64, days: usize) -> Sale {
    let base = seed ^ 0x6F6C_6170_u64.rotate_left(40);
    let a = mix(base.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    let b = mix(a ^ 0xD6E8_FEB8_6659_FD93);
    let u = (b >> 11) as f64 / (1u64 << 53) as f64;
    let product = ((u * u) * PRODUCTS as f64) as usize;
    let product = product.min(PRODUCTS - 1);
    let quantity = 1 + pick(b.rotate_left(29), 10) as i64;
    Sale {
        date: pick(a, days),
        product,
        store: pick(a.rotate_left(32), STORES),
        quantity,
        amount: quantity * price(product),
    }
}

/// One file to load: which table, and (for the fact table) which rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatFile {
    pub table: &'static str,
    pub columns: &'static [&'static str],
    /// Fact rows `first..end`; the whole dimension for a dimension.
    pub first: u64,
    pub end: u64,
    pub path: std::path::PathBuf,
}

impl FlatFile {
    pub fn rows(&self) -> u64 {
        self.end - self.first
    }

    pub fn is_fact(&self) -> bool {
        self.table == super::schema::SALES.name
    }
}

/// The files for `rows` sales in `files` fact files of nearly equal size, and one file per
/// dimension, in `dir`.
pub fn plan_files(dir: &Path, rows: u64, files: u64) -> Vec<FlatFile> {
    use super::schema::{DATE, PRODUCT, SALES, STORE, columns};
    let mut out = vec![
        FlatFile {
            table: DATE.name,
            columns: columns(&DATE),
            first: 0,
            end: days().len() as u64,
            path: dir.join("date.tsv"),
        },
        FlatFile {
            table: PRODUCT.name,
            columns: columns(&PRODUCT),
            first: 0,
            end: PRODUCTS as u64,
            path: dir.join("product.tsv"),
        },
        FlatFile {
            table: STORE.name,
            columns: columns(&STORE),
            first: 0,
            end: STORES as u64,
            path: dir.join("store.tsv"),
        },
    ];
    let files = files.clamp(1, rows.max(1));
    for f in 0..files {
        out.push(FlatFile {
            table: SALES.name,
            columns: columns(&SALES),
            first: rows * f / files,
            end: rows * (f + 1) / files,
            path: dir.join(format!("sales-{:04}.tsv", f + 1)),
        });
    }
    out
}

/// Writes one file; returns its size in bytes.
pub fn write_file(f: &FlatFile, seed: u64) -> std::io::Result<u64> {
    use super::schema::{DATE, PRODUCT, STORE};
    let file = std::fs::File::create(&f.path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let calendar = days();
    if f.table == DATE.name {
        for (id, d) in calendar.iter().enumerate() {
            writeln!(w, "{id}\t{}\t{}\t{}\t{}", d.year, d.quarter, d.month, d.day)?;
        }
    } else if f.table == PRODUCT.name {
        for p in 0..PRODUCTS {
            writeln!(
                w,
                "{p}\t{}\t{}\t{}\tproduct-{p:04}",
                category(p),
                brand(p),
                price(p)
            )?;
        }
    } else if f.table == STORE.name {
        for s in 0..STORES {
            writeln!(w, "{s}\t{}\t{}\tstore-{s:03}", region(s), city(s))?;
        }
    } else {
        for i in f.first..f.end {
            let s = sale(seed, i, calendar.len());
            writeln!(
                w,
                "{i}\t{}\t{}\t{}\t{}\t{}",
                s.date, s.product, s.store, s.quantity, s.amount
            )?;
        }
    }
    w.flush()?;
    Ok(w.get_ref().metadata()?.len())
}

/// Sums of quantity and amount, and the number of sales.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub sales: i64,
    pub quantity: i64,
    pub amount: i64,
}

impl Totals {
    fn add(&mut self, s: &Sale) {
        self.sales += 1;
        self.quantity += s.quantity;
        self.amount += s.amount;
    }
}

/// What the database must answer, computed by perflab from the generator alone: the totals
/// and the cube cells the summary tables and the queries read.
#[derive(Debug, Clone)]
pub struct Truth {
    pub total: Totals,
    /// By year, quarter and region.
    pub quarter_region: Vec<Totals>,
    /// By month index, region and category (the slice query).
    pub month_region_category: Vec<Totals>,
    /// By month index and category.
    pub month_category: Vec<Totals>,
    /// By year and product.
    pub year_product: Vec<Totals>,
    pub days: Vec<Day>,
}

impl Truth {
    /// One pass over every sale, in parallel over `threads`.
    pub fn compute(seed: u64, rows: u64, threads: usize) -> Truth {
        let days = days();
        let threads = threads.clamp(1, 64) as u64;
        let parts: Vec<Truth> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let days = &days;
                    scope.spawn(move || {
                        let mut part = Truth::empty(days.clone());
                        for i in rows * t / threads..rows * (t + 1) / threads {
                            part.add(&sale(seed, i, days.len()));
                        }
                        part
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Truth::empty(Vec::new())))
                .collect()
        });
        let mut all = Truth::empty(days);
        for p in parts {
            all.merge(&p);
        }
        all
    }

    fn empty(days: Vec<Day>) -> Truth {
        Truth {
            total: Totals::default(),
            quarter_region: vec![Totals::default(); YEARS * 4 * REGIONS],
            month_region_category: vec![Totals::default(); MONTHS * REGIONS * CATEGORIES],
            month_category: vec![Totals::default(); MONTHS * CATEGORIES],
            year_product: vec![Totals::default(); YEARS * PRODUCTS],
            days,
        }
    }

    fn add(&mut self, s: &Sale) {
        let d = self.days[s.date];
        let y = (d.year - FIRST_YEAR) as usize;
        let m = d.month_index();
        let (r, c) = (region(s.store), category(s.product));
        self.total.add(s);
        self.quarter_region[(y * 4 + (d.quarter - 1) as usize) * REGIONS + r].add(s);
        self.month_region_category[(m * REGIONS + r) * CATEGORIES + c].add(s);
        self.month_category[m * CATEGORIES + c].add(s);
        self.year_product[y * PRODUCTS + s.product].add(s);
    }

    fn merge(&mut self, o: &Truth) {
        let add = |a: &mut Totals, b: &Totals| {
            a.sales += b.sales;
            a.quantity += b.quantity;
            a.amount += b.amount;
        };
        add(&mut self.total, &o.total);
        for (a, b) in [
            (&mut self.quarter_region, &o.quarter_region),
            (&mut self.month_region_category, &o.month_region_category),
            (&mut self.month_category, &o.month_category),
            (&mut self.year_product, &o.year_product),
        ] {
            for (x, y) in a.iter_mut().zip(b.iter()) {
                add(x, y);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calendar_has_every_day_of_three_years() {
        let d = days();
        assert_eq!(d.len(), 366 + 365 + 365);
        assert_eq!(
            d[0],
            Day {
                year: 2024,
                quarter: 1,
                month: 1,
                day: 1
            }
        );
        assert_eq!(
            d[59],
            Day {
                year: 2024,
                quarter: 1,
                month: 2,
                day: 29
            }
        );
        assert_eq!(d.last().unwrap().month_index(), MONTHS - 1);
    }

    #[test]
    fn sales_are_a_function_of_seed_and_number_and_cover_the_dimensions() {
        assert_eq!(sale(7, 42, 1096), sale(7, 42, 1096));
        assert_ne!(sale(7, 42, 1096), sale(8, 42, 1096));
        let mut stores = [false; STORES];
        let mut low = 0;
        for i in 0..20_000 {
            let s = sale(1, i, 1096);
            assert!(s.date < 1096 && s.product < PRODUCTS && (1..=10).contains(&s.quantity));
            assert_eq!(s.amount, s.quantity * price(s.product));
            stores[s.store] = true;
            low += usize::from(s.product < PRODUCTS / 4);
        }
        assert!(stores.iter().all(|s| *s));
        // The square of a uniform draw: half the sales go to the first quarter of products.
        assert!((9_000..11_000).contains(&low), "{low}");
    }

    #[test]
    fn the_truth_is_the_same_whatever_the_threads() {
        let a = Truth::compute(3, 10_001, 1);
        let b = Truth::compute(3, 10_001, 5);
        assert_eq!(a.total, b.total);
        assert_eq!(a.total.sales, 10_001);
        assert_eq!(a.year_product, b.year_product);
        let by_cells: i64 = a.quarter_region.iter().map(|t| t.amount).sum();
        assert_eq!(by_cells, a.total.amount);
    }

    #[test]
    fn files_split_the_rows_without_gaps() {
        let f = plan_files(Path::new("/x"), 10, 3);
        let facts: Vec<_> = f.iter().filter(|f| f.is_fact()).collect();
        assert_eq!(facts.len(), 3);
        assert_eq!(facts[0].first, 0);
        assert_eq!(facts[2].end, 10);
        assert!(facts.windows(2).all(|w| w[0].end == w[1].first));
        assert_eq!(plan_files(Path::new("/x"), 2, 8).len(), 3 + 2);
    }
}
