//! Line, scatter and band charts: throughput vs concurrency, response time
//! vs throughput, time series and latency percentile spectra.

use std::fmt::Write as _;

use super::axis::{Axis, Frame, Scale};
use super::markup::{
    ITEM_H, Label, Pen, Rect, SWATCH, best_corner, best_spot, crisp, escape, legend, num,
    place_label, sample_line, shape, svg_open, svg_title, text, text_width, truncate,
};

/// Series with more points than this get no markers or tooltips.
pub const MAX_TOOLTIPS: usize = 200;

/// One data point; `tip` is its hover text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// Lower end of a whisker (CI) or band (min), if any.
    pub y_low: Option<f64>,
    /// Upper end of a whisker (CI) or band (max), if any.
    pub y_high: Option<f64>,
    pub tip: String,
}

impl Point {
    pub fn new(x: f64, y: f64, tip: impl Into<String>) -> Self {
        Point {
            x,
            y,
            y_low: None,
            y_high: None,
            tip: tip.into(),
        }
    }

    /// Adds whisker / band ends.
    pub fn with_range(mut self, low: f64, high: f64) -> Self {
        self.y_low = Some(low);
        self.y_high = Some(high);
        self
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Line with a marker per point; `y_low`/`y_high` draw whiskers.
    #[default]
    LineWithPoints,
    /// Line only (dash pattern varies by series index).
    Line,
    /// Markers only (scatter); `y_low`/`y_high` draw whiskers.
    Points,
    /// `y_low..y_high` as a translucent band plus `y` as a line (min/max of
    /// a downsampled time series).
    Band,
    /// Dashed line, e.g. a fitted model curve.
    Dashed,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub style: Style,
}

impl Series {
    pub fn new(name: impl Into<String>, style: Style, points: Vec<Point>) -> Self {
        Series {
            name: name.into(),
            points,
            style,
        }
    }
}

/// An annotated point ("peak", "knee").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// A labelled horizontal or vertical dashed line (an SLO limit, the end of
/// the measured range).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    pub value: f64,
    pub label: String,
}

/// A line / scatter chart rendered as one self-contained `<svg>` element.
#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    /// Horizontal rules at y values.
    pub hlines: Vec<Rule>,
    /// Vertical rules at x values.
    pub vlines: Vec<Rule>,
    pub width: u32,
    pub height: u32,
    /// One line of small text under the chart.
    pub note: Option<String>,
}

/// A valid point: index into `Series::points`, data coordinates.
#[derive(Clone, Copy)]
struct Pt {
    x: f64,
    y: f64,
    lo: Option<f64>,
    hi: Option<f64>,
    i: usize,
}

/// Data extents of the x and y axes (`None`: nothing to plot).
type Extents = (Option<(f64, f64)>, Option<(f64, f64)>);

fn extent(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((a, b)) => Some((v.min(a), v.max(b))),
    })
}

/// How many ticks to ask for along `len` pixels: one per `spacing` pixels
/// on linear and log10 axes; every power of two or nine on log2 and nines
/// axes (tick labels are thinned later if they collide).
fn max_ticks(scale: Scale, len: f64, spacing: f64) -> usize {
    match scale {
        Scale::Log2 | Scale::Nines => ((len / 16.0) as usize).clamp(3, 24),
        Scale::Linear | Scale::Log10 => ((len / spacing) as usize).clamp(3, 8),
    }
}

impl LineChart {
    /// A 640×360 chart without series.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Self {
        let (title, series, markers) = (title.into(), Vec::new(), Vec::new());
        let (hlines, vlines, width, height, note) = (Vec::new(), Vec::new(), 640, 360, None);
        LineChart {
            title,
            x,
            y,
            series,
            markers,
            hlines,
            vlines,
            width,
            height,
            note,
        }
    }

    /// Valid points of series `s`, split into runs at skipped points.
    fn runs(&self, s: &Series) -> Vec<Vec<Pt>> {
        let (xs, ys) = (self.x.scale, self.y.scale);
        // A quantity that is never negative (every point at or above zero, on an axis from
        // zero) keeps its whiskers there too: a wide interval over few repeats reaches below
        // zero arithmetically, but no throughput does.
        let floor = self.y.zero
            && self
                .series
                .iter()
                .flat_map(|s| &s.points)
                .all(|p| p.y >= 0.0);
        let mut runs = vec![Vec::new()];
        for (i, p) in s.points.iter().enumerate() {
            if xs.accepts(p.x) && ys.accepts(p.y) {
                let ok = |v: Option<f64>| {
                    v.map(|v| if floor { v.max(0.0) } else { v })
                        .filter(|&v| ys.accepts(v))
                };
                let (x, y, lo, hi) = (p.x, p.y, ok(p.y_low), ok(p.y_high));
                runs.last_mut()
                    .expect("never empty")
                    .push(Pt { x, y, lo, hi, i });
            } else if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        runs.retain(|r| !r.is_empty());
        runs
    }

    /// Data extents of both axes, including markers and rules.
    fn extents(&self, runs: &[Vec<Vec<Pt>>], markers: &[&Marker]) -> Extents {
        let (xs, ys) = (self.x.scale, self.y.scale);
        let all = || runs.iter().flatten().flatten();
        let xv = all().map(|p| p.x).chain(markers.iter().map(|m| m.x));
        let xv = xv.chain(
            self.vlines
                .iter()
                .map(|r| r.value)
                .filter(|&v| xs.accepts(v)),
        );
        let yv = all().flat_map(|p| [Some(p.y), p.lo, p.hi]).flatten();
        let yv = yv.chain(markers.iter().map(|m| m.y));
        let yv = yv.chain(
            self.hlines
                .iter()
                .map(|r| r.value)
                .filter(|&v| ys.accepts(v)),
        );
        (extent(xv), extent(yv))
    }

    /// Lays out the plot area, leaving `legend_w` pixels on the right.
    fn frame(&self, w: f64, h: f64, legend_w: f64, ext: Extents) -> Frame<'_> {
        let t = if self.title.is_empty() { 14.0 } else { 40.0 };
        let x_title = if self.x.label.is_empty() { 0.0 } else { 18.0 };
        let b = (h - 28.0 - x_title - if self.note.is_some() { 18.0 } else { 0.0 }).max(t + 40.0);
        let yt = self.y.ticks(ext.1, max_ticks(self.y.scale, b - t, 40.0));
        let width = |f: fn(f64) -> String, v: f64| text_width(&f(v), 11.0);
        let labels = yt.values.iter().filter(|_| ext.1.is_some());
        let widest = labels.map(|&v| width(self.y.format, v)).fold(0.0, f64::max);
        let l = (if self.y.label.is_empty() { 8.0 } else { 26.0 } + widest + 8.0).min(w * 0.4);
        let x_ticks = |r: f64| self.x.ticks(ext.0, max_ticks(self.x.scale, r - l, 72.0));
        let mut r = (w - 16.0 - legend_w).max(l + 60.0);
        let mut xt = x_ticks(r);
        if legend_w == 0.0 {
            // Leave room for a tick label at the right end.
            let at_end = |v: &&f64| (**v - xt.hi).abs() <= (xt.hi - xt.lo).abs() * 1e-6;
            let last = xt.values.last().filter(at_end);
            let half = last.map_or(0.0, |&v| width(self.x.format, v) / 2.0);
            if w - 10.0 - half < r {
                r = (w - 10.0 - half).max(l + 60.0);
                xt = x_ticks(r);
            }
        }
        let (x, y) = (&self.x, &self.y);
        Frame {
            l,
            t,
            r,
            b,
            x,
            y,
            xt,
            yt,
        }
    }

    /// Renders the chart as one `<svg>` element.
    pub fn render(&self) -> String {
        let (w, h) = (
            self.width.clamp(240, 4000) as f64,
            self.height.clamp(160, 4000) as f64,
        );
        let (xs, ys) = (self.x.scale, self.y.scale);
        let runs: Vec<Vec<Vec<Pt>>> = self.series.iter().map(|s| self.runs(s)).collect();
        let valid = |m: &&Marker| xs.accepts(m.x) && ys.accepts(m.y);
        let markers: Vec<&Marker> = self.markers.iter().filter(valid).collect();
        let has_data = runs.iter().any(|r| !r.is_empty()) || !markers.is_empty();
        let ext = if has_data {
            self.extents(&runs, &markers)
        } else {
            (None, None)
        };

        // The legend goes inside the plot, in the first corner (top right,
        // top left, bottom right, bottom left) clear of data; else outside.
        let mut frame = self.frame(w, h, 0.0, ext);
        let names: Vec<(String, bool)> = self
            .series
            .iter()
            .map(|s| truncate(&s.name, (w * 0.24).min(150.0), 11.0))
            .collect();
        let mut legend_at = None;
        if self.series.len() >= 2 {
            let text_w = names
                .iter()
                .map(|(n, _)| text_width(n, 11.0))
                .fold(0.0, f64::max);
            let size = (SWATCH + text_w + 22.0, names.len() as f64 * ITEM_H + 8.0);
            let samples = self.samples(&frame, &runs);
            let rules = self.rule_labels(&frame, &samples);
            let obstacles: Vec<Rect> = rules.iter().map(|l| l.rect).collect();
            let (hits, rect) = best_corner(&frame.plot(), size, &samples, &obstacles);
            let narrow = w < 420.0 || size.0 > (frame.r - frame.l) * 0.5;
            legend_at = if self.series.len() <= 6 && (hits == 0 || narrow) {
                Some((rect, true))
            } else {
                let lw = SWATCH + text_w + 10.0;
                frame = self.frame(w, h, lw + 12.0, ext);
                Some((Rect::new(frame.r + 20.0, frame.t, lw, size.1), false))
            };
        }

        let mut out = String::with_capacity(4096);
        svg_open(&mut out, w, h, &self.title);
        svg_title(&mut out, w, &self.title);
        frame.draw(&mut out, w, has_data);
        if has_data {
            self.draw_rules(&mut out, &frame);
            self.draw_series(&mut out, &frame, &runs);
            let samples = self.samples(&frame, &runs);
            let rule_labels = self.rule_labels(&frame, &samples);
            let mut obstacles: Vec<Rect> = rule_labels.iter().map(|l| l.rect).collect();
            obstacles.extend(legend_at.iter().filter(|l| l.1).map(|l| l.0));
            for m in &markers {
                let p = (frame.px(m.x), frame.py(m.y));
                if !frame.plot().contains(p) {
                    continue;
                }
                let label = place_label(p, &m.label, &frame.plot(), &obstacles, &samples);
                obstacles.push(label.rect);
                let (fx, fy) = (self.x.format, self.y.format);
                let tip = escape(&format!("{}: {}, {}", m.label, fx(m.x), fy(m.y)));
                let ring = format!("cx=\"{}\" cy=\"{}\" r=\"6\"", num(p.0), num(p.1));
                let paint = "fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"";
                let _ = write!(out, "<g><title>{tip}</title><circle {ring} {paint}/>");
                label.write(&mut out, "#222");
                out.push_str("</g>");
            }
            for label in &rule_labels {
                label.write(&mut out, "#555");
            }
        } else {
            let centre = ((frame.l + frame.r) / 2.0, (frame.t + frame.b) / 2.0);
            let attrs = "text-anchor=\"middle\" font-size=\"13\" fill=\"#888\"";
            text(&mut out, centre, attrs, "no data", None);
        }
        if let Some((rect, inside)) = legend_at {
            let mut items = Vec::new();
            for ((i, s), (name, cut)) in self.series.iter().enumerate().zip(&names) {
                let full = Some(s.name.as_str()).filter(|_| *cut);
                items.push((Pen::new(s.style, i), name.as_str(), full));
            }
            legend(&mut out, rect, inside, &items);
        }
        if let Some(note) = &self.note {
            let (shown, cut) = truncate(note, w - 24.0, 10.5);
            let tip = Some(note.as_str()).filter(|_| cut);
            text(
                &mut out,
                (12.0, h - 8.0),
                "font-size=\"10.5\" fill=\"#666\"",
                &shown,
                tip,
            );
        }
        out.push_str("</svg>");
        out
    }

    /// Pixel positions covered by data (points, lines, whiskers, bands).
    fn samples(&self, f: &Frame, runs: &[Vec<Vec<Pt>>]) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        for (s, runs) in self.series.iter().zip(runs) {
            for run in runs {
                let line: Vec<(f64, f64)> = run.iter().map(|p| (f.px(p.x), f.py(p.y))).collect();
                match s.style {
                    Style::Points => out.extend(&line),
                    _ => sample_line(&mut out, &line),
                }
                for p in run {
                    out.extend(
                        [p.lo, p.hi]
                            .into_iter()
                            .flatten()
                            .map(|v| (f.px(p.x), f.py(v))),
                    );
                }
                if s.style == Style::Band {
                    for sel in [|p: &Pt| p.lo, |p: &Pt| p.hi] {
                        let edge: Vec<_> = run
                            .iter()
                            .map(|p| (f.px(p.x), f.py(sel(p).unwrap_or(p.y))))
                            .collect();
                        sample_line(&mut out, &edge);
                    }
                }
            }
        }
        out
    }

    /// Labels of the horizontal (right end, above the line) and vertical
    /// (top, right of the line) rules.
    fn rule_labels(&self, f: &Frame, samples: &[(f64, f64)]) -> Vec<Label> {
        let mut out = Vec::new();
        let plot = f.plot();
        let label = |rule: &Rule, spots: &[Rect], format: fn(f64) -> String| {
            let rect = best_spot(spots, &plot, &[], samples);
            let tip = format!("{}: {}", rule.label, format(rule.value));
            Label {
                text: rule.label.clone(),
                tip,
                rect,
            }
        };
        let (xs, ys) = (self.x.scale, self.y.scale);
        for rule in self
            .hlines
            .iter()
            .filter(|r| ys.accepts(r.value) && !r.label.is_empty())
        {
            let (y, w) = (f.py(rule.value), text_width(&rule.label, 11.0));
            let (right, left) = (f.r - 4.0 - w, f.l + 4.0);
            let spots = [
                (right, y - 14.0),
                (right, y + 3.0),
                (left, y - 14.0),
                (left, y + 3.0),
            ];
            out.push(label(
                rule,
                &spots.map(|(x, y)| Rect::new(x, y, w, 12.0)),
                self.y.format,
            ));
        }
        for rule in self
            .vlines
            .iter()
            .filter(|r| xs.accepts(r.value) && !r.label.is_empty())
        {
            let (x, w) = (f.px(rule.value), text_width(&rule.label, 11.0));
            let (top, bottom) = (f.t + 2.0, f.b - 16.0);
            let spots = [
                (x + 4.0, top),
                (x - 4.0 - w, top),
                (x + 4.0, bottom),
                (x - 4.0 - w, bottom),
            ];
            out.push(label(
                rule,
                &spots.map(|(x, y)| Rect::new(x, y, w, 12.0)),
                self.x.format,
            ));
        }
        out
    }

    fn draw_rules(&self, out: &mut String, f: &Frame) {
        let mut d = String::new();
        for rule in self.hlines.iter().filter(|r| self.y.scale.accepts(r.value)) {
            let y = f.py(rule.value);
            if (f.t - 0.5..=f.b + 0.5).contains(&y) {
                let _ = write!(d, "M{} {}H{}", num(f.l), crisp(y), num(f.r));
            }
        }
        for rule in self.vlines.iter().filter(|r| self.x.scale.accepts(r.value)) {
            let x = f.px(rule.value);
            if (f.l - 0.5..=f.r + 0.5).contains(&x) {
                let _ = write!(d, "M{} {}V{}", crisp(x), num(f.t), num(f.b));
            }
        }
        if !d.is_empty() {
            let paint =
                "stroke=\"#666\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\" fill=\"none\"";
            let _ = write!(out, "<path d=\"{d}\" {paint}/>");
        }
    }

    fn draw_series(&self, out: &mut String, f: &Frame, runs: &[Vec<Vec<Pt>>]) {
        // Clip to the plot area (plus room for edge markers) with a nested
        // <svg>, which needs no document-unique id.
        let pad = 7.0;
        let (x, y) = (num(f.l - pad), num(f.t - pad));
        let (w, h) = (num(f.r - f.l + 2.0 * pad), num(f.b - f.t + 2.0 * pad));
        let _ = write!(
            out,
            "<svg x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" viewBox=\"{x} {y} {w} {h}\">"
        );
        let xy = |p: &Pt, y: f64| format!("{},{}", num(f.px(p.x)), num(f.py(y)));
        let pens: Vec<Pen> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| Pen::new(s.style, i))
            .collect();
        // Bands and lines first, then whiskers and markers on top.
        for (pen, runs) in pens.iter().zip(runs) {
            let colour = pen.colour;
            for run in runs.iter().filter(|_| pen.band) {
                let upper = run.iter().map(|p| xy(p, p.hi.unwrap_or(p.y)));
                let lower = run.iter().rev().map(|p| xy(p, p.lo.unwrap_or(p.y)));
                let d = upper.chain(lower).collect::<Vec<_>>().join("L");
                let _ = write!(
                    out,
                    "<path d=\"M{d}Z\" fill=\"{colour}\" fill-opacity=\"0.2\"/>"
                );
            }
            if pen.line {
                let line =
                    |run: &Vec<Pt>| run.iter().map(|p| xy(p, p.y)).collect::<Vec<_>>().join("L");
                let d: String = runs.iter().map(|run| format!("M{}", line(run))).collect();
                let width = if pen.band { "1.4" } else { "1.8" };
                let paint = format!("stroke=\"{colour}\" stroke-width=\"{width}\"{}", pen.dash);
                let join = "stroke-linejoin=\"round\" stroke-linecap=\"round\"";
                let _ = write!(out, "<path d=\"{d}\" fill=\"none\" {paint} {join}/>");
            }
        }
        for ((pen, s), runs) in pens.iter().zip(&self.series).zip(runs) {
            let colour = pen.colour;
            let n: usize = runs.iter().map(Vec::len).sum();
            let pts = runs.iter().flatten();
            let mut d = String::new();
            for p in pts.clone().filter(|_| pen.marker) {
                let (x, y) = (f.px(p.x), f.py(p.y));
                let (lo, hi) = (p.lo.map_or(y, |v| f.py(v)), p.hi.map_or(y, |v| f.py(v)));
                if (lo - hi).abs() >= 1.0 {
                    let _ = write!(d, "M{} {}V{}", num(x), num(lo), num(hi));
                    for e in [p.lo.and(Some(lo)), p.hi.and(Some(hi))]
                        .into_iter()
                        .flatten()
                    {
                        let _ = write!(d, "M{} {}h6", num(x - 3.0), num(e));
                    }
                }
            }
            if !d.is_empty() {
                let paint = format!("stroke=\"{colour}\" stroke-width=\"1.2\" fill=\"none\"");
                let _ = write!(out, "<path d=\"{d}\" {paint}/>");
            }
            if n > MAX_TOOLTIPS {
                // A large scatter: round dots in one path, no tooltips.
                if !pen.line {
                    let d: String = pts.map(|p| format!("M{}h0", xy(p, p.y))).collect();
                    let paint =
                        format!("stroke=\"{colour}\" stroke-width=\"4\" stroke-linecap=\"round\"");
                    let _ = write!(out, "<path d=\"{d}\" {paint}/>");
                }
                continue;
            }
            for p in pts {
                let (tip, at) = (&s.points[p.i].tip, (f.px(p.x), f.py(p.y)));
                if pen.marker {
                    out.push_str(&shape(pen.i, at, colour, tip));
                } else if !tip.is_empty() {
                    // An invisible hover target carrying the tooltip.
                    let (x, y, tip) = (num(at.0), num(at.1), escape(tip));
                    let circle =
                        format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"5\" fill-opacity=\"0\">");
                    let _ = write!(out, "{circle}<title>{tip}</title></circle>");
                }
            }
        }
        out.push_str("</svg>");
    }
}
