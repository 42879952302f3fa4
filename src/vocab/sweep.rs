//! Sweep syntax: any numeric option takes one value or a list of them.
//!
//! - `1,2,4` — a list;
//! - `1..8` — every whole value from 1 to 8;
//! - `1..64:x2` — geometric: 1, 2, 4 ... 64;
//! - `4k..64k:+4k` (or `:4k`) — arithmetic steps;
//! - items combine: `1,2,8..32:x2`.
//!
//! A [`Sweep`] keeps its option's name, so a step of a grid ([`StepPoint`]) can say which value
//! of each swept option it uses. Two swept options make a grid; the first one named in the
//! specification is the outer loop.

use super::SpecError;
use serde::Serialize;

/// The most steps one range may expand to; more is almost always a missing `:x2`.
const MAX_RANGE_STEPS: usize = 4096;

/// The values one option takes over a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep<T> {
    name: &'static str,
    values: Vec<T>,
}

impl<T: Clone> Sweep<T> {
    /// An option that does not sweep.
    pub fn single(name: &'static str, value: T) -> Self {
        Sweep {
            name,
            values: vec![value],
        }
    }

    /// An option that takes each of `values` in turn. `values` must not be empty.
    pub fn list(name: &'static str, values: Vec<T>) -> Self {
        assert!(!values.is_empty(), "a sweep needs at least one value");
        Sweep { name, values }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The first value: what a single run uses, and the base of a scaling comparison.
    pub fn first(&self) -> T {
        self.values[0].clone()
    }

    /// Its values as people read them, each written by `f`: `4 KiB`, `1,2,4`, or
    /// `1 .. 64 (7 values)` for a long sweep.
    pub fn text(&self, f: impl Fn(&T) -> String) -> String {
        let v = self.values();
        match v {
            [] => String::new(),
            [one] => f(one),
            _ if v.len() <= 6 => v.iter().map(&f).collect::<Vec<_>>().join(","),
            [first, .., last] => format!("{} .. {} ({} values)", f(first), f(last), v.len()),
        }
    }

    pub fn is_swept(&self) -> bool {
        self.values.len() > 1
    }

    /// The value this option takes at a step of the sweep.
    pub fn at(&self, point: &StepPoint) -> T {
        let index = point.index_of(self.name).unwrap_or(0);
        self.values[index.min(self.values.len() - 1)].clone()
    }

    /// The same values under another name: the record names options with their unit
    /// (`size_bytes`) while the flag is `--size`.
    pub fn named(self, name: &'static str) -> Self {
        Sweep {
            name,
            values: self.values,
        }
    }

    /// Replaces the values by `f` of each (used to apply defaults that depend on the machine).
    pub fn map<U: Clone>(&self, f: impl Fn(&T) -> U) -> Sweep<U> {
        Sweep {
            name: self.name,
            values: self.values.iter().map(f).collect(),
        }
    }
}

impl<T: Serialize> Serialize for Sweep<T> {
    /// A sweep is written as the list of its values (one value when it does not sweep), so the
    /// record shows exactly what the user asked for.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.values.len() == 1 {
            self.values[0].serialize(serializer)
        } else {
            self.values.serialize(serializer)
        }
    }
}

/// A swept option seen from outside: its name and its values as JSON, for building steps.
pub trait Axis {
    fn axis_name(&self) -> &'static str;
    fn count(&self) -> usize;
    fn value_json(&self, index: usize) -> serde_json::Value;
}

impl<T: Clone + Serialize> Axis for Sweep<T> {
    fn axis_name(&self) -> &'static str {
        self.name
    }
    fn count(&self) -> usize {
        self.values.len()
    }
    fn value_json(&self, index: usize) -> serde_json::Value {
        serde_json::to_value(&self.values[index]).unwrap_or(serde_json::Value::Null)
    }
}

/// One point of a sweep: which value each swept option takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepPoint {
    indices: Vec<(&'static str, usize)>,
}

impl StepPoint {
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.indices
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, i)| i)
    }
}

/// Expands the swept axes into the steps of a grid, the first axis outermost.
pub fn grid(axes: &[&dyn Axis]) -> Vec<StepPoint> {
    grid_zipped(axes, &[])
}

/// [`grid`], where the axes of each group in `zip` step together instead of crossing: the
/// group's first axis is a dimension of the grid, and the others take its index (IOzone's
/// `-t`: one file per thread). The caller checks that a group's axes have as many values.
pub fn grid_zipped(axes: &[&dyn Axis], zip: &[Vec<String>]) -> Vec<StepPoint> {
    let follows = |name: &str| zip.iter().any(|g| g.iter().skip(1).any(|n| n == name));
    let swept: Vec<&&dyn Axis> = axes
        .iter()
        .filter(|a| a.count() > 1 && !follows(a.axis_name()))
        .collect();
    let mut points = vec![StepPoint::default()];
    for axis in swept {
        let group: Vec<&'static str> = zip
            .iter()
            .find(|g| g.first().is_some_and(|n| n == axis.axis_name()))
            .map(|g| {
                axes.iter()
                    .map(|a| a.axis_name())
                    .filter(|n| g.iter().skip(1).any(|f| f == n))
                    .collect()
            })
            .unwrap_or_default();
        let mut next = Vec::with_capacity(points.len() * axis.count());
        for point in &points {
            for index in 0..axis.count() {
                let mut p = point.clone();
                p.indices.push((axis.axis_name(), index));
                p.indices.extend(group.iter().map(|n| (*n, index)));
                next.push(p);
            }
        }
        points = next;
    }
    points
}

/// The parameters of a step as (option, value) pairs, for the record: every axis, swept or not.
pub fn step_params(axes: &[&dyn Axis], point: &StepPoint) -> Vec<(String, serde_json::Value)> {
    axes.iter()
        .map(|a| {
            let index = point.index_of(a.axis_name()).unwrap_or(0);
            (a.axis_name().to_string(), a.value_json(index))
        })
        .collect()
}

/// Parses a numeric sweep. `parse` reads one value (with its units) and `to_f64`/`from_f64`
/// let ranges step through values of any numeric type.
pub fn parse_numeric<T: Clone + PartialOrd>(
    name: &'static str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, SpecError>,
    to_f64: impl Fn(&T) -> f64,
    from_f64: impl Fn(f64) -> T,
) -> Result<Sweep<T>, SpecError> {
    let mut values = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(SpecError::new(
                name,
                text,
                "empty item in the list; write e.g. 1,2,4",
            ));
        }
        match item.split_once("..") {
            None => values.push(parse(item)?),
            Some((low, rest)) => {
                let (high, step) = match rest.split_once(':') {
                    Some((high, step)) => (high, Some(step.trim())),
                    None => (rest, None),
                };
                let low_v = parse(low.trim())?;
                let high_v = parse(high.trim())?;
                let (lo, hi) = (to_f64(&low_v), to_f64(&high_v));
                if hi < lo {
                    return Err(SpecError::new(
                        name,
                        text,
                        "a range must go upwards, e.g. 1..8",
                    ));
                }
                let mut expanded: Vec<f64> = Vec::new();
                match step {
                    Some(factor) if factor.starts_with('x') || factor.starts_with('*') => {
                        let f: f64 = factor[1..].trim().parse().map_err(|_| {
                            SpecError::new(name, text, "a geometric step is written :x2")
                        })?;
                        // NaN and infinity parse as floats; neither makes a range.
                        if !f.is_finite() || f <= 1.0 || lo <= 0.0 {
                            return Err(SpecError::new(
                                name,
                                text,
                                "a geometric range needs a start above 0 and a factor above 1, e.g. 1..64:x2",
                            ));
                        }
                        let mut v = lo;
                        while v <= hi * (1.0 + 1e-9) && expanded.len() <= MAX_RANGE_STEPS {
                            expanded.push(v);
                            v *= f;
                        }
                    }
                    other => {
                        let inc = match other {
                            None => 1.0,
                            Some(s) => to_f64(&parse(s.trim_start_matches('+'))?),
                        };
                        if inc <= 0.0 {
                            return Err(SpecError::new(name, text, "a range step must be above 0"));
                        }
                        let mut v = lo;
                        while v <= hi * (1.0 + 1e-9) && expanded.len() <= MAX_RANGE_STEPS {
                            expanded.push(v);
                            v += inc;
                        }
                    }
                }
                if expanded.len() > MAX_RANGE_STEPS {
                    return Err(SpecError::new(
                        name,
                        text,
                        "the range has too many steps; add a step such as :x2 or :+4k",
                    ));
                }
                values.extend(expanded.into_iter().map(&from_f64));
            }
        }
        if values.len() > MAX_RANGE_STEPS {
            return Err(SpecError::new(
                name,
                text,
                "the sweep has too many values; at most 4096",
            ));
        }
    }
    Ok(Sweep { name, values })
}

/// Parses a list of names (`copy,triad`) with `parse` for each; no ranges.
pub fn parse_names<T: Clone>(
    name: &'static str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, SpecError>,
) -> Result<Sweep<T>, SpecError> {
    let values = text
        .split(',')
        .map(str::trim)
        .map(|item| {
            if item.is_empty() {
                Err(SpecError::new(name, text, "empty item in the list"))
            } else {
                parse(item)
            }
        })
        .collect::<Result<Vec<T>, _>>()?;
    Ok(Sweep { name, values })
}

/// Parses a sweep of whole numbers with `parse_one` for each value (sizes, counts).
pub fn parse_u64(
    name: &'static str,
    text: &str,
    parse_one: fn(&str, &str) -> Result<u64, SpecError>,
) -> Result<Sweep<u64>, SpecError> {
    parse_numeric(
        name,
        text,
        |s| parse_one(name, s),
        |v| *v as f64,
        |f| f.round() as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::units::{parse_count, parse_size};

    fn counts(text: &str) -> Vec<u64> {
        parse_u64("threads", text, parse_count)
            .unwrap()
            .values()
            .to_vec()
    }

    #[test]
    fn lists_ranges_and_geometric_ranges() {
        assert_eq!(counts("4"), vec![4]);
        assert_eq!(counts("1,2,4"), vec![1, 2, 4]);
        assert_eq!(counts("1..5"), vec![1, 2, 3, 4, 5]);
        assert_eq!(counts("1..64:x2"), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(counts("1..60:x2"), vec![1, 2, 4, 8, 16, 32]);
        assert_eq!(counts("2..10:+4"), vec![2, 6, 10]);
        assert_eq!(counts("1,2,8..32:x2"), vec![1, 2, 8, 16, 32]);
        assert_eq!(counts("1..23").len(), 23);
    }

    #[test]
    fn sizes_sweep_with_units() {
        let s = parse_u64("bs", "4k..1m:x2", parse_size).unwrap();
        assert_eq!(s.values().first(), Some(&4096));
        assert_eq!(s.values().last(), Some(&(1 << 20)));
        assert_eq!(s.values().len(), 9);
    }

    #[test]
    fn bad_sweeps_are_refused_with_a_hint() {
        for bad in ["", "1,,2", "8..1", "0..8:x2", "1..8:x1", "1..8:+0", "a..b"] {
            assert!(parse_u64("threads", bad, parse_count).is_err(), "{bad}");
        }
        let err = parse_u64("bs", "1..1g", parse_size).unwrap_err();
        assert!(err.to_string().contains(":x2"), "{err}");
    }

    #[test]
    fn nan_and_infinite_factors_and_endless_lists_are_refused() {
        // A NaN factor compared false to every bound and gave a one-value "range".
        for bad in [
            "1..8:xNaN",
            "1..8:xnan",
            "1..8:xinf",
            "1..8:*inf",
            "1..8:x-inf",
        ] {
            let e = parse_u64("threads", bad, parse_count).unwrap_err();
            assert!(e.hint.contains("factor above 1"), "{bad}: {e}");
        }
        let many = vec!["1"; 4097].join(",");
        let e = parse_u64("threads", &many, parse_count).unwrap_err();
        assert!(e.hint.contains("too many values"), "{e}");
        assert_eq!(counts(&vec!["1"; 4096].join(",")).len(), 4096);
    }

    #[test]
    fn grids_put_the_first_axis_outermost() {
        let a = Sweep::list("bs", vec![1u64, 2]);
        let b = Sweep::list("iodepth", vec![10u64, 20, 30]);
        let c = Sweep::single("size", 7u64);
        let axes: [&dyn Axis; 3] = [&a, &c, &b];
        let points = grid(&axes);
        assert_eq!(points.len(), 6);
        assert_eq!(
            (a.at(&points[1]), b.at(&points[1]), c.at(&points[1])),
            (1, 20, 7)
        );
        assert_eq!((a.at(&points[3]), b.at(&points[3])), (2, 10));
        let params = step_params(&axes, &points[5]);
        assert_eq!(params[0], ("bs".to_string(), serde_json::json!(2)));
        assert_eq!(params[2], ("iodepth".to_string(), serde_json::json!(30)));
    }
}
