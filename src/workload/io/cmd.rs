//! `perflab io` arguments to a validated [`RunSpec`]: the options read, the engine probed,
//! the paths checked for safety and space — all before anything is written.

use super::args::IoArgs;
use super::args::IoMode;
use crate::engine::{EngineKind, probe_uring};
use crate::env::Environment;
use crate::error::AppError;
use crate::stats::steady::SteadyCriteria;
use crate::vocab::SpecError;
use crate::vocab::Sweep;
use crate::vocab::sweep::{parse_names, parse_u64};
use crate::vocab::units::{format_bytes, parse_count, parse_duration, parse_size};
use crate::workload::RunSpec;
use crate::workload::WorkloadSpec;
use crate::workload::build::{Defaults, build_spec};
use crate::workload::distribution::Distribution;
use crate::workload::io::IoSpec;
use crate::workload::io::layout::{Layout, PlanRequest};
use crate::workload::io::pattern::Rw;
use crate::workload::io::surface::SurfaceSpec;
use crate::workload::run_args::RunArgs;
use std::path::Path;
use std::sync::Arc;

/// Largest block size: past this, a "block" is a file.
const MAX_BS: u64 = 64 << 20;
/// Deepest queue per file.
const MAX_DEPTH: u64 = 4096;
/// Most files in one test.
const MAX_FILES: u64 = 4096;
/// Most blocks `--verify` tracks (4 bytes each: 1 GiB of tables).
const MAX_VERIFY_BLOCKS: u64 = 1 << 28;

/// What is read and written, in which blocks, how deep, over how many files.
struct Shape {
    rw: Sweep<Rw>,
    bs: Sweep<u64>,
    bssplit: Vec<(u64, u32)>,
    rwmix: Sweep<u64>,
    iodepth: Sweep<u64>,
    files: Sweep<u64>,
    volume: Option<Sweep<String>>,
}

impl Shape {
    fn largest_block(&self) -> u64 {
        self.bssplit
            .iter()
            .map(|&(b, _)| b)
            .chain(self.bs.values().iter().copied())
            .max()
            .unwrap_or(4096)
    }

    fn most_files(&self) -> u64 {
        self.files.values().iter().copied().max().unwrap_or(1)
    }
}

fn shape(args: &IoArgs) -> Result<Shape, AppError> {
    let rw = parse_names("rw", &args.rw, Rw::parse)?;
    let bssplit = match &args.bssplit {
        Some(text) => parse_bssplit(text)?,
        None => Vec::new(),
    };
    let bs = parse_u64("bs", args.bs.as_deref().unwrap_or("4k"), parse_size)?;
    // The error quotes what the user typed, not the bytes it was read as.
    let given = [
        (
            "bs",
            args.bs.as_deref().unwrap_or("4k"),
            bs.values().to_vec(),
        ),
        (
            "bssplit",
            args.bssplit.as_deref().unwrap_or_default(),
            bssplit.iter().map(|(b, _)| *b).collect(),
        ),
    ];
    for (option, text, sizes) in given {
        if let Some(b) = sizes
            .iter()
            .find(|&&b| b < 512 || b % 512 != 0 || b > MAX_BS)
        {
            return Err(SpecError::new(
                option,
                text,
                &format!("block sizes are multiples of 512 bytes up to 64m ({b} bytes is not)"),
            )
            .into());
        }
    }
    let rwmix = parse_u64("rwmix", &args.rwmix, parse_count)?;
    if rwmix.values().iter().any(|&p| p > 100) {
        return Err(SpecError::new("rwmix", &args.rwmix, "a percentage of reads, 0 to 100").into());
    }
    let iodepth = parse_u64("iodepth", &args.iodepth, parse_count)?;
    if iodepth.values().iter().any(|&d| d == 0 || d > MAX_DEPTH) {
        return Err(
            SpecError::new("iodepth", &args.iodepth, "a queue depth from 1 to 4096").into(),
        );
    }
    let files = parse_u64("files", &args.files, parse_count)?;
    if files.values().iter().any(|&f| f == 0 || f > MAX_FILES) {
        return Err(SpecError::new("files", &args.files, "from 1 to 4096 files").into());
    }
    let (files, volume) = match args.each_volume {
        true => each_volume(args, files)?,
        false => (files, None),
    };
    Ok(Shape {
        rw,
        bs,
        bssplit,
        rwmix,
        iodepth,
        files,
        volume,
    })
}

/// `--each-volume`: one step per path with one file on it, then the files ramp (by default 1
/// to as many files as paths). Files are spread over the paths in turn, so file k is on path k.
fn each_volume(
    args: &IoArgs,
    ramp: Sweep<u64>,
) -> Result<(Sweep<u64>, Option<Sweep<String>>), AppError> {
    let paths = &args.path;
    let n = paths.len() as u64;
    if paths
        .iter()
        .enumerate()
        .any(|(i, p)| paths[..i].contains(p))
    {
        return Err(AppError::Usage(
            "--each-volume: each --path once (a volume is measured alone once)".into(),
        ));
    }
    if args
        .run
        .zip
        .iter()
        .any(|z| z.split(',').any(|o| o.trim() == "files"))
    {
        return Err(AppError::Usage(
            "--each-volume steps --files with the volumes; it cannot also be zipped with --zip"
                .into(),
        ));
    }
    let ramp: Vec<u64> = if args.files == "1" {
        (1..=n).collect()
    } else {
        ramp.values().to_vec()
    };
    if ramp.iter().copied().max().unwrap_or(0) < n {
        return Err(SpecError::new(
            "files",
            &args.files,
            &format!("with --each-volume the ramp reaches every volume: up to {n} files at least"),
        )
        .into());
    }
    let mut files = vec![1; paths.len()];
    files.extend(&ramp);
    let mut volume: Vec<String> = paths.clone();
    volume.extend(std::iter::repeat_n("all".to_string(), ramp.len()));
    Ok((
        Sweep::list("files", files),
        Some(Sweep::list("volume", volume)),
    ))
}

/// The surface mode's own switches, given in test mode: one line naming the fix.
fn refuse_surface_flags(args: &IoArgs) -> Result<(), AppError> {
    if args.all_records {
        return Err(AppError::Usage(
            "--all-records is for surface mode (--mode surface): test mode runs the --bs given"
                .into(),
        ));
    }
    Ok(())
}

/// `--size` in test mode: it sweeps. The files are made at the largest, and each step's I/O
/// keeps to the first SIZE bytes of each (Gray's 10 GB of a 400 GB volume: short stroking).
fn size_regions(args: &IoArgs) -> Result<Option<Sweep<u64>>, AppError> {
    let regions = args
        .size
        .as_deref()
        .map(|s| parse_u64("size", s, parse_size))
        .transpose()?;
    if let Some(r) = &regions
        && r.is_swept()
        && args.verify
    {
        return Err(SpecError::new(
            "size",
            args.size.as_deref().unwrap_or(""),
            "verification needs one --size",
        )
        .into());
    }
    Ok(regions)
}

pub fn io_spec(args: &IoArgs, env: &Environment) -> Result<RunSpec, AppError> {
    if args.mode == IoMode::Surface {
        return surface_spec(args, env);
    }
    refuse_surface_flags(args)?;
    let shape = shape(args)?;
    let Shape {
        bs,
        bssplit,
        iodepth,
        ..
    } = &shape;
    let regions = size_regions(args)?;
    let size = regions
        .as_ref()
        .map(|r| r.values().iter().copied().max().unwrap_or(0));
    let offset = parse_size("offset", &args.offset)?;
    let direct = parse_flag("direct", &args.direct)?;
    let fsync = parse_count("fsync", &args.fsync)?;
    let fdatasync = parse_count("fdatasync", &args.fdatasync)?;
    let distribution: Distribution = args
        .distribution
        .parse()
        .map_err(|e: String| SpecError::new("distribution", &args.distribution, &e))?;
    let (engine, engine_note) = choose_engine(args.engine.as_deref())?;
    if engine == EngineKind::Sync && iodepth.values().iter().any(|&d| d > 1) {
        let why = engine_note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        return Err(SpecError::new(
            "iodepth",
            &args.iodepth,
            &format!(
                "the sync engine has one I/O in flight per thread{why}; use --engine io_uring, or --threads for concurrency"
            ),
        )
        .into());
    }
    if args.verify && (!bssplit.is_empty() || bs.is_swept()) {
        return Err(SpecError::new(
            "verify",
            "",
            "verification needs one block size: give one --bs and no --bssplit",
        )
        .into());
    }
    if args.run.think.is_some() {
        return Err(SpecError::new(
            "think",
            args.run.think.as_deref().unwrap_or(""),
            "io has no think time; use --rate for an open loop or --iodepth for less load",
        )
        .into());
    }
    let straggler = parse_count("straggler", &args.straggler)?;
    if straggler == 0 || straggler >= 100 {
        return Err(SpecError::new(
            "straggler",
            &args.straggler,
            "a percentage between 1 and 99",
        )
        .into());
    }
    let steady_state = args
        .steady_state
        .then(|| steady_criteria(args))
        .transpose()?;

    let sizes_for_rate: Vec<(u64, u32)> = if bssplit.is_empty() {
        vec![(bs.first(), 1)]
    } else {
        bssplit.clone()
    };
    let byte_rate = args.run.rate.as_deref().is_some_and(|r| {
        r.split(',')
            .any(|i| i.split('/').next().is_some_and(|a| a.trim().ends_with('B')))
    });
    if byte_rate && bs.is_swept() {
        return Err(SpecError::new(
            "rate",
            args.run.rate.as_deref().unwrap_or(""),
            "a rate in bytes needs one block size; give the rate in I/Os per second, or one --bs",
        )
        .into());
    }
    let run_args = with_byte_rates(&args.run, &sizes_for_rate)?;
    let layout = plan_layout(
        args,
        env,
        &shape,
        size,
        offset,
        direct,
        engine_note.as_deref(),
    )?;
    let Shape {
        rw,
        bs,
        bssplit,
        rwmix,
        iodepth,
        files,
        volume,
    } = shape;
    let spec = IoSpec {
        rw,
        bs_bytes: bs.named("bs_bytes"),
        bssplit,
        rwmix,
        iodepth,
        files,
        volume,
        region_bytes: match regions {
            Some(r) if r.is_swept() => r.named("size_bytes"),
            _ => Sweep::single("size_bytes", layout.size),
        },
        size_bytes: layout.size,
        offset_bytes: offset,
        direct,
        cold: args.cold && !direct,
        fsync,
        fdatasync,
        distribution,
        engine,
        engine_note,
        prefill: args.prefill,
        verify: args.verify,
        verify_seed: parse_count("seed", &args.run.seed)?,
        keep: args.keep,
        steady_state,
        straggler_fraction: straggler as f64 / 100.0,
        layout: Arc::new(layout),
    };
    let each_volume = spec.volume.is_some();
    let mut spec = build_spec(
        &run_args,
        WorkloadSpec::new(spec),
        &Defaults {
            threads: "1".into(),
            warmup: "1s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )?;
    if each_volume {
        // The volumes step with the files: each alone at one file, then the ramp.
        spec.zip.push(vec!["files".into(), "volume".into()]);
    }
    Ok(spec)
}

/// Where the files go and how large, with the notes the plan makes (buffered reads that fit
/// in memory, the engine that stood in).
fn plan_layout(
    args: &IoArgs,
    env: &Environment,
    shape: &Shape,
    size: Option<u64>,
    offset: u64,
    direct: bool,
    engine_note: Option<&str>,
) -> Result<Layout, AppError> {
    let Shape { rw, bs, .. } = shape;
    let writes = args.prefill || rw.values().iter().any(|r| r.writes());
    let max_bs = shape.largest_block();
    let max_files = shape.most_files();
    let mut layout = Layout::plan(&PlanRequest {
        paths: &args.path,
        files: max_files,
        size,
        offset,
        writes,
        destroy: args.destroy_data.as_deref(),
        block: max_bs,
    })
    .map_err(|e| AppError::Usage(e.0))?;
    if args.verify {
        let blocks = (layout.size / bs.first().max(512)).saturating_mul(max_files);
        if blocks > MAX_VERIFY_BLOCKS {
            return Err(AppError::Usage(format!(
                "--verify keeps 4 bytes per block: {blocks} blocks is too many; lower --size or --files, or raise --bs"
            )));
        }
    }
    if !offset.is_multiple_of(4096) && direct {
        return Err(SpecError::new(
            "offset",
            &args.offset,
            "direct I/O needs an offset aligned to 4k",
        )
        .into());
    }
    // `--cold` drops the files' pages as they are opened and after each pass: the reads
    // come from the device however small the files.
    if !direct && !args.cold && rw.values().iter().any(|r| r.reads()) {
        let total = layout.size.saturating_mul(max_files);
        if let Some(avail) = env.memory.available_bytes
            && total < avail
            && !layout.in_memory()
        {
            let message = format!(
                "buffered reads of {} fit in memory ({} available): they measure the page cache, not the device; use --direct 1 or a --size above memory",
                format_bytes(total),
                format_bytes(avail)
            );
            layout.notes.push(("in_memory", message));
        }
    }
    if let Some(n) = engine_note {
        layout.notes.push(("engine_fallback", n.to_string()));
    }
    Ok(layout)
}

/// IOzone's surface: file sizes x record sizes, buffered, one round of tests per step.
fn surface_spec(args: &IoArgs, env: &Environment) -> Result<RunSpec, AppError> {
    let ram = env.memory.total_bytes.unwrap_or(8 << 30);
    let default_sizes = format!("64k..{}:x2", (2 * ram).next_power_of_two() / 2);
    let file_bytes = parse_u64(
        "size",
        args.size.as_deref().unwrap_or(&default_sizes),
        parse_size,
    )?
    .named("file_bytes");
    let record_bytes = parse_u64("bs", args.bs.as_deref().unwrap_or("4k..16m:x2"), parse_size)?
        .named("record_bytes");
    if record_bytes.values().iter().any(|&r| r == 0 || r > MAX_BS) {
        return Err(SpecError::new(
            "bs",
            args.bs.as_deref().unwrap_or(""),
            "record sizes from 1 byte to 64m",
        )
        .into());
    }
    if args.path.len() != 1 {
        return Err(AppError::Usage(
            "surface mode takes one --path, a directory".into(),
        ));
    }
    if args.each_volume {
        return Err(AppError::Usage(
            "--each-volume is for test mode; surface mode takes one --path".into(),
        ));
    }
    let base = Path::new(&args.path[0]);
    if !base.is_dir() {
        return Err(AppError::Usage(format!(
            "--path {}: surface mode needs an existing directory",
            base.display()
        )));
    }
    let largest = file_bytes.values().iter().copied().max().unwrap_or(0);
    if let Ok(space) = crate::engine::sys::space(base)
        && largest > space.free_bytes
    {
        return Err(AppError::Usage(format!(
            "{} has {} free but the largest file is {}; lower --size",
            base.display(),
            format_bytes(space.free_bytes),
            format_bytes(largest)
        )));
    }
    let workdir = base.join(format!("perflab-io-{}", std::process::id()));
    if args.run.threads.as_deref().is_some_and(|t| t != "1") {
        return Err(SpecError::new(
            "threads",
            args.run.threads.as_deref().unwrap_or(""),
            "surface mode runs one thread, as IOzone's automatic mode does",
        )
        .into());
    }
    let mut run = args.run.clone();
    if run.ops.is_none() && run.duration.is_none() {
        run.ops = Some("1".into());
    }
    build_spec(
        &run,
        WorkloadSpec::new(SurfaceSpec {
            file_bytes,
            record_bytes,
            workdir,
            keep: args.keep,
            all_records: args.all_records,
            cold: args.cold,
        }),
        &Defaults {
            threads: "1".into(),
            warmup: "0s",
            duration: "5s",
            rate_scope: crate::workload::RateScope::Total,
        },
    )
    .map_err(AppError::from)
}

/// io_uring unless the user chose, falling back to sync (with a note) where it is unavailable.
fn choose_engine(asked: Option<&str>) -> Result<(EngineKind, Option<String>), SpecError> {
    match asked {
        Some(text) => {
            let kind: EngineKind = text
                .parse()
                .map_err(|_| SpecError::new("engine", text, "use io_uring, libaio or sync"))?;
            if kind == EngineKind::IoUring
                && let Err(why) = probe_uring()
            {
                return Err(SpecError::new(
                    "engine",
                    text,
                    &format!("io_uring is not available here ({why}); use --engine sync"),
                ));
            }
            Ok((kind, None))
        }
        None => match probe_uring() {
            Ok(()) => Ok((EngineKind::IoUring, None)),
            Err(why) => Ok((
                EngineKind::Sync,
                Some(format!(
                    "io_uring is not available ({why}); using the sync engine"
                )),
            )),
        },
    }
}

fn parse_flag(option: &str, text: &str) -> Result<bool, SpecError> {
    match text {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(SpecError::new(option, text, "use 1 or 0")),
    }
}

/// `4k/60:64k/40` (fio's syntax); weights need not add to 100.
fn parse_bssplit(text: &str) -> Result<Vec<(u64, u32)>, SpecError> {
    let hint = "use SIZE/WEIGHT pairs joined by ':', e.g. 4k/60:64k/40";
    let mut out = Vec::new();
    for item in text.split(':') {
        let (size, weight) = item
            .split_once('/')
            .ok_or_else(|| SpecError::new("bssplit", text, hint))?;
        let size = parse_size("bssplit", size)?;
        let weight: u32 = weight
            .trim()
            .parse()
            .map_err(|_| SpecError::new("bssplit", text, hint))?;
        if weight > 0 {
            out.push((size, weight));
        }
    }
    if out.is_empty() {
        return Err(SpecError::new("bssplit", text, hint));
    }
    Ok(out)
}

fn steady_criteria(args: &IoArgs) -> Result<SteadyCriteria, SpecError> {
    let window = parse_duration("ss-window", &args.ss_window)?;
    let interval = parse_duration("interval", &args.run.interval)?;
    let intervals = (window.as_secs_f64() / interval.as_secs_f64().max(1e-3)).round() as usize;
    if intervals < 2 {
        return Err(SpecError::new(
            "ss-window",
            &args.ss_window,
            "the window must span at least two --interval lengths",
        ));
    }
    let pct = |option: &str, text: &str| -> Result<f64, SpecError> {
        let v: f64 = text
            .trim_end_matches('%')
            .parse()
            .map_err(|_| SpecError::new(option, text, "a percentage, e.g. 10"))?;
        if !(v > 0.0 && v < 1000.0) {
            return Err(SpecError::new(option, text, "a percentage above 0"));
        }
        Ok(v / 100.0)
    };
    Ok(SteadyCriteria {
        window: intervals,
        max_slope: pct("ss-slope", &args.ss_slope)?,
        max_spread: pct("ss-spread", &args.ss_spread)?,
    })
}

/// `--rate` in bytes per second (`100MB/s`, `50MiB/s`) becomes I/Os per second at the mean
/// block size; I/O rates pass through.
fn with_byte_rates(run: &RunArgs, sizes: &[(u64, u32)]) -> Result<RunArgs, SpecError> {
    let Some(rate) = &run.rate else {
        return Ok(run.clone());
    };
    let total_w: f64 = sizes.iter().map(|s| f64::from(s.1)).sum::<f64>().max(1.0);
    let mean_bs: f64 = sizes
        .iter()
        .map(|&(b, w)| b as f64 * f64::from(w))
        .sum::<f64>()
        / total_w;
    // One byte rate (`8MB/s`) as I/Os a second; anything else as it is.
    let convert = |item: &str| -> Result<String, SpecError> {
        let (amount, per) = item.split_once('/').unwrap_or((item, "s"));
        let a = amount.trim();
        if !(a.ends_with('B') || a.ends_with("iB")) {
            return Ok(item.to_string());
        }
        // Sizes as everywhere, as fio reads them: `MB` and `MiB` both 2^20.
        let n = parse_size("rate", a)?;
        let iops = n as f64 / mean_bs;
        if iops < 1e-3 {
            return Err(SpecError::new(
                "rate",
                rate,
                "the byte rate is below one I/O per 1000 s",
            ));
        }
        Ok(format!("{iops}/{per}"))
    };
    let mut items = Vec::new();
    for item in rate.split(',') {
        // A range of byte rates (`1MB/s..10MB/s:x2`): both ends converted; a step that is a
        // factor stays, one in bytes (`:1MB/s`) becomes I/Os too.
        let Some((low, high)) = item.split_once("..") else {
            items.push(convert(item)?);
            continue;
        };
        let (high, step) = match high.split_once(':') {
            Some((h, s)) => (h, Some(s)),
            None => (high, None),
        };
        let mut range = format!("{}..{}", convert(low)?, convert(high)?);
        if let Some(step) = step {
            let step = match step.trim().starts_with(['x', 'X']) {
                true => step.to_string(),
                false => convert(step)?,
            };
            range.push(':');
            range.push_str(&step);
        }
        items.push(range);
    }
    let mut out = run.clone();
    out.rate = Some(items.join(","));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_reads_fio_syntax() {
        assert_eq!(
            parse_bssplit("4k/60:64k/40").unwrap(),
            vec![(4096, 60), (65536, 40)]
        );
        assert!(parse_bssplit("4k").is_err());
        assert!(parse_bssplit("4k/x").is_err());
        assert!(parse_bssplit("4k/0").is_err(), "no size with any weight");
    }

    #[test]
    fn byte_rates_become_io_rates_at_the_mean_block_size() {
        let args: super::IoArgs =
            crate::workload::kind::parse(&super::super::KIND, &["--rate", "8MB/s,1000/s"]).unwrap();
        let out = with_byte_rates(&args.run, &[(4096, 1), (12288, 1)]).unwrap();
        // Mean block 8192 bytes: 8 MB/s (8 MiB/s, as fio reads it) is 1024 I/Os per second;
        // I/O rates pass through.
        assert_eq!(out.rate.as_deref(), Some("1024/s,1000/s"));
        // Ranges: both ends, and a step in bytes; a factor stays.
        for (given, expect) in [
            ("1MB/s..4MB/s:x2", "128/s..512/s:x2"),
            ("1MB/s..3MB/s:1MB/s", "128/s..384/s:128/s"),
            ("100/s..400/s:x2", "100/s..400/s:x2"),
        ] {
            let args: super::IoArgs =
                crate::workload::kind::parse(&super::super::KIND, &["--rate", given]).unwrap();
            let out = with_byte_rates(&args.run, &[(8192, 1)]).unwrap();
            assert_eq!(out.rate.as_deref(), Some(expect), "{given}");
        }
    }
}
