//! Running a parsed expression: a small stack machine over the postfix code the parser
//! emits, with the script's variables, random generator and `debug()` output behind
//! [`Env`], and pgbench's run-time errors as [`EvalError`].
//!
//! Postfix code rather than a tree walk: a long chain (`1 + 1 + ... + 1`, which pgbench
//! takes) is as deep as it is long, and a recursive evaluation of it would overflow the
//! stack; here no evaluation recurses, and one of a few values needs no allocation.
//!
//! Evaluation order is pgbench's: operands left to right, except `a > b` and `a >= b`, which
//! pgbench rewrites as `b < a` and `b <= a` and so evaluates `b` first (the parser places
//! the code so). AND and OR evaluate their right side only when the left does not decide,
//! CASE only the branch taken; every other function evaluates all its arguments, then
//! gives NULL if any is NULL.

use super::cfmt;
use super::functions::{self, Bin, Func, MAX_ARGS};
use super::prng::Prng;
use super::value::Value;

/// What an expression reads from the client running it.
pub trait Env {
    /// A variable's value (`:name`), typed as pgbench types it (see
    /// [`Value::from_variable`] for a variable held as text), or
    /// [`EvalError::UndefinedVariable`]. The one-argument hashes and the two-argument
    /// `permute` read `default_seed` through this, as pgbench does.
    fn var(&mut self, name: &str) -> Result<Value, EvalError>;
    /// The client's generator for the random functions (pgbench's `cs_func_rs`).
    fn rng(&mut self) -> &mut Prng;
    /// `debug(v)` was evaluated: pgbench prints `debug(script=S,command=C): ` and
    /// [`Value::debug_form`] on stderr.
    fn debug(&mut self, v: &Value);
}

/// pgbench's run-time errors in an expression; each ends the client's run in pgbench
/// ("evaluation of meta-command failed").
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("undefined variable \"{0}\"")]
    UndefinedVariable(String),
    /// A variable's text that is no value ([`Value::from_variable`]'s message).
    #[error("{0}")]
    Variable(String),
    #[error("cannot coerce {from} to {to}")]
    Coerce {
        from: &'static str,
        to: &'static str,
    },
    #[error("double to int overflow for {}", cfmt::f6(*.0))]
    DoubleToInt(f64),
    #[error("division by zero")]
    DivisionByZero,
    /// `bigint add out of range` (or sub, mul, div).
    #[error("bigint {0} out of range")]
    BigintOutOfRange(&'static str),
    #[error("empty range given to random")]
    EmptyRange,
    #[error("random range is too large")]
    RangeTooLarge,
    #[error("gaussian parameter must be at least 2.000000 (not {})", cfmt::f6(*.0))]
    GaussianParameter(f64),
    #[error("exponential parameter must be greater than zero (not {})", cfmt::f6(*.0))]
    ExponentialParameter(f64),
    #[error("zipfian parameter must be in range [1.001, 1000] (not {})", cfmt::f6(*.0))]
    ZipfianParameter(f64),
    #[error("permute size parameter must be greater than zero")]
    PermuteSize,
    #[error("too many function arguments, maximum is {MAX_ARGS}")]
    TooManyArguments,
    /// A fault of the parser's code, never of the script.
    #[error("internal error in expression evaluation: {0}")]
    Internal(&'static str),
}

/// One instruction. Jumps are relative (ops skipped after this one), so the parser can
/// move a finished operand's code as a block.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Const(Value),
    /// A variable, by its index in the expression's names.
    Var(u32),
    Neg,
    BitNot,
    Not,
    IsNull,
    /// `IS TRUE` / `IS FALSE`: the same type and value (pgbench's `!is`, never NULL).
    IsBool(bool),
    Bin(Bin),
    /// A function of the top `n` values.
    Call(Func, u8),
    /// AND's left side is on top: NULL or false decides (skip the right side), true is
    /// dropped and the right side runs.
    And(u32),
    /// OR's, likewise: NULL or true decides.
    Or(u32),
    /// AND's or OR's right side, on top: a boolean, or NULL.
    Right,
    /// CASE: pop a condition; when it is not true, skip its branch.
    JumpUnless(u32),
    Jump(u32),
    /// pgbench evaluates a call's first 16 arguments and then refuses the 17th.
    TooManyArguments,
}

impl Op {
    /// How the op changes the stack's height, counted along the code as written (a `Jump`
    /// ends a CASE branch: the next op in the code is reached from elsewhere, one lower).
    pub fn height_change(&self) -> isize {
        match self {
            Op::Const(_) | Op::Var(_) => 1,
            Op::Neg | Op::BitNot | Op::Not | Op::IsNull | Op::IsBool(_) | Op::Right => 0,
            Op::Bin(_) | Op::And(_) | Op::Or(_) | Op::JumpUnless(_) | Op::Jump(_) => -1,
            Op::Call(_, n) => 1 - *n as isize,
            Op::TooManyArguments => 1 - MAX_ARGS as isize,
        }
    }
}

/// Runs `code` on `stack` (at least as tall as the code needs) and gives the value left.
pub fn run(
    code: &[Op],
    names: &[Box<str>],
    stack: &mut [Value],
    env: &mut dyn Env,
) -> Result<Value, EvalError> {
    let mut sp = 0usize;
    let mut pc = 0usize;
    let overflow = || EvalError::Internal("stack overflow");
    let underflow = || EvalError::Internal("stack underflow");
    while let Some(op) = code.get(pc) {
        pc += 1;
        match op {
            Op::Const(v) => {
                *stack.get_mut(sp).ok_or_else(overflow)? = *v;
                sp += 1;
            }
            Op::Var(i) => {
                let name = names
                    .get(*i as usize)
                    .ok_or(EvalError::Internal("unknown variable index"))?;
                let v = env.var(name)?;
                *stack.get_mut(sp).ok_or_else(overflow)? = v;
                sp += 1;
            }
            Op::Neg | Op::BitNot | Op::Not | Op::IsNull | Op::IsBool(_) | Op::Right => {
                let top = stack
                    .get_mut(sp.wrapping_sub(1))
                    .ok_or_else(underflow)?;
                *top = match op {
                    Op::Neg => functions::neg(*top)?,
                    Op::BitNot => functions::bit_not(*top)?,
                    Op::Not => functions::not(*top)?,
                    Op::IsNull => Value::Bool(matches!(top, Value::Null)),
                    Op::IsBool(b) => Value::Bool(*top == Value::Bool(*b)),
                    _ => match *top {
                        Value::Null => Value::Null,
                        v => Value::Bool(functions::to_bool(v)?),
                    },
                };
            }
            Op::Bin(b) => {
                if sp < 2 {
                    return Err(underflow());
                }
                sp -= 1;
                let r = stack[sp];
                stack[sp - 1] = functions::binary(*b, stack[sp - 1], r)?;
            }
            Op::Call(f, n) => {
                let n = *n as usize;
                let base = sp.checked_sub(n).ok_or_else(underflow)?;
                let v = functions::call(*f, &stack[base..sp], env)?;
                sp = base;
                *stack.get_mut(sp).ok_or_else(overflow)? = v;
                sp += 1;
            }
            Op::And(skip) | Op::Or(skip) => {
                let is_and = matches!(op, Op::And(_));
                let top = stack
                    .get_mut(sp.wrapping_sub(1))
                    .ok_or_else(underflow)?;
                match *top {
                    // NULL decides both: NULL AND x and NULL OR x are NULL.
                    Value::Null => pc += *skip as usize,
                    v => {
                        let b = functions::to_bool(v)?;
                        if b != is_and {
                            *top = Value::Bool(b);
                            pc += *skip as usize;
                        } else {
                            sp -= 1;
                        }
                    }
                }
            }
            Op::JumpUnless(skip) => {
                sp = sp.checked_sub(1).ok_or_else(underflow)?;
                if !stack[sp].truth() {
                    pc += *skip as usize;
                }
            }
            Op::Jump(skip) => pc += *skip as usize,
            Op::TooManyArguments => return Err(EvalError::TooManyArguments),
        }
    }
    if sp != 1 {
        return Err(EvalError::Internal("unbalanced stack"));
    }
    Ok(stack[0])
}
