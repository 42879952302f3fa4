//! Markup helpers: XML escaping, coordinate formatting, text metrics,
//! label placement and the `<svg>` boilerplate shared by all charts.

use std::fmt::Write as _;

use super::chart::Style;

/// Font stack used by every chart (no web fonts: the reports are offline).
pub(super) const FONT_FAMILY: &str =
    "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";

/// Escapes text for XML content and attribute values; drops control
/// characters that XML 1.0 does not allow.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Formats a coordinate with at most one decimal ("12", "12.5"); never
/// prints NaN or infinity.
pub(super) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let r = (v.clamp(-1e7, 1e7) * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Opens a chart `<svg>` element: namespace, size, accessibility label,
/// `<title>`, font and a white background.
pub(super) fn svg_open(out: &mut String, w: f64, h: f64, title: &str) {
    let (w, h, t) = (num(w), num(h), escape(title));
    out.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" \
         aria-label=\"{t}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"{FONT_FAMILY}\" font-size=\"11\"><title>{t}</title>\
         <rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>"
    ));
}

/// Writes the visible chart title (top left), shortened to fit `w`.
pub(super) fn svg_title(out: &mut String, w: f64, title: &str) {
    if title.is_empty() {
        return;
    }
    let (shown, _) = truncate(title, w - 24.0, 14.0);
    out.push_str(&format!(
        "<text x=\"12\" y=\"22\" font-size=\"14\" font-weight=\"600\" fill=\"#222\">{}</text>",
        escape(&shown)
    ));
}

/// Attributes giving text a white halo so it stays readable over lines.
pub(super) const HALO: &str =
    "stroke=\"#fff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";

/// Rough rendered width of `s` at `px` font size, erring on the wide side
/// (sans-serif fonts differ between systems).
pub(super) fn text_width(s: &str, px: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' | ' ' => 0.32,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.4,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.92,
            '0'..='9' | '$' | '#' | '_' | '+' | '=' | '<' | '>' | '~' | '*' | '?' => 0.64,
            'A'..='Z' => 0.7,
            c if c.is_ascii() => 0.6,
            '…' | '—' => 1.0,
            _ => 0.66,
        })
        .sum();
    em * px
}

/// Shortens `s` with an ellipsis so that it is at most `max_w` wide.
/// Returns the text and whether it was shortened.
pub(super) fn truncate(s: &str, max_w: f64, px: f64) -> (String, bool) {
    if text_width(s, px) <= max_w {
        return (s.to_string(), false);
    }
    let mut out = String::new();
    for c in s.chars() {
        out.push(c);
        if text_width(&out, px) + text_width("…", px) > max_w {
            out.pop();
            break;
        }
    }
    let out = out.trim_end().to_string() + "…";
    (out, true)
}

/// Formats a quantile as a percentage: 0.5 → "50%", 0.999 → "99.9%".
pub fn nines_label(q: f64) -> String {
    if !q.is_finite() {
        return String::new();
    }
    let s = format!("{:.6}", q * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// A short number with an SI suffix and 3 significant digits:
/// 141000 → "141k", 1500 → "1.5k", 0.25 → "0.25", 2.5e6 → "2.5M".
pub fn si(v: f64) -> String {
    const UNITS: [(f64, &str); 5] = [(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")];
    if !v.is_finite() || v == 0.0 {
        return if v == 0.0 {
            "0".to_string()
        } else {
            String::new()
        };
    }
    let mut i = UNITS.iter().rposition(|&(f, _)| v.abs() >= f).unwrap_or(0);
    loop {
        let (f, suffix) = UNITS[i];
        let scaled = v / f;
        let decimals = (2 - scaled.abs().log10().floor() as i32).clamp(0, 12) as usize;
        let s = format!("{scaled:.decimals$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            &s
        };
        // 999.7 rounds to "1000": use the next unit instead.
        if s.trim_start_matches('-').len() > 3 && !s.contains('.') && i + 1 < UNITS.len() {
            i += 1;
            continue;
        }
        return format!("{s}{suffix}");
    }
}

/// Formats a 1px line position on the pixel grid (x.5) for crisp lines.
pub(super) fn crisp(v: f64) -> String {
    num(v.floor() + 0.5)
}

/// Writes `<text x y attrs>` with escaped content and an optional tooltip.
pub(super) fn text(out: &mut String, (x, y): (f64, f64), attrs: &str, s: &str, tip: Option<&str>) {
    let tip = tip.map_or(String::new(), |t| format!("<title>{}</title>", escape(t)));
    let (x, y, s) = (num(x), num(y), escape(s));
    let _ = write!(out, "<text x=\"{x}\" y=\"{y}\" {attrs}>{tip}{s}</text>");
}

/// An axis-aligned box in pixels.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub(super) const fn new(x: f64, y: f64, w: f64, h: f64) -> Self {
        Rect { x, y, w, h }
    }
    pub(super) fn contains(&self, (px, py): (f64, f64)) -> bool {
        px >= self.x && px <= self.x + self.w && py >= self.y && py <= self.y + self.h
    }
    pub(super) fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
    pub(super) fn encloses(&self, o: &Rect) -> bool {
        let (r, b) = (self.x + self.w, self.y + self.h);
        o.x >= self.x && o.y >= self.y && o.x + o.w <= r && o.y + o.h <= b
    }
}

/// A placed 11px text label; `rect` is its approximate bounding box (the
/// baseline is 9px below its top).
pub(super) struct Label {
    pub text: String,
    pub tip: String,
    pub rect: Rect,
}

impl Label {
    /// Writes the label with a white halo, tooltip `tip` if not empty.
    pub(super) fn write(&self, out: &mut String, colour: &str) {
        let tip = Some(self.tip.as_str()).filter(|t| !t.is_empty());
        let attrs = format!("fill=\"{colour}\" {HALO}");
        text(
            out,
            (self.rect.x, self.rect.y + 9.0),
            &attrs,
            &self.text,
            tip,
        );
    }
}

/// The first of `spots` with the lowest cost: leaving `plot` costs most,
/// then overlapping an `obstacle`, then each data `sample` covered.
pub(super) fn best_spot(
    spots: &[Rect],
    plot: &Rect,
    obstacles: &[Rect],
    samples: &[(f64, f64)],
) -> Rect {
    let cost = |r: &Rect| {
        (if plot.encloses(r) { 0 } else { 10_000 })
            + 100 * obstacles.iter().filter(|o| o.overlaps(r)).count()
            + samples.iter().filter(|&&p| r.contains(p)).count()
    };
    let mut best = (usize::MAX, spots[0]);
    for r in spots {
        let c = cost(r);
        if c < best.0 {
            best = (c, *r);
        }
    }
    best.1
}

/// Places an 11px label next to the point (px, py), clear of obstacles
/// and data where possible, and always inside `plot`.
pub(super) fn place_label(
    (px, py): (f64, f64),
    text: &str,
    plot: &Rect,
    obstacles: &[Rect],
    samples: &[(f64, f64)],
) -> Label {
    let tw = text_width(text, 11.0);
    let spots = [
        (px + 9.0, py - 9.0),
        (px - 9.0 - tw, py - 9.0),
        (px + 9.0, py + 18.0),
        (px - 9.0 - tw, py + 18.0),
        (px - tw / 2.0, py - 12.0),
        (px - tw / 2.0, py + 22.0),
    ]
    .map(|(x, base)| Rect::new(x, base - 9.0, tw, 12.0));
    let mut rect = best_spot(&spots, plot, obstacles, samples);
    rect.x = rect.x.min(plot.x + plot.w - tw - 2.0).max(plot.x + 2.0);
    rect.y = rect.y.min(plot.y + plot.h - 14.0).max(plot.y + 2.0);
    let (text, tip) = (text.to_string(), String::new());
    Label { text, tip, rect }
}

/// The corner of `plot` (top right, top left, bottom right, bottom left,
/// in order of preference) where a box of `size` covers the fewest data
/// `samples` and `obstacles`; returns (hits, box).
pub(super) fn best_corner(
    plot: &Rect,
    size: (f64, f64),
    samples: &[(f64, f64)],
    obstacles: &[Rect],
) -> (usize, Rect) {
    let (l, t) = (plot.x + 8.0, plot.y + 4.0);
    let (r, b) = (
        plot.x + plot.w - 8.0 - size.0,
        plot.y + plot.h - 8.0 - size.1,
    );
    let mut best = (usize::MAX, Rect::new(r, t, size.0, size.1));
    for (x, y) in [(r, t), (l, t), (r, b), (l, b)] {
        let rect = Rect::new(x, y, size.0, size.1);
        let hits = samples.iter().filter(|&&p| rect.contains(p)).count()
            + 100 * obstacles.iter().filter(|o| o.overlaps(&rect)).count();
        if hits < best.0 {
            best = (hits, rect);
        }
    }
    best
}

/// Points along a polyline every few pixels, for overlap tests.
pub(super) fn sample_line(out: &mut Vec<(f64, f64)>, pts: &[(f64, f64)]) {
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let n = ((x1 - x0).hypot(y1 - y0) / 5.0).ceil().clamp(1.0, 400.0) as usize;
        out.extend((0..n).map(|k| {
            let f = k as f64 / n as f64;
            (x0 + f * (x1 - x0), y0 + f * (y1 - y0))
        }));
    }
    out.extend(pts.last());
}

/// Marker shape `i % 7` (circle, square, triangle, diamond, inverted
/// triangle, cross, plus) centred on (x, y), with an optional tooltip.
pub(super) fn shape(i: usize, (x, y): (f64, f64), colour: &str, tip: &str) -> String {
    let p = |dx: f64, dy: f64| format!("{},{}", num(x + dx), num(y + dy));
    let poly = |pts: &[(f64, f64)]| {
        let v: Vec<String> = pts.iter().map(|&(dx, dy)| p(dx, dy)).collect();
        format!("d=\"M{}Z\"", v.join("L"))
    };
    let cross =
        |a: f64, b: f64| format!("d=\"M{}L{}M{}L{}\"", p(-a, -b), p(a, b), p(-b, a), p(b, -a));
    let filled = format!("fill=\"{colour}\" stroke=\"#fff\" stroke-width=\"0.8\"");
    let open = format!("fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"");
    let (tag, geometry, paint) = match i % 7 {
        0 => (
            "circle",
            format!("cx=\"{}\" cy=\"{}\" r=\"3.8\"", num(x), num(y)),
            filled,
        ),
        1 => (
            "path",
            poly(&[(-3.3, -3.3), (3.3, -3.3), (3.3, 3.3), (-3.3, 3.3)]),
            filled,
        ),
        2 => (
            "path",
            poly(&[(0.0, -4.6), (4.2, 2.8), (-4.2, 2.8)]),
            filled,
        ),
        3 => (
            "path",
            poly(&[(0.0, -4.6), (4.6, 0.0), (0.0, 4.6), (-4.6, 0.0)]),
            filled,
        ),
        4 => (
            "path",
            poly(&[(0.0, 4.6), (4.2, -2.8), (-4.2, -2.8)]),
            filled,
        ),
        5 => ("path", cross(3.3, 3.3), open),
        _ => ("path", cross(4.2, 0.0), open),
    };
    if tip.is_empty() {
        format!("<{tag} {geometry} {paint}/>")
    } else {
        format!(
            "<{tag} {geometry} {paint}><title>{}</title></{tag}>",
            escape(tip)
        )
    }
}

/// Okabe–Ito colours, in the order series use them (yellow last: it is
/// faint on white).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// How series `i` is painted: colour, dash, marker shape, band. Colours
/// cycle through [`PALETTE`]; shapes (and dashes for plain lines) vary too,
/// so series stay distinct in grayscale.
pub(super) struct Pen {
    pub i: usize,
    pub colour: &'static str,
    /// `stroke-dasharray` attribute, or empty for a solid line.
    pub dash: String,
    pub line: bool,
    pub marker: bool,
    pub band: bool,
}

impl Pen {
    pub(super) fn new(style: Style, i: usize) -> Self {
        let colour = PALETTE[i % PALETTE.len()];
        let dash = match style {
            Style::Dashed => "6 4",
            Style::Line => ["", "7 3", "2 2", "9 3 2 3"][i % 4],
            Style::LineWithPoints | Style::Band if i >= PALETTE.len() => "7 3",
            _ => "",
        };
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        let line = style != Style::Points;
        let marker = matches!(style, Style::LineWithPoints | Style::Points);
        Pen {
            i,
            colour,
            dash,
            line,
            marker,
            band: style == Style::Band,
        }
    }
}

/// Height of a legend row and length of its line swatch.
pub(super) const ITEM_H: f64 = 16.0;
pub(super) const SWATCH: f64 = 22.0;

/// Draws a legend in `rect` (with a background box when `inside` the
/// plot): one row per (pen, shown name, full name if shortened).
pub(super) fn legend(
    out: &mut String,
    rect: Rect,
    inside: bool,
    items: &[(Pen, &str, Option<&str>)],
) {
    out.push_str("<g class=\"legend\">");
    if inside {
        let (x, y, w, h) = (num(rect.x), num(rect.y), num(rect.w), num(rect.h));
        let paint = "rx=\"3\" fill=\"#fff\" fill-opacity=\"0.9\" stroke=\"#ddd\"";
        let _ = write!(
            out,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" {paint}/>"
        );
    }
    let x0 = if inside { rect.x + 8.0 } else { rect.x };
    for (k, (pen, name, full)) in items.iter().enumerate() {
        let (x, cy, colour) = (
            num(x0),
            rect.y + 4.0 + ITEM_H * (k as f64 + 0.5),
            pen.colour,
        );
        out.push_str("<g>");
        if pen.band {
            let (y, paint) = (
                num(cy - 4.0),
                format!("fill=\"{colour}\" fill-opacity=\"0.2\""),
            );
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{SWATCH}\" height=\"8\" {paint}/>"
            );
        }
        if pen.line {
            let (y, dash) = (num(cy), &pen.dash);
            let paint = format!("stroke=\"{colour}\" stroke-width=\"1.8\"{dash}");
            let _ = write!(out, "<path d=\"M{x} {y}h{SWATCH}\" {paint}/>");
        }
        if pen.marker {
            out.push_str(&shape(pen.i, (x0 + SWATCH / 2.0, cy), colour, ""));
        }
        text(
            out,
            (x0 + SWATCH + 6.0, cy + 4.0),
            "fill=\"#333\"",
            name,
            *full,
        );
        out.push_str("</g>");
    }
    out.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_numbers() {
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        let s = escape("<a & 'b'> \"c\"\u{1}");
        assert_eq!(s, "&lt;a &amp; &#39;b&#39;&gt; &quot;c&quot;");
    }

    #[test]
    fn formatting() {
        assert_eq!(si(141_000.0), "141k");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(999_999.0), "1M");
        assert_eq!(si(-2.5e6), "-2.5M");
        assert_eq!(si(0.0005), "0.0005");
        assert_eq!(si(12.0), "12");
        assert_eq!(si(0.0), "0");
        assert_eq!(nines_label(0.999), "99.9%");
        assert_eq!(nines_label(0.9999), "99.99%");
    }

    #[test]
    fn truncation() {
        let (s, cut) = truncate("a very long series name indeed", 60.0, 11.0);
        assert!(cut && s.ends_with('…') && text_width(&s, 11.0) <= 60.0);
        assert_eq!(truncate("short", 60.0, 11.0), ("short".to_string(), false));
    }
}
