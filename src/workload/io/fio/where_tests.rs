//! Plans of job files for where each I/O goes and how big it is: `rw=X:N`,
//! `rw_sequencer`, `percentage_random`, `bsrange`, `random_distribution`, `offset`,
//! `offset_increment`, `size=N%` (and `timeout`, read as `runtime`). Each plan is made over a
//! scratch folder; planning writes nothing.

use super::read_str;
use crate::workload::distribution::{Distribution, Zone};
use crate::workload::io::jobplan::{Options, plan};
use crate::workload::io::jobrun::JobRun;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scratch folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("perflab-where-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The plan of `text` (`DIR` the scratch folder), or its refusal.
fn planned(dir: &Scratch, text: &str) -> Result<JobRun, String> {
    let text = text.replace("DIR", dir.0.to_str().unwrap());
    let file = read_str(&text, Path::new("/t/job.fio"), &|_| None).map_err(|e| e.to_string())?;
    let opts = Options {
        destroy: None,
        keep: false,
        seed: 1,
    };
    plan(&file, &["job.fio".into()], &opts)
}

fn ok(tag: &str, text: &str) -> JobRun {
    let dir = Scratch::new(tag);
    planned(&dir, text).unwrap_or_else(|e| panic!("{e}"))
}

fn refusal(tag: &str, text: &str) -> String {
    let dir = Scratch::new(tag);
    match planned(&dir, text) {
        Ok(_) => panic!("planned: {text}"),
        Err(e) => e,
    }
}

#[test]
fn backwards_read_walks_back_8k_after_each_io() {
    // fio's examples/backwards-read.fio, shrunk.
    let run = ok(
        "back",
        "[backwards-read]\nbs=4k\nrw=read:-8k\nfilename=DIR/128m\nsize=1m\n",
    );
    let j = &run.jobs[0];
    assert_eq!(j.walk.skip, -8192);
    assert_eq!(j.walk.every, 1);
    assert_eq!(j.region_bytes, 1 << 20);
    assert_eq!(j.starts, vec![0]);
    // A job of fixed size without io_size ends with its pass (fio's files done).
    assert_eq!(j.pass_limit, Some(1));
    assert_eq!(j.file_lens, vec![vec![1 << 20]]);
}

#[test]
fn random_every_n_ios_and_the_sequencer() {
    let run = ok(
        "every",
        "[a]\nfilename=DIR/f\nsize=1m\nrw=randrw:8\nrw_sequencer=identical\npercentage_random=30,60\nio_size=4m\nloops=2\n",
    );
    let w = run.jobs[0].walk;
    assert_eq!((w.every, w.identical, w.random_pct), (8, true, [30, 60]));
    // io_size: the job runs its bytes, pass after pass.
    assert_eq!(run.jobs[0].pass_limit, None);
    assert_eq!(run.jobs[0].budget_bytes, Some(8 << 20));
    let run = ok(
        "every-timed",
        "[a]\nfilename=DIR/f\nsize=1m\nrw=read\ntime_based\nruntime=1\n",
    );
    assert!(run.jobs[0].walk.rewind, "time_based with one file rewinds");
    assert_eq!(run.jobs[0].pass_limit, None);
}

#[test]
fn tiobench_example_reads_its_range_and_timeout() {
    // fio's examples/tiobench-example.fio, shrunk: bsrange=4k-4k is one size, and timeout
    // is fio's other name for runtime.
    let run = ok(
        "tiobench",
        "[global]\ndirect=1\nsize=1m\nbsrange=4k-4k\ntimeout=60\nnumjobs=4\ndirectory=DIR\n[f1]\nrw=write\n[f2]\nstonewall\nrw=randwrite\n",
    );
    for j in &run.jobs {
        assert_eq!(j.sizes, vec![(4096, 1)]);
        assert_eq!(j.write_sizes, None);
        assert_eq!(j.runtime, Some(Duration::from_secs(60)));
        assert!(!j.time_based);
        assert_eq!(j.copies, 4);
    }
}

#[test]
fn bsrange_sizes_weigh_as_fios_draw() {
    let run = ok(
        "bsrange",
        "[a]\nfilename=DIR/f\nsize=1m\nrw=randrw\nbsrange=4k-10k,8k-16k\n",
    );
    let j = &run.jobs[0];
    assert_eq!(j.sizes, vec![(4096, 2), (8192, 2), (10240, 1)]);
    assert_eq!(j.write_sizes, Some(vec![(8192, 1), (16384, 1)]));
    // bs is overridden by bsrange, whatever the order (fio's min_bs and max_bs).
    let run = ok(
        "bsrange-bs",
        "[a]\nfilename=DIR/f\nsize=1m\nbsrange=2k-4k\nbs=64k\n",
    );
    assert_eq!(run.jobs[0].sizes, vec![(2048, 1), (4096, 1)]);
    assert!(
        refusal(
            "bsrange-split",
            "[a]\nfilename=DIR/f\nsize=1m\nbsrange=4k-8k\nbssplit=4k/50:8k/50\n"
        )
        .contains("job.fio:1: bsrange: with bssplit")
    );
    let wide = refusal(
        "bsrange-wide",
        "[a]\nfilename=DIR/f\nsize=4m\nbsrange=512-1m\n",
    );
    assert!(wide.contains("draws 4096 block sizes"), "{wide}");
}

#[test]
fn rand_zones_keeps_every_zone() {
    // fio's examples/rand-zones.fio: zoned:50/5:30/15:20/ (the last zone is the rest).
    let run = ok(
        "zones",
        "[zones]\nsize=1m\ndirect=1\nbs=4k\nrw=randread\nnorandommap\nrandom_distribution=zoned:50/5:30/15:20/\nfilename=DIR/z\n",
    );
    let z = |access, size| Zone { access, size };
    assert_eq!(
        run.jobs[0].spec.distribution,
        Distribution::Zoned {
            zones: vec![z(50, 5), z(30, 15), z(20, 80)]
        }
    );
    assert_eq!(
        run.jobs[0].random_map,
        crate::workload::io::randommap::MapRule::Off
    );
}

#[test]
fn normal_zoned_abs_and_centers() {
    let dist = |d: &str| {
        ok(
            "dist",
            &format!("[a]\nfilename=DIR/f\nsize=1m\nrw=randread\nrandom_distribution={d}\n"),
        )
        .jobs[0]
            .spec
            .distribution
            .clone()
    };
    assert_eq!(dist("normal:5"), Distribution::Normal { dev: 5.0 });
    assert_eq!(
        dist("zipf:1.2:0.25"),
        Distribution::Centered {
            base: Box::new(Distribution::Zipf { theta: 1.2 }),
            center: 0.25
        }
    );
    assert_eq!(
        dist("zoned_abs:60/256k:40/768k").to_string(),
        "zoned_abs:60/262144:40/786432"
    );
    let past = refusal(
        "abs-past",
        "[a]\nfilename=DIR/f\nsize=1m\nrw=randread\nrandom_distribution=zoned_abs:60/1m:40/1m\n",
    );
    assert!(
        past.contains("random_distribution: zoned_abs zones reach"),
        "{past}"
    );
}

#[test]
fn offsets_per_copy_and_the_files_they_reach() {
    let run = ok(
        "offsets",
        "[a]\nfilename=DIR/shared\nsize=64k\nrw=write\nnumjobs=3\noffset=16k\noffset_increment=64k\n",
    );
    let j = &run.jobs[0];
    assert_eq!(j.starts, vec![16 << 10, 80 << 10, 144 << 10]);
    assert_eq!(j.region_bytes, 64 << 10);
    // The shared file reaches the last copy's end.
    assert_eq!(run.layout.size, 208 << 10);
    assert_eq!(j.file_lens[2], vec![208 << 10]);
}

#[test]
fn percentages_of_an_existing_file() {
    let dir = Scratch::new("pct");
    std::fs::write(dir.0.join("data"), vec![0u8; 1 << 20]).unwrap();
    let run = planned(
        &dir,
        "[a]\nfilename=DIR/data\nrw=randread\noffset=25%\nsize=50%\n",
    )
    .unwrap();
    let j = &run.jobs[0];
    assert_eq!(j.starts, vec![256 << 10]);
    assert_eq!(j.region_bytes, 512 << 10);
    assert_eq!(j.file_lens, vec![vec![1 << 20]]);
    let run = planned(
        &dir,
        "[a]\nfilename=DIR/data\nrw=read\nsize=128k\nnumjobs=2\noffset_increment=50%\n",
    )
    .unwrap();
    assert_eq!(run.jobs[0].starts, vec![0, 512 << 10]);
    // Of a file that does not exist yet, fio's percentage is of nothing.
    let e = refusal(
        "pct-missing",
        "[a]\nfilename=DIR/new\nrw=write\nsize=1m\noffset=10%\n",
    );
    assert!(
        e.contains("job.fio:1: offset: 10% of") && e.contains("does not exist"),
        "{e}"
    );
    let e = refusal(
        "pct-missing-size",
        "[a]\nfilename=DIR/new\nrw=write\nsize=10%\n",
    );
    assert!(e.contains("job.fio:1: size:"), "{e}");
}
