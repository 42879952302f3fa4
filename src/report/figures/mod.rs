//! The charts of a report, built from records. A run's, in the order `for_run` gives them
//! (each left out when the record has nothing for it: one step has no curve):
//!
//! | file | charts |
//! |---|---|
//! | `levels` | a load-level run's: achieved against target load, power, ops per watt |
//! | `curves` | the headline against the swept option, one line per curve, 95% whiskers over repeats, the USL fit dashed, peak, sweet spot and knee marked |
//! | `heatmaps` | the headline over two numeric options swept (bs × iodepth), one map per combination of the others |
//! | `hockey` | response time (p50, p99, p99.9) against throughput per curve, `--slo` drawn |
//! | the kind's | `Kind::figures` (a kind's own charts, made of `crate::present`) |
//! | `timeline` | throughput, p99, CPU and watts per interval, steps back to back, downsampled with min and max kept |
//! | `spectra` | the latency spectrum per step from the HDR histograms (x in "nines"), and per group at the peak step |
//!
//! and a comparison's (`comparison`): the runs' curves on one chart ([`overlay`]) and the
//! ratios per step with their intervals ([`ratios`]); [`run_labels`] names the runs in
//! legends. `axes` holds the scales and tick formats they share.
//!
//! Each family builds `Planned` charts (what the chart holds, before it is drawn), which
//! their tests read; this module draws them into [`Figure`]s.

mod axes;
mod comparison;
mod curves;
mod heatmaps;
mod hockey;
mod levels;
#[cfg(test)]
mod sample;
mod spectra;
mod timeline;

pub use comparison::{overlay, ratios, run_labels};

use super::Figure;
use super::Options;
use crate::analysis::curve;
use crate::present::svg::{Axis, Heatmap, LineChart, Series};
use crate::record::{Analysis, RunRecord, StepResult};
use crate::view::names::step_params;
use crate::workload::kind;

/// Series with more curves than this are cut to this many (a legend past it is unreadable).
const MAX_SERIES: usize = 10;

/// Every chart of one run, in the report's order.
pub fn for_run(r: &RunRecord, a: &Analysis, options: &Options) -> Vec<Figure> {
    let curves = curve::curves(&r.steps);
    let mut out = Vec::new();
    if r.load_levels.is_some() {
        // Calibrations and shares of a maximum, not a curve against one option.
        out.extend(levels::load_levels(r).into_iter().map(Planned::figure));
    } else if r.search.is_some() {
        // A search's probes, at several shares of each candidate's load: its own charts.
    } else {
        out.extend(curves::throughput(r, a, &curves).map(Planned::figure));
        out.extend(heatmaps::heatmaps(r).into_iter().map(Planned::figure));
        out.extend(
            hockey::hockey_sticks(r, a, &curves, options)
                .into_iter()
                .map(Planned::figure),
        );
    }
    out.extend(kind::of(r).map(|k| k.figures(r)).unwrap_or_default());
    out.extend(timeline::timeline(r).into_iter().map(Planned::figure));
    out.extend(spectra::spectrum(r, a).map(Planned::figure));
    out.extend(
        spectra::group_spectra(r, a)
            .into_iter()
            .map(Planned::figure),
    );
    out
}

/// A chart before it is drawn: its figure's name (unique in the document), its caption and
/// what it shows. The families build these so that their tests can read series, points and
/// axes rather than SVG.
struct Planned<C> {
    name: String,
    caption: String,
    chart: C,
}

/// A chart that draws itself as one `<svg>` element.
trait Draw {
    fn draw(&self) -> String;
}

impl Draw for LineChart {
    fn draw(&self) -> String {
        self.render()
    }
}

impl Draw for Heatmap {
    fn draw(&self) -> String {
        self.render()
    }
}

impl<C: Draw> Planned<C> {
    fn figure(self) -> Figure {
        Figure {
            name: self.name,
            caption: self.caption,
            svg: self.chart.draw(),
        }
    }
}

/// A run's chart, named after the run so that several runs' charts differ in one document.
fn planned<C>(r: &RunRecord, name: &str, caption: String, chart: C) -> Planned<C> {
    Planned {
        name: format!("{}-{name}", r.id),
        caption,
        chart,
    }
}

/// A chart of the reports' usual size with these series.
fn chart(title: impl Into<String>, x: Axis, y: Axis, series: Vec<Series>) -> LineChart {
    LineChart {
        series,
        height: 400,
        ..LineChart::new(title, x, y)
    }
}

/// A step as a legend or tooltip names it: its swept values, or "the step" when nothing was
/// swept.
fn step_label(s: &StepResult) -> String {
    let label = step_params(s);
    if label.is_empty() {
        "the step".into()
    } else {
        label
    }
}

/// The step with the record's index `i` (the analysis names steps by index, not position).
fn by_index(r: &RunRecord, i: usize) -> Option<&StepResult> {
    r.steps.iter().find(|s| s.index == i)
}
