//! A value of pgbench's expression language: NULL, a boolean, a 64-bit integer or a double.
//!
//! Two renderings, as pgbench has them: [`Value`]'s `Display` is a variable's text where a
//! script says `:name` (pgbench's `getVariable`: `NULL`, `true`/`false`, the integer, the
//! double as `%.15g`), and [`Value::debug_form`] is what `debug()` prints (`null`,
//! `boolean true`, `int 5`, `double 1.5`).
//!
//! [`Value::from_text`] types a text lazily as pgbench does for `-D` definitions and `\gset`
//! results (`makeVariableValue`): the text stays text until an expression reads it.

use super::cfmt;
use super::cnum::{self, NumError, is_c_space};
use super::eval::EvalError;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Value {
    /// The type's name in pgbench's messages ("cannot coerce boolean to int").
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// Truth as `\if` and `CASE WHEN` test it (pgbench's `valueTruth`): a non-zero number is
    /// true, zero and NULL are false. AND, OR and NOT are stricter: they take only booleans.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// What `debug()` prints after `debug(script=S,command=C): `.
    pub fn debug_form(&self) -> DebugForm {
        DebugForm(*self)
    }

    /// A variable's text as an expression reads it (pgbench's `makeVariableValue`):
    /// `null` in any case; a prefix of `true` or `yes`, or `on`, is true; a prefix of
    /// `false` or `no`, or `off` or `of`, is false; what looks like an integer must be one
    /// that fits 64 bits; anything else must be a double C's `strtod` reads whole.
    ///
    /// The error is pgbench's message, less the variable's name
    /// ([`Value::from_variable`] has it).
    pub fn from_text(text: &str) -> Result<Value, String> {
        classify(text).map_err(|bad| match bad {
            Bad::Empty => "empty value".to_string(),
            Bad::IntRange => format!("value \"{text}\" is out of range for type bigint"),
            Bad::IntSyntax => format!("invalid input syntax for type bigint: \"{text}\""),
            Bad::Malformed => format!("malformed value: \"{text}\""),
        })
    }

    /// [`Value::from_text`] for the variable `name`, with pgbench's own messages
    /// (`malformed variable "x" value: "abc"`).
    pub fn from_variable(name: &str, text: &str) -> Result<Value, EvalError> {
        classify(text).map_err(|bad| {
            let message = match bad {
                Bad::Empty => format!("variable \"{name}\" is empty"),
                Bad::IntRange => format!("value \"{text}\" is out of range for type bigint"),
                Bad::IntSyntax => format!("invalid input syntax for type bigint: \"{text}\""),
                Bad::Malformed => format!("malformed variable \"{name}\" value: \"{text}\""),
            };
            EvalError(message)
        })
    }
}

/// Why a text is no value.
enum Bad {
    /// pgbench refuses an empty text without a message (`makeVariableValue`).
    Empty,
    IntRange,
    IntSyntax,
    Malformed,
}

fn classify(text: &str) -> Result<Value, Bad> {
    if text.is_empty() {
        return Err(Bad::Empty);
    }
    if text.eq_ignore_ascii_case("null") {
        return Ok(Value::Null);
    }
    // A prefix (y, ye, t, tr, ...) but not "o", which could be on or off.
    if is_prefix_ci(text, "true") || is_prefix_ci(text, "yes") || text.eq_ignore_ascii_case("on") {
        return Ok(Value::Bool(true));
    }
    if is_prefix_ci(text, "false")
        || is_prefix_ci(text, "no")
        || text.eq_ignore_ascii_case("off")
        || text.eq_ignore_ascii_case("of")
    {
        return Ok(Value::Bool(false));
    }
    if looks_like_int(text) {
        return match cnum::strtoint64(text) {
            Ok(i) => Ok(Value::Int(i)),
            Err(NumError::Range) => Err(Bad::IntRange),
            Err(NumError::Syntax) => Err(Bad::IntSyntax),
        };
    }
    cnum::strtodouble(text)
        .map(Value::Double)
        .map_err(|_| Bad::Malformed)
}

/// `text` is a non-empty prefix of `word`, ignoring ASCII case.
fn is_prefix_ci(text: &str, word: &str) -> bool {
    text.len() <= word.len() && word.as_bytes()[..text.len()].eq_ignore_ascii_case(text.as_bytes())
}

/// pgbench's `is_an_int`: spaces, a sign, digits, nothing after. Its digit test lets a text
/// with no digit at all through ("-", " "), which `strtoint64` then refuses as bad syntax.
fn looks_like_int(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i == b.len()
}

/// A variable's text where a script says `:name` (pgbench's `getVariable`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Null => f.write_str("NULL"),
            Value::Bool(b) => f.write_str(if b { "true" } else { "false" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => cfmt::write_g15(f, d),
        }
    }
}

/// A value as `debug()` prints it.
#[derive(Debug, Clone, Copy)]
pub struct DebugForm(Value);

impl fmt::Display for DebugForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "boolean {b}"),
            Value::Int(i) => write!(f, "int {i}"),
            Value::Double(d) => {
                f.write_str("double ")?;
                cfmt::write_g15(f, d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> String {
        match Value::from_text(text) {
            Ok(v) => v.debug_form().to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    /// `-D v=TEXT` then `debug(:v)` in pgbench 15: what it printed for each text.
    #[test]
    fn lazy_typing_matches_pgbench() {
        let cases: &[(&str, &str)] = &[
            ("null", "null"),
            ("NULL", "null"),
            ("Null", "null"),
            ("t", "boolean true"),
            ("tr", "boolean true"),
            ("TRUE", "boolean true"),
            ("y", "boolean true"),
            ("YE", "boolean true"),
            ("yes", "boolean true"),
            ("on", "boolean true"),
            ("ON", "boolean true"),
            ("of", "boolean false"),
            ("OF", "boolean false"),
            ("off", "boolean false"),
            ("f", "boolean false"),
            ("fa", "boolean false"),
            ("FALSE", "boolean false"),
            ("n", "boolean false"),
            ("no", "boolean false"),
            ("0", "int 0"),
            ("1", "int 1"),
            ("+3", "int 3"),
            (" 12", "int 12"),
            (" -7", "int -7"),
            ("\t5", "int 5"),
            ("-9223372036854775808", "int -9223372036854775808"),
            ("-10.1", "double -10.1"),
            ("0x10", "double 16"),
            ("0X1p4", "double 16"),
            ("nan", "double NaN"),
            ("NaN", "double NaN"),
            ("nan(123)", "double NaN"),
            ("inf", "double Infinity"),
            ("infinity", "double Infinity"),
            ("-Infinity", "double -Infinity"),
            ("1.5e3", "double 1500"),
            (".5", "double 0.5"),
            ("5.", "double 5"),
        ];
        for (text, want) in cases {
            assert_eq!(typed(text), *want, "{text:?}");
        }
    }

    #[test]
    fn refusals_match_pgbench() {
        for malformed in [
            "truex", "yess", "o", "offf", "nu", "12 ", "infx", "1e400", "1e-400", "1e-310", "abc",
            "1e", "0x", "1_000", "١", "5\n", "1.5 ",
        ] {
            assert_eq!(
                Value::from_variable("v", malformed),
                Err(EvalError(format!(
                    "malformed variable \"v\" value: \"{malformed}\""
                ))),
                "{malformed:?}"
            );
        }
        assert_eq!(
            typed("99999999999999999999"),
            "error: value \"99999999999999999999\" is out of range for type bigint"
        );
        assert_eq!(
            typed("-9223372036854775809"),
            "error: value \"-9223372036854775809\" is out of range for type bigint"
        );
        for no_digits in ["-", "+", " "] {
            assert_eq!(
                typed(no_digits),
                format!("error: invalid input syntax for type bigint: \"{no_digits}\"")
            );
        }
        assert!(Value::from_text("").is_err());
    }

    #[test]
    fn renders_as_pgbench_substitutes() {
        assert_eq!(Value::Null.to_string(), "NULL");
        assert_eq!(Value::Bool(true).to_string(), "true");
        assert_eq!(Value::Bool(false).to_string(), "false");
        assert_eq!(Value::Int(5432).to_string(), "5432");
        assert_eq!(Value::Int(i64::MIN).to_string(), "-9223372036854775808");
        assert_eq!(Value::Double(-54.21e-2).to_string(), "-0.5421");
        assert_eq!(Value::Double(1e30).to_string(), "1e+30");
        assert_eq!(Value::Double(f64::NAN).to_string(), "NaN");
    }

    #[test]
    fn truth_is_valuetruth() {
        assert!(!Value::Null.truth());
        assert!(Value::Int(-1).truth());
        assert!(!Value::Int(0).truth());
        assert!(Value::Double(0.5).truth());
        assert!(!Value::Double(-0.0).truth());
        assert!(Value::Double(f64::NAN).truth());
        assert!(Value::Bool(true).truth());
    }
}
