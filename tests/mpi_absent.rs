//! A perflab built without MPI (the default build) that an MPI launcher starts as one of
//! several ranks says so in one line and exits 2, rather than running N separate runs.

#![cfg(not(feature = "mpi"))]

mod common;

use common::Results;
use common::skip::skip_or_fail;
use std::process::Command;

fn perflab_as_rank(results: &Results, vars: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perflab"));
    cmd.args(["null", "--duration", "100ms", "--results"])
        .arg(results.path())
        .env("NO_COLOR", "1");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("perflab runs")
}

#[test]
fn each_launcher_is_recognised_and_refused_in_one_line() {
    let results = Results::new("mpi-absent");
    for (size, rank) in [
        ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
        ("PMI_SIZE", "PMI_RANK"),
        ("SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),
    ] {
        let out = perflab_as_rank(&results, &[(size, "4"), (rank, "0")]);
        assert_eq!(out.status.code(), Some(2), "{size}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--features mpi"), "{err}");
        // The other ranks would say the same: they are silent.
        let out = perflab_as_rank(&results, &[(size, "4"), (rank, "3")]);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stderr.is_empty());
    }
    // Nothing ran, nothing was archived.
    assert!(!results.path().join("runs").exists());
    // One rank is no job: it runs.
    let out = perflab_as_rank(&results, &[("OMPI_COMM_WORLD_SIZE", "1")]);
    assert!(out.status.success());
}

#[test]
fn under_a_real_mpirun_the_job_ends_with_one_line() {
    if Command::new("mpirun").arg("--version").output().is_err() {
        skip_or_fail("mpirun is not installed", "openmpi-bin");
        return;
    }
    let results = Results::new("mpi-absent-real");
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "--timeout", "60", "-np", "2"])
        .arg(env!("CARGO_BIN_EXE_perflab"))
        .args(["null", "--duration", "100ms", "--results"])
        .arg(results.path())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl", "self,vader")
        .env("OMPI_MCA_plm", "isolated")
        .output()
        .expect("mpirun runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("perflab:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].contains("built without MPI"), "{err}");
    assert!(!results.path().join("runs").exists());
}
