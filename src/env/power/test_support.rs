//! Fixtures shared by the tests of the power module's files: fake sysfs trees and a probe
//! that looks nowhere else, `ipmitool`'s output.

use std::fs;
use std::path::Path;

use super::{PowerSourceInfo, Probe};

/// `ipmitool dcmi power reading` on a Dell PowerEdge.
pub(super) const IPMI_OUTPUT: &str = "
    Instantaneous power reading:                   220 Watts
    Minimum during sampling period:                 74 Watts
    Maximum during sampling period:                380 Watts
    Average power reading over sample period:      217 Watts
    IPMI timestamp:                           Thu Nov 21 10:15:02 2024
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
";

pub(super) fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

/// A probe of a fake tree only: no `/dev`, no `PATH`.
pub(super) fn probe(root: &Path) -> Probe {
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
pub(super) fn rapl_tree(root: &Path) {
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

pub(super) fn set_uj(root: &Path, zone: &str, uj: u64) {
    write(
        root,
        &format!("class/powercap/{zone}/energy_uj"),
        &format!("{uj}\n"),
    );
}

pub(super) fn names(found: &[PowerSourceInfo]) -> Vec<&str> {
    found.iter().map(|s| s.name.as_str()).collect()
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}
