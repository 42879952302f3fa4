//! A study in a report, read like the paper's section: the question; the legs and how each
//! ran; the paper's tables in their own shape with every cell as paper | here | ratio; the
//! paper's other figures beside this machine's; the legs overlaid (normalised to their own
//! peak where thirty years of hardware cannot compare), with the naive expectation; the shape
//! checks with their numbers; the verdicts between legs; and, for a leg that runs elsewhere,
//! the command to run there and how to bring its record back. Each leg's run follows in its
//! own section, with what limited each step.

use super::{Block, Figure, Section, Table};
use crate::present::svg::{Axis, LineChart, Point, Scale, Series, Style};
use crate::study::evaluate::{Cell, LegState, Outcome, ShapeResult};
use crate::vocab::numbers::sig3;

fn cell(c: &Cell) -> String {
    let paper = format!(
        "{}{}",
        c.printed,
        if c.erratum.is_some() { "†" } else { "" }
    );
    format!("{paper} | {} | {}", c.here_text(), c.ratio_text())
}

pub fn sections(a: &Outcome) -> Vec<Section> {
    let mut blocks = Vec::new();
    if !a.question.is_empty() {
        blocks.push(Block::Paragraph(format!("The question: {}", a.question)));
    }
    let mut source = Vec::new();
    if let Some(s) = &a.source {
        source.push(s.clone());
    }
    if let Some(s) = &a.seed {
        source.push(format!("Seed file {s}; line numbers below are that file's"));
    }
    if a.quick {
        source.push(
            "run with --quick: short legs on small data, for the shapes rather than the figures"
                .into(),
        );
    }
    if !source.is_empty() {
        blocks.push(Block::Paragraph(source.join(". ") + "."));
    }

    let mut found: Vec<String> = Vec::new();
    let (mut pass, mut fail, mut na) = (0, 0, 0);
    for s in &a.shapes {
        match s.result {
            ShapeResult::Passed(_) => pass += 1,
            ShapeResult::Failed(_) => fail += 1,
            ShapeResult::NotApplicable(_) => na += 1,
        }
    }
    if !a.shapes.is_empty() {
        found.push(format!(
            "shape checks: {pass} pass, {fail} fail, {na} not decidable here"
        ));
    }
    let ran = a
        .legs
        .iter()
        .filter(|l| matches!(l.state, LegState::Ran { .. }))
        .count();
    found.push(format!("{ran} of {} legs ran here", a.legs.len()));
    blocks.push(Block::Findings(found));

    blocks.push(legs_table(a));
    blocks.push(Block::Details {
        summary: "each leg's command line".into(),
        text: a
            .legs
            .iter()
            .map(|l| format!("# {}\n{}\n", l.name, l.command))
            .collect::<Vec<_>>()
            .join("\n"),
    });
    table_blocks(a, &mut blocks);
    paper_table(a, &mut blocks);
    for (i, f) in a.figures.iter().enumerate() {
        if let Some(fig) = overlay(f, i) {
            blocks.push(Block::Figure(fig));
        }
    }
    let efficiencies: Vec<String> = a
        .figures
        .iter()
        .filter_map(crate::study::summary::efficiency_line)
        .collect();
    if !efficiencies.is_empty() {
        blocks.push(Block::Findings(efficiencies));
    }

    shape_table(a, &mut blocks);
    if !a.verdicts.is_empty() {
        blocks.push(Block::Findings(
            a.verdicts
                .iter()
                .map(|v| {
                    let mut line = format!(
                        "{}: {}",
                        v.question,
                        crate::view::compare::summary_line(&v.comparison)
                    );
                    if let Some(s) = v.comparison.headline_speedup {
                        line.push_str(&format!("; headline {}", crate::view::compare::ratio(s)));
                    }
                    if let Some(e) = v.expectation() {
                        line.push_str(&format!("; {e}"));
                    }
                    line
                })
                .collect(),
        ));
    }

    let elsewhere: Vec<String> = a
        .legs
        .iter()
        .filter(|l| l.external || matches!(l.state, LegState::NotRun(_)))
        .filter(|l| !matches!(l.state, LegState::Ran { .. }))
        .map(|l| {
            format!(
                "{}: {}; then copy its run.json here and 'perflab import RUN.json --study {} --leg {}' to put it in its place",
                l.name,
                if l.command.is_empty() { "(no command)".to_string() } else { l.command.clone() },
                a.run,
                l.name
            )
        })
        .collect();
    if !elsewhere.is_empty() {
        blocks.push(Block::Heading("Legs to run elsewhere".into()));
        blocks.push(Block::Findings(elsewhere));
    }
    if !a.omitted.is_empty() {
        blocks.push(Block::Heading(
            "The seed's experiments not reproduced here".into(),
        ));
        blocks.push(Block::Findings(
            a.omitted
                .iter()
                .map(|o| match &o.lines {
                    Some(l) => format!("{} (lines {l}): {}", o.what, o.why),
                    None => format!("{}: {}", o.what, o.why),
                })
                .collect(),
        ));
    }

    vec![Section {
        id: format!("study-{}", a.name),
        title: format!("Study {}: {}", a.name, a.title),
        blocks,
    }]
}

fn legs_table(a: &Outcome) -> Block {
    Block::Table(Table {
        caption: Some("the legs".into()),
        head: ["leg", "run", "seed lines", "what it measures"]
            .map(String::from)
            .to_vec(),
        rows: a
            .legs
            .iter()
            .map(|l| {
                let (run, about) = match &l.state {
                    LegState::Ran {
                        id,
                        failed: Some(why),
                        ..
                    } => (
                        format!("{id} (failed)"),
                        format!("{} (failed: {why})", l.about),
                    ),
                    LegState::Ran { id, complete, .. } => (
                        format!("{id}{}", if *complete { "" } else { " (incomplete)" }),
                        match &l.scaled {
                            Some(s) => format!("{} (smaller than the paper: {s})", l.about),
                            None => l.about.clone(),
                        },
                    ),
                    LegState::NotRun(why) => (
                        "not run".to_string(),
                        format!("{} (not run: {why})", l.about),
                    ),
                };
                vec![
                    l.name.clone(),
                    run,
                    l.lines.clone().unwrap_or_default(),
                    about,
                ]
            })
            .collect(),
    })
}

fn table_blocks(a: &Outcome, blocks: &mut Vec<Block>) {
    for t in &a.tables {
        let mut head = vec![String::new()];
        head.extend(t.head.iter().cloned());
        head.push("seed line".into());
        blocks.push(Block::Table(Table {
            caption: Some(format!(
                "{}{}: each cell paper | here | here/paper",
                t.title,
                crate::study::summary::seed_line(t.line)
            )),
            head,
            rows: t
                .rows
                .iter()
                .map(|(label, line, cells)| {
                    let mut r = vec![label.clone()];
                    r.extend(cells.iter().map(cell));
                    // A row with no published value (this machine's) has no seed line.
                    r.push(if *line == 0 {
                        "-".into()
                    } else {
                        line.to_string()
                    });
                    r
                })
                .collect(),
        }));
        let errata: Vec<String> = t
            .rows
            .iter()
            .flat_map(|(label, _, cells)| {
                cells.iter().zip(&t.head).filter_map(move |(c, h)| {
                    c.erratum
                        .as_ref()
                        .map(|e| format!("† {label}, {h}: printed {}; {e}", c.printed))
                })
            })
            .collect();
        if let Some(n) = &t.note {
            blocks.push(Block::Paragraph(n.clone()));
        }
        if !errata.is_empty() {
            blocks.push(Block::Findings(errata));
        }
    }
}

fn paper_table(a: &Outcome, blocks: &mut Vec<Block>) {
    if !a.paper.is_empty() {
        blocks.push(Block::Table(Table {
            caption: Some("the paper's figures beside this machine's".into()),
            head: [
                "figure",
                "leg, step",
                "paper",
                "here",
                "here/paper",
                "seed line",
            ]
            .map(String::from)
            .to_vec(),
            rows: a
                .paper
                .iter()
                .map(|p| {
                    let here = match &p.cell.here {
                        Ok(_) => p.cell.here_text(),
                        Err(why) => format!("- ({why})"),
                    };
                    vec![
                        p.what.clone(),
                        format!("{} {}", p.leg, p.at).trim().to_string(),
                        format!("{} {}", p.cell.printed, p.unit).trim().to_string(),
                        here,
                        p.cell.ratio_text(),
                        format!(
                            "{}{}",
                            p.line,
                            if p.cell.erratum.is_some() { " †" } else { "" }
                        ),
                    ]
                })
                .collect(),
        }));
        let notes: Vec<String> = a
            .paper
            .iter()
            .filter_map(|p| {
                let mut n = Vec::new();
                if let Some(e) = &p.cell.erratum {
                    n.push(format!("† erratum: {e}"));
                }
                if let Some(b) = &p.basis {
                    n.push(format!("counts {b}"));
                }
                if let Some(x) = &p.note {
                    n.push(x.clone());
                }
                if let Some(x) = &p.scaled {
                    n.push(format!("the leg is smaller than the paper's: {x}"));
                }
                if p.cell.at_least {
                    n.push(format!(
                        "at least: leg {}'s search passed its largest candidate, so this machine may do more (widen its range)",
                        p.leg
                    ));
                }
                (!n.is_empty()).then(|| format!("{} ({}): {}", p.what, p.line, n.join("; ")))
            })
            .collect();
        if !notes.is_empty() {
            blocks.push(Block::Findings(notes));
        }
        blocks.push(Block::Details {
            summary: "the paper's words, line by line".into(),
            text: a
                .paper
                .iter()
                .map(|p| {
                    format!(
                        "line {}: \u{201c}{}\u{201d} ({})",
                        p.line,
                        p.quote.trim(),
                        p.what
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        });
    }
}

fn shape_table(a: &Outcome, blocks: &mut Vec<Block>) {
    if !a.shapes.is_empty() {
        blocks.push(Block::Table(Table {
            caption: Some(
                "shape checks: the paper's claims that should hold on any machine".into(),
            ),
            head: ["check", "verdict", "the paper", "numbers here"]
                .map(String::from)
                .to_vec(),
            rows: a
                .shapes
                .iter()
                .map(|s| {
                    let (verdict, numbers) = match &s.result {
                        ShapeResult::Passed(n) => ("pass".to_string(), n.clone()),
                        ShapeResult::Failed(n) => (
                            "FAIL".to_string(),
                            match &s.why {
                                Some(w) => format!("{n} (why it may fall short: {w})"),
                                None => n.clone(),
                            },
                        ),
                        ShapeResult::NotApplicable(why) => {
                            ("not decidable here".to_string(), why.clone())
                        }
                    };
                    let paper = match (&s.paper, &s.lines) {
                        (Some(p), Some(l)) => format!("{p} (lines {l})"),
                        (Some(p), None) => p.clone(),
                        (None, Some(l)) => format!("lines {l}"),
                        (None, None) => String::new(),
                    };
                    let name = if s.sanity {
                        format!("{} (perflab's own sanity check, not the paper's)", s.name)
                    } else {
                        s.name.clone()
                    };
                    vec![name, verdict, paper, numbers]
                })
                .collect(),
        }));
        blocks.push(Block::Details {
            summary: "the checks as the study file writes them".into(),
            text: a
                .shapes
                .iter()
                .map(|s| format!("{}: {}", s.name, s.check))
                .collect::<Vec<_>>()
                .join("\n"),
        });
    }
}

fn overlay(f: &crate::study::evaluate::OverlayOutcome, i: usize) -> Option<Figure> {
    if f.curves.is_empty() {
        return None;
    }
    let mut series: Vec<Series> = f
        .curves
        .iter()
        .map(|c| {
            Series::new(
                c.name.clone(),
                Style::LineWithPoints,
                c.points
                    .iter()
                    .map(|(x, y)| {
                        Point::new(
                            *x,
                            *y,
                            format!("{} {}={}: {}", c.name, f.x, sig3(*x), sig3(*y)),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    if let Some(e) = &f.expectation {
        series.push(Series::new(
            e.name.clone(),
            Style::Dashed,
            e.points
                .iter()
                .map(|(x, y)| Point::new(*x, *y, format!("expected {}", sig3(*y))))
                .collect(),
        ));
    }
    if let Some(p) = &f.paper {
        series.push(Series::new(
            "the paper",
            Style::Points,
            p.points
                .iter()
                .map(|(x, y)| {
                    Point::new(*x, *y, format!("paper {}={}: {}", f.x, sig3(*x), sig3(*y)))
                })
                .collect(),
        ));
    }
    let y_label = if f.normalised {
        format!("{} / its peak", f.y)
    } else {
        f.y.clone()
    };
    let chart = LineChart {
        title: f.title.clone(),
        x: Axis::new(f.x.clone(), Scale::Linear).with_zero(),
        y: Axis::new(y_label, Scale::Linear).with_zero(),
        series,
        markers: Vec::new(),
        hlines: Vec::new(),
        vlines: Vec::new(),
        width: 720,
        height: 360,
        note: f
            .lines
            .as_ref()
            .map(|l| format!("the paper: seed lines {l}")),
    };
    Some(Figure {
        name: format!("study-figure-{i}"),
        caption: f.title.clone(),
        svg: chart.render(),
    })
}
