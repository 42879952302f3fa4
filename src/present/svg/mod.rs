//! Hand-written SVG charts for self-contained HTML reports: no JavaScript,
//! no network, no external files.
//!
//! Every `render()` returns one `<svg>` element (no XML prolog) with
//! `xmlns`, `viewBox`, `width`/`height`, `class="chart"`, `role="img"`, an
//! `aria-label` and a `<title>`, styled only by presentation attributes,
//! so the same string works inlined in HTML and as a standalone `.svg`
//! file. Output is deterministic: coordinates have at most one decimal and
//! nothing depends on hash order. All text is XML-escaped.
//!
//! - [`LineChart`]: throughput vs concurrency ([`Scale::Log2`] x axis),
//!   response time vs throughput ([`Scale::Log10`] y axis), time series
//!   ([`Style::Band`] for downsampled min/max), latency percentile spectra
//!   ([`Scale::Nines`]: x values are quantiles `q` in `[0, 1)`, placed at
//!   `-log10(1 - q)` with ticks at 50%, 90%, 99%, 99.9%...). Points carry
//!   hover tooltips (series of up to [`MAX_TOOLTIPS`] points), optional CI
//!   whiskers, annotated [`Marker`]s and dashed [`Rule`]s (SLO limits).
//!   Series use the Okabe–Ito [`PALETTE`] plus a marker shape or dash
//!   pattern per index, so they stay distinct in grayscale.
//! - [`Heatmap`]: a labelled grid on a viridis scale where better values
//!   are always brighter.
//!
//! ```ignore
//! let mut chart = LineChart::new(
//!     "Throughput vs concurrency",
//!     Axis::new("client threads", Scale::Log2).with_format(|v| format!("{v}")),
//!     Axis::new("throughput", Scale::Linear).with_format(|v| format!("{}/s", si(v))).with_zero(),
//! );
//! let points = vec![Point::new(8.0, 141e3, "threads=8: 141k/s, p99 264 µs")];
//! chart.series.push(Series::new("postgres", Style::LineWithPoints, points));
//! let svg: String = chart.render();
//! ```
mod axis;
mod chart;
mod heatmap;
mod markup;

pub use axis::{Axis, Scale, Ticks};
pub use chart::{LineChart, MAX_TOOLTIPS, Marker, Point, Rule, Series, Style};
pub use heatmap::Heatmap;
pub use markup::{PALETTE, escape, nines_label, si};

#[cfg(test)]
mod tests {
    use super::*;

    /// One `<svg>` root with the required attributes, balanced `<svg>`
    /// tags (the plot clip is a nested svg), no NaN or infinity.
    fn assert_well_formed(svg: &str) {
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
        for attr in [
            "viewBox=",
            "width=",
            "height=",
            "class=\"chart\"",
            "role=\"img\"",
            "aria-label=",
        ] {
            assert!(svg.contains(attr), "missing {attr}");
        }
        assert!(svg.contains("<title>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert_eq!(svg.matches('<').count(), svg.matches('>').count());
    }

    fn points(n: usize) -> Vec<Point> {
        (0..n)
            .map(|i| Point::new(i as f64 + 1.0, (i * i) as f64 + 1.0, format!("p{i}")))
            .collect()
    }

    fn chart(scale: Scale, series: Vec<Series>) -> LineChart {
        let mut c = LineChart::new("t", Axis::new("x", scale), Axis::new("y", Scale::Log10));
        c.series = series;
        c
    }

    #[test]
    fn deterministic() {
        let mut c = chart(
            Scale::Log2,
            vec![Series::new("a", Style::LineWithPoints, points(9))],
        );
        c.series.push(Series::new("b", Style::Dashed, points(5)));
        c.markers.push(Marker {
            x: 4.0,
            y: 10.0,
            label: "peak".into(),
        });
        c.hlines.push(Rule {
            value: 50.0,
            label: "SLO".into(),
        });
        let svg = c.render();
        assert_eq!(svg, c.render());
        assert_well_formed(&svg);
        let cells = vec![vec![Some(1.0), Some(2.0)], vec![Some(3.0), None]];
        let h = Heatmap::new(
            "h",
            vec!["a".into(), "b".into()],
            vec!["c".into(), "d".into()],
            cells,
        );
        assert_eq!(h.render(), h.render());
    }

    #[test]
    fn escapes_text() {
        let mut c = chart(
            Scale::Linear,
            vec![Series::new("<s>", Style::Line, points(3))],
        );
        c.title = "a <&> b \"q\" 'x'".into();
        c.series[0].points[0].tip = "<tip&>".into();
        c.note = Some("n<>".into());
        let svg = c.render();
        assert!(svg.contains("aria-label=\"a &lt;&amp;&gt; b &quot;q&quot; &#39;x&#39;\""));
        assert!(svg.contains("<title>a &lt;&amp;&gt; b &quot;q&quot; &#39;x&#39;</title>"));
        assert!(svg.contains("&lt;tip&amp;&gt;") && svg.contains("n&lt;&gt;"));
        assert!(!svg.contains("<&>") && !svg.contains("<tip"));
        assert_well_formed(&svg);
    }

    #[test]
    fn degenerate_inputs() {
        let bad = |x: f64, y: f64| Point::new(x, y, "bad");
        let nan = vec![
            bad(f64::NAN, 1.0),
            bad(1.0, f64::INFINITY),
            bad(-1.0, 0.0),
            bad(2.0, -5.0),
        ];
        let flat = (0..4).map(|i| Point::new(i as f64, 7.0, "")).collect();
        let cases = [
            chart(Scale::Linear, vec![]),
            chart(Scale::Log2, vec![Series::new("empty", Style::Line, vec![])]),
            chart(
                Scale::Log2,
                vec![Series::new("nan", Style::LineWithPoints, nan)],
            ),
            chart(
                Scale::Linear,
                vec![Series::new("one", Style::Points, points(1))],
            ),
            chart(
                Scale::Nines,
                vec![Series::new(
                    "one",
                    Style::Band,
                    vec![bad(0.5, 3.0), bad(1.0, 4.0)],
                )],
            ),
            chart(
                Scale::Linear,
                vec![Series::new("flat", Style::LineWithPoints, flat)],
            ),
        ];
        for c in cases
            .iter()
            .cloned()
            .chain(cases.iter().cloned().map(|mut c| {
                (c.width, c.height) = (0, 0);
                c.x.min = Some(f64::NAN);
                c.y.max = Some(-1.0);
                c
            }))
        {
            let svg = c.render();
            assert_well_formed(&svg);
        }
        assert!(cases[0].render().contains(">no data<"));
        assert!(cases[2].render().contains(">no data<"));
        assert!(!cases[3].render().contains(">no data<"));
        let mut flat = cases[5].clone();
        flat.y.scale = Scale::Linear;
        assert_well_formed(&flat.render());
    }

    #[test]
    fn extreme_values() {
        let values = [
            1e-308,
            5e-324,
            1e-300,
            1.0,
            1e300,
            f64::MAX,
            -f64::MAX,
            -1e-300,
            0.0,
        ];
        for xs in [Scale::Linear, Scale::Log2, Scale::Log10, Scale::Nines] {
            for ys in [Scale::Linear, Scale::Log2, Scale::Log10, Scale::Nines] {
                for (k, &a) in values.iter().enumerate() {
                    let pts = values
                        .iter()
                        .skip(k)
                        .map(|&b| Point::new(a, b, "").with_range(a, b))
                        .collect();
                    let mut c = chart(xs, vec![Series::new("e", Style::LineWithPoints, pts)]);
                    c.y.scale = ys;
                    c.hlines.push(Rule {
                        value: a,
                        label: "r".into(),
                    });
                    assert_well_formed(&c.render());
                }
            }
        }
        let cells = vec![
            values.iter().map(|&v| Some(v)).collect(),
            vec![Some(5e-324), Some(f64::MAX)],
        ];
        let cols = (0..values.len()).map(|i| format!("c{i}")).collect();
        let h = Heatmap::new("x", cols, vec!["a".into(), "b".into()], cells);
        assert_well_formed(&h.render());
    }

    #[test]
    fn tooltips_and_large_series() {
        let c = chart(
            Scale::Linear,
            vec![Series::new("a", Style::LineWithPoints, points(3))],
        );
        let svg = c.render();
        assert!(svg.contains("<title>p0</title>") && svg.contains("<title>p2</title>"));
        let big = chart(
            Scale::Linear,
            vec![Series::new("a", Style::Line, points(MAX_TOOLTIPS + 1))],
        );
        assert!(!big.render().contains("<title>p0</title>"));
        let scatter = chart(
            Scale::Linear,
            vec![Series::new("a", Style::Points, points(1000))],
        );
        assert_well_formed(&scatter.render());
    }

    #[test]
    fn legend_with_many_series() {
        let series: Vec<Series> = (0..12)
            .map(|i| {
                Series::new(
                    format!("series {i} with a rather long name"),
                    Style::Line,
                    points(4),
                )
            })
            .collect();
        let svg = chart(Scale::Linear, series).render();
        assert_eq!(svg.matches("<g class=\"legend\">").count(), 1);
        assert!(
            svg.contains('…') && svg.contains("<title>series 11 with a rather long name</title>")
        );
        assert_well_formed(&svg);
    }

    #[test]
    fn heatmap_missing_cells() {
        let cells = vec![vec![Some(1.0), None, Some(f64::NAN)], vec![Some(1000.0)]];
        let cols = vec!["qd 1".to_string(), "qd 2".into(), "qd <4>".into()];
        let mut h = Heatmap::new("IOPS <&>", cols, vec!["4k".into(), "1M".into()], cells);
        let svg = h.render();
        assert_well_formed(&svg);
        assert!(svg.contains("<title>4k × qd 2: no data</title>"));
        assert!(svg.contains("<title>1M × qd &lt;4&gt;: no data</title>"));
        assert_eq!(svg.matches(">–<").count(), 4);
        assert!(svg.contains("log colour scale"));
        h.rows.clear();
        assert!(h.render().contains(">no data<"));
        assert_well_formed(&h.render());
        let all_missing = Heatmap::new("m", vec!["a".into()], vec!["b".into()], vec![vec![None]]);
        assert_well_formed(&all_missing.render());
    }
}
