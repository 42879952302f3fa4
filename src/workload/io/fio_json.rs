//! fio's JSON output (`fio --output-format=json`, and `json+` with `plus`) made from an io
//! run's record, for the tools that read fio's results (fio-plot, fio's own
//! `fio_jsonplus_clat2csv`, dashboards): `perflab export RUN --format fio-json` or
//! `fio-jsonplus`. The shape follows fio's stat.c (`show_thread_status_json`,
//! `add_ddir_status_json`) and stat.h; docs/output-format.md says what maps to what.
//!
//! ```text
//!  RunRecord ── steps[i] ── trials[0] (the first trial stands for the step, as in show)
//!                 │
//!                 ├─ groups by "job" + "job_direction"  → one fio job per job group
//!                 └─ otherwise                          → one fio job for the step,
//!                                                         directions from "direction" groups
//!  fio group id = step index; read/write/trim/sync always written (zeros without ops)
//! ```
//!
//! What fio measures and perflab does not is written as fio writes "nothing happened"
//! (zeros, `N` 0): submission latency, the submit/complete batch depths, context switches
//! and page faults of the job. What is approximate is said where it is computed.

use crate::record::histogram::{LatencyHistogram, decode};
use crate::record::{GroupResult, LatencySummary, RunRecord, SteadyStateResult, StepResult, Trial};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;

/// fio's default `percentile_list` (options.c), in percent.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// fio's latency histogram (stat.h): FIO_IO_U_PLAT_BITS 6, so 64 buckets a power of two,
/// 29 groups.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_NR: u64 = 29 * PLAT_VAL;

/// The writer behind `--format fio-json` (`plus` false) and `fio-jsonplus` (true).
pub fn write(record: &RunRecord, plus: bool, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document(record, plus))?;
    out.write_all(b"\n")
}

/// A step's swept options, `name=value` each, as fio's job name for it.
fn step_label(s: &StepResult) -> String {
    s.swept
        .iter()
        .map(|k| {
            let v = match s.params.get(k) {
                Some(Value::String(t)) => t.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// fio's JSON document for an io run: the root object with one entry of `jobs` per fio job
/// (see the module's notes). `plus` adds json+'s `bins` to every `clat_ns` (and `sync`'s
/// `lat_ns`) that has percentiles and a histogram to draw them from.
pub fn document(record: &RunRecord, plus: bool) -> Value {
    let stamp_ms = record
        .finished_at
        .as_deref()
        .and_then(epoch_ms)
        .or_else(|| epoch_ms(&record.started_at))
        .unwrap_or(0);
    let started_ms = epoch_ms(&record.started_at).unwrap_or(stamp_ms);
    let elapsed_s = (stamp_ms - started_ms).max(0) / 1000;
    let version = match record.tool.version.as_str() {
        "" => env!("CARGO_PKG_VERSION"),
        v => v,
    };
    let mut root = Map::new();
    // Neither fio-plot (which shows it as text) nor fio_jsonplus_clat2csv (which ignores it)
    // parses the version, so it names what wrote the figures rather than imitating fio's.
    root.insert("fio version".into(), json!(format!("perflab-{version}")));
    root.insert("timestamp".into(), json!(stamp_ms.div_euclid(1000)));
    root.insert("timestamp_ms".into(), json!(stamp_ms));
    root.insert("time".into(), json!(ctime(stamp_ms)));
    root.insert(
        "global options".into(),
        Value::Object(global_options(record)),
    );
    let mut jobs = Vec::new();
    for s in &record.steps {
        let Some(t) = s.trials.first() else { continue };
        for job in jobs_of(record, s, t) {
            jobs.push(job_object(&job, s, t, elapsed_s, plus));
        }
    }
    root.insert("jobs".into(), Value::Array(jobs));
    let disks = disk_util(record);
    if !disks.is_empty() {
        root.insert("disk_util".into(), Value::Array(disks));
    }
    Value::Object(root)
}

/// One direction's ops (or a whole job's): counts and latency.
#[derive(Default)]
struct Flow {
    ops: u64,
    bytes: u64,
    errors: u64,
    latency: LatencySummary,
    /// The flow's own histogram, when the record has one for exactly these ops.
    hdr: Option<LatencyHistogram>,
}

impl Flow {
    fn of_group(g: &GroupResult, t: &Trial) -> Flow {
        Flow {
            ops: g.ops,
            bytes: g.bytes,
            errors: g.errors,
            latency: g.latency,
            hdr: histogram_for(g.latency_hdr.as_deref(), &g.latency, t),
        }
    }

    /// `other`'s ops counted in this flow too: the histograms added where both have one,
    /// else the latency of whichever holds ops (a job's reads and its read-back).
    fn absorb(&mut self, other: Flow) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        let merged = match (self.hdr.as_mut(), other.hdr.as_ref()) {
            (Some(mine), Some(theirs)) => mine.add(theirs).is_ok(),
            _ => false,
        };
        if let (true, Some(h)) = (merged, &self.hdr) {
            self.latency = crate::record::histogram::summarize(h);
        } else if self.latency.count == 0 {
            self.hdr = other.hdr;
            self.latency = other.latency;
        }
    }

    fn of_trial(t: &Trial) -> Flow {
        Flow {
            ops: t.ops,
            bytes: t.bytes,
            errors: t.errors,
            latency: t.latency,
            hdr: decode(&t.latency_hdr).ok().filter(|h| !h.is_empty()),
        }
    }
}

/// The histogram of a group: its own, or the trial's when the group holds every op the
/// trial's histogram counted (a randread run's reads are all its ops). Records keep no
/// per-group histograms, so a mixed run's directions have none.
fn histogram_for(
    own: Option<&str>,
    latency: &LatencySummary,
    t: &Trial,
) -> Option<LatencyHistogram> {
    if let Some(h) = own.and_then(|text| decode(text).ok()) {
        return Some(h);
    }
    let whole = decode(&t.latency_hdr).ok()?;
    (latency.count > 0 && whole.len() == latency.count).then_some(whole)
}

/// One fio job: its name, the directions it did and the histogram of all its ops.
struct Job {
    name: String,
    directions: BTreeMap<&'static str, Flow>,
    /// All its ops, for the job-wide latency buckets and the CPU share.
    all: Flow,
    options: Map<String, Value>,
    /// A job file's job that ended before its step (its size done): its own running time.
    elapsed_ns: Option<u64>,
    /// A job file's job: fio's reporting group (else the step's index is the group).
    groupid: Option<u64>,
    /// A job file's job with fio's `steadystate`.
    steady: Option<SteadyStateResult>,
    /// The latencies fio keeps for it: total (`lat`) and completion (`clat`), unless its
    /// `disable_lat` or `disable_clat` says otherwise.
    kept: Kept,
}

/// Which of fio's latency objects a job's JSON fills (the others are written as fio writes
/// a latency it did not keep: N 0).
#[derive(Clone, Copy)]
struct Kept {
    lat: bool,
    clat: bool,
}

impl Default for Kept {
    fn default() -> Self {
        Kept {
            lat: true,
            clat: true,
        }
    }
}

/// The fio job of the group `g` (a job's, or one copy's): its directions are the groups
/// of kind `parts` keyed `G/DIRECTION`, its options those of the job file's job `name`. Its
/// read-back after its writes (`verify`: `job_verify`, `job_copy_verify`) counts among its
/// reads, as fio counts it.
fn named_job(record: &RunRecord, t: &Trial, g: &GroupResult, name: &str, parts: &str) -> Job {
    let mut directions = BTreeMap::new();
    for d in t.groups.iter().filter(|d| d.by == parts) {
        let Some((of, dir)) = d.key.rsplit_once('/') else {
            continue;
        };
        if let (true, Some(dir)) = (of == g.key, direction_name(dir)) {
            directions.insert(dir, Flow::of_group(d, t));
        }
    }
    let read_back = if parts == "job_direction" {
        "job_verify"
    } else {
        "job_copy_verify"
    };
    let mut all = Flow::of_group(g, t);
    if let Some(v) = t
        .groups
        .iter()
        .find(|v| v.by == read_back && v.key == g.key)
    {
        all.absorb(Flow::of_group(v, t));
        directions
            .entry("read")
            .or_default()
            .absorb(Flow::of_group(v, t));
    }
    let spec = record
        .spec
        .pointer("/jobs")
        .and_then(Value::as_array)
        .and_then(|jobs| jobs.iter().find(|j| j["name"] == name));
    let disabled = |what: &str| {
        spec.and_then(|j| j["fio_disabled"].as_array())
            .is_some_and(|d| d.iter().any(|x| x == what))
    };
    Job {
        name: name.to_string(),
        directions,
        all,
        options: written_options(record, "/jobs", Some(name)),
        elapsed_ns: g.elapsed_ns,
        groupid: spec.and_then(|j| j["group"].as_u64()),
        steady: g.steady_state.clone(),
        kept: Kept {
            lat: !disabled("lat"),
            clat: !disabled("clat"),
        },
    }
}

fn direction_name(key: &str) -> Option<&'static str> {
    match key {
        "read" => Some("read"),
        "write" => Some("write"),
        "trim" => Some("trim"),
        "sync" => Some("sync"),
        _ => None,
    }
}

/// The fio jobs of a step: one per `job` group, else one for the step. A job whose copies
/// report on their own (`numjobs` without `group_reporting`: `job_copy` groups) is one fio
/// job per copy, as fio prints them, each under the job's name.
fn jobs_of(record: &RunRecord, s: &StepResult, t: &Trial) -> Vec<Job> {
    let named: Vec<&GroupResult> = t.groups.iter().filter(|g| g.by == "job").collect();
    if !named.is_empty() {
        let mut jobs = Vec::new();
        for g in named {
            let copies: Vec<&GroupResult> = t
                .groups
                .iter()
                .filter(|c| c.by == "job_copy")
                .filter(|c| {
                    c.key
                        .strip_prefix(g.key.as_str())
                        .and_then(|rest| rest.strip_prefix('.'))
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                .collect();
            if copies.is_empty() {
                jobs.push(named_job(record, t, g, &g.key, "job_direction"));
            } else {
                jobs.extend(
                    copies
                        .into_iter()
                        .map(|c| named_job(record, t, c, &g.key, "job_copy_direction")),
                );
            }
        }
        return jobs;
    }
    let mut directions = BTreeMap::new();
    for g in t.groups.iter().filter(|g| g.by == "direction") {
        if let Some(dir) = direction_name(&g.key) {
            directions.insert(dir, Flow::of_group(g, t));
        }
    }
    if directions.is_empty() {
        // No direction groups (records built elsewhere): every op goes where the pattern
        // says; a mixed pattern's ops cannot be split, so they go to fio's `mixed`.
        let rw = s
            .params
            .get("rw")
            .or_else(|| record.spec.get("rw"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let dir = match rw {
            "read" | "randread" => "read",
            "write" | "randwrite" => "write",
            "trim" | "randtrim" => "trim",
            _ => "mixed",
        };
        if t.ops > 0 {
            directions.insert(dir, Flow::of_trial(t));
        }
    }
    let label = step_label(s);
    vec![Job {
        name: if label.is_empty() { "io".into() } else { label },
        directions,
        all: Flow::of_trial(t),
        options: job_options(s),
        elapsed_ns: None,
        groupid: None,
        steady: None,
        kept: Kept::default(),
    }]
}

/// A step's options under fio's names, as fio writes them: text.
fn job_options(s: &StepResult) -> Map<String, Value> {
    const NAMES: [(&str, &str); 7] = [
        ("rw", "rw"),
        ("bs_bytes", "bs"),
        ("iodepth", "iodepth"),
        ("threads", "numjobs"),
        ("rwmix", "rwmixread"),
        ("files", "nrfiles"),
        ("size_bytes", "size"),
    ];
    let mut m = Map::new();
    for (ours, fios) in NAMES {
        if let Some(v) = s.params.get(ours) {
            m.insert(fios.into(), json!(text(v)));
        }
    }
    m
}

/// A job file's options as written: the `[global]` section's (`at` "/global_options") or a
/// job's (`at` "/jobs", `job` its name), from the record's spec.
fn written_options(r: &RunRecord, at: &str, job: Option<&str>) -> Map<String, Value> {
    let pairs = match job {
        None => r.spec.pointer(at),
        Some(name) => r
            .spec
            .pointer(at)
            .and_then(Value::as_array)
            .and_then(|jobs| jobs.iter().find(|j| j["name"] == name))
            .map(|j| &j["options"]),
    };
    pairs
        .and_then(Value::as_array)
        .map(|pairs| {
            pairs
                .iter()
                .filter_map(|p| Some((p.get(0)?.as_str()?.to_string(), p.get(1)?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The run's options that hold for every step, under fio's names.
fn global_options(r: &RunRecord) -> Map<String, Value> {
    if r.spec.get("job_files").is_some() {
        return written_options(r, "/global_options", None);
    }
    let mut m = Map::new();
    let spec = &r.spec;
    if let Some(e) = spec.get("engine").and_then(Value::as_str) {
        m.insert("ioengine".into(), json!(e));
    }
    if let Some(d) = spec.get("direct").and_then(Value::as_bool) {
        m.insert("direct".into(), json!(if d { "1" } else { "0" }));
    }
    if let Some(ns) = spec.pointer("/stop/duration_ns").and_then(Value::as_u64) {
        m.insert("runtime".into(), json!(format!("{}ms", ns / 1_000_000)));
        m.insert("time_based".into(), json!("1"));
    }
    if let Some(ns) = spec.get("warmup_ns").and_then(Value::as_u64) {
        m.insert("ramp_time".into(), json!(format!("{}ms", ns / 1_000_000)));
    }
    if !r.target.is_empty() {
        m.insert("directory".into(), json!(r.target));
    }
    // Options that do not sweep are the same in every step: say them once, here, too.
    let swept: Vec<&String> = r.steps.iter().flat_map(|s| &s.swept).collect();
    if let Some(first) = r.steps.first() {
        for (k, v) in job_options(first) {
            let ours = match k.as_str() {
                "bs" => "bs_bytes",
                "numjobs" => "threads",
                "rwmixread" => "rwmix",
                "nrfiles" => "files",
                "size" => "size_bytes",
                other => other,
            };
            if !swept.iter().any(|s| *s == ours) {
                m.insert(k, v);
            }
        }
    }
    m
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "1" } else { "0" }.into(),
        other => other.to_string(),
    }
}

fn job_object(job: &Job, s: &StepResult, t: &Trial, elapsed_s: i64, plus: bool) -> Value {
    // A job that ended before its step is over its own running time, as fio's runtime is.
    let own;
    let t = match job.elapsed_ns {
        Some(ns) if ns > 0 => {
            own = Trial {
                elapsed_ns: ns,
                ..t.clone()
            };
            &own
        }
        _ => t,
    };
    let mut o = Map::new();
    o.insert("jobname".into(), json!(job.name));
    o.insert(
        "groupid".into(),
        json!(job.groupid.unwrap_or(s.index as u64)),
    );
    o.insert(
        "job_start".into(),
        json!(epoch_ms(&t.started_at).unwrap_or(0)),
    );
    // fio's `error` is the errno that stopped the job; perflab counts failed I/Os instead,
    // which fio writes (with continue_on_error) as total_err.
    o.insert("error".into(), json!(0));
    if job.all.errors > 0 {
        o.insert("total_err".into(), json!(job.all.errors));
    }
    o.insert("eta".into(), json!(0));
    o.insert("elapsed".into(), json!(elapsed_s));
    o.insert("job options".into(), Value::Object(job.options.clone()));
    let runtime_ms = t.elapsed_ns / 1_000_000;
    // The step's aggregate bandwidth per direction, over all its jobs: fio's bw_agg divides by it.
    let agg = |dir: &str| -> f64 {
        let bytes: u64 = jobs_bytes(t, dir);
        rate(bytes, t.elapsed_ns) / 1024.0
    };
    for dir in ["read", "write", "trim"] {
        let flow = job.directions.get(dir);
        o.insert(
            dir.into(),
            direction(flow, t, runtime_ms, agg(dir), plus, job.kept),
        );
    }
    o.insert("sync".into(), sync_object(job.directions.get("sync"), plus));
    if let Some(m) = job.directions.get("mixed") {
        o.insert(
            "mixed".into(),
            direction(Some(m), t, runtime_ms, agg("mixed"), plus, job.kept),
        );
    }
    o.insert("job_runtime".into(), json!(runtime_ms));
    let (usr, sys) = cpu(job, t);
    o.insert("usr_cpu".into(), json!(usr));
    o.insert("sys_cpu".into(), json!(sys));
    // fio counts the job's own context switches and page faults; perflab counts only the
    // machine's, which would be another thing under the same name.
    o.insert("ctx".into(), json!(0));
    o.insert("majf".into(), json!(0));
    o.insert("minf".into(), json!(0));
    o.insert("iodepth_level".into(), iodepth_level(s, job.all.ops));
    // perflab does not record how many I/Os each submit and reap handled.
    let zeros =
        |keys: &[&str]| Value::Object(keys.iter().map(|k| (k.to_string(), json!(0.0))).collect());
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    o.insert("iodepth_submit".into(), zeros(&batch));
    o.insert("iodepth_complete".into(), zeros(&batch));
    let (ns, us, ms) = latency_buckets(job.all.hdr.as_ref());
    o.insert("latency_ns".into(), ns);
    o.insert("latency_us".into(), us);
    o.insert("latency_ms".into(), ms);
    if let Some(ss) = &job.steady {
        o.insert("steadystate".into(), steadystate(ss));
    }
    Value::Object(o)
}

/// fio's `steadystate` object (stat.c `show_thread_status_json`): the criterion as fio
/// prints it, the window in seconds, whether it was attained, the criterion's last value,
/// and the window's samples (I/Os a second, bytes a second) with their means.
fn steadystate(ss: &SteadyStateResult) -> Value {
    let pct = if ss.percent { "%" } else { "" };
    let name = ss.criterion.split(':').next().unwrap_or("");
    // fio prints a latency limit as it holds it, in microseconds.
    let limit = match name.starts_with("lat") && !ss.percent {
        true => ss.limit / 1000.0,
        false => ss.limit,
    };
    let mean = |xs: &[u64]| {
        xs.iter()
            .sum::<u64>()
            .checked_div(xs.len() as u64)
            .unwrap_or(0)
    };
    let mut data = Map::new();
    data.insert("bw_mean".into(), json!(mean(&ss.bw_bytes)));
    data.insert("iops_mean".into(), json!(mean(&ss.iops)));
    if !ss.lat_ns.is_empty() {
        data.insert("lat_mean".into(), json!(mean(&ss.lat_ns)));
        data.insert("lat_ns".into(), json!(ss.lat_ns));
    }
    data.insert("iops".into(), json!(ss.iops));
    data.insert("bw".into(), json!(ss.bw_bytes));
    json!({
        "ss": format!("{name}:{limit:.6}{pct}"),
        "duration": ss.duration_ns / 1_000_000_000,
        "attained": u8::from(ss.attained),
        "criterion": format!("{:.6}{pct}", ss.value),
        "max_deviation": ss.max_deviation,
        "slope": ss.slope,
        "data": Value::Object(data),
    })
}

/// Bytes of a direction over all the trial's fio jobs (`mixed`: every op's).
fn jobs_bytes(t: &Trial, dir: &str) -> u64 {
    if dir == "mixed" {
        return t.bytes;
    }
    let by_job = t.groups.iter().any(|g| g.by == "job");
    t.groups
        .iter()
        .filter(|g| match by_job {
            true => g.by == "job_direction" && g.key.rsplit_once('/').map(|p| p.1) == Some(dir),
            false => g.by == "direction" && g.key == dir,
        })
        .map(|g| g.bytes)
        .sum()
}

/// Per second over `elapsed_ns`.
fn rate(n: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / elapsed_ns as f64
    }
}

/// fio's read, write or trim object (or `mixed`): a direction without ops is all zeros, as
/// fio writes it.
fn direction(
    flow: Option<&Flow>,
    t: &Trial,
    runtime_ms: u64,
    agg_kib: f64,
    plus: bool,
    kept: Kept,
) -> Value {
    let empty = Flow::default();
    let f = flow.unwrap_or(&empty);
    let active = f.ops > 0;
    let mut o = Map::new();
    // fio divides by its runtime in ms; perflab's elapsed time is in ns, so the rates are
    // the record's own (bytes and I/Os over the measure phase), truncated as fio truncates.
    let bw_bytes = if active {
        rate(f.bytes, t.elapsed_ns) as u64
    } else {
        0
    };
    o.insert("io_bytes".into(), json!(f.bytes));
    o.insert("io_kbytes".into(), json!(f.bytes >> 10));
    o.insert("bw_bytes".into(), json!(bw_bytes));
    o.insert("bw".into(), json!(bw_bytes / 1024));
    o.insert(
        "iops".into(),
        json!(if active {
            rate(f.ops, t.elapsed_ns)
        } else {
            0.0
        }),
    );
    o.insert("runtime".into(), json!(if active { runtime_ms } else { 0 }));
    o.insert("total_ios".into(), json!(f.ops));
    o.insert("short_ios".into(), json!(0));
    o.insert("drop_ios".into(), json!(0));
    // perflab times an I/O from submission to completion: that is fio's clat, and its lat
    // too, since the submission itself (fio's slat) is not timed apart; slat is written
    // as fio writes a latency it did not measure (N 0), and so is one the job's
    // disable_clat or disable_lat turns off.
    o.insert("slat_ns".into(), latency(None, None, false, false));
    let summary = active.then_some(&f.latency);
    let clat = summary.filter(|_| kept.clat);
    o.insert("clat_ns".into(), latency(clat, f.hdr.as_ref(), true, plus));
    // fio's default: lat without percentiles.
    let lat = summary.filter(|_| kept.lat);
    o.insert("lat_ns".into(), latency(lat, f.hdr.as_ref(), false, false));
    // Bandwidth and IOPS samples: the trial's intervals. The series covers all the trial's
    // ops, so a direction's (or job's) share of each interval is its share of the trial's
    // ops and bytes: exact for a single direction, an approximation for mixed runs.
    let (iops, bw) = samples(f, t);
    let bw_stats = moments(&bw);
    let iops_stats = moments(&iops);
    let (bw_min, bw_max, bw_mean, bw_dev) = bw_stats.unwrap_or((0.0, 0.0, 0.0, 0.0));
    let p_of_agg = match bw_stats {
        None => 0.0,
        Some(_) if agg_kib > 1.0 => (bw_mean * 100.0 / agg_kib).min(100.0),
        Some(_) => 100.0,
    };
    o.insert("bw_min".into(), json!(bw_min as u64));
    o.insert("bw_max".into(), json!(bw_max as u64));
    o.insert("bw_agg".into(), json!(p_of_agg));
    o.insert("bw_mean".into(), json!(bw_mean));
    o.insert("bw_dev".into(), json!(bw_dev));
    o.insert("bw_samples".into(), json!(bw.len()));
    let (i_min, i_max, i_mean, i_dev) = iops_stats.unwrap_or((0.0, 0.0, 0.0, 0.0));
    o.insert("iops_min".into(), json!(i_min as u64));
    o.insert("iops_max".into(), json!(i_max as u64));
    o.insert("iops_mean".into(), json!(i_mean));
    o.insert("iops_stddev".into(), json!(i_dev));
    o.insert("iops_samples".into(), json!(iops.len()));
    Value::Object(o)
}

/// fio's `sync` object: the fsyncs' count and latency (percentiles as clat's: on).
fn sync_object(flow: Option<&Flow>, plus: bool) -> Value {
    let ops = flow.map_or(0, |f| f.ops);
    let summary = flow.filter(|f| f.ops > 0).map(|f| &f.latency);
    json!({
        "total_ios": ops,
        "lat_ns": latency(summary, flow.and_then(|f| f.hdr.as_ref()), true, plus),
    })
}

/// Per-interval IOPS and KiB/s of a flow. A partial interval (the tail after the last whole
/// one) is left out, as fio takes a sample only when its interval is over.
fn samples(f: &Flow, t: &Trial) -> (Vec<f64>, Vec<f64>) {
    if f.ops == 0 || t.ops == 0 {
        return (Vec::new(), Vec::new());
    }
    let full = t.series.iter().map(|p| p.duration_ns).max().unwrap_or(0);
    let ops_share = f.ops as f64 / t.ops as f64;
    let bytes_share = if t.bytes > 0 {
        f.bytes as f64 / t.bytes as f64
    } else {
        0.0
    };
    t.series
        .iter()
        .filter(|p| p.duration_ns > 0 && p.duration_ns * 2 >= full)
        .map(|p| {
            (
                p.ops_per_sec * ops_share,
                p.bytes_per_sec * bytes_share / 1024.0,
            )
        })
        .unzip()
}

/// Minimum, maximum, mean and sample standard deviation (fio's n-1; 0 for one sample).
fn moments(xs: &[f64]) -> Option<(f64, f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let dev = if xs.len() > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((min, max, mean, dev))
}

/// fio's latency object. Without ops: zeros, N 0, no percentiles. Percentiles come from the
/// histogram when there is one (fio's default list), else from the summary (50, 90, 99,
/// 99.9 only). `bins` (json+) need the histogram.
fn latency(
    s: Option<&LatencySummary>,
    hdr: Option<&LatencyHistogram>,
    percentiles: bool,
    plus: bool,
) -> Value {
    let mut o = Map::new();
    let s = s.filter(|s| s.count > 0);
    let d = LatencySummary::default();
    let v = s.unwrap_or(&d);
    o.insert("min".into(), json!(v.min_ns));
    o.insert("max".into(), json!(v.max_ns));
    o.insert("mean".into(), json!(v.mean_ns));
    o.insert("stddev".into(), json!(v.stdev_ns));
    o.insert("N".into(), json!(v.count));
    if !percentiles || s.is_none() {
        return Value::Object(o);
    }
    let mut p = Map::new();
    match hdr {
        Some(h) => {
            for q in PERCENTILES {
                p.insert(percentile_key(q), json!(h.value_at_quantile(q / 100.0)));
            }
        }
        None => {
            for (q, x) in [
                (50.0, v.p50_ns),
                (90.0, v.p90_ns),
                (99.0, v.p99_ns),
                (99.9, v.p999_ns),
            ] {
                p.insert(percentile_key(q), json!(x));
            }
        }
    }
    o.insert("percentile".into(), Value::Object(p));
    if let (true, Some(h)) = (plus, hdr) {
        let bins: Map<String, Value> = bins(h)
            .into_iter()
            .map(|(k, n)| (k.to_string(), json!(n)))
            .collect();
        o.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(o)
}

/// A percentile as fio's C `%f` writes it: `99.000000`.
fn percentile_key(q: f64) -> String {
    format!("{q:.6}")
}

/// fio's bucket index of a latency in ns (stat.c's plat_val_to_idx, rewritten): values below
/// 2^(bits+1) are their own bucket, above that 64 buckets per power of two.
fn fio_index(v: u64) -> u64 {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (v >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio writes for a bucket (plat_idx_to_val): its midpoint.
fn fio_value(idx: u64) -> u64 {
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = idx % PLAT_VAL;
    // (k + 0.5) * 2^error_bits, exact since error_bits >= 1 here.
    base + (2 * k + 1) * (1u64 << (error_bits - 1))
}

/// json+'s `bins`: fio's bucket midpoints (ns) and their counts. Approximate: each of the
/// HDR histogram's buckets (about 1/1000 wide, finer than fio's 1/64) goes whole into the
/// fio bucket holding its midpoint, so counts near a fio bucket's edge may land one
/// bucket over.
fn bins(h: &LatencyHistogram) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for it in h.iter_recorded() {
        let v = h.median_equivalent(it.value_iterated_to());
        *out.entry(fio_value(fio_index(v))).or_insert(0) += it.count_at_value();
    }
    out
}

/// fio's latency_ns, latency_us and latency_ms: percent of the job's I/Os in each range
/// (an HDR bucket counted whole at its midpoint); zeros without a histogram.
fn latency_buckets(hdr: Option<&LatencyHistogram>) -> (Value, Value, Value) {
    const SMALL: [&str; 10] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    const MS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    const EDGES: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let mut total = 0u64;
    if let Some(h) = hdr {
        for it in h.iter_recorded() {
            let v = h.median_equivalent(it.value_iterated_to());
            let n = it.count_at_value();
            total += n;
            let slot = |x: u64, last: usize| EDGES[..last].iter().filter(|e| **e <= x).count();
            match v {
                0..=999 => ns[slot(v, 9)] += n,
                1_000..=999_999 => us[slot(v / 1_000, 9)] += n,
                _ => ms[slot(v / 1_000_000, 11)] += n,
            }
        }
    }
    let pct = |keys: &[&str], counts: &[u64]| -> Value {
        let m: Map<String, Value> = keys
            .iter()
            .zip(counts)
            .map(|(k, &c)| {
                let p = match total {
                    0 => 0.0,
                    t => (c as f64 * 100.0 / t as f64).max(if c > 0 { 0.01 } else { 0.0 }),
                };
                (k.to_string(), json!(p))
            })
            .collect();
        Value::Object(m)
    };
    (pct(&SMALL, &ns), pct(&SMALL, &us), pct(&MS, &ms))
}

/// fio's iodepth_level: percent of I/Os issued at each queue depth. perflab keeps `iodepth`
/// I/Os in flight through the closed loop, so all go to that depth's range (approximate: the
/// ramp at the start and the drain at the end are not counted apart).
fn iodepth_level(s: &StepResult, ops: u64) -> Value {
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let depth = s
        .params
        .get("iodepth")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let slot = (63 - depth.leading_zeros()).min(6) as usize;
    Value::Object(
        keys.iter()
            .enumerate()
            .map(|(i, k)| {
                let p = if ops > 0 && i == slot { 100.0 } else { 0.0 };
                (k.to_string(), json!(p))
            })
            .collect(),
    )
}

/// fio's usr_cpu and sys_cpu: the job's CPU time as percent of its runtime. perflab records
/// its own CPU time per op (user and system together); the split follows the machine's
/// user:system ratio over the phase (approximate), and a job of several gets its share of
/// the ops. Zeros when the record has neither.
fn cpu(job: &Job, t: &Trial) -> (f64, f64) {
    let (Some(per_op), Some(summary)) = (
        t.resources.process_cpu_ns_per_op,
        t.resources.summary.as_ref(),
    ) else {
        return (0.0, 0.0);
    };
    if t.elapsed_ns == 0 {
        return (0.0, 0.0);
    }
    let busy = per_op * job.all.ops as f64 / t.elapsed_ns as f64 * 100.0;
    let (u, s) = (summary.cpu.user, summary.cpu.system);
    if u + s <= 0.0 {
        return (busy, 0.0);
    }
    (busy * u / (u + s), busy * s / (u + s))
}

/// fio's disk_util: each device's counters over the run's measure phases (the first trial
/// of each step), rebuilt from the rates perflab keeps. Merges are not kept: 0.
fn disk_util(r: &RunRecord) -> Vec<Value> {
    #[derive(Default)]
    struct Disk {
        ios: [f64; 2],
        bytes: [f64; 2],
        ticks_ms: [f64; 2],
        queue_ms: f64,
        busy_ms: f64,
        ms: f64,
    }
    let mut order: Vec<String> = Vec::new();
    let mut disks: BTreeMap<String, Disk> = BTreeMap::new();
    for t in r.steps.iter().filter_map(|s| s.trials.first()) {
        let secs = t.elapsed_ns as f64 / 1e9;
        for d in &t.devices {
            if !disks.contains_key(&d.name) {
                order.push(d.name.clone());
            }
            let e = disks.entry(d.name.clone()).or_default();
            let a = &d.activity;
            let ios = [a.reads_per_sec * secs, a.writes_per_sec * secs];
            e.ios[0] += ios[0];
            e.ios[1] += ios[1];
            e.bytes[0] += a.read_bytes_per_sec * secs;
            e.bytes[1] += a.write_bytes_per_sec * secs;
            e.ticks_ms[0] += a.read_await_ms * ios[0];
            e.ticks_ms[1] += a.write_await_ms * ios[1];
            e.queue_ms += a.avg_queue * secs * 1000.0;
            e.busy_ms += a.utilisation * secs * 1000.0;
            e.ms += secs * 1000.0;
        }
    }
    order
        .iter()
        .map(|name| {
            let d = &disks[name];
            let util = if d.ms > 0.0 {
                (d.busy_ms * 100.0 / d.ms).min(100.0)
            } else {
                0.0
            };
            let n = |x: f64| x.round() as u64;
            json!({
                "name": name,
                "read_ios": n(d.ios[0]),
                "write_ios": n(d.ios[1]),
                "read_sectors": n(d.bytes[0] / 512.0),
                "write_sectors": n(d.bytes[1] / 512.0),
                "read_merges": 0,
                "write_merges": 0,
                "read_ticks": n(d.ticks_ms[0]),
                "write_ticks": n(d.ticks_ms[1]),
                "in_queue": n(d.queue_ms),
                "util": util,
            })
        })
        .collect()
}

/// Milliseconds since the epoch of a record's `2026-11-22T03:24:32.123Z`.
fn epoch_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = match text.get(19..20) {
        Some(".") => {
            let digits: String = text[20..]
                .chars()
                .take_while(char::is_ascii_digit)
                .chain("000".chars())
                .take(3)
                .collect();
            digits.parse::<i64>().ok()?
        }
        _ => 0,
    };
    // Days from the civil date (Howard Hinnant's algorithm, the inverse of timestamp::civil).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

/// C's ctime without its newline, as fio's `time` (`Sat Dec  5 23:49:05 2026`); in UTC,
/// where fio writes the local time.
fn ctime(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = crate::record::timestamp::civil(days);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(mo - 1) as usize],
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::histogram::{encode, new_histogram, summarize};
    use crate::record::{DeviceReading, IntervalPoint};

    /// A histogram of these latencies and its summary.
    fn hist(values: &[u64]) -> (LatencyHistogram, LatencySummary) {
        let mut h = new_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        let s = summarize(&h);
        (h, s)
    }

    fn group(by: &str, key: &str, ops: u64, bytes: u64, latency: LatencySummary) -> GroupResult {
        GroupResult {
            by: by.into(),
            key: key.into(),
            label: key.into(),
            ops,
            bytes,
            latency,
            ..Default::default()
        }
    }

    /// An io run of one step, one second long, whose trial has these groups and a histogram
    /// of `values` (every op's), with two whole one-second-ish intervals and a short tail.
    fn io_run(values: &[u64], groups: Vec<GroupResult>) -> RunRecord {
        let (h, s) = hist(values);
        let ops = values.len() as u64;
        let t = Trial {
            started_at: "2026-12-05T23:49:04.470Z".into(),
            elapsed_ns: 2_000_000_000,
            ops,
            bytes: ops * 4096,
            latency: s,
            latency_hdr: encode(&h),
            groups,
            series: [(1_000_000_000, 0.6), (1_000_000_000, 0.4), (1_000, 0.0)]
                .iter()
                .enumerate()
                .map(|(i, &(d, share))| IntervalPoint {
                    start_ns: i as u64 * 1_000_000_000,
                    duration_ns: d,
                    ops_per_sec: ops as f64 * share,
                    bytes_per_sec: ops as f64 * share * 4096.0,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        RunRecord {
            id: "r1".into(),
            workload: "io".into(),
            started_at: "2026-12-05T23:49:04.216Z".into(),
            finished_at: Some("2026-12-05T23:49:06.583Z".into()),
            spec: json!({"engine": "io_uring", "direct": true, "rw": "randread",
                         "stop": {"duration_ns": 2_000_000_000u64}}),
            steps: vec![StepResult {
                index: 0,
                params: [
                    ("rw".to_string(), json!("randread")),
                    ("bs_bytes".to_string(), json!(4096)),
                    ("iodepth".to_string(), json!(8)),
                    ("threads".to_string(), json!(1)),
                ]
                .into(),
                trials: vec![t],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn reads(n: u64) -> Vec<u64> {
        (1..=n).map(|i| 10_000 + i * 37).collect()
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn root_and_job_keys_are_fios() {
        let values = reads(1000);
        let (_, s) = hist(&values);
        let r = io_run(
            &values,
            vec![group("direction", "read", 1000, 4_096_000, s)],
        );
        let d = document(&r, false);
        assert_eq!(
            keys(&d),
            [
                "fio version",
                "global options",
                "jobs",
                "time",
                "timestamp",
                "timestamp_ms"
            ]
        );
        assert_eq!(d["fio version"], format!("perflab-{}", r.tool.version));
        assert_eq!(d["timestamp"], 1_796_514_546i64);
        assert_eq!(d["timestamp_ms"], 1_796_514_546_583i64);
        assert_eq!(d["time"], "Sat Dec  5 23:49:06 2026");
        assert_eq!(d["global options"]["ioengine"], "io_uring");
        assert_eq!(d["global options"]["direct"], "1");
        let job = &d["jobs"][0];
        for k in [
            "jobname",
            "groupid",
            "job_start",
            "error",
            "eta",
            "elapsed",
            "job options",
            "read",
            "write",
            "trim",
            "sync",
            "job_runtime",
            "usr_cpu",
            "sys_cpu",
            "ctx",
            "majf",
            "minf",
            "iodepth_level",
            "iodepth_submit",
            "iodepth_complete",
            "latency_ns",
            "latency_us",
            "latency_ms",
        ] {
            assert!(job.get(k).is_some(), "job lacks {k}");
        }
        assert_eq!(job["groupid"], 0);
        assert_eq!(job["job options"]["bs"], "4096");
        assert_eq!(job["job options"]["iodepth"], "8");
        assert_eq!(job["job options"]["numjobs"], "1");
        assert_eq!(job["iodepth_level"]["8"], 100.0);
        assert_eq!(job["job_runtime"], 2000);
        assert_eq!(job["elapsed"], 2);
        let mut dir = keys(&job["read"]);
        dir.sort();
        let mut want = vec![
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "slat_ns",
            "clat_ns",
            "lat_ns",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ];
        want.sort();
        assert_eq!(dir, want);
        assert_eq!(keys(&job["sync"]), ["lat_ns", "total_ios"]);
        // No device readings: no disk_util.
        assert!(d.get("disk_util").is_none());
    }

    #[test]
    fn figures_are_fios_types_and_units() {
        let values = reads(1000);
        let (_, s) = hist(&values);
        let r = io_run(
            &values,
            vec![group("direction", "read", 1000, 4_096_000, s)],
        );
        let d = document(&r, false);
        let read = &d["jobs"][0]["read"];
        // 4,096,000 bytes over 2 s.
        assert_eq!(read["bw_bytes"], 2_048_000);
        assert!(read["bw"].is_u64());
        assert_eq!(read["bw"], 2_048_000 / 1024);
        assert!(read["iops"].is_f64());
        assert_eq!(read["iops"], 500.0);
        assert_eq!(read["io_kbytes"], 4000);
        assert_eq!(read["runtime"], 2000);
        assert_eq!(read["total_ios"], 1000);
        // Two whole intervals (600 and 400 I/O/s); the 1 µs tail is not a sample.
        assert_eq!(read["iops_samples"], 2);
        assert_eq!(read["iops_min"], 400);
        assert_eq!(read["iops_max"], 600);
        assert_eq!(read["iops_mean"], 500.0);
        assert!((read["iops_stddev"].as_f64().unwrap() - 141.421).abs() < 0.01);
        assert_eq!(read["bw_samples"], 2);
        assert_eq!(read["bw_min"], 400 * 4);
        assert_eq!(read["bw_agg"], 100.0);
        // clat has fio's 17 percentiles from the histogram, lat none, slat nothing.
        let clat = &read["clat_ns"];
        assert_eq!(clat["N"], 1000);
        assert_eq!(clat["min"], s.min_ns);
        let p = clat["percentile"].as_object().unwrap();
        assert_eq!(p.len(), 17);
        assert!(p.contains_key("99.000000") && p.contains_key("99.990000"));
        let p99 = p["99.000000"].as_u64().unwrap();
        assert!((p99 as f64 - 46_630.0).abs() < 50.0, "{p99}");
        assert!(clat.get("bins").is_none());
        assert!(read["lat_ns"].get("percentile").is_none());
        assert_eq!(read["lat_ns"]["N"], 1000);
        assert_eq!(read["slat_ns"]["N"], 0);
        assert!(read["slat_ns"].get("percentile").is_none());
        // A direction without ops: zeros, N 0, no percentile.
        let write = &d["jobs"][0]["write"];
        assert_eq!(write["bw"], 0);
        assert_eq!(write["iops"], 0.0);
        assert_eq!(write["runtime"], 0);
        assert_eq!(write["clat_ns"]["N"], 0);
        assert!(write["clat_ns"].get("percentile").is_none());
        assert_eq!(d["jobs"][0]["sync"]["total_ios"], 0);
        // Every I/O took 10-47 µs: the 20 and 50 µs ranges hold them all.
        let us = &d["jobs"][0]["latency_us"];
        let total: f64 = us
            .as_object()
            .unwrap()
            .values()
            .filter_map(Value::as_f64)
            .sum();
        assert!((total - 100.0).abs() < 1e-6, "{us}");
        assert_eq!(d["jobs"][0]["latency_ns"]["2"], 0.0);
        assert_eq!(d["jobs"][0]["latency_ms"][">=2000"], 0.0);
    }

    #[test]
    fn json_plus_bins_count_every_io_in_fios_buckets() {
        let values = reads(1000);
        let (_, s) = hist(&values);
        let r = io_run(
            &values,
            vec![group("direction", "read", 1000, 4_096_000, s)],
        );
        let d = document(&r, true);
        let bins = d["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
        let total: u64 = bins.values().filter_map(Value::as_u64).sum();
        assert_eq!(total, 1000);
        for k in bins.keys() {
            let v: u64 = k.parse().unwrap();
            assert_eq!(
                fio_value(fio_index(v)),
                v,
                "{k} is not one of fio's midpoints"
            );
        }
        // lat has no percentiles, so no bins, as in fio.
        assert!(d["jobs"][0]["read"]["lat_ns"].get("bins").is_none());
    }

    #[test]
    fn a_mixed_runs_directions_have_the_summarys_percentiles() {
        let values = reads(1000);
        let (_, r_s) = hist(&values[..600]);
        let (_, w_s) = hist(&values[600..]);
        let r = io_run(
            &values,
            vec![
                group("direction", "read", 600, 600 * 4096, r_s),
                group("direction", "write", 400, 400 * 4096, w_s),
            ],
        );
        let d = document(&r, true);
        let read = &d["jobs"][0]["read"];
        let p = read["clat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(
            p.keys().collect::<Vec<_>>(),
            ["50.000000", "90.000000", "99.000000", "99.900000"]
        );
        assert_eq!(p["99.000000"], r_s.p99_ns);
        // Without the direction's own histogram there are no bins to give.
        assert!(read["clat_ns"].get("bins").is_none());
        assert_eq!(d["jobs"][0]["write"]["total_ios"], 400);
        // Each direction's share of the intervals: 60% of the ops are reads.
        assert_eq!(read["iops_max"], 360);
    }

    #[test]
    fn job_groups_make_one_fio_job_each() {
        let values = reads(100);
        let (_, s) = hist(&values);
        let (_, fsyncs) = hist(&values[..10]);
        let r = io_run(
            &values,
            vec![
                group("job", "seq/a", 60, 60 * 4096, s),
                group("job", "b", 40, 40 * 4096, s),
                group("job_direction", "seq/a/read", 60, 60 * 4096, s),
                group("job_direction", "b/write", 30, 30 * 4096, s),
                group("job_direction", "b/sync", 10, 0, fsyncs),
            ],
        );
        let d = document(&r, false);
        let jobs = d["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0]["jobname"], "seq/a");
        assert_eq!(jobs[0]["read"]["total_ios"], 60);
        assert_eq!(jobs[0]["write"]["total_ios"], 0);
        assert_eq!(jobs[1]["jobname"], "b");
        assert_eq!(jobs[1]["groupid"], 0);
        assert_eq!(jobs[1]["write"]["total_ios"], 30);
        assert_eq!(jobs[1]["sync"]["total_ios"], 10);
        // The fsyncs have no histogram of their own: the summary's four percentiles.
        let p = jobs[1]["sync"]["lat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p["99.000000"], fsyncs.p99_ns);
    }

    #[test]
    fn copies_without_group_reporting_are_one_fio_job_each() {
        let values = reads(100);
        let (_, s) = hist(&values);
        let r = io_run(
            &values,
            vec![
                group("job", "a", 100, 100 * 4096, s),
                group("job_copy", "a.0", 70, 70 * 4096, s),
                group("job_copy", "a.1", 30, 30 * 4096, s),
                group("job_direction", "a/read", 100, 100 * 4096, s),
                group("job_copy_direction", "a.0/read", 70, 70 * 4096, s),
                group("job_copy_direction", "a.1/read", 30, 30 * 4096, s),
                // Another job whose name starts with the first's is not its copy.
                group("job", "a.x", 5, 5 * 4096, s),
                group("job_direction", "a.x/read", 5, 5 * 4096, s),
            ],
        );
        let d = document(&r, false);
        let jobs = d["jobs"].as_array().unwrap();
        let names: Vec<&str> = jobs
            .iter()
            .map(|j| j["jobname"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "a", "a.x"]);
        assert_eq!(jobs[0]["read"]["total_ios"], 70);
        assert_eq!(jobs[1]["read"]["total_ios"], 30);
        assert_eq!(jobs[2]["read"]["total_ios"], 5);
    }

    #[test]
    fn a_jobs_reporting_group_and_steady_state_are_fios() {
        let values = reads(100);
        let (_, s) = hist(&values);
        let mut ss = group("job", "ss-write", 100, 100 * 4096, s);
        ss.steady_state = Some(SteadyStateResult {
            criterion: "iops:10%".into(),
            limit: 10.0,
            percent: true,
            duration_ns: 30_000_000_000,
            attained: true,
            attained_after_ns: Some(41_000_000_000),
            value: 2.792_584,
            max_deviation: 68150.0,
            iops: vec![2_508_542, 2_372_242],
            bw_bytes: vec![328_799_950_541, 310_934_503_424],
            ..Default::default()
        });
        let mut r = io_run(&values, vec![ss]);
        // A job file's jobs say their fio group (new_group alone: a group within the step).
        r.spec = json!({"job_files": ["ss.fio"], "jobs": [{"name": "ss-write", "group": 3}]});
        let d = document(&r, false);
        let job = &d["jobs"][0];
        assert_eq!(job["groupid"], 3);
        let ss = &job["steadystate"];
        assert_eq!(ss["ss"], "iops:10.000000%");
        assert_eq!(ss["duration"], 30);
        assert_eq!(ss["attained"], 1);
        assert_eq!(ss["criterion"], "2.792584%");
        assert_eq!(ss["max_deviation"], 68150.0);
        assert_eq!(ss["slope"], 0.0);
        assert_eq!(ss["data"]["iops"], json!([2_508_542, 2_372_242]));
        assert_eq!(ss["data"]["iops_mean"], 2_440_392);
        assert_eq!(ss["data"]["bw_mean"], 319_867_226_982_u64);
        assert!(ss["data"].get("lat_ns").is_none());
    }

    #[test]
    fn one_job_per_step_and_devices_make_disk_util() {
        let values = reads(100);
        let (_, s) = hist(&values);
        let mut r = io_run(&values, vec![group("direction", "read", 100, 409_600, s)]);
        let mut second = r.steps[0].clone();
        second.index = 1;
        second.params.insert("iodepth".into(), json!(64));
        for st in [&mut r.steps[0], &mut second] {
            st.swept = vec!["iodepth".into()];
        }
        second.trials[0].devices = vec![DeviceReading {
            name: "vda".into(),
            activity: crate::env::disk::DiskActivity {
                reads_per_sec: 50.0,
                read_bytes_per_sec: 204_800.0,
                read_await_ms: 0.5,
                avg_queue: 1.5,
                utilisation: 0.25,
                ..Default::default()
            },
        }];
        r.steps.push(second);
        let d = document(&r, false);
        let jobs = d["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0]["jobname"], "iodepth=8");
        assert_eq!(jobs[1]["jobname"], "iodepth=64");
        assert_eq!(jobs[1]["groupid"], 1);
        assert_eq!(jobs[1]["iodepth_level"][">=64"], 100.0);
        // iodepth sweeps, so it is the jobs' option only.
        assert!(d["global options"].get("iodepth").is_none());
        assert_eq!(d["global options"]["bs"], "4096");
        let disk = &d["disk_util"][0];
        assert_eq!(disk["name"], "vda");
        assert_eq!(disk["read_ios"], 100);
        assert_eq!(disk["read_sectors"], 800);
        assert_eq!(disk["read_ticks"], 50);
        assert_eq!(disk["in_queue"], 3000);
        assert_eq!(disk["util"], 25.0);
    }

    #[test]
    fn without_groups_the_pattern_says_the_direction() {
        let r = io_run(&reads(10), Vec::new());
        let d = document(&r, false);
        assert_eq!(d["jobs"][0]["read"]["total_ios"], 10);
        assert!(d["jobs"][0].get("mixed").is_none());
        let mut r = r;
        r.steps[0].params.insert("rw".into(), json!("randrw"));
        let d = document(&r, false);
        assert_eq!(d["jobs"][0]["read"]["total_ios"], 0);
        assert_eq!(d["jobs"][0]["mixed"]["total_ios"], 10);
    }

    #[test]
    fn fios_buckets_and_midpoints() {
        for v in 0..128 {
            assert_eq!(fio_index(v), v);
            assert_eq!(fio_value(v), v);
        }
        assert_eq!(fio_index(128), 128);
        assert_eq!(fio_value(128), 129);
        assert_eq!(fio_index(255), 191);
        assert_eq!(fio_value(191), 255);
        assert_eq!(fio_index(256), 192);
        assert_eq!(fio_value(192), 258);
        for v in [1_000u64, 56_191, 2_265_087, 5_000_000_000] {
            let mid = fio_value(fio_index(v));
            assert!(
                (mid as f64 - v as f64).abs() / v as f64 <= 1.0 / 128.0,
                "{v} -> {mid}"
            );
        }
        assert_eq!(fio_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn record_times_read_as_fio_writes_them() {
        assert_eq!(epoch_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            epoch_ms("2026-11-21T03:24:32.123Z"),
            Some(1_795_231_472_123)
        );
        assert_eq!(epoch_ms("2000-02-29T00:00:00Z"), Some(951_782_400_000));
        assert_eq!(epoch_ms("garbage"), None);
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(951_782_400_000), "Tue Feb 29 00:00:00 2000");
    }
}
