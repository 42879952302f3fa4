//! Heatmaps: a grid of labelled cells coloured on a viridis-like scale,
//! e.g. IOPS by block size (rows) and queue depth (columns).

use std::fmt::Write as _;

use super::markup::{escape, num, si, svg_open, svg_title, text, text_width, truncate};

/// A heatmap rendered as one self-contained `<svg>` element.
///
/// Colours follow viridis from dark purple to bright yellow; **better values
/// are always brighter** (higher values when `higher_is_better`, lower ones
/// otherwise). The colour mapping is logarithmic when all values are
/// positive and max/min > 100.
#[derive(Clone, Debug)]
pub struct Heatmap {
    pub title: String,
    /// Title under the column labels.
    pub x_label: String,
    /// Title left of the row labels.
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// `cells[row][column]`; `None` (or a non-finite value) is a missing
    /// cell, drawn grey with "–". Short rows are padded with missing cells.
    pub cells: Vec<Vec<Option<f64>>>,
    pub format: fn(f64) -> String,
    pub higher_is_better: bool,
    /// Image width in pixels; the height follows from the number of rows.
    pub width: u32,
}

/// Viridis, sampled at nine evenly spaced stops.
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2c, 0x7a],
    [0x3b, 0x51, 0x8b],
    [0x2c, 0x71, 0x8e],
    [0x21, 0x90, 0x8d],
    [0x27, 0xad, 0x81],
    [0x5c, 0xc8, 0x63],
    [0xaa, 0xdc, 0x32],
    [0xfd, 0xe7, 0x25],
];

/// Colour at `t` in [0, 1] (0 dark, 1 bright).
fn viridis(t: f64) -> [u8; 3] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let mix = |k: usize| {
        (VIRIDIS[i][k] as f64 + f * (VIRIDIS[i + 1][k] as f64 - VIRIDIS[i][k] as f64)).round() as u8
    };
    [mix(0), mix(1), mix(2)]
}

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Black or white, whichever contrasts more with `rgb` (WCAG luminance).
fn ink(rgb: [u8; 3]) -> &'static str {
    let lin = |c: u8| {
        let c = c as f64 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
    if l < 0.179 { "#fff" } else { "#111" }
}

/// Maps values to [0, 1] in "brightness = better" space.
struct ColourScale {
    min: f64,
    max: f64,
    log: bool,
    higher_is_better: bool,
}

impl ColourScale {
    fn position(&self, v: f64) -> f64 {
        let f = if self.max <= self.min {
            0.5
        } else if self.log {
            (v.max(self.min).ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        if self.higher_is_better { f } else { 1.0 - f }
    }
}

/// Splits `s` at the space that best balances two lines, if both lines
/// then fit in `max_w`.
fn wrap2(s: &str, max_w: f64) -> Option<(String, String)> {
    let widest = |i: usize| text_width(&s[..i], 11.0).max(text_width(&s[i + 1..], 11.0));
    let split = s
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by(|&a, &b| widest(a).total_cmp(&widest(b)))?;
    (widest(split) <= max_w).then(|| (s[..split].to_string(), s[split + 1..].to_string()))
}

impl Heatmap {
    /// A 640 pixel wide heatmap, higher values better, labelled with [`si`].
    pub fn new(
        title: impl Into<String>,
        columns: Vec<String>,
        rows: Vec<String>,
        cells: Vec<Vec<Option<f64>>>,
    ) -> Self {
        let (title, x_label, y_label) = (title.into(), String::new(), String::new());
        let (format, higher_is_better, width) = (si, true, 640);
        Heatmap {
            title,
            x_label,
            y_label,
            columns,
            rows,
            cells,
            format,
            higher_is_better,
            width,
        }
    }

    fn cell(&self, r: usize, c: usize) -> Option<f64> {
        self.cells
            .get(r)?
            .get(c)
            .copied()
            .flatten()
            .filter(|v| v.is_finite())
    }

    /// Renders the heatmap as one `<svg>` element.
    /// A heatmap with no rows or columns: its title over an empty frame saying so.
    fn no_data(&self, w: f64, top: f64) -> String {
        let mut out = String::new();
        svg_open(&mut out, w, top + 80.0, &self.title);
        svg_title(&mut out, w, &self.title);
        let (y, width) = (num(top + 0.5), num(w - 25.0));
        let _ = write!(
            out,
            "<rect x=\"12.5\" y=\"{y}\" width=\"{width}\" height=\"60\" fill=\"none\" stroke=\"#ccc\"/>"
        );
        let attrs = "text-anchor=\"middle\" font-size=\"13\" fill=\"#888\"";
        text(&mut out, (w / 2.0, top + 34.0), attrs, "no data", None);
        out.push_str("</svg>");
        out
    }

    pub fn render(&self) -> String {
        let w = self.width.clamp(200, 4000) as f64;
        let (nr, nc) = (self.rows.len(), self.columns.len());
        let top = if self.title.is_empty() { 12.0 } else { 40.0 };
        let mut out = String::new();
        if nr == 0 || nc == 0 {
            return self.no_data(w, top);
        }

        let rows: Vec<(String, bool)> =
            self.rows.iter().map(|r| truncate(r, 140.0, 11.0)).collect();
        let row_w = rows
            .iter()
            .map(|(r, _)| text_width(r, 11.0))
            .fold(0.0, f64::max);
        let left = ((if self.y_label.is_empty() { 8.0 } else { 28.0 }) + row_w + 8.0).min(w * 0.45);
        let grid_w = w - left - 12.0;
        let (cw, gt) = (grid_w / nc as f64, top);
        let ch = (cw * 0.6).clamp(22.0, 30.0);
        let gb = gt + ch * nr as f64;

        // The colour scale spans the finite values.
        let all = (0..nr).flat_map(|r| (0..nc).map(move |c| (r, c)));
        let values: Vec<f64> = all.filter_map(|(r, c)| self.cell(r, c)).collect();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (log, higher_is_better) = (min > 0.0 && max / min > 100.0, self.higher_is_better);
        let scale = ColourScale {
            min,
            max,
            log,
            higher_is_better,
        };

        let mut body = String::new();
        for (r, (row, cut)) in rows.iter().enumerate() {
            let y = gt + ch * r as f64;
            let tip = Some(self.rows[r].as_str()).filter(|_| *cut);
            text(
                &mut body,
                (left - 7.0, y + ch / 2.0 + 4.0),
                "text-anchor=\"end\" fill=\"#444\"",
                row,
                tip,
            );
            for c in 0..nc {
                let x = left + cw * c as f64;
                let value = self.cell(r, c);
                let (fill, label, ink) = match value {
                    Some(v) => {
                        let rgb = viridis(scale.position(v));
                        (hex(rgb), (self.format)(v), ink(rgb))
                    }
                    None => ("#f0f0f0".to_string(), "–".to_string(), "#999"),
                };
                let shown = if value.is_some() {
                    label.as_str()
                } else {
                    "no data"
                };
                let tip = escape(&format!("{} × {}: {shown}", self.rows[r], self.columns[c]));
                let (rx, ry, rw, rh) = (num(x + 0.5), num(y + 0.5), num(cw - 1.0), num(ch - 1.0));
                let rect = format!(
                    "<rect x=\"{rx}\" y=\"{ry}\" width=\"{rw}\" height=\"{rh}\" fill=\"{fill}\"/>"
                );
                let _ = write!(body, "<g><title>{tip}</title>{rect}");
                if let Some(px) = [11.0, 9.5]
                    .into_iter()
                    .find(|&px| text_width(&label, px) <= cw - 6.0)
                {
                    let attrs = format!("text-anchor=\"middle\" font-size=\"{px}\" fill=\"{ink}\"");
                    text(
                        &mut body,
                        (x + cw / 2.0, y + ch / 2.0 + px * 0.36),
                        &attrs,
                        &label,
                        None,
                    );
                }
                body.push_str("</g>");
            }
        }

        // Column labels: on one line if they fit, else on two, else rotated.
        let cols: Vec<(String, bool)> = self
            .columns
            .iter()
            .map(|c| truncate(c, 120.0, 11.0))
            .collect();
        let col_w = cols
            .iter()
            .map(|(c, _)| text_width(c, 11.0))
            .fold(0.0, f64::max);
        let fits = col_w <= cw - 6.0;
        let wrapped: Option<Vec<_>> = if fits {
            None
        } else {
            self.columns.iter().map(|c| wrap2(c, cw - 6.0)).collect()
        };
        let plain = "text-anchor=\"middle\" fill=\"#444\"";
        for (c, (col, cut)) in cols.iter().enumerate() {
            let cx = left + cw * (c as f64 + 0.5);
            let tip = Some(self.columns[c].as_str()).filter(|_| *cut);
            if let Some(lines) = &wrapped {
                let (a, b) = (escape(&lines[c].0), escape(&lines[c].1));
                let (x, y1, y2) = (num(cx), num(gb + 16.0), num(gb + 29.0));
                let _ = write!(
                    body,
                    "<text {plain}><tspan x=\"{x}\" y=\"{y1}\">{a}</tspan><tspan x=\"{x}\" y=\"{y2}\">{b}</tspan></text>"
                );
            } else if fits {
                text(&mut body, (cx, gb + 16.0), plain, col, tip);
            } else {
                let (x, y) = (num(cx + 4.0), num(gb + 12.0));
                let attrs =
                    format!("transform=\"rotate(-45 {x} {y})\" text-anchor=\"end\" fill=\"#444\"");
                text(&mut body, (cx + 4.0, gb + 12.0), &attrs, col, tip);
            }
        }
        let mut y = gb
            + if wrapped.is_some() {
                35.0
            } else if fits {
                22.0
            } else {
                col_w * 0.71 + 16.0
            };
        let title = "text-anchor=\"middle\" font-size=\"12\" fill=\"#333\"";
        if !self.x_label.is_empty() {
            let (s, _) = truncate(&self.x_label, grid_w, 12.0);
            text(&mut body, (left + grid_w / 2.0, y + 14.0), title, &s, None);
            y += 20.0;
        }
        if !self.y_label.is_empty() {
            let (s, _) = truncate(&self.y_label, gb - gt + 20.0, 12.0);
            let cy = (gt + gb) / 2.0;
            let rotate = format!("transform=\"rotate(-90 17 {})\" {title}", num(cy));
            text(&mut body, (17.0, cy), &rotate, &s, None);
        }
        if !values.is_empty() {
            self.legend(&mut body, &scale, left + grid_w, y + 8.0, grid_w);
            y += 34.0;
        }
        svg_open(&mut out, w, y + 8.0, &self.title);
        svg_title(&mut out, w, &self.title);
        out.push_str(&body);
        out.push_str("</svg>");
        out
    }

    /// Colour bar (min to max, left to right) ending at `right`, top at `y`.
    fn legend(&self, out: &mut String, scale: &ColourScale, right: f64, y: f64, grid_w: f64) {
        const STEPS: usize = 48;
        let bar_w = (grid_w * 0.5).min(180.0);
        let (x0, step) = (right - bar_w, bar_w / STEPS as f64);
        out.push_str("<g class=\"legend\">");
        for k in 0..STEPS {
            let f = (k as f64 + 0.5) / STEPS as f64;
            let fill = hex(viridis(if scale.higher_is_better { f } else { 1.0 - f }));
            let (x, w) = (num(x0 + step * k as f64), num(step + 0.6));
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"10\" fill=\"{fill}\"/>",
                num(y)
            );
        }
        let ends = [
            (x0, "fill=\"#444\"", scale.min),
            (right, "text-anchor=\"end\" fill=\"#444\"", scale.max),
        ];
        for (x, attrs, v) in ends {
            text(out, (x, y + 23.0), attrs, &(self.format)(v), None);
        }
        let caption = if scale.log {
            "brighter is better · log colour scale"
        } else {
            "brighter is better"
        };
        if text_width(caption, 10.5) < x0 - 20.0 {
            text(
                out,
                (x0 - 10.0, y + 9.0),
                "text-anchor=\"end\" font-size=\"10.5\" fill=\"#666\"",
                caption,
                None,
            );
        }
        out.push_str("</g>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_wrapping() {
        assert_eq!(hex(viridis(0.0)), "#440154");
        assert_eq!(hex(viridis(1.0)), "#fde725");
        assert_eq!((ink(viridis(0.0)), ink(viridis(1.0))), ("#fff", "#111"));
        let (a, b) = wrap2("redis 7 (AOF everysec)", 90.0).expect("fits on two lines");
        assert_eq!((a.as_str(), b.as_str()), ("redis 7 (AOF", "everysec)"));
        assert!(wrap2("unsplittable", 10.0).is_none());
    }
}
