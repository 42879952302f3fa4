//! A document as Markdown (GitHub-flavoured tables) with each chart in an SVG file beside it,
//! for READMEs, wikis and pull requests.

use super::{Block, Document, Table};

/// The Markdown text and the figures to write: (path relative to the Markdown file, SVG).
/// `figures_dir` is the folder the SVG files go in, relative to the Markdown file.
pub fn render(doc: &Document, figures_dir: &str) -> (String, Vec<(String, String)>) {
    let mut out = format!("# {}\n\n{}\n", inline(&doc.title), inline(&doc.subtitle));
    let mut files = Vec::new();
    for s in &doc.sections {
        out.push_str(&format!("\n## {}\n", inline(&s.title)));
        for b in &s.blocks {
            out.push('\n');
            match b {
                Block::Heading(t) => out.push_str(&format!("### {}\n", inline(t))),
                Block::Paragraph(t) => out.push_str(&format!("{}\n", inline(t))),
                Block::Findings(lines) => {
                    for l in lines {
                        out.push_str(&format!("- {}\n", inline(l)));
                    }
                }
                Block::Warnings(lines) => {
                    for l in lines {
                        out.push_str(&format!("> **warning:** {}\n>\n", inline(l)));
                    }
                }
                Block::Figure(f) => {
                    let path = format!("{figures_dir}/{}.svg", f.name);
                    out.push_str(&format!(
                        "![{}]({})\n\n*{}*\n",
                        inline(&f.caption),
                        path,
                        inline(&f.caption)
                    ));
                    files.push((path, f.svg.clone()));
                }
                Block::Table(t) => table(&mut out, t),
                Block::Details { summary, text } => out.push_str(&format!(
                    "<details><summary>{}</summary>\n\n```json\n{}\n```\n\n</details>\n",
                    inline(summary),
                    text
                )),
            }
        }
    }
    (out, files)
}

/// Text safe inside a Markdown line: characters that would start markup are escaped.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn table(out: &mut String, t: &Table) {
    if t.rows.is_empty() {
        return;
    }
    if let Some(c) = &t.caption {
        out.push_str(&format!("**{}**\n\n", inline(c)));
    }
    let cells = |row: &[String]| -> String {
        let v: Vec<String> = (0..t.head.len())
            .map(|i| inline(row.get(i).map(String::as_str).unwrap_or("")))
            .collect();
        format!("| {} |\n", v.join(" | "))
    };
    out.push_str(&cells(&t.head));
    let rule: Vec<&str> = (0..t.head.len())
        .map(|i| if t.numeric(i) { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &t.rows {
        out.push_str(&cells(row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Figure, Section};

    #[test]
    fn figures_become_files_and_tables_align_numbers() {
        let doc = Document {
            title: "t".into(),
            subtitle: "s".into(),
            sections: vec![Section {
                id: "a".into(),
                title: "run a|b".into(),
                blocks: vec![
                    Block::Figure(Figure {
                        name: "a-throughput".into(),
                        caption: "throughput".into(),
                        svg: "<svg></svg>".into(),
                    }),
                    Block::Table(Table {
                        caption: None,
                        head: vec!["step".into(), "IO/s".into()],
                        rows: vec![vec!["read".into(), "12k/s".into()]],
                    }),
                ],
            }],
        };
        let (md, files) = render(&doc, "report-files");
        assert_eq!(
            files,
            [(
                "report-files/a-throughput.svg".to_string(),
                "<svg></svg>".to_string()
            )]
        );
        assert!(md.contains("![throughput](report-files/a-throughput.svg)"));
        assert!(md.contains("## run a\\|b"));
        assert!(md.contains("| --- | ---: |"));
    }
}
