//! CPU identity, topology and clock: `/proc/cpuinfo`, with sysfs for what it leaves out.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The processor as the kernel describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuInfo {
    /// `model name` of the first processor, runs of spaces collapsed.
    pub model: Option<String>,
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`), or the implementer on Arm.
    pub vendor: Option<String>,
    /// Processors the kernel lists (the online logical CPUs).
    pub logical_cpus: Option<u32>,
    /// Distinct (`physical id`, `core id`) pairs.
    pub physical_cores: Option<u32>,
    /// Distinct `physical id` values.
    pub sockets: Option<u32>,
    /// `logical_cpus / physical_cores`, rounded up.
    pub threads_per_core: Option<u32>,
    /// Nodes in `/sys/devices/system/node/online`.
    pub numa_nodes: Option<u32>,
    /// Mean of the `cpu MHz` lines at collection (a snapshot, not a rating).
    pub mhz: Option<f64>,
    /// `cpufreq/cpuinfo_max_freq` of cpu0, converted from kHz.
    pub max_mhz: Option<f64>,
    /// `cpufreq/scaling_governor` of cpu0; `None` when there is no cpufreq.
    pub governor: Option<String>,
    /// The flags from [`FLAGS_OF_NOTE`] the first processor has, in that list's order.
    pub flags_of_note: Vec<String>,
}

/// CPU flags worth disclosing because they change what code runs, or how time is kept.
/// x86 names first, then Arm `Features` names.
#[rustfmt::skip]
pub const FLAGS_OF_NOTE: &[&str] = &[
    "sse4_2", "popcnt", "avx", "avx2", "fma", "bmi2",
    "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "amx_tile",
    "aes", "vaes", "pclmulqdq", "sha_ni", "rdrand", "rdseed", "erms", "fsrm",
    "constant_tsc", "nonstop_tsc", "hypervisor",
    "asimd", "sve", "sve2", "atomics", "crc32", "sha2", "pmull",
];

/// One `key : value` block of `/proc/cpuinfo`.
type Block<'a> = Vec<(&'a str, &'a str)>;

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut current: Block<'_> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            current.push((key.trim(), value.trim()));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn get<'a>(block: &Block<'a>, key: &str) -> Option<&'a str> {
    block.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// `value` with runs of whitespace collapsed; `None` when blank.
fn tidy(value: &str) -> Option<String> {
    let words: Vec<&str> = value.split_whitespace().collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Name of an Arm `CPU implementer` code.
fn arm_implementer(code: &str) -> String {
    let name = match code.to_ascii_lowercase().as_str() {
        "0x41" => "ARM",
        "0x42" => "Broadcom",
        "0x43" => "Cavium",
        "0x46" => "Fujitsu",
        "0x48" => "HiSilicon",
        "0x4e" => "NVIDIA",
        "0x50" => "APM",
        "0x51" => "Qualcomm",
        "0x61" => "Apple",
        "0x6d" => "Microsoft",
        "0xc0" => "Ampere",
        _ => return format!("implementer {code}"),
    };
    name.to_string()
}

fn to_u32(n: usize) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// `logical / cores`, rounded up (hybrid parts have cores with and without SMT).
pub fn threads_per_core(logical: Option<u32>, cores: Option<u32>) -> Option<u32> {
    match (logical, cores) {
        (Some(l), Some(c)) if c > 0 && l >= c => Some(l.div_ceil(c)),
        _ => None,
    }
}

/// Everything `/proc/cpuinfo` tells; `numa_nodes`, `max_mhz` and `governor` come from sysfs
/// and are left `None` here.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let all = blocks(text);
    let procs: Vec<&Block<'_>> = all
        .iter()
        .filter(|b| get(b, "processor").is_some())
        .collect();
    let first_with = |key: &str| {
        all.iter()
            .find_map(|b| get(b, key))
            .filter(|v| !v.trim().is_empty())
    };

    let model = ["model name", "cpu model", "Processor"]
        .iter()
        .find_map(|k| first_with(k))
        .and_then(tidy);
    let vendor = first_with("vendor_id")
        .or_else(|| first_with("vendor"))
        .and_then(tidy)
        .or_else(|| first_with("CPU implementer").map(arm_implementer));

    let logical_cpus = to_u32(procs.len());

    let package_ids: Vec<Option<&str>> = procs.iter().map(|b| get(b, "physical id")).collect();
    let all_have_package = !procs.is_empty() && package_ids.iter().all(Option::is_some);
    let sockets = if all_have_package {
        to_u32(package_ids.iter().collect::<BTreeSet<_>>().len())
    } else {
        None
    };

    let pairs: Option<BTreeSet<(&str, &str)>> = procs
        .iter()
        .map(|b| Some((get(b, "physical id")?, get(b, "core id")?)))
        .collect();
    let physical_cores = match pairs {
        Some(p) if !procs.is_empty() => to_u32(p.len()),
        _ => {
            let per_socket = first_with("cpu cores").and_then(|v| v.parse::<u32>().ok());
            match (per_socket, sockets) {
                (Some(c), Some(s)) => c.checked_mul(s).filter(|&n| n > 0),
                _ => None,
            }
        }
    };

    let mhz: Vec<f64> = procs
        .iter()
        .filter_map(|b| get(b, "cpu MHz"))
        .filter_map(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let mhz = (!mhz.is_empty()).then(|| mhz.iter().sum::<f64>() / mhz.len() as f64);

    let flags = procs
        .first()
        .and_then(|b| get(b, "flags").or_else(|| get(b, "Features")))
        .unwrap_or("");

    CpuInfo {
        model,
        vendor,
        logical_cpus,
        physical_cores,
        sockets,
        threads_per_core: threads_per_core(logical_cpus, physical_cores),
        numa_nodes: None,
        mhz,
        max_mhz: None,
        governor: None,
        flags_of_note: flags_of_note(flags),
    }
}

/// The [`FLAGS_OF_NOTE`] present in a space-separated flags line, in that list's order.
pub fn flags_of_note(flags: &str) -> Vec<String> {
    let present: BTreeSet<&str> = flags.split_whitespace().collect();
    FLAGS_OF_NOTE
        .iter()
        .filter(|f| present.contains(*f))
        .map(|f| f.to_string())
        .collect()
}

/// Number of CPUs (or nodes) in a kernel list such as `0-3,8,10-11`. `None` when malformed
/// or empty.
pub fn parse_cpu_list(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut count: u64 = 0;
    for part in text.split(',') {
        let part = part.trim();
        let n = match part.split_once('-') {
            Some((lo, hi)) => {
                let lo: u64 = lo.trim().parse().ok()?;
                let hi: u64 = hi.trim().parse().ok()?;
                hi.checked_sub(lo)?.checked_add(1)?
            }
            None => {
                part.parse::<u64>().ok()?;
                1
            }
        };
        count = count.checked_add(n)?;
    }
    u32::try_from(count).ok().filter(|&n| n > 0)
}

/// Sockets and cores from sysfs `topology/physical_package_id` and `core_id`, one pair per
/// CPU. Sockets are unknown when any package id is negative (some Arm firmware says -1).
pub fn topology_from_ids(ids: &[(i64, i64)]) -> (Option<u32>, Option<u32>) {
    if ids.is_empty() {
        return (None, None);
    }
    let sockets = if ids.iter().any(|(p, _)| *p < 0) {
        None
    } else {
        to_u32(ids.iter().map(|(p, _)| p).collect::<BTreeSet<_>>().len())
    };
    let cores = to_u32(ids.iter().collect::<BTreeSet<_>>().len());
    (sockets, cores)
}

/// A cpufreq frequency file (kHz) as MHz.
pub fn parse_khz_as_mhz(text: &str) -> Option<f64> {
    let khz: u64 = text.trim().parse().ok()?;
    (khz > 0).then(|| khz as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTEL_2S: &str = include_str!("testdata/cpuinfo_intel_2s.txt");
    const AMD_EPYC_VM: &str = include_str!("testdata/cpuinfo_amd_epyc_vm.txt");
    const AMD_RYZEN: &str = include_str!("testdata/cpuinfo_amd_ryzen_smt.txt");
    const VM_NO_PHYSICAL_ID: &str = include_str!("testdata/cpuinfo_vm_no_physical_id.txt");
    const ARM64: &str = include_str!("testdata/cpuinfo_arm64.txt");

    #[test]
    fn intel_two_sockets() {
        let c = parse_cpuinfo(INTEL_2S);
        assert_eq!(
            c.model.as_deref(),
            Some("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz")
        );
        assert_eq!(c.vendor.as_deref(), Some("GenuineIntel"));
        assert_eq!(c.logical_cpus, Some(8));
        assert_eq!(c.sockets, Some(2));
        assert_eq!(c.physical_cores, Some(4));
        assert_eq!(c.threads_per_core, Some(2));
        let mean =
            (2100.0 + 1000.317 + 2800.126 + 1200.0 + 2100.0 + 3700.0 + 999.902 + 1300.655) / 8.0;
        assert!((c.mhz.unwrap() - mean).abs() < 1e-9);
        assert_eq!(c.max_mhz, None);
        assert_eq!(c.governor, None);
        assert_eq!(c.numa_nodes, None);
        assert_eq!(
            c.flags_of_note.join(" "),
            "sse4_2 popcnt avx avx2 fma bmi2 avx512f avx512bw avx512vl aes pclmulqdq rdrand \
             rdseed erms constant_tsc nonstop_tsc"
        );
    }

    #[test]
    fn amd_epyc_guest() {
        let c = parse_cpuinfo(AMD_EPYC_VM);
        assert_eq!(c.model.as_deref(), Some("AMD EPYC"));
        assert_eq!(c.vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!(c.logical_cpus, Some(2));
        assert_eq!(c.sockets, Some(1));
        assert_eq!(c.physical_cores, Some(2));
        assert_eq!(c.threads_per_core, Some(1));
        assert!(c.flags_of_note.iter().any(|f| f == "hypervisor"));
        assert!(c.flags_of_note.iter().any(|f| f == "sha_ni"));
        assert!(c.flags_of_note.iter().any(|f| f == "avx512_vnni"));
    }

    #[test]
    fn amd_ryzen_with_smt() {
        let c = parse_cpuinfo(AMD_RYZEN);
        assert_eq!(
            c.model.as_deref(),
            Some("AMD Ryzen 9 5950X 16-Core Processor")
        );
        assert_eq!(c.logical_cpus, Some(4));
        assert_eq!(c.sockets, Some(1));
        assert_eq!(c.physical_cores, Some(2));
        assert_eq!(c.threads_per_core, Some(2));
        assert!((c.mhz.unwrap() - 3112.52925).abs() < 1e-9);
        assert!(c.flags_of_note.iter().any(|f| f == "sha_ni"));
        assert!(!c.flags_of_note.iter().any(|f| f == "hypervisor"));
        assert!(!c.flags_of_note.iter().any(|f| f == "avx512f"));
    }

    #[test]
    fn guest_without_physical_id() {
        let c = parse_cpuinfo(VM_NO_PHYSICAL_ID);
        assert_eq!(
            c.model.as_deref(),
            Some("Intel Xeon Processor (Cascadelake)")
        );
        assert_eq!(c.logical_cpus, Some(4));
        assert_eq!(c.sockets, None);
        assert_eq!(c.physical_cores, None);
        assert_eq!(c.threads_per_core, None);
        assert!((c.mhz.unwrap() - 2992.968).abs() < 1e-9);
        assert!(c.flags_of_note.iter().any(|f| f == "hypervisor"));
    }

    #[test]
    fn arm64() {
        let c = parse_cpuinfo(ARM64);
        assert_eq!(c.model, None);
        assert_eq!(c.vendor.as_deref(), Some("ARM"));
        assert_eq!(c.logical_cpus, Some(4));
        assert_eq!(c.mhz, None);
        assert_eq!(
            c.flags_of_note,
            ["aes", "asimd", "atomics", "crc32", "sha2", "pmull"]
        );
    }

    #[test]
    fn cpu_cores_used_when_core_id_missing() {
        let text = "processor : 0\nphysical id : 0\ncpu cores : 4\n\n\
                    processor : 1\nphysical id : 1\ncpu cores : 4\n";
        let c = parse_cpuinfo(text);
        assert_eq!(c.sockets, Some(2));
        assert_eq!(c.physical_cores, Some(8));
        assert_eq!(c.threads_per_core, None); // 2 logical < 8 cores: not believable
    }

    #[test]
    fn empty_and_malformed() {
        assert_eq!(parse_cpuinfo(""), CpuInfo::default());
        assert_eq!(parse_cpuinfo("\n\n\n"), CpuInfo::default());
        let c = parse_cpuinfo(
            "garbage without colons\n:::\nprocessor\t:\ncpu MHz : fast\ncpu MHz : NaN\n\
             cpu MHz : inf\ncpu cores : -3\nmodel name :    \nflags\n",
        );
        assert_eq!(c.logical_cpus, Some(1));
        assert_eq!(c.model, None);
        assert_eq!(c.mhz, None);
        assert_eq!(c.physical_cores, None);
        assert!(c.flags_of_note.is_empty());
        let c = parse_cpuinfo("\u{0}\u{feff}\u{1F600}: \u{1F600}\nprocessor: é\n");
        assert_eq!(c.logical_cpus, Some(1));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0\n"), Some(1));
        assert_eq!(parse_cpu_list("0-1"), Some(2));
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Some(7));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a-b"), None);
        assert_eq!(parse_cpu_list("0,,1"), None);
        assert_eq!(parse_cpu_list("0-18446744073709551615"), None);
    }

    #[test]
    fn sysfs_topology() {
        assert_eq!(topology_from_ids(&[]), (None, None));
        let ids = [
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
        ];
        assert_eq!(topology_from_ids(&ids), (Some(2), Some(4)));
        assert_eq!(topology_from_ids(&[(-1, 0), (-1, 1)]), (None, Some(2)));
    }

    #[test]
    fn threads() {
        assert_eq!(threads_per_core(Some(16), Some(12)), Some(2)); // hybrid
        assert_eq!(threads_per_core(Some(4), Some(0)), None);
        assert_eq!(threads_per_core(None, Some(2)), None);
    }

    #[test]
    fn khz() {
        assert_eq!(parse_khz_as_mhz("3700000\n"), Some(3700.0));
        assert_eq!(parse_khz_as_mhz("0"), None);
        assert_eq!(parse_khz_as_mhz("<unknown>"), None);
    }
}
