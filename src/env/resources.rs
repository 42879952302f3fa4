//! What the machine did while a step was measured: the sampler's figures as the record keeps
//! them. Defined here, beside the sampler that makes them; the record holds them.
//!
//! The sampler ([`super::sampler`]) reads the kernel's counters at the start of the measure
//! phase, at every interval boundary of the step's time series and at its end. Each pair of
//! readings becomes a [`ResourcePoint`] (rates over the interval, gauges at its end) on the
//! same clock as the throughput and latency series; the first and last readings give the
//! phase's [`ResourceSummary`]. Figures that cannot be read are absent, never guessed.

use super::disk::DeviceReading;
pub use super::usage::CpuShares;
use serde::{Deserialize, Serialize};

/// One CPU's shares, kept compact: `[user, system, iowait, irq, softirq, steal, idle]` in
/// percent of that CPU, rounded to 0.1 (the kernel counts in 10 ms ticks, 1% of a second).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PerCpu(pub CpuShares);

impl PerCpu {
    /// Rounded as the record keeps it, so a record in memory and the same record read back
    /// from the archive render alike.
    pub fn new(shares: CpuShares) -> PerCpu {
        PerCpu(CpuShares::from_array(shares.to_array().map(round1)))
    }
}

impl Serialize for PerCpu {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.to_array().map(round1).serialize(s)
    }
}

impl<'de> Deserialize<'de> for PerCpu {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <[f64; 7]>::deserialize(d).map(|a| PerCpu(CpuShares::from_array(a)))
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// One network interface over an interval or a phase (`/proc/net/dev`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct NetRates {
    pub name: String,
    pub rx_bytes_per_sec: f64,
    pub tx_bytes_per_sec: f64,
    pub rx_packets_per_sec: f64,
    pub tx_packets_per_sec: f64,
}

/// The machine over one interval of the measure phase: rates over the interval, gauges
/// (`procs_*`, `mem_*`) at its end.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ResourcePoint {
    /// From the start of the measure phase, as the throughput series' `start_ns`; the
    /// readings' own times, so within a millisecond of the series' boundaries.
    pub start_ns: u64,
    pub duration_ns: u64,
    pub cpu: CpuShares,
    /// Each logical CPU, in the kernel's order (`cpu0`, `cpu1` ...).
    pub per_cpu: Vec<PerCpu>,
    pub context_switches_per_sec: f64,
    pub interrupts_per_sec: f64,
    /// Tasks runnable and tasks blocked on I/O, at the interval's end.
    pub procs_running: u64,
    pub procs_blocked: u64,
    /// Memory in use (`MemTotal - MemAvailable`, as `free` reports it), page cache and
    /// buffers, dirty and under writeback, at the interval's end.
    pub mem_used_bytes: u64,
    pub mem_cached_bytes: u64,
    pub mem_dirty_bytes: u64,
    pub mem_writeback_bytes: u64,
    pub page_faults_per_sec: f64,
    pub major_faults_per_sec: f64,
    /// Pages swapped in and out per second.
    pub swap_in_per_sec: f64,
    pub swap_out_per_sec: f64,
    /// Interfaces that moved any packet during the phase.
    pub net: Vec<NetRates>,
    /// Block devices that did any I/O during the phase, and the workload's own.
    pub disks: Vec<DeviceReading>,
    /// perflab's own CPU time, in percent of one CPU.
    pub process_cpu_pct: f64,
    /// Mean power over the interval, where a source is readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
}

/// The machine over a whole measure phase, from its first and last readings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ResourceSummary {
    pub cpu: CpuShares,
    /// Logical CPUs counted in `/proc/stat`.
    pub cpus: u64,
    /// The CPU with the most busy time over the phase, and its busy share.
    pub busiest_cpu: u64,
    pub busiest_cpu_pct: f64,
    pub context_switches_per_sec: f64,
    pub interrupts_per_sec: f64,
    /// Mean over the intervals' end readings.
    pub procs_running: f64,
    /// The highest reading of the phase.
    pub mem_used_bytes: u64,
    pub mem_dirty_bytes: u64,
    pub page_faults_per_sec: f64,
    pub major_faults_per_sec: f64,
    pub swap_in_per_sec: f64,
    pub swap_out_per_sec: f64,
    pub net: Vec<NetRates>,
    pub disks: Vec<DeviceReading>,
    pub process_cpu_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// What limited the step, in one line where the evidence is plain.
    pub limit: String,
    /// The sampler's own cost: its CPU time in percent of one CPU over the phase, and how
    /// many readings it took.
    pub sampler_cpu_pct: f64,
    pub samples: u64,
}

/// CPUs busier than this share (all together) bound the step.
const CPU_BOUND_PCT: f64 = 90.0;
/// A device with I/O in flight this share of the time bounds the step (for a device that
/// serves one request at a time; a deep NVMe queue can be 100% "utilised" and still have room,
/// which is why the line names the figure rather than claiming the device is full).
/// A device this busy with under [`SHALLOW_QUEUE`] I/Os queued is waited on one I/O at a
/// time: its latency is the limit.
const LATENCY_BOUND: f64 = 0.6;

/// About one I/O outstanding on average.
const SHALLOW_QUEUE: f64 = 1.5;

const DEVICE_BOUND: f64 = 0.9;
/// One CPU this busy while the rest are not: a single thread or one CPU's interrupts.
const ONE_CPU_PCT: f64 = 95.0;
/// An open loop that served this share of its offered rate was limited by the offer.
const OFFER_MET: f64 = 0.98;
/// Phases shorter than this are not judged: the kernel counts CPU time in ticks of 10 ms
/// (USER_HZ 100), so a phase of a few milliseconds holds a tick or two per CPU, and its
/// shares read "0% busy" beside "CPU-bound" for the same work (IOzone's small files).
pub const SHORTEST_JUDGED: std::time::Duration = std::time::Duration::from_millis(100);

impl ResourceSummary {
    /// [`ResourceSummary::judge`] over a phase of `phase`, or, for a phase shorter than
    /// [`SHORTEST_JUDGED`], that it was too short to tell.
    pub fn judge_over(&self, phase: std::time::Duration, offered: Option<(f64, f64)>) -> String {
        if phase < SHORTEST_JUDGED {
            return format!(
                "too short to tell what limited it ({:.1} ms; the kernel counts CPU time in 10 ms ticks)",
                phase.as_secs_f64() * 1e3
            );
        }
        self.judge(offered)
    }

    /// What limited the step, in one line, where the evidence is plain; otherwise what was
    /// not the limit, and where to look. `offered`: an open loop's target and achieved
    /// rates (ops/s), since a step that served all it was offered was limited by the offer.
    pub fn judge(&self, offered: Option<(f64, f64)>) -> String {
        let cpus = self.cpus.max(1);
        let busy = self.cpu.busy();
        let busiest_disk = self
            .disks
            .iter()
            .max_by(|a, b| a.activity.utilisation.total_cmp(&b.activity.utilisation));
        let steal = if self.cpu.steal >= 5.0 {
            format!(" ({:.0}% of it stolen by the hypervisor)", self.cpu.steal)
        } else {
            String::new()
        };
        if busy >= CPU_BOUND_PCT {
            let n = busy / 100.0 * cpus as f64;
            let n = if (n - n.round()).abs() < 0.05 {
                format!("{}", n.round())
            } else {
                format!("{n:.1}")
            };
            return format!("CPU-bound: {n} of {cpus} CPUs busy{steal}");
        }
        if let Some(d) = busiest_disk.filter(|d| d.activity.utilisation >= DEVICE_BOUND) {
            return format!(
                "device {} {:.0}% utilized (queue {:.1})",
                d.name,
                d.activity.utilisation * 100.0,
                d.activity.avg_queue
            );
        }
        if cpus > 1 && self.busiest_cpu_pct >= ONE_CPU_PCT {
            return format!(
                "one CPU saturated: cpu{} {:.0}% busy while all CPUs are {busy:.0}% busy (a single thread, or one CPU's interrupts)",
                self.busiest_cpu, self.busiest_cpu_pct
            );
        }
        // A device busy most of the time with about one I/O outstanding waits on its own
        // latency: each I/O starts when the last ends (a queue depth of 1, a log's fsyncs).
        if let Some(d) = busiest_disk.filter(|d| {
            d.activity.utilisation >= LATENCY_BOUND && d.activity.avg_queue < SHALLOW_QUEUE
        }) {
            return format!(
                "the device's latency: {} {:.0}% busy with {:.2} I/Os queued on average, about one at a time; more in flight would show its throughput{steal}",
                d.name,
                d.activity.utilisation * 100.0,
                d.activity.avg_queue
            );
        }
        let disk = busiest_disk
            .map(|d| {
                format!(
                    " nor a device ({} {:.0}%)",
                    d.name,
                    d.activity.utilisation * 100.0
                )
            })
            .unwrap_or_default();
        if offered.is_some_and(|(t, _)| t == 0.0) {
            return format!("active idle: no op offered; CPU {busy:.1}% of {cpus} busy{steal}");
        }
        if let Some((target, achieved)) = offered.filter(|(t, a)| *t > 0.0 && *a >= OFFER_MET * t) {
            return format!(
                "the offered load: {achieved:.0} of {target:.0} ops/s asked were served; neither CPU ({busy:.0}% of {cpus}){disk} is saturated{steal}"
            );
        }
        format!(
            "neither CPU ({busy:.0}% of {cpus}){disk} is saturated: look at the server, the network, locks or the offered load{steal}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::disk::DiskActivity;

    #[test]
    fn a_phase_of_a_few_ticks_is_not_judged() {
        let s = summary(100.0, 2, 100.0, 0.0);
        let short = s.judge_over(std::time::Duration::from_millis(4), None);
        assert!(short.starts_with("too short to tell"), "{short}");
        assert!(short.contains("4.0 ms"), "{short}");
        let long = s.judge_over(std::time::Duration::from_secs(1), None);
        assert!(long.starts_with("CPU-bound"), "{long}");
    }

    fn summary(busy: f64, cpus: u64, busiest: f64, util: f64) -> ResourceSummary {
        ResourceSummary {
            cpu: CpuShares {
                user: busy,
                idle: 100.0 - busy,
                ..Default::default()
            },
            cpus,
            busiest_cpu: 1,
            busiest_cpu_pct: busiest,
            disks: vec![DeviceReading {
                name: "vda".into(),
                activity: DiskActivity {
                    utilisation: util,
                    avg_queue: 1.0,
                    ..Default::default()
                },
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_limit_in_one_line() {
        assert_eq!(
            summary(99.0, 2, 100.0, 0.1).judge(None),
            "CPU-bound: 2 of 2 CPUs busy"
        );
        assert_eq!(
            summary(92.0, 4, 100.0, 0.1).judge(None),
            "CPU-bound: 3.7 of 4 CPUs busy"
        );
        assert_eq!(
            summary(30.0, 2, 40.0, 0.99).judge(None),
            "device vda 99% utilized (queue 1.0)"
        );
        assert!(
            summary(52.0, 2, 99.0, 0.1)
                .judge(None)
                .starts_with("one CPU saturated: cpu1 99%")
        );
        assert_eq!(
            summary(20.0, 2, 30.0, 0.05).judge(Some((1000.0, 995.0))),
            "the offered load: 995 of 1000 ops/s asked were served; neither CPU (20% of 2) nor a device (vda 5%) is saturated"
        );
        assert!(
            summary(0.5, 2, 1.0, 0.0)
                .judge(Some((0.0, 0.0)))
                .starts_with("active idle: no op offered; CPU 0.5% of 2 busy")
        );
        assert!(
            summary(20.0, 2, 30.0, 0.05)
                .judge(Some((1000.0, 500.0)))
                .starts_with("neither CPU")
        );
        assert_eq!(
            summary(20.0, 2, 30.0, 0.05).judge(None),
            "neither CPU (20% of 2) nor a device (vda 5%) is saturated: look at the server, the network, locks or the offered load"
        );
        // Queue depth 1, the disk busy most of the time: its latency, not the network.
        assert!(
            summary(20.0, 2, 30.0, 0.83)
                .judge(None)
                .starts_with("the device's latency: vda 83% busy with 1.00 I/Os queued")
        );
    }

    #[test]
    fn per_cpu_entries_are_compact_arrays() {
        let p = PerCpu(CpuShares {
            user: 12.345,
            idle: 87.655,
            ..Default::default()
        });
        let text = serde_json::to_string(&p).unwrap_or_default();
        assert_eq!(text, "[12.3,0.0,0.0,0.0,0.0,0.0,87.7]");
        let back: PerCpu = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back.0.user, 12.3);
    }
}
