//! One trial of one step: start the workers, move them through warmup and measure, merge what
//! they recorded into a [`Trial`].

use super::interrupt::is_interrupted;
use super::observer::Observer;
use super::pacer::Pacer;
use super::worker::{self, MEASURE, STOP, Shared, WARMUP, WorkerPlan, WorkerResult};
use crate::engine::sys::process_cpu_time;
use crate::env::CpuTimes;
use crate::env::disk::{DiskCounters, read_counters};
use crate::record::histogram::{LatencyHistogram, encode, new_histogram, summarize};
use crate::record::recorder::{LATE_THRESHOLD, Lag, WorkerTotals};
use crate::record::series::SeriesBuilder;
use crate::record::timestamp::now_rfc3339;
use crate::record::{DeviceReading, GroupResult, Resources, ScheduleSummary, Trial};
use crate::spec::{LoadSpec, RateScope, RunSpec, StepPoint, StopSpec};
use crate::workload::{Figures, GroupTotals, Workload};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// Why a trial produced no result.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Setup(String),
}

/// How often the coordinator wakes to update progress and check for the end of a phase.
const TICK: Duration = Duration::from_millis(100);

pub fn run_trial(
    spec: &RunSpec,
    workload: &dyn Workload,
    point: &StepPoint,
    repeat: u32,
    observer: &dyn Observer,
) -> Result<Trial, TrialError> {
    let workers = spec.threads.at(point).max(1) as usize;
    let seed = spec
        .seed
        .wrapping_add(u64::from(repeat).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let factory = workload
        .sessions(point, seed)
        .map_err(|e| TrialError::Setup(e.0))?;
    let quotas = quotas(spec.stop, workers);
    let origin = Instant::now();
    let (target_rate, open) = match &spec.load {
        LoadSpec::Open { rate, scope, .. } => {
            let r = rate.at(point);
            (
                if *scope == RateScope::Worker {
                    r * workers as f64
                } else {
                    r
                },
                true,
            )
        }
        LoadSpec::Closed { .. } => (0.0, false),
    };
    let shared = Shared::new(workers);
    let (tx, rx) = channel();
    let started_at = now_rfc3339();

    let device_names = workload.devices();
    let (results, measured, cpu, process_cpu, devices, server_rates, series) =
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|index| {
                    let pacer = match &spec.load {
                        LoadSpec::Closed { think } => Pacer::closed(*think),
                        LoadSpec::Open { arrival, .. } => Pacer::open(
                            target_rate / workers as f64,
                            *arrival,
                            seed,
                            origin,
                            index,
                            workers,
                        ),
                    };
                    let plan = WorkerPlan {
                        index,
                        workers,
                        factory: factory.clone(),
                        pacer,
                        quota: quotas[index],
                        interval: spec.interval,
                    };
                    let (tx, shared) = (tx.clone(), &shared);
                    std::thread::Builder::new()
                        .name(format!("perflab-worker-{index}"))
                        .spawn_scoped(scope, move || worker::run(plan, shared, tx))
                        .expect("the OS refused to start a worker thread")
                })
                .collect();
            drop(tx);
            shared.ready.wait();
            let mut series = SeriesBuilder::new(spec.interval, open);
            // A session that did not open ends the trial before any op runs.
            let setup_ok = !shared.setup_failed.load(Ordering::SeqCst);
            if setup_ok {
                observer.phase("warmup", Some(spec.warmup));
                shared.phase.store(WARMUP, Ordering::SeqCst);
            }
            let warm_end = Instant::now()
                + if setup_ok {
                    spec.warmup
                } else {
                    Duration::ZERO
                };
            while Instant::now() < warm_end
                && !is_interrupted()
                && shared.done.load(Ordering::SeqCst) < workers
            {
                std::thread::sleep(TICK.min(warm_end.saturating_duration_since(Instant::now())));
            }
            let cpu_before = CpuTimes::sample();
            let process_before = process_cpu_time();
            let disks_before = sample_disks(&device_names);
            let server_before = workload.server_counters();
            let measure_start = Instant::now();
            let _ = shared.measure_start.set(measure_start);
            if setup_ok {
                shared.phase.store(MEASURE, Ordering::SeqCst);
                observer.phase("measure", stop_duration(spec.stop));
            }
            loop {
                if !setup_ok {
                    break;
                }
                let elapsed = measure_start.elapsed();
                let finished = shared.done.load(Ordering::SeqCst) == workers;
                let time_up = matches!(spec.stop, StopSpec::Duration(d) if elapsed >= d);
                if finished || time_up || is_interrupted() {
                    break;
                }
                let wait = match spec.stop {
                    StopSpec::Duration(d) => TICK.min(d.saturating_sub(elapsed)),
                    StopSpec::Ops(_) => TICK,
                };
                match rx.recv_timeout(wait) {
                    Ok(report) => series.add(report),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                observer.progress(elapsed, series.total.ops, series.latest());
            }
            shared.phase.store(STOP, Ordering::SeqCst);
            // Workers may still complete the ops in flight: wait for them before reading the
            // counters, so the device and the process account for the same ops.
            // Workers complete the ops in flight first; wait for that (not for work after the
            // measure phase, such as a verify pass) before reading clocks and counters, so the
            // device and the process account for exactly the measured ops.
            while shared.measured.load(Ordering::SeqCst) < workers
                && !handles.iter().all(|h| h.is_finished())
            {
                std::thread::sleep(Duration::from_micros(200));
            }
            let measured = measure_start.elapsed();
            let cpu = match (cpu_before, CpuTimes::sample()) {
                (Some(a), Some(b)) => b.usage_since(&a),
                _ => Default::default(),
            };
            let process_cpu = Some(process_cpu_time().saturating_sub(process_before));
            let server_rates: Vec<(String, f64)> = workload
                .server_counters()
                .into_iter()
                .filter_map(|(name, after)| {
                    let before = server_before.iter().find(|(n, _)| *n == name)?.1;
                    let rate = (after - before).max(0.0) / measured.as_secs_f64().max(1e-9);
                    Some((format!("{name}_per_sec"), rate))
                })
                .collect();
            let devices: Vec<DeviceReading> = disks_before
                .iter()
                .zip(sample_disks(&device_names))
                .filter_map(|((name, before), (_, after))| {
                    Some(DeviceReading {
                        name: name.clone(),
                        activity: after?.activity_since(before.as_ref()?, measured),
                    })
                })
                .collect();
            let results: Vec<WorkerResult> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(crate::workload::OpError("worker panicked".into())))
                })
                .collect();
            for report in rx.try_iter() {
                series.add(report);
            }
            (
                results,
                measured,
                cpu,
                process_cpu,
                devices,
                server_rates,
                series,
            )
        });

    let mut totals = Vec::with_capacity(workers);
    let mut figures = Vec::with_capacity(workers);
    let mut groups = Vec::new();
    for r in results {
        let out = r.map_err(|e| TrialError::Setup(e.0))?;
        totals.push(out.totals);
        figures.push(out.figures);
        groups.extend(out.groups);
    }
    if is_interrupted() {
        return Err(TrialError::Interrupted);
    }

    let counts = series.total;
    let think = matches!(&spec.load, LoadSpec::Closed { think } if !think.is_zero());
    // A closed loop without think time has every worker busy from its first op to its last,
    // so each worker's own window measures its rate exactly, to op boundaries. Otherwise the
    // gaps belong to the measurement and the phase length is the divisor.
    let per_window = !open && !think && totals.iter().all(|t| !t.window.is_zero());
    let rate = |f: fn(&WorkerTotals) -> u64, total: u64| -> f64 {
        if per_window {
            totals
                .iter()
                .map(|t| f(t) as f64 / t.window.as_secs_f64())
                .sum()
        } else {
            total as f64 / measured.as_secs_f64().max(1e-9)
        }
    };
    let ops_per_sec = rate(|t| t.counts.ops, counts.ops);
    let items_per_sec = rate(|t| t.counts.items, counts.items);
    let bytes_per_sec = rate(|t| t.counts.bytes, counts.bytes);

    let mut error_samples: Vec<String> = Vec::new();
    for m in totals.iter().flat_map(|t| &t.error_samples) {
        if error_samples.len() < 5 && !error_samples.contains(m) {
            error_samples.push(m.clone());
        }
    }
    let schedule = open.then(|| {
        let lag = totals.iter().fold(Lag::default(), |mut a, t| {
            a.late += t.lag.late;
            a.sum_ns += t.lag.sum_ns;
            a.max_ns = a.max_ns.max(t.lag.max_ns);
            a.count += t.lag.count;
            a
        });
        ScheduleSummary {
            target_ops_per_sec: target_rate,
            late_starts: lag.late,
            late_threshold_ns: LATE_THRESHOLD.as_nanos() as u64,
            mean_lag_ns: if lag.count == 0 {
                0.0
            } else {
                lag.sum_ns as f64 / lag.count as f64
            },
            max_lag_ns: lag.max_ns,
        }
    });
    let all_ops = counts.ops + counts.errors;
    let mut trial = Trial {
        repeat,
        started_at,
        workers: workers as u64,
        elapsed_ns: measured.as_nanos() as u64,
        ops: counts.ops,
        items: counts.items,
        bytes: counts.bytes,
        errors: counts.errors,
        ops_per_sec,
        items_per_sec,
        bytes_per_sec,
        latency: summarize(&series.response),
        service_latency: series.service.as_ref().map(summarize),
        schedule,
        figures: mean_figures(&figures)
            .into_iter()
            .chain(server_rates)
            .collect(),
        resources: Resources {
            cpu,
            process_cpu_ns_per_op: process_cpu
                .filter(|_| all_ops > 0)
                .map(|d| d.as_nanos() as f64 / all_ops as f64),
        },
        error_samples,
        latency_hdr: encode(&series.response),
        service_latency_hdr: series.service.as_ref().map(encode),
        series: series.points(measured),
        groups: merge_groups(groups, measured),
        devices,
    };
    workload.derive(point, &mut trial);
    Ok(trial)
}

/// Counters of each named device; `None` where a device cannot be read.
fn sample_disks(names: &[String]) -> Vec<(String, Option<DiskCounters>)> {
    names
        .iter()
        .map(|n| (n.clone(), read_counters(n)))
        .collect()
}

/// Adds up the workers' groups with the same `by` and `key`, in the order first seen.
fn merge_groups(groups: Vec<GroupTotals>, measured: Duration) -> Vec<GroupResult> {
    let mut merged: Vec<(GroupTotals, LatencyHistogram)> = Vec::new();
    for g in groups {
        match merged
            .iter_mut()
            .find(|(m, _)| m.by == g.by && m.key == g.key)
        {
            Some((m, h)) => {
                m.ops += g.ops;
                m.bytes += g.bytes;
                m.errors += g.errors;
                // Same bounds and precision everywhere, so adding cannot fail.
                let _ = h.add(&g.latency);
            }
            None => {
                let mut h = new_histogram();
                let _ = h.add(&g.latency);
                merged.push((g, h));
            }
        }
    }
    let secs = measured.as_secs_f64().max(1e-9);
    merged
        .into_iter()
        .map(|(g, h)| GroupResult {
            by: g.by.to_string(),
            key: g.key,
            label: g.label,
            ops: g.ops,
            bytes: g.bytes,
            errors: g.errors,
            ops_per_sec: g.ops as f64 / secs,
            bytes_per_sec: g.bytes as f64 / secs,
            latency: summarize(&h),
            straggler: false,
        })
        .collect()
}

/// Splits `--ops` over workers; the first workers take the remainder.
fn quotas(stop: StopSpec, workers: usize) -> Vec<Option<u64>> {
    (0..workers)
        .map(|i| match stop {
            StopSpec::Ops(n) => {
                Some(n / workers as u64 + u64::from((i as u64) < n % workers as u64))
            }
            StopSpec::Duration(_) => None,
        })
        .collect()
}

fn stop_duration(stop: StopSpec) -> Option<Duration> {
    match stop {
        StopSpec::Duration(d) => Some(d),
        StopSpec::Ops(_) => None,
    }
}

/// Each figure's mean over the workers that reported it.
fn mean_figures(per_worker: &[Figures]) -> Figures {
    let mut sums: Figures = Figures::new();
    let mut counts = std::collections::BTreeMap::<String, f64>::new();
    for f in per_worker {
        for (k, v) in f {
            *sums.entry(k.clone()).or_default() += v;
            *counts.entry(k.clone()).or_default() += 1.0;
        }
    }
    for (k, v) in sums.iter_mut() {
        *v /= counts[k];
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_quotas_add_up() {
        let q = quotas(StopSpec::Ops(10), 3);
        assert_eq!(q, vec![Some(4), Some(3), Some(3)]);
        assert_eq!(
            quotas(StopSpec::Duration(Duration::from_secs(1)), 2),
            vec![None, None]
        );
    }

    #[test]
    fn figures_average_over_workers() {
        let a = Figures::from([("alloc_ns".to_string(), 10.0)]);
        let b = Figures::from([("alloc_ns".to_string(), 30.0), ("x".to_string(), 1.0)]);
        let m = mean_figures(&[a, b]);
        assert_eq!(m["alloc_ns"], 20.0);
        assert_eq!(m["x"], 1.0);
    }
}
