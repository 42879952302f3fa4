//! Cutting a pgbench script into its commands, as pgbench's SQL scanner (psql's) does: an
//! SQL command ends at a `;` outside quotes, comments and parentheses, or where a
//! backslash command begins; `\;` is a `;` that does not end it (a compound query); a
//! backslash command runs to the end of its line, and a backslash at the end of a line
//! continues it on the next.
//!
//! Quotes are `'...'` (with `''`), `E'...'` (with backslash escapes), `"..."` and dollar
//! quotes `$tag$...$tag$`; comments are `-- ...` and nested `/* ... */`. Only where a
//! command starts and ends is decided here; variables (`:name`) are found later, in the
//! command's text, as pgbench finds them (inside quotes too).

/// One piece of a script, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// SQL text (trimmed, never empty), the line it starts on, and whether a backslash
    /// command ended it (`\gset` then belongs to it).
    Sql { text: String, line: usize },
    /// A backslash command's words, the line it is on, and its whole text (for `-r`).
    Meta {
        name: String,
        /// What follows the command's name, continuation lines joined.
        rest: String,
        line: usize,
    },
}

/// The scanner's failure: an unterminated quote or comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub line: usize,
    pub message: String,
}

/// Cuts `text` into SQL commands and backslash commands.
pub fn scan(text: &str) -> Result<Vec<Piece>, ScanError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut sql = String::new();
    let mut sql_line = 1;
    let mut line = 1;
    let mut i = 0;
    let mut depth = 0usize;
    // Where the current SQL text's bytes start (copied in runs, not byte by byte).
    let flush = |sql: &mut String, out: &mut Vec<Piece>, at: usize| {
        let t = sql.trim();
        if !t.is_empty() && !only_comments(t) {
            out.push(Piece::Sql {
                text: t.to_string(),
                line: at,
            });
        }
        sql.clear();
    };
    while i < b.len() {
        let c = b[i];
        if sql.trim().is_empty() {
            sql_line = line;
        }
        match c {
            b'\n' => {
                line += 1;
                sql.push('\n');
                i += 1;
            }
            b'\'' | b'"' => {
                let escapes = c == b'\'' && i > 0 && matches!(b[i - 1], b'E' | b'e') && {
                    // `E'...'` only where the E starts a word.
                    i < 2 || !is_word(b[i - 2])
                };
                let end = quoted(b, i, c, escapes).ok_or_else(|| ScanError {
                    line,
                    message: "unterminated quoted string".into(),
                })?;
                line += count_lines(&b[i..end]);
                sql.push_str(&text[i..end]);
                i = end;
            }
            b'$' if dollar_tag(b, i).is_some() && (i == 0 || !is_word(b[i - 1])) => {
                let tag = dollar_tag(b, i).unwrap_or(1);
                let close = &b[i..i + tag];
                let body = i + tag;
                let end = find(b, body, close).ok_or_else(|| ScanError {
                    line,
                    message: "unterminated dollar-quoted string".into(),
                })? + tag;
                line += count_lines(&b[i..end]);
                sql.push_str(&text[i..end]);
                i = end;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                // Kept only inside a command, as psql does (harmless to the server).
                if !sql.trim().is_empty() {
                    sql.push_str(&text[i..end]);
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = block_comment(b, i).ok_or_else(|| ScanError {
                    line,
                    message: "unterminated /* comment".into(),
                })?;
                line += count_lines(&b[i..end]);
                sql.push_str(&text[i..end]);
                i = end;
            }
            b'(' => {
                depth += 1;
                sql.push('(');
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                sql.push(')');
                i += 1;
            }
            b';' if depth == 0 => {
                // The `;` is not sent: pgbench sends the command without it.
                flush(&mut sql, &mut out, sql_line);
                i += 1;
            }
            b'\\' if b.get(i + 1) == Some(&b';') => {
                sql.push(';');
                i += 2;
            }
            b'\\' => {
                flush(&mut sql, &mut out, sql_line);
                depth = 0;
                let start_line = line;
                // The name: letters after the backslash.
                let name_end = b[i + 1..]
                    .iter()
                    .position(|x| !x.is_ascii_alphanumeric() && *x != b'_')
                    .map_or(b.len(), |p| i + 1 + p);
                let name = text[i + 1..name_end].to_string();
                // The rest of the line, with `\` + newline joining the next.
                let mut rest = String::new();
                let mut j = name_end;
                while j < b.len() && b[j] != b'\n' {
                    if b[j] == b'\\' && b.get(j + 1) == Some(&b'\n') {
                        rest.push(' ');
                        line += 1;
                        j += 2;
                        continue;
                    }
                    if b[j] == b'\\' && b.get(j + 1) == Some(&b'\r') && b.get(j + 2) == Some(&b'\n')
                    {
                        rest.push(' ');
                        line += 1;
                        j += 3;
                        continue;
                    }
                    let next = text[j..].chars().next().map_or(1, char::len_utf8);
                    rest.push_str(&text[j..j + next]);
                    j += next;
                }
                out.push(Piece::Meta {
                    name,
                    rest: rest.trim().to_string(),
                    line: start_line,
                });
                i = j;
            }
            _ => {
                let next = text[i..].chars().next().map_or(1, char::len_utf8);
                sql.push_str(&text[i..i + next]);
                i += next;
            }
        }
    }
    flush(&mut sql, &mut out, sql_line);
    Ok(out)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn count_lines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// Whether `t` holds nothing but comments and whitespace.
fn only_comments(t: &str) -> bool {
    let mut rest = t.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("--") {
            rest = r
                .split_once('\n')
                .map_or("", |(_, after)| after)
                .trim_start();
        } else if rest.starts_with("/*") {
            match block_comment(rest.as_bytes(), 0) {
                Some(end) => rest = rest[end..].trim_start(),
                None => return false,
            }
        } else {
            return false;
        }
    }
}

/// The end (exclusive) of the quoted text starting at `start` with `q`.
fn quoted(b: &[u8], start: usize, q: u8, escapes: bool) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The length of a dollar-quote tag (`$$`, `$tag$`) starting at `i`, if one does.
fn dollar_tag(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] >= 0x80) {
        if j == i + 1 && b[j].is_ascii_digit() {
            return None;
        }
        j += 1;
    }
    (b.get(j) == Some(&b'$')).then_some(j + 1 - i)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    (from..=b.len().checked_sub(needle.len())?).find(|&k| &b[k..k + needle.len()] == needle)
}

/// The end (exclusive) of a nested `/* ... */` comment starting at `start`.
fn block_comment(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0;
    let mut i = start;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str, line: usize) -> Piece {
        Piece::Sql {
            text: text.into(),
            line,
        }
    }

    fn meta(name: &str, rest: &str, line: usize) -> Piece {
        Piece::Meta {
            name: name.into(),
            rest: rest.into(),
            line,
        }
    }

    #[test]
    fn commands_end_at_semicolons_and_backslashes() {
        let s = "\\set aid random(1, 100000 * :scale)\nBEGIN;\nUPDATE t SET a = a + :delta\n  WHERE aid = :aid;\nSELECT 1 AS one \\gset p_\nEND;\n";
        assert_eq!(
            scan(s).unwrap(),
            vec![
                meta("set", "aid random(1, 100000 * :scale)", 1),
                sql("BEGIN", 2),
                sql("UPDATE t SET a = a + :delta\n  WHERE aid = :aid", 3),
                sql("SELECT 1 AS one", 5),
                meta("gset", "p_", 5),
                sql("END", 6),
            ]
        );
    }

    #[test]
    fn quotes_comments_and_compounds_hold_semicolons() {
        let s = "SELECT ';', \"a;b\", $x$ ; $x$, E'\\';' -- c;\n /* a /* ; */ b */ FROM t;\nSELECT 1 \\; SELECT 2;\nSELECT (1;2);";
        let p = scan(s).unwrap();
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[1], sql("SELECT 1 ; SELECT 2", 3));
        assert_eq!(p[2], sql("SELECT (1;2)", 4));
    }

    #[test]
    fn continuation_lines_and_comment_only_commands() {
        let p = scan("-- only a comment\n\\set x 1 + \\\n  2\n;\n  \n/* c */;").unwrap();
        assert_eq!(p, vec![meta("set", "x 1 +    2", 2)]);
    }

    #[test]
    fn unterminated_quotes_are_errors_with_their_line() {
        let e = scan("SELECT 1;\nSELECT 'abc").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(scan("SELECT $a$ x").is_err());
        assert!(scan("/* x").is_err());
        // `$1` is a parameter, not a dollar quote.
        assert_eq!(scan("SELECT $1, a$b$").unwrap().len(), 1);
    }
}
