//! Grids: when two numeric options sweep, the headline as a heatmap of one against the other,
//! one map per combination of the other options (the first four).

use super::axes::{axis_label, formatter};
use super::{Planned, planned};
use crate::analysis::curve::param_f64;
use crate::present::svg::Heatmap;
use crate::record::{RunRecord, StepResult};
use crate::view::names::header;
use crate::vocab::numbers::param;

/// One heatmap per combination of the other options when two numeric options sweep.
pub(super) fn heatmaps(r: &RunRecord) -> Vec<Planned<Heatmap>> {
    let Some(first) = r.steps.first() else {
        return Vec::new();
    };
    let numeric: Vec<&String> = first
        .swept
        .iter()
        .filter(|k| {
            r.steps
                .iter()
                .all(|s| s.params.get(*k).is_some_and(|v| v.is_number()))
        })
        .collect();
    if numeric.len() < 2 {
        return Vec::new();
    }
    let (row_name, col_name) = (numeric[numeric.len() - 2], numeric[numeric.len() - 1]);
    let others: Vec<&String> = first
        .swept
        .iter()
        .filter(|k| *k != row_name && *k != col_name)
        .collect();
    let mut groups: Vec<(String, Vec<&StepResult>)> = Vec::new();
    for s in &r.steps {
        let key = others
            .iter()
            .map(|k| {
                format!(
                    "{k}={}",
                    s.params.get(*k).map(|v| param(k, v)).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    let h = &r.headline;
    groups
        .into_iter()
        .take(4)
        .enumerate()
        .map(|(gi, (key, steps))| {
            let mut rows: Vec<f64> = steps
                .iter()
                .filter_map(|s| param_f64(s, row_name))
                .collect();
            let mut cols: Vec<f64> = steps
                .iter()
                .filter_map(|s| param_f64(s, col_name))
                .collect();
            for v in [&mut rows, &mut cols] {
                v.sort_by(f64::total_cmp);
                v.dedup();
            }
            let cells = rows
                .iter()
                .map(|rv| {
                    cols.iter()
                        .map(|cv| {
                            steps
                                .iter()
                                .find(|s| {
                                    param_f64(s, row_name) == Some(*rv)
                                        && param_f64(s, col_name) == Some(*cv)
                                })
                                .map(|s| s.summary.headline.mean)
                        })
                        .collect()
                })
                .collect();
            let (rf, cf) = (formatter(row_name), formatter(col_name));
            let title = format!(
                "{} by {} × {}{}",
                header(&h.metric, &h.op_name),
                axis_label(row_name),
                axis_label(col_name),
                if key.is_empty() {
                    String::new()
                } else {
                    format!(" ({key})")
                }
            );
            let map = Heatmap {
                title: title.clone(),
                x_label: axis_label(col_name),
                y_label: axis_label(row_name),
                columns: cols.iter().map(|v| cf(*v)).collect(),
                rows: rows.iter().map(|v| rf(*v)).collect(),
                cells,
                format: formatter(&h.metric),
                higher_is_better: h.higher_is_better,
                width: 640,
            };
            planned(
                r,
                &format!("grid-{gi}"),
                format!("{title}: each cell one step; brighter is better."),
                map,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;
    use serde_json::json;

    /// Steps over threads × spin: the headline of each in its cell, rows and columns in
    /// order and in their units.
    fn grid(kernels: &[&str]) -> RunRecord {
        let mut steps = Vec::new();
        for kernel in kernels {
            for threads in [1.0, 2.0] {
                for spin in [0.0, 1000.0] {
                    let ops = 100.0 * threads / (1.0 + spin / 1000.0);
                    let mut s = sample::step(
                        steps.len(),
                        &[("threads", threads), ("spin_ns", spin)],
                        ops,
                        1000,
                    );
                    if kernels.len() > 1 {
                        s.params.insert("kernel".into(), json!(kernel));
                        s.swept.insert(0, "kernel".into());
                    }
                    steps.push(s);
                }
            }
        }
        sample::run(steps)
    }

    #[test]
    fn two_numeric_options_make_a_grid() {
        let maps = heatmaps(&grid(&["copy"]));
        assert_eq!(maps.len(), 1);
        let m = &maps[0].chart;
        assert_eq!(maps[0].name, "run-grid-0");
        assert_eq!(m.title, "op/s by threads × spin");
        assert_eq!(
            (m.y_label.as_str(), m.x_label.as_str()),
            ("threads", "spin")
        );
        assert_eq!(m.rows, ["1", "2"]);
        assert_eq!(m.columns, ["0 ns", "1.00 µs"]);
        assert_eq!(
            m.cells,
            [[Some(100.0), Some(50.0)], [Some(200.0), Some(100.0)]]
        );
        assert!(m.higher_is_better);
    }

    /// A third option makes one map per value, named in the title.
    #[test]
    fn one_map_per_other_option() {
        let maps = heatmaps(&grid(&["copy", "triad"]));
        let titles: Vec<&str> = maps.iter().map(|m| m.chart.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "op/s by threads × spin (kernel=copy)",
                "op/s by threads × spin (kernel=triad)"
            ]
        );
    }

    #[test]
    fn one_numeric_option_is_no_grid() {
        assert!(heatmaps(&sample::threads_run(&[1.0, 2.0, 3.0])).is_empty());
        assert!(heatmaps(&sample::run(Vec::new())).is_empty());
    }
}
