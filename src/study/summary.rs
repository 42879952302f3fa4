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
    [paper, c.here_text(), c.ratio_text()]
}

/// Columns a terminal line may take: `$COLUMNS` when the shell exports it, else 100. Lines
/// wrap at a space rather than run on (a leg's command line is hundreds of characters).
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|w| *w >= 40)
        .unwrap_or(100)
}

/// `text` wrapped at spaces to `width`, the first line after `first`, the rest indented by
/// `indent` spaces; every line ends in a newline. A word longer than a line stays whole.
pub fn wrap(first: &str, text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut len = first.chars().count();
    let mut empty = true;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if !empty && len + 1 + w > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            len = indent;
            empty = true;
        }
        if !empty {
            line.push(' ');
            len += 1;
        }
        line.push_str(word);
        len += w;
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

fn leg_run(l: &super::evaluate::LegOutcome) -> String {
    match &l.state {
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
    }
}

/// The legs, each with its run (or why not), its scale-down and its command line, wrapped.
fn legs_text(a: &Outcome, w: usize) -> String {
    let mut out = String::new();
    for l in &a.legs {
        out.push_str(&wrap(&format!("{}: ", l.name), &leg_run(l), 4, w));
        if let Some(s) = &l.scaled {
            out.push_str(&wrap("    smaller than the paper: ", s, 6, w));
        }
        if !l.command.is_empty() {
            out.push_str(&wrap("    $ ", &l.command, 6, w));
        }
        if let LegState::Ran {
            failed: Some(why), ..
        } = &l.state
        {
            out.push_str(&wrap(
                &format!("{} leg {}: ", style::bad("FAILED"), l.name),
                why,
                4,
                w,
            ));
        }
    }
    out
}

/// The paper's values, one to a few lines each: what, where, paper, here, their ratio.
fn paper_text(a: &Outcome, w: usize) -> String {
    let mut out = String::new();
    for p in &a.paper {
        let [_, here, ratio] = cell_text(&p.cell);
        let mut text = format!(
            "paper {} {}{}, here {here}, here/paper {ratio} [{}{}] (seed line {})",
            p.cell.printed,
            p.unit,
            if p.cell.erratum.is_some() { " †" } else { "" },
            p.leg,
            if p.at.is_empty() {
                String::new()
            } else {
                format!(" {}", p.at)
            },
            p.line
        );
        if let Some(b) = &p.basis {
            text.push_str(&format!("; counts {b}"));
        }
        if p.cell.at_least {
            text.push_str(&format!(
                "; at least: leg {}'s search passed its largest candidate, so this machine may do more (widen its range)",
                p.leg
            ));
        }
        if p.scaled.is_some() {
            text.push_str(&format!(
                "; leg {} is smaller than the paper's (the legs above say how)",
                p.leg
            ));
        }
        out.push_str(&wrap(&format!("  {}: ", p.what), &text, 6, w));
    }
    out
}

fn tables_text(a: &Outcome) -> String {
    let mut out = String::new();
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
    out
}

fn shapes_text(a: &Outcome, w: usize) -> String {
    let mut out = String::from("\nshape checks\n");
    for s in &a.shapes {
        let (mark, numbers) = match &s.result {
            ShapeResult::Passed(n) => (style::good("pass"), n.clone()),
            ShapeResult::Failed(n) => (style::bad("FAIL"), n.clone()),
            ShapeResult::NotApplicable(why) => ("n/a ".to_string(), why.clone()),
        };
        let own = if s.sanity {
            "perflab's own sanity check: "
        } else {
            ""
        };
        out.push_str(&wrap(
            &format!("  {mark}  "),
            &format!("{own}{}: {numbers}", s.name),
            8,
            w,
        ));
        if let Some(p) = &s.paper {
            out.push_str(&wrap("        the paper: ", p, 10, w));
        }
        if let (ShapeResult::Failed(_), Some(why)) = (&s.result, &s.why) {
            out.push_str(&wrap("        why it may fall short: ", why, 10, w));
        }
    }
    out
}

/// The answer in the terminal: the legs, the paper's values beside this machine's, the shape
/// checks.
pub fn summary(a: &Outcome) -> String {
    let w = width();
    let mut out = String::from("\n");
    out.push_str(&wrap("", &a.title, 0, w));
    if !a.question.is_empty() {
        out.push_str(&wrap("", &a.question, 0, w));
    }
    out.push('\n');
    out.push_str(&legs_text(a, w));
    if !a.paper.is_empty() {
        out.push_str("\nthe paper's figures: paper, here, here/paper\n");
        out.push_str(&paper_text(a, w));
    }
    out.push_str(&tables_text(a));
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
            out.push_str(&wrap("", &e, 4, w));
        }
    }
    if !a.shapes.is_empty() {
        out.push_str(&shapes_text(a, w));
    }
    for v in &a.verdicts {
        out.push('\n');
        out.push_str(&wrap(
            &format!("{}: ", v.question),
            &crate::view::compare::summary_line(&v.comparison),
            4,
            w,
        ));
        if let Some(e) = v.expectation() {
            out.push_str(&wrap("  ", &e, 4, w));
        }
    }
    if !a.omitted.is_empty() {
        out.push_str("\nthe seed's experiments not reproduced here\n");
        for o in &a.omitted {
            let lines = o
                .lines
                .as_ref()
                .map(|l| format!(" (lines {l})"))
                .unwrap_or_default();
            out.push_str(&wrap(&format!("  {}{lines}: ", o.what), &o.why, 6, w));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_lines_wrap_at_spaces_and_keep_long_words_whole() {
        let w = wrap("  x: ", "one two three four five six", 4, 14);
        assert_eq!(w, "  x: one two\n    three four\n    five six\n");
        let w = wrap("", "averyveryverylongword b", 2, 8);
        assert_eq!(w, "averyveryverylongword\n  b\n");
        assert!(wrap("", "", 0, 10) == "\n");
    }
}
