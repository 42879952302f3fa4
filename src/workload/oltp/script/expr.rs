//! STUB (replaced by the pgexpr branch): pgbench's expressions.

use super::prng::Prng;
use super::value::Value;
use std::fmt;

pub trait Env {
    fn var(&mut self, name: &str) -> Result<Value, EvalError>;
    fn rng(&mut self) -> &mut Prng;
    fn default_seed(&self) -> i64;
    fn debug(&mut self, v: &Value);
}

#[derive(Debug, Clone)]
pub struct EvalError(pub String);
impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone)]
pub struct ExprError(pub String);
impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    Lit(i64),
    Var(String),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Eq(Box<Expr>, Box<Expr>),
    Random(Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let t = text.trim();
        if let Some(inner) = t.strip_prefix("random(").and_then(|r| r.strip_suffix(')')) {
            let (a, b) = inner.split_once(',').ok_or(ExprError("syntax error".into()))?;
            return Ok(Expr::Random(Box::new(Expr::parse(a)?), Box::new(Expr::parse(b)?)));
        }
        for (op, f) in [
            (" = ", Expr::Eq as fn(Box<Expr>, Box<Expr>) -> Expr),
            (" + ", Expr::Add),
            (" * ", Expr::Mul),
            (" / ", Expr::Div),
        ] {
            if let Some((a, b)) = t.split_once(op) {
                return Ok(f(Box::new(Expr::parse(a)?), Box::new(Expr::parse(b)?)));
            }
        }
        if let Some(v) = t.strip_prefix(':') {
            return Ok(Expr::Var(v.to_string()));
        }
        t.parse::<i64>()
            .map(Expr::Lit)
            .map_err(|_| ExprError("syntax error".into()))
    }

    pub fn eval(&self, env: &mut dyn Env) -> Result<Value, EvalError> {
        let int = |v: Value| match v {
            Value::Int(i) => Ok(i),
            other => Err(EvalError(format!("not an int: {other}"))),
        };
        Ok(match self {
            Expr::Lit(i) => Value::Int(*i),
            Expr::Var(v) => env.var(v)?,
            Expr::Add(a, b) => Value::Int(int(a.eval(env)?)? + int(b.eval(env)?)?),
            Expr::Mul(a, b) => Value::Int(int(a.eval(env)?)? * int(b.eval(env)?)?),
            Expr::Div(a, b) => {
                let d = int(b.eval(env)?)?;
                if d == 0 {
                    return Err(EvalError("division by zero".into()));
                }
                Value::Int(int(a.eval(env)?)? / d)
            }
            Expr::Eq(a, b) => Value::Bool(int(a.eval(env)?)? == int(b.eval(env)?)?),
            Expr::Random(a, b) => {
                let (lo, hi) = (int(a.eval(env)?)?, int(b.eval(env)?)?);
                Value::Int(env.rng().range(lo, hi))
            }
        })
    }
}
