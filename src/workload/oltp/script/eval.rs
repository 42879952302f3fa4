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
use super::random::{MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM};
use super::value::Value;

/// What an expression reads from the client running it.
pub trait Env {
    /// A variable's value (`:name`), typed as pgbench types it (see
    /// [`Value::from_variable`] for a variable held as text), or an error such as
    /// [`EvalError::undefined_variable`]'s. The one-argument hashes and the two-argument
    /// `permute` read the variable `default_seed` through this, as pgbench does (so
    /// `-D default_seed=N` and `\set default_seed N` take effect).
    fn var(&mut self, name: &str) -> Result<Value, EvalError>;
    /// The client's generator for the random functions (pgbench's `cs_func_rs`).
    fn rng(&mut self) -> &mut Prng;
    /// The `:default_seed` pgbench drew for the run ([`super::prng::Seeds::default_seed`]):
    /// what the environment presets the variable `default_seed` to. The evaluator itself
    /// reads the variable, as pgbench does.
    fn default_seed(&self) -> i64;
    /// `debug(v)` was evaluated: pgbench prints `debug(script=S,command=C): ` and
    /// [`Value::debug_form`] on stderr.
    fn debug(&mut self, v: &Value);
}

/// A run-time error in an expression, with pgbench's message (`division by zero`,
/// `cannot coerce int to boolean`, ...); in pgbench each ends the client's run
/// ("evaluation of meta-command failed"). A plain message, so an [`Env`] can turn its own
/// `Result<_, String>` into one with `.map_err(EvalError)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// pgbench's messages, one constructor each.
impl EvalError {
    pub fn undefined_variable(name: &str) -> EvalError {
        EvalError(format!("undefined variable \"{name}\""))
    }
    pub fn coerce(from: &str, to: &str) -> EvalError {
        EvalError(format!("cannot coerce {from} to {to}"))
    }
    /// `double to int overflow for %f`, the double already rounded.
    pub fn double_to_int(d: f64) -> EvalError {
        EvalError(format!("double to int overflow for {}", cfmt::f6(d)))
    }
    pub fn division_by_zero() -> EvalError {
        EvalError("division by zero".to_string())
    }
    /// `bigint add out of range` (or sub, mul, div).
    pub fn bigint_out_of_range(op: &str) -> EvalError {
        EvalError(format!("bigint {op} out of range"))
    }
    pub fn empty_range() -> EvalError {
        EvalError("empty range given to random".to_string())
    }
    pub fn range_too_large() -> EvalError {
        EvalError("random range is too large".to_string())
    }
    pub fn gaussian_parameter(p: f64) -> EvalError {
        EvalError(format!(
            "gaussian parameter must be at least {} (not {})",
            cfmt::f6(MIN_GAUSSIAN_PARAM),
            cfmt::f6(p)
        ))
    }
    pub fn exponential_parameter(p: f64) -> EvalError {
        EvalError(format!(
            "exponential parameter must be greater than zero (not {})",
            cfmt::f6(p)
        ))
    }
    pub fn zipfian_parameter(p: f64) -> EvalError {
        EvalError(format!(
            "zipfian parameter must be in range [{}, {}] (not {})",
            cfmt::fixed(MIN_ZIPFIAN_PARAM, 3),
            cfmt::fixed(MAX_ZIPFIAN_PARAM, 0),
            cfmt::f6(p)
        ))
    }
    pub fn permute_size() -> EvalError {
        EvalError("permute size parameter must be greater than zero".to_string())
    }
    pub fn too_many_arguments() -> EvalError {
        EvalError(format!(
            "too many function arguments, maximum is {MAX_ARGS}"
        ))
    }
    /// A fault of the parser's code, never of the script.
    pub fn internal(what: &str) -> EvalError {
        EvalError(format!("internal error in expression evaluation: {what}"))
    }
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
    let overflow = || EvalError::internal("stack overflow");
    let underflow = || EvalError::internal("stack underflow");
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
                    .ok_or_else(|| EvalError::internal("unknown variable index"))?;
                let v = env.var(name)?;
                *stack.get_mut(sp).ok_or_else(overflow)? = v;
                sp += 1;
            }
            Op::Neg | Op::BitNot | Op::Not | Op::IsNull | Op::IsBool(_) | Op::Right => {
                let top = stack.get_mut(sp.wrapping_sub(1)).ok_or_else(underflow)?;
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
                let top = stack.get_mut(sp.wrapping_sub(1)).ok_or_else(underflow)?;
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
            Op::TooManyArguments => return Err(EvalError::too_many_arguments()),
        }
    }
    if sp != 1 {
        return Err(EvalError::internal("unbalanced stack"));
    }
    Ok(stack[0])
}
