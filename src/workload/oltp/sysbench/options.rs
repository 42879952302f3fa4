//! sysbench's test options with sysbench's defaults, read from perflab's `--sysbench
//! NAME=VALUE` (repeatable; what the sysbench dialect's `--tables=4` becomes), each checked
//! with one line naming the fix.

use super::rand::{RandSpec, RandType};
use super::test::Test;
use serde::Serialize;

/// sysbench's default `--mysql-ignore-errors`: deadlock, MariaDB's snapshot-isolation
/// conflict, lock wait timeout.
pub const MYSQL_IGNORED: [u16; 3] = [1213, 1020, 1205];

/// The most tables accepted: each client prepares its statements on every one.
pub const MAX_TABLES: u32 = 10_000;
/// The largest count of one kind of statement per event, or of rows or values in one.
const MAX_COUNT: u32 = 1_000_000;

/// Which MySQL errors re-run the event (`--mysql-ignore-errors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ignored {
    /// `all`: every error the server reports.
    All,
    /// These codes (`none` is the empty list).
    Codes(Vec<u16>),
}

impl Ignored {
    pub fn parse(text: &str) -> Result<Ignored, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(Ignored::All);
        }
        if t.is_empty() || t.eq_ignore_ascii_case("none") {
            return Ok(Ignored::Codes(Vec::new()));
        }
        t.split(',')
            .map(|c| {
                c.trim().parse::<u16>().map_err(|_| {
                    format!("{c:?} is not an error code: give codes (1213,1205), all or none")
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Ignored::Codes)
    }

    pub fn ignores(&self, code: u16) -> bool {
        match self {
            Ignored::All => true,
            Ignored::Codes(c) => c.contains(&code),
        }
    }
}

/// The test and its options, as sysbench's line gives them (sysbench's defaults for the
/// rest); the record's `spec.sysbench`.
#[derive(Debug, Clone, Serialize)]
pub struct SysbenchOptions {
    pub test: Test,
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub mysql_storage_engine: String,
    /// select_random_points: values in the IN list.
    pub random_points: u32,
    /// select_random_ranges: ranges ORed together, and the width of each.
    pub number_of_ranges: u32,
    pub delta: u32,
    /// `rand.default`'s distribution.
    pub rand: RandSpec,
    /// The latency percentile reported beside perflab's own (`--percentile`; 0: none).
    pub percentile: u32,
    /// `--histogram`: the latency histogram as a table after the run.
    pub histogram: bool,
    /// MySQL's errors that re-run the event (`--mysql-ignore-errors`); PostgreSQL's are
    /// fixed (deadlock, serialization failure, unique violation), as sysbench's are.
    pub ignored: Ignored,
    /// bulk_insert: its tables, one per client (the most clients of the run).
    pub bulk_tables: u32,
    /// The seed prepare draws the rows' k, c and pad from (the run's `--seed`).
    #[serde(skip)]
    pub seed: u64,
    /// Where the run's row counts stand, for the checks after each step.
    #[serde(skip)]
    pub books: std::sync::Arc<super::checks::Books>,
    /// oltp_insert's ids without auto_inc, shared by the clients.
    #[serde(skip)]
    pub unique: std::sync::Arc<super::rand::Unique>,
}

impl SysbenchOptions {
    /// sysbench's defaults for `test`.
    pub fn new(test: Test) -> SysbenchOptions {
        SysbenchOptions {
            test,
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            mysql_storage_engine: "innodb".into(),
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand: RandSpec::default(),
            percentile: 95,
            histogram: false,
            ignored: Ignored::Codes(MYSQL_IGNORED.to_vec()),
            bulk_tables: 1,
            seed: 1,
            books: Default::default(),
            unique: std::sync::Arc::new(super::rand::Unique::new(0)),
        }
    }

    /// The tables the test works on: `sbtest1` ... `sbtestN` (bulk_insert: one per client).
    pub fn table_names(&self) -> Vec<String> {
        let n = match self.test.bulk() {
            true => self.bulk_tables,
            false => self.tables,
        };
        (1..=n).map(|i| format!("sbtest{i}")).collect()
    }

    /// The run's settings table: the test, its tables, its distribution, and the options
    /// that differ from sysbench's defaults.
    pub fn settings(&self) -> Vec<crate::record::Setting> {
        use crate::record::Setting;
        let tables = match self.test.bulk() {
            true => format!("{} table(s) (id, k), one per client", self.bulk_tables),
            false => format!("{} table(s) of {} rows", self.tables, self.table_size),
        };
        let r = &self.rand;
        let rand = match r.kind {
            RandType::Special => format!("special (iter {}, pct {}, res {})", r.iter, r.pct, r.res),
            RandType::Gaussian => format!("gaussian (iter {})", r.iter),
            RandType::Pareto => format!("pareto (h {})", r.pareto_h),
            RandType::Zipfian => format!("zipfian (exp {})", r.zipfian_exp),
            RandType::Uniform => "uniform".into(),
        };
        let mut s = vec![
            Setting::new("workload", format!("sysbench {}", self.test.name())),
            Setting::new("size", tables),
            Setting::new("rand-type", rand),
        ];
        let d = SysbenchOptions::new(self.test);
        let mut changed = Vec::new();
        for (name, v, default) in [
            ("range_size", self.range_size, d.range_size),
            ("point_selects", self.point_selects, d.point_selects),
            ("simple_ranges", self.simple_ranges, d.simple_ranges),
            ("sum_ranges", self.sum_ranges, d.sum_ranges),
            ("order_ranges", self.order_ranges, d.order_ranges),
            ("distinct_ranges", self.distinct_ranges, d.distinct_ranges),
            ("index_updates", self.index_updates, d.index_updates),
            (
                "non_index_updates",
                self.non_index_updates,
                d.non_index_updates,
            ),
            ("delete_inserts", self.delete_inserts, d.delete_inserts),
            ("random_points", self.random_points, d.random_points),
            (
                "number_of_ranges",
                self.number_of_ranges,
                d.number_of_ranges,
            ),
            ("delta", self.delta, d.delta),
        ] {
            if v != default {
                changed.push(format!("{name}={v}"));
            }
        }
        for (name, v, default) in [
            ("range_selects", self.range_selects, d.range_selects),
            ("auto_inc", self.auto_inc, d.auto_inc),
            ("skip_trx", self.skip_trx, d.skip_trx),
            ("secondary", self.secondary, d.secondary),
            (
                "create_secondary",
                self.create_secondary,
                d.create_secondary,
            ),
        ] {
            if v != default {
                changed.push(format!("{name}={}", if v { "on" } else { "off" }));
            }
        }
        if self.ignored != d.ignored {
            changed.push(match &self.ignored {
                Ignored::All => "mysql_ignore_errors=all".to_string(),
                Ignored::Codes(c) => format!(
                    "mysql_ignore_errors={}",
                    c.iter().map(u16::to_string).collect::<Vec<_>>().join(",")
                ),
            });
        }
        if !changed.is_empty() {
            s.push(Setting::new("sysbench options", changed.join(", ")));
        }
        s
    }

    /// Reads `NAME=VALUE` items (names with `-` or `_`, as sysbench takes both) over the
    /// defaults; the error names the option and what it takes.
    pub fn read(test: Test, items: &[String]) -> Result<SysbenchOptions, String> {
        let mut o = SysbenchOptions::new(test);
        for item in items {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!(
                    "--sysbench {item:?}: give NAME=VALUE, e.g. tables=4 or table_size=100000"
                ));
            };
            let name = name.trim().trim_start_matches('-').replace('-', "_");
            o.set(&name, value.trim())
                .map_err(|why| format!("--sysbench {name}={value}: {why}"))?;
        }
        o.check()?;
        Ok(o)
    }

    fn set(&mut self, name: &str, v: &str) -> Result<(), String> {
        let count = |max: u32| -> Result<u32, String> {
            match v.parse::<u32>() {
                Ok(n) if n <= max => Ok(n),
                _ => Err(format!("a whole number from 0 to {max}")),
            }
        };
        let r = &mut self.rand;
        match name {
            "tables" => self.tables = count(MAX_TABLES)?,
            "table_size" => self.table_size = count(i32::MAX as u32)?,
            "range_size" => self.range_size = count(MAX_COUNT)?,
            "point_selects" => self.point_selects = count(MAX_COUNT)?,
            "simple_ranges" => self.simple_ranges = count(MAX_COUNT)?,
            "sum_ranges" => self.sum_ranges = count(MAX_COUNT)?,
            "order_ranges" => self.order_ranges = count(MAX_COUNT)?,
            "distinct_ranges" => self.distinct_ranges = count(MAX_COUNT)?,
            "index_updates" => self.index_updates = count(MAX_COUNT)?,
            "non_index_updates" => self.non_index_updates = count(MAX_COUNT)?,
            "delete_inserts" => self.delete_inserts = count(MAX_COUNT)?,
            "random_points" => self.random_points = count(MAX_COUNT)?.max(1),
            "number_of_ranges" => self.number_of_ranges = count(MAX_COUNT)?.max(1),
            "delta" => self.delta = count(i32::MAX as u32)?,
            "range_selects" => self.range_selects = switch(v)?,
            "auto_inc" => self.auto_inc = switch(v)?,
            "skip_trx" => self.skip_trx = switch(v)?,
            "secondary" => self.secondary = switch(v)?,
            "create_secondary" => self.create_secondary = switch(v)?,
            "histogram" => self.histogram = switch(v)?,
            "mysql_storage_engine" => {
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err("an engine's name (innodb, myisam, rocksdb ...)".into());
                }
                self.mysql_storage_engine = v.to_string();
            }
            "percentile" => self.percentile = count(100)?,
            "rand_type" => {
                r.kind = RandType::parse(v).ok_or_else(|| format!("use {}", RandType::NAMES))?
            }
            "rand_spec_iter" => r.iter = count(MAX_COUNT)?,
            "rand_spec_pct" => r.pct = count(100)?,
            "rand_spec_res" => r.res = count(100)?,
            "rand_pareto_h" => r.pareto_h = real(v)?,
            "rand_zipfian_exp" => r.zipfian_exp = real(v)?,
            "mysql_ignore_errors" | "ignore_errors" => self.ignored = Ignored::parse(v)?,
            "bulk_tables" => self.bulk_tables = count(MAX_TABLES)?.max(1),
            _ => {
                return Err(
                    "not an option of sysbench's OLTP tests that perflab reads (docs/options.md lists them)"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// What no single value says: sysbench's own refusals and what makes no run.
    fn check(&self) -> Result<(), String> {
        self.rand.validate()?;
        if self.tables == 0 {
            return Err("--tables must be at least 1".into());
        }
        if self.table_size == 0 && self.test != Test::OltpInsert {
            return Err(format!(
                "--table-size must be at least 1: {} draws its ids from 1 to --table-size",
                self.test.name()
            ));
        }
        if self.test.one_table() && self.tables > 1 {
            return Err(format!(
                "{} works on sbtest1 alone; sysbench refuses --tables above 1 for it (\"this benchmark does not support --tables > 1\")",
                self.test.name()
            ));
        }
        Ok(())
    }
}

/// sysbench's switches: on/off, and the other spellings it takes.
fn switch(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err("on or off".into()),
    }
}

fn real(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| "a number".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(test: Test, items: &[&str]) -> Result<SysbenchOptions, String> {
        let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        SysbenchOptions::read(test, &items)
    }

    #[test]
    fn defaults_are_sysbench_1_0_20s() {
        let o = read(Test::OltpReadWrite, &[]).unwrap();
        assert_eq!((o.tables, o.table_size, o.range_size), (1, 10_000, 100));
        assert_eq!(o.point_selects, 10);
        assert!(o.range_selects && o.auto_inc && o.create_secondary);
        assert!(!o.skip_trx && !o.secondary && !o.histogram);
        assert_eq!(o.rand.kind, RandType::Special);
        assert_eq!(o.percentile, 95);
        assert_eq!(o.ignored, Ignored::Codes(vec![1213, 1020, 1205]));
        assert_eq!(o.table_names(), ["sbtest1"]);
    }

    #[test]
    fn names_take_dashes_or_underscores_and_values_are_checked() {
        let o = read(
            Test::OltpReadOnly,
            &[
                "tables=3",
                "table-size=500",
                "skip_trx=on",
                "rand-type=pareto",
                "mysql-ignore-errors=all",
            ],
        )
        .unwrap();
        assert_eq!((o.tables, o.table_size), (3, 500));
        assert!(o.skip_trx);
        assert_eq!(o.rand.kind, RandType::Pareto);
        assert_eq!(o.ignored, Ignored::All);
        assert_eq!(o.table_names(), ["sbtest1", "sbtest2", "sbtest3"]);
        for (items, says) in [
            (&["tables=x"][..], "tables=x: a whole number"),
            (&["rand_type=normal"], "use uniform, gaussian"),
            (&["skip_trx=maybe"], "on or off"),
            (&["reconnect=5"], "not an option"),
            (&["tables"], "give NAME=VALUE"),
            (&["tables=0"], "at least 1"),
            (&["percentile=101"], "0 to 100"),
            (&["mysql_storage_engine=in no db"], "an engine's name"),
            (&["mysql_ignore_errors=1213,x"], "not an error code"),
        ] {
            let e = read(Test::OltpReadWrite, items).unwrap_err();
            assert!(e.contains(says), "{items:?}: {e}");
        }
        let e = read(Test::SelectRandomPoints, &["tables=2"]).unwrap_err();
        assert!(e.contains("sbtest1 alone"), "{e}");
    }

    #[test]
    fn ignored_errors_are_codes_all_or_none() {
        assert!(Ignored::parse("all").unwrap().ignores(1146));
        assert!(!Ignored::parse("none").unwrap().ignores(1213));
        let i = Ignored::parse("1213, 1062").unwrap();
        assert!(i.ignores(1062) && !i.ignores(1205));
    }
}
