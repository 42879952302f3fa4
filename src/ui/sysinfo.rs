//! `perflab sysinfo`: the machine disclosure (`crate::view::disclosure`) as aligned
//! `key: value` lines under headings, and the power sources.

use crate::env::Environment;
use crate::view::disclosure::sections;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{CacheLevel, CpuInfo, MemoryInfo, OsInfo, Virtualization};

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
