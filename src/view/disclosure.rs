//! The machine's disclosure as headings of `key: value` lines (host, cpu, caches, memory, os,
//! virtualization): `perflab sysinfo` aligns them on the terminal, and a report's disclosure
//! table holds the same lines. Figures that could not be read say `unknown`.

use std::fmt::Display;

use crate::env::{CacheLevel, Environment};

/// One heading and its `key: value` lines.
pub type Section = (&'static str, Vec<(String, String)>);

/// The disclosure as headings of `key: value` lines (shared with reports).
pub fn sections(env: &Environment) -> Vec<Section> {
    let (cpu, mem, os, virt) = (&env.cpu, &env.memory, &env.os, &env.virtualization);

    let host = vec![
        line("hostname", known(env.hostname.as_ref())),
        line(
            "load average",
            env.load_average.map_or_else(unknown, |[a, b, c]| {
                format!("{a:.2} {b:.2} {c:.2} (1, 5, 15 min)")
            }),
        ),
    ];

    let cpu_lines = vec![
        line("model", known(cpu.model.as_ref())),
        line("vendor", known(cpu.vendor.as_ref())),
        line("logical cpus", known(cpu.logical_cpus)),
        line("physical cores", known(cpu.physical_cores)),
        line("sockets", known(cpu.sockets)),
        line("threads per core", known(cpu.threads_per_core)),
        line("numa nodes", known(cpu.numa_nodes)),
        line("clock now", mhz(cpu.mhz)),
        line("clock max", mhz(cpu.max_mhz)),
        line(
            "governor",
            cpu.governor
                .clone()
                .unwrap_or_else(|| "unknown (no cpufreq)".to_string()),
        ),
        line(
            "flags of note",
            if cpu.flags_of_note.is_empty() {
                "none".to_string()
            } else {
                cpu.flags_of_note.join(" ")
            },
        ),
    ];

    let mut caches: Vec<(String, String)> = env
        .caches
        .iter()
        .map(|c| (cache_name(c), cache_description(c)))
        .collect();
    if caches.is_empty() {
        caches.push(line("caches", unknown()));
    } else {
        caches.push(line(
            "last level",
            match (env.llc_bytes(), env.llc_total_bytes()) {
                (Some(one), Some(all)) => {
                    format!("{} ({} in all)", human_bytes(one), human_bytes(all))
                }
                (Some(one), None) => human_bytes(one),
                _ => unknown(),
            },
        ));
    }

    let memory = vec![
        line("total", bytes(mem.total_bytes)),
        line("available", bytes(mem.available_bytes)),
        line(
            "swap",
            match mem.swap_total_bytes {
                Some(0) => "none".to_string(),
                b => bytes(b),
            },
        ),
        line("huge page size", bytes(mem.hugepage_bytes)),
        line(
            "transparent hugepages",
            known(mem.transparent_hugepages.as_ref()),
        ),
    ];

    let os_lines = vec![
        line("distro", known(os.distro.as_ref())),
        line("kernel", known(os.kernel_release.as_ref())),
        line("kernel build", known(os.kernel_version.as_ref())),
        line("arch", known(Some(&os.arch).filter(|a| !a.is_empty()))),
        line("clocksource", known(env.clocksource.as_ref())),
    ];

    let none = |v: &Option<String>| v.clone().unwrap_or_else(|| "none detected".to_string());
    let virt_lines = vec![
        line("hypervisor", none(&virt.hypervisor)),
        line("container", none(&virt.container)),
    ];

    vec![
        ("host", host),
        ("cpu", cpu_lines),
        ("caches", caches),
        ("memory", memory),
        ("os", os_lines),
        ("virtualization", virt_lines),
    ]
}

fn line(key: &str, value: String) -> (String, String) {
    (key.to_string(), value)
}

fn unknown() -> String {
    "unknown".to_string()
}

fn known(value: Option<impl Display>) -> String {
    value.map_or_else(unknown, |v| v.to_string())
}

fn mhz(value: Option<f64>) -> String {
    value.map_or_else(unknown, |v| format!("{v:.0} MHz"))
}

fn bytes(value: Option<u64>) -> String {
    value.map_or_else(unknown, human_bytes)
}

/// `L1d`, `L1i`, `L2` ...
fn cache_name(c: &CacheLevel) -> String {
    match c.kind.as_str() {
        "data" => format!("L{}d", c.level),
        "instruction" => format!("L{}i", c.level),
        "unified" => format!("L{}", c.level),
        other => format!("L{} {other}", c.level),
    }
}

/// `32 MiB, 16-way, 64 B lines, shared by 16 cpus, 2 instances`, leaving out what is unknown.
fn cache_description(c: &CacheLevel) -> String {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let parts: Vec<String> = [
        Some(bytes(c.size_bytes)),
        c.ways.filter(|&w| w > 0).map(|w| format!("{w}-way")),
        c.line_bytes.map(|l| format!("{l} B lines")),
        c.shared_cpu_count
            .map(|n| format!("shared by {}", plural(n, "cpu"))),
        c.instances.map(|n| plural(n, "instance")),
    ]
    .into_iter()
    .flatten()
    .collect();
    parts.join(", ")
}

/// A byte count in binary units: `512 B`, `48 KiB`, `32 MiB`, `23.5 GiB`. Whole numbers
/// print without a fraction.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >= 1u64 << (10 * (unit + 1)) {
        unit += 1;
    }
    let scale = 1u64 << (10 * unit);
    if bytes.is_multiple_of(scale) {
        return format!("{} {}", bytes / scale, UNITS[unit]);
    }
    let value = bytes as f64 / scale as f64;
    let text = format!("{value:.1}");
    if text == "1024.0" && unit + 1 < UNITS.len() {
        return format!("1 {}", UNITS[unit + 1]);
    }
    format!("{text} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1 KiB");
        assert_eq!(human_bytes(48 << 10), "48 KiB");
        assert_eq!(human_bytes(32 << 20), "32 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(24684092 * 1024), "23.5 GiB");
        assert_eq!(human_bytes((1 << 30) - 1), "1 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }
}
