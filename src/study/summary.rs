//! A study's answer as text for the terminal: the legs (with the runs that stand for them,
//! and why a leg failed or did not run), the paper's values beside this machine's, the tables,
//! the efficiencies against linear, the shape checks and the verdicts. The HTML report
//! (`crate::report::study`) draws the same answer, and takes [`seed_line`] and
//! [`efficiency_line`] from here so the two say the same words.

use super::evaluate::{Cell, LegState, Outcome, OverlayOutcome, ShapeResult};
use crate::present::table::Table as TextTable;
use crate::ui::style;
use crate::vocab::numbers::sig3;

/// " (seed line N)", or nothing for a table the seed does not print (a study's own).
pub fn seed_line(line: usize) -> String {
    match line {
        0 => String::new(),
        n => format!(" (seed line {n})"),
    }
}

fn whole_or_sig3(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        sig3(x)
    }
}

/// `Random reads ...: against linear in files: files=1 100%, files=2 64%, files=4 40%`.
pub fn efficiency_line(f: &OverlayOutcome) -> Option<String> {
    (!f.efficiency.is_empty()).then(|| {
        format!(
            "{}: efficiency against linear in {}: {}",
            f.title.split(" (").next().unwrap_or(&f.title),
            f.x,
            f.efficiency
                .iter()
                .map(|(x, e)| format!("{}={} {:.0}%", f.x, whole_or_sig3(*x), e * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn cell_text(c: &Cell) -> [String; 3] {
    let paper = format!(
        "{}{}",
        c.printed,
        if c.erratum.is_some() { "†" } else { "" }
    );
    let here = match &c.here {
        Ok(v) => sig3(*v),
        Err(_) => "-".into(),
    };
    let ratio = c
        .ratio()
        .map(|r| format!("{}x", sig3(r)))
        .unwrap_or_else(|| "-".into());
    [paper, here, ratio]
}

/// The answer in the terminal: the legs, the paper's values beside this machine's, the shape
/// checks.
pub fn summary(a: &Outcome) -> String {
    let mut out = format!("\n{}\n", a.title);
    if !a.question.is_empty() {
        out.push_str(&format!("{}\n", a.question));
    }
    out.push('\n');
    let mut legs = TextTable::new(["leg", "run", "command"].map(String::from).to_vec());
    for l in &a.legs {
        let run = match &l.state {
            LegState::Ran {
                id,
                failed: Some(_),
                ..
            } => format!("{id} FAILED"),
            LegState::Ran {
                id, complete: true, ..
            } => id.clone(),
            LegState::Ran {
                id,
                complete: false,
                ..
            } => format!("{id} (incomplete)"),
            LegState::NotRun(why) => format!("not run: {why}"),
        };
        legs.row(vec![l.name.clone(), run, l.command.clone()]);
    }
    out.push_str(&legs.render());
    for l in &a.legs {
        if let LegState::Ran {
            failed: Some(why), ..
        } = &l.state
        {
            out.push_str(&format!("{} leg {}: {why}\n", style::bad("FAILED"), l.name));
        }
    }
    if !a.paper.is_empty() {
        out.push('\n');
        let mut t = TextTable::new(
            [
                "the paper's figure",
                "paper",
                "here",
                "here/paper",
                "seed line",
            ]
            .map(String::from)
            .to_vec(),
        );
        for p in &a.paper {
            let [_, here, ratio] = cell_text(&p.cell);
            t.row(vec![
                format!(
                    "{} [{}{}]",
                    p.what,
                    p.leg,
                    if p.at.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", p.at)
                    }
                ),
                format!(
                    "{} {}{}",
                    p.cell.printed,
                    p.unit,
                    if p.cell.erratum.is_some() { " †" } else { "" }
                )
                .trim()
                .to_string(),
                here,
                ratio,
                p.line.to_string(),
            ]);
        }
        out.push_str(&t.render());
    }
    for t in &a.tables {
        out.push_str(&format!(
            "\n{}{}: paper | here | here/paper\n",
            t.title,
            seed_line(t.line)
        ));
        let mut head = vec![String::new()];
        head.extend(t.head.iter().cloned());
        let mut tt = TextTable::new(head);
        for (label, _, cells) in &t.rows {
            let mut row = vec![label.clone()];
            row.extend(cells.iter().map(|c| cell_text(c).join(" | ")));
            tt.row(row);
        }
        out.push_str(&tt.render());
    }
    let errata = a.paper.iter().any(|p| p.cell.erratum.is_some())
        || a.tables.iter().any(|t| {
            t.rows
                .iter()
                .any(|r| r.2.iter().any(|c| c.erratum.is_some()))
        });
    if errata {
        out.push_str(
            "† the paper's value does not follow from its own figures (the report says why)\n",
        );
    }
    let efficiencies: Vec<String> = a.figures.iter().filter_map(efficiency_line).collect();
    if !efficiencies.is_empty() {
        out.push('\n');
        for e in efficiencies {
            out.push_str(&format!("{e}\n"));
        }
    }
    if !a.shapes.is_empty() {
        out.push_str("\nshape checks\n");
        for s in &a.shapes {
            let (mark, numbers) = match &s.result {
                ShapeResult::Passed(n) => (style::good("pass"), n.clone()),
                ShapeResult::Failed(n) => (style::bad("FAIL"), n.clone()),
                ShapeResult::NotApplicable(why) => ("n/a ".to_string(), why.clone()),
            };
            out.push_str(&format!("  {mark}  {}: {numbers}\n", s.name));
            if let (ShapeResult::Failed(_), Some(why)) = (&s.result, &s.why) {
                out.push_str(&format!("        why it may fall short: {why}\n"));
            }
        }
    }
    for v in &a.verdicts {
        out.push_str(&format!(
            "\n{}: {}\n",
            v.question,
            crate::view::compare::summary_line(&v.comparison)
        ));
        if let Some(e) = v.expectation() {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
