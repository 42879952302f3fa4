//! The system sampler: one reading of the machine's counters at the start of a measure phase,
//! one at every interval boundary of the step's time series, one at its end.
//!
//! A reading is `/proc/stat` (CPU time in total and per CPU, context switches, interrupts,
//! runnable and blocked tasks), `/proc/meminfo`, `/proc/vmstat` (faults, swap),
//! `/proc/net/dev`, `/proc/diskstats` (the workload's devices and every whole disk), perflab's
//! own CPU time (`CLOCK_PROCESS_CPUTIME_ID`, nanoseconds) and, where one was found, the power
//! meter's energy. Two readings make a [`ResourcePoint`]; the first and last make the
//! phase's [`ResourceSummary`] and the per-step figures perflab has always recorded (CPU busy,
//! steal and iowait, perflab's CPU per op, the devices' activity), so there is one path from
//! the kernel's counters to every resource figure of a record.
//!
//! The runner's coordinator thread, which otherwise sleeps between progress updates, calls
//! [`Sampler::poll`] when a boundary is due: no extra thread, no locking, and the readings
//! are taken on the same `Instant` clock as the workers' intervals. The sampler times itself
//! (`CLOCK_THREAD_CPUTIME_ID` around each reading) and records its cost in every summary.

use super::disk::DeviceReading;
use super::disk::{DiskCounters, parse_diskstats_all};
use super::kernel::{KernelStat, MemInfo, NetCounters, VmCounters, parse_net_dev_into};
use super::power::PowerMeter;
use super::resources::{NetRates, PerCpu, ResourcePoint, ResourceSummary};
use super::usage::CpuUsage;
use crate::engine::sys::{process_cpu_time, thread_cpu_time};
use std::time::{Duration, Instant};

/// Block devices that are never a workload's disk: their I/O is memory traffic.
const NOT_DISKS: [&str; 3] = ["loop", "ram", "zram"];

/// The counters at one moment.
#[derive(Debug, Clone, Default)]
struct Reading {
    at: Option<Instant>,
    stat: KernelStat,
    mem: MemInfo,
    vm: VmCounters,
    net: Vec<NetCounters>,
    disks: Vec<(String, DiskCounters)>,
    process_cpu: Duration,
    energy_j: Option<f64>,
}

/// What the sampler saw over a measure phase.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// One per interval (none with the sampler off).
    pub points: Vec<ResourcePoint>,
    /// The whole phase (none with the sampler off).
    pub summary: Option<ResourceSummary>,
    /// All CPUs over the phase, as recorded before the sampler existed.
    pub usage: CpuUsage,
    /// perflab's CPU time over the phase.
    pub process_cpu: Duration,
    /// The workload's devices over the phase.
    pub devices: Vec<DeviceReading>,
}

/// Reads the machine during one measure phase.
pub struct Sampler<'m> {
    /// Off: only the first and last readings, for the per-step figures.
    detailed: bool,
    interval: Duration,
    origin: Instant,
    /// Index of the next interval boundary.
    next: u32,
    /// The workload's devices, always kept; whole disks are kept where they did I/O.
    devices: Vec<String>,
    disks: Vec<String>,
    meter: Option<&'m mut PowerMeter>,
    buf: String,
    first: Reading,
    prev: Reading,
    points: Vec<ResourcePoint>,
    cost: Duration,
    samples: u64,
}

impl<'m> Sampler<'m> {
    /// Takes the first reading now; the measure phase starts when it is taken
    /// ([`Sampler::origin`]), and the boundaries fall every `interval` from there. With
    /// `detailed` false it reads only CPU times, perflab's CPU and the workload's devices,
    /// and only at the start and the end.
    pub fn start(
        detailed: bool,
        interval: Duration,
        devices: &[String],
        meter: Option<&'m mut PowerMeter>,
    ) -> Sampler<'m> {
        let mut disks: Vec<String> = devices.to_vec();
        if detailed {
            for name in whole_disks() {
                if !disks.contains(&name) {
                    disks.push(name);
                }
            }
        }
        let mut s = Sampler {
            detailed,
            interval: interval.max(Duration::from_millis(1)),
            origin: Instant::now(),
            next: 1,
            devices: devices.to_vec(),
            disks,
            meter: if detailed { meter } else { None },
            buf: String::with_capacity(16 * 1024),
            first: Reading::default(),
            prev: Reading::default(),
            points: Vec::new(),
            cost: Duration::ZERO,
            samples: 0,
        };
        s.first = s.read();
        s.prev = s.first.clone();
        s.origin = Instant::now();
        s
    }

    /// The start of the measure phase: just after the first reading unless set.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Moves the start of the measure phase (and every boundary) to `origin`, at or after the
    /// first reading: the caller read something else in between.
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = origin;
    }

    /// When the next reading is due.
    pub fn due(&self) -> Instant {
        self.origin + self.interval * self.next
    }

    /// The readings' points so far, oldest first (for live outputs).
    pub fn points(&self) -> &[ResourcePoint] {
        &self.points
    }

    /// Takes a reading if a boundary has passed.
    pub fn poll(&mut self, now: Instant) {
        if now < self.due() {
            return;
        }
        // A coordinator held up for several intervals makes one long point, not a burst.
        let since = now.saturating_duration_since(self.origin).as_nanos();
        let next = (since / self.interval.as_nanos().max(1)) as u32 + 1;
        if !self.detailed {
            // Nothing to read, but the next boundary still moves on: a due time left in
            // the past would have the coordinator, which waits until it, spin.
            self.next = next;
            return;
        }
        let reading = self.read();
        let point = self.point(&self.prev, &reading);
        self.points.push(point);
        self.prev = reading;
        self.next = next;
    }

    /// The last reading (the phase is over), and everything made of the readings.
    pub fn finish(mut self) -> Sampled {
        let last = self.read();
        let phase = last.elapsed_since(&self.first);
        let usage = match (self.first.stat.total, last.stat.total) {
            (a, b) if a != Default::default() => b.usage_since(&a),
            _ => CpuUsage::default(),
        };
        let devices = self
            .devices
            .iter()
            .filter_map(|name| {
                let (a, b) = (find(&self.first.disks, name)?, find(&last.disks, name)?);
                Some(DeviceReading {
                    name: name.clone(),
                    activity: b.activity_since(a, phase),
                })
            })
            .collect();
        let process_cpu = last.process_cpu.saturating_sub(self.first.process_cpu);
        if !self.detailed {
            return Sampled {
                usage,
                process_cpu,
                devices,
                ..Default::default()
            };
        }
        // The partial interval at the end, unless the phase ended on a boundary.
        if last.elapsed_since(&self.prev) >= Duration::from_millis(1) || self.points.is_empty() {
            let point = self.point(&self.prev, &last);
            self.points.push(point);
        }
        let mut summary = self.summary(&last);
        self.keep_active(&mut summary);
        Sampled {
            points: self.points,
            summary: Some(summary),
            usage,
            process_cpu,
            devices,
        }
    }

    fn read(&mut self) -> Reading {
        let cpu_before = thread_cpu_time();
        let mut r = Reading {
            at: Some(Instant::now()),
            ..Default::default()
        };
        if self.load("/proc/stat") {
            r.stat.parse_into(&self.buf);
        }
        if self.detailed {
            if self.load("/proc/meminfo") {
                r.mem = MemInfo::parse(&self.buf);
            }
            if self.load("/proc/vmstat") {
                r.vm = VmCounters::parse(&self.buf);
            }
            if self.load("/proc/net/dev") {
                parse_net_dev_into(&self.buf, &mut r.net);
            }
        }
        if !self.disks.is_empty() && self.load("/proc/diskstats") {
            r.disks = parse_diskstats_all(&self.buf)
                .filter(|(name, _)| self.disks.iter().any(|d| d == name))
                .map(|(name, c)| (name.to_string(), c))
                .collect();
        }
        r.energy_j = self.meter.as_mut().and_then(|m| m.energy_j());
        r.process_cpu = process_cpu_time();
        self.cost += thread_cpu_time().saturating_sub(cpu_before);
        self.samples += 1;
        r
    }

    /// Reads a file into the shared buffer; `false` when it cannot be read.
    fn load(&mut self, path: &str) -> bool {
        use std::io::Read;
        self.buf.clear();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_string(&mut self.buf))
            .is_ok()
    }

    fn point(&self, a: &Reading, b: &Reading) -> ResourcePoint {
        let secs = b.elapsed_since(a).as_secs_f64().max(1e-9);
        let rate = |now: u64, then: u64| now.saturating_sub(then) as f64 / secs;
        let per_cpu = b
            .stat
            .per_cpu
            .iter()
            .map(|(n, t)| {
                PerCpu::new(
                    a.stat
                        .per_cpu
                        .iter()
                        .find(|(m, _)| m == n)
                        .map(|(_, was)| t.shares_since(was))
                        .unwrap_or_default(),
                )
            })
            .collect();
        ResourcePoint {
            start_ns: a.offset(self.origin).as_nanos() as u64,
            duration_ns: b.elapsed_since(a).as_nanos() as u64,
            cpu: b.stat.total.shares_since(&a.stat.total),
            per_cpu,
            context_switches_per_sec: rate(b.stat.context_switches, a.stat.context_switches),
            interrupts_per_sec: rate(b.stat.interrupts, a.stat.interrupts),
            procs_running: b.stat.procs_running,
            procs_blocked: b.stat.procs_blocked,
            mem_used_bytes: b.mem.used(),
            mem_cached_bytes: b.mem.buff_cache(),
            mem_dirty_bytes: b.mem.dirty,
            mem_writeback_bytes: b.mem.writeback,
            page_faults_per_sec: rate(b.vm.page_faults, a.vm.page_faults),
            major_faults_per_sec: rate(b.vm.major_faults, a.vm.major_faults),
            swap_in_per_sec: rate(b.vm.swap_in, a.vm.swap_in),
            swap_out_per_sec: rate(b.vm.swap_out, a.vm.swap_out),
            net: net_rates(&a.net, &b.net, secs),
            disks: disk_rates(&a.disks, &b.disks, b.elapsed_since(a)),
            process_cpu_pct: b.process_cpu.saturating_sub(a.process_cpu).as_secs_f64() * 100.0
                / secs,
            watts: watts(a, b, secs),
        }
    }

    fn summary(&self, last: &Reading) -> ResourceSummary {
        let whole = self.point(&self.first, last);
        let busiest = whole
            .per_cpu
            .iter()
            .enumerate()
            .map(|(i, c)| (self.first.stat.per_cpu.get(i).map_or(i as u32, |c| c.0), c))
            .max_by(|a, b| a.1.0.busy().total_cmp(&b.1.0.busy()));
        let n = self.points.len().max(1) as f64;
        let phase = last.elapsed_since(&self.first);
        ResourceSummary {
            cpu: whole.cpu,
            cpus: last.stat.per_cpu.len() as u64,
            busiest_cpu: busiest.map_or(0, |b| u64::from(b.0)),
            busiest_cpu_pct: busiest.map_or(0.0, |b| b.1.0.busy()),
            context_switches_per_sec: whole.context_switches_per_sec,
            interrupts_per_sec: whole.interrupts_per_sec,
            procs_running: self
                .points
                .iter()
                .map(|p| p.procs_running as f64)
                .sum::<f64>()
                / n,
            mem_used_bytes: self
                .points
                .iter()
                .map(|p| p.mem_used_bytes)
                .max()
                .unwrap_or(0),
            mem_dirty_bytes: self
                .points
                .iter()
                .map(|p| p.mem_dirty_bytes)
                .max()
                .unwrap_or(0),
            page_faults_per_sec: whole.page_faults_per_sec,
            major_faults_per_sec: whole.major_faults_per_sec,
            swap_in_per_sec: whole.swap_in_per_sec,
            swap_out_per_sec: whole.swap_out_per_sec,
            net: whole.net,
            disks: whole.disks,
            process_cpu_pct: whole.process_cpu_pct,
            watts: whole.watts,
            energy_j: match (self.first.energy_j, last.energy_j) {
                (Some(a), Some(b)) => Some((b - a).max(0.0)),
                _ => None,
            },
            limit: String::new(),
            sampler_cpu_pct: self.cost.as_secs_f64() * 100.0 / phase.as_secs_f64().max(1e-9),
            samples: self.samples,
        }
    }

    /// Keeps the interfaces and disks that did anything over the phase (and the workload's
    /// devices): a machine with forty idle veth pairs should not fill the record.
    fn keep_active(&mut self, summary: &mut ResourceSummary) {
        let devices = &self.devices;
        summary
            .net
            .retain(|n| n.rx_packets_per_sec + n.tx_packets_per_sec > 0.0);
        summary.disks.retain(|d| {
            devices.contains(&d.name)
                || d.activity.reads_per_sec + d.activity.writes_per_sec + d.activity.flushes_per_sec
                    > 0.0
        });
        let (net, disks): (Vec<_>, Vec<_>) = (
            summary.net.iter().map(|n| n.name.clone()).collect(),
            summary.disks.iter().map(|d| d.name.clone()).collect(),
        );
        for p in &mut self.points {
            p.net.retain(|n| net.contains(&n.name));
            p.disks.retain(|d| disks.contains(&d.name));
        }
    }
}

impl Reading {
    fn elapsed_since(&self, earlier: &Reading) -> Duration {
        match (self.at, earlier.at) {
            (Some(b), Some(a)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        }
    }

    fn offset(&self, origin: Instant) -> Duration {
        self.at
            .map_or(Duration::ZERO, |at| at.saturating_duration_since(origin))
    }
}

fn find<'a>(disks: &'a [(String, DiskCounters)], name: &str) -> Option<&'a DiskCounters> {
    disks.iter().find(|(n, _)| n == name).map(|(_, c)| c)
}

fn net_rates(a: &[NetCounters], b: &[NetCounters], secs: f64) -> Vec<NetRates> {
    b.iter()
        .filter_map(|now| {
            let was = a.iter().find(|c| c.name == now.name)?;
            let rate = |n: u64, t: u64| n.saturating_sub(t) as f64 / secs;
            Some(NetRates {
                name: now.name.clone(),
                rx_bytes_per_sec: rate(now.rx_bytes, was.rx_bytes),
                tx_bytes_per_sec: rate(now.tx_bytes, was.tx_bytes),
                rx_packets_per_sec: rate(now.rx_packets, was.rx_packets),
                tx_packets_per_sec: rate(now.tx_packets, was.tx_packets),
            })
        })
        .collect()
}

fn disk_rates(
    a: &[(String, DiskCounters)],
    b: &[(String, DiskCounters)],
    elapsed: Duration,
) -> Vec<DeviceReading> {
    b.iter()
        .filter_map(|(name, now)| {
            Some(DeviceReading {
                name: name.clone(),
                activity: now.activity_since(find(a, name)?, elapsed),
            })
        })
        .collect()
}

fn watts(a: &Reading, b: &Reading, secs: f64) -> Option<f64> {
    Some((b.energy_j? - a.energy_j?).max(0.0) / secs)
}

/// The machine's whole disks (`/sys/block`), less loop and RAM devices.
fn whole_disks() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !NOT_DISKS.iter().any(|p| n.starts_with(p)))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--resources off` (a sampler that reads nothing) had its next boundary stay at the
    /// first: the trial's coordinator, which waits until the sampler is due, spun on a CPU
    /// for the whole measure phase.
    #[test]
    fn a_sampler_that_reads_nothing_still_moves_its_boundary_on() {
        let mut s = Sampler::start(false, Duration::from_millis(10), &[], None);
        let later = s.origin() + Duration::from_millis(35);
        s.poll(later);
        assert!(s.due() > later, "the next boundary is after now");
        assert!(s.finish().points.is_empty());
    }

    /// A real phase on this machine: points on the interval clock, shares that add up, a
    /// summary whose figures agree with the points, and the sampler's cost stated.
    #[test]
    fn a_phase_of_readings() {
        let mut s = Sampler::start(true, Duration::from_millis(50), &[], None);
        let origin = s.origin();
        let end = origin + Duration::from_millis(230);
        let mut spin = 0u64;
        while Instant::now() < end {
            spin = spin.wrapping_add(1);
            s.poll(Instant::now());
            std::thread::sleep(Duration::from_millis(1));
        }
        let out = s.finish();
        assert!(spin > 0);
        assert!((4..=6).contains(&out.points.len()), "{}", out.points.len());
        for (i, p) in out.points.iter().enumerate() {
            let expected = i as u64 * 50_000_000;
            assert!(
                p.start_ns.abs_diff(expected) < 20_000_000,
                "point {i} at {}",
                p.start_ns
            );
            let sum: f64 = p.cpu.to_array().iter().sum();
            assert!(sum == 0.0 || (sum - 100.0).abs() < 1e-6);
            assert!(p.mem_used_bytes > 0);
        }
        let summary = out.summary.expect("detailed");
        assert!(summary.cpus >= 1);
        assert!(summary.samples >= 5);
        assert!(summary.sampler_cpu_pct >= 0.0);
        assert!(out.process_cpu > Duration::ZERO || summary.process_cpu_pct == 0.0);
    }

    #[test]
    fn off_reads_only_the_ends() {
        let mut s = Sampler::start(false, Duration::from_millis(1), &[], None);
        std::thread::sleep(Duration::from_millis(5));
        s.poll(Instant::now());
        let out = s.finish();
        assert!(out.points.is_empty() && out.summary.is_none());
    }
}
