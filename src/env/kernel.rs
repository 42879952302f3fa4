//! The kernel's running counters the sampler reads every interval: `/proc/stat`,
//! `/proc/meminfo`, `/proc/vmstat` and `/proc/net/dev`.
//!
//! Each parser is a pure function of the file's text, tested on texts recorded from several
//! kernels (`testdata/`), and parses *into* a value the caller keeps, so a reading once a
//! second allocates nothing after the first (the sampler must cost under 0.1% of a CPU).
//! Unknown lines are skipped; a line that is known but malformed leaves its figure at zero
//! (the figure is then reported as unknown by whoever reads it, never as a guess).

use super::usage::CpuTimes;

/// `/proc/stat`: CPU time in total and per CPU, and the scheduler's counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelStat {
    pub total: CpuTimes,
    /// `(n, times)` of each `cpuN` line: offline CPUs have none, so `n` is not the position.
    pub per_cpu: Vec<(u32, CpuTimes)>,
    /// Context switches since boot (`ctxt`).
    pub context_switches: u64,
    /// Interrupts serviced since boot (the first number of `intr`).
    pub interrupts: u64,
    /// Tasks runnable and blocked on I/O now (gauges; since 2.6.11).
    pub procs_running: u64,
    pub procs_blocked: u64,
}

impl KernelStat {
    /// Replaces `self` with the figures of a `/proc/stat` text; `false` when it has no
    /// aggregate `cpu` line (not a `/proc/stat`).
    pub fn parse_into(&mut self, text: &str) -> bool {
        self.per_cpu.clear();
        let mut found = false;
        for line in text.lines() {
            let mut fields = line.split_ascii_whitespace();
            let Some(key) = fields.next() else { continue };
            let first = |mut f: std::str::SplitAsciiWhitespace| {
                f.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            };
            match key {
                "cpu" => {
                    if let Some(t) = CpuTimes::parse_fields(fields) {
                        self.total = t;
                        found = true;
                    }
                }
                "ctxt" => self.context_switches = first(fields),
                "intr" => self.interrupts = first(fields),
                "procs_running" => self.procs_running = first(fields),
                "procs_blocked" => self.procs_blocked = first(fields),
                k => {
                    if let Some(n) = k.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok())
                        && let Some(t) = CpuTimes::parse_fields(fields)
                    {
                        self.per_cpu.push((n, t));
                    }
                }
            }
        }
        found
    }
}

/// `/proc/meminfo`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemInfo {
    pub total: u64,
    pub free: u64,
    /// `MemAvailable` (since 3.14); `None` before.
    pub available: Option<u64>,
    pub buffers: u64,
    pub cached: u64,
    /// Reclaimable slab (since 2.6.19): `free` counts it as cache.
    pub slab_reclaimable: u64,
    pub dirty: u64,
    pub writeback: u64,
}

impl MemInfo {
    pub fn parse(text: &str) -> MemInfo {
        let mut m = MemInfo::default();
        for line in text.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let mut parts = rest.split_ascii_whitespace();
            let Some(value) = parts.next().and_then(|v| v.parse::<u64>().ok()) else {
                continue;
            };
            // Every size field is in kB (KiB); the HugePages_ counts have no unit.
            let bytes = match parts.next() {
                Some("kB") => value.saturating_mul(1024),
                _ => value,
            };
            match key {
                "MemTotal" => m.total = bytes,
                "MemFree" => m.free = bytes,
                "MemAvailable" => m.available = Some(bytes),
                "Buffers" => m.buffers = bytes,
                "Cached" => m.cached = bytes,
                "SReclaimable" => m.slab_reclaimable = bytes,
                "Dirty" => m.dirty = bytes,
                "Writeback" => m.writeback = bytes,
                _ => {}
            }
        }
        m
    }

    /// Memory in use as `free` (procps-ng 4) reports it: total less available; before
    /// `MemAvailable` existed, total less free, buffers and cache.
    pub fn used(&self) -> u64 {
        match self.available {
            Some(a) => self.total.saturating_sub(a),
            None => self
                .total
                .saturating_sub(self.free)
                .saturating_sub(self.buff_cache()),
        }
    }

    /// `free`'s buff/cache: buffers, page cache and reclaimable slab.
    pub fn buff_cache(&self) -> u64 {
        self.buffers
            .saturating_add(self.cached)
            .saturating_add(self.slab_reclaimable)
    }
}

/// The paging counters of `/proc/vmstat`, in events (faults) or pages (swap) since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VmCounters {
    pub page_faults: u64,
    pub major_faults: u64,
    pub swap_in: u64,
    pub swap_out: u64,
}

impl VmCounters {
    pub fn parse(text: &str) -> VmCounters {
        let mut v = VmCounters::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(' ') else {
                continue;
            };
            let slot = match key {
                "pgfault" => &mut v.page_faults,
                "pgmajfault" => &mut v.major_faults,
                "pswpin" => &mut v.swap_in,
                "pswpout" => &mut v.swap_out,
                _ => continue,
            };
            *slot = value.trim().parse().unwrap_or(0);
        }
        v
    }
}

/// One interface's counters of `/proc/net/dev`, since it appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetCounters {
    pub name: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
}

/// Replaces `out` with the interfaces of a `/proc/net/dev` text, reusing its names' memory.
pub fn parse_net_dev_into(text: &str, out: &mut Vec<NetCounters>) {
    let mut n = 0;
    // Two header lines, then `name: rx(8 fields) tx(8 fields)`. Old kernels put no space
    // between the colon and a wide first number (`eth0:4294967295123`).
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let mut v = [0u64; 10];
        let mut count = 0;
        for (slot, f) in v.iter_mut().zip(rest.split_ascii_whitespace()) {
            match f.parse() {
                Ok(x) => *slot = x,
                Err(_) => break,
            }
            count += 1;
        }
        if count < 10 {
            continue;
        }
        if n == out.len() {
            out.push(NetCounters::default());
        }
        let c = &mut out[n];
        c.name.clear();
        c.name.push_str(name.trim());
        c.rx_bytes = v[0];
        c.rx_packets = v[1];
        c.tx_bytes = v[8];
        c.tx_packets = v[9];
        n += 1;
    }
    out.truncate(n);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/src/env/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn stat_of_three_kernels() {
        let mut s = KernelStat::default();
        // 2.6.18: eight CPU fields, no guest; CPUs 2 and 3 idle at zero.
        assert!(s.parse_into(&fixture("stat_2_6_18_4cpu.txt")));
        assert_eq!(s.total.user, 2255);
        assert_eq!(s.total.steal, 0);
        assert_eq!(s.per_cpu.len(), 4);
        assert_eq!(s.per_cpu[1], (1, s.per_cpu[1].1));
        assert_eq!(s.context_switches, 1_990_473);
        assert_eq!(s.interrupts, 114_930_548);
        assert_eq!((s.procs_running, s.procs_blocked), (1, 0));
        // 3.10: guest and guest_nice after steal (ignored: already inside user and nice);
        // a `softirq` line that is not a CPU.
        assert!(s.parse_into(&fixture("stat_3_10_2s_guest.txt")));
        assert_eq!(s.total.steal, 1550);
        assert_eq!(s.per_cpu.len(), 4, "the previous CPUs are replaced");
        assert_eq!(s.per_cpu[0].1.softirq, 1201);
        assert_eq!((s.procs_running, s.procs_blocked), (3, 1));
        // 6.18 on a 2-CPU KVM guest, as recorded.
        assert!(s.parse_into(&fixture("stat_6_18_kvm_2cpu.txt")));
        assert_eq!(s.per_cpu.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1]);
        assert!(s.context_switches > 0 && s.interrupts > 0);
        // Not a /proc/stat.
        assert!(!s.parse_into("MemTotal: 1 kB\n"));
    }

    #[test]
    fn offline_cpus_keep_their_numbers() {
        let mut s = KernelStat::default();
        let text = "cpu  10 0 10 80 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0\ncpu2 5 0 5 40 0 0 0 0\n";
        assert!(s.parse_into(text));
        assert_eq!(s.per_cpu.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 2]);
    }

    #[test]
    fn shares_add_up_and_put_nice_in_user() {
        let a = CpuTimes::parse("cpu 100 10 50 800 20 5 5 10").unwrap();
        let b = CpuTimes::parse("cpu 200 20 100 1500 30 10 10 20").unwrap();
        let s = b.shares_since(&a);
        let sum: f64 = s.to_array().iter().sum();
        assert!((sum - 100.0).abs() < 1e-9);
        assert!((s.user - 110.0 * 100.0 / 890.0).abs() < 1e-9);
        assert!((s.busy() - (110.0 + 50.0 + 5.0 + 5.0 + 10.0) * 100.0 / 890.0).abs() < 1e-9);
        assert_eq!(a.shares_since(&a), Default::default());
    }

    #[test]
    fn meminfo_new_and_old() {
        let m = MemInfo::parse(&fixture("meminfo_6_18.txt"));
        assert_eq!(m.total, 24_683_656 * 1024);
        assert_eq!(m.used(), (24683656 - 23416520) * 1024);
        assert_eq!(m.dirty, 117976 * 1024);
        // 2.6.32: no MemAvailable, so used is total less free, buffers and cache.
        let m = MemInfo::parse(&fixture("meminfo_2_6_32.txt"));
        assert_eq!(m.available, None);
        assert_eq!(
            m.used(),
            (8_061_240 - 1_530_360 - 359_640 - 4_712_104 - 421_808) * 1024
        );
        assert_eq!(m.buff_cache(), (359_640 + 4_712_104 + 421_808) * 1024);
    }

    #[test]
    fn vmstat_new_and_old() {
        let v = VmCounters::parse(&fixture("vmstat_2_6_32.txt"));
        assert_eq!(
            v,
            VmCounters {
                page_faults: 2_193_453_201,
                major_faults: 33_542,
                swap_in: 1220,
                swap_out: 4388
            }
        );
        let v = VmCounters::parse(&fixture("vmstat_6_18.txt"));
        assert!(v.page_faults > v.major_faults);
    }

    #[test]
    fn net_dev_with_and_without_a_space_after_the_colon() {
        let mut out = Vec::new();
        parse_net_dev_into(&fixture("net_dev_2_6_18.txt"), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].name, "eth0");
        assert_eq!(out[1].rx_bytes, 4_294_967_295_123);
        assert_eq!(out[1].rx_packets, 2_198_730_511);
        assert_eq!(out[1].tx_bytes, 88_102_034_471);
        assert_eq!(out[1].tx_packets, 1_193_029_012);
        parse_net_dev_into(&fixture("net_dev_6_18.txt"), &mut out);
        assert!(out.iter().any(|c| c.name == "lo"));
        assert!(out.iter().all(|c| !c.name.contains('|')), "headers skipped");
    }
}
