//! pgbench 15's built-in scripts (`-b NAME`, `-N`, `-S`), in its own script language, run
//! by the same interpreter as a user's file.
//!
//! Their SQL is PostgreSQL's; `END` (which MySQL does not know) is written `COMMIT` there,
//! the one word perflab changes so that the scripts run on all three engines.

use crate::sql::sql::Dialect;

/// A built-in script: its name, pgbench's description, and its text.
#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    text: &'static str,
}

pub const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        description: "<builtin: TPC-B (sort of)>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
               UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "simple-update",
        description: "<builtin: simple update>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "select-only",
        description: "<builtin: select only>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

impl Builtin {
    /// The script's text for a database: `END` is `COMMIT` on MySQL.
    pub fn text(&self, dialect: Dialect) -> String {
        match dialect {
            Dialect::Mysql => self.text.replace("\nEND;", "\nCOMMIT;"),
            _ => self.text.to_string(),
        }
    }
}

/// The built-in `name` names, as pgbench finds it: the exact name, else the one name it
/// is a prefix of (`-b si` is ambiguous, `-b se` is select-only).
pub fn find(name: &str) -> Result<&'static Builtin, String> {
    if let Some(b) = BUILTINS.iter().find(|b| b.name == name) {
        return Ok(b);
    }
    let matching: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match matching.as_slice() {
        [one] if !name.is_empty() => Ok(one),
        [] | [_] => Err(format!(
            "no builtin script {name:?}: one of {} (-b list)",
            list()
        )),
        many => Err(format!(
            "ambiguous builtin name {name:?}: {} match",
            many.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The names, for messages and `-b list`.
pub fn list() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_find_one_builtin_or_say_which_match() {
        assert_eq!(find("se").unwrap().name, "select-only");
        assert_eq!(find("tpcb-like").unwrap().name, "tpcb-like");
        assert!(find("s").unwrap_err().contains("ambiguous"));
        assert!(find("x").unwrap_err().contains("-b list"));
        assert!(find("").is_err());
    }

    #[test]
    fn builtins_parse_and_end_with_commit_on_mysql() {
        for b in &BUILTINS {
            for d in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
                let s = super::super::parse::parse(b.description, 1, &b.text(d))
                    .unwrap_or_else(|e| panic!("{}: {e:?}", b.name));
                assert!(!s.commands.is_empty());
            }
        }
        assert!(BUILTINS[0].text(Dialect::Mysql).ends_with("COMMIT;\n"));
        assert!(BUILTINS[0].text(Dialect::Postgres).ends_with("END;\n"));
    }
}
