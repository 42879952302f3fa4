//! `perflab null`: its arguments to a run spec.

use super::NullSpec;
use super::args::NullArgs;
use crate::vocab::SpecError;
use crate::vocab::sweep::parse_numeric;
use crate::vocab::units::{parse_count, parse_duration};
use crate::workload::build::{Defaults, build_spec};
use crate::workload::{RunSpec, WorkloadSpec};

pub fn null_spec(args: &NullArgs) -> Result<RunSpec, SpecError> {
    let spin = parse_numeric(
        "spin",
        &args.spin,
        |s| parse_duration("spin", s),
        |d| d.as_nanos() as f64,
        |f| std::time::Duration::from_nanos(f as u64),
    )?;
    let spin_ns = spin.map(|d| d.as_nanos() as u64).named("spin_ns");
    let fail_every = parse_count("fail-every", &args.fail_every)?;
    build_spec(
        &args.run,
        WorkloadSpec::new(NullSpec {
            spin_ns,
            fail_every,
            test_panic: crate::error::test_panic_requested("worker"),
            test_panic_open: crate::error::test_panic_requested("open"),
        }),
        &Defaults {
            threads: "1".into(),
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kind::parse;

    #[test]
    fn grids_of_more_than_ten_thousand_steps_are_refused() {
        let null = |args: &[&str]| null_spec(&parse(&super::super::KIND, args).unwrap());
        // 4000 x 4000 steps: the grid alone would take gigabytes.
        let e = null(&["--threads", "1..4000", "--spin", "1ns..4000ns"]).unwrap_err();
        assert!(e.to_string().contains("16000000 steps"), "{e}");
        assert!(null(&["--threads", "1..100", "--spin", "1ns..100ns"]).is_ok());
    }

    #[test]
    fn zipped_options_step_together() {
        let null = |args: &[&str]| null_spec(&parse(&super::super::KIND, args).unwrap());
        let s = null(&[
            "--threads",
            "1,2,4",
            "--spin",
            "1ns,2ns,4ns",
            "--zip",
            "threads,spin",
        ])
        .unwrap();
        let points = s.points();
        assert_eq!(points.len(), 3, "three steps, not nine");
        for (i, p) in points.iter().enumerate() {
            assert_eq!(p.index_of("threads"), Some(i));
            assert_eq!(p.index_of("spin_ns"), Some(i));
        }
        assert_eq!(s.swept(), ["threads"], "the leader names the steps");
        // Crossed, as before, without --zip.
        let s = null(&["--threads", "1,2,4", "--spin", "1ns,2ns,4ns"]).unwrap();
        assert_eq!(s.points().len(), 9);
        let e = null(&[
            "--threads",
            "1,2",
            "--spin",
            "1ns,2ns,4ns",
            "--zip",
            "threads,spin",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("as many"), "{e}");
        let e = null(&["--threads", "1,2", "--zip", "threads,nothing"]).unwrap_err();
        assert!(e.to_string().contains("the options are"), "{e}");
        let e = null(&["--threads", "1,2", "--zip", "threads"]).unwrap_err();
        assert!(e.to_string().contains("two options"), "{e}");
    }
}
