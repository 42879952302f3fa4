//! CPU caches as seen from cpu0: `/sys/devices/system/cpu/cpu0/cache/index*/`.

use serde::{Deserialize, Serialize};

use super::cpu::parse_cpu_list;

/// One cache of cpu0 (one `index*` directory).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheLevel {
    /// 1, 2, 3 ... (`level`).
    pub level: u8,
    /// `data`, `instruction` or `unified` (`type`, lower-cased).
    pub kind: String,
    /// Size of one instance (`size`, e.g. `32768K`).
    pub size_bytes: Option<u64>,
    /// `coherency_line_size`.
    pub line_bytes: Option<u64>,
    /// `ways_of_associativity`.
    pub ways: Option<u32>,
    /// Logical CPUs sharing one instance (`shared_cpu_list`).
    pub shared_cpu_count: Option<u32>,
    /// Instances in the machine: logical CPUs / `shared_cpu_count`, rounded up, at least 1.
    pub instances: Option<u32>,
}

/// The text of the files of one `index*` directory; `None` for a file that could not be read.
#[derive(Debug, Clone, Copy, Default)]
pub struct CacheIndexText<'a> {
    pub level: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub size: Option<&'a str>,
    pub coherency_line_size: Option<&'a str>,
    pub ways_of_associativity: Option<&'a str>,
    pub shared_cpu_list: Option<&'a str>,
}

/// A cache from its `index*` files. `None` when the level is missing or malformed.
pub fn parse_cache_index(
    files: &CacheIndexText<'_>,
    logical_cpus: Option<u32>,
) -> Option<CacheLevel> {
    let level: u8 = files.level?.trim().parse().ok()?;
    let kind = match files.kind.map(|k| k.trim().to_ascii_lowercase()) {
        Some(k) if !k.is_empty() => k,
        _ => "unknown".to_string(),
    };
    let shared_cpu_count = files.shared_cpu_list.and_then(parse_cpu_list);
    let instances = match (logical_cpus, shared_cpu_count) {
        (Some(l), Some(s)) if s > 0 => Some(l.div_ceil(s).max(1)),
        _ => None,
    };
    Some(CacheLevel {
        level,
        kind,
        size_bytes: files.size.and_then(parse_size),
        line_bytes: files
            .coherency_line_size
            .and_then(|t| t.trim().parse().ok())
            .filter(|&n: &u64| n > 0),
        ways: files
            .ways_of_associativity
            .and_then(|t| t.trim().parse().ok()),
        shared_cpu_count,
        instances,
    })
}

/// A sysfs size such as `48K`, `1024K`, `32M` or `512` as bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, multiplier) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&text[..i], 1 << 20),
        (i, 'G' | 'g') => (&text[..i], 1 << 30),
        _ => (text, 1),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(multiplier).filter(|&b| b > 0)
}

/// The highest-level data or unified cache: the last-level cache.
pub fn last_level(caches: &[CacheLevel]) -> Option<&CacheLevel> {
    caches
        .iter()
        .filter(|c| c.kind == "data" || c.kind == "unified")
        .filter(|c| c.size_bytes.is_some())
        .max_by_key(|c| (c.level, c.size_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index<'a>(
        level: &'a str,
        kind: &'a str,
        size: &'a str,
        shared: &'a str,
    ) -> CacheIndexText<'a> {
        CacheIndexText {
            level: Some(level),
            kind: Some(kind),
            size: Some(size),
            coherency_line_size: Some("64\n"),
            ways_of_associativity: Some("16\n"),
            shared_cpu_list: Some(shared),
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("48K\n"), Some(48 * 1024));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("0K"), None);
        assert_eq!(parse_size("-4K"), None);
        assert_eq!(parse_size("99999999999999999999K"), None);
        assert_eq!(parse_size("18014398509481984K"), None); // overflows u64
        assert_eq!(parse_size("12é"), None);
    }

    #[test]
    fn l3_shared_by_a_socket_of_a_two_socket_machine() {
        // 2 sockets x 16 cores x 2 threads: the L3 of cpu0 is shared with its 31 siblings.
        let c = parse_cache_index(
            &index("3\n", "Unified\n", "22528K\n", "0-15,32-47\n"),
            Some(64),
        )
        .unwrap();
        assert_eq!(c.level, 3);
        assert_eq!(c.kind, "unified");
        assert_eq!(c.size_bytes, Some(22528 * 1024));
        assert_eq!(c.line_bytes, Some(64));
        assert_eq!(c.ways, Some(16));
        assert_eq!(c.shared_cpu_count, Some(32));
        assert_eq!(c.instances, Some(2));
    }

    #[test]
    fn private_l1() {
        let c = parse_cache_index(&index("1", "Data", "48K", "0,32"), Some(64)).unwrap();
        assert_eq!(c.kind, "data");
        assert_eq!(c.shared_cpu_count, Some(2));
        assert_eq!(c.instances, Some(32));
        let c = parse_cache_index(&index("1", "Instruction", "32K", "0"), Some(2)).unwrap();
        assert_eq!(c.kind, "instruction");
        assert_eq!(c.instances, Some(2));
    }

    #[test]
    fn instances_at_least_one() {
        // A guest that sees fewer CPUs than share the cache.
        let c = parse_cache_index(&index("3", "Unified", "32M", "0-7"), Some(2)).unwrap();
        assert_eq!(c.instances, Some(1));
    }

    #[test]
    fn missing_files() {
        assert_eq!(parse_cache_index(&CacheIndexText::default(), Some(4)), None);
        assert_eq!(
            parse_cache_index(
                &CacheIndexText {
                    level: Some("x"),
                    ..Default::default()
                },
                None
            ),
            None
        );
        let c = parse_cache_index(
            &CacheIndexText {
                level: Some("2"),
                ..Default::default()
            },
            Some(4),
        )
        .unwrap();
        assert_eq!(
            c,
            CacheLevel {
                level: 2,
                kind: "unknown".into(),
                ..Default::default()
            }
        );
    }

    #[test]
    fn llc_is_highest_data_or_unified() {
        let caches: Vec<CacheLevel> = [
            index("1", "Data", "48K", "0"),
            index("1", "Instruction", "32K", "0"),
            index("2", "Unified", "1024K", "0"),
            index("3", "Unified", "32768K", "0-1"),
        ]
        .iter()
        .filter_map(|f| parse_cache_index(f, Some(2)))
        .collect();
        assert_eq!(last_level(&caches).unwrap().size_bytes, Some(32 << 20));
        assert_eq!(last_level(&caches[..2]).unwrap().size_bytes, Some(48 << 10));
        assert_eq!(last_level(&caches[1..2]), None);
        assert_eq!(last_level(&[]), None);
    }
}
