//! Mail's charts: sessions per hour and delivery time (p95) against users, each step marked
//! by its quality-of-service verdict, with the users supported (a `--search-users` run) and
//! the delivery limit drawn in. Steps at 80% or 120% of a user count's load (a search's
//! qualification) are series of their own.

use super::present::{load_pct, users, users_text};
use crate::present::Figure;
use crate::present::mean_figure;
use crate::present::svg::{Axis, LineChart, Marker, Point, Rule, Scale, Series, Style};
use crate::record::{RunRecord, StepResult, step_number};
use crate::vocab::numbers::{count, ns};

fn verdict(s: &StepResult) -> Option<bool> {
    s.checks
        .iter()
        .find(|c| c.name == "mail_qos")
        .map(|c| c.passed)
}

/// A log scale when the users span a wide range (a doubling sweep), linear otherwise.
fn x_axis(r: &RunRecord) -> Axis {
    let xs: Vec<f64> = r.steps.iter().filter_map(users).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let scale = if lo > 0.0 && hi / lo >= 8.0 {
        Scale::Log2
    } else {
        Scale::Linear
    };
    Axis::new("users", scale).with_format(users_text)
}

/// One series per load share, in the order first run; points in order of users, each
/// tooltip with its verdict.
fn series(r: &RunRecord, figure: &str, show: fn(f64) -> String) -> Vec<Series> {
    let mut shares: Vec<f64> = Vec::new();
    for s in &r.steps {
        let p = load_pct(s);
        if !shares.contains(&p) {
            shares.push(p);
        }
    }
    let several = shares.len() > 1;
    shares
        .iter()
        .map(|&pct| {
            let mut steps: Vec<&StepResult> = r
                .steps
                .iter()
                .filter(|s| load_pct(s) == pct && users(s).is_some())
                .collect();
            steps.sort_by(|a, b| users(a).unwrap_or(0.0).total_cmp(&users(b).unwrap_or(0.0)));
            let points = steps
                .iter()
                .filter_map(|s| {
                    let (x, y) = (users(s)?, mean_figure(s, figure)?);
                    let mark = match verdict(s) {
                        Some(true) => ", QoS pass",
                        Some(false) => ", QoS FAIL",
                        None => "",
                    };
                    Some(Point::new(
                        x,
                        y,
                        format!(
                            "step {}: {} users at {pct}%: {}{mark}",
                            step_number(s.index),
                            users_text(x),
                            show(y)
                        ),
                    ))
                })
                .collect();
            let name = if several {
                format!("{pct}% of the users' load")
            } else {
                "steps".into()
            };
            // The qualification shares are a few scattered probes, not a curve.
            let style = if pct == 100.0 {
                Style::LineWithPoints
            } else {
                Style::Points
            };
            Series::new(name, style, points)
        })
        .collect()
}

/// Where each step failed its quality of service, as markers.
fn failures(r: &RunRecord, figure: &str) -> Vec<Marker> {
    r.steps
        .iter()
        .filter(|s| verdict(s) == Some(false))
        .filter_map(|s| {
            Some(Marker {
                x: users(s)?,
                y: mean_figure(s, figure)?,
                label: "QoS fail".into(),
            })
        })
        .collect()
}

fn chart(title: &str, x: Axis, y: Axis, series: Vec<Series>) -> LineChart {
    LineChart {
        series,
        height: 380,
        ..LineChart::new(title, x, y)
    }
}

/// The charts, or none for a run that is not mail's or has fewer than two user counts.
pub fn figures(r: &RunRecord) -> Vec<Figure> {
    let mut distinct: Vec<f64> = r.steps.iter().filter_map(users).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 2 {
        return Vec::new();
    }
    let supported = r.search.as_ref().and_then(|s| s.supported);
    let mut out = Vec::new();
    let mut rate = chart(
        "Sessions per hour against users",
        x_axis(r),
        Axis::new("sessions per hour", Scale::Linear)
            .with_format(count)
            .with_zero(),
        series(r, "sessions_per_hour", count),
    );
    rate.markers = failures(r, "sessions_per_hour");
    if let Some(u) = supported {
        rate.vlines.push(Rule {
            value: u,
            label: format!("{} users supported", users_text(u)),
        });
    }
    let caption = match supported {
        Some(u) => format!(
            "Sessions per hour at each step of the search, by share of the users' load; {} users is the largest count within the quality of service at every share.",
            users_text(u)
        ),
        None => {
            "Sessions per hour against users; steps that missed the quality of service are marked."
                .into()
        }
    };
    out.push(Figure {
        name: format!("{}-mail-sessions", r.id),
        caption,
        svg: rate.render(),
    });
    let mut delivery = chart(
        "Delivery time (p95) against users",
        x_axis(r),
        Axis::new("delivery p95", Scale::Linear)
            .with_format(ns)
            .with_zero(),
        series(r, "delivery_p95_ns", ns),
    );
    delivery.markers = failures(r, "delivery_p95_ns");
    let limit = r
        .spec
        .get("delivery_limit_ns")
        .and_then(|v| v.as_f64())
        .filter(|v| *v > 0.0);
    let max_p95 = r
        .steps
        .iter()
        .filter_map(|s| mean_figure(s, "delivery_p95_ns"))
        .fold(0.0f64, f64::max);
    // The limit only when it is near the data: a 60 s line above 0.5 s points flattens them.
    if let Some(l) = limit.filter(|l| *l <= 4.0 * max_p95) {
        delivery.hlines.push(Rule {
            value: l,
            label: format!("limit {}", ns(l)),
        });
    }
    if delivery.series.iter().any(|s| !s.points.is_empty()) {
        out.push(Figure {
            name: format!("{}-mail-delivery", r.id),
            caption: format!(
                "95th percentile of delivery time (submission to a watching reader's sight of the message) per step{}.",
                limit.map_or(String::new(), |l| format!(
                    "; the quality of service asks for 95% within {}",
                    ns(l)
                ))
            ),
            svg: delivery.render(),
        });
    }
    out
}
