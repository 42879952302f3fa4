//! Aligned text tables: a header, then rows; numbers right-aligned, text left-aligned.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// A column is numeric (right-aligned) if every cell starts with a digit, a sign or a dash.
pub fn is_numeric_column(rows: &[Vec<String>], i: usize) -> bool {
    rows.iter().all(|r| {
        r.get(i)
            .is_none_or(|c| c.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '+'))
    })
}

/// Characters a terminal shows: colour escape sequences (`ESC [ ... m`) take no room.
fn visible_width(cell: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in cell.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

impl Table {
    pub fn new(header: Vec<String>) -> Self {
        Table {
            header,
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn header(&self) -> &[String] {
        &self.header
    }

    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    pub fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0usize; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                width[i] = width[i].max(visible_width(cell));
            }
        }
        let numeric: Vec<bool> = (0..cols)
            .map(|i| is_numeric_column(&self.rows, i))
            .collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for i in 0..cols {
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                let pad = width[i] - visible_width(cell);
                if i > 0 {
                    line.push_str("  ");
                }
                if numeric[i] {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_numbers_right_and_text_left() {
        let mut t = Table::new(vec!["kernel".into(), "rate".into()]);
        t.row(vec!["copy".into(), "9.5".into()]);
        t.row(vec!["triad".into(), "10.25".into()]);
        assert_eq!(t.render(), "kernel   rate\ncopy      9.5\ntriad   10.25\n");
    }
}
