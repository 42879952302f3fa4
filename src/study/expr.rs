//! The little language a study uses to name figures of its runs: the "here" of a paper value,
//! the y of an overlaid figure, and shape checks.
//!
//! ```text
//! log_syncs_per_txn[group]@clients=16 <= 0.5 * log_syncs_per_txn[force]@clients=16
//! falling(cpu_per_row_ns@predicate=complex / cpu_per_row_ns@predicate=trivial over table)
//! all(ios_in_flight / @iodepth >= 0.9 over iodepth)
//! sublinear(bytes_per_sec over threads)
//! ```
//!
//! - A figure is any name a step's trials record (`ops_per_sec`, `cpu_per_row_ns`, the
//!   kind's own figures), `cpu_busy_pct` or `other_cpu_pct`; its value at a step is the mean over the step's
//!   repeats. `[leg]` names the leg (default: the one in context) and `@name=value,...`
//!   picks the step by its parameters (`8k` matches 8192; `max` and `min` the largest and
//!   smallest value the leg took). `@name` alone is the step's value of
//!   a parameter; a bare name that is one of the context's variables is that number.
//! - A reference must pin exactly one step; otherwise evaluation says which parameter to add.
//! - `mean(EXPR over P in 4k..64k)` is the mean over the values of P the leg took (in the
//!   range), as RAL averaged IOzone's records of 4 to 64 KB per file size.
//! - `over P` evaluates the inner expression once per value of P, in the order the run
//!   stepped through them. `falling`/`rising` allow 5% of noise between neighbours and ask
//!   the last to differ from the first by more than that; `sublinear` asks that the figure
//!   grew at most 90% as fast as P; `all` asks the comparison at every value.

use crate::record::{RunRecord, StepResult, step_number};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Between neighbours of a trend, what counts as noise rather than a turn.
const TREND_NOISE: f64 = 0.05;
/// `sublinear`: grew at most this share of the parameter's growth.
const SUBLINEAR_AT_MOST: f64 = 0.9;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    /// `figure(by=key)[leg]@name=value,...`; `(by=key)` names one group of the step (a
    /// transaction type, a shard, a file: the record's `groups`).
    Ref {
        figure: String,
        group: Option<(String, String)>,
        leg: Option<String>,
        at: Vec<(String, String)>,
    },
    /// `@name`: the step's value of a parameter.
    Param(String),
    /// `mean(EXPR over P)`, `max(..)`, `min(..)`, optionally `over P in LO..HI`: the mean,
    /// largest or smallest over the values of P the leg took (within the range), those with
    /// a value.
    Agg(Agg, Box<Expr>, Over),
    /// `round(EXPR)`: to the nearest whole number (a count computed from a figure).
    Round(Box<Expr>),
    Bin(Box<Expr>, char, Box<Expr>),
}

/// How `mean`, `max` and `min` reduce a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    Mean,
    Max,
    Min,
}

/// `over P` or `over P in LO..HI`: the parameter a series steps through, and the range of
/// its values taken (as typed: `4k..64k`, `1..{cpus}` once placeholders are filled in).
#[derive(Debug, Clone, PartialEq)]
pub struct Over {
    pub param: String,
    pub range: Option<(String, String)>,
}

impl Over {
    /// Whether a value of the parameter is in the range (every value when there is none).
    fn admits(&self, v: &str, runs: &Runs, scope: &Scope) -> bool {
        let Some((lo, hi)) = &self.range else {
            return true;
        };
        let bound = |t: &str| number(t).or_else(|| placeholder(t, runs, scope));
        let (x, lo, hi) = (number(v), bound(lo), bound(hi));
        x.is_some_and(|x| lo.is_none_or(|lo| x >= lo) && hi.is_none_or(|hi| x <= hi))
    }
}

/// `{cpus}` (logical CPUs) and `{ram}` (bytes) of the machine the runs were made on: that of
/// the leg in context, else of any leg, else the scope's variables of the same name.
fn placeholder(word: &str, runs: &Runs, scope: &Scope) -> Option<f64> {
    let name = word.strip_prefix('{')?.strip_suffix('}')?;
    let record = scope
        .leg
        .as_ref()
        .and_then(|l| runs.get(l))
        .or_else(|| runs.values().next());
    let from_record = record.and_then(|r| match name {
        "cpus" => r.env.cpu.logical_cpus.map(f64::from),
        "ram" => r.env.memory.total_bytes.map(|b| b as f64),
        _ => None,
    });
    from_record.or_else(|| scope.vars.get(name).copied())
}

/// A parameter's value as a number: `16`, `8k` (8192).
fn number(t: &str) -> Option<f64> {
    t.parse::<f64>().ok().or_else(|| {
        crate::vocab::units::parse_size("", t)
            .ok()
            .map(|b| b as f64)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rel {
    Le,
    Ge,
    Lt,
    Gt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    Falling,
    Rising,
    Sublinear,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Cmp(Expr, Rel, Expr),
    Trend(Trend, Expr, Over),
    All(Box<Check>, Over),
    /// `CHECK and CHECK`: both (a `when` of two conditions: several CPUs and a quiet machine).
    And(Box<Check>, Box<Check>),
}

/// Where an expression is read: the leg and step parameters it defaults to, and named numbers.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub leg: Option<String>,
    pub at: Vec<(String, String)>,
    pub vars: BTreeMap<String, f64>,
}

/// The runs a study made, by leg.
pub type Runs<'a> = BTreeMap<String, &'a RunRecord>;

/// Why a figure has no value here (one line).
#[derive(Debug, Clone, PartialEq)]
pub struct Missing(pub String);

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A check's answer, with the numbers it was decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    /// `0.18 <= 0.35`, or the series `ten 9.2x, hundred 4.1x, ...`.
    pub numbers: String,
}

// ---------------------------------------------------------------------------------------
// Parsing

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Word(String),
    Sym(&'static str),
}

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = b[i..(i + 2).min(b.len())].iter().collect();
        if let Some(s) = ["<=", ">="].into_iter().find(|s| *s == two) {
            out.push(Tok::Sym(s));
            i += 2;
            continue;
        }
        if let Some(s) = [
            "(", ")", "[", "]", "@", "=", ",", "*", "/", "+", "-", "<", ">",
        ]
        .into_iter()
        .find(|s| s.starts_with(c))
        {
            out.push(Tok::Sym(s));
            i += 1;
            continue;
        }
        // A word: names, numbers and parameter values such as 8k, 1m, x4-2.
        let start = i;
        // `{cpus}` and `{ram}` are words too, filled in for the machine of the runs.
        while i < b.len() && (b[i].is_alphanumeric() || "._:%{}".contains(b[i])) {
            i += 1;
        }
        if i == start {
            return Err(format!("unexpected '{c}'"));
        }
        let w: String = b[start..i].iter().collect();
        // 1e9, 2.5e-3: the sign of an exponent belongs to the number.
        if (w.ends_with('e') || w.ends_with('E'))
            && w[..w.len() - 1].parse::<f64>().is_ok()
            && i + 1 < b.len()
            && (b[i] == '-' || b[i] == '+')
            && b[i + 1].is_ascii_digit()
        {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let full: String = b[start..j].iter().collect();
            out.push(Tok::Num(
                full.parse().map_err(|_| format!("bad number {full}"))?,
            ));
            i = j;
            continue;
        }
        match w.parse::<f64>() {
            Ok(n) if w.starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
                out.push(Tok::Num(n))
            }
            _ => out.push(Tok::Word(w)),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn eat(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str) -> Result<(), String> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(format!("expected '{s}' {}", self.here()))
        }
    }
    fn here(&self) -> String {
        match self.peek() {
            None => "at the end".into(),
            Some(Tok::Num(n)) => format!("before {n}"),
            Some(Tok::Word(w)) => format!("before '{w}'"),
            Some(Tok::Sym(s)) => format!("before '{s}'"),
        }
    }
    fn word(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            Some(Tok::Num(n)) => Ok(n.to_string()),
            _ => {
                self.at -= 1;
                Err(format!("expected a name {}", self.here()))
            }
        }
    }

    /// `over P` or `over P in LO..HI`.
    fn over(&mut self) -> Result<Over, String> {
        match self.next() {
            Some(Tok::Word(o)) if o == "over" => {}
            _ => {
                self.at -= 1;
                return Err(format!("expected 'over PARAMETER' {}", self.here()));
            }
        }
        let param = self.word()?;
        let range = if matches!(self.peek(), Some(Tok::Word(w)) if w == "in") {
            self.at += 1;
            let r = self.word()?;
            let (lo, hi) = r
                .split_once("..")
                .ok_or_else(|| format!("expected a range LO..HI, not {r}"))?;
            Some((lo.to_string(), hi.to_string()))
        } else {
            None
        };
        Ok(Over { param, range })
    }

    fn check(&mut self) -> Result<Check, String> {
        let first = self.one_check()?;
        if matches!(self.peek(), Some(Tok::Word(w)) if w == "and") {
            self.at += 1;
            return Ok(Check::And(Box::new(first), Box::new(self.check()?)));
        }
        Ok(first)
    }

    fn one_check(&mut self) -> Result<Check, String> {
        if let Some(Tok::Word(w)) = self.peek().cloned()
            && matches!(self.toks.get(self.at + 1), Some(Tok::Sym("(")))
        {
            let trend = match w.as_str() {
                "falling" => Some(Trend::Falling),
                "rising" => Some(Trend::Rising),
                "sublinear" => Some(Trend::Sublinear),
                _ => None,
            };
            if trend.is_some() || w == "all" {
                self.at += 2;
                let inner = if w == "all" {
                    Err(self.check()?)
                } else {
                    Ok(self.expr()?)
                };
                let over = self.over()?;
                self.expect(")")?;
                return Ok(match (trend, inner) {
                    (Some(t), Ok(e)) => Check::Trend(t, e, over),
                    (_, Err(c)) => Check::All(Box::new(c), over),
                    (None, Ok(_)) => unreachable!("all() parses a check"),
                });
            }
        }
        let a = self.expr()?;
        let rel = match self.next() {
            Some(Tok::Sym("<=")) => Rel::Le,
            Some(Tok::Sym(">=")) => Rel::Ge,
            Some(Tok::Sym("<")) => Rel::Lt,
            Some(Tok::Sym(">")) => Rel::Gt,
            _ => {
                self.at -= 1;
                return Err(format!("expected <=, >=, < or > {}", self.here()));
            }
        };
        let b = self.expr()?;
        Ok(Check::Cmp(a, rel, b))
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut e = self.term()?;
        loop {
            let op = if self.eat("+") {
                '+'
            } else if self.eat("-") {
                '-'
            } else {
                return Ok(e);
            };
            e = Expr::Bin(Box::new(e), op, Box::new(self.term()?));
        }
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat("*") {
                '*'
            } else if self.eat("/") {
                '/'
            } else {
                return Ok(e);
            };
            e = Expr::Bin(Box::new(e), op, Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        if self.eat("-") {
            return Ok(Expr::Bin(
                Box::new(Expr::Num(0.0)),
                '-',
                Box::new(self.unary()?),
            ));
        }
        if self.eat("@") {
            return Ok(Expr::Param(self.word()?));
        }
        let agg = match self.peek() {
            Some(Tok::Word(w)) if w == "mean" => Some(Agg::Mean),
            Some(Tok::Word(w)) if w == "max" => Some(Agg::Max),
            Some(Tok::Word(w)) if w == "min" => Some(Agg::Min),
            _ => None,
        };
        if matches!(self.peek(), Some(Tok::Word(w)) if w == "round")
            && matches!(self.toks.get(self.at + 1), Some(Tok::Sym("(")))
        {
            self.at += 2;
            let inner = self.expr()?;
            self.expect(")")?;
            return Ok(Expr::Round(Box::new(inner)));
        }
        if let Some(agg) = agg
            && matches!(self.toks.get(self.at + 1), Some(Tok::Sym("(")))
        {
            self.at += 2;
            let inner = self.expr()?;
            let over = self.over()?;
            self.expect(")")?;
            return Ok(Expr::Agg(agg, Box::new(inner), over));
        }
        match self.next() {
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Word(figure)) => {
                // `(by=key)` right after a figure: one group of the step. A figure is never
                // called, so a parenthesis here cannot be anything else.
                let group = if self.eat("(") {
                    let by = self.word()?;
                    self.expect("=")?;
                    let mut key = self.word()?;
                    while self.eat("-") {
                        key.push('-');
                        key.push_str(&self.word()?);
                    }
                    self.expect(")")?;
                    Some((by, key))
                } else {
                    None
                };
                let leg = if self.eat("[") {
                    // Leg names may hold '-' (`e25k-cpu`), which elsewhere is minus.
                    let mut l = self.word()?;
                    while self.eat("-") {
                        l.push('-');
                        l.push_str(&self.word()?);
                    }
                    self.expect("]")?;
                    Some(l)
                } else {
                    None
                };
                let mut at = Vec::new();
                // `@` right after a reference picks its step; `@name` alone is a parameter.
                if matches!(self.peek(), Some(Tok::Sym("@")))
                    && matches!(self.toks.get(self.at + 2), Some(Tok::Sym("=")))
                {
                    self.at += 1;
                    loop {
                        let k = self.word()?;
                        self.expect("=")?;
                        let v = self.word()?;
                        at.push((k, v));
                        let more = matches!(self.peek(), Some(Tok::Sym(",")))
                            && matches!(self.toks.get(self.at + 2), Some(Tok::Sym("=")));
                        if !more {
                            break;
                        }
                        self.at += 1;
                    }
                }
                Ok(Expr::Ref {
                    figure,
                    group,
                    leg,
                    at,
                })
            }
            _ => {
                self.at = self.at.saturating_sub(1);
                Err(format!("expected a number or a figure {}", self.here()))
            }
        }
    }
}

fn finish<T>(p: &mut Parser, v: T) -> Result<T, String> {
    match p.peek() {
        None => Ok(v),
        Some(_) => Err(format!("unexpected text {}", p.here())),
    }
}

/// An expression (a figure, or arithmetic over figures).
pub fn parse_expr(text: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: tokens(text)?,
        at: 0,
    };
    let e = p.expr()?;
    finish(&mut p, e)
}

/// A shape check.
pub fn parse_check(text: &str) -> Result<Check, String> {
    let mut p = Parser {
        toks: tokens(text)?,
        at: 0,
    };
    let c = p.check()?;
    finish(&mut p, c)
}

impl Expr {
    /// The legs it names explicitly.
    pub fn legs(&self, out: &mut Vec<String>) {
        match self {
            Expr::Ref { leg: Some(l), .. } if !out.contains(l) => out.push(l.clone()),
            Expr::Bin(a, _, b) => {
                a.legs(out);
                b.legs(out);
            }
            Expr::Agg(_, e, _) | Expr::Round(e) => e.legs(out),
            _ => {}
        }
    }
}

impl Check {
    pub fn legs(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Check::Cmp(a, _, b) => {
                a.legs(&mut out);
                b.legs(&mut out);
            }
            Check::Trend(_, e, _) => e.legs(&mut out),
            Check::All(c, _) => out = c.legs(),
            Check::And(a, b) => {
                out = a.legs();
                for l in b.legs() {
                    if !out.contains(&l) {
                        out.push(l);
                    }
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation

/// Whether a step's parameter has the value `want` (as typed: `8k` is 8192, `ten` is ten).
pub fn param_matches(v: &Value, want: &str) -> bool {
    match v {
        Value::String(s) => s == want,
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return false };
            let w = want
                .parse::<f64>()
                .ok()
                .or_else(|| {
                    crate::vocab::units::parse_size("", want)
                        .ok()
                        .map(|b| b as f64)
                })
                .or_else(|| {
                    crate::vocab::units::parse_duration("", want)
                        .ok()
                        .map(|d| d.as_nanos() as f64)
                });
            w.is_some_and(|w| (w - x).abs() <= 1e-9 * x.abs().max(1.0))
        }
        Value::Bool(b) => want == b.to_string(),
        _ => false,
    }
}

/// A parameter's value as a filter would name it.
pub fn param_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn leg_of<'a>(leg: &Option<String>, scope: &'a Scope) -> Result<&'a str, Missing> {
    match (leg, &scope.leg) {
        (Some(_), _) => unreachable!("handled by caller"),
        (None, Some(l)) => Ok(l.as_str()),
        (None, None) => Err(Missing(
            "a figure without [leg] where no leg is in context".into(),
        )),
    }
}

/// The one step of `record` with every parameter in `at` (parameters it does not have are
/// ignored when they are the context's, an error when the reference named them).
/// A parameter's name in `record`: as given, or with the unit its record name carries
/// (`bs` is recorded as `bs_bytes`, `size` as `size_bytes`).
fn key_in(record: &RunRecord, k: &str) -> String {
    let has = |name: &str| record.steps.iter().any(|s| s.params.contains_key(name));
    if has(k) {
        return k.to_string();
    }
    ["_bytes", "_ns"]
        .iter()
        .map(|u| format!("{k}{u}"))
        .find(|n| has(n))
        .unwrap_or_else(|| k.to_string())
}

fn the_step<'a>(
    record: &'a RunRecord,
    leg: &str,
    own: &[(String, String)],
    context: &[(String, String)],
) -> Result<&'a StepResult, Missing> {
    let own: Vec<(String, String)> = own
        .iter()
        .map(|(k, v)| (key_in(record, k), v.clone()))
        .collect();
    let context: Vec<(String, String)> = context
        .iter()
        .map(|(k, v)| (key_in(record, k), v.clone()))
        .collect();
    let (own, context) = (own.as_slice(), context.as_slice());
    for (k, _) in own {
        if !record.steps.iter().any(|s| s.params.contains_key(k)) {
            return Err(Missing(format!("leg {leg} has no parameter {k}")));
        }
    }
    // `max` and `min` stand for the largest and smallest value the leg stepped through
    // (`threads=max`: all the CPUs this machine has).
    let extreme = |k: &str, v: &str| -> String {
        // `threads={cpus}`: this run's machine.
        let cpus = record.env.cpu.logical_cpus.map(|n| n.to_string());
        if v == "{cpus}"
            && let Some(n) = &cpus
        {
            return n.clone();
        }
        // `threads={= 0.5 * {cpus}}`: a share of this run's machine (a cluster load of 50%).
        if let (Some(inner), Some(n)) = (
            v.strip_prefix("{=").and_then(|x| x.strip_suffix('}')),
            &cpus,
        ) && let Ok(e) = parse_expr(inner.replace("{cpus}", n).trim())
            && let Ok(x) = eval(&e, &BTreeMap::new(), &Scope::default())
        {
            return Value::from(x).to_string();
        }
        let pick = match v {
            "max" => f64::max,
            "min" => f64::min,
            "peak" => return peak_of(record, k, own, context).unwrap_or_else(|| v.to_string()),
            "passed" => {
                return passed_of(record, k)
                    .map(|x| Value::from(x).to_string())
                    .unwrap_or_else(|| v.to_string());
            }
            _ => return v.to_string(),
        };
        record
            .steps
            .iter()
            .filter_map(|s| s.params.get(k).and_then(|p| p.as_f64()))
            .reduce(pick)
            .map(|x| Value::from(x).to_string())
            .unwrap_or_else(|| v.to_string())
    };
    let wanted: Vec<(String, String)> = own
        .iter()
        .chain(
            context
                .iter()
                .filter(|(k, _)| !own.iter().any(|(o, _)| o == k)),
        )
        .map(|(k, v)| (k.clone(), extreme(k, v)))
        .collect();
    // A parameter the leg has nowhere is ignored (the context's, from another leg); one that
    // some of its steps have picks among those (a load level's `load_pct`: the calibrations,
    // which have none, are not its steps).
    let anywhere = |k: &str| record.steps.iter().any(|s| s.params.contains_key(k));
    let matching: Vec<&StepResult> = record
        .steps
        .iter()
        .filter(|s| !s.trials.is_empty())
        .filter(|s| {
            wanted.iter().all(|(k, v)| match s.params.get(k) {
                Some(p) => param_matches(p, v),
                None => !anywhere(k),
            })
        })
        .collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(Missing(format!(
            "leg {leg} has no step with {}",
            wanted
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        ))),
        many => {
            let differ: Vec<String> = many[0]
                .swept
                .iter()
                .filter(|k| {
                    many.iter()
                        .any(|s| s.params.get(*k) != many[0].params.get(*k))
                })
                .cloned()
                .collect();
            Err(Missing(format!(
                "{} steps of leg {leg} match; pick one with @{}=...",
                many.len(),
                differ.join("=...,@")
            )))
        }
    }
}

/// `@k=peak`: the value of `k` at the step with the highest throughput (`ops_per_sec`)
/// among those with the other parameters asked for: the paper's "in peak", not the most
/// clients (which may be past the peak).
/// `@users=passed`: the largest value of `k` whose step passed every check of its own (mail's
/// quality of service and accounting): where a landscape's leg did not search, the most it
/// held. On a leg that searched `k` (`--search-users`) it is the search's answer, the largest
/// value that passed at every share of its load (SPECmail's users supported): a step that
/// passed at 100% but failed at 120% did not qualify. None where no step with checks passed
/// them all, or the search qualified none.
fn passed_of(record: &RunRecord, k: &str) -> Option<f64> {
    if let Some(search) = record.search.as_ref().filter(|s| s.axis == k) {
        return search.supported;
    }
    record
        .steps
        .iter()
        .filter(|s| !s.trials.is_empty() && !s.checks.is_empty())
        .filter(|s| s.checks.iter().all(|c| c.passed))
        .filter_map(|s| s.params.get(k)?.as_f64())
        .reduce(f64::max)
}

fn peak_of(
    record: &RunRecord,
    k: &str,
    own: &[(String, String)],
    context: &[(String, String)],
) -> Option<String> {
    let others: Vec<&(String, String)> = own
        .iter()
        .chain(
            context
                .iter()
                .filter(|(c, _)| !own.iter().any(|(o, _)| o == c)),
        )
        .filter(|(o, _)| o != k)
        .collect();
    record
        .steps
        .iter()
        .filter(|s| !s.trials.is_empty() && s.params.contains_key(k))
        .filter(|s| {
            others.iter().all(|(o, v)| {
                s.params.get(o).is_none_or(|p| {
                    // max/min/peak of another parameter are not pinned here.
                    matches!(v.as_str(), "max" | "min" | "peak" | "passed" | "{cpus}")
                        || param_matches(p, v)
                })
            })
        })
        .filter_map(|s| Some((step_figure(s, "ops_per_sec")?, s.params.get(k)?)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| param_text(p))
}

/// The figures of a whole run rather than of a step (Some: `name` is one; its value if the
/// run has it): `clock_ghz`, the clock of the run's host, which `compare --expect clock` sets
/// ratios against; `supported`, the users a `--search-users` run found; `overall_ops_per_watt`
/// of a load-level run, and `calibration_other_cpu_pct` (other work's share of the CPUs while
/// its maximum was calibrated).
fn run_figure(record: &RunRecord, name: &str) -> Option<Option<f64>> {
    Some(match name {
        "clock_ghz" => {
            let cpu = &record.env.cpu;
            (cpu.max_mhz.or(cpu.mhz))
                .filter(|m| *m > 0.0)
                .map(|m| m / 1000.0)
        }
        "supported" => record.search.as_ref().and_then(|s| s.supported),
        // The topology of the run's host: where compact and spread placements can differ.
        "numa_nodes" => record.env.cpu.numa_nodes.map(f64::from),
        "threads_per_core" => record.env.cpu.threads_per_core.map(f64::from),
        "sockets" => record.env.cpu.sockets.map(f64::from),
        "physical_cores" => record.env.cpu.physical_cores.map(f64::from),
        "overall_ops_per_watt" => record
            .load_levels
            .as_ref()
            .and_then(|l| l.overall_ops_per_watt),
        // Other work's share of the CPUs while the maximum was calibrated (the last two
        // calibrations, those the maximum is the mean of): what a level at 100% can bear.
        "calibration_other_cpu_pct" => record.load_levels.as_ref().and_then(|l| {
            let v: Vec<f64> = l
                .calibration_steps
                .iter()
                .rev()
                .take(2)
                .filter_map(|&i| step_figure(record.steps.get(i)?, "other_cpu_pct"))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        }),
        _ => return None,
    })
}

/// A load level's figures from the run's summary of its levels: `achieved_pct` (its
/// throughput in percent of the calibrated maximum), `target_pct`.
fn level_figure(record: &RunRecord, step: &StepResult, name: &str) -> Option<f64> {
    let level = record
        .load_levels
        .as_ref()?
        .levels
        .iter()
        .find(|l| l.step == step.index)?;
    match name {
        "achieved_pct" => Some(level.achieved_pct),
        "target_pct" => Some(level.target_pct),
        _ => None,
    }
}

/// A figure's value at a step: the mean over its repeats.
pub fn step_figure(s: &StepResult, name: &str) -> Option<f64> {
    let v: Vec<f64> = s
        .trials
        .iter()
        .filter_map(|t| match name {
            "cpu_busy_pct" => Some(t.resources.cpu.busy_pct),
            // The CPUs' busy share (steal included) less perflab's own process, in percent of
            // all CPUs: other work, which a closed-loop maximum did not share (a server or a
            // child perflab started counts here too).
            "other_cpu_pct" => {
                let r = t.resources.summary.as_ref()?;
                let cpus = r.cpus.max(1) as f64;
                Some((r.cpu.busy() - r.process_cpu_pct / cpus).max(0.0))
            }
            // How many block devices the step's I/O reached (one: its files share a disk).
            "devices" => Some(t.devices.len() as f64),
            // The latency percentiles of the step's ops.
            "latency_p50_ns" => Some(t.latency.p50_ns as f64),
            "latency_p90_ns" => Some(t.latency.p90_ns as f64),
            "latency_p99_ns" => Some(t.latency.p99_ns as f64),
            // What the block devices under the files did, summed over them (other
            // processes' I/O included): the physical side of the application's figures.
            "device_reads_per_sec" => device_sum(t, |a| a.reads_per_sec),
            "device_writes_per_sec" => device_sum(t, |a| a.writes_per_sec),
            "device_read_bytes_per_sec" => device_sum(t, |a| a.read_bytes_per_sec),
            "device_write_bytes_per_sec" => device_sum(t, |a| a.write_bytes_per_sec),
            "device_queue" => device_sum(t, |a| a.avg_queue),
            // Power, where the step read any (RAPL, hwmon, --power-cmd).
            "watts" => t.resources.summary.as_ref()?.watts,
            "ops_per_watt" => {
                let w = t.resources.summary.as_ref()?.watts.filter(|w| *w > 0.0)?;
                Some(t.metric("ops_per_sec")? / w)
            }
            _ => t.metric(name),
        })
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// A figure of the block devices under a trial's files, summed over them; none without
/// devices.
fn device_sum(
    t: &crate::record::Trial,
    f: impl Fn(&crate::env::disk::DiskActivity) -> f64,
) -> Option<f64> {
    (!t.devices.is_empty()).then(|| t.devices.iter().map(|d| f(&d.activity)).sum())
}

/// A figure of one group of a step (`by` = `key`): the mean over the step's repeats of
/// `ops_per_sec`, `bytes_per_sec`, `ops`, `errors` or a latency (`latency_mean_ns`,
/// `latency_p50_ns`, `latency_p90_ns`, `latency_p99_ns`, `latency_max_ns`).
pub fn group_figure(s: &StepResult, by: &str, key: &str, name: &str) -> Option<f64> {
    let v: Vec<f64> = s
        .trials
        .iter()
        .filter_map(|t| {
            let g = t
                .groups
                .iter()
                .find(|g| g.by == by && (g.key == key || g.label == key))?;
            Some(match name {
                "ops_per_sec" => g.ops_per_sec,
                "bytes_per_sec" => g.bytes_per_sec,
                "ops" => g.ops as f64,
                "errors" => g.errors as f64,
                "latency_mean_ns" | "mean_ns" => g.latency.mean_ns,
                "latency_p50_ns" => g.latency.p50_ns as f64,
                "latency_p90_ns" => g.latency.p90_ns as f64,
                "latency_p99_ns" | "p99_ns" => g.latency.p99_ns as f64,
                "latency_max_ns" => g.latency.max_ns as f64,
                _ => return None,
            })
        })
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub fn eval(e: &Expr, runs: &Runs, scope: &Scope) -> Result<f64, Missing> {
    match e {
        Expr::Num(n) => Ok(*n),
        Expr::Ref {
            figure,
            group,
            leg,
            at,
        } => {
            if leg.is_none()
                && at.is_empty()
                && let Some(v) = scope.vars.get(figure)
            {
                return Ok(*v);
            }
            if figure.starts_with('{') {
                return placeholder(figure, runs, scope)
                    .ok_or_else(|| Missing(format!("{figure} is not known here")));
            }
            let leg_name = match leg {
                Some(l) => l.as_str(),
                None => leg_of(leg, scope)?,
            };
            let record = runs
                .get(leg_name)
                .ok_or_else(|| Missing(format!("leg {leg_name} did not run")))?;
            if let Some(v) = run_figure(record, figure) {
                return v.ok_or_else(|| Missing(format!("leg {leg_name} records no {figure}")));
            }
            let step = the_step(record, leg_name, at, &scope.at)?;
            if let Some((by, key)) = group {
                return group_figure(step, by, key, figure).ok_or_else(|| {
                    Missing(format!(
                        "leg {leg_name} records no {figure} of group {by}={key} (step {})",
                        step_number(step.index)
                    ))
                });
            }
            level_figure(record, step, figure)
                .or_else(|| step_figure(step, figure))
                .ok_or_else(|| {
                    Missing(format!(
                        "leg {leg_name} records no {figure} (step {})",
                        step_number(step.index)
                    ))
                })
        }
        Expr::Param(name) => {
            let from_scope = scope.at.iter().find(|(k, _)| k == name).map(|(_, v)| v);
            let text = from_scope
                .ok_or_else(|| Missing(format!("@{name} outside 'over {name}' or @{name}=...")))?;
            // `threads={cpus}` or `threads={= 0.5 * {cpus}}` in a row's `at`: the machine's.
            let cpus = placeholder("{cpus}", runs, scope).map(|c| c.to_string());
            let computed = match (&cpus, text.as_str()) {
                // `users=passed` in a row's `at`: the most its leg held (see passed_of).
                (_, "passed") => {
                    let record = scope.leg.as_ref().and_then(|l| runs.get(l));
                    let x = record.and_then(|r| passed_of(r, name)).ok_or_else(|| {
                        Missing(format!(
                            "no step of the leg passed its checks at any {name}"
                        ))
                    })?;
                    Some(x.to_string())
                }
                (Some(c), "{cpus}") => Some(c.clone()),
                (Some(c), t) if t.starts_with("{=") && t.ends_with('}') => {
                    parse_expr(t[2..t.len() - 1].replace("{cpus}", c).trim())
                        .ok()
                        .and_then(|e| eval(&e, &BTreeMap::new(), &Scope::default()).ok())
                        .map(|x| x.to_string())
                }
                _ => None,
            };
            let text = computed.as_ref().unwrap_or(text);
            text.parse::<f64>()
                .ok()
                .or_else(|| {
                    crate::vocab::units::parse_size("", text)
                        .ok()
                        .map(|b| b as f64)
                })
                .ok_or_else(|| Missing(format!("@{name} is {text}, not a number")))
        }
        Expr::Agg(agg, inner, over) => {
            let holder = Check::Cmp((**inner).clone(), Rel::Le, Expr::Num(0.0));
            let ys: Vec<f64> = values_over(&holder, runs, scope, over)?
                .into_iter()
                .filter_map(|v| eval(inner, runs, &with(scope, &over.param, &v)).ok())
                .collect();
            if ys.is_empty() {
                return Err(Missing(format!("no step to reduce over {}", over.param)));
            }
            Ok(match agg {
                Agg::Mean => ys.iter().sum::<f64>() / ys.len() as f64,
                Agg::Max => ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Agg::Min => ys.iter().copied().fold(f64::INFINITY, f64::min),
            })
        }
        Expr::Round(e) => Ok(eval(e, runs, scope)?.round()),
        Expr::Bin(a, op, b) => {
            let (x, y) = (eval(a, runs, scope)?, eval(b, runs, scope)?);
            Ok(match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                _ => x / y,
            })
        }
    }
}

/// The values of parameter `over` in the order the leg's steps took them (within its range).
fn values_over(e: &Check, runs: &Runs, scope: &Scope, over: &Over) -> Result<Vec<String>, Missing> {
    let legs = {
        let mut l = e.legs();
        if l.is_empty()
            && let Some(s) = &scope.leg
        {
            l.push(s.clone());
        }
        l
    };
    let leg = legs
        .first()
        .ok_or_else(|| Missing("no leg to take the values from".into()))?;
    let record = runs
        .get(leg)
        .ok_or_else(|| Missing(format!("leg {leg} did not run")))?;
    let mut out: Vec<String> = Vec::new();
    let key = key_in(record, &over.param);
    let mut any = false;
    for s in record.steps.iter().filter(|s| !s.trials.is_empty()) {
        if let Some(v) = s.params.get(&key) {
            any = true;
            let t = param_text(v);
            if over.admits(&t, runs, scope) && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    if !any {
        return Err(Missing(format!(
            "leg {leg} has no parameter {}",
            over.param
        )));
    }
    if out.is_empty() {
        let (lo, hi) = over.range.clone().unwrap_or_default();
        return Err(Missing(format!(
            "leg {leg} took no value of {} in {lo}..{hi}",
            over.param
        )));
    }
    Ok(out)
}

fn with(scope: &Scope, k: &str, v: &str) -> Scope {
    let mut s = scope.clone();
    s.at.retain(|(x, _)| x != k);
    s.at.push((k.to_string(), v.to_string()));
    s
}

/// A number for a verdict line: three figures, large ones with k, M, G.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e4 {
        let (d, u) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(d, _)| a >= *d)
            .unwrap_or((1.0, ""));
        format!("{}{u}", crate::vocab::numbers::sig3(v / d))
    } else {
        crate::vocab::numbers::sig3(v)
    }
}

fn series(
    e: &Expr,
    runs: &Runs,
    scope: &Scope,
    over: &Over,
    owner: &Check,
) -> Result<Vec<(String, f64)>, Missing> {
    values_over(owner, runs, scope, over)?
        .into_iter()
        .map(|v| Ok((v.clone(), eval(e, runs, &with(scope, &over.param, &v))?)))
        .collect()
}

/// Decides a check, or says why it cannot be decided here.
pub fn decide(c: &Check, runs: &Runs, scope: &Scope) -> Result<Verdict, Missing> {
    match c {
        Check::Cmp(a, rel, b) => {
            let (x, y) = (eval(a, runs, scope)?, eval(b, runs, scope)?);
            let (passed, sym) = match rel {
                Rel::Le => (x <= y, "<="),
                Rel::Ge => (x >= y, ">="),
                Rel::Lt => (x < y, "<"),
                Rel::Gt => (x > y, ">"),
            };
            Ok(Verdict {
                passed,
                numbers: format!("{} {sym} {}", short(x), short(y)),
            })
        }
        Check::Trend(t, e, over) => {
            let s = series(e, runs, scope, over, c)?;
            if s.len() < 2 {
                return Err(Missing(format!(
                    "one value of {}: no trend to judge",
                    over.param
                )));
            }
            let ys: Vec<f64> = s.iter().map(|(_, y)| *y).collect();
            let (first, last) = (ys[0], ys[ys.len() - 1]);
            let passed = match t {
                Trend::Falling => {
                    ys.windows(2).all(|w| w[1] <= w[0] * (1.0 + TREND_NOISE))
                        && last < first * (1.0 - TREND_NOISE)
                }
                Trend::Rising => {
                    ys.windows(2).all(|w| w[1] >= w[0] * (1.0 - TREND_NOISE))
                        && last > first * (1.0 + TREND_NOISE)
                }
                Trend::Sublinear => {
                    let x = |v: &str| {
                        v.parse::<f64>().ok().or_else(|| {
                            crate::vocab::units::parse_size("", v)
                                .ok()
                                .map(|b| b as f64)
                        })
                    };
                    match (x(&s[0].0), x(&s[s.len() - 1].0)) {
                        (Some(x0), Some(x1)) if x0 > 0.0 && first > 0.0 => {
                            (last / first) <= SUBLINEAR_AT_MOST * (x1 / x0)
                        }
                        _ => return Err(Missing(format!("{} is not numeric", over.param))),
                    }
                }
            };
            Ok(Verdict {
                passed,
                numbers: s
                    .iter()
                    .map(|(k, y)| format!("{}={k}: {}", over.param, short(*y)))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
        Check::And(a, b) => {
            let (x, y) = (decide(a, runs, scope)?, decide(b, runs, scope)?);
            Ok(Verdict {
                passed: x.passed && y.passed,
                numbers: format!("{} and {}", x.numbers, y.numbers),
            })
        }
        Check::All(inner, over) => {
            let mut parts = Vec::new();
            let mut passed = true;
            for v in values_over(c, runs, scope, over)? {
                let r = decide(inner, runs, &with(scope, &over.param, &v))?;
                passed &= r.passed;
                parts.push(format!(
                    "{}={v}: {}{}",
                    over.param,
                    r.numbers,
                    if r.passed { "" } else { " (fails)" }
                ));
            }
            Ok(Verdict {
                passed,
                numbers: parts.join("; "),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{StepResult, Trial};

    /// A step: its parameters and its figures.
    type Step<'a> = (&'a [(&'a str, Value)], &'a [(&'a str, f64)]);

    fn record(steps: &[Step]) -> RunRecord {
        let mut r = RunRecord::default();
        for (i, (params, figures)) in steps.iter().enumerate() {
            let mut s = StepResult {
                index: i,
                ..Default::default()
            };
            for (k, v) in params.iter() {
                s.params.insert(k.to_string(), v.clone());
                s.swept.push(k.to_string());
            }
            let mut t = Trial::default();
            for (k, v) in figures.iter() {
                t.figures.insert(k.to_string(), *v);
            }
            s.trials.push(t);
            r.steps.push(s);
        }
        r
    }

    #[test]
    fn checks_parse() {
        for text in [
            "log_syncs_per_txn[group]@clients=16 <= 0.5 * log_syncs_per_txn[force]@clients=16",
            "falling(cpu_per_row_ns@predicate=complex / cpu_per_row_ns@predicate=trivial over table)",
            "all(ios_in_flight / @iodepth >= 0.9 over iodepth)",
            "sublinear(bytes_per_sec[threads] over threads)",
            "latency_mean_ns[svc]@bs=1m >= 4 * latency_mean_ns[svc]@bs=4k",
            "2e9 / rows_per_sec > 1.5e-3",
        ] {
            parse_check(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
        assert!(parse_check("falling(x over)").is_err());
        assert!(parse_check("a[b] <=").is_err());
        assert!(parse_check("a b").is_err());
        assert_eq!(parse_expr("2e-3").unwrap(), Expr::Num(2e-3));
    }

    #[test]
    fn references_pin_one_step_and_say_which_parameter_is_missing() {
        let r = record(&[
            (
                &[("threads", 1.into()), ("bs", 8192.into())],
                &[("x", 10.0)],
            ),
            (
                &[("threads", 2.into()), ("bs", 8192.into())],
                &[("x", 15.0)],
            ),
        ]);
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        let scope = Scope::default();
        assert_eq!(
            eval(&parse_expr("x[a]@threads=2,bs=8k").unwrap(), &runs, &scope),
            Ok(15.0)
        );
        let e = eval(&parse_expr("x[a]").unwrap(), &runs, &scope).unwrap_err();
        assert!(e.0.contains("@threads"), "{e}");
        let e = eval(&parse_expr("x[b]").unwrap(), &runs, &scope).unwrap_err();
        assert!(e.0.contains("did not run"), "{e}");
        let e = eval(&parse_expr("y[a]@threads=1").unwrap(), &runs, &scope).unwrap_err();
        assert!(e.0.contains("records no y"), "{e}");
    }

    /// `users=passed`: the most users whose step passed its own checks, as a step and as the
    /// value of `@users` in a row.
    #[test]
    fn passed_is_the_most_that_held_its_checks() {
        let mut r = record(&[
            (&[("users", 3600.into())], &[("s", 1.0)]),
            (&[("users", 6000.into())], &[("s", 2.0)]),
            (&[("users", 8000.into())], &[("s", 3.0)]),
        ]);
        for (s, ok) in r.steps.iter_mut().zip([true, true, false]) {
            s.checks.push(crate::record::Check {
                name: "mail_qos".into(),
                passed: ok,
                ..Default::default()
            });
        }
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        let row = Scope {
            leg: Some("a".into()),
            at: vec![("users".into(), "passed".into())],
            vars: BTreeMap::new(),
        };
        assert_eq!(eval(&parse_expr("s").unwrap(), &runs, &row), Ok(2.0));
        assert_eq!(
            eval(&parse_expr("@users").unwrap(), &runs, &row),
            Ok(6000.0)
        );
        r.steps[0].checks[0].passed = false;
        r.steps[1].checks[0].passed = false;
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        let e = eval(&parse_expr("@users").unwrap(), &runs, &row).unwrap_err();
        assert!(e.0.contains("passed its checks"), "{e}");
    }

    /// On a leg that searched the users, `passed` is the search's answer: a step that held
    /// its checks at 100% of its load but not at 120% did not qualify.
    #[test]
    fn passed_on_a_search_is_the_users_supported() {
        let mut r = record(&[
            (
                &[("users", 4000.into()), ("load_pct", 100.into())],
                &[("s", 1.0)],
            ),
            (
                &[("users", 8000.into()), ("load_pct", 100.into())],
                &[("s", 2.0)],
            ),
            (
                &[("users", 8000.into()), ("load_pct", 120.into())],
                &[("s", 3.0)],
            ),
        ]);
        for (s, ok) in r.steps.iter_mut().zip([true, true, false]) {
            s.checks.push(crate::record::Check {
                name: "mail_qos".into(),
                passed: ok,
                ..Default::default()
            });
        }
        r.search = Some(crate::record::search::Search {
            axis: "users".into(),
            supported: Some(4000.0),
            ..Default::default()
        });
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        let row = Scope {
            leg: Some("a".into()),
            at: vec![
                ("users".into(), "passed".into()),
                ("load_pct".into(), "100".into()),
            ],
            vars: BTreeMap::new(),
        };
        assert_eq!(
            eval(&parse_expr("@users").unwrap(), &runs, &row),
            Ok(4000.0)
        );
        assert_eq!(eval(&parse_expr("s").unwrap(), &runs, &row), Ok(1.0));
        r.search.as_mut().unwrap().supported = None;
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        assert!(eval(&parse_expr("@users").unwrap(), &runs, &row).is_err());
    }

    #[test]
    fn peak_groups_and_shares_of_the_machine() {
        let mut r = record(&[
            (&[("threads", 1.into())], &[("x", 10.0)]),
            (&[("threads", 4.into())], &[("x", 30.0)]),
            (&[("threads", 8.into())], &[("x", 90.0)]),
        ]);
        r.env.cpu.logical_cpus = Some(8);
        // Throughput peaks at 4 clients; 8 is past the peak.
        for (s, ops) in r.steps.iter_mut().zip([100.0, 300.0, 250.0]) {
            s.trials[0].ops_per_sec = ops;
        }
        r.steps[1].trials[0]
            .groups
            .push(crate::record::GroupResult {
                by: "kind".into(),
                key: "new_order".into(),
                latency: crate::record::LatencySummary {
                    p90_ns: 7000,
                    ..Default::default()
                },
                ..Default::default()
            });
        let runs: Runs = [("a".to_string(), &r)].into_iter().collect();
        let scope = Scope::default();
        let x = |t: &str| eval(&parse_expr(t).unwrap(), &runs, &scope);
        assert_eq!(x("x[a]@threads=peak"), Ok(30.0));
        assert_eq!(x("x[a]@threads=max"), Ok(90.0));
        assert_eq!(x("latency_p90_ns(kind=new_order)[a]@threads=4"), Ok(7000.0));
        let e = x("latency_p90_ns(kind=payment)[a]@threads=4").unwrap_err();
        assert!(e.0.contains("group kind=payment"), "{e}");
        // Half of this machine's 8 CPUs; an eighth is 1 client.
        let half = Scope {
            leg: Some("a".into()),
            at: vec![("threads".into(), "{= 0.5 * {cpus}}".into())],
            vars: BTreeMap::new(),
        };
        assert_eq!(
            eval(&parse_expr("x / @threads").unwrap(), &runs, &half),
            Ok(7.5)
        );
        assert_eq!(x("x[a]@threads={cpus}"), Ok(90.0));
        assert!(parse_expr("x(kind=)").is_err());
    }

    #[test]
    fn trends_and_all() {
        let r = record(&[
            (
                &[("table", "ten".into()), ("p", "c".into())],
                &[("t", 92.0)],
            ),
            (
                &[("table", "ten".into()), ("p", "t".into())],
                &[("t", 10.0)],
            ),
            (
                &[("table", "thousand".into()), ("p", "c".into())],
                &[("t", 14.0)],
            ),
            (
                &[("table", "thousand".into()), ("p", "t".into())],
                &[("t", 10.0)],
            ),
        ]);
        let runs: Runs = [("scan".to_string(), &r)].into_iter().collect();
        let scope = Scope {
            leg: Some("scan".into()),
            ..Default::default()
        };
        let v = decide(
            &parse_check("falling(t@p=c / t@p=t over table)").unwrap(),
            &runs,
            &scope,
        )
        .unwrap();
        assert!(v.passed, "{}", v.numbers);
        assert!(v.numbers.contains("table=ten: 9.2"), "{}", v.numbers);
        let v = decide(
            &parse_check("rising(t@p=c / t@p=t over table)").unwrap(),
            &runs,
            &scope,
        )
        .unwrap();
        assert!(!v.passed);

        let q = record(&[
            (&[("iodepth", 1.into())], &[("ios_in_flight", 0.99)]),
            (&[("iodepth", 32.into())], &[("ios_in_flight", 26.9)]),
        ]);
        let runs: Runs = [("qd".to_string(), &q)].into_iter().collect();
        let v = decide(
            &parse_check("all(ios_in_flight[qd] / @iodepth >= 0.9 over iodepth)").unwrap(),
            &runs,
            &Scope::default(),
        )
        .unwrap();
        assert!(!v.passed);
        assert!(
            v.numbers.contains("iodepth=32: 0.84 >= 0.90 (fails)"),
            "{}",
            v.numbers
        );
    }

    #[test]
    fn sublinear_compares_growth_with_the_parameter() {
        let r = record(&[
            (&[("threads", 1.into())], &[("b", 100.0)]),
            (&[("threads", 4.into())], &[("b", 250.0)]),
        ]);
        let runs: Runs = [("t".to_string(), &r)].into_iter().collect();
        let c = parse_check("sublinear(b[t] over threads)").unwrap();
        assert!(decide(&c, &runs, &Scope::default()).unwrap().passed);
        let c = parse_check("falling(b[t] / @threads over threads)").unwrap();
        assert!(decide(&c, &runs, &Scope::default()).unwrap().passed);
        let m = parse_expr("mean(b[t] over threads in 1..2)").unwrap();
        assert_eq!(eval(&m, &runs, &Scope::default()), Ok(100.0));
        let m = parse_expr("mean(b[t] over threads)").unwrap();
        assert_eq!(eval(&m, &runs, &Scope::default()), Ok(175.0));
    }
}
