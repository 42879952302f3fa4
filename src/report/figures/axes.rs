//! The axes every chart of a run shares: which scale (linear, log 2 along a sweep spanning 8x,
//! log 10 for values spanning decades), how ticks are written (by the figure's unit-suffixed
//! name), and what an option is called on an axis.

use crate::present::svg::{Axis, Scale};
use crate::vocab::numbers::{bytes_per_sec, count, ns, rate};

/// A tick formatter for a figure, by its unit-suffixed name.
pub(super) fn formatter(name: &str) -> fn(f64) -> String {
    if name.starts_with("bytes_per_sec") {
        bytes_per_sec
    } else if name.starts_with("ns_per_") || name.ends_with("_ns") {
        ns
    } else if name.contains("per_sec") {
        rate
    } else if name.ends_with("_bytes") {
        |v| crate::vocab::units::format_bytes(v.max(0.0) as u64)
    } else {
        plain
    }
}

/// `8`, `0.25`, `1.5k`: whole numbers without decimals.
pub(super) fn plain(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e4 {
        format!("{v:.0}")
    } else {
        count(v)
    }
}

/// The x axis of a sweep: its scale, its format, and whole-number ticks where every value
/// is whole (threads, clients, files).
pub(super) fn x_axis(name: &str, xs: &[f64]) -> Axis {
    let axis = Axis::new(axis_label(name), x_scale(xs)).with_format(formatter(name));
    match !xs.is_empty() && xs.iter().all(|x| x.fract() == 0.0) {
        true => axis.with_integers(),
        false => axis,
    }
}

/// Log 2 for sweeps spanning 8x or more (1 ... 64 threads; 4k ... 1m), linear otherwise
/// (1, 2, 4 threads sit better on a linear axis, where a straight line is linear scaling);
/// docs/reading-reports.md says the same.
pub(super) fn x_scale(xs: &[f64]) -> Scale {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo > 0.0 && hi / lo >= 8.0 {
        Scale::Log2
    } else {
        Scale::Linear
    }
}

/// Log 10 when values span more than `ratio`, else linear from zero.
pub(super) fn y_axis(label: String, name: &str, values: &[f64], ratio: f64) -> Axis {
    let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let axis = Axis::new(
        label,
        if lo > 0.0 && hi / lo > ratio {
            Scale::Log10
        } else {
            Scale::Linear
        },
    )
    .with_format(formatter(name));
    if axis.scale == Scale::Linear {
        axis.with_zero()
    } else {
        axis
    }
}

/// `threads`, `block size` (for `bs_bytes`), `size` ...
pub(super) fn axis_label(param: &str) -> String {
    match param {
        "bs_bytes" => "block size".into(),
        "size_bytes" => "size".into(),
        other => other
            .trim_end_matches("_bytes")
            .trim_end_matches("_ns")
            .replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep spanning 8x or more is drawn on log 2, a short one on a linear axis (where a
    /// straight line is linear scaling); whole values get whole ticks.
    #[test]
    fn sweeps_choose_their_scale() {
        assert_eq!(x_scale(&[1.0, 2.0, 4.0]), Scale::Linear);
        assert_eq!(x_scale(&[1.0, 8.0, 64.0]), Scale::Log2);
        let x = x_axis("bs_bytes", &[4096.0, 65536.0]);
        assert_eq!(x.label, "block size");
        assert_eq!(x.scale, Scale::Log2);
        assert!(x.integer);
        assert!(!x_axis("rate", &[0.5, 1.5]).integer);
    }

    /// Values spanning more than the given ratio go on log 10; others on a linear axis from
    /// zero.
    #[test]
    fn values_spanning_decades_go_on_a_log_axis() {
        let y = y_axis("p99".into(), "latency_ns", &[1e3, 1e6], 50.0);
        assert_eq!(y.scale, Scale::Log10);
        assert!(!y.zero);
        let y = y_axis("op/s".into(), "ops_per_sec", &[100.0, 400.0], 30.0);
        assert_eq!(
            (y.label.as_str(), y.scale, y.zero),
            ("op/s", Scale::Linear, true)
        );
        assert_eq!((y.format)(1500.0), "1.50k/s");
    }

    #[test]
    fn ticks_are_written_in_the_figures_unit() {
        assert_eq!(formatter("bytes_per_sec")(14.1e9), "14.1 GB/s");
        assert_eq!(formatter("latency_ns")(1250.0), "1.25 µs");
        assert_eq!(formatter("size_bytes")(65536.0), "64 KiB");
        assert_eq!(formatter("threads")(8.0), "8");
        assert_eq!(plain(0.25), "0.25");
        assert_eq!(plain(15000.0), "15.0k");
        assert_eq!(axis_label("spin_ns"), "spin");
        assert_eq!(axis_label("size_bytes"), "size");
    }
}
