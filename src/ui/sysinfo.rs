//! `perflab sysinfo`: the machine disclosure as aligned `key: value` lines under headings.

use std::fmt::Display;

use crate::env::{CacheLevel, Environment};

/// One heading and its `key: value` lines.
pub type Section = (&'static str, Vec<(String, String)>);

/// The human text of `perflab sysinfo`: headings `host`, `cpu`, `caches`, `memory`, `os`
/// and `virtualization`, each followed by indented `key: value` lines whose values line up.
/// Figures that could not be read show as `unknown`. Plain text, no colour.
pub fn render_sysinfo(env: &Environment) -> String {
    let sections = sections(env);
    let width = sections
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|(k, _)| k.chars().count() + 1))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (heading, lines) in &sections {
        out.push_str(heading);
        out.push('\n');
        for (key, value) in lines {
            out.push_str(&format!("  {:<width$} {value}\n", format!("{key}:")));
        }
    }
    out
}

/// The `power` section of `perflab sysinfo`: every source found and whether it can be read.
pub fn render_power(sources: &[crate::env::power::PowerSourceInfo]) -> String {
    let mut out = String::from("power\n");
    if sources.is_empty() {
        out.push_str(&format!("  {}\n", crate::run::NO_POWER));
        return out;
    }
    for s in sources {
        let what = if s.counts_energy {
            "energy counter"
        } else {
            "watts"
        };
        let state = if s.readable {
            "readable"
        } else {
            "NOT readable"
        };
        out.push_str(&format!(
            "  {} {}: {what}, {state} ({})",
            s.kind, s.name, s.location
        ));
        if let Some(note) = &s.note {
            out.push_str(&format!("; {note}"));
        }
        out.push('\n');
    }
    if !sources.iter().any(|s| s.readable) {
        out.push_str("  none can be read: no watts are reported (as root, or give --power-cmd)\n");
    }
    out
}

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
    use crate::env::{CpuInfo, MemoryInfo, OsInfo, Virtualization};

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

    fn sample() -> Environment {
        Environment {
            hostname: Some("db1".into()),
            machine: None,
            os: OsInfo {
                kernel_release: Some("6.8.0-45-generic".into()),
                kernel_version: None,
                distro: Some("Ubuntu 24.04.1 LTS".into()),
                arch: "x86_64".into(),
            },
            cpu: CpuInfo {
                model: Some("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz".into()),
                logical_cpus: Some(64),
                mhz: Some(2100.4),
                flags_of_note: vec!["avx2".into(), "avx512f".into()],
                ..Default::default()
            },
            caches: vec![
                CacheLevel {
                    level: 1,
                    kind: "data".into(),
                    size_bytes: Some(32 << 10),
                    line_bytes: Some(64),
                    ways: Some(8),
                    shared_cpu_count: Some(2),
                    instances: Some(32),
                },
                CacheLevel {
                    level: 3,
                    kind: "unified".into(),
                    size_bytes: Some(22 << 20),
                    line_bytes: Some(64),
                    ways: Some(11),
                    shared_cpu_count: Some(32),
                    instances: Some(2),
                },
            ],
            memory: MemoryInfo {
                total_bytes: Some(192 << 30),
                swap_total_bytes: Some(0),
                ..Default::default()
            },
            virtualization: Virtualization::default(),
            load_average: Some([0.5, 1.0, 2.25]),
            clocksource: Some("tsc".into()),
        }
    }

    #[test]
    fn renders_aligned_sections() {
        let text = render_sysinfo(&sample());
        for heading in ["host", "cpu", "caches", "memory", "os", "virtualization"] {
            assert!(text.lines().any(|l| l == heading), "no heading {heading}");
        }
        assert!(text.contains("  L1d:"));
        assert!(text.contains("32 KiB, 8-way, 64 B lines, shared by 2 cpus, 32 instances"));
        assert!(text.contains("22 MiB, 11-way, 64 B lines, shared by 32 cpus, 2 instances"));
        assert!(text.contains("22 MiB (44 MiB in all)"));
        assert!(text.contains("192 GiB"));
        assert!(text.contains("2100 MHz"));
        assert!(text.contains("0.50 1.00 2.25"));
        assert!(!text.contains('\u{1b}'));
        // Every value starts in the same column.
        let columns: Vec<usize> = text
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| {
                let colon = l.find(':').unwrap();
                colon + l[colon + 1..].find(|c: char| c != ' ').unwrap() + 1
            })
            .collect();
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
    }

    #[test]
    fn renders_an_empty_record() {
        let text = render_sysinfo(&Environment::default());
        assert!(text.contains("unknown"));
        assert!(text.contains("none detected"));
        assert!(!text.contains("NaN"));
    }
}
