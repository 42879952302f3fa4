//! Aligned text tables: a header, then rows; numbers right-aligned, text left-aligned.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
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

    pub fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0usize; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                width[i] = width[i].max(cell.chars().count());
            }
        }
        // A column is numeric if every cell starts with a digit, a sign or a dash.
        let numeric: Vec<bool> = (0..cols)
            .map(|i| {
                self.rows.iter().all(|r| {
                    r.get(i).is_none_or(|c| {
                        c.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '+')
                    })
                })
            })
            .collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for i in 0..cols {
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                let pad = width[i] - cell.chars().count();
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
