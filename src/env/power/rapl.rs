//! RAPL through powercap: the `intel-rapl` zones and what each is to the sum, the counters'
//! wrap ([`energy_delta`]), and the meter over the packages and their DRAM.

use std::fs;
use std::path::{Path, PathBuf};

use super::sysfs::{Counter, Counters, read_trimmed, read_value_file};
use super::{PowerMeter, PowerMethod, PowerSourceInfo, Reader};

/// Powercap zones, under the sysfs root.
const POWERCAP: &str = "class/powercap";

const RAPL_NOT_WALL: &str =
    "RAPL counts the CPU packages and DRAM, not the wall: fans, disks, PSU losses are missing";
const RAPL_ROOT_ONLY: &str =
    "permission denied: energy_uj is readable by root only since Linux 5.10";

/// How much a cumulative energy counter rose from `prev` to `now` (in their unit). A counter
/// below its previous value wrapped at `range` (RAPL's `max_energy_range_uj`): it went on
/// from `prev` to `range`, then from 0 to `now`. Without a range (hwmon's `energyK_input`), or
/// with one below `prev` that cannot be a wrap, a decrease is a reset (a driver reloaded): the
/// counter restarted from 0 and rose to `now`.
pub fn energy_delta(prev: u64, now: u64, range: Option<u64>) -> u64 {
    if now >= prev {
        return now - prev;
    }
    match range {
        // The counter's last value is `range` itself, and the step from it to 0 is one
        // unit of the 32-bit register under it (`range` is 2^32 - 1 units): without that
        // unit every wrap would lose 15 to 61 µJ.
        Some(range) if range >= prev => (range - prev)
            .saturating_add(now)
            .saturating_add(register_unit(range)),
        _ => now,
    }
}

/// One unit of the 32-bit energy register whose full range is `range` (RAPL's
/// `max_energy_range_uj` is `0xffff_ffff` units), rounded to the counter's unit.
fn register_unit(range: u64) -> u64 {
    const STEPS: u128 = 0xffff_ffff;
    ((u128::from(range) + STEPS / 2) / STEPS) as u64
}

/// What a RAPL zone is to the sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RaplRole {
    /// A top-level `package-N`: summed.
    Package,
    /// `dram`, a package's subzone (or, on some servers, top-level): summed.
    Dram,
    /// `core`, `uncore` and any other subzone: inside its package.
    Inside,
    /// `psys`: the platform, its packages included.
    Platform,
    /// A top-level zone of another name: not summed.
    Other,
}

/// One `intel-rapl:N[:M]` (or `intel-rapl-mmio:N[:M]`) zone.
#[derive(Debug, Clone)]
pub(super) struct RaplZone {
    /// The directory name: `intel-rapl:0`, `intel-rapl:0:1`, `intel-rapl-mmio:0`.
    id: String,
    mmio: bool,
    /// `(0, None)` for `intel-rapl:0`, `(0, Some(1))` for `intel-rapl:0:1`.
    index: (u32, Option<u32>),
    /// The zone's `name`: `package-0`, `core`, `dram`, `psys` ...
    name: String,
    /// The package's name for a subzone.
    parent: Option<String>,
    role: RaplRole,
    energy_path: PathBuf,
    /// The counter at the scan, or why it could not be read.
    energy: Result<u64, String>,
    range_uj: Option<u64>,
    /// MMIO zones found to be this package again.
    duplicates: Vec<String>,
}

impl RaplZone {
    /// `package-0`, or `package-0/dram` for a subzone.
    fn label(&self) -> String {
        match &self.parent {
            Some(parent) => format!("{parent}/{}", self.name),
            None => self.name.clone(),
        }
    }

    pub(super) fn info(&self) -> PowerSourceInfo {
        let mut notes = Vec::new();
        if let Err(why) = &self.energy {
            notes.push(why.clone());
        }
        match self.role {
            RaplRole::Inside => notes.push(format!(
                "inside {}: not summed",
                self.parent.as_deref().unwrap_or("its package")
            )),
            RaplRole::Platform => {
                notes.push("the platform (psys), packages included: not summed".into())
            }
            RaplRole::Other => notes.push("not summed".into()),
            RaplRole::Package | RaplRole::Dram => {}
        }
        for dup in &self.duplicates {
            notes.push(format!(
                "also exposed as {dup} (the same package through MMIO): not listed, not summed"
            ));
        }
        PowerSourceInfo {
            kind: "rapl".into(),
            name: self.label(),
            location: self.energy_path.display().to_string(),
            readable: self.energy.is_ok(),
            counts_energy: true,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

/// `intel-rapl:0` → (false, (0, None)); `intel-rapl-mmio:0:1` → (true, (0, Some(1))); the
/// control-type directory `intel-rapl` and other powercap zones (`dtpm`) → `None`.
fn parse_zone_id(dir_name: &str) -> Option<(bool, (u32, Option<u32>))> {
    let (kind, rest) = dir_name.split_once(':')?;
    let mmio = match kind {
        "intel-rapl" => false,
        "intel-rapl-mmio" => true,
        _ => return None,
    };
    let mut parts = rest.split(':');
    let package = parts.next()?.parse().ok()?;
    let sub = match parts.next() {
        Some(s) => Some(s.parse().ok()?),
        None => None,
    };
    parts.next().is_none().then_some((mmio, (package, sub)))
}

/// The RAPL zones under `sys`, packages each followed by their subzones, MMIO duplicates of
/// a package folded into its note.
pub(super) fn scan_rapl(sys: &Path) -> Vec<RaplZone> {
    let dir = sys.join(POWERCAP);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut zones: Vec<RaplZone> = entries
        .flatten()
        .filter_map(|entry| {
            let id = entry.file_name().to_str()?.to_owned();
            let (mmio, index) = parse_zone_id(&id)?;
            let zone = dir.join(&id);
            let energy_path = zone.join("energy_uj");
            let energy = read_value_file(&energy_path).map_err(|why| {
                if why.starts_with("permission denied") {
                    RAPL_ROOT_ONLY.to_owned()
                } else {
                    why
                }
            });
            Some(RaplZone {
                name: read_trimmed(&zone.join("name")).unwrap_or_else(|| id.clone()),
                id,
                mmio,
                index,
                parent: None,
                role: RaplRole::Other,
                energy_path,
                energy,
                range_uj: read_trimmed(&zone.join("max_energy_range_uj"))
                    .and_then(|t| t.parse().ok())
                    .filter(|&r: &u64| r > 0),
                duplicates: Vec::new(),
            })
        })
        .collect();
    zones.sort_by_key(|z| (z.mmio, z.index));

    let tops: Vec<(bool, u32, String)> = zones
        .iter()
        .filter(|z| z.index.1.is_none())
        .map(|z| (z.mmio, z.index.0, z.name.clone()))
        .collect();
    for z in &mut zones {
        let top = z.index.1.is_none();
        z.role = match z.name.as_str() {
            "dram" => RaplRole::Dram,
            _ if !top => RaplRole::Inside,
            n if n.starts_with("package") => RaplRole::Package,
            "psys" => RaplRole::Platform,
            _ => RaplRole::Other,
        };
        if !top {
            let (mmio, package) = (z.mmio, z.index.0);
            z.parent = Some(
                tops.iter()
                    .find(|(m, p, _)| *m == mmio && *p == package)
                    .map_or_else(|| format!("package {package}"), |t| t.2.clone()),
            );
        }
    }

    // An MMIO package named as an MSR package is that package again: drop it and its
    // subzones, and say so on the package.
    let duplicates: Vec<(u32, String, String)> = zones
        .iter()
        .filter(|z| z.mmio && z.index.1.is_none())
        .filter(|z| tops.iter().any(|(m, _, name)| !m && *name == z.name))
        .map(|z| (z.index.0, z.id.clone(), z.name.clone()))
        .collect();
    for (package, id, name) in &duplicates {
        zones.retain(|z| !(z.mmio && z.index.0 == *package));
        if let Some(original) = zones
            .iter_mut()
            .find(|z| !z.mmio && z.index.1.is_none() && z.name == *name)
        {
            original.duplicates.push(id.clone());
        }
    }
    zones
}

/// The RAPL meter: readable packages and DRAM zones, `None` when there are none.
pub(super) fn rapl_meter(zones: &[RaplZone]) -> Option<PowerMeter> {
    let mut counters = Vec::new();
    let mut domains = Vec::new();
    let mut missing = Vec::new();
    let mut has_dram = false;
    for z in zones
        .iter()
        .filter(|z| matches!(z.role, RaplRole::Package | RaplRole::Dram))
    {
        match Counter::open(&z.energy_path, z.range_uj) {
            Some(c) => {
                counters.push(c);
                domains.push(z.label());
                has_dram |= z.role == RaplRole::Dram;
            }
            None => missing.push(z.label()),
        }
    }
    if counters.is_empty() {
        return None;
    }
    let mut note = RAPL_NOT_WALL.to_owned();
    if !has_dram {
        note.push_str("; no DRAM zone here, so memory is missing too");
    }
    if !missing.is_empty() {
        note.push_str(&format!(
            "; unreadable, not counted: {}",
            missing.join(", ")
        ));
    }
    Some(PowerMeter {
        method: PowerMethod {
            kind: "rapl".into(),
            domains,
            from_counters: true,
            wall_power: false,
            note,
        },
        reader: Reader::Counters(Counters::new(counters)),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    use super::*;
    use crate::env::disk::test_support::TempDir;
    use crate::env::power::discover_in;
    use crate::env::power::test_support::{close, names, probe, rapl_tree, set_uj, write};

    #[test]
    fn energy_delta_wraps_and_resets() {
        assert_eq!(energy_delta(100, 150, Some(1000)), 50);
        assert_eq!(energy_delta(900, 100, Some(1000)), 200);
        assert_eq!(energy_delta(900, 100, None), 100);
        // A "range" below the previous value is no wrap point: a reset.
        assert_eq!(energy_delta(900, 100, Some(500)), 100);
        assert_eq!(energy_delta(7, 7, None), 0);
        assert_eq!(
            energy_delta(u64::MAX - 1, 5, Some(u64::MAX)),
            1 + 5 + (1 << 32) + 1
        );
        assert_eq!(
            energy_delta(900, 100, Some(1000)),
            200,
            "no whole unit below 2^32 - 1"
        );
        // A real package's range: 262143328850 µJ, 2^32 - 1 units of 61.035 µJ. From its
        // last value to 0 is one unit, so a wrap from 10 below it to 100 is 171 µJ.
        let range = 262_143_328_850;
        assert_eq!(energy_delta(range - 10, 100, Some(range)), 10 + 100 + 61);
    }

    #[test]
    fn zone_ids() {
        assert_eq!(parse_zone_id("intel-rapl:0"), Some((false, (0, None))));
        assert_eq!(parse_zone_id("intel-rapl:1:2"), Some((false, (1, Some(2)))));
        assert_eq!(parse_zone_id("intel-rapl-mmio:0"), Some((true, (0, None))));
        assert_eq!(parse_zone_id("intel-rapl"), None);
        assert_eq!(parse_zone_id("dtpm:0"), None);
        assert_eq!(parse_zone_id("intel-rapl:0:1:2"), None);
        assert_eq!(parse_zone_id("intel-rapl:x"), None);
    }

    #[test]
    fn rapl_zones_are_listed_with_mmio_duplicate_folded() {
        let tmp = TempDir::new("power-rapl-list");
        rapl_tree(&tmp.0);
        let found = discover_in(&probe(&tmp.0), None);
        assert_eq!(
            names(&found),
            [
                "package-0",
                "package-0/core",
                "package-0/dram",
                "package-1",
                "package-1/core",
                "package-1/dram"
            ]
        );
        assert!(
            found
                .iter()
                .all(|s| s.kind == "rapl" && s.readable && s.counts_energy)
        );
        assert!(
            found[0]
                .location
                .ends_with("class/powercap/intel-rapl:0/energy_uj")
        );
        let note = |i: usize| found[i].note.as_deref().unwrap_or("");
        assert!(note(0).contains("intel-rapl-mmio:0"), "{}", note(0));
        assert!(note(1).contains("inside package-0"), "{}", note(1));
        assert_eq!(found[2].note, None);
        assert_eq!(found[3].note, None);
    }

    #[test]
    fn rapl_meter_sums_packages_and_dram_across_a_wrap() {
        let tmp = TempDir::new("power-rapl-meter");
        let root = &tmp.0;
        rapl_tree(root);
        let mut meter = PowerMeter::open_in(&probe(root), None, Duration::from_secs(1))
            .expect("open")
            .expect("a meter");
        let m = meter.method().clone();
        assert_eq!(m.kind, "rapl");
        assert_eq!(
            m.domains,
            ["package-0", "package-0/dram", "package-1", "package-1/dram"]
        );
        assert!(m.from_counters && !m.wall_power);
        assert!(m.note.contains("not the wall"), "{}", m.note);
        assert_eq!(meter.energy_j(), Some(0.0));

        // 10 + 1 + 20 + 2 J; the cores' 100 J are inside the packages.
        set_uj(root, "intel-rapl:0", 11_000_000);
        set_uj(root, "intel-rapl:0:1", 1_200_000);
        set_uj(root, "intel-rapl:1", 22_000_000);
        set_uj(root, "intel-rapl:1:1", 2_300_000);
        set_uj(root, "intel-rapl:0:0", 100_500_000);
        set_uj(root, "intel-rapl-mmio:0", 11_000_000);
        let e = meter.energy_j().expect("energy");
        assert!(close(e, 33.0), "{e}");

        // package-1 wraps at 100 J: 22 J → 100 J → 0 → 1 J is 79 J.
        set_uj(root, "intel-rapl:1", 1_000_000);
        let e = meter.energy_j().expect("energy");
        assert!(close(e, 112.0), "{e}");

        // A file that holds no number is a failed read; its rise is counted when it reads again.
        set_uj(root, "intel-rapl:0:1", 0);
        write(root, "class/powercap/intel-rapl:0:1/energy_uj", "garbage\n");
        assert_eq!(meter.energy_j(), None);
        assert_eq!(meter.errors(), 1);
        set_uj(root, "intel-rapl:0:1", 6_200_000);
        let e = meter.energy_j().expect("energy");
        assert!(close(e, 117.0), "{e}");
        assert_eq!(meter.errors(), 1);
    }

    #[test]
    fn unreadable_energy_is_reported_not_used() {
        let tmp = TempDir::new("power-rapl-denied");
        let root = &tmp.0;
        write(root, "class/powercap/intel-rapl:0/name", "package-0\n");
        set_uj(root, "intel-rapl:0", 1_000_000);
        let path = root.join("class/powercap/intel-rapl:0/energy_uj");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).expect("chmod");
        // As root, mode 000 does not stop a read: the test holds either way.
        let denied = fs::read_to_string(&path).is_err();

        let found = discover_in(&probe(root), None);
        assert_eq!(names(&found), ["package-0"]);
        assert_eq!(found[0].readable, !denied);
        let meter = PowerMeter::open_in(&probe(root), None, Duration::from_secs(1)).expect("open");
        if denied {
            assert_eq!(found[0].note.as_deref(), Some(RAPL_ROOT_ONLY));
            assert!(meter.is_none());
        } else {
            assert_eq!(found[0].note, None);
            assert_eq!(meter.expect("a meter").method().kind, "rapl");
        }
    }
}
