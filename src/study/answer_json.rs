//! A study's answer as JSON (`perflab study --json`): the legs, the paper's values beside
//! this machine's, the tables, the shape checks with their verdicts, the overlays' curves, the
//! verdicts between legs and the experiments not reproduced. The same answer the terminal
//! summary and the report show, for a program to read; a figure that could not be worked out
//! here is `null` with the reason beside it.

use super::PaperValue;
use super::evaluate::{Cell, LegState, Outcome, ShapeResult};
use serde_json::{Value, json};

fn paper_value(v: &Option<PaperValue>) -> Value {
    match v {
        Some(PaperValue::One(x)) => json!(x),
        Some(PaperValue::Range(a, b)) => json!([a, b]),
        None => Value::Null,
    }
}

fn cell(c: &Cell) -> Value {
    let (here, why) = match &c.here {
        Ok(v) if v.is_finite() => (json!(v), Value::Null),
        Ok(_) => (Value::Null, json!("not a number")),
        Err(e) => (Value::Null, json!(e)),
    };
    json!({
        "printed": c.printed,
        "paper": paper_value(&c.paper),
        "here": here,
        "here_missing": why,
        "here_over_paper": c.ratio().filter(|r| r.is_finite()),
        "erratum": c.erratum,
        "here_at_least": c.at_least,
    })
}

fn legs(a: &Outcome) -> Value {
    a.legs
        .iter()
        .map(|l| {
            let (state, run, why) = match &l.state {
                LegState::Ran {
                    id,
                    failed: Some(w),
                    ..
                } => ("failed", Some(id.clone()), Some(w.clone())),
                LegState::Ran {
                    id, complete: true, ..
                } => ("ran", Some(id.clone()), None),
                LegState::Ran { id, .. } => ("incomplete", Some(id.clone()), None),
                LegState::NotRun(w) => ("not_run", None, Some(w.clone())),
            };
            json!({
                "name": l.name,
                "state": state,
                "run": run,
                "why": why,
                "external": l.external,
                "scaled": l.scaled,
                "lines": l.lines,
                "command": l.command,
            })
        })
        .collect()
}

fn shapes(a: &Outcome) -> Value {
    a.shapes
        .iter()
        .map(|s| {
            let (verdict, numbers) = match &s.result {
                ShapeResult::Passed(n) => ("pass", n),
                ShapeResult::Failed(n) => ("fail", n),
                ShapeResult::NotApplicable(n) => ("not_applicable", n),
            };
            json!({
                "name": s.name,
                "check": s.check,
                "verdict": verdict,
                "numbers": numbers,
                "sanity": s.sanity,
                "paper": s.paper,
                "lines": s.lines,
                "why": s.why,
            })
        })
        .collect()
}

/// The answer as one JSON object.
pub fn answer(a: &Outcome) -> Value {
    json!({
        "name": a.name,
        "title": a.title,
        "question": a.question,
        "seed": a.seed,
        "source": a.source,
        "run": a.run,
        "quick": a.quick,
        "legs": legs(a),
        "paper": a.paper.iter().map(|p| json!({
            "what": p.what,
            "leg": p.leg,
            "at": p.at,
            "unit": p.unit,
            "basis": p.basis,
            "scaled": p.scaled,
            "line": p.line,
            "quote": p.quote,
            "note": p.note,
            "cell": cell(&p.cell),
        })).collect::<Vec<_>>(),
        "tables": a.tables.iter().map(|t| json!({
            "title": t.title,
            "line": t.line,
            "note": t.note,
            "head": t.head,
            "rows": t.rows.iter().map(|(label, line, cells)| json!({
                "label": label,
                "line": line,
                "cells": cells.iter().map(cell).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "shapes": shapes(a),
        "failed_shapes": a.failed_shapes(),
        "figures": a.figures.iter().map(|f| json!({
            "title": f.title,
            "x": f.x,
            "y": f.y,
            "normalised": f.normalised,
            "curves": f.curves.iter().map(|c| json!({"name": c.name, "points": c.points})).collect::<Vec<_>>(),
            "efficiency": f.efficiency,
        })).collect::<Vec<_>>(),
        "verdicts": a.verdicts.iter().map(|v| json!({
            "question": v.question,
            "summary": crate::view::compare::summary_line(&v.comparison),
            "expectation": v.expectation(),
        })).collect::<Vec<_>>(),
        "omitted": a.omitted.iter().map(|o| json!({
            "what": o.what,
            "lines": o.lines,
            "why": o.why,
        })).collect::<Vec<_>>(),
    })
}
