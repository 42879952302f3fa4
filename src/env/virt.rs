//! Virtualization: is this a guest of a hypervisor, and is it inside a container?

use serde::{Deserialize, Serialize};

/// What perflab runs inside of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Virtualization {
    /// The hypervisor (`KVM`, `Xen`, `VMware`, `Hyper-V` ...), `unknown` when the CPU says
    /// it is a guest but nothing names the host; `None` on bare metal.
    pub hypervisor: Option<String>,
    /// `docker`, `podman`, `lxc`, `kubernetes` ...; `None` when none is detected.
    pub container: Option<String>,
}

/// Evidence for [`detect_hypervisor`], one field per source (`None`: file unreadable).
#[derive(Debug, Clone, Copy, Default)]
pub struct HypervisorEvidence<'a> {
    /// The `hypervisor` flag of `/proc/cpuinfo` (CPUID leaf 1, ECX bit 31).
    pub cpu_flag: bool,
    /// `/sys/hypervisor/type` (present on Xen guests).
    pub sys_hypervisor_type: Option<&'a str>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub dmi_sys_vendor: Option<&'a str>,
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<&'a str>,
    /// `/sys/devices/system/clocksource/clocksource0/available_clocksource`.
    pub available_clocksource: Option<&'a str>,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel_release: Option<&'a str>,
}

/// DMI vendor or product substrings (lower case) that name a hypervisor. `true` where the
/// name alone proves a guest; clouds also sell bare-metal machines under the same vendor.
const DMI_NAMES: &[(&str, &str, bool)] = &[
    ("vmware", "VMware", true),
    ("virtualbox", "VirtualBox", true),
    ("innotek", "VirtualBox", true),
    ("qemu", "QEMU", true),
    ("kvm", "KVM", true),
    ("bochs", "Bochs", true),
    ("xen", "Xen", true),
    ("parallels", "Parallels", true),
    ("bhyve", "bhyve", true),
    ("virtual machine", "Hyper-V", true),
    ("cloud hypervisor", "Cloud Hypervisor", true),
    ("amazon ec2", "KVM (Amazon EC2)", false),
    (
        "google compute engine",
        "KVM (Google Compute Engine)",
        false,
    ),
    ("openstack", "KVM (OpenStack)", false),
    ("digitalocean", "KVM (DigitalOcean)", false),
    ("hetzner", "KVM (Hetzner)", false),
];

/// Paravirtual clock sources and the hypervisor that offers them.
const CLOCKSOURCE_NAMES: &[(&str, &str)] = &[
    ("kvm-clock", "KVM"),
    ("hyperv_clocksource", "Hyper-V"),
    ("xen", "Xen"),
    ("vmware-tsc", "VMware"),
];

/// The hypervisor's name from the evidence, or `None` on bare metal.
pub fn detect_hypervisor(e: &HypervisorEvidence<'_>) -> Option<String> {
    if let Some(t) = e
        .sys_hypervisor_type
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        return Some(if t.eq_ignore_ascii_case("xen") {
            "Xen".to_string()
        } else {
            t.to_string()
        });
    }
    let dmi = format!(
        "{} {}",
        e.dmi_sys_vendor.unwrap_or("").trim(),
        e.dmi_product_name.unwrap_or("").trim()
    )
    .to_ascii_lowercase();
    let from_dmi = DMI_NAMES.iter().find(|(needle, _, _)| dmi.contains(needle));
    if let Some((_, name, _)) = from_dmi.filter(|(_, _, proves)| *proves || e.cpu_flag) {
        return Some(name.to_string());
    }
    if !e.cpu_flag {
        return None;
    }
    if e.kernel_release
        .is_some_and(|r| r.to_ascii_lowercase().contains("microsoft"))
    {
        return Some("Hyper-V (WSL2)".to_string());
    }
    let clocksources: Vec<&str> = e
        .available_clocksource
        .unwrap_or("")
        .split_whitespace()
        .collect();
    CLOCKSOURCE_NAMES
        .iter()
        .find(|(cs, _)| clocksources.iter().any(|c| c.starts_with(cs)))
        .map(|(_, name)| name.to_string())
        .or_else(|| Some("unknown".to_string()))
}

/// Evidence for [`detect_container`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ContainerEvidence<'a> {
    /// The `container` environment variable (set by systemd-nspawn, podman, lxc ...).
    pub env_container: Option<&'a str>,
    /// `KUBERNETES_SERVICE_HOST` is set.
    pub kubernetes_env: bool,
    /// `/.dockerenv` exists.
    pub dockerenv: bool,
    /// `/run/.containerenv` exists (podman).
    pub containerenv: bool,
    /// `/proc/1/cgroup`.
    pub init_cgroup: Option<&'a str>,
}

/// The container runtime from the evidence, or `None`.
pub fn detect_container(e: &ContainerEvidence<'_>) -> Option<String> {
    let cgroup = e.init_cgroup.unwrap_or("").to_ascii_lowercase();
    if e.kubernetes_env || cgroup.contains("kubepods") {
        return Some("kubernetes".to_string());
    }
    if e.containerenv {
        return Some("podman".to_string());
    }
    if e.dockerenv {
        return Some("docker".to_string());
    }
    if let Some(c) = e.env_container.map(str::trim).filter(|c| !c.is_empty()) {
        return Some(c.to_ascii_lowercase());
    }
    [
        ("libpod", "podman"),
        ("docker", "docker"),
        ("lxc", "lxc"),
        ("containerd", "containerd"),
        ("machine.slice/machine-", "systemd-nspawn"),
    ]
    .iter()
    .find(|(needle, _)| cgroup.contains(needle))
    .map(|(_, name)| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_metal() {
        assert_eq!(detect_hypervisor(&HypervisorEvidence::default()), None);
        let e = HypervisorEvidence {
            dmi_sys_vendor: Some("Dell Inc.\n"),
            dmi_product_name: Some("PowerEdge R740\n"),
            available_clocksource: Some("tsc hpet acpi_pm \n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&e), None);
        // An EC2 metal instance: the cloud's vendor string without the CPU flag.
        let e = HypervisorEvidence {
            dmi_sys_vendor: Some("Amazon EC2\n"),
            dmi_product_name: Some("m5.metal\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&e), None);
    }

    #[test]
    fn guests() {
        let kvm = HypervisorEvidence {
            cpu_flag: true,
            dmi_sys_vendor: Some("QEMU\n"),
            dmi_product_name: Some("Standard PC (Q35 + ICH9, 2009)\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&kvm).as_deref(), Some("QEMU"));
        let ec2 = HypervisorEvidence {
            cpu_flag: true,
            dmi_sys_vendor: Some("Amazon EC2\n"),
            dmi_product_name: Some("c6i.large\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&ec2).as_deref(), Some("KVM (Amazon EC2)"));
        let hyperv = HypervisorEvidence {
            cpu_flag: true,
            dmi_sys_vendor: Some("Microsoft Corporation\n"),
            dmi_product_name: Some("Virtual Machine\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&hyperv).as_deref(), Some("Hyper-V"));
        let vmware = HypervisorEvidence {
            dmi_sys_vendor: Some("VMware, Inc.\n"),
            dmi_product_name: Some("VMware Virtual Platform\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&vmware).as_deref(), Some("VMware"));
        let xen = HypervisorEvidence {
            cpu_flag: true,
            sys_hypervisor_type: Some("xen\n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&xen).as_deref(), Some("Xen"));
    }

    #[test]
    fn guests_without_dmi() {
        // Firecracker and friends: no DMI, only the CPU flag and the paravirtual clock.
        let e = HypervisorEvidence {
            cpu_flag: true,
            available_clocksource: Some("tsc kvm-clock \n"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&e).as_deref(), Some("KVM"));
        let wsl = HypervisorEvidence {
            cpu_flag: true,
            kernel_release: Some("5.15.153.1-microsoft-standard-WSL2"),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&wsl).as_deref(), Some("Hyper-V (WSL2)"));
        let e = HypervisorEvidence {
            cpu_flag: true,
            available_clocksource: Some(""),
            ..Default::default()
        };
        assert_eq!(detect_hypervisor(&e).as_deref(), Some("unknown"));
    }

    #[test]
    fn containers() {
        assert_eq!(detect_container(&ContainerEvidence::default()), None);
        let host = ContainerEvidence {
            init_cgroup: Some("0::/init.scope\n"),
            ..Default::default()
        };
        assert_eq!(detect_container(&host), None);
        let docker = ContainerEvidence {
            dockerenv: true,
            init_cgroup: Some("0::/\n"),
            ..Default::default()
        };
        assert_eq!(detect_container(&docker).as_deref(), Some("docker"));
        let old_docker = ContainerEvidence {
            init_cgroup: Some("12:pids:/docker/3f1c2a9e\n11:memory:/docker/3f1c2a9e\n"),
            ..Default::default()
        };
        assert_eq!(detect_container(&old_docker).as_deref(), Some("docker"));
        let podman = ContainerEvidence {
            env_container: Some("podman"),
            containerenv: true,
            ..Default::default()
        };
        assert_eq!(detect_container(&podman).as_deref(), Some("podman"));
        let lxc = ContainerEvidence {
            env_container: Some("lxc"),
            ..Default::default()
        };
        assert_eq!(detect_container(&lxc).as_deref(), Some("lxc"));
        let k8s = ContainerEvidence {
            dockerenv: true,
            init_cgroup: Some(
                "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab.scope\n",
            ),
            ..Default::default()
        };
        assert_eq!(detect_container(&k8s).as_deref(), Some("kubernetes"));
    }
}
