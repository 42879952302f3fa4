//! A document as one self-contained HTML file: inline CSS, inline SVG charts, no script, no
//! font, image or style sheet from anywhere else, so it opens the same offline, attached to
//! a mail, or years later.

use super::{Block, Document, Figure, Section, Table};

/// Escapes text for HTML element content and attribute values (the SVG module's escaping:
/// the same five characters matter in both).
pub use crate::present::svg::escape;

pub const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6473; --rule: #d9dee5; --band: #f5f7fa; --warn: #8a4b00; --warnbg: #fff6e5; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 64px; }
header.doc { border-bottom: 2px solid var(--ink); margin-bottom: 18px; padding-bottom: 10px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 6px; padding-top: 10px; border-top: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 22px 0 6px; color: var(--ink); }
p { margin: 6px 0; }
.sub { color: var(--muted); margin: 0; }
nav.toc { columns: 2 320px; margin: 8px 0 0; padding: 0; list-style: none; font-size: 13px; }
nav.toc a { color: #0b57a4; text-decoration: none; }
ul.findings { margin: 8px 0 12px; padding-left: 18px; }
ul.findings li { margin: 2px 0; }
ul.warnings { margin: 8px 0; padding: 8px 12px 8px 30px; background: var(--warnbg); color: var(--warn); border-left: 3px solid var(--warn); }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 14px 22px; margin: 10px 0; }
figure { margin: 0; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 2px; }
.table { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; caption-side: top; }
th, td { padding: 3px 7px; border-bottom: 1px solid var(--rule); white-space: nowrap; }
th { text-align: left; background: var(--band); font-weight: 600; white-space: normal; vertical-align: bottom; min-width: 3.2em; }
td.n, th.n { text-align: right; }
td.w { white-space: normal; min-width: 22em; }
tbody tr:hover td { background: #f0f5fb; }
details { margin: 8px 0; }
summary { cursor: pointer; color: #0b57a4; }
pre { background: var(--band); padding: 10px; overflow-x: auto; font-size: 12px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { .figures { grid-template-columns: 1fr 1fr; } h2 { break-before: page; } }
"#;

/// The whole file.
pub fn render(doc: &Document) -> String {
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(&doc.title)));
    out.push_str("<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main>\n<header class=\"doc\">\n");
    out.push_str(&format!("<h1>{}</h1>\n", escape(&doc.title)));
    out.push_str(&format!("<p class=\"sub\">{}</p>\n", escape(&doc.subtitle)));
    if doc.sections.len() > 1 {
        out.push_str("<nav class=\"toc\">\n");
        for s in &doc.sections {
            out.push_str(&format!(
                "<li><a href=\"#{}\">{}</a></li>\n",
                escape(&s.id),
                escape(&s.title)
            ));
        }
        out.push_str("</nav>\n");
    }
    out.push_str("</header>\n");
    for s in &doc.sections {
        section(&mut out, s);
    }
    out.push_str(&format!(
        "<footer>Written by perflab {} from archived records; every figure is in the runs' run.json files.</footer>\n",
        escape(env!("CARGO_PKG_VERSION"))
    ));
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn section(out: &mut String, s: &Section) {
    out.push_str(&format!(
        "<section id=\"{}\">\n<h2>{}</h2>\n",
        escape(&s.id),
        escape(&s.title)
    ));
    // Consecutive figures share one grid, so charts sit side by side on wide screens.
    let mut in_grid = false;
    for b in &s.blocks {
        let is_figure = matches!(b, Block::Figure(_));
        if is_figure && !in_grid {
            out.push_str("<div class=\"figures\">\n");
            in_grid = true;
        } else if !is_figure && in_grid {
            out.push_str("</div>\n");
            in_grid = false;
        }
        match b {
            Block::Heading(t) => out.push_str(&format!("<h3>{}</h3>\n", escape(t))),
            Block::Paragraph(t) => out.push_str(&format!("<p>{}</p>\n", escape(t))),
            Block::Findings(lines) => list(out, "findings", lines),
            Block::Warnings(lines) => list(out, "warnings", lines),
            Block::Figure(f) => figure(out, f),
            Block::Table(t) => table(out, t),
            Block::Details { summary, text } => out.push_str(&format!(
                "<details><summary>{}</summary><pre>{}</pre></details>\n",
                escape(summary),
                escape(text)
            )),
        }
    }
    if in_grid {
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

fn list(out: &mut String, class: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("<ul class=\"{class}\">\n"));
    for l in lines {
        out.push_str(&format!("<li>{}</li>\n", escape(l)));
    }
    out.push_str("</ul>\n");
}

fn figure(out: &mut String, f: &Figure) {
    out.push_str(&format!("<figure id=\"fig-{}\">\n", escape(&f.name)));
    out.push_str(&f.svg);
    out.push_str(&format!(
        "\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(&f.caption)
    ));
}

fn table(out: &mut String, t: &Table) {
    if t.rows.is_empty() {
        return;
    }
    let numeric: Vec<bool> = (0..t.head.len()).map(|i| t.numeric(i)).collect();
    // Text columns with long cells (a description, a verdict's numbers) wrap; the others
    // stay on one line, so numbers line up.
    let long: Vec<bool> = (0..t.head.len())
        .map(|i| {
            !numeric[i]
                && t.rows
                    .iter()
                    .any(|r| r.get(i).is_some_and(|c| c.chars().count() > 60))
        })
        .collect();
    let class = |i: usize| match (numeric[i], long[i]) {
        (true, _) => " class=\"n\"",
        (false, true) => " class=\"w\"",
        (false, false) => "",
    };
    out.push_str("<div class=\"table\"><table>\n");
    if let Some(c) = &t.caption {
        out.push_str(&format!("<caption>{}</caption>\n", escape(c)));
    }
    out.push_str("<thead><tr>");
    for (i, h) in t.head.iter().enumerate() {
        out.push_str(&format!("<th{}>{}</th>", class(i), escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for i in 0..t.head.len() {
            let cell = row.get(i).map(String::as_str).unwrap_or("");
            out.push_str(&format!("<td{}>{}</td>", class(i), escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_nothing_is_fetched() {
        let doc = Document {
            title: "a <b> & \"c\"".into(),
            subtitle: "s".into(),
            sections: vec![Section {
                id: "x".into(),
                title: "<script>".into(),
                blocks: vec![
                    Block::Paragraph("1 < 2".into()),
                    Block::Table(Table {
                        caption: None,
                        head: vec!["name".into(), "value".into()],
                        rows: vec![vec!["a&b".into(), "12 ms".into()]],
                    }),
                ],
            }],
        };
        let html = render(&doc);
        assert!(html.contains("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("<td class=\"n\">12 ms</td>"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }
}
