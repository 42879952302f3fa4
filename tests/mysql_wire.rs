//! perflab's own MySQL client (src/sql/mysql_wire.rs, src/sql/mysql_row.rs) against a
//! throwaway MariaDB: rows counted and read in both protocols, NULLs, rows and statements
//! longer than one packet (16 MiB), several results, passwords, and the server's errors
//! carried through with their codes.

mod common;

use common::servers::MariaDbServer;
use perflab::sql::sql::{Answer, Conn, DbErrorKind, Param, ServerTarget};
use perflab::stop::Stop;
use std::time::Duration;

fn target(url: &str) -> ServerTarget {
    ServerTarget {
        url: url.to_string(),
        set: Vec::new(),
        op_timeout: Duration::from_secs(60),
        query_mode: Default::default(),
    }
}

fn connect(url: &str) -> perflab::sql::mysql::MyConn {
    perflab::sql::mysql::connect(&target(url), &Stop::new()).expect("connects")
}

#[test]
fn rows_are_counted_and_read_in_both_protocols_with_nulls() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let mut c = connect(&db.url());
    c.batch(
        "CREATE TABLE t (id INT PRIMARY KEY, a BIGINT NULL, s VARCHAR(20) NULL, d DECIMAL(10,2), \
         f DOUBLE, u INT UNSIGNED, dt DATETIME NULL); \
         INSERT INTO t SELECT seq, IF(seq % 3 = 0, NULL, -seq), IF(seq % 2 = 0, NULL, CONCAT('s', seq)), \
         seq + 0.75, seq / 4, seq, IF(seq = 1, '2026-12-06 13:14:15', NULL) FROM seq_1_to_1000",
    )
    .expect("a batch of two statements");

    // Prepared (binary): every row counted, none read.
    let all = c
        .prepare("SELECT s FROM t WHERE id BETWEEN ? AND ?")
        .unwrap();
    let mut out = Vec::new();
    assert_eq!(
        c.fetch(all, &[Param::Int(1), Param::Int(1000)], 0, &mut out),
        Ok(1000)
    );
    assert!(out.is_empty());
    // The first cells as integers: NULL as 0, DECIMAL cut, DOUBLE cut, unsigned.
    let some = c
        .prepare("SELECT id, a, d, f, u FROM t WHERE id IN (?, ?) ORDER BY id")
        .unwrap();
    assert_eq!(
        c.fetch(some, &[Param::Int(3), Param::Int(10)], 5, &mut out),
        Ok(2)
    );
    assert_eq!(out, [3, 0, 3, 0, 3, 10, -10, 10, 2, 10]);
    // The same in the text protocol.
    assert_eq!(
        c.query_row("SELECT id, a, d, f, u FROM t WHERE id = 10"),
        Ok(Some(vec![10, -10, 10, 2, 10]))
    );
    assert_eq!(
        c.query_texts("SELECT a, s, dt FROM t WHERE id IN (1, 6) ORDER BY id"),
        Ok(vec![
            vec!["-1".to_string(), "s1".into(), "2026-12-06 13:14:15".into()],
            vec![String::new(), String::new(), String::new()],
        ])
    );
    assert_eq!(c.query_text("SELECT s FROM t WHERE id = 2"), Ok(None));
    // A script's answer: names and texts, NULL as None, in both protocols.
    let by_id = c.prepare("SELECT a, s, dt, d FROM t WHERE id = ?").unwrap();
    for simple in [false, true] {
        let mut answer = Answer::default();
        answer.reset(true);
        match simple {
            false => c.answer(by_id, &[Param::Int(1)], &mut answer).unwrap(),
            true => c
                .simple("SELECT a, s, dt, d FROM t WHERE id = 1", &mut answer)
                .unwrap(),
        }
        assert_eq!(answer.columns, ["a", "s", "dt", "d"], "simple: {simple}");
        assert_eq!(
            answer.rows,
            [vec![
                Some("-1".to_string()),
                Some("s1".into()),
                Some("2026-12-06 13:14:15".into()),
                Some("1.75".into())
            ]],
            "simple: {simple}"
        );
        answer.reset(true);
        match simple {
            false => c.answer(by_id, &[Param::Int(6)], &mut answer).unwrap(),
            true => c
                .simple("SELECT a, s, dt, d FROM t WHERE id = 6", &mut answer)
                .unwrap(),
        }
        assert_eq!(answer.rows[0][..3], [None, None, None], "simple: {simple}");
    }
    // A NULL parameter, and a text one.
    let by_s = c.prepare("SELECT count(*) FROM t WHERE s <=> ?").unwrap();
    out.clear();
    assert_eq!(c.fetch(by_s, &[Param::Null], 1, &mut out), Ok(1));
    assert_eq!(c.fetch(by_s, &[Param::Text("s7")], 1, &mut out), Ok(1));
    assert_eq!(out, [500, 1]);
    // Rows changed are rows matched (CLIENT_FOUND_ROWS), in both protocols.
    let touch = c.prepare("UPDATE t SET u = u WHERE id <= ?").unwrap();
    assert_eq!(c.exec(touch, &[10]), Ok(10));
    let mut answer = Answer::default();
    c.simple("UPDATE t SET u = u WHERE id <= 7", &mut answer)
        .unwrap();
    assert_eq!(answer.changed, 7);
    // Several results: a script's answer is the last one's.
    answer.reset(true);
    c.simple("SELECT 1; SELECT 2 AS two, NULL AS n", &mut answer)
        .unwrap();
    assert_eq!(answer.columns, ["two", "n"]);
    assert_eq!(answer.rows, [vec![Some("2".to_string()), None]]);
    // Columns MariaDB does not send again (MARIADB_CLIENT_CACHE_METADATA) are the ones it
    // sent last, names included; after ALTER TABLE it sends the new ones.
    c.batch("CREATE TABLE m (id INT PRIMARY KEY, a INT); INSERT INTO m VALUES (1, 10)")
        .unwrap();
    let star = c.prepare("SELECT * FROM m WHERE id = ?").unwrap();
    for (round, columns) in [(0, 2), (1, 2), (2, 3), (3, 3)] {
        if round == 2 {
            c.batch("ALTER TABLE m ADD COLUMN b VARCHAR(5) DEFAULT 'x'")
                .unwrap();
        }
        answer.reset(true);
        c.answer(star, &[Param::Int(1)], &mut answer).unwrap();
        let want = ["id", "a", "b"].map(String::from);
        assert_eq!(answer.columns, want[..columns], "round {round}");
        let values = [Some("1".to_string()), Some("10".into()), Some("x".into())];
        assert_eq!(answer.rows, [values[..columns].to_vec()], "round {round}");
        out.clear();
        assert_eq!(c.fetch(star, &[Param::Int(1)], 2, &mut out), Ok(1));
        assert_eq!(out, [1, 10]);
    }
    // Transactions as the server reports them.
    c.begin(true).unwrap();
    assert_eq!(c.in_transaction(), Some(true));
    c.commit().unwrap();
    assert_eq!(c.in_transaction(), Some(false));
}

#[test]
fn rows_and_statements_longer_than_a_packet() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    connect(&db.url())
        .batch("SET GLOBAL max_allowed_packet = 64 * 1024 * 1024")
        .unwrap();
    // A new session takes the new limit.
    let mut c = connect(&db.url());
    // 20 MB in one row: two packets joined. 16 MiB − 7 bytes of text make a payload of
    // exactly 16 MiB − 1 (the length's four bytes in front, and the `7` cell's two after),
    // which the server must follow with an empty packet.
    for len in [20_000_000usize, 16_777_209, 16_777_208, 16_777_210] {
        let rows = c
            .query_texts(&format!("SELECT REPEAT('x', {len}), 7"))
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][0].len(), len);
        assert!(rows[0][0].bytes().all(|b| b == b'x'));
        assert_eq!(rows[0][1], "7");
        let st = c.prepare("SELECT 5, REPEAT('y', ?), 6").unwrap();
        let mut out = Vec::new();
        assert_eq!(c.fetch(st, &[Param::Int(len as i64)], 1, &mut out), Ok(1));
        assert_eq!(out, [5]);
        // The connection is still in step.
        assert_eq!(c.query_row("SELECT 42"), Ok(Some(vec![42])));
    }
    // Statements longer than a packet, in both protocols.
    let big = "z".repeat(17_000_000);
    c.batch("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)")
        .unwrap();
    c.batch(&format!("INSERT INTO big VALUES (1, '{big}')"))
        .unwrap();
    let put = c.prepare("INSERT INTO big VALUES (?, ?)").unwrap();
    let mut answer = Answer::default();
    c.answer(put, &[Param::Int(2), Param::Text(&big)], &mut answer)
        .unwrap();
    assert_eq!(answer.changed, 1);
    // A payload of exactly 16 MiB − 1 bytes goes with an empty packet after it.
    let sql_len = |n: usize| format!("INSERT INTO big VALUES (3, '{}')", "w".repeat(n)).len();
    let fill = 16_777_215 - 1 - sql_len(0);
    c.batch(&format!(
        "INSERT INTO big VALUES (3, '{}')",
        "w".repeat(fill)
    ))
    .unwrap();
    assert_eq!(
        c.query_texts("SELECT id, LENGTH(b) FROM big ORDER BY id"),
        Ok(vec![
            vec!["1".to_string(), "17000000".into()],
            vec!["2".to_string(), "17000000".into()],
            vec!["3".to_string(), fill.to_string()],
        ])
    );
}

#[test]
fn errors_carry_their_codes_and_the_connection_goes_on() {
    let Some(db) = MariaDbServer::start() else {
        return;
    };
    let url = db.url();
    let mut c = connect(&url);
    c.batch("CREATE TABLE k (id INT PRIMARY KEY, v INT); INSERT INTO k VALUES (1, 0), (2, 0)")
        .unwrap();
    // A duplicate key: a conflict, to retry.
    let e = c.batch("INSERT INTO k VALUES (1, 1)").unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Conflict, "{e}");
    assert!(
        e.message.starts_with("ERROR 1062 (23000): Duplicate entry"),
        "{e}"
    );
    // No such table: the server's message, as the mysql client shows it.
    let e = c.query_row("SELECT * FROM nowhere").unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Other);
    assert!(e.message.starts_with("ERROR 1146 (42S02): "), "{e}");
    let e = c.prepare("SELEKT 1").unwrap_err();
    assert!(e.message.starts_with("ERROR 1064 (42000): "), "{e}");
    // An error in the second statement of a batch: the first ran, the rest did not.
    let e = c
        .batch("UPDATE k SET v = 5 WHERE id = 1; SELECT * FROM nowhere; UPDATE k SET v = 6")
        .unwrap_err();
    assert!(e.message.starts_with("ERROR 1146"), "{e}");
    assert_eq!(
        c.query_texts("SELECT v FROM k ORDER BY id"),
        Ok(vec![vec!["5".to_string()], vec!["0".to_string()]])
    );
    // Parameters that do not match: refused before anything is sent.
    let st = c.prepare("SELECT v FROM k WHERE id = ?").unwrap();
    let e = c.exec(st, &[1, 2]).unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Other, "{e}");
    // A row lock held elsewhere: the lock wait timeout (1205) is a conflict.
    let mut holder = connect(&url);
    holder.begin(true).unwrap();
    holder.batch("UPDATE k SET v = 1 WHERE id = 2").unwrap();
    c.batch("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
    let upd = c.prepare("UPDATE k SET v = ? WHERE id = 2").unwrap();
    let e = c.exec(upd, &[9]).unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Conflict, "{e}");
    assert!(e.message.starts_with("ERROR 1205 "), "{e}");
    holder.rollback();
    assert_eq!(c.exec(upd, &[9]), Ok(1));
    assert!(!c.is_broken());
    // A killed session is gone.
    let id = c.server_pid().unwrap();
    holder.batch(&format!("KILL {id}")).unwrap();
    let e = c.query_row("SELECT 1").unwrap_err();
    assert!(
        matches!(e.kind, DbErrorKind::Broken),
        "a killed session: {e:?}"
    );
    assert!(c.is_broken());
    // A password, right and wrong (mysql_native_password), never shown.
    holder
        .batch("CREATE USER pw@'%' IDENTIFIED BY 'hunter2'; GRANT ALL ON test.* TO pw@'%'")
        .unwrap();
    let port = db.port();
    let mut with_pw = connect(&format!("mysql://pw:hunter2@127.0.0.1:{port}/test"));
    assert_eq!(with_pw.query_row("SELECT 3"), Ok(Some(vec![3])));
    let e = perflab::sql::mysql::connect(
        &target(&format!("mysql://pw:hunter3@127.0.0.1:{port}/test")),
        &Stop::new(),
    )
    .unwrap_err();
    assert!(e.message.starts_with("ERROR 1045 (28000): "), "{e}");
    assert!(!e.message.contains("hunter"), "{e}");
    // TLS asked for of a server that offers none: one line that names the fix.
    let e =
        perflab::sql::mysql::connect(&target(&format!("{url}?ssl-mode=REQUIRED")), &Stop::new())
            .unwrap_err();
    assert!(e.message.contains("does not offer it"), "{e}");
}
