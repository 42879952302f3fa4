//! The [`Environment`] record and its collection from the live machine.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::caches::{self, CacheIndexText, CacheLevel};
use super::cpu::{self, CpuInfo};
use super::memory::{self, MemoryInfo};
use super::os::{self, OsInfo};
use super::virt::{self, ContainerEvidence, HypervisorEvidence, Virtualization};

/// Twelve hex digits standing for a machine id, from which the id cannot be read back.
pub fn machine_digest(id: &str) -> String {
    use md5::Digest;
    let d = md5::Md5::digest(format!("perflab machine {}", id.trim()).as_bytes());
    d.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The machine a measurement ran on: the "full disclosure" stored with every lab report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Option<String>,
    /// A digest of `/etc/machine-id` (never the id itself, which systemd asks to keep
    /// private): tells apart machines that share a host name, as cloned VMs do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    pub os: OsInfo,
    pub cpu: CpuInfo,
    /// The caches of cpu0, in sysfs index order (L1d, L1i, L2, L3 on most machines).
    pub caches: Vec<CacheLevel>,
    pub memory: MemoryInfo,
    pub virtualization: Virtualization,
    /// `/proc/loadavg` at collection: 1, 5 and 15 minute averages.
    pub load_average: Option<[f64; 3]>,
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
    pub clocksource: Option<String>,
}

const CPU_SYSFS: &str = "/sys/devices/system/cpu";

/// A file's text; `None` when it is missing or unreadable.
fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// The first line of a one-value file, trimmed; `None` when missing or blank.
fn read_value(path: impl AsRef<Path>) -> Option<String> {
    read(path).as_deref().and_then(os::single_value)
}

/// This machine's host name, as a record made now would give it.
pub fn this_host() -> Option<String> {
    read_value("/proc/sys/kernel/hostname").or_else(|| read_value("/etc/hostname"))
}

impl Environment {
    /// Reads the live machine. Never fails: whatever cannot be read is left unknown.
    pub fn collect() -> Environment {
        let cpu = collect_cpu();
        let caches = collect_caches(cpu.logical_cpus);
        let kernel_release = read_value("/proc/sys/kernel/osrelease");
        let os = OsInfo {
            kernel_version: read_value("/proc/sys/kernel/version"),
            distro: read("/etc/os-release")
                .or_else(|| read("/usr/lib/os-release"))
                .as_deref()
                .and_then(os::parse_os_release),
            arch: std::env::consts::ARCH.to_string(),
            kernel_release,
        };
        let mut memory = read("/proc/meminfo")
            .as_deref()
            .map(memory::parse_meminfo)
            .unwrap_or_default();
        memory.transparent_hugepages = read("/sys/kernel/mm/transparent_hugepage/enabled")
            .as_deref()
            .and_then(memory::parse_thp_enabled);
        let virtualization = collect_virtualization(&cpu, os.kernel_release.as_deref());
        Environment {
            hostname: read_value("/proc/sys/kernel/hostname")
                .or_else(|| read_value("/etc/hostname")),
            machine: read_value("/etc/machine-id").map(|id| machine_digest(&id)),
            os,
            cpu,
            caches,
            memory,
            virtualization,
            load_average: read("/proc/loadavg").as_deref().and_then(os::parse_loadavg),
            clocksource: read_value(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
        }
    }

    /// Size of one instance of the last-level cache: the highest-level data or unified cache.
    pub fn llc_bytes(&self) -> Option<u64> {
        caches::last_level(&self.caches)?.size_bytes
    }

    /// The last-level cache of the whole machine: [`Self::llc_bytes`] times its instances.
    pub fn llc_total_bytes(&self) -> Option<u64> {
        let llc = caches::last_level(&self.caches)?;
        llc.size_bytes?.checked_mul(u64::from(llc.instances?))
    }
}

fn collect_cpu() -> CpuInfo {
    let mut cpu = read("/proc/cpuinfo")
        .as_deref()
        .map(cpu::parse_cpuinfo)
        .unwrap_or_default();
    if cpu.logical_cpus.is_none() {
        cpu.logical_cpus = read(format!("{CPU_SYSFS}/online"))
            .as_deref()
            .and_then(cpu::parse_cpu_list);
    }
    if cpu.sockets.is_none() || cpu.physical_cores.is_none() {
        let (sockets, cores) = cpu::topology_from_ids(&sysfs_topology_ids());
        cpu.sockets = cpu.sockets.or(sockets);
        cpu.physical_cores = cpu.physical_cores.or(cores);
        cpu.threads_per_core = cpu::threads_per_core(cpu.logical_cpus, cpu.physical_cores);
    }
    cpu.numa_nodes = read("/sys/devices/system/node/online")
        .as_deref()
        .and_then(cpu::parse_cpu_list);
    let cpufreq = format!("{CPU_SYSFS}/cpu0/cpufreq");
    cpu.max_mhz = read(format!("{cpufreq}/cpuinfo_max_freq"))
        .as_deref()
        .and_then(cpu::parse_khz_as_mhz);
    cpu.governor = read_value(format!("{cpufreq}/scaling_governor"));
    cpu
}

/// (`physical_package_id`, `core_id`) of every CPU directory that has a topology.
fn sysfs_topology_ids() -> Vec<(i64, i64)> {
    let Ok(dir) = fs::read_dir(CPU_SYSFS) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            let topo = e.path().join("topology");
            let id = |f: &str| read(topo.join(f))?.trim().parse::<i64>().ok();
            Some((id("physical_package_id")?, id("core_id")?))
        })
        .collect()
}

fn collect_caches(logical_cpus: Option<u32>) -> Vec<CacheLevel> {
    let Ok(dir) = fs::read_dir(format!("{CPU_SYSFS}/cpu0/cache")) else {
        return Vec::new();
    };
    let mut indexed: Vec<(u32, CacheLevel)> = dir
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n: u32 = e
                .file_name()
                .to_str()?
                .strip_prefix("index")?
                .parse()
                .ok()?;
            let path = e.path();
            let f = |name: &str| read(path.join(name));
            let (level, kind, size, line, ways, shared) = (
                f("level"),
                f("type"),
                f("size"),
                f("coherency_line_size"),
                f("ways_of_associativity"),
                f("shared_cpu_list"),
            );
            let text = CacheIndexText {
                level: level.as_deref(),
                kind: kind.as_deref(),
                size: size.as_deref(),
                coherency_line_size: line.as_deref(),
                ways_of_associativity: ways.as_deref(),
                shared_cpu_list: shared.as_deref(),
            };
            Some((n, caches::parse_cache_index(&text, logical_cpus)?))
        })
        .collect();
    indexed.sort_by_key(|(n, _)| *n);
    indexed.into_iter().map(|(_, c)| c).collect()
}

fn collect_virtualization(cpu: &CpuInfo, kernel_release: Option<&str>) -> Virtualization {
    let sys_hypervisor_type = read("/sys/hypervisor/type");
    let dmi_sys_vendor = read("/sys/class/dmi/id/sys_vendor");
    let dmi_product_name = read("/sys/class/dmi/id/product_name");
    let available_clocksource =
        read("/sys/devices/system/clocksource/clocksource0/available_clocksource");
    let hypervisor = virt::detect_hypervisor(&HypervisorEvidence {
        cpu_flag: cpu.flags_of_note.iter().any(|f| f == "hypervisor"),
        sys_hypervisor_type: sys_hypervisor_type.as_deref(),
        dmi_sys_vendor: dmi_sys_vendor.as_deref(),
        dmi_product_name: dmi_product_name.as_deref(),
        available_clocksource: available_clocksource.as_deref(),
        kernel_release,
    });

    let env_container = std::env::var("container").ok();
    let init_cgroup = read("/proc/1/cgroup");
    let container = virt::detect_container(&ContainerEvidence {
        env_container: env_container.as_deref(),
        kubernetes_env: std::env::var_os("KUBERNETES_SERVICE_HOST").is_some(),
        dockerenv: Path::new("/.dockerenv").exists(),
        containerenv: Path::new("/run/.containerenv").exists(),
        init_cgroup: init_cgroup.as_deref(),
    });
    Virtualization {
        hypervisor,
        container,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_id_is_kept_as_a_digest_only() {
        let id = "4c4c4544003510548052b4c04f4e4d32";
        let d = machine_digest(id);
        assert_eq!(d.len(), 12);
        assert!(d.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(d, machine_digest(&format!("{id}\n")));
        assert_ne!(d, machine_digest("4c4c4544003510548052b4c04f4e4d33"));
        assert!(!id.contains(&d));
    }

    fn cache(level: u8, kind: &str, size: u64, instances: Option<u32>) -> CacheLevel {
        CacheLevel {
            level,
            kind: kind.to_string(),
            size_bytes: Some(size),
            instances,
            ..Default::default()
        }
    }

    #[test]
    fn llc() {
        let mut env = Environment {
            caches: vec![
                cache(1, "data", 48 << 10, Some(64)),
                cache(1, "instruction", 32 << 10, Some(64)),
                cache(2, "unified", 1 << 20, Some(32)),
                cache(3, "unified", 22 << 20, Some(2)),
            ],
            ..Default::default()
        };
        assert_eq!(env.llc_bytes(), Some(22 << 20));
        assert_eq!(env.llc_total_bytes(), Some(44 << 20));
        env.caches[3].instances = None;
        assert_eq!(env.llc_total_bytes(), None);
        assert_eq!(Environment::default().llc_bytes(), None);
        assert_eq!(Environment::default().llc_total_bytes(), None);
    }

    #[test]
    fn collect_is_sane() {
        // What it finds, not how fast: a wall-clock bound fails on a loaded machine.
        let env = Environment::collect();
        assert_eq!(env.os.arch, std::env::consts::ARCH);
        if Path::new("/proc/cpuinfo").exists() {
            assert!(env.cpu.logical_cpus.unwrap_or(0) >= 1);
            assert!(env.memory.total_bytes.unwrap_or(0) > 0);
        }
    }

    #[test]
    fn json_round_trip_keeps_nulls() {
        let env = Environment::collect();
        let json = serde_json::to_string(&env).unwrap();
        let back: Environment = serde_json::from_str(&json).unwrap();
        // Floats may come back one ulp off: compare them apart.
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
            (a, b) => a == b,
        };
        assert!(close(back.cpu.mhz, env.cpu.mhz));
        assert!(close(back.cpu.max_mhz, env.cpu.max_mhz));
        for i in 0..3 {
            assert!(close(
                back.load_average.map(|l| l[i]),
                env.load_average.map(|l| l[i])
            ));
        }
        let without_floats = |e: &Environment| {
            let mut e = e.clone();
            (e.cpu.mhz, e.cpu.max_mhz, e.load_average) = (None, None, None);
            e
        };
        assert_eq!(without_floats(&back), without_floats(&env));
        let empty = serde_json::to_value(Environment::default()).unwrap();
        assert!(empty["hostname"].is_null());
        assert!(empty["cpu"]["max_mhz"].is_null());
        assert!(empty["memory"]["total_bytes"].is_null());
        assert!(empty["virtualization"]["hypervisor"].is_null());
        assert!(empty["load_average"].is_null());
    }

    #[test]
    fn parsers_never_panic() {
        let samples = [
            include_str!("testdata/cpuinfo_intel_2s.txt"),
            include_str!("testdata/cpuinfo_arm64.txt"),
            "MemTotal: 1024 kB\nHugepagesize: 2048 kB\n",
            "always [madvise] never\n",
            "PRETTY_NAME=\"Debian \\\"x\\\"\"\n",
            "0.52 1.07 2.50 3/1234 56789\n",
            "cpu  3428 10 3479 614403 290 0 78 9 0 0\n",
            "7708 (c (a) t) R 7691 7691 6852 0 -1 4194304 101 0 0 0 250 36 0\n",
            "0-3,8,10-11\n",
            "32768K\n",
            "\u{0}\u{feff}é€😀 : ( ) [ ] = \" ' \\ - , \t\r\n",
        ];
        for text in samples {
            let step = if text.len() > 2000 { 97 } else { 1 };
            let ends = text.char_indices().map(|(i, _)| i).step_by(step);
            for end in ends.chain([text.len()]) {
                let t = &text[..end];
                let _ = cpu::parse_cpuinfo(t);
                let _ = cpu::parse_cpu_list(t);
                let _ = cpu::parse_khz_as_mhz(t);
                let _ = caches::parse_size(t);
                let _ = memory::parse_meminfo(t);
                let _ = memory::parse_thp_enabled(t);
                let _ = os::parse_os_release(t);
                let _ = os::parse_loadavg(t);
                let _ = os::single_value(t);
                let _ = super::super::usage::CpuTimes::parse(t);
                let _ = super::super::usage::parse_process_cpu(t);
                let some = Some(t);
                let files = CacheIndexText {
                    level: some,
                    kind: some,
                    size: some,
                    coherency_line_size: some,
                    ways_of_associativity: some,
                    shared_cpu_list: some,
                };
                let _ = caches::parse_cache_index(&files, Some(0));
                let _ = virt::detect_hypervisor(&HypervisorEvidence {
                    cpu_flag: true,
                    sys_hypervisor_type: some,
                    dmi_sys_vendor: some,
                    dmi_product_name: some,
                    available_clocksource: some,
                    kernel_release: some,
                });
                let _ = virt::detect_container(&ContainerEvidence {
                    env_container: some,
                    init_cgroup: some,
                    ..Default::default()
                });
            }
        }
    }

    #[test]
    fn old_records_load() {
        let old: Environment = serde_json::from_str(
            r#"{"hostname":"db1","cpu":{"model":"X","mhz":2400.5},"caches":[{"level":3}]}"#,
        )
        .unwrap();
        assert_eq!(old.hostname.as_deref(), Some("db1"));
        assert_eq!(old.cpu.mhz, Some(2400.5));
        assert_eq!(old.caches[0].level, 3);
        assert_eq!(old.memory, MemoryInfo::default());
        let empty: Environment = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Environment::default());
    }
}
