//! A pgbench script as commands: SQL statements with their variables found, and
//! meta-commands checked as pgbench 15 checks them when it reads the file (`\set`'s
//! expression parsed, `\sleep`'s unit, `\if` blocks matched, `\gset` joined to the SQL it
//! follows). What pgbench refuses here is refused with the script's name and line.

use super::expr::Expr;
use super::scan::{Piece, scan};

/// pgbench's limit on a statement's variables (`MAX_ARGS`).
pub const MAX_PARAMS: usize = 256;
/// The longest script perflab reads (a whole file is read before it runs).
pub const MAX_SCRIPT_BYTES: usize = 16 << 20;
/// Deepest nesting of `\if` blocks.
const MAX_IF_DEPTH: usize = 1000;

/// One script, as `-f FILE[@W]` or `-b NAME[@W]` gives it.
#[derive(Debug, Clone)]
pub struct Script {
    /// As pgbench names it: the file's path, or `<builtin: TPC-B (sort of)>`.
    pub name: String,
    pub weight: u64,
    pub commands: Vec<Command>,
}

/// One command and where it is.
#[derive(Debug, Clone)]
pub struct Command {
    /// The line it starts on (1-based).
    pub line: usize,
    /// Its first line, as pgbench prints it under `-r`.
    pub shown: String,
    pub what: What,
}

/// What a command does.
#[derive(Debug, Clone)]
pub enum What {
    Sql(Sql),
    Set {
        var: String,
        expr: Expr,
    },
    /// `\sleep N [us|ms|s]`: microseconds per unit of `amount`.
    Sleep {
        amount: Amount,
        unit_us: i64,
    },
    /// `\setshell VAR COMMAND ARGS...`: the command's output, an integer, into VAR.
    SetShell {
        var: String,
        words: Vec<Word>,
    },
    /// `\shell COMMAND ARGS...`.
    Shell {
        words: Vec<Word>,
    },
    /// `\if`: on false, go to `next` (the next `\elif`, `\else` or `\endif` of the block).
    If {
        expr: Expr,
        next: usize,
    },
    /// `\elif`: reached in order (a branch above ran), go to `end`; reached from a false
    /// condition, test `expr`, and on false go to `next`.
    Elif {
        expr: Expr,
        next: usize,
        end: usize,
    },
    /// `\else`: reached in order, go to `end`.
    Else {
        end: usize,
    },
    Endif,
    StartPipeline,
    EndPipeline,
}

/// `\sleep`'s amount: a number or a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Amount {
    Fixed(i64),
    Var(String),
}

/// A word of `\shell` or `\setshell`: text, or a variable's value (`:name`; `::x` is `:x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    Text(String),
    Var(String),
}

/// An SQL command: its text cut at its variables.
#[derive(Debug, Clone)]
pub struct Sql {
    /// The text as written, for `-M simple` (variables substituted at run time).
    pub parts: Vec<Part>,
    /// The text with `$1..$n` for the variables, in order (`-M extended`, `prepared`).
    pub numbered: String,
    /// The variables of `$1..$n`.
    pub params: Vec<String>,
    /// `\gset` or `\aset` after it.
    pub store: Option<Store>,
}

/// A piece of an SQL command's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Var(String),
}

/// Where a query's answer goes: `\gset [prefix]` (exactly one row) or `\aset [prefix]`
/// (every row; none assigns nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub all: bool,
    pub prefix: String,
}

/// A script that pgbench would refuse: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl ParseError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line,
            message: message.into(),
        }
    }
}

/// Reads a script's text.
pub fn parse(name: &str, weight: u64, text: &str) -> Result<Script, ParseError> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ParseError::at(
            1,
            format!(
                "the script is {} bytes; perflab reads at most {MAX_SCRIPT_BYTES}",
                text.len()
            ),
        ));
    }
    if text.contains('\0') {
        return Err(ParseError::at(1, "the script holds a NUL byte"));
    }
    let pieces = scan(text).map_err(|e| ParseError::at(e.line, e.message))?;
    let mut reader = Reader {
        commands: Vec::with_capacity(pieces.len()),
        blocks: Vec::new(),
        pipeline: None,
    };
    for piece in pieces {
        match piece {
            Piece::Sql { text, line } => {
                let (parts, numbered, params) = variables(&text);
                if params.len() > MAX_PARAMS {
                    return Err(ParseError::at(
                        line,
                        format!(
                            "statement has too many arguments (maximum is {})",
                            MAX_PARAMS - 1
                        ),
                    ));
                }
                reader.commands.push(Command {
                    line,
                    shown: first_line(&text),
                    what: What::Sql(Sql {
                        parts,
                        numbered,
                        params,
                        store: None,
                    }),
                });
            }
            Piece::Meta { name, rest, line } => reader.meta(&name, &rest, line)?,
        }
    }
    let Reader {
        commands,
        blocks,
        pipeline,
    } = reader;
    if let Some((open, _, _)) = blocks.last() {
        return Err(ParseError::at(
            commands[*open].line,
            "\\if without matching \\endif",
        ));
    }
    if let Some(line) = pipeline {
        return Err(ParseError::at(
            line,
            "\\startpipeline without matching \\endpipeline",
        ));
    }
    if commands.is_empty() {
        return Err(ParseError::at(1, "the script holds no command"));
    }
    Ok(Script {
        name: name.to_string(),
        weight,
        commands,
    })
}

/// What is read so far of a script.
struct Reader {
    commands: Vec<Command>,
    /// Open `\if` blocks: the index of the command whose `next` is still to be set, every
    /// `\elif`/`\else` whose `end` waits for the `\endif`, and whether `\else` was seen.
    blocks: Vec<(usize, Vec<usize>, bool)>,
    /// The line of an open `\startpipeline`.
    pipeline: Option<usize>,
}

impl Reader {
    /// A backslash command: checked, linked into its `\if` block, or joined to the SQL
    /// before it (`\gset`).
    fn meta(&mut self, name: &str, rest: &str, line: usize) -> Result<(), ParseError> {
        let shown = format!("\\{name} {rest}").trim_end().to_string();
        let err = |m: &str| ParseError::at(line, format!("\\{name}: {m}"));
        let words: Vec<&str> = rest.split_whitespace().collect();
        let no_args = |w: &[&str]| match w.is_empty() {
            true => Ok(()),
            false => Err(err("unexpected argument")),
        };
        let here = self.commands.len();
        let what = match name {
            "gset" | "aset" => {
                if words.len() > 1 {
                    return Err(err("too many arguments"));
                }
                let store = Store {
                    all: name == "aset",
                    prefix: words.first().unwrap_or(&"").to_string(),
                };
                if self.pipeline.is_some() {
                    return Err(err("not available inside a pipeline"));
                }
                match self.commands.last_mut().map(|c| &mut c.what) {
                    Some(What::Sql(sql)) if sql.store.is_none() => {
                        sql.store = Some(store);
                        return Ok(());
                    }
                    _ => return Err(err("must follow an SQL command")),
                }
            }
            "set" => {
                let (var, expr) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| err("missing argument"))?;
                check_name(var).map_err(|m| err(&m))?;
                let expr = Expr::parse(expr.trim())
                    .map_err(|e| err(&format!("{e} in expression {:?}", expr.trim())))?;
                What::Set {
                    var: var.to_string(),
                    expr,
                }
            }
            "sleep" => sleep(&words).map_err(|m| err(&m))?,
            "setshell" => {
                if words.len() < 2 {
                    return Err(err("missing argument"));
                }
                check_name(words[0]).map_err(|m| err(&m))?;
                What::SetShell {
                    var: words[0].to_string(),
                    words: words[1..].iter().map(|w| word(w)).collect(),
                }
            }
            "shell" => {
                if words.is_empty() {
                    return Err(err("missing command"));
                }
                What::Shell {
                    words: words.iter().map(|w| word(w)).collect(),
                }
            }
            "if" | "elif" => {
                let expr = Expr::parse(rest.trim())
                    .map_err(|e| err(&format!("{e} in expression {:?}", rest.trim())))?;
                if name == "if" {
                    if self.blocks.len() >= MAX_IF_DEPTH {
                        return Err(err(&format!(
                            "more than {MAX_IF_DEPTH} nested \\if self.blocks"
                        )));
                    }
                    self.blocks.push((here, Vec::new(), false));
                    What::If { expr, next: 0 }
                } else {
                    let (open, ends, seen_else) = self
                        .blocks
                        .last_mut()
                        .ok_or_else(|| err("\\elif without matching \\if"))?;
                    if *seen_else {
                        return Err(err("\\elif after \\else"));
                    }
                    link(&mut self.commands, *open, here);
                    *open = here;
                    ends.push(here);
                    What::Elif {
                        expr,
                        next: 0,
                        end: 0,
                    }
                }
            }
            "else" => {
                no_args(&words)?;
                let (open, ends, seen_else) = self
                    .blocks
                    .last_mut()
                    .ok_or_else(|| err("\\else without matching \\if"))?;
                if *seen_else {
                    return Err(err("\\else after \\else"));
                }
                *seen_else = true;
                link(&mut self.commands, *open, here);
                *open = here;
                ends.push(here);
                What::Else { end: 0 }
            }
            "endif" => {
                no_args(&words)?;
                let (open, ends, _) = self
                    .blocks
                    .pop()
                    .ok_or_else(|| err("\\endif without matching \\if"))?;
                link(&mut self.commands, open, here);
                for e in ends {
                    match &mut self.commands[e].what {
                        What::Elif { end, .. } | What::Else { end } => *end = here,
                        _ => {}
                    }
                }
                What::Endif
            }
            "startpipeline" => {
                no_args(&words)?;
                if self.pipeline.is_some() {
                    return Err(err("already in a pipeline"));
                }
                self.pipeline = Some(line);
                What::StartPipeline
            }
            "endpipeline" => {
                no_args(&words)?;
                if self.pipeline.take().is_none() {
                    return Err(err("not in a pipeline"));
                }
                What::EndPipeline
            }
            "syncpipeline" | "close" | "bind" | "parse" | "bind_named" => {
                return Err(err(
                    "a meta-command of pgbench after 15 (perflab reads PostgreSQL 15's pgbench scripts)",
                ));
            }
            _ => return Err(err("invalid command")),
        };
        self.commands.push(Command { line, shown, what });
        Ok(())
    }
}

/// `\sleep N [us|ms|s]` or `\sleep :var [unit]`.
fn sleep(words: &[&str]) -> Result<What, String> {
    if words.is_empty() {
        return Err("missing argument".into());
    }
    if words.len() > 2 {
        return Err("too many arguments".into());
    }
    let amount = match words[0].strip_prefix(':') {
        Some(v) => {
            check_name(v)?;
            Amount::Var(v.to_string())
        }
        None => Amount::Fixed(words[0].parse::<i64>().map_err(|_| {
            format!(
                "invalid sleep time {:?}: a whole number or :variable",
                words[0]
            )
        })?),
    };
    let unit_us = match words.get(1).map(|u| u.to_ascii_lowercase()) {
        None => 1_000_000,
        Some(u) if u == "s" => 1_000_000,
        Some(u) if u == "ms" => 1_000,
        Some(u) if u == "us" => 1,
        Some(u) => {
            return Err(format!("unrecognized time unit {u:?}, must be us, ms or s"));
        }
    };
    Ok(What::Sleep { amount, unit_us })
}

/// Points the `\if` or `\elif` at `open` (or nothing, for an `\else`) to `to`.
fn link(commands: &mut [Command], open: usize, to: usize) {
    match &mut commands[open].what {
        What::If { next, .. } | What::Elif { next, .. } => *next = to,
        _ => {}
    }
}

/// A variable's name as pgbench accepts it: letters (any non-ASCII too), digits and `_`,
/// not starting with a digit.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || c == '_');
    match ok {
        true => Ok(()),
        false => Err(format!("invalid variable name {name:?}")),
    }
}

/// The length of the variable name at the start of `s`, as pgbench's `parseVariable`
/// reads one after a `:` (digits may lead here).
fn name_len(s: &str) -> usize {
    s.char_indices()
        .find(|&(_, c)| c.is_ascii() && !c.is_ascii_alphanumeric() && c != '_')
        .map_or(s.len(), |(i, _)| i)
}

/// An SQL command's text cut at its `:variables` (inside quotes too, as pgbench does;
/// a run of colons such as a `::` cast is passed over): the parts, the numbered text and
/// the variables in order.
fn variables(text: &str) -> (Vec<Part>, String, Vec<String>) {
    let mut parts = Vec::new();
    let mut numbered = String::with_capacity(text.len());
    let mut params = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(':') {
        let after = &rest[at + 1..];
        let n = name_len(after);
        if n == 0 {
            let colons = rest[at..].len() - rest[at..].trim_start_matches(':').len();
            literal.push_str(&rest[..at + colons]);
            numbered.push_str(&rest[..at + colons]);
            rest = &rest[at + colons..];
            continue;
        }
        literal.push_str(&rest[..at]);
        numbered.push_str(&rest[..at]);
        if !literal.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut literal)));
        }
        let name = after[..n].to_string();
        params.push(name.clone());
        numbered.push_str(&format!("${}", params.len()));
        parts.push(Part::Var(name));
        rest = &after[n..];
    }
    literal.push_str(rest);
    numbered.push_str(rest);
    if !literal.is_empty() {
        parts.push(Part::Text(literal));
    }
    (parts, numbered, params)
}

/// A word of `\shell`: `:name` is a variable, `::x` the text `:x`.
fn word(w: &str) -> Word {
    match w.strip_prefix(':') {
        Some(rest) if rest.starts_with(':') => Word::Text(rest.to_string()),
        Some(rest) if !rest.is_empty() => Word::Var(rest.to_string()),
        _ => Word::Text(w.to_string()),
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Script {
        parse("t.sql", 1, text).unwrap_or_else(|e| panic!("{}: {}", e.line, e.message))
    }

    fn refused(text: &str) -> ParseError {
        parse("t.sql", 1, text).expect_err(text)
    }

    #[test]
    fn variables_become_numbered_parameters() {
        let (parts, numbered, params) =
            variables("SELECT :a::int, ':b', x:c FROM t WHERE d = :a AND e = 1::bigint");
        assert_eq!(
            numbered,
            "SELECT $1::int, '$2', x$3 FROM t WHERE d = $4 AND e = 1::bigint"
        );
        assert_eq!(params, ["a", "b", "c", "a"]);
        assert_eq!(parts.first(), Some(&Part::Text("SELECT ".into())));
        assert_eq!(parts[1], Part::Var("a".into()));
    }

    #[test]
    fn if_blocks_are_linked() {
        let s = ok(
            "\\if :a = 1\nSELECT 1;\n\\elif :a = 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;",
        );
        let kinds: Vec<String> = s
            .commands
            .iter()
            .map(|c| match &c.what {
                What::If { next, .. } => format!("if>{next}"),
                What::Elif { next, end, .. } => format!("elif>{next}/{end}"),
                What::Else { end } => format!("else/{end}"),
                What::Endif => "endif".into(),
                What::Sql(_) => "sql".into(),
                _ => "other".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "if>2", "sql", "elif>4/6", "sql", "else/6", "sql", "endif", "sql"
            ]
        );
    }

    #[test]
    fn gset_joins_the_query_before_it() {
        let s = ok("SELECT 1 AS x \\gset p_\nSELECT 2 AS y;\n\\aset");
        match &s.commands[0].what {
            What::Sql(q) => assert_eq!(
                q.store,
                Some(Store {
                    all: false,
                    prefix: "p_".into()
                })
            ),
            other => panic!("{other:?}"),
        }
        match &s.commands[1].what {
            What::Sql(q) => assert!(q.store.as_ref().is_some_and(|s| s.all)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sleep_units_and_shell_words() {
        let s = ok("\\sleep 10 ms\n\\sleep :t\n\\setshell v echo :x ::y z\nSELECT 1;");
        assert!(matches!(
            s.commands[0].what,
            What::Sleep {
                amount: Amount::Fixed(10),
                unit_us: 1000
            }
        ));
        assert!(
            matches!(&s.commands[1].what, What::Sleep { amount: Amount::Var(v), unit_us: 1_000_000 } if v == "t")
        );
        match &s.commands[2].what {
            What::SetShell { var, words } => {
                assert_eq!(var, "v");
                assert_eq!(
                    words,
                    &[
                        Word::Text("echo".into()),
                        Word::Var("x".into()),
                        Word::Text(":y".into()),
                        Word::Text("z".into())
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_pgbench_refuses_is_refused_with_its_line() {
        for (text, line, words) in [
            ("SELECT 1;\n\\endif", 2, "without matching \\if"),
            ("\\if 1\nSELECT 1;", 1, "without matching \\endif"),
            ("\\if 1\n\\else\n\\else\n\\endif", 3, "after \\else"),
            ("\\if 1\n\\else\n\\elif 2\n\\endif", 3, "after \\else"),
            ("\\gset", 1, "must follow an SQL command"),
            ("SELECT 1 \\gset\n\\gset", 2, "must follow an SQL command"),
            ("\\sleep 1 min", 1, "unrecognized time unit"),
            ("\\sleep x", 1, "invalid sleep time"),
            ("\\frobnicate", 1, "invalid command"),
            ("\\set 1x 2", 1, "invalid variable name"),
            ("\\set x", 1, "missing argument"),
            ("\\else 1", 1, "unexpected argument"),
            (
                "\\startpipeline\nSELECT 1;",
                1,
                "without matching \\endpipeline",
            ),
            ("\\startpipeline\nSELECT 1 \\gset", 2, "inside a pipeline"),
            ("\\endpipeline", 1, "not in a pipeline"),
            ("-- nothing", 1, "no command"),
        ] {
            let e = refused(text);
            assert_eq!(e.line, line, "{text}: {e:?}");
            assert!(e.message.contains(words), "{text}: {e:?}");
        }
    }

    #[test]
    fn deep_if_nesting_is_refused_not_a_crash() {
        let text = "\\if 1\n".repeat(5000) + &"\\endif\n".repeat(5000);
        assert!(refused(&text).message.contains("nested"));
    }
}
