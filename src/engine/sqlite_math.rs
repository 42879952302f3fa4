//! SQL math functions (`sin`, `cos`, `sqrt`, `pi` ...) on an SQLite connection: C functions
//! of perflab's own (`sqlite_math.c`, compiled by the build script against the bundled
//! SQLite's header), so every build has them without a special SQLite build flag.

unsafe extern "C" {
    fn perflab_sqlite_math(db: *mut rusqlite::ffi::sqlite3) -> std::os::raw::c_int;
}

/// Registers the functions on `conn`, or says why SQLite refused.
pub fn register(conn: &rusqlite::Connection) -> Result<(), String> {
    // SAFETY: `handle` is the open connection's own pointer, valid while `conn` is borrowed;
    // the C function only calls sqlite3_create_function on it, on this thread.
    let rc = unsafe { perflab_sqlite_math(conn.handle()) };
    match rc {
        0 => Ok(()),
        code => Err(format!(
            "cannot add the math functions (SQLite error {code})"
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_functions_answer_as_sqlites_own() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        super::register(&c).unwrap();
        let q = |sql: &str| -> Option<f64> { c.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(q("SELECT sqrt(16)"), Some(4.0));
        assert_eq!(q("SELECT sqrt(-1)"), None);
        assert_eq!(q("SELECT ln(0)"), None);
        assert_eq!(q("SELECT sqrt(NULL)"), None);
        assert_eq!(q("SELECT sqrt('x')"), None);
        assert!((q("SELECT pi()").unwrap() - std::f64::consts::PI).abs() < 1e-15);
        assert!((q("SELECT sin(pi() / 2)").unwrap() - 1.0).abs() < 1e-15);
        assert_eq!(q("SELECT log(100)"), Some(2.0));
        assert_eq!(q("SELECT log(2, 8)"), Some(3.0));
        assert_eq!(q("SELECT mod(7, 4)"), Some(3.0));
        assert_eq!(q("SELECT mod(7, 0)"), None);
        let n: i64 = c.query_row("SELECT ceil(7)", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 7);
        assert_eq!(q("SELECT floor(-1.5)"), Some(-2.0));
        assert_eq!(q("SELECT degrees(pi())"), Some(180.0));
    }
}
