//! Scales, "nice" ticks and the plot frame: mapping data to pixels and
//! drawing the grid, tick labels and axis titles.

use std::fmt::Write as _;

use super::markup::{Rect, crisp, nines_label, num, si, text, text_width, truncate};

/// How data values are placed along an axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Linear, ticks at 1, 2, 2.5 or 5 times a power of ten.
    #[default]
    Linear,
    /// Base-2 log, ticks at powers of two (1, 2, 4, 8 threads...). Only
    /// positive values are drawn.
    Log2,
    /// Base-10 log, ticks at powers of ten (plus 2x and 5x when the range
    /// spans less than two decades). Only positive values are drawn.
    Log10,
    /// Percentile ("nines") scale for latency spectra. Data values are
    /// quantiles `q` in `[0, 1)` placed at `-log10(1 - q)`, so 90%, 99%,
    /// 99.9%... are evenly spaced; ticks sit at 0%, 50%, 90%, 99%, 99.9%...
    /// Values outside `[0, 1)`, including `q = 1` (the maximum), are
    /// skipped: pass the maximum of `n` samples as `q = 1 - 1/n`. Tick
    /// labels default to [`nines_label`].
    Nines,
}

impl Scale {
    /// Whether `v` can be placed on this scale.
    pub fn accepts(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Scale::Linear => true,
                Scale::Log2 | Scale::Log10 => v > 0.0,
                Scale::Nines => (0.0..1.0).contains(&v),
            }
    }

    /// Maps a data value into the (linear) position space of the scale.
    pub fn transform(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
            Scale::Nines => -(1.0 - v).log10(),
        }
    }
}

/// One chart axis: title, scale, tick label format and optional fixed range.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Axis title, e.g. "throughput (ops/s)"; empty for none.
    pub label: String,
    pub scale: Scale,
    /// Formats tick labels; receives data values (`q` for `Nines`).
    pub format: fn(f64) -> String,
    /// Fixed lower end; `None` fits the data, rounded to a nice value.
    pub min: Option<f64>,
    /// Fixed upper end; `None` fits the data, rounded to a nice value.
    pub max: Option<f64>,
    /// Include 0 in the range (linear scale only).
    pub zero: bool,
    /// Whole numbers only (threads, clients, files): no tick at 1.5 threads.
    pub integer: bool,
}

impl Axis {
    /// An axis fitting the data, labelled with [`si`] (or [`nines_label`]
    /// for [`Scale::Nines`]).
    pub fn new(label: impl Into<String>, scale: Scale) -> Self {
        let format = if scale == Scale::Nines {
            nines_label
        } else {
            si
        };
        let label = label.into();
        Axis {
            label,
            scale,
            format,
            min: None,
            max: None,
            zero: false,
            integer: false,
        }
    }

    /// Sets the tick label format.
    pub fn with_format(mut self, format: fn(f64) -> String) -> Self {
        self.format = format;
        self
    }

    /// Includes 0 in the range (linear scale only).
    pub fn with_zero(mut self) -> Self {
        self.zero = true;
        self
    }

    /// Ticks at whole numbers only (a count of threads or files).
    pub fn with_integers(mut self) -> Self {
        self.integer = true;
        self
    }

    /// Fixes either end of the range.
    pub fn with_range(mut self, min: Option<f64>, max: Option<f64>) -> Self {
        (self.min, self.max) = (min, max);
        self
    }

    /// Domain and at most `max_ticks` ticks for data spanning `extent`
    /// (`None`: no data).
    pub fn ticks(&self, extent: Option<(f64, f64)>, max_ticks: usize) -> Ticks {
        let s = self.scale;
        let fmin = self.min.filter(|&v| s.accepts(v));
        let fmax = self.max.filter(|&v| s.accepts(v));
        let (mut lo, mut hi) = extent.unwrap_or(match s {
            Scale::Linear => (0.0, 1.0),
            Scale::Log2 | Scale::Log10 => (1.0, 10.0),
            Scale::Nines => (0.0, 0.99),
        });
        if s == Scale::Linear && self.zero {
            (lo, hi) = (lo.min(0.0), hi.max(0.0));
        }
        (lo, hi) = (fmin.unwrap_or(lo), fmax.unwrap_or(hi));
        let (mut nice_lo, mut nice_hi) = (fmin.is_none(), fmax.is_none());
        if hi < lo {
            // A fixed end contradicts the data: keep the fixed end.
            if fmin.is_some() {
                (hi, nice_hi) = (lo, true);
            } else {
                (lo, nice_lo) = (hi, true);
            }
        }
        if hi - lo <= lo.abs() * 1e-12 {
            (lo, hi) = match s {
                Scale::Linear if lo == 0.0 => (0.0, 1.0),
                Scale::Linear => (lo - lo.abs() * 0.1, lo + lo.abs() * 0.1),
                Scale::Log2 | Scale::Log10 => (lo / 2.0, lo * 2.0),
                Scale::Nines => (0.0, lo.max(0.9)),
            };
            (nice_lo, nice_hi) = (true, true);
        }
        let (lo, hi) = (lo.clamp(-f64::MAX, f64::MAX), hi.clamp(-f64::MAX, f64::MAX));
        let max_ticks = max_ticks.max(2);
        let mut ticks = match s {
            Scale::Linear => linear_ticks(lo, hi, nice_lo, nice_hi, max_ticks),
            Scale::Log2 => log2_ticks(lo, hi, nice_lo, nice_hi, max_ticks),
            Scale::Log10 => log10_ticks(lo, hi, nice_lo, nice_hi, max_ticks),
            Scale::Nines => nines_ticks(lo, hi, nice_lo, nice_hi, max_ticks),
        };
        ticks.values.retain(|&v| s.accepts(v));
        if self.integer {
            ticks.values.retain(|v| v.fract() == 0.0);
            // A short range (1 to 2 threads) gets its whole numbers as ticks.
            if ticks.values.len() < 2 && ticks.hi - ticks.lo <= max_ticks as f64 {
                let (a, b) = (ticks.lo.ceil() as i64, ticks.hi.floor() as i64);
                ticks.values = (a..=b)
                    .map(|v| v as f64)
                    .filter(|&v| s.accepts(v))
                    .collect();
            }
        }
        if !(ticks.lo.is_finite() && ticks.hi.is_finite()) {
            (ticks.lo, ticks.hi) = (lo, hi);
        }
        ticks
    }
}

/// An axis domain (in data units) and the tick positions inside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub lo: f64,
    pub hi: f64,
    pub values: Vec<f64>,
}

const EPS: f64 = 1e-9;

/// `m * 10^e`, computed so that e.g. 3 * 10^-1 is the double nearest 0.3.
fn pow10(m: f64, e: i32) -> f64 {
    if e >= 0 {
        m * 10f64.powi(e)
    } else {
        m / 10f64.powi(-e)
    }
}

/// `v` rounded down (`down`) or up to an integer, forgiving rounding errors.
fn snap(v: f64, down: bool) -> f64 {
    if down {
        (v + EPS).floor()
    } else {
        (v - EPS).ceil()
    }
}

/// Linear ticks at 1, 2, 2.5 or 5 times a power of ten, at most
/// `max_ticks` of them; a `nice_*` end is widened to the enclosing tick.
fn linear_ticks(lo: f64, hi: f64, nice_lo: bool, nice_hi: bool, max_ticks: usize) -> Ticks {
    let span = hi - lo;
    let e0 = ((span / max_ticks as f64).log10().floor() as i32).clamp(-400, 400) - 1;
    if span.is_finite() && span > 0.0 {
        for e in e0..e0 + 64 {
            for m in [1.0, 2.0, 2.5, 5.0] {
                let step = pow10(m, e);
                let (a, b) = (snap(lo / step, nice_lo), snap(hi / step, !nice_hi));
                if b - a < max_ticks as f64 {
                    let n = (b - a).max(0.0) as i64;
                    let values = (0..=n).map(|i| pow10((a + i as f64) * m, e)).collect();
                    let lo = if nice_lo { pow10(a * m, e) } else { lo };
                    let hi = if nice_hi { pow10(b * m, e) } else { hi };
                    if lo.is_finite() && hi.is_finite() {
                        return Ticks { lo, hi, values };
                    }
                }
            }
        }
    }
    Ticks {
        lo,
        hi,
        values: vec![lo, hi],
    }
}

/// Ticks at every power of two (every 2nd, 3rd... if there would be more
/// than `max_ticks`); `nice_*` ends are widened to a power of two.
fn log2_ticks(lo: f64, hi: f64, nice_lo: bool, nice_hi: bool, max_ticks: usize) -> Ticks {
    let ka = (snap(lo.log2(), nice_lo) as i32).clamp(-1074, 1023);
    let kb = (snap(hi.log2(), !nice_hi) as i32).clamp(-1074, 1023);
    let stride = ((kb - ka).max(0) as usize + 1).div_ceil(max_ticks).max(1);
    let values = (ka..=kb).step_by(stride).map(|k| 2f64.powi(k)).collect();
    let lo = if nice_lo { 2f64.powi(ka) } else { lo };
    let hi = if nice_hi { 2f64.powi(kb) } else { hi };
    Ticks { lo, hi, values }
}

/// Widens a positive value by 4% and rounds it down or up to 1, 1.5, 2,
/// 3, 5 or 7 times a power of ten: a log axis end with a little margin.
fn round_log(data: f64, up: bool) -> f64 {
    let v = if up { data * 1.04 } else { data / 1.04 };
    let e = (v.log10().floor() as i32).clamp(-307, 307);
    let m = v / pow10(1.0, e);
    const NICE: [f64; 7] = [1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0];
    let pick = if up {
        NICE.into_iter().find(|&c| c >= m - EPS)
    } else {
        NICE.into_iter().rev().find(|&c| c <= m + EPS)
    };
    let nice = pow10(pick.unwrap_or(1.0), e);
    let covers = if up { nice >= data } else { nice <= data };
    if nice.is_finite() && nice > 0.0 && covers {
        nice
    } else {
        data
    }
}

/// Log ticks: 1-2-5 up to two decades, else powers of ten (thinned to
/// `max_ticks`); 1..9 within one decade, linear ticks for tiny ranges. `nice_*` ends
/// get a small margin (see `round_log`).
fn log10_ticks(lo: f64, hi: f64, nice_lo: bool, nice_hi: bool, max_ticks: usize) -> Ticks {
    let lo = if nice_lo { round_log(lo, false) } else { lo };
    let hi = if nice_hi { round_log(hi, true) } else { hi };
    let (ka, kb) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let (ka, kb) = (ka.clamp(-330, 310), kb.clamp(-330, 310));
    let within = |v: &f64| *v >= lo * (1.0 - EPS) && *v <= hi * (1.0 + EPS);
    let with = |ms: &[f64]| -> Vec<f64> {
        let all = (ka..=kb).flat_map(|k| ms.iter().map(move |&m| pow10(m, k)));
        all.filter(within).collect()
    };
    let one_two_five = with(&[1.0, 2.0, 5.0]);
    let (mut lo, mut hi) = (lo, hi);
    let mut values = if (hi / lo).log10() <= 2.05 && one_two_five.len() <= max_ticks {
        one_two_five
    } else {
        // Powers of ten only: a nice end more than 2x past its last power widens to the next
        // one, so that the data's ends are ticked (curves reaching 5 ms get a 10 ms tick,
        // not a last tick at 1 ms).
        let below = pow10(1.0, (hi.log10().floor() as i32).clamp(-330, 310));
        if nice_hi && hi > 2.0 * below * (1.0 + EPS) {
            hi = pow10(1.0, kb);
        }
        let above = pow10(1.0, (lo.log10().ceil() as i32).clamp(-330, 310));
        if nice_lo && lo < above / 2.0 * (1.0 - EPS) {
            lo = pow10(1.0, ka);
        }
        let within = |v: &f64| *v >= lo * (1.0 - EPS) && *v <= hi * (1.0 + EPS);
        let powers: Vec<f64> = (ka..=kb).map(|k| pow10(1.0, k)).filter(within).collect();
        let stride = powers.len().div_ceil(max_ticks).max(1);
        let mut kept: Vec<f64> = powers.iter().copied().step_by(stride).collect();
        // Thinned, the top power stays: it is the one the data reach.
        if let (Some(&top), Some(&last)) = (powers.last(), kept.last())
            && top > last
        {
            kept.push(top);
        }
        kept
    };
    if values.len() < 3 {
        let all = with(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        if all.len() <= max_ticks {
            values = all;
        }
    }
    if values.len() < 2 {
        values = linear_ticks(lo, hi, false, false, max_ticks.min(5)).values;
    }
    Ticks { lo, hi, values }
}

/// Positions (in nines) and quantiles of the candidate "nines" ticks.
fn nines_candidates() -> impl Iterator<Item = (f64, f64)> {
    let nines = (1..=15).map(|k| (k as f64, 1.0 - pow10(1.0, -k)));
    [(0.0, 0.0), (2f64.log10(), 0.5)].into_iter().chain(nines)
}

/// Ticks at 0%, 50%, 90%, 99%, 99.9%...; a nice top end is widened to the
/// next 9x.9..% and a nice bottom end down to the previous tick.
fn nines_ticks(lo: f64, hi: f64, nice_lo: bool, nice_hi: bool, max_ticks: usize) -> Ticks {
    let n = |q: f64| Scale::Nines.transform(q);
    let (mut lo, mut hi) = (lo, hi);
    if nice_lo {
        let below = nines_candidates().filter(|&(t, _)| t <= n(lo) + EPS);
        lo = below.last().map_or(0.0, |(_, q)| q);
    }
    if nice_hi {
        hi = 1.0 - pow10(1.0, -(snap(n(hi), false) as i32).clamp(1, 15));
    }
    let inside = |&(t, _): &(f64, f64)| t >= n(lo) - EPS && t <= n(hi) + EPS;
    let all: Vec<f64> = nines_candidates().filter(inside).map(|(_, q)| q).collect();
    let stride = all.len().div_ceil(max_ticks).max(1);
    let values = all.into_iter().step_by(stride).collect();
    Ticks { lo, hi, values }
}

/// Smallest stride that keeps every `stride`-th label clear of the next;
/// `fit(a, b)` tells whether neighbouring labels `a` and `b` fit.
fn stride<T>(labels: &[T], fit: impl Fn(&T, &T) -> bool) -> usize {
    let ok = |s: usize| {
        let kept: Vec<&T> = labels.iter().step_by(s).collect();
        kept.windows(2).all(|p| fit(p[0], p[1]))
    };
    (1..=labels.len().max(1)).find(|&s| ok(s)).unwrap_or(1)
}

/// The plot area (left, top, right, bottom, in pixels) and both axes.
pub(super) struct Frame<'a> {
    pub l: f64,
    pub t: f64,
    pub r: f64,
    pub b: f64,
    pub x: &'a Axis,
    pub y: &'a Axis,
    pub xt: Ticks,
    pub yt: Ticks,
}

impl Frame<'_> {
    fn map(s: Scale, t: &Ticks, v: f64, from: f64, to: f64) -> f64 {
        let (a, b) = (s.transform(t.lo), s.transform(t.hi));
        let f = if b > a {
            (s.transform(v) - a) / (b - a)
        } else {
            0.5
        };
        (from + f * (to - from)).clamp(-1e5, 1e5)
    }

    /// Pixel column of data value `v`.
    pub(super) fn px(&self, v: f64) -> f64 {
        Self::map(self.x.scale, &self.xt, v, self.l, self.r)
    }

    /// Pixel row of data value `v`.
    pub(super) fn py(&self, v: f64) -> f64 {
        Self::map(self.y.scale, &self.yt, v, self.b, self.t)
    }

    pub(super) fn plot(&self) -> Rect {
        Rect::new(self.l, self.t, self.r - self.l, self.b - self.t)
    }

    /// Grid, axis lines, ticks, tick labels (thinned where they would
    /// collide) and axis titles; no grid or ticks without data. Tick labels
    /// stay inside an image `img_w` wide.
    pub(super) fn draw(&self, out: &mut String, img_w: f64, has_data: bool) {
        let (l, t, r, b) = (self.l, self.t, self.r, self.b);
        if has_data {
            let (mut grid, mut marks) = (String::new(), String::new());
            for &v in &self.yt.values {
                let y = crisp(self.py(v));
                let _ = write!(grid, "M{} {y}H{}", num(l), num(r));
                let _ = write!(marks, "M{} {y}h4", num(l - 4.0));
            }
            for &v in &self.xt.values {
                let x = crisp(self.px(v));
                let _ = write!(grid, "M{x} {}V{}", num(t), num(b));
                let _ = write!(marks, "M{x} {}v4", num(b));
            }
            let _ = write!(out, "<path d=\"{grid}\" stroke=\"#e8e8e8\" fill=\"none\"/>");
            let _ = write!(out, "<path d=\"{marks}\" stroke=\"#999\" fill=\"none\"/>");
            let label = |v: f64, at: f64, f: fn(f64) -> String| {
                let s = f(v);
                (at, text_width(&s, 11.0), s)
            };
            let ys = &self.yt.values;
            let ylab: Vec<_> = ys
                .iter()
                .map(|&v| label(v, self.py(v), self.y.format))
                .collect();
            for (y, _, s) in ylab.iter().step_by(stride(&ylab, |a, b| a.0 - b.0 >= 13.0)) {
                text(
                    out,
                    (l - 7.0, y + 4.0),
                    "text-anchor=\"end\" fill=\"#444\"",
                    s,
                    None,
                );
            }
            let xs = &self.xt.values;
            let xlab: Vec<_> = xs
                .iter()
                .map(|&v| label(v, self.px(v), self.x.format))
                .collect();
            let fit = |a: &(f64, f64, String), b: &(f64, f64, String)| {
                b.0 - a.0 >= (a.1 + b.1) / 2.0 + 8.0
            };
            // Drop the first label if that avoids thinning (0% next to 50%).
            let skip =
                (xlab.len() > 2 && stride(&xlab, fit) > 1 && stride(&xlab[1..], fit) == 1) as usize;
            for (x, tw, s) in xlab[skip..].iter().step_by(stride(&xlab[skip..], fit)) {
                let x = x.min(img_w - tw / 2.0 - 2.0).max(tw / 2.0 + 2.0);
                text(
                    out,
                    (x, b + 17.0),
                    "text-anchor=\"middle\" fill=\"#444\"",
                    s,
                    None,
                );
            }
        }
        let (x0, y0) = (crisp(l), crisp(b));
        let (t, r) = (num(t), num(r));
        let _ = write!(
            out,
            "<path d=\"M{x0} {t}V{y0}H{r}\" stroke=\"#888\" fill=\"none\"/>"
        );
        let title = "text-anchor=\"middle\" font-size=\"12\" fill=\"#333\"";
        if !self.x.label.is_empty() {
            let (s, _) = truncate(&self.x.label, self.r - l, 12.0);
            text(out, ((l + self.r) / 2.0, b + 36.0), title, &s, None);
        }
        if !self.y.label.is_empty() {
            let (s, _) = truncate(&self.y.label, b - self.t + 20.0, 12.0);
            let cy = (self.t + b) / 2.0;
            let rotate = format!("transform=\"rotate(-90 17 {})\" {title}", num(cy));
            text(out, (17.0, cy), &rotate, &s, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(scale: Scale, lo: f64, hi: f64) -> Ticks {
        Axis::new("", scale).ticks(Some((lo, hi)), 8)
    }

    #[test]
    fn linear_0_97() {
        let ticks = t(Scale::Linear, 0.0, 97.0);
        assert_eq!(ticks.values, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!((ticks.lo, ticks.hi), (0.0, 100.0));
    }

    #[test]
    fn linear_small_steps_and_fixed_ends() {
        let ticks = t(Scale::Linear, 0.0, 0.7);
        let labels: Vec<String> = ticks.values.iter().map(|&v| si(v)).collect();
        assert_eq!(
            labels,
            ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]
        );
        let ticks = t(Scale::Linear, -3.2, 4.1);
        assert_eq!(ticks.values, vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0]);
        let fixed = Axis::new("", Scale::Linear).with_range(Some(5.0), None);
        let ticks = fixed.ticks(Some((0.0, 97.0)), 8);
        assert_eq!((ticks.lo, ticks.values[0]), (5.0, 20.0));
    }

    #[test]
    fn linear_zero_and_degenerate() {
        let axis = Axis::new("", Scale::Linear).with_zero();
        assert_eq!(axis.ticks(Some((40.0, 97.0)), 8).values[0], 0.0);
        let flat = t(Scale::Linear, 5.0, 5.0);
        assert!(flat.lo < 5.0 && flat.hi > 5.0 && flat.values.len() >= 3);
        let zero = t(Scale::Linear, 0.0, 0.0);
        assert_eq!((zero.lo, zero.hi), (0.0, 1.0));
    }

    #[test]
    fn log2_1_64() {
        let ticks = t(Scale::Log2, 1.0, 64.0);
        assert_eq!(ticks.values, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(t(Scale::Log2, 1.0, 48.0).hi, 64.0);
        let many = t(Scale::Log2, 1.0, 4096.0);
        assert_eq!(
            many.values,
            vec![1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0]
        );
    }

    #[test]
    fn log10_1e3_1e6() {
        let ticks = t(Scale::Log10, 1e3, 1e6);
        assert_eq!(ticks.values, vec![1e3, 1e4, 1e5, 1e6]);
        let narrow = t(Scale::Log10, 120.0, 9000.0);
        assert_eq!(narrow.values, vec![100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4]);
        assert!(t(Scale::Log10, 210.0, 290.0).values.len() >= 2);
        let small = t(Scale::Log10, 1e-6, 1e-3);
        assert_eq!(small.values, vec![1e-6, 1e-5, 1e-4, 1e-3]);
        // Data reaching 5x past the last power get the next power as a tick.
        let wide = t(Scale::Log10, 2e-5, 5e-3);
        assert_eq!(wide.values, vec![1e-5, 1e-4, 1e-3, 1e-2]);
    }

    #[test]
    fn nines() {
        let ticks = t(Scale::Nines, 0.0, 0.9999);
        let labels: Vec<String> = ticks.values.iter().map(|&q| nines_label(q)).collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]);
        assert!((Scale::Nines.transform(0.999) - 3.0).abs() < 1e-9);
        assert!(!Scale::Nines.accepts(1.0));
    }
}
