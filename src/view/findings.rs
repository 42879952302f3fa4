//! What a sweep shows, one finding per line: the peak, the sweet spot, scaling, and per curve
//! its knees and scalability fit (a load-level run's findings are the levels'). Shared by
//! `perflab show` and reports.

use super::names::step_params;
use crate::record::{Analysis, RunRecord};
use crate::stats::usl::UslFit;
use crate::vocab::numbers::metric;
use crate::workload::kind;

/// `threads=4 kernel=triad` for a step (by its index), and its headline figure.
fn step_label(r: &RunRecord, i: usize) -> (String, f64) {
    r.steps
        .iter()
        .find(|s| s.index == i)
        .map(|s| {
            // The workers as the kind counts them (copies=4, analysts=2).
            let label = kind::label_in_kind(r, &step_params(s));
            (label, s.summary.headline.mean)
        })
        .unwrap_or_default()
}

/// What an analysis shows, one finding per line: the peak, the sweet spot, scaling, and per
/// curve its knees and scalability fit. Shared by `perflab show` and reports.
pub fn findings(r: &RunRecord, a: &Analysis) -> Vec<String> {
    // Calibrations and shares of a maximum are not a curve: their findings are the levels'.
    if let Some(l) = &r.load_levels {
        return super::levels::findings(r, l);
    }
    // A search's probes are not a curve either: its findings are mail's users supported.
    if r.search.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if r.steps.len() < 2 {
        return out;
    }
    let label = |i: usize| step_label(r, i);
    let m = |v: f64| metric(&r.headline.metric, v);
    if let Some(p) = a.peak_step {
        let (l, v) = label(p);
        let word = if r.headline.higher_is_better {
            "peak"
        } else {
            "lowest"
        };
        out.push(format!("{word}: {} at {l}", m(v)));
    }
    if let Some(p) = a.sweet_spot_step {
        let (l, v) = label(p);
        out.push(format!(
            "sweet spot: {} at {l} (best throughput per unit of response time)",
            m(v)
        ));
    }
    let scaling: Vec<String> = a
        .scaling
        .iter()
        .filter(|s| s.efficiency.is_some() && (s.speedup - 1.0).abs() > 1e-9)
        .map(|s| {
            format!(
                "{} {:.2}x ({:.0}% efficient)",
                label(s.step).0,
                s.speedup,
                s.efficiency.unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    if let Some(own) = kind::of(r).and_then(|k| k.scaling(r)) {
        // The same scaling, in the kind's words (jobs: copies and batches).
        out.extend(own);
    } else if !scaling.is_empty() {
        out.push(format!("scaling: {}", scaling.join(", ")));
    }
    let workers = kind::workers_of(r);
    for c in &a.curves {
        // The curve's axis in the kind's words (`analysts`, `copies`).
        let x = if c.x == "threads" {
            workers
        } else {
            c.x.as_str()
        };
        let curve = if c.label.is_empty() {
            x.to_string()
        } else {
            format!("{x}, {}", c.label)
        };
        let mut knees = Vec::new();
        if let Some(k) = c.knee_kneedle_step {
            knees.push(format!("Kneedle at {}", label(k).0));
        }
        if let Some(k) = c.knee_power_step {
            knees.push(format!("Kleinrock's power at {}", label(k).0));
        }
        if let Some(s) = &c.slo {
            knees.push(format!(
                "{} holds up to {}{}",
                s.objective,
                m(s.throughput),
                if s.interpolated {
                    format!(" (interpolated past {})", label(s.last_step).0)
                } else {
                    format!(" at {}", label(s.last_step).0)
                }
            ));
        }
        if !knees.is_empty() {
            out.push(format!("knee ({curve}): {}", knees.join("; ")));
        }
        if let Some(u) = &c.usl {
            out.push(format!(
                "USL ({curve}): {}",
                usl_text(u, &r.headline.metric, &c.x)
            ));
        }
    }
    out
}

/// `σ 0.031 [0.020, 0.042], κ 0.0012 [...], γ 1.02k/s; R² 0.998; peak at 28 threads, 12.3k/s
/// (extrapolated)`.
pub fn usl_text(u: &UslFit, figure: &str, x: &str) -> String {
    let ci = |c: Option<[f64; 2]>, f: &dyn Fn(f64) -> String| {
        c.map(|[lo, hi]| format!(" [{}, {}]", f(lo), f(hi)))
            .unwrap_or_default()
    };
    let g = |v: f64| format!("{v:.3}");
    let k = |v: f64| format!("{v:.2e}");
    let t = |v: f64| metric(figure, v);
    let mut text = format!(
        "σ {}{}, κ {}{}, γ {}{}; R² {:.3}",
        g(u.sigma),
        ci(u.sigma_ci95, &g),
        k(u.kappa),
        ci(u.kappa_ci95, &k),
        t(u.gamma),
        ci(u.gamma_ci95, &t),
        u.r_squared
    );
    match (u.peak_n, u.peak_throughput) {
        (Some(n), Some(xn)) => text.push_str(&format!(
            "; peak at {x}={n:.1}, {}{}",
            t(xn),
            if u.peak_extrapolated {
                " (extrapolated beyond the measured range)"
            } else {
                ""
            }
        )),
        _ => text.push_str("; no peak (no coherency cost)"),
    }
    if let Some(l) = u.amdahl_limit {
        text.push_str(&format!("; Amdahl ceiling {}", t(l)));
    }
    for w in &u.warnings {
        text.push_str(&format!("; {w}"));
    }
    text
}
