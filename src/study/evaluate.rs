//! A study's answer from its legs' records: every paper value with this machine's beside it,
//! the paper's tables in their shape, the shape checks decided, the overlays' curves and the
//! verdicts between legs. Only records are read, so an archived study answers the same way
//! later (and on another machine, from imported records).

use super::expr::{self, Missing, Runs, Scope};
use super::{Paper, PaperValue, Study};
use crate::record::RunRecord;
use crate::vocab::numbers::sig3;
use std::collections::BTreeMap;

/// How a leg took part.
#[derive(Debug, Clone, PartialEq)]
pub enum LegState {
    /// Its run: id, whether it completed, and why it failed if it did (a step that failed,
    /// or its kind's checks: `crate::workload::kind::failure_of`).
    Ran {
        id: String,
        complete: bool,
        failed: Option<String>,
    },
    /// Not run here, with the reason (another machine, no PostgreSQL, `--leg`).
    NotRun(String),
}

#[derive(Debug, Clone)]
pub struct LegOutcome {
    pub name: String,
    pub about: String,
    pub lines: Option<String>,
    /// The command line it runs (for a leg run elsewhere: the one to run there).
    pub command: String,
    pub state: LegState,
    pub external: bool,
    /// How the leg is smaller than the paper's experiment, and why.
    pub scaled: Option<String>,
}

/// One cell: the paper's value, this machine's, and their ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub printed: String,
    pub paper: Option<PaperValue>,
    pub here: Result<f64, String>,
    pub erratum: Option<String>,
    /// `here` is a lower bound: its leg searched for the largest value that passes and the
    /// largest candidate passed, so the machine may do more (shown `≥`).
    pub at_least: bool,
}

impl Cell {
    /// `here` as shown: three significant figures, `≥` before a lower bound, `-` for none.
    pub fn here_text(&self) -> String {
        match &self.here {
            Ok(v) if self.at_least => format!("≥ {}", sig3(*v)),
            Ok(v) => sig3(*v),
            Err(_) => "-".into(),
        }
    }

    /// here / paper as shown: `1.12x`, `≥ 1.00x` for a lower bound, `-` for none.
    pub fn ratio_text(&self) -> String {
        match self.ratio() {
            Some(r) if self.at_least => format!("≥ {}x", sig3(r)),
            Some(r) => format!("{}x", sig3(r)),
            None => "-".into(),
        }
    }

    /// here / paper (for a range: 1 inside it, else against the nearer end).
    pub fn ratio(&self) -> Option<f64> {
        let h = *self.here.as_ref().ok()?;
        match self.paper.as_ref()? {
            PaperValue::One(p) if *p != 0.0 => Some(h / p),
            PaperValue::Range(a, b) if h >= *a && h <= *b => Some(1.0),
            PaperValue::Range(a, _) if h < *a && *a != 0.0 => Some(h / a),
            PaperValue::Range(_, b) if *b != 0.0 => Some(h / b),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct PaperRow {
    pub what: String,
    pub leg: String,
    pub at: String,
    pub unit: String,
    pub cell: Cell,
    pub line: usize,
    pub quote: String,
    pub note: Option<String>,
    /// What the value counts (per disk, physical writes, at the peak).
    pub basis: Option<String>,
    /// The leg's scale-down, said beside the value it is compared with.
    pub scaled: Option<String>,
}

#[derive(Debug, Clone)]
pub struct TableOutcome {
    pub title: String,
    pub line: usize,
    pub note: Option<String>,
    /// Column labels with units.
    pub head: Vec<String>,
    /// Row label, its seed line, and a cell per column.
    pub rows: Vec<(String, usize, Vec<Cell>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ShapeResult {
    Passed(String),
    Failed(String),
    /// Cannot be decided here: a leg did not run, a figure is missing.
    NotApplicable(String),
}

#[derive(Debug, Clone)]
pub struct ShapeOutcome {
    pub name: String,
    pub check: String,
    pub paper: Option<String>,
    pub lines: Option<String>,
    pub why: Option<String>,
    /// perflab's own sanity check, not the paper's claim.
    pub sanity: bool,
    pub result: ShapeResult,
}

/// One curve of an overlay.
#[derive(Debug, Clone)]
pub struct Curve {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct OverlayOutcome {
    pub title: String,
    pub x: String,
    pub y: String,
    pub normalised: bool,
    pub lines: Option<String>,
    pub curves: Vec<Curve>,
    /// Linear in x from the first curve's first point, when asked.
    pub expectation: Option<Curve>,
    /// The first curve over the expectation at each x (1 = linear), when there is one.
    pub efficiency: Vec<(f64, f64)>,
    pub paper: Option<Curve>,
}

#[derive(Debug, Clone)]
pub struct Verdict {
    pub question: String,
    pub comparison: crate::compare::PairComparison,
}

impl Verdict {
    /// `expected 2.20x (2.2x), measured 0.76x: 0.35x of the expectation`, when one was set.
    pub fn expectation(&self) -> Option<String> {
        let r = crate::view::compare::ratio;
        self.comparison.expectation.as_ref().map(|e| {
            format!(
                "expected {} ({}), measured {}: {} of the expectation",
                r(e.expected),
                e.basis,
                r(e.measured),
                r(e.relative)
            )
        })
    }
}

/// The whole answer.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub title: String,
    pub question: String,
    pub seed: Option<String>,
    pub source: Option<String>,
    /// The study invocation's id.
    pub run: String,
    pub quick: bool,
    pub legs: Vec<LegOutcome>,
    pub paper: Vec<PaperRow>,
    pub tables: Vec<TableOutcome>,
    pub shapes: Vec<ShapeOutcome>,
    pub figures: Vec<OverlayOutcome>,
    pub verdicts: Vec<Verdict>,
    /// The seed's experiments not reproduced here, each with the reason.
    pub omitted: Vec<super::Omitted>,
}

impl Outcome {
    pub fn failed_shapes(&self) -> usize {
        self.shapes
            .iter()
            .filter(|s| matches!(s.result, ShapeResult::Failed(_)))
            .count()
    }
}

/// What the caller knows beyond the records: each leg's command line and why a leg did not
/// run.
pub struct Inputs<'a> {
    pub run: String,
    pub quick: bool,
    pub records: &'a [RunRecord],
    /// Leg name → its command line (`perflab io ...`).
    pub commands: BTreeMap<String, String>,
    /// Leg name → why it did not run here.
    pub not_run: BTreeMap<String, String>,
}

fn at_text(at: &[(String, String)]) -> String {
    at.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn here_of(p: &Paper, runs: &Runs) -> Result<f64, String> {
    let Some((_, e)) = &p.here else {
        return Err("not comparable here".into());
    };
    let scope = Scope {
        leg: Some(p.leg.clone()),
        at: p.at.clone(),
        vars: BTreeMap::new(),
    };
    expr::eval(e, runs, &scope).map_err(|Missing(m)| m)
}

pub fn evaluate(study: &Study, inputs: &Inputs) -> Outcome {
    // A leg's record: the last completed run of it among the inputs.
    let mut runs: Runs = BTreeMap::new();
    for r in inputs.records {
        if let Some(s) = &r.study {
            runs.insert(s.leg.clone(), r);
        }
    }
    let legs = legs_of(study, inputs, &runs);
    let paper = paper_rows(study, &runs);
    let tables = tables_of(study, &runs);
    let shapes = shapes_of(study, &runs);
    let figures = study.figures.iter().map(|f| overlay(f, &runs)).collect();
    let verdicts = verdicts_of(study, &runs);
    Outcome {
        name: study.name.clone(),
        title: study.title.clone(),
        question: study.question.clone(),
        seed: study.seed.clone(),
        source: study.source.clone(),
        run: inputs.run.clone(),
        quick: inputs.quick,
        legs,
        paper,
        tables,
        shapes,
        figures,
        verdicts,
        omitted: study.omitted.clone(),
    }
}

fn legs_of(study: &Study, inputs: &Inputs, runs: &Runs) -> Vec<LegOutcome> {
    study
        .legs
        .iter()
        .map(|l| LegOutcome {
            name: l.name.clone(),
            about: l.about.clone(),
            lines: l.lines.clone(),
            command: inputs.commands.get(&l.name).cloned().unwrap_or_default(),
            external: l.external.is_some(),
            scaled: l.scaled.clone(),
            state: match runs.get(&l.name) {
                Some(r) => LegState::Ran {
                    id: r.id.clone(),
                    complete: r.status == crate::record::Status::Complete,
                    failed: crate::workload::kind::failure_of(r),
                },
                None => LegState::NotRun(
                    inputs
                        .not_run
                        .get(&l.name)
                        .cloned()
                        .unwrap_or_else(|| "not run in this study run".into()),
                ),
            },
        })
        .collect()
}

fn paper_rows(study: &Study, runs: &Runs) -> Vec<PaperRow> {
    study
        .paper
        .iter()
        .map(|p| PaperRow {
            what: p.what.clone(),
            leg: p.leg.clone(),
            at: at_text(&p.at),
            unit: p.unit.clone(),
            cell: Cell {
                printed: p.printed.clone(),
                paper: Some(p.value.clone()),
                here: here_of(p, runs),
                erratum: p.erratum.clone(),
                at_least: search_at_top(runs, &p.leg),
            },
            line: p.line,
            quote: p.quote.clone(),
            note: p.note.clone(),
            basis: p.basis.clone(),
            scaled: study.leg(&p.leg).and_then(|l| l.scaled.clone()),
        })
        .collect()
}

/// Whether `leg` searched for the largest value that passes and its largest candidate
/// passed: every figure of it is then a lower bound on what the machine does.
fn search_at_top(runs: &Runs, leg: &str) -> bool {
    runs.get(leg)
        .and_then(|r| r.search.as_ref())
        .is_some_and(|s| {
            s.supported.is_some() && s.supported == s.candidates.iter().copied().reduce(f64::max)
        })
}

fn tables_of(study: &Study, runs: &Runs) -> Vec<TableOutcome> {
    let tables = study.tables.iter().map(|t| {
        let table = TableOutcome {
            title: t.title.clone(),
            line: t.line,
            note: t.note.clone(),
            head: t
                .columns
                .iter()
                .map(|c| {
                    if c.unit.is_empty() {
                        c.label.clone()
                    } else {
                        format!("{} ({})", c.label, c.unit)
                    }
                })
                .collect(),
            rows: t
                .rows
                .iter()
                .map(|row| {
                    let scope = Scope {
                        leg: Some(row.leg.clone().unwrap_or_else(|| t.leg.clone())),
                        at: row.at.clone(),
                        vars: row.vars.clone(),
                    };
                    let cells = t
                        .columns
                        .iter()
                        .zip(&row.values)
                        .map(|(c, printed)| Cell {
                            printed: printed.clone(),
                            paper: (printed != "-")
                                .then(|| super::file::parse_printed(printed).map(PaperValue::One))
                                .flatten(),
                            here: match &c.here {
                                _ if row.no_here => Err("another machine's".into()),
                                Some((_, e)) => expr::eval(e, runs, &scope).map_err(|Missing(m)| m),
                                None => Err("not measured".into()),
                            },
                            erratum: row.errata.get(&c.label).cloned(),
                            at_least: !row.no_here
                                && c.here.is_some()
                                && search_at_top(runs, scope.leg.as_deref().unwrap_or_default()),
                        })
                        .collect();
                    (row.label.clone(), row.line, cells)
                })
                .collect(),
        };
        let normalised = t.base.as_ref().and_then(|b| over_base(&table, b));
        std::iter::once(table).chain(normalised)
    });
    tables.flatten().collect()
}

/// A table again with every cell over the base row's in its column, the paper's and here's
/// alike: the landscape "normalised to a base machine" (E25k = 1).
fn over_base(t: &TableOutcome, base: &str) -> Option<TableOutcome> {
    let (_, _, base_cells) = t.rows.iter().find(|(label, _, _)| label == base)?;
    let paper_of = |c: &Cell| match c.paper {
        Some(PaperValue::One(v)) => Some(v),
        _ => None,
    };
    let rows = t
        .rows
        .iter()
        .map(|(label, line, cells)| {
            let cells = cells
                .iter()
                .zip(base_cells)
                .map(|(c, b)| {
                    let paper = match (paper_of(c), paper_of(b)) {
                        (Some(x), Some(y)) if y != 0.0 => Some(x / y),
                        _ => None,
                    };
                    Cell {
                        printed: paper.map_or("-".into(), |v| format!("{v:.3}")),
                        paper: paper.map(PaperValue::One),
                        here: match (&c.here, &b.here, paper_of(b)) {
                            // A row the paper does not print (this machine's) is set on the
                            // paper's scale: over the base's published value, so a reader
                            // sees where this machine stands among the paper's, whether or
                            // not the base's own leg ran here.
                            (Ok(x), _, Some(y)) if c.paper.is_none() && y != 0.0 => Ok(x / y),
                            (Ok(x), Ok(y), _) if *y != 0.0 => Ok(x / y),
                            (Ok(_), Err(_), _) if c.paper.is_none() => {
                                Err("the base row has no figure here".into())
                            }
                            (Err(e), _, _) => Err(e.clone()),
                            (_, Err(e), _) => Err(format!("the base row: {e}")),
                            _ => Err("the base row's figure is 0".into()),
                        },
                        erratum: c.erratum.clone().or_else(|| b.erratum.clone()),
                        // Over the paper's value a bound stays a bound; over another bound
                        // it says nothing either way.
                        at_least: c.at_least && (c.paper.is_none() || !b.at_least),
                    }
                })
                .collect();
            (label.clone(), *line, cells)
        })
        .collect();
    Some(TableOutcome {
        title: format!("{}, each over {base} (= 1)", t.title),
        line: t.line,
        note: Some(format!(
            "every cell divided by the {base} row's in its column: the paper's printed values and this machine's alike; a row the paper does not print (this machine's) is divided by the {base} row's published value, so it stands on the paper's scale"
        )),
        head: t.head.iter().map(|h| format!("{h} / {base}")).collect(),
        rows,
    })
}

fn shapes_of(study: &Study, runs: &Runs) -> Vec<ShapeOutcome> {
    study
        .shapes
        .iter()
        .map(|s| {
            let scope = Scope {
                leg: s.leg.clone(),
                ..Scope::default()
            };
            ShapeOutcome {
                name: s.name.clone(),
                check: s.text.clone(),
                paper: s.paper.clone(),
                lines: s.lines.clone(),
                why: s.why.clone(),
                sanity: s.sanity,
                result: match s
                    .when
                    .as_ref()
                    .map(|(t, c)| (t, expr::decide(c, runs, &scope)))
                {
                    Some((t, Ok(v))) if !v.passed => {
                        ShapeResult::NotApplicable(match &s.when_not {
                            Some(why) => format!(
                                "not applicable here: {why} (applies when {t}; here {})",
                                v.numbers
                            ),
                            None => format!("applies when {t}; here {}", v.numbers),
                        })
                    }
                    Some((_, Err(Missing(m)))) => ShapeResult::NotApplicable(m),
                    _ => match expr::decide(&s.check, runs, &scope) {
                        Ok(v) if v.passed => ShapeResult::Passed(v.numbers),
                        Ok(v) => ShapeResult::Failed(v.numbers),
                        Err(Missing(m)) => ShapeResult::NotApplicable(m),
                    },
                },
            }
        })
        .collect()
}

fn verdicts_of(study: &Study, runs: &Runs) -> Vec<Verdict> {
    study
        .compare
        .iter()
        .filter_map(|c| {
            let (a, b) = (runs.get(&c.baseline)?, runs.get(&c.candidate)?);
            let report = crate::compare::compare(
                &[(*a).clone(), (*b).clone()],
                &crate::compare::Options {
                    noise: 0.02,
                    expect: c.expect,
                },
            );
            Some(Verdict {
                question: if c.question.is_empty() {
                    format!("{} against {}", c.candidate, c.baseline)
                } else {
                    c.question.clone()
                },
                comparison: report.pairs.into_iter().next()?,
            })
        })
        .collect()
}

fn numeric(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
}

fn overlay(f: &super::Overlay, runs: &Runs) -> OverlayOutcome {
    // Validation asks every figure for its y; without one there is nothing to draw.
    let Some((ytext, y)) = f.y.clone() else {
        return OverlayOutcome {
            title: f.title.clone(),
            x: f.x.clone(),
            y: String::new(),
            normalised: f.normalise,
            lines: f.lines.clone(),
            curves: Vec::new(),
            expectation: None,
            efficiency: Vec::new(),
            paper: None,
        };
    };
    let mut curves = Vec::new();
    for leg in &f.legs {
        let Some(r) = runs.get(leg) else { continue };
        let mut pts = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for s in r.steps.iter().filter(|s| !s.trials.is_empty()) {
            let Some(xv) = s.params.get(&f.x) else {
                continue;
            };
            let (Some(x), key) = (numeric(xv), expr::param_text(xv)) else {
                continue;
            };
            if seen.contains(&key)
                || !f
                    .at
                    .iter()
                    .all(|(k, v)| s.params.get(k).is_none_or(|p| expr::param_matches(p, v)))
            {
                continue;
            }
            seen.push(key.clone());
            let mut at = f.at.clone();
            at.push((f.x.clone(), key));
            let scope = Scope {
                leg: Some(leg.clone()),
                at,
                vars: BTreeMap::new(),
            };
            if let Ok(v) = expr::eval(&y, runs, &scope) {
                pts.push((x, v));
            }
        }
        if !pts.is_empty() {
            curves.push(Curve {
                name: leg.clone(),
                points: pts,
            });
        }
    }
    let norm = |pts: &mut Vec<(f64, f64)>| {
        let peak = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max);
        if peak > 0.0 {
            for p in pts.iter_mut() {
                p.1 /= peak;
            }
        }
    };
    let mut paper = (!f.paper.is_empty()).then(|| Curve {
        name: "paper".into(),
        points: f.paper.clone(),
    });
    let expectation = if f.expect_linear {
        curves.first().and_then(|c| {
            let (x0, y0) = *c.points.first()?;
            (x0 > 0.0).then(|| Curve {
                name: format!("linear in {} from {}", f.x, c.name),
                points: c.points.iter().map(|(x, _)| (*x, y0 * x / x0)).collect(),
            })
        })
    } else {
        None
    };
    let mut expectation = expectation;
    let efficiency: Vec<(f64, f64)> = match (curves.first(), &expectation) {
        (Some(c), Some(e)) => c
            .points
            .iter()
            .zip(&e.points)
            .filter(|(_, (_, ey))| *ey > 0.0)
            .map(|((x, y), (_, ey))| (*x, y / ey))
            .collect(),
        _ => Vec::new(),
    };
    if f.normalise {
        // The expectation is drawn against its own curve's peak, so both stay comparable.
        let peak = curves
            .first()
            .map(|c| c.points.iter().map(|p| p.1).fold(0.0_f64, f64::max))
            .unwrap_or(0.0);
        for c in curves.iter_mut() {
            norm(&mut c.points);
        }
        if let Some(e) = expectation.as_mut()
            && peak > 0.0
        {
            for p in e.points.iter_mut() {
                p.1 /= peak;
            }
        }
        if let Some(p) = paper.as_mut() {
            norm(&mut p.points);
        }
    }
    OverlayOutcome {
        title: f.title.clone(),
        x: f.x.clone(),
        y: ytext,
        normalised: f.normalise,
        lines: f.lines.clone(),
        curves,
        expectation,
        efficiency,
        paper,
    }
}
