//! Memory: `/proc/meminfo` and `/sys/kernel/mm/transparent_hugepage/enabled`.

use serde::{Deserialize, Serialize};

/// Main memory as the kernel reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryInfo {
    /// `MemTotal`.
    pub total_bytes: Option<u64>,
    /// `MemAvailable` at collection (kernel's estimate of memory usable without swapping).
    pub available_bytes: Option<u64>,
    /// `SwapTotal`.
    pub swap_total_bytes: Option<u64>,
    /// `Hugepagesize`: the default huge page size.
    pub hugepage_bytes: Option<u64>,
    /// The bracketed word of `transparent_hugepage/enabled`: `always`, `madvise` or `never`.
    pub transparent_hugepages: Option<String>,
}

/// One `/proc/meminfo` value in bytes (`kB` is KiB; a value without unit is taken as is).
fn meminfo_value(value: &str) -> Option<u64> {
    let mut words = value.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        None => Some(n),
        Some(u) if u.eq_ignore_ascii_case("kb") => n.checked_mul(1024),
        Some(_) => None,
    }
}

/// The figures of `/proc/meminfo`; `transparent_hugepages` is left `None` (see
/// [`parse_thp_enabled`]).
pub fn parse_meminfo(text: &str) -> MemoryInfo {
    let mut info = MemoryInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "MemTotal" => &mut info.total_bytes,
            "MemAvailable" => &mut info.available_bytes,
            "SwapTotal" => &mut info.swap_total_bytes,
            "Hugepagesize" => &mut info.hugepage_bytes,
            _ => continue,
        };
        if slot.is_none() {
            *slot = meminfo_value(value);
        }
    }
    info
}

/// The selected mode of a sysfs choice file such as `always [madvise] never`.
pub fn parse_thp_enabled(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24684092 kB
MemFree:        24007612 kB
MemAvailable:   24111292 kB
Buffers:            1264 kB
Cached:           330992 kB
SwapCached:            0 kB
Active:           113624 kB
Inactive:         365240 kB
SwapTotal:       8388604 kB
SwapFree:        8388604 kB
Dirty:                 0 kB
AnonHugePages:     55296 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap4k:      200512 kB
DirectMap2M:     8187904 kB
DirectMap1G:    17825792 kB
";

    #[test]
    fn meminfo() {
        let m = parse_meminfo(MEMINFO);
        assert_eq!(m.total_bytes, Some(24684092 * 1024));
        assert_eq!(m.available_bytes, Some(24111292 * 1024));
        assert_eq!(m.swap_total_bytes, Some(8388604 * 1024));
        assert_eq!(m.hugepage_bytes, Some(2 << 20));
        assert_eq!(m.transparent_hugepages, None);
    }

    #[test]
    fn old_kernel_without_memavailable() {
        let m = parse_meminfo("MemTotal: 1024 kB\nMemFree: 512 kB\nSwapTotal: 0 kB\n");
        assert_eq!(m.total_bytes, Some(1 << 20));
        assert_eq!(m.available_bytes, None);
        assert_eq!(m.swap_total_bytes, Some(0));
        assert_eq!(m.hugepage_bytes, None);
    }

    #[test]
    fn malformed_meminfo() {
        assert_eq!(parse_meminfo(""), MemoryInfo::default());
        let m = parse_meminfo(
            "MemTotal\nMemTotal: lots kB\nMemAvailable: 18446744073709551615 kB\n\
             SwapTotal: 12 MB\nHugepagesize: -2048 kB\n",
        );
        assert_eq!(m, MemoryInfo::default());
    }

    #[test]
    fn thp() {
        assert_eq!(
            parse_thp_enabled("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_thp_enabled("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(parse_thp_enabled("always madvise never"), None);
        assert_eq!(parse_thp_enabled("[] x"), None);
        assert_eq!(parse_thp_enabled(""), None);
    }
}
