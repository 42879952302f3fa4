//! The five transactions as client-side SQL over the connection interface: prepared
//! statements, one round trip each, integers in and out ([`Conn::fetch`] for the rows and
//! the last-name lookups). Text columns the terminal would only display are selected last
//! and travel without being read.
//!
//! Locking: the rows a transaction updates from what it read are read `FOR UPDATE`
//! (district, stock, customer, the oldest new order) on PostgreSQL and MySQL; SQLite takes
//! its one write lock at `BEGIN IMMEDIATE`. The order lines are visited in item order, so two
//! new orders never wait on each other's stock in a cycle.

use super::input::{self, Customer, Kind, UNUSED_ITEM};
use super::load::concat;
use crate::sql::sql::{Conn, DbError, DbErrorKind, Dialect, Param, Stmt};

/// The prepared statements of one connection.
pub struct Statements {
    warehouse_tax: Stmt,
    district_next: Stmt,
    district_advance: Stmt,
    customer_discount: Stmt,
    insert_order: Stmt,
    insert_new_order: Stmt,
    item: Stmt,
    stock: Stmt,
    stock_update: Stmt,
    /// One per district: the line's dist info comes from that district's column of stock.
    insert_line: [Stmt; 10],
    warehouse_pay: Stmt,
    warehouse_address: Stmt,
    district_pay: Stmt,
    district_address: Stmt,
    customers_by_name: Stmt,
    customer_for_payment: Stmt,
    customer_pay: Stmt,
    customer_pay_bad_credit: Stmt,
    insert_history: Stmt,
    customer_status: Stmt,
    last_order: Stmt,
    order_lines: Stmt,
    oldest_new_order: Stmt,
    delete_new_order: Stmt,
    order_customer: Stmt,
    set_carrier: Stmt,
    deliver_lines: Stmt,
    lines_total: Stmt,
    customer_delivered: Stmt,
    district_next_plain: Stmt,
    low_stock: Stmt,
}

impl Statements {
    pub fn prepare(conn: &mut dyn Conn) -> Result<Self, DbError> {
        let d = conn.dialect();
        let lock = if d == Dialect::Sqlite {
            ""
        } else {
            " FOR UPDATE"
        };
        // PostgreSQL cannot tell a parameter's type in a select list: say it.
        let int = |ty: &str| match d {
            Dialect::Postgres => format!("CAST(? AS {ty})"),
            _ => "?".to_string(),
        };
        let i = int("integer");
        let mut insert_line = [0; 10];
        for (n, s) in insert_line.iter_mut().enumerate() {
            *s = conn.prepare(&format!(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
                 SELECT {i}, {i}, {i}, {i}, {i}, {i}, NULL, {i}, {i}, s_dist_{:02} FROM stock WHERE s_i_id = ? AND s_w_id = ?",
                n + 1
            ))?;
        }
        let customers_by_name = conn.prepare(
            "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
        )?;
        let c_data = concat(
            d,
            &[
                "c_id", "' '", "c_d_id", "' '", "c_w_id", "' '", "?", "' '", "?", "' '", "?",
                "' '", "c_data",
            ],
        );
        Ok(Statements {
            warehouse_tax: conn.prepare("SELECT w_tax FROM warehouse WHERE w_id = ?")?,
            district_next: conn.prepare(&format!(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?{lock}"
            ))?,
            district_advance: conn.prepare(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
            )?,
            customer_discount: conn.prepare(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            insert_order: conn.prepare(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
            )?,
            insert_new_order: conn
                .prepare("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")?,
            item: conn.prepare("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")?,
            stock: conn.prepare(&format!(
                "SELECT s_quantity, s_data FROM stock WHERE s_i_id = ? AND s_w_id = ?{lock}"
            ))?,
            stock_update: conn.prepare(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
            )?,
            insert_line,
            warehouse_pay: conn.prepare("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")?,
            warehouse_address: conn.prepare(
                "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
            )?,
            district_pay: conn.prepare(
                "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
            )?,
            district_address: conn.prepare(
                "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
            )?,
            customers_by_name,
            customer_for_payment: conn.prepare(&format!(
                "SELECT c_balance, CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount \
                 FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{lock}"
            ))?,
            customer_pay: conn.prepare(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            customer_pay_bad_credit: conn.prepare(&format!(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, \
                 c_data = substr({c_data}, 1, 500) WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            ))?,
            insert_history: conn.prepare(&format!(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                 SELECT {i}, {i}, {i}, {i}, {i}, CURRENT_TIMESTAMP, {}, {} FROM warehouse, district WHERE w_id = ? AND d_w_id = ? AND d_id = ?",
                int("bigint"),
                concat(d, &["w_name", "'    '", "d_name"])
            ))?,
            customer_status: conn.prepare(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            last_order: conn.prepare(
                "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            )?,
            order_lines: conn.prepare(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            oldest_new_order: conn.prepare(&format!(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1{lock}"
            ))?,
            delete_new_order: conn.prepare(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            )?,
            order_customer: conn
                .prepare("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")?,
            set_carrier: conn.prepare(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            )?,
            deliver_lines: conn.prepare(
                "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            lines_total: conn.prepare(
                "SELECT coalesce(sum(ol_amount), 0) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            customer_delivered: conn.prepare(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            district_next_plain: conn
                .prepare("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")?,
            low_stock: conn.prepare(
                "SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
            )?,
        })
    }
}

/// What a transaction left to count besides its time.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// A new order rolled back on its unused item, as the specification asks.
    pub rolled_back: bool,
    /// Districts a delivery found without a new order to deliver.
    pub skipped_districts: u64,
}

/// Scratch space reused across transactions.
#[derive(Default)]
pub struct Scratch {
    rows: Vec<i64>,
    ids: Vec<i64>,
    name: String,
}

fn missing(what: String) -> DbError {
    DbError::other(format!(
        "{what} is missing: the database does not hold the loaded data"
    ))
}

/// Another session got there first (a delivered order, a taken order id): retry.
fn lost_race(what: String) -> DbError {
    DbError {
        kind: DbErrorKind::Conflict,
        message: what,
    }
}

/// The customer by id, or by last name: the middle one (position n/2, rounded up) of
/// those with the name, in order of first name (clause 2.5.2.2).
fn find_customer(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    who: Customer,
    s: &mut Scratch,
) -> Result<i64, DbError> {
    match who {
        Customer::Id(c) => Ok(c as i64),
        Customer::LastName(n) => {
            s.name.clear();
            s.name.push_str(&input::last_name(n));
            s.ids.clear();
            let params = [Param::Int(w), Param::Int(d), Param::Text(&s.name)];
            let found = conn.fetch(st.customers_by_name, &params, 1, &mut s.ids)?;
            if found == 0 {
                return Err(missing(format!(
                    "a customer named {} in district {d} of warehouse {w}",
                    s.name
                )));
            }
            Ok(s.ids[(found - 1) / 2])
        }
    }
}

pub fn new_order(
    conn: &mut dyn Conn,
    st: &Statements,
    o: &mut input::NewOrder,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let (w, d, c) = (o.warehouse as i64, o.district as i64, o.customer as i64);
    // In item order, so concurrent new orders lock stock rows in one order.
    o.lines
        .sort_unstable_by_key(|l| (l.item == UNUSED_ITEM, l.supply_warehouse, l.item));
    conn.begin(true)?;
    s.rows.clear();
    conn.query(st.warehouse_tax, &[w], &mut s.rows)?;
    s.rows.clear();
    if conn.fetch(
        st.district_next,
        &[Param::Int(w), Param::Int(d)],
        2,
        &mut s.rows,
    )? == 0
    {
        return Err(missing(format!("district {d} of warehouse {w}")));
    }
    let next = s.rows[1];
    conn.exec(st.district_advance, &[w, d])?;
    s.rows.clear();
    if conn.fetch(
        st.customer_discount,
        &[Param::Int(w), Param::Int(d), Param::Int(c)],
        1,
        &mut s.rows,
    )? == 0
    {
        return Err(missing(format!("customer {c} of district {d}")));
    }
    let all_local = o.lines.iter().all(|l| l.supply_warehouse == o.warehouse);
    conn.exec(
        st.insert_order,
        &[next, d, w, c, o.lines.len() as i64, i64::from(all_local)],
    )?;
    conn.exec(st.insert_new_order, &[next, d, w])?;
    for (n, line) in o.lines.iter().enumerate() {
        let (item, supply) = (line.item as i64, line.supply_warehouse as i64);
        s.rows.clear();
        if conn.fetch(st.item, &[Param::Int(item)], 1, &mut s.rows)? == 0 {
            if line.item == UNUSED_ITEM {
                // The specification's 1%: "Item number is not valid", rolled back.
                conn.rollback();
                return Ok(Outcome {
                    rolled_back: true,
                    ..Outcome::default()
                });
            }
            return Err(missing(format!("item {item}")));
        }
        let price = s.rows[0];
        s.rows.clear();
        if conn.fetch(
            st.stock,
            &[Param::Int(item), Param::Int(supply)],
            1,
            &mut s.rows,
        )? == 0
        {
            return Err(missing(format!(
                "stock of item {item} in warehouse {supply}"
            )));
        }
        let have = s.rows[0];
        let qty = line.quantity as i64;
        let left = if have >= qty + 10 {
            have - qty
        } else {
            have - qty + 91
        };
        let remote = i64::from(supply != w);
        conn.exec(st.stock_update, &[left, qty, remote, item, supply])?;
        conn.exec(
            st.insert_line[(d - 1) as usize],
            &[
                next,
                d,
                w,
                n as i64 + 1,
                item,
                supply,
                qty,
                qty * price,
                item,
                supply,
            ],
        )?;
    }
    conn.commit()?;
    Ok(Outcome::default())
}

pub fn payment(
    conn: &mut dyn Conn,
    st: &Statements,
    p: &input::Payment,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let (w, d) = (p.warehouse as i64, p.district as i64);
    let (cw, cd, amount) = (
        p.customer_warehouse as i64,
        p.customer_district as i64,
        p.amount as i64,
    );
    conn.begin(true)?;
    conn.exec(st.warehouse_pay, &[amount, w])?;
    s.rows.clear();
    conn.fetch(st.warehouse_address, &[Param::Int(w)], 0, &mut s.rows)?;
    conn.exec(st.district_pay, &[amount, w, d])?;
    conn.fetch(
        st.district_address,
        &[Param::Int(w), Param::Int(d)],
        0,
        &mut s.rows,
    )?;
    let c = find_customer(conn, st, cw, cd, p.customer, s)?;
    s.rows.clear();
    if conn.fetch(
        st.customer_for_payment,
        &[Param::Int(cw), Param::Int(cd), Param::Int(c)],
        2,
        &mut s.rows,
    )? == 0
    {
        return Err(missing(format!("customer {c} of district {cd}")));
    }
    if s.rows[1] == 1 {
        conn.exec(
            st.customer_pay_bad_credit,
            &[amount, amount, d, w, amount, cw, cd, c],
        )?;
    } else {
        conn.exec(st.customer_pay, &[amount, amount, cw, cd, c])?;
    }
    conn.exec(st.insert_history, &[c, cd, cw, d, w, amount, w, w, d])?;
    conn.commit()?;
    Ok(Outcome::default())
}

pub fn order_status(
    conn: &mut dyn Conn,
    st: &Statements,
    q: &input::OrderStatus,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let (w, d) = (q.warehouse as i64, q.district as i64);
    conn.begin(false)?;
    let c = find_customer(conn, st, w, d, q.customer, s)?;
    let at = [Param::Int(w), Param::Int(d), Param::Int(c)];
    s.rows.clear();
    conn.fetch(st.customer_status, &at, 1, &mut s.rows)?;
    s.rows.clear();
    if conn.fetch(st.last_order, &at, 2, &mut s.rows)? > 0 {
        let order = s.rows[0];
        s.rows.clear();
        conn.fetch(
            st.order_lines,
            &[Param::Int(w), Param::Int(d), Param::Int(order)],
            4,
            &mut s.rows,
        )?;
    }
    conn.commit()?;
    Ok(Outcome::default())
}

pub fn delivery(
    conn: &mut dyn Conn,
    st: &Statements,
    q: &input::Delivery,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let (w, carrier) = (q.warehouse as i64, q.carrier as i64);
    let mut out = Outcome::default();
    conn.begin(true)?;
    for d in 1..=super::DISTRICTS as i64 {
        s.rows.clear();
        if conn.query(st.oldest_new_order, &[w, d], &mut s.rows)? == 0 {
            out.skipped_districts += 1;
            continue;
        }
        let order = s.rows[0];
        if conn.exec(st.delete_new_order, &[w, d, order])? != 1 {
            return Err(lost_race(format!(
                "order {order} of district {d} was delivered by another session"
            )));
        }
        s.rows.clear();
        if conn.query(st.order_customer, &[w, d, order], &mut s.rows)? == 0 {
            return Err(missing(format!("order {order} of district {d}")));
        }
        let c = s.rows[0];
        conn.exec(st.set_carrier, &[carrier, w, d, order])?;
        conn.exec(st.deliver_lines, &[w, d, order])?;
        s.rows.clear();
        conn.query(st.lines_total, &[w, d, order], &mut s.rows)?;
        let total = s.rows.first().copied().unwrap_or(0);
        conn.exec(st.customer_delivered, &[total, w, d, c])?;
    }
    conn.commit()?;
    Ok(out)
}

pub fn stock_level(
    conn: &mut dyn Conn,
    st: &Statements,
    q: &input::StockLevel,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let (w, d) = (q.warehouse as i64, q.district as i64);
    conn.begin(false)?;
    s.rows.clear();
    if conn.query(st.district_next_plain, &[w, d], &mut s.rows)? == 0 {
        return Err(missing(format!("district {d} of warehouse {w}")));
    }
    let next = s.rows[0];
    s.rows.clear();
    conn.query(
        st.low_stock,
        &[w, d, next, next - 20, w, q.threshold as i64],
        &mut s.rows,
    )?;
    conn.commit()?;
    Ok(Outcome::default())
}

/// Runs the drawn transaction of `kind`.
pub fn run(
    kind: Kind,
    conn: &mut dyn Conn,
    st: &Statements,
    drawn: &mut super::Drawn,
    s: &mut Scratch,
) -> Result<Outcome, DbError> {
    let undrawn = || DbError::other(format!("no {} was drawn", kind.name()));
    match kind {
        Kind::NewOrder => new_order(conn, st, &mut drawn.new_order, s),
        Kind::Payment => payment(conn, st, drawn.payment.as_ref().ok_or_else(undrawn)?, s),
        Kind::OrderStatus => order_status(
            conn,
            st,
            drawn.order_status.as_ref().ok_or_else(undrawn)?,
            s,
        ),
        Kind::Delivery => delivery(conn, st, drawn.delivery.as_ref().ok_or_else(undrawn)?, s),
        Kind::StockLevel => {
            stock_level(conn, st, drawn.stock_level.as_ref().ok_or_else(undrawn)?, s)
        }
    }
}
