//! Reading a study file (TOML) into a [`Study`], validated whole: every key is known, every
//! leg's options are its command's long options with values of the right kind, every
//! expression parses, every reference names a leg. The first problem is one line naming the
//! file and line (`gray.toml:42: leg 'ramp': perflab io has no option --depth; did you mean
//! --iodepth?`).
//!
//! The format is documented in `docs/studies.md`; in short:
//!
//! ```toml
//! [study]            # name, title, seed, source, question
//! [defaults]         # long options for every leg whose command takes them
//! [quick]            # long options that --quick puts over the legs' own
//! [[leg]]            # name, command, about, lines, external, needs, quick = {..}, and options
//! [[paper]]          # one published value: leg, at, what, here, value, unit, line, quote, erratum
//! [[table]]          # a published table in its shape: leg, columns, [[table.row]]s
//! [[shape]]          # a shape check: name, check, paper, lines
//! [[figure]]         # legs overlaid: legs, x, y, normalise, expect, paper points
//! [[compare]]        # verdicts between two legs: baseline, candidate
//! ```

use super::expr::{self, Check, Expr};
use super::{
    Column, Compare, Leg, Opt, OptValue, Overlay, Paper, PaperValue, Row, Shape, Study, Table,
};
use crate::workload::kind::by_command;
use toml::de::{DeTable, DeValue};

/// A value of the file with the line it is on.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub line: usize,
    pub v: Val,
}

#[derive(Debug, Clone)]
pub(crate) enum Val {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Node>),
    Table(Vec<(String, Node)>),
}

impl Val {
    fn kind(&self) -> &'static str {
        match self {
            Val::Text(_) => "text",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a number",
            Val::Bool(_) => "true or false",
            Val::List(_) => "a list",
            Val::Table(_) => "a table",
        }
    }
}

/// The placeholders option values may use, filled in for the machine at run time.
pub const PLACEHOLDERS: [&str; 4] = ["{cpus}", "{io_path}", "{postgres}", "{ram}"];

/// Where a study comes from, for messages: `gray-thumper (built in)` or a path.
pub struct Origin<'a> {
    pub name: &'a str,
    pub label: &'a str,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn convert(text: &str, v: &DeValue, start: usize) -> Result<Val, String> {
    Ok(match v {
        DeValue::String(s) => Val::Text(s.to_string()),
        DeValue::Integer(i) => Val::Int(
            i64::from_str_radix(i.as_str(), i.radix())
                .map_err(|_| format!("{}: integer out of range", line_of(text, start)))?,
        ),
        DeValue::Float(f) => Val::Float(
            f.as_str()
                .replace('_', "")
                .parse()
                .map_err(|_| format!("{}: bad number", line_of(text, start)))?,
        ),
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(_) => {
            return Err(format!(
                "{}: a date is not a value here; quote it",
                line_of(text, start)
            ));
        }
        DeValue::Array(a) => Val::List(
            a.iter()
                .map(|n| {
                    Ok(Node {
                        line: line_of(text, n.span().start),
                        v: convert(text, n.get_ref(), n.span().start)?,
                    })
                })
                .collect::<Result<_, String>>()?,
        ),
        DeValue::Table(t) => Val::Table(table(text, t)?),
    })
}

fn table(text: &str, t: &DeTable) -> Result<Vec<(String, Node)>, String> {
    t.iter()
        .map(|(k, v)| {
            Ok((
                k.get_ref().to_string(),
                Node {
                    line: line_of(text, k.span().start),
                    v: convert(text, v.get_ref(), v.span().start)?,
                },
            ))
        })
        .collect()
}

/// Reads and validates a study. `label` names the file in messages.
pub fn parse(text: &str, origin: &Origin) -> Result<Study, String> {
    let at = |line: usize, msg: String| format!("{}:{line}: {msg}", origin.label);
    let doc = DeTable::parse(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        at(line, e.message().trim().replace('\n', " "))
    })?;
    let top = table(text, doc.get_ref()).map_err(|e| format!("{}:{e}", origin.label))?;
    let r = Reader {
        label: origin.label,
    };
    let mut study = Study {
        name: origin.name.to_string(),
        text: text.to_string(),
        digest: super::digest(text),
        ..Study::default()
    };
    for (key, node) in &top {
        match key.as_str() {
            "study" => r.head(node, &mut study)?,
            "defaults" => study.defaults = r.options(node, "defaults")?,
            "quick" => study.quick = r.options(node, "quick")?,
            "leg" => {
                for n in r.list(node, "leg")? {
                    let leg = r.leg(n)?;
                    if study.legs.iter().any(|l| l.name == leg.name) {
                        return Err(at(n.line, format!("a second leg named '{}'", leg.name)));
                    }
                    study.legs.push(leg);
                }
            }
            "paper" => {
                for n in r.list(node, "paper")? {
                    study.paper.push(r.paper(n)?);
                }
            }
            "table" => {
                for n in r.list(node, "table")? {
                    study.tables.push(r.table(n)?);
                }
            }
            "shape" => {
                for n in r.list(node, "shape")? {
                    study.shapes.push(r.shape(n)?);
                }
            }
            "figure" => {
                for n in r.list(node, "figure")? {
                    study.figures.push(r.overlay(n)?);
                }
            }
            "compare" => {
                for n in r.list(node, "compare")? {
                    study.compare.push(r.compare(n)?);
                }
            }
            "omitted" => {
                for n in r.list(node, "omitted")? {
                    study.omitted.push(r.omitted(n)?);
                }
            }
            other => {
                return Err(at(
                    node.line,
                    format!(
                        "unknown section [{other}]; the sections are study, defaults, quick, leg, paper, table, shape, figure, compare, omitted"
                    ),
                ));
            }
        }
    }
    if study.legs.is_empty() {
        return Err(at(1, "no [[leg]]: a study runs at least one leg".into()));
    }
    if study.title.is_empty() {
        return Err(at(1, "[study] needs a title".into()));
    }
    r.cross_check(&study)?;
    Ok(study)
}

struct Reader<'a> {
    label: &'a str,
}

impl Reader<'_> {
    fn err(&self, line: usize, msg: impl Into<String>) -> String {
        format!("{}:{line}: {}", self.label, msg.into())
    }

    fn list<'n>(&self, node: &'n Node, what: &str) -> Result<&'n [Node], String> {
        match &node.v {
            Val::List(l) => Ok(l),
            _ => Err(self.err(node.line, format!("write [[{what}]] (a list of tables)"))),
        }
    }

    fn entries<'n>(&self, node: &'n Node, what: &str) -> Result<&'n [(String, Node)], String> {
        match &node.v {
            Val::Table(t) => Ok(t),
            other => Err(self.err(
                node.line,
                format!("{what} should be a table, not {}", other.kind()),
            )),
        }
    }

    fn text(&self, key: &str, node: &Node) -> Result<String, String> {
        match &node.v {
            Val::Text(s) => Ok(s.clone()),
            Val::Int(i) => Ok(i.to_string()),
            Val::Float(f) => Ok(f.to_string()),
            other => Err(self.err(
                node.line,
                format!("{key} should be text, not {}", other.kind()),
            )),
        }
    }

    fn number(&self, key: &str, node: &Node) -> Result<f64, String> {
        match &node.v {
            Val::Int(i) => Ok(*i as f64),
            Val::Float(f) => Ok(*f),
            Val::Text(s) => parse_printed(s)
                .ok_or_else(|| self.err(node.line, format!("{key}: {s:?} is not a number"))),
            other => Err(self.err(
                node.line,
                format!("{key} should be a number, not {}", other.kind()),
            )),
        }
    }

    fn flag(&self, key: &str, node: &Node) -> Result<bool, String> {
        match &node.v {
            Val::Bool(b) => Ok(*b),
            other => Err(self.err(
                node.line,
                format!("{key} should be true or false, not {}", other.kind()),
            )),
        }
    }

    fn texts(&self, key: &str, node: &Node) -> Result<Vec<String>, String> {
        match &node.v {
            Val::List(l) => l.iter().map(|n| self.text(key, n)).collect(),
            _ => Ok(vec![self.text(key, node)?]),
        }
    }

    fn at(&self, node: &Node) -> Result<Vec<(String, String)>, String> {
        self.entries(node, "at")?
            .iter()
            .map(|(k, n)| Ok((k.clone(), self.text(k, n)?)))
            .collect()
    }

    fn head(&self, node: &Node, s: &mut Study) -> Result<(), String> {
        for (k, n) in self.entries(node, "[study]")? {
            match k.as_str() {
                "name" => s.name = self.text(k, n)?,
                "title" => s.title = self.text(k, n)?,
                "seed" => s.seed = Some(self.text(k, n)?),
                "source" => s.source = Some(self.text(k, n)?),
                "question" => s.question = self.text(k, n)?,
                _ => {
                    return Err(self.err(
                        n.line,
                        format!(
                            "[study] has no key {k}; it takes name, title, seed, source, question"
                        ),
                    ));
                }
            }
        }
        if super::invalid_name(&s.name) {
            return Err(self.err(
                node.line,
                format!("study name {:?}: letters, digits and '-' only", s.name),
            ));
        }
        Ok(())
    }

    fn options(&self, node: &Node, what: &str) -> Result<Vec<Opt>, String> {
        self.entries(node, what)?
            .iter()
            .map(|(k, n)| self.option(k, n))
            .collect()
    }

    fn option(&self, key: &str, n: &Node) -> Result<Opt, String> {
        let value = match &n.v {
            Val::Bool(b) => OptValue::Flag(*b),
            Val::List(items) => OptValue::Values(
                items
                    .iter()
                    .map(|i| self.text(key, i))
                    .collect::<Result<_, _>>()?,
            ),
            Val::Table(_) => {
                return Err(self.err(
                    n.line,
                    format!("{key}: an option's value is text, a number, true/false or a list"),
                ));
            }
            _ => OptValue::Values(vec![self.text(key, n)?]),
        };
        if let OptValue::Values(vs) = &value {
            for v in vs {
                // `{= EXPR}`: parsed here; its legs are checked against the order of the legs.
                let spans = super::legs::derived_spans(v)
                    .map_err(|e| self.err(n.line, format!("{key}: {e}")))?;
                for &span in &spans {
                    let text = super::legs::derived_text(v, span);
                    let e = expr::parse_expr(text)
                        .map_err(|e| self.err(n.line, format!("{key} = {{= {text}}}: {e}")))?;
                    let _ = e;
                }
                let mut plain = v.clone();
                for &(open, close) in spans.iter().rev() {
                    plain.replace_range(open..close, "");
                }
                let mut rest = plain.as_str();
                while let Some(open) = rest.find('{') {
                    let close = rest[open..].find('}').map(|c| open + c + 1);
                    let Some(close) = close else { break };
                    let word = &rest[open..close];
                    // Only `{name}` is a placeholder: a shell's or awk's braces pass as they are.
                    let named = word.len() > 2
                        && word[1..word.len() - 1]
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c == '_');
                    if named && !PLACEHOLDERS.contains(&word) {
                        return Err(self.err(
                            n.line,
                            format!(
                                "{key}: unknown placeholder {word}; the placeholders are {}",
                                PLACEHOLDERS.join(", ")
                            ),
                        ));
                    }
                    rest = &rest[close..];
                }
            }
        }
        Ok(Opt {
            key: key.to_string(),
            value,
            line: n.line,
        })
    }

    fn leg(&self, node: &Node) -> Result<Leg, String> {
        let mut leg = Leg {
            line: node.line,
            ..Leg::default()
        };
        for (k, n) in self.entries(node, "[[leg]]")? {
            match k.as_str() {
                "name" => leg.name = self.text(k, n)?,
                "command" => leg.command = self.text(k, n)?,
                "about" => leg.about = self.text(k, n)?,
                "lines" => leg.lines = Some(self.text(k, n)?),
                "external" => leg.external = Some(self.text(k, n)?),
                "scaled" => leg.scaled = Some(self.text(k, n)?),
                "time" | "quick-time" => {
                    let t = self.text(k, n)?;
                    let d = crate::vocab::units::parse_duration(k, &t)
                        .map_err(|e| self.err(n.line, e.to_string()))?;
                    leg.time[usize::from(k == "quick-time")] = Some(d);
                }
                "needs" => leg.needs = self.texts(k, n)?,
                "quick" => leg.quick = self.options(n, "quick")?,
                _ => leg.options.push(self.option(k, n)?),
            }
        }
        if leg.name.is_empty() || super::invalid_name(&leg.name) {
            return Err(self.err(
                node.line,
                "every [[leg]] needs a name: letters, digits and '-'",
            ));
        }
        for need in &leg.needs {
            if !super::NEEDS.contains(&need.as_str()) {
                return Err(self.err(
                    node.line,
                    format!(
                        "leg '{}': needs {need:?} is not known; it is one of {}",
                        leg.name,
                        super::NEEDS.join(", ")
                    ),
                ));
            }
        }
        Ok(leg)
    }

    fn expr(&self, key: &str, n: &Node) -> Result<(String, Expr), String> {
        let t = self.text(key, n)?;
        let e =
            expr::parse_expr(&t).map_err(|e| self.err(n.line, format!("{key} = {t:?}: {e}")))?;
        Ok((t, e))
    }

    fn paper(&self, node: &Node) -> Result<Paper, String> {
        let mut p = Paper {
            file_line: node.line,
            ..Paper::default()
        };
        let mut value = None;
        for (k, n) in self.entries(node, "[[paper]]")? {
            match k.as_str() {
                "leg" => p.leg = self.text(k, n)?,
                "at" => p.at = self.at(n)?,
                "what" => p.what = self.text(k, n)?,
                "here" => p.here = Some(self.expr(k, n)?),
                "value" => value = Some((self.text(k, n)?, n.line)),
                "unit" => p.unit = self.text(k, n)?,
                "line" => p.line = self.number(k, n)? as usize,
                "quote" => p.quote = self.text(k, n)?,
                "erratum" => p.erratum = Some(self.text(k, n)?),
                "note" => p.note = Some(self.text(k, n)?),
                "basis" => p.basis = Some(self.text(k, n)?),
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[paper]] has no key {k}; it takes leg, at, what, here, value, unit, basis, line, quote, erratum, note"),
                    ));
                }
            }
        }
        let Some((printed, vline)) = value else {
            return Err(self.err(node.line, "[[paper]] needs a value"));
        };
        p.value = PaperValue::parse(&printed).ok_or_else(|| {
            self.err(
                vline,
                format!("value {printed:?} is not a number or a range A..B"),
            )
        })?;
        p.printed = printed;
        // A seed's line and quote are asked for in cross_check, once the file is known to
        // name a seed: a user's own study quotes nothing.
        for (k, missing) in [("leg", p.leg.is_empty()), ("what", p.what.is_empty())] {
            if missing {
                return Err(self.err(node.line, format!("[[paper]] needs {k}")));
            }
        }
        Ok(p)
    }

    fn table(&self, node: &Node) -> Result<Table, String> {
        let mut t = Table {
            file_line: node.line,
            ..Table::default()
        };
        for (k, n) in self.entries(node, "[[table]]")? {
            match k.as_str() {
                "title" => t.title = self.text(k, n)?,
                "leg" => t.leg = self.text(k, n)?,
                "line" => t.line = self.number(k, n)? as usize,
                "note" => t.note = Some(self.text(k, n)?),
                "base" => t.base = Some(self.text(k, n)?),
                "columns" => {
                    let Val::List(cols) = &n.v else {
                        return Err(self.err(n.line, "columns is a list of { label, unit, here }"));
                    };
                    for c in cols {
                        let mut col = Column::default();
                        for (ck, cn) in self.entries(c, "a column")? {
                            match ck.as_str() {
                                "label" => col.label = self.text(ck, cn)?,
                                "unit" => col.unit = self.text(ck, cn)?,
                                "here" => col.here = Some(self.expr(ck, cn)?),
                                _ => {
                                    return Err(self.err(
                                        cn.line,
                                        format!(
                                            "a column has no key {ck}; it takes label, unit, here"
                                        ),
                                    ));
                                }
                            }
                        }
                        t.columns.push(col);
                    }
                }
                "row" => {
                    for rn in self.list(n, "table.row")? {
                        t.rows.push(self.row(rn)?);
                    }
                }
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[table]] has no key {k}; it takes title, leg, line, note, base, columns, [[table.row]]"),
                    ));
                }
            }
        }
        for r in &t.rows {
            if r.values.len() != t.columns.len() {
                return Err(self.err(
                    r.file_line,
                    format!(
                        "row '{}' has {} values for {} columns",
                        r.label,
                        r.values.len(),
                        t.columns.len()
                    ),
                ));
            }
            for (label, line) in r.errata.keys().map(|k| (k, r.file_line)) {
                if !t.columns.iter().any(|c| &c.label == label) {
                    return Err(self.err(line, format!("erratum for unknown column {label:?}")));
                }
            }
        }
        if t.title.is_empty() || t.leg.is_empty() || t.columns.is_empty() {
            return Err(self.err(node.line, "[[table]] needs a title, a leg and columns"));
        }
        if let Some(b) = &t.base
            && !t.rows.iter().any(|r| &r.label == b)
        {
            return Err(self.err(
                node.line,
                format!(
                    "base = {b:?} is not the label of one of the table's rows ({})",
                    t.rows
                        .iter()
                        .map(|r| r.label.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(t)
    }

    fn row(&self, node: &Node) -> Result<Row, String> {
        let mut r = Row {
            file_line: node.line,
            ..Row::default()
        };
        for (k, n) in self.entries(node, "[[table.row]]")? {
            match k.as_str() {
                "label" => r.label = self.text(k, n)?,
                "leg" => r.leg = Some(self.text(k, n)?),
                "here" => match &n.v {
                    Val::Bool(b) => r.no_here = !b,
                    _ => return Err(self.err(n.line, "here = false: a row with no figures of this machine (another machine's, in a landscape)")),
                },
                "at" => r.at = self.at(n)?,
                "line" => r.line = self.number(k, n)? as usize,
                "quote" => r.quote = self.text(k, n)?,
                "values" => {
                    r.values = self.texts(k, n)?;
                    for v in &r.values {
                        if v != "-" && parse_printed(v).is_none() {
                            return Err(self.err(n.line, format!("value {v:?} is not a number")));
                        }
                    }
                }
                "vars" => {
                    for (vk, vn) in self.entries(n, "vars")? {
                        r.vars.insert(vk.clone(), self.number(vk, vn)?);
                    }
                }
                "errata" => {
                    for (ek, en) in self.entries(n, "errata")? {
                        r.errata.insert(ek.clone(), self.text(ek, en)?);
                    }
                }
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[table.row]] has no key {k}; it takes label, leg, here, at, line, quote, values, vars, errata"),
                    ));
                }
            }
        }
        // A row with no published value (this machine's, beside the paper's) needs no quote.
        let published = r.values.iter().any(|v| v != "-");
        if r.label.is_empty() || (published && (r.line == 0 || r.quote.is_empty())) {
            return Err(self.err(node.line, "a table row needs label, line and quote"));
        }
        Ok(r)
    }

    fn shape(&self, node: &Node) -> Result<Shape, String> {
        let mut s = Shape {
            file_line: node.line,
            ..Shape::default()
        };
        let mut check: Option<Check> = None;
        for (k, n) in self.entries(node, "[[shape]]")? {
            match k.as_str() {
                "name" => s.name = self.text(k, n)?,
                "check" => {
                    let t = self.text(k, n)?;
                    check = Some(
                        expr::parse_check(&t)
                            .map_err(|e| self.err(n.line, format!("check = {t:?}: {e}")))?,
                    );
                    s.text = t;
                }
                "paper" => s.paper = Some(self.text(k, n)?),
                "lines" => s.lines = Some(self.text(k, n)?),
                "leg" => s.leg = Some(self.text(k, n)?),
                "why" => s.why = Some(self.text(k, n)?),
                "sanity" => s.sanity = self.flag(k, n)?,
                "when_not" => s.when_not = Some(self.text(k, n)?),
                "when" => {
                    let t = self.text(k, n)?;
                    let c = expr::parse_check(&t)
                        .map_err(|e| self.err(n.line, format!("when = {t:?}: {e}")))?;
                    s.when = Some((t, c));
                }
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[shape]] has no key {k}; it takes name, check, leg, when, when_not, paper, lines, why, sanity"),
                    ));
                }
            }
        }
        s.check = check.ok_or_else(|| self.err(node.line, "[[shape]] needs a check"))?;
        if s.name.is_empty() {
            return Err(self.err(node.line, "[[shape]] needs a name"));
        }
        Ok(s)
    }

    /// One of the seed's experiments left out: what, its lines, and why.
    fn omitted(&self, node: &Node) -> Result<super::Omitted, String> {
        let mut o = super::Omitted::default();
        for (k, n) in self.entries(node, "[[omitted]]")? {
            match k.as_str() {
                "what" => o.what = self.text(k, n)?,
                "lines" => o.lines = Some(self.text(k, n)?),
                "why" => o.why = self.text(k, n)?,
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[omitted]] has no key {k}; it takes what, lines, why"),
                    ));
                }
            }
        }
        if o.what.is_empty() || o.why.is_empty() {
            return Err(self.err(node.line, "[[omitted]] needs what and why"));
        }
        Ok(o)
    }

    fn overlay(&self, node: &Node) -> Result<Overlay, String> {
        let mut o = Overlay {
            file_line: node.line,
            ..Overlay::default()
        };
        for (k, n) in self.entries(node, "[[figure]]")? {
            match k.as_str() {
                "title" => o.title = self.text(k, n)?,
                "legs" => o.legs = self.texts(k, n)?,
                "x" => o.x = self.text(k, n)?,
                "y" => o.y = Some(self.expr(k, n)?),
                "at" => o.at = self.at(n)?,
                "normalise" => {
                    o.normalise = matches!(n.v, Val::Bool(true));
                }
                "expect" => {
                    let e = self.text(k, n)?;
                    if e != "linear" {
                        return Err(
                            self.err(n.line, "expect: only \"linear\" (in the x parameter)")
                        );
                    }
                    o.expect_linear = true;
                }
                "lines" => o.lines = Some(self.text(k, n)?),
                "paper" => {
                    let Val::List(points) = &n.v else {
                        return Err(self.err(n.line, "paper is a list of [x, y] points"));
                    };
                    for p in points {
                        match &p.v {
                            Val::List(xy) if xy.len() == 2 => o
                                .paper
                                .push((self.number("x", &xy[0])?, self.number("y", &xy[1])?)),
                            _ => return Err(self.err(p.line, "a paper point is [x, y]")),
                        }
                    }
                }
                _ => {
                    return Err(self.err(
                        n.line,
                        format!("[[figure]] has no key {k}; it takes title, legs, x, y, at, normalise, expect, lines, paper"),
                    ));
                }
            }
        }
        if o.title.is_empty() || o.legs.is_empty() || o.x.is_empty() || o.y.is_none() {
            return Err(self.err(node.line, "[[figure]] needs title, legs, x and y"));
        }
        Ok(o)
    }

    fn compare(&self, node: &Node) -> Result<Compare, String> {
        let mut c = Compare {
            file_line: node.line,
            ..Compare::default()
        };
        for (k, n) in self.entries(node, "[[compare]]")? {
            match k.as_str() {
                "baseline" => c.baseline = self.text(k, n)?,
                "candidate" => c.candidate = self.text(k, n)?,
                "question" => c.question = self.text(k, n)?,
                "expect" => {
                    let t = self.text(k, n)?;
                    c.expect = Some(
                        crate::compare::Expectation::parse(&t)
                            .map_err(|e| self.err(n.line, e.to_string()))?,
                    );
                }
                _ => {
                    return Err(self.err(
                        n.line,
                        format!(
                            "[[compare]] has no key {k}; it takes baseline, candidate, question, expect"
                        ),
                    ));
                }
            }
        }
        Ok(c)
    }

    /// What needs the whole file: legs' commands and options, references to legs.
    /// A value computed from other legs (`{= EXPR}`) names only legs that run here before
    /// this one.
    fn derived_from_earlier(&self, s: &Study, leg: &Leg, o: &Opt) -> Result<(), String> {
        let OptValue::Values(vs) = &o.value else {
            return Ok(());
        };
        let position = |name: &str| s.legs.iter().position(|l| l.name == name);
        let me = position(&leg.name).unwrap_or(0);
        for v in vs {
            for span in super::legs::derived_spans(v).unwrap_or_default() {
                let text = super::legs::derived_text(v, span);
                let Ok(e) = expr::parse_expr(text) else {
                    continue;
                };
                let mut legs = Vec::new();
                e.legs(&mut legs);
                for name in legs {
                    let why = match position(&name) {
                        None => Some("no leg has that name".to_string()),
                        Some(i) if i >= me => Some("it must come before this leg".into()),
                        Some(i) if s.legs[i].external.is_some() => {
                            Some("it runs elsewhere, so its figures are not known here".into())
                        }
                        Some(_) => None,
                    };
                    if let Some(why) = why {
                        return Err(self.err(
                            o.line,
                            format!(
                                "leg '{}': {} = {{= {text}}} takes figures of leg '{name}': {why}",
                                leg.name, o.key
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn cross_check(&self, s: &Study) -> Result<(), String> {
        let default_command = s.defaults.iter().find(|o| o.key == "command");
        for leg in &s.legs {
            let command = if leg.command.is_empty() {
                match default_command.map(|o| &o.value) {
                    Some(OptValue::Values(v)) if v.len() == 1 => v[0].clone(),
                    _ => {
                        return Err(self.err(
                            leg.line,
                            format!(
                                "leg '{}' names no command (command = \"io\", ...)",
                                leg.name
                            ),
                        ));
                    }
                }
            } else {
                leg.command.clone()
            };
            let Some(kind) = by_command(&command) else {
                return Err(self.err(
                    leg.line,
                    format!(
                        "leg '{}': {command:?} is not a workload command; they are {}",
                        leg.name,
                        crate::workload::kind::KINDS
                            .iter()
                            .map(|k| k.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            let cmd = kind.command();
            for o in leg.options.iter().chain(&leg.quick) {
                check_option(&cmd, o)
                    .map_err(|m| self.err(o.line, format!("leg '{}': {m}", leg.name)))?;
                self.derived_from_earlier(s, leg, o)?;
            }
        }
        let commands: Vec<clap::Command> = s
            .legs
            .iter()
            .filter_map(|l| by_command(&s.command_of(l)).map(|k| k.command()))
            .collect();
        for o in s.defaults.iter().chain(&s.quick) {
            if o.key == "command" {
                continue;
            }
            let mut errors = Vec::new();
            let mut taken = false;
            for c in &commands {
                match check_option(c, o) {
                    Ok(()) => taken = true,
                    Err(e) if arg_named(c, &o.key).is_some() => errors.push(e),
                    Err(_) => {}
                }
            }
            if let Some(e) = errors.into_iter().next() {
                return Err(self.err(o.line, e));
            }
            if !taken {
                return Err(self.err(o.line, format!("no leg's command takes --{}", o.key)));
            }
        }
        let legs: Vec<&str> = s.legs.iter().map(|l| l.name.as_str()).collect();
        let known = |name: &str, line: usize| -> Result<(), String> {
            if legs.contains(&name) {
                Ok(())
            } else {
                Err(self.err(
                    line,
                    format!("no leg named '{name}'; the legs are {}", legs.join(", ")),
                ))
            }
        };
        for p in &s.paper {
            known(&p.leg, p.file_line)?;
            // A value from a seed says where: the line, and a verbatim piece of it.
            if s.seed.is_some() {
                for (k, missing) in [("line", p.line == 0), ("quote", p.quote.is_empty())] {
                    if missing {
                        return Err(self.err(
                            p.file_line,
                            format!("[[paper]] needs {k}: the study names a seed"),
                        ));
                    }
                }
            }
        }
        for t in &s.tables {
            known(&t.leg, t.file_line)?;
            for r in &t.rows {
                if let Some(l) = &r.leg {
                    known(l, r.file_line)?;
                }
            }
        }
        for sh in &s.shapes {
            let when = sh.when.as_ref().map(|(_, c)| c.legs()).unwrap_or_default();
            for l in sh.check.legs().iter().chain(&when).chain(sh.leg.iter()) {
                known(l, sh.file_line)?;
            }
        }
        for f in &s.figures {
            for l in &f.legs {
                known(l, f.file_line)?;
            }
        }
        for c in &s.compare {
            known(&c.baseline, c.file_line)?;
            known(&c.candidate, c.file_line)?;
        }
        Ok(())
    }
}

/// `cmd`'s option with this long name or alias (`clients` is `threads`).
pub fn arg_named<'c>(cmd: &'c clap::Command, key: &str) -> Option<&'c clap::Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(key) || a.get_all_aliases().is_some_and(|v| v.contains(&key))
    })
}

/// Whether `o` is one of `cmd`'s long options with a value of the right kind.
pub fn check_option(cmd: &clap::Command, o: &Opt) -> Result<(), String> {
    let name = cmd.get_name().to_string();
    let Some(arg) = arg_named(cmd, &o.key) else {
        let close = cmd
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|l| *l != "help")
            .min_by_key(|l| edit_distance(l, &o.key))
            .filter(|l| edit_distance(l, &o.key) <= 3);
        return Err(format!(
            "perflab {name} has no option --{}{}",
            o.key,
            close
                .map(|c| format!("; did you mean --{c}?"))
                .unwrap_or_default()
        ));
    };
    let takes_value = arg.get_action().takes_values();
    match (&o.value, takes_value) {
        (OptValue::Flag(_), false) | (OptValue::Values(_), true) => Ok(()),
        (OptValue::Flag(_), true) => Err(format!("--{} takes a value, not true/false", o.key)),
        (OptValue::Values(_), false) => {
            Err(format!("--{} is a switch: write {} = true", o.key, o.key))
        }
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A number as a paper prints it: `1,746`, `245%`, `4.6K`, `0.12`, `2.14 GB/s` (the unit is
/// the entry's, so only K, M and G scale).
pub fn parse_printed(text: &str) -> Option<f64> {
    if let Some(minutes) = hours_and_minutes(text) {
        return Some(minutes);
    }
    let t = text.trim().replace(',', "");
    let t = t.trim_end_matches('%').trim();
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .unwrap_or(t.len());
    let (num, rest) = t.split_at(num_end);
    let x: f64 = num.parse().ok()?;
    let scale = match rest.trim().chars().next() {
        None => 1.0,
        Some('K') | Some('k') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some(_) => 1.0,
    };
    Some(x * scale)
}

/// A time printed as hours and minutes (`6hr 19min`, `2h 54m`), in minutes.
fn hours_and_minutes(text: &str) -> Option<f64> {
    let t = text.trim().to_ascii_lowercase();
    let (h, rest) = t.split_once('h')?;
    let hours: f64 = h.trim().parse().ok()?;
    let rest = rest.trim_start_matches("rs").trim_start_matches('r').trim();
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let unit = rest[digits.len()..].trim();
    let minutes: f64 = match digits.is_empty() {
        true if unit.is_empty() => 0.0,
        true => return None,
        false => digits.parse().ok()?,
    };
    matches!(unit, "" | "m" | "min" | "mins").then_some(hours * 60.0 + minutes)
}

impl PaperValue {
    /// `9000`, `4.6K`, `20..40`, `6hr 19min` (minutes).
    pub fn parse(text: &str) -> Option<PaperValue> {
        match text.split_once("..") {
            Some((a, b)) => Some(PaperValue::Range(parse_printed(a)?, parse_printed(b)?)),
            None => parse_printed(text).map(PaperValue::One),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_hours_and_minutes_are_minutes() {
        assert_eq!(parse_printed("6hr 19min"), Some(379.0));
        assert_eq!(parse_printed("2h 54m"), Some(174.0));
        assert_eq!(parse_printed("3hr"), Some(180.0));
        assert_eq!(parse_printed("4.6K"), Some(4600.0));
        assert_eq!(hours_and_minutes("6hr apples"), None);
    }

    fn read(text: &str) -> Result<Study, String> {
        parse(
            text,
            &Origin {
                name: "t",
                label: "t.toml",
            },
        )
    }

    const GOOD: &str = r#"
[study]
title = "Random reads over queue depth"
question = "Does the device keep its queue full?"

[defaults]
command = "io"
size = "16m"
duration = "1s"

[quick]
duration = "200ms"

[[leg]]
name = "qd"
rw = "randread"
iodepth = "1,8"
direct = "0"
quick = { iodepth = "1,4" }

[[paper]]
leg = "qd"
at = { iodepth = 8 }
what = "IO/s at 8 deep"
here = "ops_per_sec"
value = "4.6K"
line = 1
quote = "x"

[[shape]]
name = "Little"
check = "all(ios_in_flight[qd] / @iodepth >= 0.5 over iodepth)"
"#;

    #[test]
    fn a_good_file_reads() {
        let s = read(GOOD).unwrap();
        assert_eq!(s.legs.len(), 1);
        assert_eq!(s.legs[0].options.len(), 3);
        assert_eq!(s.paper[0].value, PaperValue::One(4600.0));
        assert_eq!(s.shapes.len(), 1);
    }

    #[test]
    fn a_users_own_values_need_no_quote_but_a_seeds_do() {
        let own = GOOD.replace("line = 1\nquote = \"x\"\n", "");
        let s = read(&own).unwrap();
        assert_eq!(s.paper[0].line, 0);
        let seeded = own.replace("[study]\n", "[study]\nseed = \"000_x.txt\"\n");
        let e = read(&seeded).unwrap_err();
        assert!(
            e.contains("[[paper]] needs line: the study names a seed"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn basis_scale_sanity_time_and_omitted_read() {
        let text = GOOD
            .replace(
                "quick = { iodepth",
                "scaled = \"16 MB\"\ntime = \"2m\"\nquick-time = \"10s\"\nquick = { iodepth",
            )
            .replace("value = \"4.6K\"", "value = \"4.6K\"\nbasis = \"per disk\"")
            .replace("name = \"Little\"", "name = \"Little\"\nsanity = true")
            + "\n[[omitted]]\nwhat = \"the JBOD study\"\nlines = \"49-59\"\nwhy = \"48 disks\"\n";
        let s = read(&text).unwrap();
        assert_eq!(s.legs[0].scaled.as_deref(), Some("16 MB"));
        assert_eq!(
            s.legs[0].time,
            [
                Some(std::time::Duration::from_secs(120)),
                Some(std::time::Duration::from_secs(10))
            ]
        );
        assert_eq!(s.paper[0].basis.as_deref(), Some("per disk"));
        assert!(s.shapes[0].sanity);
        assert_eq!(s.omitted[0].why, "48 disks");
        let e = read(&text.replace("sanity = true", "sanity = \"yes\"")).unwrap_err();
        assert!(e.contains("sanity should be true or false"), "{e}");
        let e = read(&text.replace("why = \"48 disks\"\n", "")).unwrap_err();
        assert!(e.contains("[[omitted]] needs what and why"), "{e}");
    }

    #[test]
    fn every_mistake_is_one_line_with_its_line_number() {
        let cases = [
            (
                "iodepth = \"1,8\"",
                "depth = \"1,8\"",
                "t.toml:17: leg 'qd': perflab io has no option --depth; did you mean --iodepth?",
            ),
            (
                "direct = \"0\"",
                "direct = true",
                "t.toml:18: leg 'qd': --direct takes a value",
            ),
            (
                "leg = \"qd\"\nat",
                "leg = \"nope\"\nat",
                "t.toml:21: no leg named 'nope'",
            ),
            ("[quick]", "[quik]", "t.toml:11: unknown section [quik]"),
            (
                "size = \"16m\"",
                "size = \"{disk}\"",
                "t.toml:8: size: unknown placeholder {disk}",
            ),
            ("over iodepth)", "over)", "t.toml:32: check = "),
            (
                "duration = \"200ms\"",
                "fruit = 1",
                "t.toml:12: no leg's command takes --fruit",
            ),
            (
                "value = \"4.6K\"",
                "value = \"lots\"",
                "t.toml:26: value \"lots\"",
            ),
            ("title = \"Random", "title = Random", "t.toml:3:"),
        ];
        for (from, to, want) in cases {
            assert!(GOOD.contains(from), "{from}");
            let text = GOOD.replacen(from, to, 1);
            let e = read(&text).unwrap_err();
            assert!(
                e.starts_with(want),
                "{from} -> {to}:\n  got  {e}\n  want {want}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn printed_numbers_read_as_the_paper_means_them() {
        assert_eq!(parse_printed("1,746"), Some(1746.0));
        assert_eq!(parse_printed("245%"), Some(245.0));
        assert_eq!(parse_printed("4.6K"), Some(4600.0));
        assert_eq!(parse_printed("0.12"), Some(0.12));
        assert_eq!(parse_printed("lots"), None);
        assert_eq!(
            PaperValue::parse("20..40"),
            Some(PaperValue::Range(20.0, 40.0))
        );
    }
}
