//! pgbench 15's expressions (`\set`, `\if`): [`Expr::parse`] reads one as pgbench's
//! grammar (`exprparse.y`) does, and [`Expr::eval`] computes it as pgbench does.
//!
//! The grammar's precedence, loosest first, as bison resolves it:
//!
//! | level | operators | associativity |
//! |---|---|---|
//! | 1 | `OR` | left |
//! | 2 | `AND` | left |
//! | 3 | `NOT` (prefix) | right |
//! | 4 | `IS [NOT] NULL/TRUE/FALSE`, `ISNULL`, `NOTNULL` (postfix) | none |
//! | 5 | `= <> != < <= > >=` | none: `a < b < c` is a syntax error |
//! | 6 | `\| # & << >>`, and prefix `~` | left |
//! | 7 | `+ -` | left |
//! | 8 | `* / %` | left |
//! | 9 | prefix `+ -` | right |
//!
//! A prefix operator's operand takes every operator above its level, so `~1+2` is
//! `~(1+2)` and `NOT a = b` is `NOT (a = b)`; `-9223372036854775808` is one constant.
//! Function names are resolved here, and their arguments counted: `hash(x)` and
//! `permute(x, n)` take `:default_seed` as their seed. A call's argument list may start
//! with a comma (`abs(,5)` is `abs(5)`), as pgbench's grammar allows.
//!
//! Parsing emits postfix code for [`super::eval`]'s machine as it goes, with no tree: the
//! code of `a > b` is placed as pgbench's `b < a` evaluates, `b` first.
//!
//! Nesting is bounded ([`MAX_DEPTH`] levels of parentheses and prefix operators): a
//! hostile expression gets an error, not a stack overflow. pgbench's own parser stops
//! near 10,000 levels ("memory exhausted").

use super::eval::{self, Env, EvalError, Op};
use super::functions::{self, Arity, Bin, Func, MAX_ARGS};
use super::lex::{Lexer, Tok, Token};
use super::value::Value;
use std::fmt;

/// The deepest nesting of parentheses, prefix operators, calls and CASEs.
pub const MAX_DEPTH: usize = 1000;

/// The variable the seedless hashes and `permute` read.
const DEFAULT_SEED: &str = "default_seed";

/// A parsed expression: cheap to clone, shareable between clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    code: Box<[Op]>,
    /// The variables the code names, by index.
    names: Box<[Box<str>]>,
    /// The stack its evaluation needs.
    stack: usize,
}

/// An expression pgbench would refuse when it reads the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Where pgbench puts its caret: the byte offset in the expression's text of the last
    /// byte of the token it refused, or the text's length when the text ended too soon.
    pub offset: usize,
    /// pgbench's message: `syntax error`, `unexpected function name (foo)`,
    /// `unexpected number of arguments (abs)`, `bigint constant overflow (...)`, ...
    pub message: String,
}

impl ParseError {
    pub fn new(offset: usize, message: String) -> ParseError {
        ParseError { offset, message }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.offset + 1)
    }
}

impl std::error::Error for ParseError {}

impl Expr {
    /// Parses one expression: the text up to its end or its first newline.
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            lex: Lexer::new(text),
            peeked: None,
            code: Vec::new(),
            names: Vec::new(),
            depth: 0,
        };
        p.expr(0)?;
        let last = p.peek()?;
        if last.tok != Tok::Eof {
            return Err(syntax_error(&last));
        }
        let stack = stack_needed(&p.code).ok_or_else(|| {
            ParseError::new(0, "internal error: unbalanced expression code".to_string())
        })?;
        Ok(Expr {
            code: p.code.into_boxed_slice(),
            names: p.names.into_boxed_slice(),
            stack,
        })
    }

    /// Evaluates the expression for one client.
    pub fn eval(&self, env: &mut dyn Env) -> Result<Value, EvalError> {
        // Most expressions need a few values: those run on a stack array.
        const INLINE: usize = 16;
        if self.stack <= INLINE {
            let mut stack = [Value::Null; INLINE];
            eval::run(&self.code, &self.names, &mut stack, env)
        } else {
            let mut stack = vec![Value::Null; self.stack];
            eval::run(&self.code, &self.names, &mut stack, env)
        }
    }

    /// The variables the expression reads (`default_seed` included where a hash or
    /// `permute` has no seed), each once.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| &**n)
    }
}

/// The stack height the code reaches, or `None` if it does not leave exactly one value.
fn stack_needed(code: &[Op]) -> Option<usize> {
    let mut height: isize = 0;
    let mut most: isize = 0;
    for op in code {
        height += op.height_change();
        most = most.max(height);
        if height < 0 {
            return None;
        }
    }
    (height == 1).then_some(most as usize)
}

/// Binding powers of the grammar's levels (see the module's table).
const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const IS: u8 = 4;
const CMP: u8 = 5;
const BIT: u8 = 6;
const ADD: u8 = 7;
const MUL: u8 = 8;
const UNARY: u8 = 9;

/// What an operator after an operand does.
enum Infix {
    Lazy(bool),
    Op(Bin),
    /// `>` and `>=`: pgbench's `b < a` and `b <= a`.
    Swapped(Bin),
    Is,
    IsNull,
    NotNull,
}

fn infix(tok: Tok) -> Option<(u8, Infix)> {
    Some(match tok {
        Tok::Or => (OR, Infix::Lazy(false)),
        Tok::And => (AND, Infix::Lazy(true)),
        Tok::Is => (IS, Infix::Is),
        Tok::IsNull => (IS, Infix::IsNull),
        Tok::NotNull => (IS, Infix::NotNull),
        Tok::Lt => (CMP, Infix::Op(Bin::Lt)),
        Tok::Le => (CMP, Infix::Op(Bin::Le)),
        Tok::Gt => (CMP, Infix::Swapped(Bin::Lt)),
        Tok::Ge => (CMP, Infix::Swapped(Bin::Le)),
        Tok::Eq => (CMP, Infix::Op(Bin::Eq)),
        Tok::Ne => (CMP, Infix::Op(Bin::Ne)),
        Tok::Pipe => (BIT, Infix::Op(Bin::BitOr)),
        Tok::Hash => (BIT, Infix::Op(Bin::BitXor)),
        Tok::Amp => (BIT, Infix::Op(Bin::BitAnd)),
        Tok::Shl => (BIT, Infix::Op(Bin::Shl)),
        Tok::Shr => (BIT, Infix::Op(Bin::Shr)),
        Tok::Plus => (ADD, Infix::Op(Bin::Add)),
        Tok::Minus => (ADD, Infix::Op(Bin::Sub)),
        Tok::Star => (MUL, Infix::Op(Bin::Mul)),
        Tok::Slash => (MUL, Infix::Op(Bin::Div)),
        Tok::Percent => (MUL, Infix::Op(Bin::Mod)),
        _ => return None,
    })
}

fn syntax_error(t: &Token) -> ParseError {
    ParseError::new(t.error_offset(), "syntax error".to_string())
}

struct Parser<'a> {
    lex: Lexer<'a>,
    /// The next token, once asked for.
    peeked: Option<Token>,
    code: Vec<Op>,
    names: Vec<Box<str>>,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&mut self) -> Result<Token, ParseError> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = self.lex.next_token()?;
        self.peeked = Some(t);
        Ok(t)
    }

    /// Takes the token [`Parser::peek`] gave.
    fn advance(&mut self) {
        self.peeked = None;
    }

    fn expect(&mut self, tok: Tok) -> Result<Token, ParseError> {
        let t = self.peek()?;
        if t.tok != tok {
            return Err(syntax_error(&t));
        }
        self.advance();
        Ok(t)
    }

    fn emit(&mut self, op: Op) -> usize {
        self.code.push(op);
        self.code.len() - 1
    }

    /// Points the jump at `at` to the end of the code so far.
    fn patch(&mut self, at: usize) {
        let skip = (self.code.len() - at - 1) as u32;
        if let Some(op) = self.code.get_mut(at) {
            match op {
                Op::And(s) | Op::Or(s) | Op::JumpUnless(s) | Op::Jump(s) => *s = skip,
                _ => {}
            }
        }
    }

    fn var(&mut self, name: &str) {
        let index = match self.names.iter().position(|n| &**n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.into());
                self.names.len() - 1
            }
        };
        self.emit(Op::Var(index as u32));
    }

    /// An expression whose operators all bind tighter than `min`.
    fn expr(&mut self, min: u8) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.peek().map_or(0, |t| t.error_offset());
            return Err(ParseError::new(
                at,
                format!("expression too deeply nested (over {MAX_DEPTH} levels)"),
            ));
        }
        let start = self.code.len();
        self.prefix()?;
        loop {
            let t = self.peek()?;
            let Some((level, what)) = infix(t.tok) else {
                break;
            };
            if level < min {
                break;
            }
            if level == min {
                // Comparisons do not associate: bison refuses the second one.
                if level == CMP {
                    return Err(syntax_error(&t));
                }
                break;
            }
            self.advance();
            match what {
                Infix::Lazy(is_and) => {
                    let jump = self.emit(if is_and { Op::And(0) } else { Op::Or(0) });
                    self.expr(level)?;
                    self.emit(Op::Right);
                    self.patch(jump);
                }
                Infix::Op(b) => {
                    self.expr(level)?;
                    self.emit(Op::Bin(b));
                }
                Infix::Swapped(b) => {
                    let mid = self.code.len();
                    self.expr(level)?;
                    // The right operand's code first, as pgbench evaluates it.
                    self.code[start..].rotate_left(mid - start);
                    self.emit(Op::Bin(b));
                }
                Infix::IsNull => {
                    self.emit(Op::IsNull);
                }
                Infix::NotNull => {
                    self.emit(Op::IsNull);
                    self.emit(Op::Not);
                }
                Infix::Is => self.is_tail()?,
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// After `IS`: `[NOT] NULL`, `[NOT] TRUE`, `[NOT] FALSE`.
    fn is_tail(&mut self) -> Result<(), ParseError> {
        let mut t = self.peek()?;
        let negated = t.tok == Tok::Not;
        if negated {
            self.advance();
            t = self.peek()?;
        }
        let test = match t.tok {
            Tok::Null => Op::IsNull,
            Tok::True => Op::IsBool(true),
            Tok::False => Op::IsBool(false),
            _ => return Err(syntax_error(&t)),
        };
        self.advance();
        self.emit(test);
        if negated {
            self.emit(Op::Not);
        }
        Ok(())
    }

    /// An operand: a constant, a variable, a call, a CASE, a parenthesized expression, or
    /// a prefix operator and its operand.
    fn prefix(&mut self) -> Result<(), ParseError> {
        let t = self.peek()?;
        self.advance();
        match t.tok {
            Tok::LParen => {
                self.expr(0)?;
                self.expect(Tok::RParen)?;
            }
            Tok::Plus => self.expr(UNARY)?,
            Tok::Minus => {
                if self.peek()?.tok == Tok::MaxIntPlusOne {
                    self.advance();
                    self.emit(Op::Const(Value::Int(i64::MIN)));
                } else {
                    self.expr(UNARY)?;
                    self.emit(Op::Neg);
                }
            }
            Tok::Tilde => {
                self.expr(BIT)?;
                self.emit(Op::BitNot);
            }
            Tok::Not => {
                self.expr(NOT)?;
                self.emit(Op::Not);
            }
            Tok::Int(i) => {
                self.emit(Op::Const(Value::Int(i)));
            }
            Tok::Double(d) => {
                self.emit(Op::Const(Value::Double(d)));
            }
            Tok::True | Tok::False => {
                self.emit(Op::Const(Value::Bool(t.tok == Tok::True)));
            }
            Tok::Null => {
                self.emit(Op::Const(Value::Null));
            }
            Tok::Var => {
                let name = self.lex.text(&t).get(1..).unwrap_or("");
                self.var(name);
            }
            Tok::Name => self.call(&t)?,
            Tok::Case => self.case()?,
            _ => return Err(syntax_error(&t)),
        }
        Ok(())
    }

    /// A function call, its name just read.
    fn call(&mut self, name: &Token) -> Result<(), ParseError> {
        let text = self.lex.text(name);
        // pgbench resolves the name as soon as it has read it.
        let Some((func, arity, canonical)) = functions::lookup(text) else {
            return Err(ParseError::new(
                name.error_offset(),
                format!("unexpected function name ({text})"),
            ));
        };
        self.expect(Tok::LParen)?;
        let mut count = 0usize;
        // Where the code of the arguments past the 16th would start.
        let mut cut = None;
        let mut arg = |p: &mut Parser<'_>, count: &mut usize| -> Result<(), ParseError> {
            if *count == MAX_ARGS {
                cut.get_or_insert(p.code.len());
            }
            p.expr(0)?;
            *count += 1;
            Ok(())
        };
        // An argument list may be empty, and may start with a comma.
        let first = self.peek()?.tok;
        if first != Tok::RParen && first != Tok::Comma {
            arg(self, &mut count)?;
        }
        while self.peek()?.tok == Tok::Comma {
            self.advance();
            arg(self, &mut count)?;
        }
        let close = self.expect(Tok::RParen)?;
        let refuse = |what: &str| {
            Err(ParseError::new(
                close.error_offset(),
                format!("{what} ({canonical})"),
            ))
        };
        match arity {
            Arity::Exactly(n) if count != n => return refuse("unexpected number of arguments"),
            Arity::AtLeastOne if count == 0 => return refuse("at least one argument expected"),
            Arity::ValueAndSeed if !(1..=2).contains(&count) => {
                return refuse("unexpected number of arguments");
            }
            Arity::ValueSizeAndSeed if !(2..=3).contains(&count) => {
                return refuse("unexpected number of arguments");
            }
            _ => {}
        }
        if let Some(cut) = cut {
            // pgbench evaluates 16 arguments, then refuses the call.
            self.code.truncate(cut);
            self.emit(Op::TooManyArguments);
            return Ok(());
        }
        match (func, arity) {
            (Func::Mod, _) => {
                self.emit(Op::Bin(Bin::Mod));
            }
            (_, Arity::ValueAndSeed) | (_, Arity::ValueSizeAndSeed) => {
                let full = if arity == Arity::ValueAndSeed { 2 } else { 3 };
                if count < full {
                    self.var(DEFAULT_SEED);
                }
                self.emit(Op::Call(func, full as u8));
            }
            _ => {
                self.emit(Op::Call(func, count as u8));
            }
        }
        Ok(())
    }

    /// `CASE WHEN c THEN v [WHEN ...] [ELSE e] END`, CASE just read: the first true
    /// condition's value (truth as `\if` tests it), else `e`, else NULL.
    fn case(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.peek().map_or(0, |t| t.error_offset());
            return Err(ParseError::new(
                at,
                format!("expression too deeply nested (over {MAX_DEPTH} levels)"),
            ));
        }
        self.expect(Tok::When)?;
        let mut ends = Vec::new();
        loop {
            self.expr(0)?;
            self.expect(Tok::Then)?;
            let skip_branch = self.emit(Op::JumpUnless(0));
            self.expr(0)?;
            ends.push(self.emit(Op::Jump(0)));
            self.patch(skip_branch);
            let t = self.peek()?;
            self.advance();
            match t.tok {
                Tok::When => continue,
                Tok::Else => {
                    self.expr(0)?;
                    self.expect(Tok::End)?;
                    break;
                }
                Tok::End => {
                    self.emit(Op::Const(Value::Null));
                    break;
                }
                _ => return Err(syntax_error(&t)),
            }
        }
        for at in ends {
            self.patch(at);
        }
        self.depth -= 1;
        Ok(())
    }
}
