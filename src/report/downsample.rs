//! Long time series made drawable: a 24-hour run has 86,400 one-second points per step, more
//! than a chart has pixels. Points are gathered into at most `max` buckets of equal width in
//! x; each bucket keeps its mean, minimum and maximum, so a one-second stall still shows as a
//! dip of the band even when the mean hides it.

/// One bucket: where it is, its mean, and the extremes inside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// The mean x of the points inside.
    pub x: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// How many points it holds (1 when no downsampling happened).
    pub count: usize,
}

/// `points` (x ascending, or at least non-decreasing) in at most `max` buckets. Fewer points
/// than `max` come back one per bucket. Non-finite points are skipped.
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<Bucket> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let max = max.max(1);
    if pts.len() <= max {
        return pts
            .into_iter()
            .map(|(x, y)| Bucket {
                x,
                mean: y,
                min: y,
                max: y,
                count: 1,
            })
            .collect();
    }
    let (x0, x1) = (pts[0].0, pts[pts.len() - 1].0);
    let width = (x1 - x0) / max as f64;
    let mut out: Vec<Bucket> = Vec::with_capacity(max);
    let mut current: Option<(usize, Bucket, f64)> = None;
    for (x, y) in pts {
        let slot = if width > 0.0 {
            (((x - x0) / width) as usize).min(max - 1)
        } else {
            0
        };
        match &mut current {
            Some((s, b, sum_x)) if *s == slot => {
                b.count += 1;
                b.mean += y;
                *sum_x += x;
                b.min = b.min.min(y);
                b.max = b.max.max(y);
            }
            _ => {
                if let Some((_, b, sum_x)) = current.take() {
                    out.push(finish(b, sum_x));
                }
                current = Some((
                    slot,
                    Bucket {
                        x,
                        mean: y,
                        min: y,
                        max: y,
                        count: 1,
                    },
                    x,
                ));
            }
        }
    }
    if let Some((_, b, sum_x)) = current {
        out.push(finish(b, sum_x));
    }
    out
}

fn finish(mut b: Bucket, sum_x: f64) -> Bucket {
    let n = b.count as f64;
    b.mean /= n;
    b.x = sum_x / n;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_pass_through() {
        let b = downsample(&[(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0)], 10);
        assert_eq!(b.len(), 2);
        assert_eq!((b[1].x, b[1].mean, b[1].count), (2.0, 3.0, 1));
        assert!(downsample(&[], 10).is_empty());
    }

    #[test]
    fn a_day_of_seconds_keeps_its_one_second_stall() {
        let day: Vec<(f64, f64)> = (0..86_400)
            .map(|s| (s as f64, if s == 40_000 { 0.0 } else { 1000.0 }))
            .collect();
        let b = downsample(&day, 600);
        assert!(b.len() <= 600 && b.len() >= 590, "{}", b.len());
        assert_eq!(b.iter().map(|x| x.count).sum::<usize>(), 86_400);
        assert_eq!(
            b.iter().filter(|x| x.min == 0.0).count(),
            1,
            "the stall survives"
        );
        assert!(b.iter().all(|x| x.max == 1000.0));
        assert!(b.windows(2).all(|w| w[0].x < w[1].x));
    }
}
