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
//! Counters wrap: RAPL's at `max_energy_range_uj` (2^32 - 1 units of 15.3 to 61 µJ: minutes
//! at full load, never twice between one-second reads), and the step from that last value to
//! 0 is one more unit, which [`energy_delta`] counts. hwmon energy counters that cannot be
//! opened again when the meter starts give way to the power readings.
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
//!
//! The files, one concept each:
//!
//! - `mod.rs`: the public types, [`discover`] and [`PowerMeter::open`] (the order of
//!   preference), where sources are looked for (`/sys`, `/dev`, `PATH`), the trapezoid rule.
//! - `rapl.rs`: the powercap zones and their roles in the sum, [`energy_delta`], the RAPL
//!   meter.
//! - `hwmon.rs`: the hwmon energy and power sensors, which of them are added up, the hwmon
//!   meter.
//! - `sysfs.rs`: numbers read from sysfs files, and the energy-counter and watts readers the
//!   RAPL and hwmon meters keep open.
//! - `command.rs`: IPMI and `--power-cmd`: [`parse_watts`], [`parse_ipmi`], a run with its
//!   timeout and process-group kill, the sampling thread, the extrapolation between samples.
//! - `test_support.rs` (tests only): fake sysfs trees, a probe of them, `ipmitool`'s output.

mod command;
mod hwmon;
mod rapl;
mod sysfs;
#[cfg(test)]
mod test_support;

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use self::command::{parse_ipmi, parse_watts};
pub use self::rapl::energy_delta;

use self::command::{
    CommandReader, CommandSource, command_timeout, quote_output, sample, stderr_suffix,
};
use self::hwmon::{HwmonSensor, hwmon_meter, scan_hwmon};
use self::rapl::{RaplZone, rapl_meter, scan_rapl};
use self::sysfs::{Counters, SampledWatts};

/// The IPMI device nodes `ipmitool` opens (kernel `ipmi_devintf`, devfs and old udev names).
const IPMI_DEVICES: [&str; 3] = ["ipmi0", "ipmi/0", "ipmidev/0"];
/// The IPMI source's name.
const IPMI_NAME: &str = "ipmitool dcmi power reading";

const COMMAND_IS_WALL: &str = "taken for wall power: perflab cannot tell what the command measures";
const IPMI_IS_WALL: &str = "wall power as the BMC measures it (DCMI: the power supplies' input)";

/// The shortest time between two runs of a command, so a zero interval cannot spin.
const MIN_INTERVAL: Duration = Duration::from_millis(50);
/// The interval [`discover`] assumes when it tries a command (its timeout is then 2 s).
const DISCOVER_INTERVAL: Duration = Duration::from_secs(1);

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
            Reader::Counters(c) => c.errors(),
            Reader::Watts(w) => w.errors(),
            Reader::Command(c) => c.errors(),
        }
    }
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

// ---------------------------------------------------------------------------------------
// What a meter reads, and helpers its files share

#[derive(Debug)]
enum Reader {
    /// Cumulative energy files, read by `energy_j`.
    Counters(Counters),
    /// Instantaneous µW files, read and integrated by `energy_j`.
    Watts(SampledWatts),
    /// A command run by a thread of its own.
    Command(CommandReader),
}

/// The energy between two samples `dt` apart, power taken to move linearly between them.
fn trapezoid(w0: f64, w1: f64, dt: Duration) -> f64 {
    (w0 + w1) / 2.0 * dt.as_secs_f64()
}

/// `1 s`, `1.5 s`, `250 ms`.
fn show_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::Instant;

    use super::test_support::{IPMI_OUTPUT, probe, rapl_tree, write};
    use super::*;
    use crate::env::disk::test_support::TempDir;

    #[test]
    fn nothing_readable_is_no_meter() {
        let tmp = TempDir::new("power-none");
        assert!(discover_in(&probe(&tmp.0), None).is_empty());
        let meter =
            PowerMeter::open_in(&probe(&tmp.0), None, Duration::from_secs(1)).expect("open");
        assert!(meter.is_none());
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
