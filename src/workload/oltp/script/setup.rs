//! From `--script`, `--builtin`, `--define` and `--max-tries` to a run's [`ScriptSet`]: the
//! files read and parsed, weights checked, as pgbench checks them before it connects.

use super::builtin::{self, BUILTINS};
use super::client::{ScriptSet, kind_name};
use super::parse::{Script, check_name, parse};
use crate::sql::query_mode::QueryMode;
use crate::sql::sql::Dialect;

/// What the command line asked for.
pub struct Asked<'a> {
    pub files: &'a [String],
    pub builtins: &'a [String],
    pub defines: &'a [String],
    pub max_tries: Option<&'a str>,
    /// `-r`: time every command.
    pub per_statement: bool,
}

impl Asked<'_> {
    /// Whether any script was asked for.
    pub fn any(&self) -> bool {
        !self.files.is_empty() || !self.builtins.is_empty()
    }

    /// The one built-in script asked for, alone and without a variable, that perflab's own
    /// DebitCredit runs (the same statements, checked after each step): `tpcb-like` or
    /// `select-only`.
    pub fn lone_builtin(&self) -> Option<&'static str> {
        if !self.files.is_empty()
            || !self.defines.is_empty()
            || self.max_tries.is_some()
            || self.per_statement
        {
            return None;
        }
        match self.builtins {
            [one] => {
                let (name, _) = split_weight(one).ok()?;
                builtin::find(name)
                    .ok()
                    .map(|b| b.name)
                    .filter(|n| *n != "simple-update")
            }
            _ => None,
        }
    }

    /// Whether a built-in script is among them (`:scale` then comes from the bank).
    pub fn uses_builtin(&self) -> bool {
        !self.builtins.is_empty()
    }
}

/// `-b list`: pgbench's listing.
pub fn listing() -> String {
    let mut out = String::from("Available builtin scripts:\n");
    for b in &BUILTINS {
        out.push_str(&format!("{:>15}: {}\n", b.name, b.description));
    }
    out
}

/// `NAME@W`: the name and weight (1 without one), as pgbench splits them at the last `@`.
fn split_weight(text: &str) -> Result<(&str, u64), String> {
    match text.rsplit_once('@') {
        None => Ok((text, 1)),
        Some((name, w)) => match w.parse::<u64>() {
            Ok(n) if n <= i32::MAX as u64 => Ok((name, n)),
            _ => Err(format!(
                "invalid weight specification: {text:?} (a whole number from 0 after the @)"
            )),
        },
    }
}

/// The run's scripts, for a database of `dialect`.
pub fn build(
    asked: &Asked<'_>,
    dialect: Dialect,
    mode: QueryMode,
    scale: i64,
    random_seed: u64,
) -> Result<ScriptSet, String> {
    let mut scripts: Vec<Script> = Vec::new();
    for b in asked.builtins {
        let (name, weight) = split_weight(b)?;
        let found = builtin::find(name)?;
        let script = parse(found.description, weight, &found.text(dialect))
            .map_err(|e| format!("{}: line {}: {}", found.name, e.line, e.message))?;
        scripts.push(script);
    }
    for f in asked.files {
        let (path, weight) = split_weight(f)?;
        let text = read(path)?;
        let script =
            parse(path, weight, &text).map_err(|e| format!("{path}:{}: {}", e.line, e.message))?;
        scripts.push(script);
    }
    if scripts.iter().map(|s| s.weight).sum::<u64>() == 0 {
        return Err("total script weight must not be zero".into());
    }
    for s in &scripts {
        let pipelined = s.commands.iter().any(|c| {
            matches!(
                c.what,
                super::parse::What::StartPipeline | super::parse::What::EndPipeline
            )
        });
        if pipelined && mode == QueryMode::Simple {
            return Err(format!(
                "{}: \\startpipeline: cannot use pipeline mode with the simple query protocol (-M extended or prepared)",
                s.name
            ));
        }
        if pipelined && dialect != Dialect::Postgres {
            return Err(format!(
                "{}: \\startpipeline: pipelines are PostgreSQL's (its extended protocol); this engine has none",
                s.name
            ));
        }
    }
    let mut defines = Vec::new();
    for d in asked.defines {
        let (name, value) = d
            .split_once('=')
            .ok_or_else(|| format!("invalid variable definition: {d:?} (NAME=VALUE)"))?;
        check_name(name)?;
        defines.push((name.to_string(), value.to_string()));
    }
    let max_tries = match asked.max_tries {
        None => 1,
        Some(t) => t
            .trim()
            .parse::<u32>()
            .map_err(|_| format!("invalid number of maximum tries: {t:?}"))?,
    };
    let kinds = scripts.iter().map(kind_name).collect();
    Ok(ScriptSet {
        scripts,
        kinds,
        mode,
        defines,
        scale,
        random_seed,
        max_tries,
        per_statement: asked.per_statement,
    })
}

/// A script file (`-` is standard input), bounded in size.
fn read(path: &str) -> Result<String, String> {
    use std::io::Read;
    let limit = super::parse::MAX_SCRIPT_BYTES as u64 + 1;
    let mut text = String::new();
    let r = match path {
        "-" => std::io::stdin().take(limit).read_to_string(&mut text),
        _ => std::fs::File::open(path)
            .and_then(|f| f.take(limit).read_to_string(&mut text))
            .map_err(|e| std::io::Error::new(e.kind(), e)),
    };
    r.map_err(|e| format!("could not read script {path:?}: {e}"))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked<'a>(files: &'a [String], builtins: &'a [String]) -> Asked<'a> {
        Asked {
            files,
            builtins,
            defines: &[],
            max_tries: None,
            per_statement: false,
        }
    }

    #[test]
    fn weights_prefixes_and_the_lone_builtin() {
        let b = vec!["tpcb@1".to_string(), "se@9".to_string()];
        let set = build(&asked(&[], &b), Dialect::Postgres, QueryMode::Simple, 1, 1).unwrap();
        assert_eq!(set.scripts.len(), 2);
        assert_eq!(set.scripts[1].weight, 9);
        assert_eq!(set.kinds[1], "<builtin: select only>");
        assert_eq!(asked(&[], &b).lone_builtin(), None);
        let one = vec!["select-only".to_string()];
        assert_eq!(asked(&[], &one).lone_builtin(), Some("select-only"));
        let zero = vec!["tpcb@0".to_string()];
        assert!(
            build(
                &asked(&[], &zero),
                Dialect::Postgres,
                QueryMode::Simple,
                1,
                1
            )
            .unwrap_err()
            .contains("must not be zero")
        );
        let bad = vec!["tpcb@x".to_string()];
        assert!(
            build(
                &asked(&[], &bad),
                Dialect::Postgres,
                QueryMode::Simple,
                1,
                1
            )
            .unwrap_err()
            .contains("weight")
        );
    }

    #[test]
    fn a_missing_file_and_a_bad_line_name_themselves() {
        let f = vec!["/nonexistent/x.sql".to_string()];
        let e = build(&asked(&f, &[]), Dialect::Postgres, QueryMode::Simple, 1, 1).unwrap_err();
        assert!(e.contains("/nonexistent/x.sql"), "{e}");
        let dir = std::env::temp_dir().join(format!("perflab-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.sql");
        std::fs::write(&path, "SELECT 1;\n\\sleep 1 min\n").unwrap();
        let f = vec![format!("{}@2", path.display())];
        let e = build(&asked(&f, &[]), Dialect::Postgres, QueryMode::Simple, 1, 1).unwrap_err();
        assert!(e.contains("bad.sql:2: \\sleep"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
