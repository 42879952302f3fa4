//! A job's engine beyond reads and writes: what fio's null and file-operation engines mean,
//! and what of it perflab can honour (the job file's planning, [`super::jobplan`], asks
//! here).
//!
//! ```text
//!  ioengine     perflab's engine           one I/O is                        fio's source
//!  null         engine::null  (iodepth)    nothing; counted as its size      engines/null.c
//!  falloc       engine::space (depth 1)    fallocate of its range; a trim    engines/falloc.c
//!                                          punches it out (rw=trim, randtrim)
//!  ftruncate    engine::space (depth 1)    ftruncate to its offset (writes)  engines/ftruncate.c
//!  filestat     engine::names (depth 1)    stat of its file, never opened    engines/fileoperations.c
//!  filedelete   engine::names (depth 1)    unlink of its file                engines/fileoperations.c
//! ```
//!
//! - The null engine is fio's only one here that makes no file (FIO_DISKLESSIO): its
//!   jobs' files are names on a layout of their own ([`diskless`]), never made, opened or
//!   removed, whatever their size (null.fio's 100g).
//! - Trims exist only on falloc, as punched holes; every other engine keeps refusing them.
//!   A trim job's blocks are `bs`'s third value (trims' own size).
//! - fio's filestat and filedelete act when a file is opened, once per file in each pass,
//!   and count each of its `filesize/bs` blocks as an I/O that does nothing more; the stat
//!   or unlink is the only latency fio records. perflab acts on every I/O, which is the same
//!   thing when each file is one block (the examples' `filesize=4k` at the default bs), and
//!   refuses the rest rather than time I/Os fio leaves untimed.

use super::fio::job::{FioEngine, FioJob, FioRw};

/// Whether fio makes no file for `job`'s engine (its files are names only).
pub(super) fn diskless(job: &FioJob) -> bool {
    job.ioengine == FioEngine::Null
}

/// Whether `job`'s I/Os are trims that perflab can carry out (fio's rw=trim or randtrim on
/// the falloc engine). Other trims are refused by [`refusal`].
pub(super) fn trims(job: &FioJob) -> bool {
    matches!(job.rw, FioRw::Trim | FioRw::RandTrim) && job.ioengine == FioEngine::Falloc
}

/// Block sizes with their weights, as the planning gives them.
type Sizes = Vec<(u64, u32)>;

/// A trim job's block sizes (trims' own `bs`), in the shape of the planning's sizes: reads'
/// (here the trims'), and writes' when they differ (never).
pub(super) fn trim_sizes(job: &FioJob) -> Option<(Sizes, Option<Sizes>)> {
    trims(job).then(|| (vec![(job.bs_trim, 1)], None))
}

/// What `job`'s engine cannot honour, as (option, why): trims anywhere but falloc, and
/// patterns fio's file-operation engines do not run as perflab would. Called before the
/// rest of the planning looks at the pattern.
pub(super) fn refusal(job: &FioJob) -> Result<(), (&'static str, String)> {
    let trimming = matches!(job.rw, FioRw::Trim | FioRw::RandTrim | FioRw::TrimWrite);
    if trimming && !trims(job) {
        let why = match (job.rw, job.ioengine) {
            (FioRw::TrimWrite, FioEngine::Falloc) => {
                "trimwrite (a trim, then a write of the same block) is not supported yet; give trim or randtrim"
            }
            _ => {
                "perflab trims only on ioengine=falloc (a punched hole); use read, write, randread, randwrite, rw or randrw"
            }
        };
        return Err(("rw", why.into()));
    }
    if trims(job) {
        if job.bssplit.is_some() {
            return Err((
                "bssplit",
                "several block sizes in a trim job are not supported yet; give bs".into(),
            ));
        }
        if job.rate.iter().chain(&job.rate_iops).any(Option::is_some) {
            return Err(("rate", "a rate in a trim job is not supported yet".into()));
        }
    }
    match job.ioengine {
        // fio takes no size from a file it never opens, even one that exists.
        FioEngine::Null if job.size.is_none() && job.filesize.is_none() => Err((
            "size",
            "fio's null engine needs size= (it reaches no file to take one from)".into(),
        )),
        FioEngine::Ftruncate if job.rw.reads() => Err((
            "rw",
            "fio's ftruncate engine only writes (it fails every read with EINVAL); give rw=write or randwrite".into(),
        )),
        FioEngine::FileStat | FioEngine::FileDelete if job.rw.reads() && job.rw.writes() => Err((
            "rw",
            format!(
                "{} in a job that both reads and writes is not supported (fio times every one as a read); give one direction",
                job.ioengine.name()
            ),
        )),
        FioEngine::FileDelete if job.time_based || job.loops > 1 => Err((
            if job.time_based { "time_based" } else { "loops" },
            "filedelete deletes each file once: fio's next pass over the deleted files fails; run one pass".into(),
        )),
        _ => Ok(()),
    }
}

/// What the name engines cannot honour once each file's bytes (`region`) and the job's
/// block sizes are known: fio acts once per file but counts every block, so each file must
/// be one block.
pub(super) fn one_block_per_file(
    job: &FioJob,
    region: u64,
    sizes: &[(u64, u32)],
) -> Result<(), (&'static str, String)> {
    if !matches!(job.ioengine, FioEngine::FileStat | FioEngine::FileDelete) {
        return Ok(());
    }
    match sizes {
        [(bs, _)] if *bs == region => Ok(()),
        _ => Err((
            "filesize",
            format!(
                "{} acts once per file but fio counts each of its blocks as an I/O; perflab acts on every I/O, so give each file one block (filesize equal to bs)",
                job.ioengine.name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineKind;

    fn job(engine: FioEngine, rw: FioRw) -> FioJob {
        FioJob {
            ioengine: engine,
            rw,
            ..FioJob::default()
        }
    }

    #[test]
    fn trims_run_on_falloc_only() {
        assert!(trims(&job(FioEngine::Falloc, FioRw::RandTrim)));
        assert!(refusal(&job(FioEngine::Falloc, FioRw::Trim)).is_ok());
        for engine in [FioEngine::Psync, FioEngine::Libaio, FioEngine::Null] {
            let (option, why) = refusal(&job(engine, FioRw::RandTrim)).expect_err("refused");
            assert_eq!(option, "rw");
            assert!(why.contains("only on ioengine=falloc"), "{why}");
        }
        let (_, why) = refusal(&job(FioEngine::Falloc, FioRw::TrimWrite)).expect_err("refused");
        assert!(why.contains("trimwrite"), "{why}");
    }

    #[test]
    fn a_trim_jobs_blocks_are_bss_third_value() {
        let mut j = job(FioEngine::Falloc, FioRw::RandTrim);
        j.bs = [8192, 32768];
        j.bs_trim = 16384;
        assert_eq!(trim_sizes(&j), Some((vec![(16384, 1)], None)));
        assert_eq!(trim_sizes(&job(FioEngine::Falloc, FioRw::RandWrite)), None);
    }

    #[test]
    fn file_operations_keep_to_what_fio_times() {
        assert!(refusal(&job(FioEngine::Ftruncate, FioRw::Read)).is_err());
        assert!(refusal(&job(FioEngine::Ftruncate, FioRw::RandWrite)).is_ok());
        assert!(refusal(&job(FioEngine::FileStat, FioRw::RandRw)).is_err());
        assert!(refusal(&job(FioEngine::FileStat, FioRw::Read)).is_ok());
        let mut twice = job(FioEngine::FileDelete, FioRw::Read);
        twice.loops = 2;
        assert_eq!(refusal(&twice).expect_err("refused").0, "loops");
        let stat = job(FioEngine::FileStat, FioRw::Read);
        assert!(one_block_per_file(&stat, 4096, &[(4096, 1)]).is_ok());
        assert_eq!(
            one_block_per_file(&stat, 8192, &[(4096, 1)])
                .expect_err("two blocks")
                .0,
            "filesize"
        );
        assert!(
            one_block_per_file(&job(FioEngine::Psync, FioRw::Read), 8192, &[(4096, 1)]).is_ok()
        );
        assert!(diskless(&job(FioEngine::Null, FioRw::RandRead)));
        assert_eq!(
            refusal(&job(FioEngine::Null, FioRw::Read))
                .expect_err("no size")
                .0,
            "size"
        );
        assert!(!diskless(&job(FioEngine::Falloc, FioRw::Write)));
    }

    /// The run planned from `text` (a job file at /t/job.fio), or its refusal.
    fn planned(text: &str) -> Result<super::super::jobrun::JobRun, String> {
        let file = super::super::fio::read_str(text, std::path::Path::new("/t/job.fio"), &|_| None)
            .map_err(|e| e.to_string())?;
        let opts = super::super::jobplan::Options {
            destroy: None,
            keep: false,
            seed: 1,
        };
        super::super::jobplan::plan(&file, &["/t/job.fio".into()], &opts)
    }

    #[test]
    fn a_null_jobs_files_are_names_the_run_never_makes() {
        let run =
            planned("[null]\nioengine=null\nsize=100g\nrw=randread\niodepth=8\n").expect("planned");
        assert!(run.layout.files.is_empty(), "the run makes no file");
        assert_eq!(run.layout.creates_bytes, 0);
        let job = &run.jobs[0];
        assert_eq!((job.ioengine, job.engine), ("null", EngineKind::Null));
        assert_eq!(job.iodepth, 8, "fio's null queues as deep as asked");
        assert_eq!(job.region_bytes, 100 << 30);
        let files: Vec<_> = job
            .spec
            .layout
            .files
            .iter()
            .map(|f| (f.path.clone(), f.creates))
            .collect();
        assert_eq!(files, [(std::path::PathBuf::from("null.0.0"), false)]);
        assert_eq!(job.budget_bytes, Some(100 << 30));
    }

    #[test]
    fn falloc_trims_are_punched_holes_of_trims_own_size_and_never_synced() {
        let run = planned(
            "[global]\ndirectory=/tmp\nsize=1m\nioengine=falloc\n[t]\nrw=randtrim\nbs=8k,16k,4k\nfsync=2\niodepth=4\n",
        )
        .expect("planned");
        let job = &run.jobs[0];
        assert!(job.trims);
        assert_eq!(job.rw_name(), "randtrim");
        assert_eq!(job.sizes, [(4096, 1)]);
        assert_eq!((job.engine, job.iodepth), (EngineKind::Falloc, 1));
        assert_eq!(job.spec.fsync, 0, "fio counts only writes towards fsync");
        let e = planned("[t]\nfilename=/tmp/x\nsize=1m\nrw=randtrim\n").expect_err("psync trims");
        assert!(
            e.starts_with("/t/job.fio:1: rw: perflab trims only on ioengine=falloc"),
            "{e}"
        );
    }

    #[test]
    fn the_file_engines_run_one_at_a_time_and_refuse_what_fio_would_not_time() {
        let run = planned(
            "[global]\ndirectory=/tmp\nfilesize=4k\nnrfiles=3\n[s]\nioengine=filestat\niodepth=8\n[t]\nioengine=ftruncate\nrw=write\n",
        )
        .expect("planned");
        let engines: Vec<_> = run.jobs.iter().map(|j| (j.engine, j.iodepth)).collect();
        assert_eq!(
            engines,
            [(EngineKind::FileStat, 1), (EngineKind::Ftruncate, 1)]
        );
        let e = planned("[s]\ndirectory=/tmp\nioengine=filestat\nfilesize=8k\nnrfiles=2\n")
            .expect_err("two blocks a file");
        assert!(
            e.starts_with("/t/job.fio:1: filesize: filestat acts once per file"),
            "{e}"
        );
        let e = planned("[t]\ndirectory=/tmp\nioengine=ftruncate\nsize=1m\n").expect_err("reads");
        assert!(e.contains("rw: fio's ftruncate engine only writes"), "{e}");
    }
}
