//! The sweep: every step of the grid, `repeat` trials each, the record saved after each step.

use super::observer::Observer;
use super::trial::{TrialError, run_trial};
use crate::analysis::analyze;
use crate::archive::Archive;
use crate::env::Environment;
use crate::env::power::PowerMeter;
use crate::error::PREPARE_PHASE;
pub use crate::error::RunError;
use crate::record::timestamp::{now_rfc3339, run_id};
use crate::record::{
    CutShort, PowerDisclosure, RunRecord, Status, StepResult, StepSummary, Trial, Warning,
    step_number,
};
use crate::stats::estimate;
use crate::vocab::StepPoint;
use crate::vocab::sweep::step_params;
use crate::workload::Context;
use crate::workload::RunSpec;
use crate::workload::ScaleOut;
use std::time::SystemTime;

/// Steal time above this share of the CPUs makes figures unreliable.
const STEAL_WARN_PCT: f64 = 2.0;
/// Repeats spreading wider than this (max - min over mean) make a comparison doubtful.
const SPREAD_WARN: f64 = 0.05;
/// Other work using more than this share of the CPUs before a run distorts its figures.
const BUSY_WARN_PCT: f64 = 20.0;
/// How long the machine is watched for other work before a run starts.
const BUSY_PROBE: std::time::Duration = std::time::Duration::from_millis(200);

/// The reason a run cut short by Ctrl-C gives.
const INTERRUPTED: &str = "interrupted (Ctrl-C)";
/// The same under MPI, where the launcher also stops every rank when one of them dies.
const INTERRUPTED_RANKS: &str =
    "interrupted (Ctrl-C, or the MPI launcher ended the job because a rank failed)";

fn interrupted() -> &'static str {
    match crate::cluster::size() {
        1 => INTERRUPTED,
        _ => INTERRUPTED_RANKS,
    }
}

/// The workload's preparation. Over MPI ranks, a shared system under test is prepared by
/// rank 0 alone while the others wait; each rank prepares its own host otherwise. Every rank
/// learns whether it worked.
fn prepare(
    workload: &dyn crate::workload::Workload,
    ctx: &Context,
    observer: &dyn Observer,
) -> Result<crate::workload::Prepared, crate::workload::OpError> {
    if crate::cluster::size() == 1 {
        return workload.prepare(ctx, &|text| observer.note(text));
    }
    let mine = match (workload.scale_out(), crate::cluster::is_root()) {
        (ScaleOut::SharedTarget, false) => Ok(Box::new(()) as crate::workload::Prepared),
        _ => workload.prepare(ctx, &|text| observer.note(text)),
    };
    let outcome = mine.as_ref().map(|_| ()).map_err(|e| e.message.clone());
    let agreed = crate::cluster::gate::Gate::new().meet(outcome);
    match agreed {
        Ok(()) => mine,
        Err(crate::cluster::gate::Halt::Failed(m)) => Err(crate::workload::OpError::other(m)),
        Err(crate::cluster::gate::Halt::Interrupted) => {
            Err(crate::workload::OpError::other("interrupted (Ctrl-C)"))
        }
    }
}

/// Who asked for the run, for the record.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The command line, with secrets removed.
    pub command: Vec<String>,
    /// The suite this run belongs to.
    pub suite: Option<String>,
    /// Which invocation of the suite: one id shared by all its runs.
    pub suite_run: Option<String>,
    /// The study and leg, when `perflab study` runs it.
    pub study: Option<crate::record::StudyRef>,
    /// Labels given at run time (`--label KEY=VALUE`), for the record.
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Runs `spec`, saving its record in `archive` after every step, and returns the record.
pub fn run(
    spec: &RunSpec,
    env: &Environment,
    archive: &Archive,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunRecord, RunError> {
    let workload = spec.workload.workload();
    // Under MPI rank 0 speaks for the run; the others run their share quietly.
    let silent = super::Silent;
    let observer = if crate::cluster::is_root() {
        observer
    } else {
        &silent
    };
    if let (true, ScaleOut::Unsupported(why)) = (crate::cluster::size() > 1, workload.scale_out()) {
        return Err(RunError::Refused(format!(
            "{} cannot run over MPI ranks: {why}; run it without mpirun",
            workload.name()
        )));
    }
    let started = SystemTime::now();
    let mut record = RunRecord {
        id: run_id(started),
        started_at: crate::record::timestamp::rfc3339(started),
        workload: workload.name().to_string(),
        target: workload.target(),
        suite: options.suite.clone(),
        suite_run: options.suite_run.clone(),
        study: options.study.clone(),
        command: options.command.clone(),
        labels: options.labels.clone(),
        settings: workload.settings(),
        spec: serde_json::to_value(spec).unwrap_or_default(),
        headline: workload.headline(),
        env: env.clone(),
        status: Status::Incomplete,
        cluster: crate::cluster::members(env).map(|members| crate::record::ClusterInfo {
            ranks: members.len() as u64,
            library: crate::cluster::library(),
            scope: if spec.per_rank { "rank" } else { "total" }.into(),
            members,
        }),
        ..Default::default()
    };
    let axes = spec.axes();
    let points: Vec<_> = spec
        .points()
        .into_iter()
        .filter(|p| !workload.skip(p))
        .collect();
    let swept: Vec<String> = spec.swept().iter().map(|s| s.to_string()).collect();
    // One meter for the whole run: a meter command's thread runs from here to the end.
    let mut meter = match spec.resources {
        true => open_meter(spec, &mut record, observer)?,
        false => None,
    };
    let idle = idle_ranks(spec, workload, &points);
    for w in busy_machine()
        .into_iter()
        .chain(workload.run_warnings(record.cluster.as_ref()))
        .chain(idle)
    {
        observer.warning(&w);
        record.warnings.push(w);
    }
    keep(archive, &record)?;
    // The run's stop token: Ctrl-C sets it, and with it every wait of the run.
    let ctx = Context {
        stop: super::interrupt::token().child(),
        ranks: crate::cluster::size(),
    };
    // Dropped when this function returns, however it returns: the workload's cleanup.
    let _prepared = match prepare(workload, &ctx, observer) {
        Ok(p) => p,
        // A load that stopped for Ctrl-C: the run is incomplete, not failed.
        Err(_) if ctx.stop.is_set() => {
            record.cut_short = Some(CutShort {
                phase: PREPARE_PHASE.into(),
                reason: interrupted().into(),
                ..Default::default()
            });
            return Err(stop(&mut record, archive, observer, None));
        }
        Err(e) => {
            record.cut_short = Some(CutShort {
                phase: PREPARE_PHASE.into(),
                reason: e.message.clone(),
                ..Default::default()
            });
            let failure = Failure {
                step: 0,
                refusal: e.refusal,
                message: e.message,
            };
            return Err(stop(&mut record, archive, observer, Some(failure)));
        }
    };
    let planned = match (&spec.levels, &spec.search) {
        (Some(l), _) => l.calibrate as usize + l.levels_pct.len(),
        // A search runs as many steps as it needs.
        (None, Some(_)) => 0,
        (None, None) => points.len(),
    };
    observer.run_started(&record, planned, spec.repeat);
    let mut steps = Steps {
        workload,
        ctx: &ctx,
        archive,
        observer,
        record: &mut record,
        meter: meter.as_mut(),
    };
    match (&spec.levels, &spec.search) {
        (Some(levels), _) => super::levels::run(spec, levels, &mut steps)?,
        (None, Some(search)) => super::search::run(spec, search, &axes, &points, &mut steps)?,
        (None, None) => {
            for point in &points {
                let mut params = step_params(&axes, point);
                // A step of fixed work, or of the workload's own shape, runs with the workers
                // the workload gives it.
                let own = workload
                    .fixed_work(point)
                    .or(workload.step_shape(point).map(|s| s.workers));
                if let Some(workers) = own {
                    let threads = spec.threads.name();
                    for (name, value) in &mut params {
                        if name == threads {
                            *value = serde_json::json!(workers);
                        }
                    }
                }
                steps.run(spec, point, params, &swept)?;
            }
        }
    }
    record.analysis = analysis(&record);
    record.status = Status::Complete;
    record.finished_at = Some(now_rfc3339());
    keep(archive, &record)?;
    observer.run_finished(&record);
    Ok(record)
}

/// What running one step needs, and the record it adds the step to.
pub(super) struct Steps<'a, 'm> {
    workload: &'a dyn crate::workload::Workload,
    ctx: &'a Context,
    archive: &'a Archive,
    observer: &'a dyn Observer,
    pub record: &'a mut RunRecord,
    meter: Option<&'m mut PowerMeter>,
}

impl Steps<'_, '_> {
    /// Runs one step of `spec` at `point` (`repeat` trials), adds it to the record with its
    /// warnings and saves the record. On an interrupt or a failure the record is saved as
    /// incomplete or failed and the error says which.
    pub fn run(
        &mut self,
        spec: &RunSpec,
        point: &StepPoint,
        params: Vec<(String, serde_json::Value)>,
        swept: &[String],
    ) -> Result<(), RunError> {
        let index = self.record.steps.len();
        let values: Vec<(String, String)> = params
            .iter()
            .filter(|(k, _)| swept.contains(k))
            .map(|(k, v)| {
                let text = v.as_str().map(str::to_string);
                (k.clone(), text.unwrap_or_else(|| v.to_string()))
            })
            .collect();
        // The progress line names every zipped axis (threads=4 files=4), not only the
        // group's first: its followers step with it but are no dimension of their own.
        let text = |k: &str| {
            params.iter().find(|(p, _)| p == k).map(|(_, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
        };
        let label = swept
            .iter()
            .flat_map(|k| {
                let followers = spec
                    .zip
                    .iter()
                    .filter(|g| g.first() == Some(k))
                    .flat_map(|g| g.iter().skip(1));
                std::iter::once(k).chain(followers)
            })
            .filter_map(|k| text(k))
            .collect::<Vec<_>>()
            .join(" ");
        let (observer, archive) = (self.observer, self.archive);
        let mut trials = Vec::with_capacity(spec.repeat as usize);
        for repeat in 0..spec.repeat {
            observer.trial_started(index, repeat, &label, &values);
            let cut = |phase: &str, reason: &str, stuck: usize, workers: usize| CutShort {
                step: index,
                repeat,
                label: label.clone(),
                phase: phase.to_string(),
                reason: reason.to_string(),
                stuck_workers: stuck as u64,
                workers: workers as u64,
            };
            // Under MPI the launcher follows its SIGTERM with SIGKILL a second later, before
            // the trial has stopped its workers: rank 0 records where the run stopped the
            // moment the signal comes, and the full account replaces it if there is time.
            let _early = (crate::cluster::size() > 1 && crate::cluster::is_root()).then(|| {
                let mut early = self.record.clone();
                early.cut_short = Some(cut("in progress", interrupted(), 0, 0));
                early.status = Status::Incomplete;
                early.finished_at = None;
                early.warnings.push(Warning {
                    code: "interrupted".into(),
                    message: "the run was interrupted; the step in progress was discarded".into(),
                    step: Some(index),
                });
                let archive = archive.clone();
                self.ctx.stop.on_stop(move || {
                    early.finished_at = Some(now_rfc3339());
                    let _ = archive.save(&early);
                })
            });
            let meter = self.meter.as_deref_mut();
            match run_trial(
                spec,
                self.workload,
                self.ctx,
                point,
                repeat,
                observer,
                meter,
            ) {
                Ok(trial) => {
                    observer.trial_finished(&trial);
                    trials.push(trial);
                }
                Err(TrialError::Interrupted(c)) => {
                    self.record.cut_short = Some(cut(c.phase, interrupted(), c.stuck, c.workers));
                    return Err(stop(self.record, archive, observer, None));
                }
                Err(TrialError::Failed { phase, message }) => {
                    self.record.cut_short = Some(cut(phase, &message, 0, 0));
                    let failure = Failure {
                        step: index,
                        refusal: false,
                        message,
                    };
                    return Err(stop(self.record, archive, observer, Some(failure)));
                }
                Err(TrialError::Refused(message)) => {
                    self.record.cut_short = Some(cut("open", &message, 0, 0));
                    let failure = Failure {
                        step: index,
                        refusal: true,
                        message,
                    };
                    return Err(stop(self.record, archive, observer, Some(failure)));
                }
            }
            if self.ctx.stop.is_set() {
                self.record.cut_short = Some(cut("between trials", interrupted(), 0, 0));
                return Err(stop(self.record, archive, observer, None));
            }
        }
        let mut step = StepResult {
            index,
            params: params.into_iter().collect(),
            swept: swept.to_vec(),
            summary: summarize(&trials, &self.record.headline.metric),
            trials,
            checks: Vec::new(),
            plan: None,
        };
        // Rank 0 checks and judges the merged step; the other ranks' steps are placeholders.
        if !crate::cluster::is_root() {
            self.record.steps.push(step);
            return Ok(());
        }
        self.workload.finish_step(&mut step, self.ctx);
        if self.ctx.stop.is_set() {
            // Ctrl-C during the checks after the step: its checks may not have run, so it is
            // discarded as any step in progress is.
            self.record.cut_short = Some(CutShort {
                step: index,
                label,
                phase: "checks after the step".into(),
                reason: interrupted().into(),
                ..Default::default()
            });
            return Err(stop(self.record, archive, observer, None));
        }
        for w in step_warnings(&step)
            .into_iter()
            .chain(self.workload.step_warnings(&step))
        {
            self.warn(w);
        }
        self.record.steps.push(step);
        self.save()?;
        if let Some(step) = self.record.steps.last() {
            observer.step_finished(step, self.record);
        }
        Ok(())
    }

    pub fn warn(&mut self, w: Warning) {
        self.observer.warning(&w);
        self.record.warnings.push(w);
    }

    pub fn note(&self, text: &str) {
        self.observer.note(text);
    }

    pub fn save(&self) -> Result<(), RunError> {
        keep(self.archive, self.record)?;
        Ok(())
    }
}

/// Saves the record. In an MPI run only rank 0 keeps it (the others' figures are merged into
/// it there); the other ranks write nothing.
fn keep(archive: &Archive, record: &RunRecord) -> Result<(), crate::archive::ArchiveError> {
    if crate::cluster::is_root() {
        archive.save(record)?;
    }
    Ok(())
}

/// Why a run failed: at which step (0 in the prepare), and whether the target refused the
/// command line's options (then the run ends as a refusal, exit 2, the message naming the
/// option to change).
struct Failure {
    step: usize,
    refusal: bool,
    message: String,
}

/// Saves what has finished, marked incomplete (interrupt) or failed (error), and says which.
fn stop(
    record: &mut RunRecord,
    archive: &Archive,
    observer: &dyn Observer,
    failure: Option<Failure>,
) -> RunError {
    let stuck = record
        .cut_short
        .as_ref()
        .filter(|c| c.stuck_workers > 0)
        .map(|c| {
            format!(
                "; {} of {} workers were stuck in an op and were abandoned",
                c.stuck_workers, c.workers
            )
        })
        .unwrap_or_default();
    let (status, warning, error) = match failure {
        None => (
            Status::Incomplete,
            Warning {
                code: "interrupted".into(),
                message: format!(
                    "the run was interrupted; the step in progress was discarded{stuck}"
                ),
                step: Some(record.steps.len()),
            },
            RunError::Interrupted {
                id: record.id.clone(),
                steps: record.steps.len(),
            },
        ),
        Some(Failure {
            step,
            refusal,
            message,
        }) => {
            let phase = record
                .cut_short
                .as_ref()
                .map(|c| c.phase.clone())
                .unwrap_or_default();
            let warning = Warning {
                code: "step_failed".into(),
                message: message.clone(),
                step: Some(step),
            };
            let error = match refusal {
                true => RunError::Refused(format!(
                    "{message} (run {} saved with status failed)",
                    record.id
                )),
                false => RunError::Failed {
                    id: record.id.clone(),
                    step,
                    phase,
                    message,
                },
            };
            (Status::Failed, warning, error)
        }
    };
    record.status = status;
    record.finished_at = Some(now_rfc3339());
    if !record.steps.is_empty() {
        record.analysis = analysis(record);
    }
    observer.warning(&warning);
    record.warnings.push(warning);
    let kept = keep(archive, record);
    observer.run_finished(record);
    match kept {
        Ok(_) => error,
        Err(e) => RunError::Archive(e),
    }
}

/// The sweep's analysis (peak, sweet spot, scaling); none for load levels, whose steps are
/// not a curve against one option but calibrations and shares of a maximum, nor for a
/// search, whose steps are probes in the order it chose them.
fn analysis(record: &RunRecord) -> Option<crate::record::Analysis> {
    (record.load_levels.is_none() && record.search.is_none()).then(|| {
        analyze(
            &record.steps,
            &record.headline,
            &crate::workload::kind::axes_of(record),
        )
    })
}

/// Mean and confidence interval over the trials of a step.
fn summarize(trials: &[Trial], headline: &str) -> StepSummary {
    // Only finite values: a trial without the figure (no op finished) must not turn the
    // step's estimate into NaN, which JSON cannot hold.
    let of = |f: &dyn Fn(&Trial) -> f64| {
        estimate(
            &trials
                .iter()
                .map(f)
                .filter(|v| v.is_finite())
                .collect::<Vec<_>>(),
        )
    };
    StepSummary {
        headline: of(&|t| t.metric(headline).unwrap_or(f64::NAN)),
        ops_per_sec: of(&|t| t.ops_per_sec),
        bytes_per_sec: of(&|t| t.bytes_per_sec),
        latency_mean_ns: of(&|t| t.latency.mean_ns),
        latency_p99_ns: of(&|t| t.latency.p99_ns as f64),
        errors: trials.iter().map(|t| t.errors).sum(),
        errors_by_kind: trials.iter().fold(Default::default(), |mut all, t| {
            crate::record::errors::add(&mut all, &t.errors_by_kind);
            all
        }),
    }
}

/// Warnings about the quality of a step's measurement, each saying what to do.
/// Share of the offered rate below which an open-loop step is said not to have reached it.
const RATE_SHORT: f64 = 0.99;

fn step_warnings(step: &StepResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let steal = step
        .trials
        .iter()
        .map(|t| t.resources.cpu.steal_pct)
        .fold(0.0, f64::max);
    if steal > STEAL_WARN_PCT {
        out.push(Warning {
            code: "steal_time".into(),
            message: format!(
                "the hypervisor took {steal:.1}% of CPU time (steal) during step {}; figures may be low and noisy. Run on an idle host or use --repeat 3 to see the noise",
                step_number(step.index)
            ),
            step: Some(step.index),
        });
    }
    let spread = step.summary.headline.spread;
    if step.trials.len() > 1 && spread > SPREAD_WARN {
        out.push(Warning {
            code: "repeat_spread".into(),
            message: format!(
                "repeats of step {} differ by {:.0}% (max-min over mean); the machine looks noisy. Close other work, lengthen --duration, or add --repeat",
                step_number(step.index),
                spread * 100.0
            ),
            step: Some(step.index),
        });
    }
    // Open loop: the offered rate is the experiment; a step that did not reach it measured
    // something else (a client or server that could not keep up).
    let short = step
        .trials
        .iter()
        .filter_map(|t| {
            let s = t.schedule.as_ref()?;
            let secs = (t.elapsed_ns as f64 / 1e9).max(1e-9);
            let started = (t.ops + t.errors) as f64;
            let achieved = started / secs;
            // A Poisson schedule's count in the phase is itself random: a shortfall within
            // three standard deviations of the count asked (56 starts asked, 51 made) is the
            // schedule's own noise, not a system that could not keep up.
            let expected = s.target_ops_per_sec * secs;
            let beyond_noise = expected - started > 3.0 * expected.sqrt();
            (s.target_ops_per_sec > 0.0
                && achieved < RATE_SHORT * s.target_ops_per_sec
                && beyond_noise)
                .then_some((achieved, s.target_ops_per_sec))
        })
        .next();
    if let Some((achieved, target)) = short {
        out.push(Warning {
            code: "rate_not_reached".into(),
            message: format!(
                "step {} completed {achieved:.0} ops/s of the {target:.0} offered ({:.1}%): the system (or perflab) could not keep up, so response times describe an overload. Lower the load (--rate; mail's --users), or look at the late and missed starts",
                step_number(step.index),
                achieved / target * 100.0
            ),
            step: Some(step.index),
        });
    }
    for t in step.trials.iter().take(1) {
        for g in t.groups.iter().filter(|g| g.by == "rank" && g.straggler) {
            out.push(Warning {
                code: "straggler_rank".into(),
                message: format!(
                    "step {}: {} drove {:.0} ops/s, under {:.0}% of the median rank's; that host (or its network) held the run back. See the per-rank figures ('perflab show')",
                    step_number(step.index),
                    g.label,
                    g.ops_per_sec,
                    crate::cluster::merge::STRAGGLER_SHARE * 100.0
                ),
                step: Some(step.index),
            });
        }
    }
    if step.summary.errors > 0 {
        let sample = step
            .trials
            .iter()
            .flat_map(|t| &t.error_samples)
            .next()
            .cloned()
            .unwrap_or_default();
        // "(2 timeout, 1 reset)" when the ops were not all of one kind left unsorted.
        let kinds = match &step.summary.errors_by_kind {
            k if k.is_empty() || k.keys().eq(["other"]) => String::new(),
            k => format!(" ({})", crate::record::errors::describe(k)),
        };
        out.push(Warning {
            code: "errors".into(),
            message: format!(
                "step {} had {} failed ops{kinds}, e.g. {sample}",
                step_number(step.index),
                step.summary.errors
            ),
            step: Some(step.index),
        });
    }
    out
}

/// The power meter of the run, disclosed in the record: the source chosen, or why there is
/// none (said once, and only recorded unless the user asked for power).
fn open_meter(
    spec: &RunSpec,
    record: &mut RunRecord,
    observer: &dyn Observer,
) -> Result<Option<PowerMeter>, RunError> {
    let sys = std::path::Path::new("/sys");
    let meter = PowerMeter::open(sys, spec.power_cmd.as_deref(), spec.interval)
        .map_err(|e| RunError::Power(e.to_string()))?;
    record.power = Some(match &meter {
        Some(m) => PowerDisclosure {
            method: Some(m.method().clone()),
            note: m.method().note.clone(),
        },
        None => PowerDisclosure {
            method: None,
            note: NO_POWER.into(),
        },
    });
    if let Some(m) = &meter
        && !m.method().wall_power
    {
        observer.note(&format!("power: {}", m.method().note));
    }
    Ok(meter)
}

/// Why a record has no watts.
pub const NO_POWER: &str = "no power source is readable here (no RAPL powercap zone, hwmon power sensor, IPMI DCMI, or --power-cmd): no watts are reported";

/// Watches the machine briefly before a run: other work on the CPUs distorts every figure.
fn busy_machine() -> Option<Warning> {
    let before = crate::env::CpuTimes::sample()?;
    std::thread::sleep(BUSY_PROBE);
    let usage = crate::env::CpuTimes::sample()?.usage_since(&before);
    (usage.busy_pct > BUSY_WARN_PCT).then(|| Warning {
        code: "busy_machine".into(),
        message: format!(
            "other work used {:.0}% of the CPUs just before the run; figures will be low and noisy. Stop it (see 'top'), or use --repeat 3 to see the noise",
            usage.busy_pct
        ),
        step: None,
    })
}

/// Under MPI, the steps whose workers are fewer than the ranks that drive them: the ranks
/// past the workers sit those steps out, and the run does fewer workers' work than ranks
/// suggest. Said once, in the output and the record.
fn idle_ranks(
    spec: &RunSpec,
    workload: &dyn crate::workload::Workload,
    points: &[crate::vocab::StepPoint],
) -> Option<Warning> {
    let active = spec.active_ranks.as_ref().filter(|_| !spec.per_rank)?;
    let short: Vec<(u64, u64)> = points
        .iter()
        .map(|p| {
            let workers = workload
                .fixed_work(p)
                .map_or(spec.threads.at(p), |w| w as u64);
            (workers, active.at(p))
        })
        .filter(|(w, a)| w < a)
        .collect();
    let &(workers, ranks) = short.first()?;
    let idle = ranks - workers;
    Some(Warning {
        code: "idle_ranks".into(),
        message: format!(
            "{} of {} steps have fewer workers than ranks (e.g. {workers} over {ranks} ranks): {idle} rank{} sit{} such a step out, and the run does {workers} worker{}'s work, not {ranks}; give --threads {ranks} or more, or --rate-scope rank for --threads on every rank",
            short.len(),
            points.len(),
            if idle == 1 { "" } else { "s" },
            if idle == 1 { "s" } else { "" },
            if workers == 1 { "" } else { "s" },
        ),
        step: None,
    })
}
