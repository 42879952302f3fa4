//! Where perflab reads watts from, and the meter that turns them into joules.
//!
//! perflab records the energy of a step beside its throughput when the machine offers a
//! readable power source. [`discover`] lists every source found, readable or not and why
//! (`perflab sysinfo`, the record); [`PowerMeter::open`] chooses one, and the sampler calls
//! [`PowerMeter::energy_j`] once a second on the measuring thread for the joules since open.
//!
//! # Sources, in the order the meter prefers them
//!
//! | Kind | Where | What it measures | Energy from |
//! |---|---|---|---|
//! | `command` | the user's `--power-cmd`, run as `sh -c CMD` every interval; the first number it prints is watts | what the user points it at (a PDU, a smart plug): taken for wall power | samples, integrated |
//! | `ipmi` | `ipmitool dcmi power reading`, when `ipmitool` is on `PATH` and `/dev/ipmi0` (or `/dev/ipmi/0`, `/dev/ipmidev/0`) exists | the BMC's reading of the power supplies' input: wall power | samples, integrated |
//! | `rapl` | `/sys/class/powercap/intel-rapl:N` (a package) and `intel-rapl:N:M` (its subzones): `name`, `energy_uj`, `max_energy_range_uj` | the CPU packages and their DRAM (Intel since Sandy Bridge; AMD since Zen, packages and cores only) | counters |
//! | `hwmon` | `/sys/class/hwmon/hwmonN/`: `energyK_input` (µJ), else `powerK_input` or `powerK_average` (µW); `powerK_label`, `energyK_label`, `name` | the part the sensor sits on (a GPU, a socket, a regulator); the ACPI `power_meter`, the machine | counters, else samples, integrated |
//!
//! Why this order: a command is what the user asked for. IPMI measures at the wall, where a
//! machine's whole cost shows. RAPL is exact and cheap but sees only the CPU packages and
//! DRAM: **RAPL is not wall power** (fans, disks, NICs, GPUs, the PSU's own losses are
//! missing; at idle they can be most of the bill), and [`PowerMethod::wall_power`] says so in
//! the record. hwmon comes last because what its sensors cover differs from driver to driver.
//!
//! Energy comes from counters wherever the source counts energy (RAPL's `energy_uj`, hwmon's
//! `energyK_input`): the difference of two readings is all the energy between them, however
//! the power moved in between. A watts reading is only a point; between samples perflab
//! integrates by the trapezoid rule, and a spike shorter than the interval can be missed.
//!
//! # What is summed
//!
//! RAPL: the top-level `package-N` zones plus their `dram` subzones. `core` (PP0) and `uncore`
//! (PP1, the integrated GPU) subzones are inside their package and would count twice; `psys`
//! (the platform, on client parts) contains the packages; an `intel-rapl-mmio:N` zone of the
//! same name as an `intel-rapl:N` zone is the same package through the MMIO interface, so it
//! is not listed (the package's note says it was seen). Since Linux 5.10 `energy_uj` is
//! readable by root only (the PLATYPUS side channel, CVE-2020-8694; the fix went to older
//! stable kernels too): run as root, or make the files readable, to get RAPL.
//!
//! hwmon: sensors may overlap (a core inside a socket, a rail inside a supply), so one is
//! taken, not all: energy counters before power readings; within those the ACPI power meter
//! if present, else every sensor labelled as a socket or package (one per socket), else the
//! first.
//!
//! Counters wrap: RAPL's at `max_energy_range_uj` (2^32 units of 15.3 to 61 µJ: minutes at
//! full load, never twice between one-second reads), see [`energy_delta`].
//!
//! # Command sources
//!
//! `ipmitool` and `--power-cmd` take from milliseconds to seconds, so they never run on the
//! measuring thread: [`PowerMeter::open`] runs the command once (its answer is the first
//! sample, and a user's command that does not answer with a number is an error), then starts
//! a thread that runs it every interval, integrates, and publishes the joules so far, the time
//! and the watts of the last sample. [`PowerMeter::energy_j`] extrapolates from the last sample
//! at its watts (never reporting less than it did before), and answers `None` once the last
//! good sample is too old to extrapolate from. Each run is killed, with its process group,
//! after max(interval, 2 s); dropping the meter stops the thread within about 100 ms and kills
//! a run in progress.
//!
//! # Map
//!
//! - [`PowerSourceInfo`], [`discover`]: the sources found.
//! - [`PowerMeter`], [`PowerMethod`], [`PowerError`]: the chosen source, read during a step.
//! - Pure and tested on sample text: [`parse_watts`] (a command's output), [`parse_ipmi`]
//!   (`ipmitool dcmi power reading`), [`energy_delta`] (a counter's rise across a wrap).
//! - Private: the scans of the powercap and hwmon trees (over a `sys` root, tested on fake
//!   trees in a temporary directory), the counter and sample readers, the command thread.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Powercap zones, under the sysfs root.
const POWERCAP: &str = "class/powercap";
/// hwmon devices, under the sysfs root.
const HWMON: &str = "class/hwmon";
/// The IPMI device nodes `ipmitool` opens (kernel `ipmi_devintf`, devfs and old udev names).
const IPMI_DEVICES: [&str; 3] = ["ipmi0", "ipmi/0", "ipmidev/0"];
/// `ipmitool`'s arguments for one reading.
const IPMI_ARGS: [&str; 3] = ["dcmi", "power", "reading"];
/// The IPMI source's name.
const IPMI_NAME: &str = "ipmitool dcmi power reading";

const RAPL_NOT_WALL: &str =
    "RAPL counts the CPU packages and DRAM, not the wall: fans, disks, PSU losses are missing";
const RAPL_ROOT_ONLY: &str =
    "permission denied: energy_uj is readable by root only since Linux 5.10";
const COMMAND_IS_WALL: &str = "taken for wall power: perflab cannot tell what the command measures";
const IPMI_IS_WALL: &str = "wall power as the BMC measures it (DCMI: the power supplies' input)";

/// The shortest time between two runs of a command, so a zero interval cannot spin.
const MIN_INTERVAL: Duration = Duration::from_millis(50);
/// A run of a command is killed after max(interval, this).
const MIN_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// The interval [`discover`] assumes when it tries a command (its timeout is then 2 s).
const DISCOVER_INTERVAL: Duration = Duration::from_secs(1);
/// The longest sleep of the command thread between looks at its stop flag.
const SLEEP_SLICE: Duration = Duration::from_millis(100);
/// How often a running command is checked for its end (and the stop flag).
const POLL: Duration = Duration::from_millis(5);
/// Bytes kept of a command's stdout or stderr; the rest is read and dropped.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// One place power can be read from, as found on this machine (for `perflab sysinfo` and the
/// record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PowerSourceInfo {
    /// `rapl`, `hwmon`, `ipmi` or `command`.
    pub kind: String,
    /// `package-0`, `package-0/dram` (a RAPL zone; a subzone after its package),
    /// `hwmon3 power1 (amdgpu PPT)` (device, attribute, driver and label),
    /// `ipmitool dcmi power reading`, or the user's command.
    pub name: String,
    /// The sysfs file read, or the command line run.
    pub location: String,
    /// Whether a reading just now gave a number.
    pub readable: bool,
    /// A cumulative energy counter (RAPL `energy_uj`, hwmon `energyK_input`), rather than an
    /// instantaneous watts reading.
    pub counts_energy: bool,
    /// Why it is not readable, or what to know about it (not summed, a duplicate seen).
    pub note: Option<String>,
}

/// Every power source under `sys` (normally `Path::new("/sys")`), in the order
/// [`PowerMeter::open`] prefers them: the user's `power_cmd` (run once), IPMI (when `ipmitool`
/// is on `PATH` and an IPMI device exists; one trial reading), the RAPL zones, the hwmon
/// sensors. Readability is checked by reading each file or running each command once: this
/// takes milliseconds, or up to 2 s for a command that does not answer.
pub fn discover(sys: &Path, power_cmd: Option<&str>) -> Vec<PowerSourceInfo> {
    discover_in(&Probe::system(sys), power_cmd)
}

/// What a [`PowerMeter`] measures with, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PowerMethod {
    /// The kind of source chosen (as [`PowerSourceInfo::kind`]).
    pub kind: String,
    /// The sources summed ([`PowerSourceInfo::name`]s): for RAPL the packages and their DRAM.
    pub domains: Vec<String>,
    /// Energy from counters (true), or integrated from watts sampled at intervals.
    pub from_counters: bool,
    /// Whether this is the machine's power at the wall: false for RAPL and component
    /// sensors, true for IPMI and (by assumption, said in `note`) the user's command.
    pub wall_power: bool,
    /// What the figure leaves out, or what it is assumed to be.
    pub note: String,
}

/// Why a [`PowerMeter`] could not be opened. Only the user's `--power-cmd` fails the open:
/// a source found on the machine that cannot be read is skipped.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    /// The command succeeded but its output holds no number.
    #[error("--power-cmd '{command}' printed {}, not a number of watts", quote_output(.printed))]
    NotANumber { command: String, printed: String },
    /// The command exited with a failure (or could not be waited for).
    #[error("--power-cmd '{command}' failed ({status}){}", stderr_suffix(.stderr))]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    /// The command did not finish in time and was killed.
    #[error("--power-cmd '{command}' did not finish within {}: killed", show_duration(*.timeout))]
    TimedOut { command: String, timeout: Duration },
    /// `sh` could not be started.
    #[error("cannot run --power-cmd '{command}' with sh: {source}")]
    Spawn { command: String, source: io::Error },
    /// The thread that runs the command could not be started.
    #[error("cannot start the power sampling thread: {0}")]
    Thread(io::Error),
}

/// Reads one power source during measurement; see the module docs for the choice.
#[derive(Debug)]
pub struct PowerMeter {
    method: PowerMethod,
    reader: Reader,
}

impl PowerMeter {
    /// Chooses one source: the user's command when given (an error when it does not print a
    /// number), else IPMI, else RAPL (the packages plus their DRAM), else hwmon (energy
    /// counters before power readings). `Ok(None)` when nothing is readable. Command sources
    /// run every `interval` (at least 50 ms) in a thread of their own; sysfs sources are read
    /// by [`PowerMeter::energy_j`] itself.
    pub fn open(
        sys: &Path,
        power_cmd: Option<&str>,
        interval: Duration,
    ) -> Result<Option<PowerMeter>, PowerError> {
        PowerMeter::open_in(&Probe::system(sys), power_cmd, interval)
    }

    fn open_in(
        probe: &Probe,
        power_cmd: Option<&str>,
        interval: Duration,
    ) -> Result<Option<PowerMeter>, PowerError> {
        let interval = interval.max(MIN_INTERVAL);
        let timeout = command_timeout(interval);
        let every = format!(
            "sampled every {}, integrated by the trapezoid rule",
            show_duration(interval)
        );
        let never = AtomicBool::new(false);
        if let Some(command) = power_cmd {
            let source = CommandSource::Shell(command.to_owned());
            let first = sample(&source, timeout, &never)
                .map_err(|e| e.into_power_error(command, timeout))?;
            let method = PowerMethod {
                kind: "command".into(),
                domains: vec![command.to_owned()],
                from_counters: false,
                wall_power: true,
                note: format!("{COMMAND_IS_WALL}; {every}"),
            };
            let reader = CommandReader::start(source, first, interval, timeout)?;
            return Ok(Some(PowerMeter {
                method,
                reader: Reader::Command(reader),
            }));
        }
        if let Some(exe) = probe.ipmitool() {
            let source = CommandSource::Ipmi(exe);
            if let Ok(first) = sample(&source, timeout, &never) {
                let method = PowerMethod {
                    kind: "ipmi".into(),
                    domains: vec![IPMI_NAME.into()],
                    from_counters: false,
                    wall_power: true,
                    note: format!("{IPMI_IS_WALL}; {every}"),
                };
                let reader = CommandReader::start(source, first, interval, timeout)?;
                return Ok(Some(PowerMeter {
                    method,
                    reader: Reader::Command(reader),
                }));
            }
        }
        if let Some(meter) = rapl_meter(&scan_rapl(&probe.sys)) {
            return Ok(Some(meter));
        }
        Ok(hwmon_meter(&scan_hwmon(&probe.sys)))
    }

    /// What this meter measures with.
    pub fn method(&self) -> &PowerMethod {
        &self.method
    }

    /// Joules consumed since [`PowerMeter::open`], up to now. Counters: the sum of each
    /// domain's rise ([`energy_delta`]). hwmon watts: read now and integrated since the
    /// previous call. Commands: the thread's integral, extrapolated from its last sample.
    /// `None` when a file could not be read this time (the next good reading catches up) or
    /// a command has not answered for too long. Cheap: a few `pread`s, or a mutex.
    pub fn energy_j(&mut self) -> Option<f64> {
        match &mut self.reader {
            Reader::Counters(c) => c.energy_j(),
            Reader::Watts(w) => w.energy_j(),
            Reader::Command(c) => c.energy_j(),
        }
    }

    /// Failed reads so far: a command that failed, timed out or printed no number; a sysfs
    /// file that could not be read or held no number.
    pub fn errors(&self) -> u64 {
        match &self.reader {
            Reader::Counters(c) => c.errors,
            Reader::Watts(w) => w.errors,
            Reader::Command(c) => c.shared.published().errors,
        }
    }
}

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
        Some(range) if range >= prev => (range - prev).saturating_add(now),
        _ => now,
    }
}

/// The watts in a command's output: its first number, integer or decimal (an exponent is
/// allowed), so `42.5`, `123 W` and `power=230.1` all read. Digits inside a word do not count
/// (`PSU1: 230 W` is 230). `None` when there is no number, or when the first one is negative
/// or not finite: that is no reading of watts.
pub fn parse_watts(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let digit_at = |i: usize| at(i).is_some_and(|b| b.is_ascii_digit());
    let mut i = 0;
    while i < bytes.len() {
        let starts = digit_at(i) || (at(i) == Some(b'.') && digit_at(i + 1));
        let before = i.checked_sub(1).and_then(at);
        let before2 = i.checked_sub(2).and_then(at);
        let alnum = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
        // Digits after a letter, `_`, `.` or a hyphen inside a word (`rail-5`) are part of it.
        let in_word = alnum(before)
            || matches!(before, Some(b'_' | b'.'))
            || (before == Some(b'-') && alnum(before2));
        if !starts || in_word {
            i += 1;
            continue;
        }
        let negative = before == Some(b'-');
        let mut end = i;
        while digit_at(end) {
            end += 1;
        }
        if at(end) == Some(b'.') {
            end += 1;
            while digit_at(end) {
                end += 1;
            }
        }
        if matches!(at(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(at(end + 1), Some(b'+' | b'-')));
            if digit_at(end + 1 + sign) {
                end += 1 + sign;
                while digit_at(end) {
                    end += 1;
                }
            }
        }
        let watts: f64 = text.get(i..end)?.parse().ok()?;
        return (!negative && watts.is_finite()).then_some(watts);
    }
    None
}

/// The watts of `ipmitool dcmi power reading`'s output: the number of its line
/// `Instantaneous power reading:   220 Watts`. `None` without that line, or when the BMC says
/// `Power reading state is: deactivated` and reads 0 W (it measures nothing then).
pub fn parse_ipmi(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| {
        l.trim_start()
            .to_ascii_lowercase()
            .starts_with("instantaneous power reading")
    })?;
    let watts = parse_watts(line.split_once(':')?.1)?;
    let deactivated = text.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("power reading state") && l.contains("deactivated")
    });
    (!(deactivated && watts == 0.0)).then_some(watts)
}

// ---------------------------------------------------------------------------------------
// Where to look

/// Where sources are looked for: `/sys`, `/dev` and `$PATH` in production, a fake tree in
/// tests.
#[derive(Debug, Clone)]
struct Probe {
    sys: PathBuf,
    dev: PathBuf,
    path: Option<OsString>,
}

impl Probe {
    fn system(sys: &Path) -> Probe {
        Probe {
            sys: sys.to_path_buf(),
            dev: PathBuf::from("/dev"),
            path: std::env::var_os("PATH"),
        }
    }

    /// `ipmitool` on the search path, when an IPMI device node exists for it to open. Empty
    /// `PATH` entries (the current directory) are not searched.
    fn ipmitool(&self) -> Option<PathBuf> {
        if !IPMI_DEVICES.iter().any(|d| self.dev.join(d).exists()) {
            return None;
        }
        std::env::split_paths(self.path.as_ref()?)
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| dir.join("ipmitool"))
            .find(|exe| {
                fs::metadata(exe).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }
}

fn discover_in(probe: &Probe, power_cmd: Option<&str>) -> Vec<PowerSourceInfo> {
    let timeout = command_timeout(DISCOVER_INTERVAL);
    let never = AtomicBool::new(false);
    let mut found = Vec::new();
    if let Some(command) = power_cmd {
        let source = CommandSource::Shell(command.to_owned());
        let result = sample(&source, timeout, &never);
        found.push(PowerSourceInfo {
            kind: "command".into(),
            name: command.to_owned(),
            location: source.command_line(),
            readable: result.is_ok(),
            counts_energy: false,
            note: Some(match result {
                Ok(_) => COMMAND_IS_WALL.to_owned(),
                Err(e) => e.into_power_error(command, timeout).to_string(),
            }),
        });
    }
    if let Some(exe) = probe.ipmitool() {
        let source = CommandSource::Ipmi(exe);
        let result = sample(&source, timeout, &never);
        found.push(PowerSourceInfo {
            kind: "ipmi".into(),
            name: IPMI_NAME.into(),
            location: source.command_line(),
            readable: result.is_ok(),
            counts_energy: false,
            note: Some(match result {
                Ok(_) => IPMI_IS_WALL.to_owned(),
                Err(e) => e.describe(),
            }),
        });
    }
    found.extend(scan_rapl(&probe.sys).iter().map(RaplZone::info));
    found.extend(scan_hwmon(&probe.sys).iter().map(HwmonSensor::info));
    found
}

/// A sysfs file's trimmed text; `None` when unreadable or blank.
fn read_trimmed(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A counter or reading file's value, or why there is none: the text for a note.
fn read_value_file(path: &Path) -> Result<u64, String> {
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    match fs::read_to_string(path) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| format!("{file} holds '{}', not a number", text.trim())),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            Err(format!("permission denied: {file}"))
        }
        Err(e) => Err(format!("cannot read {file}: {e}")),
    }
}

/// The number in a sysfs file, read at offset 0 through a handle kept open (sysfs makes the
/// value afresh for every read from the start).
fn pread_value(file: &File) -> Option<u64> {
    let mut buf = [0u8; 32];
    let n = file.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(buf.get(..n)?).ok()?.trim().parse().ok()
}

/// The number after a prefix (`hwmon12` → 12), to sort by; names without one sort last.
fn number_after(name: &str, prefix: &str) -> u32 {
    name.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------
// RAPL

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
struct RaplZone {
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

    fn info(&self) -> PowerSourceInfo {
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
fn scan_rapl(sys: &Path) -> Vec<RaplZone> {
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
fn rapl_meter(zones: &[RaplZone]) -> Option<PowerMeter> {
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

// ---------------------------------------------------------------------------------------
// hwmon

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
struct HwmonSensor {
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

    fn info(&self) -> PowerSourceInfo {
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

/// The energy and power sensors under `sys`, by device number and then attribute; a power
/// sensor with both files is listed once, by its `powerK_input`.
fn scan_hwmon(sys: &Path) -> Vec<HwmonSensor> {
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
fn hwmon_meter(sensors: &[HwmonSensor]) -> Option<PowerMeter> {
    let readable = |energy: bool| -> Vec<&HwmonSensor> {
        sensors
            .iter()
            .filter(|s| s.value.is_ok() && (s.kind == HwmonKind::Energy) == energy)
            .collect()
    };
    let energy = pick_sensors(&readable(true));
    let power = pick_sensors(&readable(false));
    let from_counters = !energy.is_empty();
    let chosen = if from_counters { energy } else { power };

    // Each sensor is read once more on opening, as the meter's first reading.
    let mut domains = Vec::new();
    let reader = if from_counters {
        let mut counters = Vec::new();
        for s in &chosen {
            if let Some(counter) = Counter::open(&s.path, None) {
                domains.push(s.name());
                counters.push(counter);
            }
        }
        Reader::Counters(Counters::new(counters))
    } else {
        let mut files = Vec::new();
        for s in &chosen {
            if let Ok(file) = File::open(&s.path)
                && pread_value(&file).is_some()
            {
                domains.push(s.name());
                files.push(file);
            }
        }
        Reader::Watts(SampledWatts::new(files)?)
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

// ---------------------------------------------------------------------------------------
// Readers

#[derive(Debug)]
enum Reader {
    /// Cumulative energy files, read by `energy_j`.
    Counters(Counters),
    /// Instantaneous µW files, read and integrated by `energy_j`.
    Watts(SampledWatts),
    /// A command run by a thread of its own.
    Command(CommandReader),
}

/// One energy counter file, kept open.
#[derive(Debug)]
struct Counter {
    file: File,
    range_uj: Option<u64>,
    prev_uj: u64,
}

impl Counter {
    fn open(path: &Path, range_uj: Option<u64>) -> Option<Counter> {
        Counter::from_file(File::open(path).ok()?, range_uj)
    }

    /// The counter, its first reading taken now.
    fn from_file(file: File, range_uj: Option<u64>) -> Option<Counter> {
        let prev_uj = pread_value(&file)?;
        Some(Counter {
            file,
            range_uj,
            prev_uj,
        })
    }
}

#[derive(Debug)]
struct Counters {
    counters: Vec<Counter>,
    total_uj: u64,
    errors: u64,
}

impl Counters {
    fn new(counters: Vec<Counter>) -> Counters {
        Counters {
            counters,
            total_uj: 0,
            errors: 0,
        }
    }

    /// Adds every counter's rise since its last good reading; `None` if one failed now (its
    /// rise is added at its next good reading, so the total stays right).
    fn energy_j(&mut self) -> Option<f64> {
        let mut all_read = true;
        for c in &mut self.counters {
            match pread_value(&c.file) {
                Some(now) => {
                    let rise = energy_delta(c.prev_uj, now, c.range_uj);
                    self.total_uj = self.total_uj.saturating_add(rise);
                    c.prev_uj = now;
                }
                None => {
                    self.errors += 1;
                    all_read = false;
                }
            }
        }
        all_read.then(|| self.total_uj as f64 / 1e6)
    }
}

/// Instantaneous power files (µW), summed and integrated between calls.
#[derive(Debug)]
struct SampledWatts {
    files: Vec<File>,
    joules: f64,
    last_watts: f64,
    last_at: Instant,
    errors: u64,
}

impl SampledWatts {
    /// The reader, its first sample taken now; `None` if a file cannot be read.
    fn new(files: Vec<File>) -> Option<SampledWatts> {
        let last_watts = sum_watts(&files)?;
        Some(SampledWatts {
            files,
            joules: 0.0,
            last_watts,
            last_at: Instant::now(),
            errors: 0,
        })
    }

    fn energy_j(&mut self) -> Option<f64> {
        let Some(watts) = sum_watts(&self.files) else {
            self.errors += 1;
            return None;
        };
        let now = Instant::now();
        self.joules += trapezoid(
            self.last_watts,
            watts,
            now.saturating_duration_since(self.last_at),
        );
        self.last_watts = watts;
        self.last_at = now;
        Some(self.joules)
    }
}

/// The watts of µW files together; `None` if one cannot be read.
fn sum_watts(files: &[File]) -> Option<f64> {
    files
        .iter()
        .map(|f| pread_value(f).map(|uw| uw as f64 / 1e6))
        .sum()
}

/// The energy between two samples `dt` apart, power taken to move linearly between them.
fn trapezoid(w0: f64, w1: f64, dt: Duration) -> f64 {
    (w0 + w1) / 2.0 * dt.as_secs_f64()
}

// ---------------------------------------------------------------------------------------
// Commands

/// How long a run of a command may take before it is killed.
fn command_timeout(interval: Duration) -> Duration {
    interval.max(MIN_COMMAND_TIMEOUT)
}

/// `1 s`, `1.5 s`, `250 ms`.
fn show_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// A command whose output is watts.
#[derive(Debug, Clone)]
enum CommandSource {
    /// The user's `--power-cmd`, run with `sh -c`.
    Shell(String),
    /// `ipmitool dcmi power reading`, by the path found.
    Ipmi(PathBuf),
}

impl CommandSource {
    fn command(&self) -> Command {
        match self {
            CommandSource::Shell(cmd) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(cmd);
                c
            }
            CommandSource::Ipmi(exe) => {
                let mut c = Command::new(exe);
                c.args(IPMI_ARGS);
                c
            }
        }
    }

    fn command_line(&self) -> String {
        match self {
            CommandSource::Shell(cmd) => format!("sh -c '{cmd}'"),
            CommandSource::Ipmi(exe) => format!("{} {}", exe.display(), IPMI_ARGS.join(" ")),
        }
    }

    fn parse(&self, stdout: &str) -> Option<f64> {
        match self {
            CommandSource::Shell(_) => parse_watts(stdout),
            CommandSource::Ipmi(_) => parse_ipmi(stdout),
        }
    }
}

/// A finished run.
#[derive(Debug)]
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Why a run gave no output to parse.
#[derive(Debug)]
enum RunError {
    Spawn(io::Error),
    Wait(io::Error),
    TimedOut,
    Stopped,
}

/// Why a run gave no watts.
#[derive(Debug)]
enum SampleError {
    Run(RunError),
    Exit { status: ExitStatus, stderr: String },
    NotANumber(String),
}

impl SampleError {
    /// For a note: `failed (exit status: 1): Could not open device`.
    fn describe(&self) -> String {
        match self {
            SampleError::Run(RunError::Spawn(e)) => format!("cannot be started: {e}"),
            SampleError::Run(RunError::Wait(e)) => format!("cannot be waited for: {e}"),
            SampleError::Run(RunError::TimedOut | RunError::Stopped) => {
                "no answer in time: killed".into()
            }
            SampleError::Exit { status, stderr } => {
                format!("failed ({status}){}", stderr_suffix(stderr))
            }
            SampleError::NotANumber(out) => {
                format!("printed {}, no power reading", quote_output(out))
            }
        }
    }

    fn into_power_error(self, command: &str, timeout: Duration) -> PowerError {
        let command = command.to_owned();
        match self {
            SampleError::Run(RunError::Spawn(source)) => PowerError::Spawn { command, source },
            SampleError::Run(RunError::Wait(e)) => PowerError::Failed {
                command,
                status: format!("cannot wait for it: {e}"),
                stderr: String::new(),
            },
            SampleError::Run(RunError::TimedOut | RunError::Stopped) => {
                PowerError::TimedOut { command, timeout }
            }
            SampleError::Exit { status, stderr } => PowerError::Failed {
                command,
                status: status.to_string(),
                stderr,
            },
            SampleError::NotANumber(printed) => PowerError::NotANumber { command, printed },
        }
    }
}

/// A command's output for a message: `'abc'` (one line, at most 80 characters) or `nothing`.
fn quote_output(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return "nothing".into();
    }
    let joined = words.join(" ");
    let mut shown: String = joined.chars().take(80).collect();
    if shown.len() < joined.len() {
        shown.push('…');
    }
    format!("'{shown}'")
}

/// `: ` and the first line of stderr, or nothing.
fn stderr_suffix(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(String::new, |l| format!(": {l}"))
}

/// Runs a command once and reads its watts.
fn sample(
    source: &CommandSource,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<f64, SampleError> {
    let ran = run(source.command(), timeout, stop).map_err(SampleError::Run)?;
    if !ran.status.success() {
        return Err(SampleError::Exit {
            status: ran.status,
            stderr: ran.stderr,
        });
    }
    source
        .parse(&ran.stdout)
        .ok_or(SampleError::NotANumber(ran.stdout))
}

/// Runs `command` with stdin null, stdout and stderr captured, in a process group of its own,
/// until it exits and closes its output. Past `timeout`, or when `stop` is set, the group is
/// killed (the shell and whatever it started).
fn run(mut command: Command, timeout: Duration, stop: &AtomicBool) -> Result<Ran, RunError> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let deadline = Instant::now() + timeout;
    let mut child = command.spawn().map_err(RunError::Spawn)?;

    // Each pipe is drained by a thread, so neither can fill and stall the command.
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let mut pending = 0;
    if let Some(out) = child.stdout.take() {
        pending += usize::from(drain(out, true, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        pending += usize::from(drain(err, false, tx.clone()));
    }
    drop(tx);

    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut status = None;
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(s) => status = s,
                Err(e) => {
                    kill_group(&mut child);
                    return Err(RunError::Wait(e));
                }
            }
        }
        if let Some(status) = status
            && pending == 0
        {
            return Ok(Ran {
                status,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
            });
        }
        if stop.load(Ordering::Relaxed) {
            kill_group(&mut child);
            return Err(RunError::Stopped);
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(&mut child);
            return Err(RunError::TimedOut);
        }
        let slice = POLL.min(deadline - now);
        if pending == 0 {
            thread::sleep(slice);
            continue;
        }
        match rx.recv_timeout(slice) {
            Ok((is_stdout, bytes)) => {
                pending -= 1;
                if is_stdout {
                    stdout = bytes;
                } else {
                    stderr = bytes;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => pending = 0,
        }
    }
}

/// Starts a thread reading `pipe` to its end and sending what it kept; false if it could
/// not be started (the pipe is then closed unread).
fn drain<R: Read + Send + 'static>(
    mut pipe: R,
    is_stdout: bool,
    tx: mpsc::Sender<(bool, Vec<u8>)>,
) -> bool {
    thread::Builder::new()
        .name("perflab-power-pipe".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = OUTPUT_LIMIT.saturating_sub(kept.len());
                        if let Some(part) = buf.get(..n.min(room)) {
                            kept.extend_from_slice(part);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send((is_stdout, kept));
        })
        .is_ok()
}

/// Kills the child's process group (it leads one: `process_group(0)`), then the child, and
/// reaps it. The group is killed with the shell's `kill` builtin, std having no call for it.
fn kill_group(child: &mut Child) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -s KILL -- -{}", child.id()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// What the command thread publishes.
#[derive(Debug, Clone, Copy)]
struct Published {
    /// Integrated up to `at`.
    joules: f64,
    /// When the last good sample was taken.
    at: Instant,
    /// The last good sample.
    watts: f64,
    errors: u64,
}

#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    state: Mutex<Published>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Published> {
        // The thread never panics holding the lock; if it did, the figures are still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn published(&self) -> Published {
        *self.lock()
    }
}

/// A command source: the thread that runs it, and what it published.
#[derive(Debug)]
struct CommandReader {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// A last sample older than this is not extrapolated from.
    stale_after: Duration,
    /// The most `energy_j` has answered: it never answers less.
    reported: f64,
}

impl CommandReader {
    /// Starts the thread, `first` (watts) being the sample just taken.
    fn start(
        source: CommandSource,
        first: f64,
        interval: Duration,
        timeout: Duration,
    ) -> Result<CommandReader, PowerError> {
        let now = Instant::now();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(Published {
                joules: 0.0,
                at: now,
                watts: first,
                errors: 0,
            }),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name("perflab-power".into())
            .spawn(move || sample_loop(&source, &thread_shared, now + interval, interval, timeout))
            .map_err(PowerError::Thread)?;
        Ok(CommandReader {
            shared,
            thread: Some(thread),
            stale_after: interval + 2 * timeout,
            reported: 0.0,
        })
    }

    fn energy_j(&mut self) -> Option<f64> {
        let joules = extrapolate(&self.shared.published(), Instant::now(), self.stale_after)?;
        self.reported = self.reported.max(joules);
        Some(self.reported)
    }
}

impl Drop for CommandReader {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The joules at `now`: the integral to the last sample plus its watts since, unless the last
/// sample is older than `stale_after`.
fn extrapolate(p: &Published, now: Instant, stale_after: Duration) -> Option<f64> {
    let since = now.saturating_duration_since(p.at);
    (since <= stale_after).then_some(p.joules + p.watts * since.as_secs_f64())
}

/// The command thread: a run every `interval` from `next`, until the stop flag is set.
fn sample_loop(
    source: &CommandSource,
    shared: &Shared,
    mut next: Instant,
    interval: Duration,
    timeout: Duration,
) {
    while sleep_until(next, &shared.stop) {
        next = Instant::now() + interval;
        let watts = sample(source, timeout, &shared.stop);
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let at = Instant::now();
        let mut p = shared.lock();
        match watts {
            Ok(watts) => {
                p.joules += trapezoid(p.watts, watts, at.saturating_duration_since(p.at));
                p.at = at;
                p.watts = watts;
            }
            Err(_) => p.errors += 1,
        }
    }
}

/// Sleeps until `when` in slices of at most 100 ms; false as soon as `stop` is set.
fn sleep_until(when: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= when {
            return true;
        }
        thread::sleep((when - now).min(SLEEP_SLICE));
    }
}

#[cfg(test)]
mod tests {
    use super::super::disk::test_support::TempDir;
    use super::*;

    /// `ipmitool dcmi power reading` on a Dell PowerEdge.
    const IPMI_OUTPUT: &str = "
    Instantaneous power reading:                   220 Watts
    Minimum during sampling period:                 74 Watts
    Maximum during sampling period:                380 Watts
    Average power reading over sample period:      217 Watts
    IPMI timestamp:                           Thu Nov 21 10:15:02 2024
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
";

    /// A BMC whose power measurement is switched off.
    const IPMI_DEACTIVATED: &str = "
    Instantaneous power reading:                     0 Watts
    Minimum during sampling period:                  0 Watts
    Maximum during sampling period:                  0 Watts
    Average power reading over sample period:        0 Watts
    IPMI timestamp:                           Thu Jan  1 00:00:00 1970
    Sampling period:                          00000000 Seconds.
    Power reading state is:                   deactivated
";

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    /// A probe of a fake tree only: no `/dev`, no `PATH`.
    fn probe(root: &Path) -> Probe {
        Probe {
            sys: root.to_path_buf(),
            dev: root.join("dev"),
            path: None,
        }
    }

    /// RAPL's wrap point in the fake trees: 100 J.
    const RANGE_UJ: u64 = 100_000_000;

    /// Two packages, each with `core` (`:0`) and `dram` (`:1`) subzones, package-0 again
    /// through MMIO, and the control-type directory, which is no zone.
    fn rapl_tree(root: &Path) {
        for (id, name, uj) in [
            ("intel-rapl:0", "package-0", 1_000_000),
            ("intel-rapl:0:0", "core", 500_000),
            ("intel-rapl:0:1", "dram", 200_000),
            ("intel-rapl:1", "package-1", 2_000_000),
            ("intel-rapl:1:0", "core", 600_000),
            ("intel-rapl:1:1", "dram", 300_000),
            ("intel-rapl-mmio:0", "package-0", 1_000_000),
        ] {
            write(
                root,
                &format!("class/powercap/{id}/name"),
                &format!("{name}\n"),
            );
            set_uj(root, id, uj);
            write(
                root,
                &format!("class/powercap/{id}/max_energy_range_uj"),
                &format!("{RANGE_UJ}\n"),
            );
        }
        write(root, "class/powercap/intel-rapl/enabled", "1\n");
    }

    fn set_uj(root: &Path, zone: &str, uj: u64) {
        write(
            root,
            &format!("class/powercap/{zone}/energy_uj"),
            &format!("{uj}\n"),
        );
    }

    fn names(found: &[PowerSourceInfo]) -> Vec<&str> {
        found.iter().map(|s| s.name.as_str()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn watts_are_the_first_number() {
        assert_eq!(parse_watts("42.5\n"), Some(42.5));
        assert_eq!(parse_watts("123 W"), Some(123.0));
        assert_eq!(parse_watts("123W"), Some(123.0));
        assert_eq!(parse_watts("power=230.1 watts"), Some(230.1));
        assert_eq!(parse_watts("PSU1: 230 W, PSU2: 210 W"), Some(230.0));
        assert_eq!(parse_watts("rail-5: 40 W"), Some(40.0));
        assert_eq!(parse_watts("  .5\n"), Some(0.5));
        assert_eq!(parse_watts("1.2e3"), Some(1200.0));
        assert_eq!(parse_watts("12 W 1.2.3"), Some(12.0));
        assert_eq!(parse_watts("v1.2 reads 40"), Some(40.0));
        assert_eq!(parse_watts("abc"), None);
        assert_eq!(parse_watts(""), None);
        assert_eq!(parse_watts("-5 W"), None);
        assert_eq!(parse_watts("1e999"), None);
    }

    #[test]
    fn ipmi_reading_is_the_instantaneous_line() {
        assert_eq!(parse_ipmi(IPMI_OUTPUT), Some(220.0));
        assert_eq!(
            parse_ipmi("Instantaneous power reading: 187.5 Watts\n"),
            Some(187.5)
        );
        assert_eq!(parse_ipmi(IPMI_DEACTIVATED), None);
        assert_eq!(
            parse_ipmi("Could not open device at /dev/ipmi0 or /dev/ipmi/0 or /dev/ipmidev/0\n"),
            None
        );
        assert_eq!(parse_ipmi("Instantaneous power reading: n/a\n"), None);
    }

    #[test]
    fn energy_delta_wraps_and_resets() {
        assert_eq!(energy_delta(100, 150, Some(1000)), 50);
        assert_eq!(energy_delta(900, 100, Some(1000)), 200);
        assert_eq!(energy_delta(900, 100, None), 100);
        // A "range" below the previous value is no wrap point: a reset.
        assert_eq!(energy_delta(900, 100, Some(500)), 100);
        assert_eq!(energy_delta(7, 7, None), 0);
        assert_eq!(energy_delta(u64::MAX - 1, 5, Some(u64::MAX)), 6);
    }

    #[test]
    fn extrapolation_stops_when_stale() {
        let at = Instant::now();
        let p = Published {
            joules: 10.0,
            at,
            watts: 100.0,
            errors: 0,
        };
        let stale = Duration::from_secs(1);
        let half = extrapolate(&p, at + Duration::from_millis(500), stale).expect("fresh");
        assert!(close(half, 60.0), "{half}");
        assert_eq!(extrapolate(&p, at + Duration::from_secs(2), stale), None);
        assert_eq!(extrapolate(&p, at, stale), Some(10.0));
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

    #[test]
    fn nothing_readable_is_no_meter() {
        let tmp = TempDir::new("power-none");
        assert!(discover_in(&probe(&tmp.0), None).is_empty());
        let meter =
            PowerMeter::open_in(&probe(&tmp.0), None, Duration::from_secs(1)).expect("open");
        assert!(meter.is_none());
    }

    #[test]
    fn command_watts_are_integrated_in_the_background() {
        let tmp = TempDir::new("power-cmd");
        let started = Instant::now();
        let mut meter =
            PowerMeter::open_in(&probe(&tmp.0), Some("echo 42.5"), Duration::from_millis(50))
                .expect("open")
                .expect("a meter");
        let m = meter.method().clone();
        assert_eq!(m.kind, "command");
        assert_eq!(m.domains, ["echo 42.5"]);
        assert!(m.wall_power && !m.from_counters);
        assert!(m.note.contains("taken for wall power"), "{}", m.note);
        thread::sleep(Duration::from_millis(300));
        let e = meter.energy_j().expect("energy");
        let watts = e / started.elapsed().as_secs_f64();
        assert!((30.0..60.0).contains(&watts), "{e} J: {watts} W");
        assert_eq!(meter.errors(), 0);
        let dropping = Instant::now();
        drop(meter);
        assert!(dropping.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn a_command_that_prints_no_number_is_an_error() {
        let tmp = TempDir::new("power-cmd-nan");
        let open =
            |cmd: &str| PowerMeter::open_in(&probe(&tmp.0), Some(cmd), Duration::from_secs(1));
        let err = open("echo abc").expect_err("not a number");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'echo abc' printed 'abc', not a number of watts"
        );
        let err = open("true").expect_err("nothing");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'true' printed nothing, not a number of watts"
        );
        let err = open("echo 12; echo no meter >&2; exit 3").expect_err("failed");
        assert_eq!(
            err.to_string(),
            "--power-cmd 'echo 12; echo no meter >&2; exit 3' failed (exit status: 3): no meter"
        );

        let found = discover_in(&probe(&tmp.0), Some("echo abc"));
        assert_eq!(names(&found), ["echo abc"]);
        assert!(!found[0].readable);
        assert!(
            found[0]
                .note
                .as_deref()
                .is_some_and(|n| n.contains("not a number"))
        );
    }

    #[test]
    fn command_failures_are_counted_and_a_hung_command_does_not_hold_drop() {
        let tmp = TempDir::new("power-cmd-hang");
        let fail = tmp.0.join("fail");
        let hang = tmp.0.join("hang");
        let cmd = format!(
            "if [ -e '{}' ]; then exec sleep 10; fi; if [ -e '{}' ]; then exit 1; fi; echo 10",
            hang.display(),
            fail.display()
        );
        let mut meter = PowerMeter::open_in(&probe(&tmp.0), Some(&cmd), Duration::from_millis(50))
            .expect("open")
            .expect("a meter");
        fs::write(&fail, "").expect("flag");
        let waiting = Instant::now();
        while meter.errors() == 0 && waiting.elapsed() < Duration::from_secs(1) {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(meter.errors() > 0);
        // Failed samples leave the last watts to extrapolate from.
        assert!(meter.energy_j().is_some_and(|e| e > 0.0));

        fs::write(&hang, "").expect("flag");
        thread::sleep(Duration::from_millis(150));
        let dropping = Instant::now();
        drop(meter);
        assert!(
            dropping.elapsed() < Duration::from_millis(500),
            "{:?}",
            dropping.elapsed()
        );
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let never = AtomicBool::new(false);
        let started = Instant::now();
        let source = CommandSource::Shell("sleep 10; echo 5".into());
        let result = run(source.command(), Duration::from_millis(200), &never);
        assert!(matches!(result, Err(RunError::TimedOut)), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn ipmi_is_preferred_to_rapl() {
        let tmp = TempDir::new("power-ipmi");
        let root = &tmp.0;
        rapl_tree(root);
        let tool = root.join("bin/ipmitool");
        write(
            root,
            "bin/ipmitool",
            &format!("#!/bin/sh\ncat <<'EOF'\n{IPMI_OUTPUT}EOF\n"),
        );
        fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut with_tool = probe(root);
        with_tool.path = Some(OsString::from(root.join("bin")));

        // ipmitool without an IPMI device is no source.
        assert!(
            discover_in(&with_tool, None)
                .iter()
                .all(|s| s.kind == "rapl")
        );

        write(root, "dev/ipmi0", "");
        let found = discover_in(&with_tool, None);
        assert_eq!(found[0].kind, "ipmi");
        assert_eq!(found[0].name, IPMI_NAME);
        assert!(found[0].readable, "{:?}", found[0].note);
        assert_eq!(
            found[0].location,
            format!("{} dcmi power reading", tool.display())
        );
        assert_eq!(found[1].kind, "rapl");

        let started = Instant::now();
        let mut meter = PowerMeter::open_in(&with_tool, None, Duration::from_millis(50))
            .expect("open")
            .expect("a meter");
        let m = meter.method().clone();
        assert_eq!((m.kind.as_str(), m.wall_power), ("ipmi", true));
        thread::sleep(Duration::from_millis(200));
        let e = meter.energy_j().expect("energy");
        let watts = e / started.elapsed().as_secs_f64();
        assert!((150.0..300.0).contains(&watts), "{e} J: {watts} W");

        // The user's command comes before everything.
        let found = discover_in(&with_tool, Some("echo 99"));
        assert_eq!(
            (found[0].kind.as_str(), found[0].readable),
            ("command", true)
        );
        let meter = PowerMeter::open_in(&with_tool, Some("echo 99"), Duration::from_millis(50))
            .expect("open")
            .expect("a meter");
        assert_eq!(meter.method().kind, "command");
    }
}
