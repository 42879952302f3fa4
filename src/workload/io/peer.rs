//! fio's flags as fio's users type them on `perflab io` (`crate::workload::peer`): a fio
//! command line for one job reads as the same test. Flags perflab already spells as fio does
//! (`--rw`, `--bs`, `--iodepth`, `--size`, `--offset`, `--direct`, `--fsync`, `--fdatasync`,
//! `--bssplit`, `--rwmixread`) are perflab's own and not listed here.

use crate::workload::peer::{
    Flag, Peer, Reading, given, same, to_option, to_seconds, to_slot, unitless, whole,
};

/// fio.
pub static FIO: Peer = Peer {
    name: "fio",
    flags: FLAGS,
    positional: |_, _| Ok(false),
    finish,
};

/// fio's `--filename` lists are `a:b:c`, each a volume here: an existing file or device
/// (which perflab writes only with `--destroy-data`). fio creates a named file that is not
/// there; perflab makes its own files only in a directory, so it says to give that.
fn files(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    let mut count = 0;
    for p in given(value).split(':').filter(|p| !p.is_empty()) {
        count += 1;
        let path = std::path::Path::new(p);
        if !path.exists() {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or(".".to_string(), |d| d.display().to_string());
            return Err(format!(
                "{p} does not exist, and perflab makes its own files only in a directory: --directory={dir} (with --nrfiles for several)"
            ));
        }
        r.opt("--path", p);
    }
    r.keep("filename", &count.to_string());
    Ok(())
}

/// fio's `--directory`: each job makes its own files there.
fn directory(r: &mut Reading, value: Option<&str>) -> Result<(), String> {
    for p in given(value).split(':').filter(|p| !p.is_empty()) {
        r.opt("--path", p);
    }
    r.keep("directory", "yes");
    Ok(())
}

static FLAGS: &[Flag] = &[
    Flag::value(
        &["--name"],
        "the job's name: one job per command, named by the run's id (tag it with 'perflab tag')",
        |r, value| {
            if r.kept("name").is_some() {
                return Err(
                    "a second job: perflab io runs one job per command; run each job as its own command, or list them in a suite".into(),
                );
            }
            r.keep("name", given(value));
            Ok(())
        },
    ),
    Flag::value(
        &["--filename"],
        "--path (each of a:b:c an existing file or device; jobs share it)",
        files,
    ),
    Flag::value(
        &["--directory"],
        "--path (each of a:b:c a volume; each job its own --nrfiles files there)",
        directory,
    ),
    to_option!(["--readwrite"], "--rw", "--rw", rw),
    to_option!(["--blocksize"], "--bs"),
    to_slot!(
        ["--size"],
        "size",
        "the job's bytes, split over its --nrfiles files (perflab's --size is each file's)"
    ),
    to_slot!(
        ["--iodepth"],
        "iodepth",
        "--iodepth (ignored by fio's sync engines, so dropped with them)"
    ),
    to_option!(["--filesize"], "--size", "--size (of each file)"),
    to_seconds!(["--runtime"], "--duration"),
    to_seconds!(["--ramp_time"], "--warmup"),
    Flag::switch(
        &["--time_based"],
        "perflab's steps always run for --duration",
        same,
    ),
    Flag::value(
        &["--numjobs"],
        "--threads, each with --iodepth in flight (with --directory each job has its own files: --files too)",
        |r, value| {
            whole(given(value))
                .map_err(|_| "one number (perflab's --threads sweeps)".to_string())?;
            r.keep("numjobs", given(value));
            r.opt("--threads", given(value));
            Ok(())
        },
    ),
    to_slot!(
        ["--nrfiles"],
        "nrfiles",
        "--files (per job: with --directory, times --numjobs)",
        whole
    ),
    to_slot!(
        ["--number_ios"],
        "number_ios",
        "--ops (per job, so times --numjobs)",
        whole
    ),
    Flag::value(
        &["--rate_iops"],
        "--rate N/s --rate-scope worker (fio's rate is per job)",
        |r, value| {
            let n = given(value);
            if n.contains(',') {
                return Err("separate read and write rates: perflab paces all ops at one rate; give one number".into());
            }
            r.opt("--rate", &format!("{n}/s"));
            r.opt("--rate-scope", "worker");
            Ok(())
        },
    ),
    Flag::value(
        &["--rate"],
        "--rate in bytes a second per job (fio's --rate is bandwidth): --rate NB/s --rate-scope worker",
        |r, value| {
            let n = given(value);
            // perflab's own rates carry their period (`1000/s`, `100MB/s`): as written.
            if n.contains('/') {
                r.opt("--rate", n);
                return Ok(());
            }
            if n.contains(',') {
                return Err("separate read and write rates: perflab paces all ops at one rate; give one number".into());
            }
            let bytes = crate::vocab::units::parse_size("rate", n).map_err(|e| e.hint)?;
            r.note(format!(
                "fio's --rate={n}: {bytes} bytes a second per job (perflab's own --rate counts ops; write 1000/s for that)"
            ));
            r.opt("--rate", &format!("{bytes}B/s"));
            r.opt("--rate-scope", "worker");
            Ok(())
        },
    ),
    Flag::value(
        &["--rate_process"],
        "--arrival (linear is uniform)",
        |r, value| {
            match given(value) {
                "poisson" => r.opt("--arrival", "poisson"),
                "linear" => r.opt("--arrival", "uniform"),
                _ => return Err("use poisson or linear".into()),
            }
            Ok(())
        },
    ),
    Flag::value(
        &["--thinktime"],
        "refused: perflab io has no think time (--rate_iops paces an open loop)",
        |_, _| {
            Err("perflab io has no think time; --rate_iops (or --rate) paces an open loop, a lower --iodepth offers less load".into())
        },
    ),
    to_option!(["--randseed"], "--seed"),
    Flag::value(&["--rwmixwrite"], "--rwmix 100-N", |r, value| {
        let w = whole(given(value))?;
        if w > 100 {
            return Err("a percentage of writes, 0 to 100".into());
        }
        r.opt("--rwmix", &(100 - w).to_string());
        Ok(())
    }),
    Flag::value(
        &["--random_distribution"],
        "--distribution (random is uniform; zoned:A/D:... is hot:A/D)",
        |r, value| {
            let text = given(value);
            let (name, zones) = text.split_once(':').unwrap_or((text, ""));
            let ours = match name {
                "random" => "uniform".to_string(),
                "zoned" => {
                    // fio's first zone is the hot one: `zoned:90/10:10/90` is 90% of the
                    // I/O on 10% of the blocks; the other zone is the remainder.
                    if zones.split(':').count() > 2 {
                        return Err(
                            "perflab's hot set has two zones, e.g. zoned:90/10:10/90 (hot:90/10)"
                                .into(),
                        );
                    }
                    format!("hot:{}", zones.split(':').next().unwrap_or_default())
                }
                "normal" | "gauss" => {
                    return Err(
                        "perflab has uniform, zipf, pareto and a hot set (zoned); use one of those"
                            .into(),
                    );
                }
                _ => text.to_string(),
            };
            r.opt("--distribution", &ours);
            Ok(())
        },
    ),
    Flag::value(
        &["--ioengine"],
        "--engine: io_uring; libaio reads as io_uring; psync, sync, pvsync as sync",
        |r, value| {
            let ours = match given(value) {
                "io_uring" => "io_uring",
                "libaio" => {
                    r.note("fio's --ioengine=libaio: perflab's asynchronous engine is io_uring, with the same queue depth".into());
                    "io_uring"
                }
                "psync" | "sync" | "pvsync" | "pvsync2" => {
                    r.keep("sync", given(value));
                    "sync"
                }
                _ => {
                    return Err(
                        "perflab has io_uring (for libaio too) and sync (psync); use one of those"
                            .into(),
                    );
                }
            };
            r.opt("--engine", ours);
            Ok(())
        },
    ),
    Flag::switch(
        &["--buffered"],
        "--direct 0 (--buffered=1), --direct 1 (--buffered=0)",
        |r, value| {
            match value.unwrap_or("1") {
                "1" => r.opt("--direct", "0"),
                "0" => r.opt("--direct", "1"),
                _ => return Err("0 or 1".into()),
            }
            Ok(())
        },
    ),
    Flag::switch(
        &["--verify"],
        "--verify (perflab's own checksummed blocks, whatever the method)",
        |r, value| {
            if given(value) != "0" {
                r.word("--verify");
            }
            Ok(())
        },
    ),
    Flag::switch(
        &["--do_verify"],
        "perflab reads back what it wrote whenever --verify is on",
        same,
    ),
    Flag::value(
        &["--steadystate", "--ss"],
        "--steady-state: iops_slope:N% is --ss-slope N, iops:N% --ss-spread 2N",
        |r, value| {
            let text = given(value);
            let (metric, limit) = text.split_once(':').unwrap_or((text, ""));
            let pct = limit.trim_end_matches('%');
            let pct: f64 = pct
                .parse()
                .map_err(|_| "give a limit in percent, e.g. iops_slope:0.3%".to_string())?;
            r.word("--steady-state");
            match metric {
                "iops_slope" => r.opt("--ss-slope", &pct.to_string()),
                // fio: every reading within N% of the mean; perflab: the range, which is twice.
                "iops" => r.opt("--ss-spread", &(2.0 * pct).to_string()),
                _ => return Err("perflab's steady state is on IOPS: iops or iops_slope".into()),
            }
            Ok(())
        },
    ),
    to_seconds!(["--ss_dur"], "--ss-window"),
    to_option!(["--loops"], "--repeat"),
    Flag::switch(
        &["--unlink"],
        "perflab removes its files (--unlink=0 is --keep)",
        |r, value| {
            if given(value) == "0" {
                r.word("--keep");
            }
            Ok(())
        },
    ),
    to_option!(
        ["--log_avg_msec"],
        "--interval",
        "--interval (milliseconds)",
        |v| unitless(v, "ms")
    ),
    Flag::value(&["--eta"], "--eta=never is --quiet", |r, value| {
        if given(value) == "never" {
            r.word("--quiet");
        }
        Ok(())
    }),
    Flag::switch(
        &[
            "--group_reporting",
            "--thread",
            "--norandommap",
            "--randrepeat",
            "--invalidate",
            "--lat_percentiles",
            "--clat_percentiles",
            "--eta-newline",
        ],
        "what perflab always does (one report for all workers, offsets at random, every percentile kept)",
        same,
    ),
    Flag::value(
        &[
            "--percentile_list",
            "--fallocate",
            "--iodepth_batch_submit",
            "--iodepth_batch_complete_min",
        ],
        "what perflab always does (every percentile kept, files written in full, I/Os submitted as they free up)",
        same,
    ),
    Flag::value(
        &[
            "--output",
            "--write_bw_log",
            "--write_lat_log",
            "--write_iops_log",
            "--write_hist_log",
        ],
        "refused: every run is archived with its time series; 'perflab export last -f csv-intervals -o FILE' writes them, --hlog FILE each interval's histogram",
        |_, _| {
            Err("every run is archived with its time series and histograms; write them out with 'perflab export last -f csv-intervals -o FILE', or give --hlog FILE for each interval's histogram".into())
        },
    ),
    Flag::value(
        &[
            "--cpus_allowed",
            "--cpumask",
            "--numa_cpu_nodes",
            "--numa_mem_policy",
        ],
        "refused: run perflab under taskset or numactl",
        |_, _| Err("perflab does not pin; run it under taskset or numactl".into()),
    ),
    Flag::value(
        &[
            "--zero_buffers",
            "--refill_buffers",
            "--buffer_compress_percentage",
            "--dedupe_percentage",
        ],
        "refused: perflab writes random bytes (incompressible, not deduplicable)",
        |_, _| {
            Err("perflab writes random bytes, incompressible and unique; it has no other buffer contents".into())
        },
    ),
];

/// fio's `--rw` names that perflab spells differently.
fn rw(value: &str) -> String {
    match value {
        "readwrite" => "rw".into(),
        other => other.into(),
    }
}

/// What depends on several flags: the files each job has, the bytes of each, the I/Os of
/// all jobs.
fn finish(r: &mut Reading) -> Result<(), String> {
    let number = |r: &Reading, slot: &str| r.kept(slot).map(whole).transpose();
    let jobs = number(r, "numjobs")?.unwrap_or(1);
    let per_job = number(r, "nrfiles")?;
    if let Some(depth) = r.kept("iodepth").map(str::to_string) {
        match r.kept("sync").map(str::to_string) {
            Some(engine) if depth != "1" => r.note(format!(
                "fio's --iodepth={depth} with --ioengine={engine}: a sync engine keeps one I/O in flight per job, in fio as here, so the depth is 1"
            )),
            _ => r.opt("--iodepth", &depth),
        }
    }
    if let Some(n) = number(r, "number_ios")? {
        r.opt("--ops", &(n * jobs).to_string());
    }
    // With --directory every job makes its own files; on a named file the jobs share it.
    let own_files = r.kept("directory").is_some() && r.kept("filename").is_none();
    // A list of named files is that many files, shared by the jobs.
    let named = number(r, "filename")?.filter(|&n| n > 1);
    let files = match (own_files, per_job) {
        (true, n) => Some(jobs * n.unwrap_or(1)).filter(|&f| f > 1),
        (false, n) => n.or(named),
    };
    if let Some(f) = files {
        r.opt("--files", &f.to_string());
    }
    if let Some(size) = r.kept("size").map(str::to_string) {
        let split = per_job.unwrap_or(1);
        match split {
            1 => r.opt("--size", &size),
            n => {
                let bytes = crate::vocab::units::parse_size("size", &size)
                    .map_err(|e| format!("fio's --size {size}: {}", e.hint))?;
                let each = bytes / n;
                r.note(format!(
                    "fio's --size={size} is the job's, over its {n} files: {} each (perflab's --size is each file's)",
                    crate::vocab::units::format_bytes(each)
                ));
                r.opt("--size", &each.to_string());
            }
        }
    }
    Ok(())
}
