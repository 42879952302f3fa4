//! The query phase's mix: four kinds of analytic query, their SQL (the same text on every
//! engine), their parameters, and the answer each must give, from the [`Truth`].
//!
//! | kind   | question                                            | reads                  |
//! |--------|-----------------------------------------------------|------------------------|
//! | rollup | a year's sales by quarter, all regions summed       | olap_agg_quarter_region |
//! | drill  | one category's sales by month in a year            | olap_agg_month_category |
//! | slice  | one month in one region, by category, from the detail | olap_sales and the three dimensions |
//! | topn   | a year's ten best-selling products by amount        | olap_agg_year_product  |
//!
//! Every answer is integers (keys, counts, sums of integers), so it is compared exactly, row
//! for row; ties in the top ten are broken by product number in the SQL and in the truth alike.

use super::data::{CATEGORIES, FIRST_YEAR, MONTHS, PRODUCTS, REGIONS, Totals, Truth, YEARS};
use crate::workload::rng::Rng;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    Rollup,
    Drill,
    Slice,
    Topn,
}

impl QueryKind {
    pub const ALL: [QueryKind; 4] = [
        QueryKind::Rollup,
        QueryKind::Drill,
        QueryKind::Slice,
        QueryKind::Topn,
    ];

    pub fn parse(word: &str) -> Option<QueryKind> {
        match word
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_'], "")
            .as_str()
        {
            "rollup" => Some(QueryKind::Rollup),
            "drill" | "drilldown" => Some(QueryKind::Drill),
            "slice" => Some(QueryKind::Slice),
            "topn" | "top10" => Some(QueryKind::Topn),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Rollup => "rollup",
            QueryKind::Drill => "drill",
            QueryKind::Slice => "slice",
            QueryKind::Topn => "topn",
        }
    }
}

/// How many rows a top-N query returns.
pub const TOP: usize = 10;

/// One query to run: its SQL and the rows it must return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub kind: QueryKind,
    pub sql: String,
    pub expected: Vec<Vec<i64>>,
}

/// A query of `kind` with parameters drawn from `rng`.
pub fn draw(kind: QueryKind, rng: &mut Rng, truth: &Truth) -> Query {
    let year_index = rng.below(YEARS as u64) as usize;
    let year = FIRST_YEAR + year_index as i64;
    let (sql, expected) = match kind {
        QueryKind::Rollup => {
            let sql = format!(
                "SELECT quarter, sum(sales), sum(amount) FROM olap_agg_quarter_region WHERE year = {year} GROUP BY quarter ORDER BY quarter"
            );
            let rows = (0..4)
                .filter_map(|q| {
                    let mut t = Totals::default();
                    for r in 0..REGIONS {
                        let c = truth.quarter_region[(year_index * 4 + q) * REGIONS + r];
                        t.sales += c.sales;
                        t.amount += c.amount;
                    }
                    (t.sales > 0).then(|| vec![q as i64 + 1, t.sales, t.amount])
                })
                .collect();
            (sql, rows)
        }
        QueryKind::Drill => {
            let category = rng.below(CATEGORIES as u64) as usize;
            let sql = format!(
                "SELECT month, sum(quantity), sum(amount) FROM olap_agg_month_category WHERE year = {year} AND category_id = {category} GROUP BY month ORDER BY month"
            );
            let rows = (0..12)
                .filter_map(|m| {
                    let c = truth.month_category[(year_index * 12 + m) * CATEGORIES + category];
                    (c.sales > 0).then(|| vec![m as i64 + 1, c.quantity, c.amount])
                })
                .collect();
            (sql, rows)
        }
        QueryKind::Slice => {
            let month_index = year_index * 12 + rng.below(12) as usize;
            debug_assert!(month_index < MONTHS);
            let month = (month_index % 12) as i64 + 1;
            let region = rng.below(REGIONS as u64) as usize;
            let sql = format!(
                "SELECT p.category_id, count(*), sum(s.amount) FROM olap_sales s \
                 JOIN olap_date d ON d.date_id = s.date_id \
                 JOIN olap_store t ON t.store_id = s.store_id \
                 JOIN olap_product p ON p.product_id = s.product_id \
                 WHERE d.year = {year} AND d.month = {month} AND t.region_id = {region} \
                 GROUP BY p.category_id ORDER BY p.category_id"
            );
            let rows = (0..CATEGORIES)
                .filter_map(|c| {
                    let t = truth.month_region_category
                        [(month_index * REGIONS + region) * CATEGORIES + c];
                    (t.sales > 0).then(|| vec![c as i64, t.sales, t.amount])
                })
                .collect();
            (sql, rows)
        }
        QueryKind::Topn => {
            let sql = format!(
                "SELECT product_id, amount FROM olap_agg_year_product WHERE year = {year} ORDER BY amount DESC, product_id LIMIT {TOP}"
            );
            let mut all: Vec<(i64, i64)> = (0..PRODUCTS)
                .filter_map(|p| {
                    let t = truth.year_product[year_index * PRODUCTS + p];
                    (t.sales > 0).then_some((p as i64, t.amount))
                })
                .collect();
            all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let rows = all.into_iter().take(TOP).map(|(p, a)| vec![p, a]).collect();
            (sql, rows)
        }
    };
    Query {
        kind,
        sql,
        expected,
    }
}

/// Compares an answer with what it must be; the first difference, in words, when it is not.
pub fn check(q: &Query, answer: &[Vec<String>]) -> Result<(), String> {
    if answer.len() != q.expected.len() {
        return Err(format!(
            "wrong answer to {}: {} rows, expected {}",
            q.kind.name(),
            answer.len(),
            q.expected.len()
        ));
    }
    for (i, (got, want)) in answer.iter().zip(&q.expected).enumerate() {
        let parsed: Vec<Option<i64>> = got.iter().map(|v| v.trim().parse().ok()).collect();
        if parsed.len() != want.len() || parsed.iter().zip(want).any(|(g, w)| *g != Some(*w)) {
            return Err(format!(
                "wrong answer to {}: row {} is [{}], expected {:?}",
                q.kind.name(),
                i + 1,
                got.join(", "),
                want
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_add_up_to_the_truth() {
        let truth = Truth::compute(5, 50_000, 2);
        let mut rng = Rng::new(1);
        let rollup = draw(QueryKind::Rollup, &mut rng, &truth);
        assert_eq!(rollup.expected.len(), 4);
        let mut year_sales = 0;
        for y in 0..YEARS as i64 {
            let sql = format!("year = {}", FIRST_YEAR + y);
            let mut r = Rng::new(1);
            let q = loop {
                let q = draw(QueryKind::Rollup, &mut r, &truth);
                if q.sql.contains(&sql) {
                    break q;
                }
            };
            year_sales += q.expected.iter().map(|r| r[1]).sum::<i64>();
        }
        assert_eq!(year_sales, truth.total.sales);
        let top = draw(QueryKind::Topn, &mut rng, &truth);
        assert_eq!(top.expected.len(), TOP);
        assert!(top.expected.windows(2).all(|w| w[0][1] >= w[1][1]));
        let slice = draw(QueryKind::Slice, &mut rng, &truth);
        assert!(!slice.expected.is_empty());
    }

    #[test]
    fn answers_are_compared_row_for_row() {
        let q = Query {
            kind: QueryKind::Topn,
            sql: String::new(),
            expected: vec![vec![3, 100], vec![1, 90]],
        };
        let ok = vec![
            vec!["3".to_string(), "100".to_string()],
            vec!["1".to_string(), "90".to_string()],
        ];
        assert!(check(&q, &ok).is_ok());
        let swapped = vec![ok[1].clone(), ok[0].clone()];
        assert!(check(&q, &swapped).unwrap_err().contains("row 1"));
        assert!(
            check(&q, &ok[..1])
                .unwrap_err()
                .contains("1 rows, expected 2")
        );
        let decimal = vec![ok[0].clone(), vec!["1".into(), "90.5".into()]];
        assert!(check(&q, &decimal).is_err());
    }
}
