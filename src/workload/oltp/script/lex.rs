//! The tokens of pgbench's expression language, as its scanner (`exprscan.l`) cuts them:
//! the longest match wins, and on a tie the earlier rule (a keyword before a name, the
//! constant `9223372036854775808` before an integer, an integer before a double).
//!
//! - Keywords, ignoring case, only as whole words: AND OR NOT IS ISNULL NOTNULL CASE WHEN
//!   THEN ELSE END TRUE FALSE NULL (`andx` is a name).
//! - A name is `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*`; a variable is `:` and one or more
//!   of those characters (`:1abc` is one).
//! - `123` is an integer (beyond 64 bits an error); `1.`, `.5`, `1e3` are doubles (beyond a
//!   double's normal range an error); `9223372036854775808` is its own token, an integer
//!   only after a unary minus.
//! - White space is `[ \t\r\f\v]` and a backslash ending a line; a newline ends the
//!   expression. There are no comments: `--5` is 5.

use super::cnum::{self, NumError};
use super::expr::ParseError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tok {
    Int(i64),
    /// `9223372036854775808`, valid only after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    /// `:name`; the name is the token's text after the colon.
    Var,
    /// A function's name.
    Name,
    Null,
    True,
    False,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    LParen,
    RParen,
    Comma,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Amp,
    Pipe,
    Hash,
    Tilde,
    Shl,
    Shr,
    /// The end of the text, or a newline.
    Eof,
}

/// A token and its bytes in the text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Where pgbench points at a token it refuses: its last byte (at the end, the end).
    pub fn error_offset(&self) -> usize {
        if self.tok == Tok::Eof {
            self.start
        } else {
            self.end.saturating_sub(1)
        }
    }
}

const KEYWORDS: &[(&str, Tok)] = &[
    ("and", Tok::And),
    ("or", Tok::Or),
    ("not", Tok::Not),
    ("is", Tok::Is),
    ("isnull", Tok::IsNull),
    ("notnull", Tok::NotNull),
    ("case", Tok::Case),
    ("when", Tok::When),
    ("then", Tok::Then),
    ("else", Tok::Else),
    ("end", Tok::End),
    ("true", Tok::True),
    ("false", Tok::False),
    ("null", Tok::Null),
];

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

/// Cuts the text into tokens, one at a time, on demand, as pgbench's parser asks for them
/// (which decides where an error points); after an error, [`Lexer::last_error`] reads on
/// as pgbench does.
pub struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, pos: 0 }
    }

    /// Where the next token will be looked for.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The text of a token.
    pub fn text(&self, t: &Token) -> &'a str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// The next token. On an error the lexer has moved past the bad token, so reading on
    /// finds the next one, as pgbench's reading to the end of the line after an error does
    /// ([`Lexer::last_error`]).
    pub fn next_token(&mut self) -> Result<Token, ParseError> {
        let b = self.text.as_bytes();
        // White space and continuations.
        loop {
            match b.get(self.pos) {
                Some(b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => self.pos += 1,
                Some(b'\\') if b.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                Some(b'\\') if b.get(self.pos + 1..self.pos + 3) == Some(b"\r\n") => self.pos += 3,
                _ => break,
            }
        }
        let start = self.pos;
        let Some(&c) = b.get(start) else {
            return Ok(self.token(Tok::Eof, start, start));
        };
        if c == b'\n' {
            // The command ends here; stay on the newline.
            return Ok(self.token(Tok::Eof, start, start));
        }
        let two = b.get(start..start + 2);
        let double_char = match two {
            Some(b"<<") => Some(Tok::Shl),
            Some(b">>") => Some(Tok::Shr),
            Some(b"<=") => Some(Tok::Le),
            Some(b">=") => Some(Tok::Ge),
            Some(b"<>") | Some(b"!=") => Some(Tok::Ne),
            _ => None,
        };
        if let Some(tok) = double_char {
            return Ok(self.token(tok, start, start + 2));
        }
        let single = match c {
            b'+' => Some(Tok::Plus),
            b'-' => Some(Tok::Minus),
            b'*' => Some(Tok::Star),
            b'/' => Some(Tok::Slash),
            b'%' => Some(Tok::Percent),
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b',' => Some(Tok::Comma),
            b'<' => Some(Tok::Lt),
            b'>' => Some(Tok::Gt),
            b'=' => Some(Tok::Eq),
            b'&' => Some(Tok::Amp),
            b'|' => Some(Tok::Pipe),
            b'#' => Some(Tok::Hash),
            b'~' => Some(Tok::Tilde),
            _ => None,
        };
        if let Some(tok) = single {
            return Ok(self.token(tok, start, start + 1));
        }
        if c == b':' {
            let end = self.run(start + 1, is_alnum);
            if end > start + 1 {
                return Ok(self.token(Tok::Var, start, end));
            }
        } else if c.is_ascii_digit()
            || (c == b'.' && b.get(start + 1).is_some_and(u8::is_ascii_digit))
        {
            return self.number(start);
        } else if is_alpha(c) {
            let end = self.run(start, is_alnum);
            let word = &b[start..end];
            let tok = KEYWORDS
                .iter()
                .find(|(k, _)| k.as_bytes().eq_ignore_ascii_case(word))
                .map_or(Tok::Name, |&(_, t)| t);
            return Ok(self.token(tok, start, end));
        }
        // A character no rule takes (ASCII: every byte from 0x80 starts a name).
        let shown = (c as char).to_string();
        // Past it, as flex is, so reading on finds the next error.
        self.pos = start + 1;
        Err(ParseError::new(
            start,
            format!("unexpected character ({shown})"),
        ))
    }

    /// The error pgbench reports once it has found `first`: before printing, it reads the
    /// rest of the line to show it, and a token it cannot read there is reported instead
    /// (and so on), so the last unreadable token of the line wins: in `a ! b`, pgbench
    /// reports the `!`, not the unknown function `a` it met first.
    pub fn last_error(&mut self, first: ParseError) -> ParseError {
        let mut error = first;
        loop {
            match self.next_token() {
                Ok(t) if t.tok == Tok::Eof => return error,
                Ok(_) => {}
                Err(e) => error = e,
            }
        }
    }

    /// An integer or a double at `start`.
    fn number(&mut self, start: usize) -> Result<Token, ParseError> {
        let b = self.text.as_bytes();
        let mut end = self.run(start, |c| c.is_ascii_digit());
        let mut is_double = false;
        if b.get(end) == Some(&b'.') {
            is_double = true;
            end = self.run(end + 1, |c| c.is_ascii_digit());
        }
        // An exponent only with its digits: "1e" is the integer 1 and the name "e".
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut j = end + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let digits_end = self.run(j, |c| c.is_ascii_digit());
            if digits_end > j {
                is_double = true;
                end = digits_end;
            }
        }
        let text = &self.text[start..end];
        let tok = if is_double {
            match cnum::strtodouble(text) {
                Ok(d) => Tok::Double(d),
                Err(_) => {
                    self.pos = end;
                    return Err(ParseError::new(
                        end - 1,
                        format!("double constant overflow ({text})"),
                    ));
                }
            }
        } else if text == "9223372036854775808" {
            Tok::MaxIntPlusOne
        } else {
            match cnum::strtoint64(text) {
                Ok(i) => Tok::Int(i),
                Err(NumError::Range | NumError::Syntax) => {
                    self.pos = end;
                    return Err(ParseError::new(
                        end - 1,
                        format!("bigint constant overflow ({text})"),
                    ));
                }
            }
        };
        Ok(self.token(tok, start, end))
    }

    /// The end of the run of bytes matching `f` from `from`.
    fn run(&self, from: usize, f: impl Fn(u8) -> bool) -> usize {
        let b = self.text.as_bytes();
        let mut i = from;
        while i < b.len() && f(b[i]) {
            i += 1;
        }
        i
    }

    fn token(&mut self, tok: Tok, start: usize, end: usize) -> Token {
        self.pos = end;
        Token { tok, start, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        let mut lx = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().unwrap();
            if t.tok == Tok::Eof {
                return out;
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn cuts_as_exprscan_does() {
        use Tok::*;
        assert_eq!(toks("1+2"), [Int(1), Plus, Int(2)]);
        assert_eq!(toks("1."), [Double(1.0)]);
        assert_eq!(toks(".5"), [Double(0.5)]);
        assert_eq!(
            toks("1e3 1E+3 2e-1"),
            [Double(1000.0), Double(1000.0), Double(0.2)]
        );
        assert_eq!(toks("1e"), [Int(1), Name]);
        assert_eq!(toks("1.5.3"), [Double(1.5), Double(0.3)]);
        assert_eq!(toks("9223372036854775808"), [MaxIntPlusOne]);
        assert_eq!(toks("9223372036854775807"), [Int(i64::MAX)]);
        assert_eq!(
            toks("AnD or NOT notnull IsNull"),
            [And, Or, Not, NotNull, IsNull]
        );
        assert_eq!(toks("andx isnullx"), [Name, Name]);
        assert_eq!(toks("<<>>=<=<>!=<>="), [Shl, Shr, Eq, Le, Ne, Ne, Ne, Eq]);
        assert_eq!(toks(":a :1abc :é"), [Var, Var, Var]);
        assert_eq!(toks("--5"), [Minus, Minus, Int(5)]);
        assert_eq!(toks("1 +\\\n 2"), [Int(1), Plus, Int(2)]);
        assert_eq!(toks("1 +\\\r\n 2\r"), [Int(1), Plus, Int(2)]);
        assert_eq!(toks("1\n+ 2"), [Int(1)]);
        assert_eq!(toks("héllo_1"), [Name]);
    }

    #[test]
    fn refusals_point_where_pgbench_points() {
        let err = |text: &str| {
            let mut lx = Lexer::new(text);
            loop {
                match lx.next_token() {
                    Ok(t) if t.tok == Tok::Eof => panic!("no error in {text:?}"),
                    Ok(_) => {}
                    Err(e) => return (e.offset, e.message),
                }
            }
        };
        assert_eq!(err("1 $ 2"), (2, "unexpected character ($)".to_string()));
        assert_eq!(err(":"), (0, "unexpected character (:)".to_string()));
        assert_eq!(err("a ! b"), (2, "unexpected character (!)".to_string()));
        assert_eq!(
            err("99999999999999999999"),
            (
                19,
                "bigint constant overflow (99999999999999999999)".to_string()
            )
        );
        assert_eq!(
            err("1 + 09223372036854775808"),
            (
                23,
                "bigint constant overflow (09223372036854775808)".to_string()
            )
        );
        assert_eq!(
            err("1.0E309"),
            (6, "double constant overflow (1.0E309)".to_string())
        );
        assert_eq!(
            err(".1E310"),
            (5, "double constant overflow (.1E310)".to_string())
        );
        assert_eq!(
            err("1e-320"),
            (5, "double constant overflow (1e-320)".to_string())
        );
    }
}
