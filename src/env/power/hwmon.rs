//! hwmon: the energy and power sensors of `/sys/class/hwmon`, which of them to add up, and
//! the meter over their counters, else their watts.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::sysfs::{Counter, Counters, SampledWatts, pread_value, read_trimmed, read_value_file};
use super::{PowerMeter, PowerMethod, PowerSourceInfo, Reader};

/// hwmon devices, under the sysfs root.
const HWMON: &str = "class/hwmon";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum HwmonKind {
    /// `energyK_input`, µJ, cumulative.
    Energy,
    /// `powerK_input`, µW.
    Power,
    /// `powerK_average`, µW, averaged by the device (read when there is no `powerK_input`).
    PowerAverage,
}

/// One energy or power sensor of a hwmon device.
#[derive(Debug, Clone)]
pub(super) struct HwmonSensor {
    /// `hwmon3`.
    device: String,
    /// The device's `name` (its driver): `amdgpu`, `power_meter`, `amd_energy`.
    driver: String,
    kind: HwmonKind,
    /// K of `powerK_input`.
    index: u32,
    label: Option<String>,
    path: PathBuf,
    value: Result<u64, String>,
}

impl HwmonSensor {
    /// `hwmon3 power1 (amdgpu PPT)`.
    fn name(&self) -> String {
        let attr = if self.kind == HwmonKind::Energy {
            "energy"
        } else {
            "power"
        };
        let what = match &self.label {
            Some(label) => format!("{} {label}", self.driver),
            None => self.driver.clone(),
        };
        format!("{} {attr}{} ({what})", self.device, self.index)
    }

    /// The ACPI power meter: the platform's own reading of the machine's power.
    fn is_wall(&self) -> bool {
        self.driver == "power_meter"
    }

    /// Labelled as a whole socket or package (`Esocket0`), one of several to add up.
    fn is_socket(&self) -> bool {
        self.label.as_deref().is_some_and(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("socket") || l.contains("package")
        })
    }

    pub(super) fn info(&self) -> PowerSourceInfo {
        let mut notes = Vec::new();
        if let Err(why) = &self.value {
            notes.push(why.clone());
        }
        if self.is_wall() {
            notes
                .push("the ACPI power meter: the platform's reading of the machine's power".into());
        }
        if self.kind == HwmonKind::PowerAverage {
            notes.push(format!(
                "an average over power{}_average_interval",
                self.index
            ));
        }
        PowerSourceInfo {
            kind: "hwmon".into(),
            name: self.name(),
            location: self.path.display().to_string(),
            readable: self.value.is_ok(),
            counts_energy: self.kind == HwmonKind::Energy,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

/// `energy3_input` → (Energy, 3); `power1_input`, `power1_average`; anything else → `None`.
fn parse_hwmon_attr(file: &str) -> Option<(HwmonKind, u32)> {
    let (stem, suffix) = file.split_once('_')?;
    let (kind, number) = if let Some(n) = stem.strip_prefix("energy") {
        match suffix {
            "input" => (HwmonKind::Energy, n),
            _ => return None,
        }
    } else {
        let n = stem.strip_prefix("power")?;
        match suffix {
            "input" => (HwmonKind::Power, n),
            "average" => (HwmonKind::PowerAverage, n),
            _ => return None,
        }
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((kind, number.parse().ok()?))
}

/// The number after a prefix (`hwmon12` → 12), to sort by; names without one sort last.
fn number_after(name: &str, prefix: &str) -> u32 {
    name.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .unwrap_or(u32::MAX)
}

/// The energy and power sensors under `sys`, by device number and then attribute; a power
/// sensor with both files is listed once, by its `powerK_input`.
pub(super) fn scan_hwmon(sys: &Path) -> Vec<HwmonSensor> {
    let dir = sys.join(HWMON);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut devices: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.starts_with("hwmon"))
        .collect();
    devices.sort_by_key(|d| (number_after(d, "hwmon"), d.clone()));

    let mut sensors = Vec::new();
    for device in devices {
        let path = dir.join(&device);
        let Ok(files) = fs::read_dir(&path) else {
            continue;
        };
        let mut attrs: Vec<(HwmonKind, u32, String)> = files
            .flatten()
            .filter_map(|f| {
                let file = f.file_name().to_str()?.to_owned();
                let (kind, index) = parse_hwmon_attr(&file)?;
                Some((kind, index, file))
            })
            .collect();
        attrs.sort();
        // powerK_average only where there is no powerK_input.
        let has_input = |k: u32, attrs: &[(HwmonKind, u32, String)]| {
            attrs
                .iter()
                .any(|(kind, index, _)| *kind == HwmonKind::Power && *index == k)
        };
        let kept: Vec<(HwmonKind, u32, String)> = attrs
            .iter()
            .filter(|(kind, index, _)| {
                *kind != HwmonKind::PowerAverage || !has_input(*index, &attrs)
            })
            .cloned()
            .collect();
        let driver = read_trimmed(&path.join("name")).unwrap_or_else(|| "?".into());
        for (kind, index, file) in kept {
            let stem = if kind == HwmonKind::Energy {
                "energy"
            } else {
                "power"
            };
            let file_path = path.join(&file);
            sensors.push(HwmonSensor {
                device: device.clone(),
                driver: driver.clone(),
                kind,
                index,
                label: read_trimmed(&path.join(format!("{stem}{index}_label"))),
                value: read_value_file(&file_path),
                path: file_path,
            });
        }
    }
    sensors
}

/// Of readable sensors of one sort, those to add up: the ACPI power meter alone, else every
/// socket or package sensor, else the first.
fn pick_sensors<'a>(set: &[&'a HwmonSensor]) -> Vec<&'a HwmonSensor> {
    if let Some(wall) = set.iter().find(|s| s.is_wall()) {
        return vec![*wall];
    }
    let sockets: Vec<&HwmonSensor> = set.iter().copied().filter(|s| s.is_socket()).collect();
    if sockets.is_empty() {
        set.iter().copied().take(1).collect()
    } else {
        sockets
    }
}

/// The hwmon meter: energy counters if any are readable, else power readings.
pub(super) fn hwmon_meter(sensors: &[HwmonSensor]) -> Option<PowerMeter> {
    let readable = |energy: bool| -> Vec<&HwmonSensor> {
        sensors
            .iter()
            .filter(|s| s.value.is_ok() && (s.kind == HwmonKind::Energy) == energy)
            .collect()
    };
    let energy = pick_sensors(&readable(true));
    let power = pick_sensors(&readable(false));

    // Each sensor is read once more on opening, as the meter's first reading. Counters
    // first; if none of them opens again (a sensor that went away, a permission that
    // changed since discovery), the power readings, rather than no meter at all.
    let mut domains = Vec::new();
    let mut counters = Vec::new();
    for s in &energy {
        if let Some(counter) = Counter::open(&s.path, None) {
            domains.push(s.name());
            counters.push(counter);
        }
    }
    let from_counters = !counters.is_empty();
    let (chosen, reader) = if from_counters {
        (energy, Reader::Counters(Counters::new(counters)))
    } else {
        let mut files = Vec::new();
        for s in &power {
            if let Ok(file) = File::open(&s.path)
                && pread_value(&file).is_some()
            {
                domains.push(s.name());
                files.push(file);
            }
        }
        (power, Reader::Watts(SampledWatts::new(files)?))
    };
    if domains.is_empty() {
        return None;
    }
    let wall_power = chosen.iter().all(|s| s.is_wall());
    let mut note = if wall_power {
        "the ACPI power meter: the platform's own reading of the machine's power".to_owned()
    } else {
        format!(
            "hwmon {}: the part the sensor sits on, not the wall; \
             other hwmon sensors are not added, as they may overlap",
            domains.join(" + ")
        )
    };
    if !from_counters {
        note.push_str("; sampled at each reading, integrated by the trapezoid rule");
    }
    Some(PowerMeter {
        method: PowerMethod {
            kind: "hwmon".into(),
            domains,
            from_counters,
            wall_power,
            note,
        },
        reader,
    })
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::env::disk::test_support::TempDir;
    use crate::env::power::discover_in;
    use crate::env::power::test_support::{close, names, probe, write};

    #[test]
    fn hwmon_attributes() {
        assert_eq!(
            parse_hwmon_attr("power1_input"),
            Some((HwmonKind::Power, 1))
        );
        assert_eq!(
            parse_hwmon_attr("power12_average"),
            Some((HwmonKind::PowerAverage, 12))
        );
        assert_eq!(
            parse_hwmon_attr("energy3_input"),
            Some((HwmonKind::Energy, 3))
        );
        for other in [
            "power1_cap",
            "power1_average_interval",
            "power1_label",
            "energy1_label",
            "temp1_input",
            "power_input",
            "power+1_input",
            "name",
        ] {
            assert_eq!(parse_hwmon_attr(other), None, "{other}");
        }
    }

    #[test]
    fn hwmon_power_is_integrated() {
        let tmp = TempDir::new("power-hwmon-watts");
        let root = &tmp.0;
        write(root, "class/hwmon/hwmon0/name", "acpitz\n");
        write(root, "class/hwmon/hwmon0/temp1_input", "27800\n");
        write(root, "class/hwmon/hwmon1/name", "amdgpu\n");
        write(root, "class/hwmon/hwmon1/power1_input", "15000000\n");
        write(root, "class/hwmon/hwmon1/power1_average", "14000000\n");
        write(root, "class/hwmon/hwmon1/power1_cap", "200000000\n");
        write(root, "class/hwmon/hwmon1/power1_label", "PPT\n");

        let found = discover_in(&probe(root), None);
        assert_eq!(names(&found), ["hwmon1 power1 (amdgpu PPT)"]);
        assert!(found[0].readable && !found[0].counts_energy);
        assert!(found[0].location.ends_with("hwmon1/power1_input"));

        let started = Instant::now();
        let mut meter = PowerMeter::open_in(&probe(root), None, Duration::from_secs(1))
            .expect("open")
            .expect("a meter");
        let m = meter.method().clone();
        assert_eq!(
            (m.kind.as_str(), m.from_counters, m.wall_power),
            ("hwmon", false, false)
        );
        assert_eq!(m.domains, ["hwmon1 power1 (amdgpu PPT)"]);
        thread::sleep(Duration::from_millis(100));
        write(root, "class/hwmon/hwmon1/power1_input", "25000000\n");
        let e = meter.energy_j().expect("energy");
        let elapsed = started.elapsed().as_secs_f64();
        // Between 15 W and 25 W over at least 100 ms and at most the time since open.
        assert!(
            e >= 15.0 * 0.1 && e <= 25.0 * elapsed,
            "{e} J in {elapsed} s"
        );
        assert_eq!(meter.errors(), 0);
    }

    /// Counters read at discovery that cannot be opened again when the meter starts: the
    /// power readings serve, rather than no meter.
    #[test]
    fn counters_that_fail_to_reopen_fall_back_to_power_readings() {
        let tmp = TempDir::new("power-hwmon-reopen");
        let root = &tmp.0;
        write(root, "class/hwmon/hwmon1/name", "amdgpu\n");
        write(root, "class/hwmon/hwmon1/power1_input", "15000000\n");
        write(root, "class/hwmon/hwmon2/name", "amd_energy\n");
        write(root, "class/hwmon/hwmon2/energy17_input", "10000000\n");
        write(root, "class/hwmon/hwmon2/energy17_label", "Esocket0\n");
        let sensors = scan_hwmon(root);
        assert!(
            sensors
                .iter()
                .any(|s| s.kind == HwmonKind::Energy && s.value.is_ok())
        );
        std::fs::remove_file(root.join("class/hwmon/hwmon2/energy17_input")).unwrap();
        let meter = hwmon_meter(&sensors).expect("the power readings serve");
        let m = meter.method();
        assert!(!m.from_counters);
        assert_eq!(m.domains, ["hwmon1 power1 (amdgpu)"]);
    }

    #[test]
    fn hwmon_energy_counters_win_and_sockets_add_up() {
        let tmp = TempDir::new("power-hwmon-energy");
        let root = &tmp.0;
        write(root, "class/hwmon/hwmon1/name", "amdgpu\n");
        write(root, "class/hwmon/hwmon1/power1_input", "15000000\n");
        write(root, "class/hwmon/hwmon2/name", "amd_energy\n");
        for (k, label, uj) in [
            (1, "Ecore000", 5_000_000),
            (17, "Esocket0", 10_000_000),
            (18, "Esocket1", 20_000_000),
        ] {
            write(
                root,
                &format!("class/hwmon/hwmon2/energy{k}_input"),
                &format!("{uj}\n"),
            );
            write(
                root,
                &format!("class/hwmon/hwmon2/energy{k}_label"),
                &format!("{label}\n"),
            );
        }

        let found = discover_in(&probe(root), None);
        assert_eq!(
            names(&found),
            [
                "hwmon1 power1 (amdgpu)",
                "hwmon2 energy1 (amd_energy Ecore000)",
                "hwmon2 energy17 (amd_energy Esocket0)",
                "hwmon2 energy18 (amd_energy Esocket1)"
            ]
        );
        assert!(found[1..].iter().all(|s| s.counts_energy));

        let mut meter = PowerMeter::open_in(&probe(root), None, Duration::from_secs(1))
            .expect("open")
            .expect("a meter");
        let m = meter.method().clone();
        assert!(m.from_counters && !m.wall_power);
        assert_eq!(
            m.domains,
            [
                "hwmon2 energy17 (amd_energy Esocket0)",
                "hwmon2 energy18 (amd_energy Esocket1)"
            ]
        );
        write(root, "class/hwmon/hwmon2/energy1_input", "105000000\n");
        write(root, "class/hwmon/hwmon2/energy17_input", "13000000\n");
        write(root, "class/hwmon/hwmon2/energy18_input", "24000000\n");
        let e = meter.energy_j().expect("energy");
        assert!(close(e, 7.0), "{e}");
        // No range: a decrease is a reset, the new value all new energy.
        write(root, "class/hwmon/hwmon2/energy17_input", "1000000\n");
        let e = meter.energy_j().expect("energy");
        assert!(close(e, 8.0), "{e}");
    }
}
