//! What pgbench 15's operators and functions compute (its `evalStandardFunc`), on values
//! already evaluated: the table of function names the parser resolves once, the
//! coercions, and each operation with pgbench's checks and error messages.
//!
//! The rules, as pgbench has them:
//! - `+ - * /` and the comparisons work on doubles if either side is a double, else on
//!   64-bit integers, where an overflow, a division by zero and `INT64_MIN / -1` are errors;
//!   integer `/` truncates toward zero, a double's division by zero is `Infinity` or `NaN`.
//! - `%`, `mod()`, the bitwise operators, `int()` and every integer argument take a double
//!   rounded half to even (C's `rint`), not truncated; `x % -1` is 0; shifts take the count
//!   modulo 64 as x86-64 does.
//! - NOT, AND and OR take booleans only ("cannot coerce int to boolean"); a number is never
//!   a boolean nor a boolean a number.
//! - A NULL argument makes the result NULL, except for `debug()` and `IS` (and AND, OR and
//!   CASE, which are lazy and live in the evaluator).

use super::eval::{Env, EvalError};
use super::hash;
use super::random::{self, MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM};
use super::value::Value;

/// pgbench's most arguments of one function call (`MAX_FARGS`).
pub const MAX_ARGS: usize = 16;

/// A binary operator (also `mod()`, which is `%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

/// A function a script can call by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Abs,
    Debug,
    Double,
    Exp,
    Ln,
    Sqrt,
    Pow,
    Pi,
    Int,
    Least,
    Greatest,
    Mod,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    /// `least` and `greatest`: one or more.
    AtLeastOne,
    /// The hashes: a value and an optional seed, `:default_seed` when left out.
    ValueAndSeed,
    /// `permute`: a value, a size and an optional seed, `:default_seed` when left out.
    ValueSizeAndSeed,
}

/// The functions by name, as pgbench lists them; a name is matched ignoring case and
/// named in messages as written here.
const FUNCTIONS: &[(&str, Func, Arity)] = &[
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("hash", Func::HashMurmur2, Arity::ValueAndSeed),
    ("hash_murmur2", Func::HashMurmur2, Arity::ValueAndSeed),
    ("hash_fnv1a", Func::HashFnv1a, Arity::ValueAndSeed),
    ("permute", Func::Permute, Arity::ValueSizeAndSeed),
];

/// A function by its name in any case: the function, its arity and its name as pgbench's
/// messages write it.
pub fn lookup(name: &str) -> Option<(Func, Arity, &'static str)> {
    FUNCTIONS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|&(n, f, a)| (f, a, n))
}

/// A value as an integer (`coerceToInt`): a double rounded half to even, if it fits.
pub fn to_int(v: Value) -> Result<i64, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            // FLOAT8_FITS_IN_INT64: [-2^63, 2^63); NaN fails both comparisons.
            if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                Ok(r as i64)
            } else {
                Err(EvalError::double_to_int(r))
            }
        }
        other => Err(coerce(other, "int")),
    }
}

/// A value as a double (`coerceToDouble`).
pub fn to_double(v: Value) -> Result<f64, EvalError> {
    match v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        other => Err(coerce(other, "double")),
    }
}

/// A value as a boolean (`coerceToBool`): only a boolean is one.
pub fn to_bool(v: Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(coerce(other, "boolean")),
    }
}

fn coerce(v: Value, to: &'static str) -> EvalError {
    EvalError::coerce(v.type_name(), to)
}

/// A binary operator on two evaluated operands.
pub fn binary(op: Bin, l: Value, r: Value) -> Result<Value, EvalError> {
    if matches!(l, Value::Null) || matches!(r, Value::Null) {
        return Ok(Value::Null);
    }
    match op {
        Bin::Add | Bin::Sub | Bin::Mul | Bin::Div | Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le
            if matches!(l, Value::Double(_)) || matches!(r, Value::Double(_)) =>
        {
            let (a, b) = (to_double(l)?, to_double(r)?);
            Ok(match op {
                Bin::Add => Value::Double(a + b),
                Bin::Sub => Value::Double(a - b),
                Bin::Mul => Value::Double(a * b),
                Bin::Div => Value::Double(a / b),
                Bin::Eq => Value::Bool(a == b),
                Bin::Ne => Value::Bool(a != b),
                Bin::Lt => Value::Bool(a < b),
                _ => Value::Bool(a <= b),
            })
        }
        Bin::Add
        | Bin::Sub
        | Bin::Mul
        | Bin::Div
        | Bin::Mod
        | Bin::Eq
        | Bin::Ne
        | Bin::Lt
        | Bin::Le => {
            let (a, b) = (to_int(l)?, to_int(r)?);
            int_op(op, a, b)
        }
        Bin::BitAnd | Bin::BitOr | Bin::BitXor | Bin::Shl | Bin::Shr => {
            let (a, b) = (to_int(l)?, to_int(r)?);
            Ok(Value::Int(match op {
                Bin::BitAnd => a & b,
                Bin::BitOr => a | b,
                Bin::BitXor => a ^ b,
                // C leaves shifts past 63 undefined; x86-64 takes the count modulo 64,
                // which is what pgbench computes (1 << 64 is 1, 8 >> -1 is 0).
                Bin::Shl => a.wrapping_shl(b as u32),
                _ => a.wrapping_shr(b as u32),
            }))
        }
    }
}

fn int_op(op: Bin, a: i64, b: i64) -> Result<Value, EvalError> {
    let out_of_range = EvalError::bigint_out_of_range;
    Ok(match op {
        Bin::Add => Value::Int(a.checked_add(b).ok_or_else(|| out_of_range("add"))?),
        Bin::Sub => Value::Int(a.checked_sub(b).ok_or_else(|| out_of_range("sub"))?),
        Bin::Mul => Value::Int(a.checked_mul(b).ok_or_else(|| out_of_range("mul"))?),
        Bin::Eq => Value::Bool(a == b),
        Bin::Ne => Value::Bool(a != b),
        Bin::Lt => Value::Bool(a < b),
        Bin::Le => Value::Bool(a <= b),
        Bin::Div | Bin::Mod => {
            if b == 0 {
                return Err(EvalError::division_by_zero());
            }
            if b == -1 {
                // INT64_MIN / -1 overflows; anything % -1 is 0.
                return if op == Bin::Div {
                    a.checked_neg()
                        .map(Value::Int)
                        .ok_or_else(|| out_of_range("div"))
                } else {
                    Ok(Value::Int(0))
                };
            }
            Value::Int(if op == Bin::Div { a / b } else { a % b })
        }
        _ => return Err(EvalError::internal("not an integer operator")),
    })
}

/// `-x`, which pgbench computes as `0 - x` (so `-0.0` is `0`, and `-INT64_MIN` overflows).
pub fn neg(v: Value) -> Result<Value, EvalError> {
    binary(Bin::Sub, Value::Int(0), v)
}

/// `~x`, which pgbench computes as `-1 # x` (XOR), at the bitwise operators' precedence.
pub fn bit_not(v: Value) -> Result<Value, EvalError> {
    binary(Bin::BitXor, Value::Int(-1), v)
}

/// `NOT x`.
pub fn not(v: Value) -> Result<Value, EvalError> {
    match v {
        Value::Null => Ok(Value::Null),
        other => Ok(Value::Bool(!to_bool(other)?)),
    }
}

/// A function on its evaluated arguments (the parser has checked their number).
pub fn call(f: Func, args: &[Value], env: &mut dyn Env) -> Result<Value, EvalError> {
    if args.len() > MAX_ARGS {
        return Err(EvalError::too_many_arguments());
    }
    let arg = |i: usize| {
        args.get(i)
            .copied()
            .ok_or_else(|| EvalError::internal("missing argument"))
    };
    if f == Func::Debug {
        let v = arg(0)?;
        env.debug(&v);
        return Ok(v);
    }
    if args.iter().any(|a| matches!(a, Value::Null)) {
        return Ok(Value::Null);
    }
    Ok(match f {
        // Printed above, before the NULL rule, which it is exempt from.
        Func::Debug => arg(0)?,
        Func::Pi => Value::Double(std::f64::consts::PI),
        Func::Abs => match arg(0)? {
            Value::Int(i) => Value::Int(if i < 0 { i.wrapping_neg() } else { i }),
            Value::Double(d) => Value::Double(if d < 0.0 { -d } else { d }),
            // pgbench reads a boolean's union as a double: true's byte 1 is the smallest
            // subnormal, and that is what it prints (abs(true) = 4.94065645841247e-324).
            Value::Bool(b) => Value::Double(f64::from_bits(u64::from(b))),
            Value::Null => Value::Null,
        },
        Func::Double => Value::Double(to_double(arg(0)?)?),
        Func::Sqrt => Value::Double(to_double(arg(0)?)?.sqrt()),
        Func::Ln => Value::Double(to_double(arg(0)?)?.ln()),
        Func::Exp => Value::Double(to_double(arg(0)?)?.exp()),
        Func::Int => Value::Int(to_int(arg(0)?)?),
        Func::Pow => Value::Double(to_double(arg(0)?)?.powf(to_double(arg(1)?)?)),
        Func::Mod => binary(Bin::Mod, arg(0)?, arg(1)?)?,
        Func::Least | Func::Greatest => extremum(f == Func::Least, args)?,
        Func::Random | Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            Value::Int(draw(f, args, env)?)
        }
        Func::HashMurmur2 => Value::Int(hash::murmur2(to_int(arg(0)?)?, to_int(arg(1)?)?)),
        Func::HashFnv1a => Value::Int(hash::fnv1a(to_int(arg(0)?)?, to_int(arg(1)?)?)),
        Func::Permute => {
            let (val, size, seed) = (to_int(arg(0)?)?, to_int(arg(1)?)?, to_int(arg(2)?)?);
            if size <= 0 {
                return Err(EvalError::permute_size());
            }
            Value::Int(random::permute(val, size, seed))
        }
    })
}

/// `least` and `greatest`: doubles if any argument is one, else integers, compared as C's
/// `Min` and `Max` macros do (so a NaN wins only as the later argument).
fn extremum(least: bool, args: &[Value]) -> Result<Value, EvalError> {
    let (first, rest) = args
        .split_first()
        .ok_or_else(|| EvalError::internal("no argument"))?;
    if args.iter().any(|a| matches!(a, Value::Double(_))) {
        let mut ext = to_double(*first)?;
        for a in rest {
            let d = to_double(*a)?;
            ext = if least {
                if ext < d { ext } else { d }
            } else if ext > d {
                ext
            } else {
                d
            };
        }
        Ok(Value::Double(ext))
    } else {
        let mut ext = to_int(*first)?;
        for a in rest {
            let i = to_int(*a)?;
            ext = if least { ext.min(i) } else { ext.max(i) };
        }
        Ok(Value::Int(ext))
    }
}

/// The random functions: bounds checked first, then the parameter.
fn draw(f: Func, args: &[Value], env: &mut dyn Env) -> Result<i64, EvalError> {
    let bound = |i: usize| {
        args.get(i)
            .copied()
            .ok_or_else(|| EvalError::internal("missing bound"))
            .and_then(to_int)
    };
    let (min, max) = (bound(0)?, bound(1)?);
    if min > max {
        return Err(EvalError::empty_range());
    }
    // max - min + 1 must fit 64 bits.
    if max
        .checked_sub(min)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return Err(EvalError::range_too_large());
    }
    if f == Func::Random {
        return Ok(random::uniform(env.rng(), min, max));
    }
    let param = to_double(
        args.get(2)
            .copied()
            .ok_or_else(|| EvalError::internal("missing parameter"))?,
    )?;
    match f {
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return Err(EvalError::gaussian_parameter(param));
            }
            Ok(random::gaussian(env.rng(), min, max, param))
        }
        Func::RandomZipfian => {
            // pgbench's test lets a NaN through and then never returns; refused here.
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return Err(EvalError::zipfian_parameter(param));
            }
            Ok(random::zipfian(env.rng(), min, max, param))
        }
        _ => {
            if param <= 0.0 {
                return Err(EvalError::exponential_parameter(param));
            }
            Ok(random::exponential(env.rng(), min, max, param))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_ignoring_case() {
        assert_eq!(lookup("Ln").map(|l| l.0), Some(Func::Ln));
        assert_eq!(
            lookup("POWER"),
            Some((Func::Pow, Arity::Exactly(2), "power"))
        );
        assert_eq!(lookup("hash").map(|l| l.0), Some(Func::HashMurmur2));
        assert_eq!(
            lookup("permute").map(|l| l.1),
            Some(Arity::ValueSizeAndSeed)
        );
        assert_eq!(lookup("foo"), None);
        assert_eq!(lookup("!and"), None);
    }

    #[test]
    fn coercions() {
        assert_eq!(to_int(Value::Double(7.5)), Ok(8));
        assert_eq!(to_int(Value::Double(8.5)), Ok(8));
        assert_eq!(to_int(Value::Double(-0.5)), Ok(0));
        assert_eq!(to_int(Value::Double(-9223372036854775808.0)), Ok(i64::MIN));
        assert_eq!(
            to_int(Value::Double(9223372036854775807.0)).map_err(|e| e.to_string()),
            Err("double to int overflow for 9223372036854775808.000000".to_string())
        );
        assert!(to_int(Value::Double(f64::NAN)).is_err());
        assert_eq!(
            to_int(Value::Bool(true)).map_err(|e| e.to_string()),
            Err("cannot coerce boolean to int".to_string())
        );
        assert_eq!(
            to_bool(Value::Int(5)).map_err(|e| e.to_string()),
            Err("cannot coerce int to boolean".to_string())
        );
        assert_eq!(
            to_double(Value::Bool(false)).map_err(|e| e.to_string()),
            Err("cannot coerce boolean to double".to_string())
        );
    }
}
