//! `-M`/`--query-mode`: how a session sends its statements, in pgbench's names and meanings.
//!
//! - `prepared` (the default): each statement is parsed once per connection and then only
//!   bound and executed (PostgreSQL's named statements, MySQL's binary protocol).
//! - `extended`: PostgreSQL's extended protocol with the unnamed statement: every execution
//!   sends Parse, Bind, Execute, so the server parses and plans it every time, as pgbench
//!   `-M extended` (libpq's `PQexecParams`) does.
//! - `simple`: the parameters are written into the statement's text, sent as one query
//!   (PostgreSQL's simple protocol, MySQL's text protocol), as pgbench's default `-M simple`.
//!
//! A mode a backend cannot mean is refused in one line: MySQL has no extended protocol and
//! SQLite prepares every statement (it has no wire). Checks, loading and DDL always use the
//! simple path; the mode is the sessions' statements.

use crate::sql::sql::Param;

/// How the sessions send their statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    Simple,
    Extended,
    #[default]
    Prepared,
}

impl QueryMode {
    pub const NAMES: [&'static str; 3] = ["simple", "extended", "prepared"];

    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }

    /// `-M` as given: pgbench's three names, and MySQL's own words for two of them (`text`
    /// is simple, `binary` prepared).
    pub fn parse(text: &str) -> Result<QueryMode, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "simple" | "text" => Ok(QueryMode::Simple),
            "extended" => Ok(QueryMode::Extended),
            "prepared" | "binary" => Ok(QueryMode::Prepared),
            _ => Err(format!(
                "--query-mode {text:?}: use simple, extended or prepared (pgbench's -M)"
            )),
        }
    }

    /// What the mode means on PostgreSQL or MySQL, for the settings table.
    pub fn describe(self, mysql: bool) -> &'static str {
        match (self, mysql) {
            (QueryMode::Prepared, false) => "prepared (named statements, parsed once)",
            (QueryMode::Prepared, true) => "prepared (binary protocol, parsed once)",
            (QueryMode::Extended, _) => "extended (unnamed statement, parsed every time)",
            (QueryMode::Simple, false) => "simple (parameters in the text, one Query)",
            (QueryMode::Simple, true) => "simple (text protocol, parameters in the text)",
        }
    }
}

/// The `-M` option, shared by every SQL kind.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryModeArg {
    /// Servers: how statements are sent, as pgbench's -M: prepared (parsed once per
    /// connection; the default), extended (parsed every time, PostgreSQL) or simple
    /// (parameters written into the text; MySQL's text protocol)
    #[arg(
        short = 'M',
        long = "query-mode",
        value_name = "MODE",
        default_value = "prepared"
    )]
    pub query_mode: String,
}

impl QueryModeArg {
    pub fn mode(&self) -> Result<QueryMode, String> {
        QueryMode::parse(&self.query_mode)
    }
}

/// `sql` with its `?` placeholders replaced by the parameters as literals, for the simple
/// mode. perflab's statements hold `?` only as placeholders (as [`super::sql::numbered_placeholders`]
/// assumes); a count that does not match is an error, not a guess. `literal` writes one
/// parameter; its position (0-based) lets a backend choose by the parameter's type.
pub fn inline(
    sql: &str,
    params: &[Param<'_>],
    mut literal: impl FnMut(usize, Param<'_>, &mut String),
) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut next = 0;
    for piece in sql.split('?').enumerate() {
        let (i, text) = piece;
        if i > 0 {
            let Some(&p) = params.get(next) else {
                return Err(format!(
                    "the statement takes more than the {} parameters given",
                    params.len()
                ));
            };
            literal(next, p, &mut out);
            next += 1;
        }
        out.push_str(text);
    }
    if next != params.len() {
        return Err(format!(
            "the statement takes {next} parameters, {} given",
            params.len()
        ));
    }
    Ok(out)
}

/// A string literal in standard SQL: quotes doubled. `backslashes` doubles backslashes too
/// (MySQL without `NO_BACKSLASH_ESCAPES`).
pub fn quote(text: &str, backslashes: bool, out: &mut String) {
    out.push('\'');
    for c in text.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' if backslashes => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// An integer as a literal that stays one number wherever it lands: a negative one in
/// parentheses (`a-?` with -5 must not become the comment `a--5`).
pub fn integer(v: i64, out: &mut String) {
    use std::fmt::Write;
    let _ = match v < 0 {
        true => write!(out, "({v})"),
        false => write!(out, "{v}"),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_names_and_mysql_words() {
        assert_eq!(QueryMode::parse("simple"), Ok(QueryMode::Simple));
        assert_eq!(QueryMode::parse("Extended"), Ok(QueryMode::Extended));
        assert_eq!(QueryMode::parse("binary"), Ok(QueryMode::Prepared));
        assert_eq!(QueryMode::parse("text"), Ok(QueryMode::Simple));
        assert!(
            QueryMode::parse("fast")
                .unwrap_err()
                .contains("pgbench's -M")
        );
        assert_eq!(QueryMode::default(), QueryMode::Prepared);
    }

    #[test]
    fn parameters_become_literals() {
        let lit = |_: usize, p: Param<'_>, out: &mut String| match p {
            Param::Int(v) => integer(v, out),
            Param::Text(t) => quote(t, false, out),
            Param::Null => out.push_str("NULL"),
        };
        let sql = "UPDATE a SET b = b - ? WHERE c = ? AND d = ?";
        let done = inline(
            sql,
            &[Param::Int(-5), Param::Int(7), Param::Text("it's")],
            lit,
        );
        assert_eq!(
            done.as_deref(),
            Ok("UPDATE a SET b = b - (-5) WHERE c = 7 AND d = 'it''s'")
        );
        assert!(inline(sql, &[Param::Int(1)], lit).is_err());
        assert!(inline("SELECT 1", &[Param::Int(1)], lit).is_err());
        let mut s = String::new();
        quote("a\\b", true, &mut s);
        assert_eq!(s, "'a\\\\b'");
    }
}
