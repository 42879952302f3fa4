//! One pgbench client running scripts: a [`Client`] of the OLTP session, so retries,
//! reconnects, timing and the per-type breakdown (one type per script) are the session's.
//!
//! A transaction is one run of one script, chosen by weight as pgbench chooses. The
//! interpreter walks the script's commands: SQL goes to the connection in the run's query
//! mode (`-M simple` writes the variables into the text; `extended` and `prepared` bind
//! them to `$1..$n`, each statement prepared on its first use on a connection), `\set`
//! evaluates, `\sleep` waits (ended early by Ctrl-C), `\shell` and `\setshell` run `sh -c`
//! (killed by Ctrl-C), `\if` blocks branch, `\gset` and `\aset` store columns.
//!
//! On a serialization failure or deadlock the session rolls back and runs the script again
//! with the random state it started with, as pgbench `--max-tries` does.

use super::expr::{Env, EvalError};
use super::parse::{Amount, Part, Script, Sql, Store, What, Word};
use super::prng::{Prng, Seeds};
use super::value::Value;
use super::vars::{Held, Vars};
use crate::record::histogram::{LatencyHistogram, new_histogram};
use crate::sql::query_mode::QueryMode;
use crate::sql::sql::{Answer, Conn, DbError, Dialect, Param, Stmt};
use crate::workload::oltp::client::Client;
use crate::workload::session::GroupTotals;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The scripts of a run and how they run, shared by every client.
#[derive(Debug)]
pub struct ScriptSet {
    pub scripts: Vec<Script>,
    /// Each script's name for the per-type breakdown (made once per run).
    pub kinds: Vec<&'static str>,
    pub mode: QueryMode,
    /// `-D NAME=VALUE`, in order (a later one wins).
    pub defines: Vec<(String, String)>,
    /// `:scale`.
    pub scale: i64,
    /// `:random_seed`, and the seed every client's generators come from.
    pub random_seed: u64,
    /// Tries of a transaction that failed by a serialization failure or deadlock
    /// (`--max-tries`; 0 is no limit).
    pub max_tries: u32,
    /// Time every command (`-r`): each is a group of the step, by `statement`.
    pub per_statement: bool,
}

impl ScriptSet {
    fn total_weight(&self) -> u64 {
        self.scripts.iter().map(|s| s.weight).sum()
    }
}

/// The name a script's figures go under: its file's name, or the builtin's.
pub fn kind_name(script: &Script) -> &'static str {
    // Leaked once per script per run: the breakdown's keys are `&'static str`.
    Box::leak(script.name.clone().into_boxed_str())
}

pub struct ScriptClient {
    set: Arc<ScriptSet>,
    vars: Vars,
    rng: Prng,
    /// The random state the current transaction started with (restored on a retry).
    start_rng: Prng,
    choose: Prng,
    /// The script drawn for the current transaction.
    chosen: usize,
    /// Statements prepared on the current connection, by script and command.
    prepared: Vec<Vec<Option<Stmt>>>,
    dialect: Option<Dialect>,
    answer: Answer,
    text: String,
    scratch: Vec<String>,
    default_seed: i64,
    /// `-r`: each command's count, failures and latency, by script and command.
    timed: Vec<Vec<Timed>>,
    /// The command running, for `debug()`.
    pc: usize,
}

/// One command's figures under `-r`.
struct Timed {
    ops: u64,
    errors: u64,
    latency: LatencyHistogram,
}

impl Timed {
    fn new() -> Timed {
        Timed {
            ops: 0,
            errors: 0,
            latency: new_histogram(),
        }
    }
}

impl ScriptClient {
    /// Client `client_id` of `clients`. Its generators are pgbench's for the run's seed
    /// with one thread per client (`-j` equal to `-c`: perflab runs each client on a thread
    /// of its own), so `--random-seed N` draws what pgbench draws.
    pub fn new(set: Arc<ScriptSet>, client_id: u64, clients: usize) -> ScriptClient {
        let defined = |name: &str| set.defines.iter().any(|(n, _)| n == name);
        let seeds = Seeds::new(
            set.random_seed,
            clients.max(client_id as usize + 1),
            clients.max(client_id as usize + 1),
            defined("default_seed"),
        );
        let mut vars = Vars::default();
        vars.set("client_id", Value::Int(client_id as i64));
        vars.set("scale", Value::Int(set.scale));
        vars.set("random_seed", Value::Int(seeds.random_seed));
        // hash() and permute() read `:default_seed` when given no seed.
        let default_seed = seeds.default_seed.unwrap_or(0);
        if let Some(d) = seeds.default_seed {
            vars.set("default_seed", Value::Int(d));
        }
        for (name, value) in &set.defines {
            vars.set_text(name, value.clone());
        }
        let rng = seeds.clients[client_id as usize].clone();
        let choose = seeds.threads[client_id as usize].choose.clone();
        let prepared = set
            .scripts
            .iter()
            .map(|s| vec![None; s.commands.len()])
            .collect();
        let timed = match set.per_statement {
            false => Vec::new(),
            true => (set.scripts.iter())
                .map(|s| s.commands.iter().map(|_| Timed::new()).collect())
                .collect(),
        };
        ScriptClient {
            pc: 0,
            timed,
            vars,
            start_rng: rng.clone(),
            rng,
            choose,
            chosen: 0,
            prepared,
            dialect: None,
            answer: Answer::default(),
            text: String::new(),
            scratch: Vec::new(),
            default_seed,
            set,
        }
    }

    /// Runs the chosen script once, from its first command to its last.
    fn run_script(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        let set = Arc::clone(&self.set);
        let script = &set.scripts[self.chosen];
        let mut pc = 0;
        while pc < script.commands.len() {
            let started = self.set.per_statement.then(Instant::now);
            let outcome = self.command(conn, script, pc);
            if let Some(started) = started {
                let t = &mut self.timed[self.chosen][pc];
                match &outcome {
                    Ok(_) => {
                        t.ops += 1;
                        let ns = started.elapsed().as_nanos() as u64;
                        let _ = t.latency.record(ns.max(1));
                    }
                    Err(_) => t.errors += 1,
                }
            }
            pc = outcome?;
        }
        if conn.in_transaction() == Some(true) {
            conn.rollback();
            return Err(DbError::other(format!(
                "{}: the script ended inside a transaction (a BEGIN without its END); rolled back",
                script.name
            )));
        }
        Ok(())
    }

    /// Runs command `pc` of `script`; returns the next command's index.
    fn command(
        &mut self,
        conn: &mut dyn Conn,
        script: &Script,
        pc: usize,
    ) -> Result<usize, DbError> {
        self.pc = pc;
        {
            let command = &script.commands[pc];
            let fail = |message: String| {
                DbError::other(format!("{} line {}: {message}", script.name, command.line))
            };
            let pc = match &command.what {
                What::Sql(sql) => {
                    self.statement(conn, pc, sql).map_err(|e| DbError {
                        message: format!(
                            "{} line {} ({}): {}",
                            script.name,
                            command.line,
                            dialect_name(conn.dialect()),
                            e.message
                        ),
                        ..e
                    })?;
                    pc + 1
                }
                What::Set { var, expr } => {
                    let v = expr.eval(self).map_err(|e| fail(e.to_string()))?;
                    self.vars.set(var, v);
                    pc + 1
                }
                What::Sleep { amount, unit_us } => {
                    let n = match amount {
                        Amount::Fixed(n) => *n,
                        Amount::Var(v) => match self.vars.value(v).map_err(fail)? {
                            Value::Int(n) => n,
                            other => {
                                return Err(fail(format!(
                                    "\\sleep: {v} is {other}, not an integer"
                                )));
                            }
                        },
                    };
                    let us = n.saturating_mul(*unit_us).max(0) as u64;
                    conn.stop().sleep(Duration::from_micros(us));
                    pc + 1
                }
                What::Shell { words } => {
                    let line = self.shell_line(words).map_err(fail)?;
                    super::shell::run(&line, conn.stop(), false).map_err(fail)?;
                    pc + 1
                }
                What::SetShell { var, words } => {
                    let line = self.shell_line(words).map_err(fail)?;
                    let out = super::shell::run(&line, conn.stop(), true).map_err(fail)?;
                    let n = out.trim().parse::<i64>().map_err(|_| {
                        fail(format!(
                            "\\setshell: {line:?} printed {:?}, not an integer",
                            out.trim()
                        ))
                    })?;
                    self.vars.set(var, Value::Int(n));
                    pc + 1
                }
                What::If { expr, next } => match self.truth(expr).map_err(fail)? {
                    true => pc + 1,
                    false => self.branch(script, *next).map_err(fail)?,
                },
                // Reached in order: a branch above ran.
                What::Elif { end, .. } | What::Else { end } => *end + 1,
                What::Endif => pc + 1,
                What::StartPipeline => {
                    // Its statements are prepared first: nothing is read inside a pipeline.
                    let mut at = pc + 1;
                    while let Some(c) = script.commands.get(at) {
                        match &c.what {
                            What::EndPipeline => break,
                            What::Sql(sql) if self.set.mode != QueryMode::Simple => {
                                self.prepared_statement(conn, at, sql)?;
                            }
                            _ => {}
                        }
                        at += 1;
                    }
                    conn.pipeline_begin().map_err(|e| fail(e.message))?;
                    pc + 1
                }
                What::EndPipeline => {
                    conn.pipeline_end().map_err(|e| DbError {
                        message: format!(
                            "{} line {} ({}): {}",
                            script.name,
                            command.line,
                            dialect_name(conn.dialect()),
                            e.message
                        ),
                        ..e
                    })?;
                    pc + 1
                }
            };
            Ok(pc)
        }
    }

    /// After a false `\if` or `\elif`: the first branch whose condition holds, else the
    /// `\else`, else past the `\endif`.
    fn branch(&mut self, script: &Script, mut at: usize) -> Result<usize, String> {
        loop {
            match &script.commands[at].what {
                What::Elif { expr, next, .. } => match self.truth(expr)? {
                    true => return Ok(at + 1),
                    false => at = *next,
                },
                _ => return Ok(at + 1),
            }
        }
    }

    fn truth(&mut self, expr: &super::expr::Expr) -> Result<bool, String> {
        // pgbench's `\if`: non-zero numbers and true hold; zero, false and NULL do not.
        Ok(match expr.eval(self).map_err(|e| e.to_string())? {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        })
    }

    fn shell_line(&self, words: &[Word]) -> Result<String, String> {
        let mut line = String::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            match w {
                Word::Text(t) => line.push_str(t),
                Word::Var(v) => match self.vars.get(v) {
                    Some(Held::Text(t)) => line.push_str(t),
                    Some(Held::Value(v)) => {
                        let _ = write!(line, "{v}");
                    }
                    None => return Err(format!("undefined variable {v:?}")),
                },
            }
        }
        Ok(line)
    }

    /// One SQL command, in the run's query mode.
    fn statement(&mut self, conn: &mut dyn Conn, pc: usize, sql: &Sql) -> Result<(), DbError> {
        let keep = sql.store.is_some();
        self.answer.reset(keep);
        let simple = self.set.mode == QueryMode::Simple && conn.dialect() != Dialect::Sqlite;
        if simple {
            self.text.clear();
            for part in &sql.parts {
                match part {
                    Part::Text(t) => self.text.push_str(t),
                    // pgbench leaves an undefined variable's name as it is.
                    Part::Var(v) => match self.vars.get(v) {
                        Some(Held::Text(t)) => self.text.push_str(t),
                        Some(Held::Value(v)) => {
                            let _ = write!(self.text, "{v}");
                        }
                        None => {
                            self.text.push(':');
                            self.text.push_str(v);
                        }
                    },
                }
            }
            conn.simple(&self.text, &mut self.answer)?;
        } else {
            let stmt = self.prepared_statement(conn, pc, sql)?;
            // Typed values render into `scratch` first, so the parameters can borrow them.
            self.scratch.clear();
            for v in &sql.params {
                if let Some(Held::Value(x @ (Value::Double(_) | Value::Bool(_) | Value::Null))) =
                    self.vars.get(v)
                {
                    self.scratch.push(x.to_string());
                }
            }
            let mut rendered = self.scratch.iter();
            let params: Vec<Param<'_>> = sql
                .params
                .iter()
                .map(|v| match self.vars.get(v) {
                    None => Param::Null,
                    Some(Held::Text(t)) => Param::Text(t),
                    Some(Held::Value(Value::Int(i))) => Param::Int(i),
                    Some(Held::Value(_)) => Param::Text(rendered.next().map_or("", String::as_str)),
                })
                .collect();
            conn.answer(stmt, &params, &mut self.answer)?;
        }
        if let Some(store) = &sql.store {
            self.store(store)?;
        }
        Ok(())
    }

    /// Command `pc`'s statement as prepared on this connection, prepared on first use.
    fn prepared_statement(
        &mut self,
        conn: &mut dyn Conn,
        pc: usize,
        sql: &Sql,
    ) -> Result<Stmt, DbError> {
        if let Some(s) = self.prepared[self.chosen][pc] {
            return Ok(s);
        }
        let text = match conn.dialect() {
            Dialect::Mysql => question_marks(sql),
            _ => sql.numbered.clone(),
        };
        let s = conn.prepare(&text)?;
        self.prepared[self.chosen][pc] = Some(s);
        Ok(s)
    }

    /// `\gset` (exactly one row) or `\aset` (each row in turn; none stores nothing).
    fn store(&mut self, store: &Store) -> Result<(), DbError> {
        if !store.all && self.answer.rows.len() != 1 {
            return Err(DbError::other(format!(
                "\\gset: expected one row, got {}",
                self.answer.rows.len()
            )));
        }
        let rows = std::mem::take(&mut self.answer.rows);
        for row in &rows {
            for (name, value) in self.answer.columns.iter().zip(row) {
                let var = format!("{}{name}", store.prefix);
                super::parse::check_name(&var)
                    .map_err(|e| DbError::other(format!("\\gset: {e}")))?;
                match value {
                    Some(text) => self.vars.set_text(&var, text.clone()),
                    None => self.vars.set(&var, Value::Null),
                }
            }
        }
        self.answer.rows = rows;
        Ok(())
    }
}

/// The statement with `?` placeholders, for MySQL.
fn question_marks(sql: &Sql) -> String {
    sql.parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.as_str(),
            Part::Var(_) => "?",
        })
        .collect()
}

fn dialect_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "postgres",
        Dialect::Mysql => "mysql",
        Dialect::Sqlite => "sqlite",
    }
}

impl Env for ScriptClient {
    fn var(&mut self, name: &str) -> Result<Value, EvalError> {
        self.vars.value(name).map_err(EvalError)
    }
    fn rng(&mut self) -> &mut Prng {
        &mut self.rng
    }
    fn default_seed(&self) -> i64 {
        self.default_seed
    }
    /// pgbench's line: the script's and the command's numbers, then the value.
    fn debug(&mut self, v: &Value) {
        eprintln!(
            "debug(script={},command={}): {}",
            self.chosen,
            self.pc + 1,
            v.debug_form()
        );
    }
}

impl Client for ScriptClient {
    fn prepare(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        // A new connection: statements are prepared again on first use.
        for p in &mut self.prepared {
            p.iter_mut().for_each(|s| *s = None);
        }
        self.dialect = Some(conn.dialect());
        Ok(())
    }

    fn draw(&mut self) -> &'static str {
        // pgbench's choice: a draw in [0, total weight), then the script it falls in.
        let total = self.set.total_weight().max(1) as i64;
        let mut w = self.choose.range(0, total - 1);
        self.chosen = 0;
        for (i, s) in self.set.scripts.iter().enumerate() {
            w -= s.weight as i64;
            if w < 0 {
                self.chosen = i;
                break;
            }
        }
        self.start_rng = self.rng.clone();
        self.set.kinds[self.chosen]
    }

    fn measuring(&mut self) {
        self.timed
            .iter_mut()
            .flatten()
            .for_each(|t| *t = Timed::new());
    }

    fn groups(&mut self) -> Vec<GroupTotals> {
        let set = Arc::clone(&self.set);
        let mut out = Vec::new();
        for (i, (script, timed)) in set.scripts.iter().zip(&mut self.timed).enumerate() {
            for (command, t) in script.commands.iter().zip(timed.iter_mut()) {
                out.push(GroupTotals {
                    by: "statement",
                    key: format!("{}:{}", i + 1, command.line),
                    label: format!("{} line {}: {}", script.name, command.line, command.shown),
                    ops: t.ops,
                    bytes: 0,
                    errors: t.errors,
                    latency: std::mem::replace(&mut t.latency, new_histogram()),
                    active: None,
                });
            }
        }
        out
    }

    fn run(&mut self, conn: &mut dyn Conn) -> Result<(), DbError> {
        // A retry starts from the random state its first try started from.
        self.rng = self.start_rng.clone();
        self.run_script(conn)
    }

    fn script_index(&self) -> usize {
        self.chosen
    }

    fn max_retries(&self) -> u32 {
        match self.set.max_tries {
            0 => u32::MAX,
            n => n - 1,
        }
    }

    /// pgbench retries serialization failures and deadlocks only.
    fn retries(&self, cause: &str) -> bool {
        matches!(cause, "serialization" | "deadlock")
    }
}
