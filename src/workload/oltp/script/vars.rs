//! A client's variables, as pgbench keeps them: a value set by `\set` is typed; one given
//! as text (`-D NAME=VALUE`, a column stored by `\gset`) stays text until an expression
//! uses it, when it is typed once as pgbench types it (an integer, a double, a boolean or
//! NULL; anything else is an error in that expression).

use super::value::Value;
use std::collections::HashMap;

#[derive(Debug, Clone)]
enum Var {
    Text(String),
    Typed(Value),
    /// Text already typed: substituted as its text, used as its value.
    Both(String, Value),
}

/// The variables of one client.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    map: HashMap<String, Var>,
}

impl Vars {
    pub fn set(&mut self, name: &str, v: Value) {
        match self.map.get_mut(name) {
            Some(slot) => *slot = Var::Typed(v),
            None => {
                self.map.insert(name.to_string(), Var::Typed(v));
            }
        }
    }

    pub fn set_text(&mut self, name: &str, text: String) {
        match self.map.get_mut(name) {
            Some(slot) => *slot = Var::Text(text),
            None => {
                self.map.insert(name.to_string(), Var::Text(text));
            }
        }
    }

    /// The value for an expression: typed text once (an error names the variable).
    pub fn value(&mut self, name: &str) -> Result<Value, String> {
        let slot = self
            .map
            .get_mut(name)
            .ok_or_else(|| format!("undefined variable {name:?}"))?;
        match slot {
            Var::Typed(v) | Var::Both(_, v) => Ok(*v),
            Var::Text(t) => {
                let v = Value::from_text(t).map_err(|e| format!("variable {name:?}: {e}"))?;
                *slot = Var::Both(std::mem::take(t), v);
                Ok(v)
            }
        }
    }

    /// What the variable holds, for a statement or a shell command: its text, or its
    /// typed value; None when it is not defined.
    pub fn get(&self, name: &str) -> Option<Held<'_>> {
        self.map.get(name).map(|v| match v {
            Var::Text(t) | Var::Both(t, _) => Held::Text(t),
            Var::Typed(v) => Held::Value(*v),
        })
    }
}

/// A variable as a statement takes it.
#[derive(Debug, Clone, Copy)]
pub enum Held<'a> {
    Text(&'a str),
    Value(Value),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_typed_when_an_expression_uses_it() {
        let mut v = Vars::default();
        v.set_text("a", "42".into());
        assert!(matches!(v.get("a"), Some(Held::Text("42"))));
        assert_eq!(v.value("a"), Ok(Value::Int(42)));
        // Still substituted as written.
        assert!(matches!(v.get("a"), Some(Held::Text("42"))));
        v.set("a", Value::Int(7));
        assert!(matches!(v.get("a"), Some(Held::Value(Value::Int(7)))));
        assert!(v.value("b").unwrap_err().contains("undefined"));
        v.set_text("c", "abc".into());
        assert!(v.value("c").unwrap_err().contains("\"c\""));
    }
}
