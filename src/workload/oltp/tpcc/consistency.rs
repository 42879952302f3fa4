//! The specification's twelve consistency conditions (clause 3.3.2), each one query that
//! counts the warehouses, districts, orders or customers breaking it: zero passes. Run
//! after the load and after every step, on every engine, each written into the step as
//! its own check with what it counted.
//!
//! Condition 11 (orders minus new orders is 2,100 per district) holds only until the
//! first delivery, so it is checked after a load and not after steps.

use crate::record::Check;
use crate::sql::sql::{Conn, DbError};
use std::collections::BTreeMap;

/// One condition: its number, the check's name, what breaking it means, and the query
/// counting the rows that break it.
pub struct Condition {
    pub number: u8,
    pub name: &'static str,
    pub rule: &'static str,
    sql: &'static str,
    /// Holds after loading only (condition 11).
    pub after_load_only: bool,
}

/// The ten districts' rows that a customer's delivered lines add up over.
const DELIVERED: &str = "SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s FROM orders, order_line \
     WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id";

pub const CONDITIONS: [Condition; 12] = [
    Condition {
        number: 1,
        name: "tpcc_1_warehouse_ytd",
        rule: "W_YTD = sum(D_YTD) for every warehouse",
        sql: "SELECT count(*) FROM warehouse WHERE w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)",
        after_load_only: false,
    },
    Condition {
        number: 2,
        name: "tpcc_2_next_order_id",
        rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for every district",
        sql: "SELECT count(*) FROM district WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) \
              OR d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)",
        after_load_only: false,
    },
    Condition {
        number: 3,
        name: "tpcc_3_new_orders_contiguous",
        rule: "max(NO_O_ID) - min(NO_O_ID) + 1 = the new orders of every district",
        sql: "SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 - count(*) AS gap FROM new_order GROUP BY no_w_id, no_d_id) g WHERE gap <> 0",
        after_load_only: false,
    },
    Condition {
        number: 4,
        name: "tpcc_4_order_line_count",
        rule: "sum(O_OL_CNT) = the order lines of every district",
        sql: "SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS n FROM orders GROUP BY o_w_id, o_d_id) o \
              LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l \
              ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE l.n IS NULL OR l.n <> o.n",
        after_load_only: false,
    },
    Condition {
        number: 5,
        name: "tpcc_5_carrier_iff_delivered",
        rule: "O_CARRIER_ID is null exactly when the order has a new-order row",
        sql: "SELECT count(*) FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
              WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)",
        after_load_only: false,
    },
    Condition {
        number: 6,
        name: "tpcc_6_lines_per_order",
        rule: "O_OL_CNT = the order's lines for every order",
        sql: "SELECT count(*) FROM orders LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l \
              ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id WHERE l.n IS NULL OR l.n <> o_ol_cnt",
        after_load_only: false,
    },
    Condition {
        number: 7,
        name: "tpcc_7_delivery_date",
        rule: "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is",
        sql: "SELECT count(*) FROM order_line, orders WHERE o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
              AND ((ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL))",
        after_load_only: false,
    },
    Condition {
        number: 8,
        name: "tpcc_8_warehouse_history",
        rule: "W_YTD = sum(H_AMOUNT) of the warehouse's payments",
        sql: "SELECT count(*) FROM warehouse WHERE w_ytd <> (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = w_id)",
        after_load_only: false,
    },
    Condition {
        number: 9,
        name: "tpcc_9_district_history",
        rule: "D_YTD = sum(H_AMOUNT) of the district's payments",
        sql: "SELECT count(*) FROM district WHERE d_ytd <> (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id)",
        after_load_only: false,
    },
    Condition {
        number: 10,
        name: "tpcc_10_customer_balance",
        rule: "C_BALANCE = the customer's delivered OL_AMOUNT - sum(H_AMOUNT)",
        sql: "", // built by [`sql`]: it joins DELIVERED
        after_load_only: false,
    },
    Condition {
        number: 11,
        name: "tpcc_11_undelivered_orders",
        rule: "orders - new orders = 2,100 in every district (after loading)",
        sql: "SELECT count(*) FROM (SELECT o_w_id, o_d_id, count(*) AS n FROM orders GROUP BY o_w_id, o_d_id) o \
              LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) x \
              ON x.no_w_id = o.o_w_id AND x.no_d_id = o.o_d_id WHERE o.n - coalesce(x.n, 0) <> 2100",
        after_load_only: true,
    },
    Condition {
        number: 12,
        name: "tpcc_12_customer_ytd",
        rule: "C_BALANCE + C_YTD_PAYMENT = the customer's delivered OL_AMOUNT",
        sql: "", // built by [`sql`]
        after_load_only: false,
    },
];

/// The query of a condition.
fn sql(c: &Condition) -> String {
    match c.number {
        10 => format!(
            "SELECT count(*) FROM customer LEFT JOIN ({DELIVERED}) del ON del.w = c_w_id AND del.d = c_d_id AND del.c = c_id \
             LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS s FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h \
             ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id \
             WHERE c_balance <> coalesce(del.s, 0) - coalesce(h.s, 0)"
        ),
        12 => format!(
            "SELECT count(*) FROM customer LEFT JOIN ({DELIVERED}) del ON del.w = c_w_id AND del.d = c_d_id AND del.c = c_id \
             WHERE c_balance + c_ytd_payment <> coalesce(del.s, 0)"
        ),
        _ => c.sql.to_string(),
    }
}

/// Runs every condition that applies (`after_load` adds condition 11) and returns one
/// check per condition; `label` names when it ran ("after loading", or nothing).
pub fn check(
    conn: &mut dyn Conn,
    after_load: bool,
    shard: Option<usize>,
) -> Result<Vec<Check>, DbError> {
    let mut out = Vec::new();
    for c in CONDITIONS
        .iter()
        .filter(|c| after_load || !c.after_load_only)
    {
        let broken = conn
            .query_row(&sql(c))?
            .and_then(|r| r.first().copied())
            .unwrap_or(0);
        let when = if after_load { " after loading" } else { "" };
        out.push(Check {
            name: if after_load {
                format!("{}_after_load", c.name)
            } else {
                c.name.to_string()
            },
            shard,
            passed: broken == 0,
            figures: BTreeMap::from([("broken".to_string(), broken)]),
            summary: if broken == 0 {
                format!("condition {} holds{when}: {}", c.number, c.rule)
            } else {
                format!(
                    "condition {} is broken{when} in {broken} places: {}",
                    c.number, c.rule
                )
            },
        });
    }
    Ok(out)
}
