//! STUB (replaced by the pgexpr branch): a script variable's value.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d}"),
        }
    }
}

impl Value {
    pub fn from_text(s: &str) -> Result<Value, String> {
        let t = s.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(d) = t.parse::<f64>() {
            return Ok(Value::Double(d));
        }
        Err(format!("malformed variable value {s:?}"))
    }
}
