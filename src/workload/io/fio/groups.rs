//! fio's reporting groups and waits (init.c `add_job`, `wait_for_ok`,
//! `verify_per_group_options`).
//!
//! - groupid starts at 0; a job with `stonewall` (`wait_for_previous`) or `new_group`
//!   starts a new group when the current group already has a job (so a stonewall on the
//!   first job changes nothing). numjobs clones share their job's group.
//! - `stonewall` also makes the job wait for every job before it; that is the caller's to
//!   run, this only records it.
//! - `wait_for=NAME` must name an earlier job (by its name, not a clone), exactly one, and
//!   not the job itself.
//! - With `group_reporting`, the jobs of a group must agree on `lat_percentiles` (fio
//!   refuses otherwise: one report cannot both have and lack them).

use super::JobFileError;
use super::job::FioJob;

pub fn assign(jobs: &mut [FioJob]) -> Result<(), JobFileError> {
    let mut group: u32 = 0;
    let mut in_group = 0usize;
    for i in 0..jobs.len() {
        let (done, rest) = jobs.split_at_mut(i);
        let job = &mut rest[0];
        if let Some(w) = &job.wait_for {
            let fail =
                |m: String| Err(JobFileError::new(Some(job.at.clone()), Some("wait_for"), m));
            if *w == job.name {
                return fail(format!("job {} cannot wait for itself", job.name));
            }
            match done.iter().filter(|j| j.name == *w).count() {
                0 => {
                    return fail(format!(
                        "no earlier job is named {w}: wait_for names a job above this one"
                    ));
                }
                1 => {}
                n => {
                    return fail(format!(
                        "{n} earlier jobs are named {w}: rename them so wait_for names one"
                    ));
                }
            }
        }
        if (job.stonewall || job.new_group) && in_group > 0 {
            group += 1;
            in_group = 0;
        }
        job.group = group;
        in_group += 1;
        if job.group_reporting
            && in_group > 1
            && let Some(other) = done
                .iter()
                .find(|j| j.group == group && j.lat_percentiles != job.lat_percentiles)
        {
            return Err(JobFileError::new(
                Some(job.at.clone()),
                Some("lat_percentiles"),
                format!(
                    "differs from job {} of the same reporting group: set it the same in both (or in [global])",
                    other.name
                ),
            ));
        }
    }
    Ok(())
}
