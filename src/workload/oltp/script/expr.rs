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
//! Neither the parser nor the evaluator recurses: the parser keeps its pending
//! sub-expressions on a heap stack of frames (a precedence climber turned inside out),
//! the evaluator runs flat code, and the code is one flat slice to drop. So a hostile
//! expression meets two bounds, each a clear error and never a stack overflow: nesting
//! ([`MAX_DEPTH`] pending sub-expressions: parentheses, prefix operators, arguments, CASE
//! branches; pgbench's own parser stops near 10,000 with "memory exhausted") and length
//! ([`MAX_OPS`] instructions; pgbench takes any length but evaluates its tree recursively,
//! so a chain of a few hundred thousand `+` crashes it).

use super::eval::{self, Op};
pub use super::eval::{Env, EvalError};
use super::functions::{self, Arity, Bin, Func, MAX_ARGS};
use super::lex::{Lexer, Tok, Token};
use super::value::Value;
use std::collections::HashMap;
use std::fmt;

/// The most sub-expressions pending at once (parentheses, prefix operators, call
/// arguments, CASE parts, right operands); a left-leaning chain `1 + 1 + ...` keeps one.
pub const MAX_DEPTH: usize = 1000;

/// The most instructions an expression compiles to (about one per constant, variable,
/// operator and call).
pub const MAX_OPS: usize = 100_000;

/// The most instructions all `>` and `>=` together may move ([`Parser::swapped`]): a chain
/// like `a > b IS NULL > c IS NULL > ...` moves its whole left side at each `>`, which is
/// quadratic; refused past this.
const MAX_MOVES: usize = 4 * MAX_OPS;

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

/// An expression pgbench would refuse when it reads the script (or one beyond this
/// parser's bounds).
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
            index: HashMap::new(),
            frames: Vec::new(),
            moved: 0,
        };
        if let Err(e) = p.run() {
            return Err(p.lex.last_error(e));
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

/// Binding powers of the grammar's levels (see the module's table); `TOP` takes all.
const TOP: u8 = 0;
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
#[derive(Clone, Copy)]
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

/// A sub-expression being parsed: its operand and the operators binding tighter than
/// `min`, whose code starts at `start`; when it ends, `then` says what its parent does.
/// This is one call of a recursive precedence climber, kept on the heap.
struct Frame {
    min: u8,
    start: usize,
    then: Then,
}

/// What follows the end of a sub-expression.
enum Then {
    /// The whole expression: the text must end.
    Done,
    /// `( ... )`: a `)` must follow.
    Paren,
    /// A prefix operator's operand: the operator's instruction (none for `+`).
    Prefix(Option<Op>),
    /// A binary operator's right operand.
    Bin(Bin),
    /// AND's or OR's right side; the jump to point past it.
    Lazy { jump: usize },
    /// `>`/`>=`'s right side, whose code starts at the frame's start; the left side's
    /// code starts at `left`.
    Swapped { op: Bin, left: usize },
    /// A call's argument.
    Arg(Call),
    /// CASE's condition after WHEN.
    CaseWhen(Case),
    /// CASE's value after THEN; the jump past it when its condition fails.
    CaseValue { case: Case, skip: usize },
    /// CASE's value after ELSE.
    CaseElse(Case),
}

/// A function call whose arguments are being read.
struct Call {
    func: Func,
    arity: Arity,
    /// The name as pgbench's messages write it.
    name: &'static str,
    count: usize,
    /// Where the code of the 17th argument starts: pgbench evaluates 16, then refuses.
    cut: Option<usize>,
}

/// A CASE being read: the jumps from the end of each branch taken to the end of the CASE.
struct Case {
    ends: Vec<usize>,
}

struct Parser<'a> {
    lex: Lexer<'a>,
    /// The next token, once asked for.
    peeked: Option<Token>,
    code: Vec<Op>,
    names: Vec<Box<str>>,
    /// Each name's index in `names` (a hash, so 50,000 variables stay linear).
    index: HashMap<Box<str>, u32>,
    /// The pending sub-expressions, innermost last.
    frames: Vec<Frame>,
    /// Instructions moved so far by `>` and `>=`.
    moved: usize,
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

    fn next(&mut self) -> Result<Token, ParseError> {
        let t = self.peek()?;
        self.advance();
        Ok(t)
    }

    fn expect(&mut self, tok: Tok) -> Result<Token, ParseError> {
        let t = self.peek()?;
        if t.tok != tok {
            return Err(syntax_error(&t));
        }
        self.advance();
        Ok(t)
    }

    /// Where an error about the text read so far points: the token just peeked, or the
    /// end of what was read.
    fn here(&self) -> usize {
        self.peeked
            .map_or(self.lex.offset().saturating_sub(1), |t| t.error_offset())
    }

    /// Appends one instruction.
    fn emit(&mut self, op: Op) -> Result<usize, ParseError> {
        if self.code.len() >= MAX_OPS {
            return Err(ParseError::new(
                self.here(),
                format!("expression too long (over {MAX_OPS} operations)"),
            ));
        }
        self.code.push(op);
        Ok(self.code.len() - 1)
    }

    /// Points the jump at `at` to the end of the code so far.
    fn patch(&mut self, at: usize) {
        let skip = (self.code.len() - at - 1) as u32;
        if let Some(Op::And(s) | Op::Or(s) | Op::JumpUnless(s) | Op::Jump(s)) =
            self.code.get_mut(at)
        {
            *s = skip;
        }
    }

    fn var(&mut self, name: &str) -> Result<(), ParseError> {
        let index = match self.index.get(name) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.names.push(name.into());
                self.index.insert(name.into(), i);
                i
            }
        };
        self.emit(Op::Var(index))?;
        Ok(())
    }

    /// Opens a sub-expression taking the operators that bind tighter than `min`.
    fn open(&mut self, min: u8, then: Then) -> Result<(), ParseError> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(ParseError::new(
                self.here(),
                format!("expression too deeply nested (over {MAX_DEPTH} levels)"),
            ));
        }
        self.frames.push(Frame {
            min,
            start: self.code.len(),
            then,
        });
        Ok(())
    }

    /// The parse: alternately an operand for the innermost pending sub-expression
    /// ([`Parser::operand`]), then the operators after it ([`Parser::operators`]), until
    /// the outermost one ends.
    fn run(&mut self) -> Result<(), ParseError> {
        self.open(TOP, Then::Done)?;
        loop {
            if self.operand()? {
                continue;
            }
            loop {
                match self.operators()? {
                    Step::Operand => break,
                    Step::Operators => continue,
                    Step::Done => return Ok(()),
                }
            }
        }
    }

    /// Reads an operand's start: a constant, a variable, a call, a CASE, a parenthesis
    /// or a prefix operator. `true` when another operand must follow first (after a
    /// prefix operator, a `(`, a call's `(`, `CASE WHEN`).
    fn operand(&mut self) -> Result<bool, ParseError> {
        let t = self.next()?;
        match t.tok {
            Tok::LParen => self.open(TOP, Then::Paren)?,
            Tok::Plus => self.open(UNARY, Then::Prefix(None))?,
            Tok::Minus => {
                if self.peek()?.tok == Tok::MaxIntPlusOne {
                    // `-9223372036854775808`, one constant, as the grammar has it.
                    self.advance();
                    self.emit(Op::Const(Value::Int(i64::MIN)))?;
                    return Ok(false);
                }
                // pgbench's `0 - x`.
                self.open(UNARY, Then::Prefix(Some(Op::Neg)))?;
            }
            // pgbench's `-1 # x`, at the bitwise operators' precedence.
            Tok::Tilde => self.open(BIT, Then::Prefix(Some(Op::BitNot)))?,
            Tok::Not => self.open(NOT, Then::Prefix(Some(Op::Not)))?,
            Tok::Int(i) => {
                self.emit(Op::Const(Value::Int(i)))?;
                return Ok(false);
            }
            Tok::Double(d) => {
                self.emit(Op::Const(Value::Double(d)))?;
                return Ok(false);
            }
            Tok::True | Tok::False => {
                self.emit(Op::Const(Value::Bool(t.tok == Tok::True)))?;
                return Ok(false);
            }
            Tok::Null => {
                self.emit(Op::Const(Value::Null))?;
                return Ok(false);
            }
            Tok::Var => {
                let name = self.lex.text(&t).get(1..).unwrap_or("");
                self.var(name)?;
                return Ok(false);
            }
            Tok::Name => return self.call(&t),
            Tok::Case => {
                self.expect(Tok::When)?;
                self.open(TOP, Then::CaseWhen(Case { ends: Vec::new() }))?;
            }
            _ => return Err(syntax_error(&t)),
        }
        Ok(true)
    }

    /// A function's name just read: resolved at once, as pgbench does, then its `(`.
    fn call(&mut self, name: &Token) -> Result<bool, ParseError> {
        let text = self.lex.text(name);
        let Some((func, arity, canonical)) = functions::lookup(text) else {
            return Err(ParseError::new(
                name.error_offset(),
                format!("unexpected function name ({text})"),
            ));
        };
        self.expect(Tok::LParen)?;
        let call = Call {
            func,
            arity,
            name: canonical,
            count: 0,
            cut: None,
        };
        // An argument list may be empty, and may start with a comma (`abs(,5)`), as
        // pgbench's grammar (`elist: | expr | elist ',' expr`) allows.
        match self.peek()?.tok {
            Tok::RParen => {
                let close = self.next()?;
                self.end_call(call, &close)?;
                Ok(false)
            }
            Tok::Comma => {
                self.advance();
                self.argument(call)?;
                Ok(true)
            }
            _ => {
                self.argument(call)?;
                Ok(true)
            }
        }
    }

    fn argument(&mut self, mut call: Call) -> Result<(), ParseError> {
        if call.count == MAX_ARGS && call.cut.is_none() {
            call.cut = Some(self.code.len());
        }
        self.open(TOP, Then::Arg(call))
    }

    /// The call's `)` read: its arguments counted as pgbench counts them, its code.
    fn end_call(&mut self, call: Call, close: &Token) -> Result<(), ParseError> {
        let refuse = |what: &str| {
            Err(ParseError::new(
                close.error_offset(),
                format!("{what} ({})", call.name),
            ))
        };
        let count = call.count;
        match call.arity {
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
        if let Some(cut) = call.cut {
            // pgbench evaluates 16 arguments, then refuses the call.
            self.code.truncate(cut);
            self.emit(Op::TooManyArguments)?;
            return Ok(());
        }
        match (call.func, call.arity) {
            (Func::Mod, _) => {
                self.emit(Op::Bin(Bin::Mod))?;
            }
            (func, arity @ (Arity::ValueAndSeed | Arity::ValueSizeAndSeed)) => {
                let full = if arity == Arity::ValueAndSeed { 2 } else { 3 };
                // pgbench appends the variable `:default_seed` as the last argument.
                if count < full {
                    self.var(DEFAULT_SEED)?;
                }
                self.emit(Op::Call(func, full as u8))?;
            }
            (func, _) => {
                self.emit(Op::Call(func, count as u8))?;
            }
        }
        Ok(())
    }

    /// After an operand of the innermost sub-expression: takes the next operator if it
    /// binds tighter than the sub-expression's level and opens its right operand, or ends
    /// the sub-expression and does what follows it.
    fn operators(&mut self) -> Result<Step, ParseError> {
        let (min, start) = match self.frames.last() {
            Some(f) => (f.min, f.start),
            None => return Err(ParseError::new(0, "internal error: no frame".to_string())),
        };
        let t = self.peek()?;
        if let Some((level, what)) = infix(t.tok) {
            // Comparisons do not associate: bison refuses `a < b < c` at the second one.
            if level == min && level == CMP {
                return Err(syntax_error(&t));
            }
            if level > min {
                self.advance();
                return match what {
                    Infix::Lazy(is_and) => {
                        let jump = self.emit(if is_and { Op::And(0) } else { Op::Or(0) })?;
                        self.open(level, Then::Lazy { jump })?;
                        Ok(Step::Operand)
                    }
                    Infix::Op(op) => {
                        self.open(level, Then::Bin(op))?;
                        Ok(Step::Operand)
                    }
                    Infix::Swapped(op) => {
                        self.open(level, Then::Swapped { op, left: start })?;
                        Ok(Step::Operand)
                    }
                    Infix::IsNull => {
                        self.emit(Op::IsNull)?;
                        Ok(Step::Operators)
                    }
                    Infix::NotNull => {
                        self.emit(Op::IsNull)?;
                        self.emit(Op::Not)?;
                        Ok(Step::Operators)
                    }
                    Infix::Is => {
                        self.is_tail()?;
                        Ok(Step::Operators)
                    }
                };
            }
        }
        // The innermost sub-expression ends here.
        let Some(frame) = self.frames.pop() else {
            return Err(ParseError::new(0, "internal error: no frame".to_string()));
        };
        match frame.then {
            Then::Done => {
                let last = self.peek()?;
                if last.tok != Tok::Eof {
                    return Err(syntax_error(&last));
                }
                return Ok(Step::Done);
            }
            Then::Paren => {
                self.expect(Tok::RParen)?;
            }
            Then::Prefix(op) => {
                if let Some(op) = op {
                    self.emit(op)?;
                }
            }
            Then::Bin(op) => {
                self.emit(Op::Bin(op))?;
            }
            Then::Lazy { jump } => {
                self.emit(Op::Right)?;
                self.patch(jump);
            }
            Then::Swapped { op, left } => self.swapped(left, frame.start, op)?,
            Then::Arg(mut call) => {
                call.count += 1;
                let t = self.next()?;
                match t.tok {
                    Tok::Comma => {
                        self.argument(call)?;
                        return Ok(Step::Operand);
                    }
                    Tok::RParen => self.end_call(call, &t)?,
                    _ => return Err(syntax_error(&t)),
                }
            }
            Then::CaseWhen(case) => {
                self.expect(Tok::Then)?;
                let skip = self.emit(Op::JumpUnless(0))?;
                self.open(TOP, Then::CaseValue { case, skip })?;
                return Ok(Step::Operand);
            }
            Then::CaseValue { mut case, skip } => {
                case.ends.push(self.emit(Op::Jump(0))?);
                self.patch(skip);
                let t = self.next()?;
                match t.tok {
                    Tok::When => {
                        self.open(TOP, Then::CaseWhen(case))?;
                        return Ok(Step::Operand);
                    }
                    Tok::Else => {
                        self.open(TOP, Then::CaseElse(case))?;
                        return Ok(Step::Operand);
                    }
                    Tok::End => {
                        // No ELSE: NULL.
                        self.emit(Op::Const(Value::Null))?;
                        self.end_case(case);
                    }
                    _ => return Err(syntax_error(&t)),
                }
            }
            Then::CaseElse(case) => {
                self.expect(Tok::End)?;
                self.end_case(case);
            }
        }
        // The finished sub-expression is an operand of the one around it.
        Ok(Step::Operators)
    }

    fn end_case(&mut self, case: Case) {
        for at in case.ends {
            self.patch(at);
        }
    }

    /// `a > b` and `a >= b`, `a`'s code from `left` and `b`'s from `right`: pgbench parses
    /// them as `b < a` and `b <= a`, and so evaluates `b` first (which decides the order of
    /// random draws, `debug()` output and errors).
    fn swapped(&mut self, left: usize, right: usize, op: Bin) -> Result<(), ParseError> {
        self.moved += self.code.len() - left;
        if self.moved > MAX_MOVES {
            return Err(ParseError::new(
                self.here(),
                format!("expression too long (over {MAX_MOVES} operands moved by > and >=)"),
            ));
        }
        // Jumps are relative and stay inside their operand, so moving one whole is safe.
        self.code[left..].rotate_left(right - left);
        self.emit(Op::Bin(op))?;
        Ok(())
    }

    /// After `IS`: `[NOT] NULL`, `[NOT] TRUE`, `[NOT] FALSE`.
    fn is_tail(&mut self) -> Result<(), ParseError> {
        let mut t = self.next()?;
        let negated = t.tok == Tok::Not;
        if negated {
            t = self.next()?;
        }
        let test = match t.tok {
            Tok::Null => Op::IsNull,
            Tok::True => Op::IsBool(true),
            Tok::False => Op::IsBool(false),
            _ => return Err(syntax_error(&t)),
        };
        self.emit(test)?;
        if negated {
            self.emit(Op::Not)?;
        }
        Ok(())
    }
}

/// What the parse does next.
enum Step {
    /// Read an operand for the innermost sub-expression.
    Operand,
    /// Look at the operators after the innermost sub-expression's operand.
    Operators,
    /// The expression is whole.
    Done,
}
