//! The machine disclosure: what perflab records about the machine a measurement ran on.
//!
//! Every lab report carries an [`Environment`] ("full disclosure"), gathered once by
//! [`Environment::collect`] from files of Linux's `/proc` and `/sys` (it reads only files,
//! runs no programs, needs no privileges and takes a few milliseconds). A figure that cannot
//! be read is recorded as `null`, never guessed; records written before a field existed load
//! with that field unknown. Around each measurement step the runner also samples CPU time
//! with [`usage`], so a step disturbed by other load or by a hypervisor can be recognised.
//!
//! # What is collected, and where from
//!
//! | Field | Source |
//! |---|---|
//! | `hostname` | `/proc/sys/kernel/hostname` (else `/etc/hostname`) |
//! | `machine` | a digest of `/etc/machine-id` (twelve hex digits; the id is not stored) |
//! | `os.kernel_release`, `os.kernel_version` | `/proc/sys/kernel/osrelease`, `/proc/sys/kernel/version` (`uname -r`, `uname -v`) |
//! | `os.distro` | `PRETTY_NAME` of `/etc/os-release` (else `/usr/lib/os-release`; else `NAME VERSION`) |
//! | `os.arch` | the architecture perflab was compiled for (`std::env::consts::ARCH`) |
//! | `cpu.model`, `cpu.vendor` | `model name` and `vendor_id` of the first processor in `/proc/cpuinfo` (Arm: `CPU implementer`) |
//! | `cpu.logical_cpus` | `processor` entries of `/proc/cpuinfo` (else `/sys/devices/system/cpu/online`) |
//! | `cpu.sockets` | distinct `physical id`s in `/proc/cpuinfo` (else sysfs `topology/physical_package_id`) |
//! | `cpu.physical_cores` | distinct (`physical id`, `core id`) pairs (else `cpu cores` × sockets; else sysfs `topology/core_id`) |
//! | `cpu.threads_per_core` | logical CPUs / physical cores, rounded up |
//! | `cpu.numa_nodes` | nodes in `/sys/devices/system/node/online` |
//! | `cpu.mhz` | mean of the `cpu MHz` lines of `/proc/cpuinfo`: the clock at collection, which moves with load and power management |
//! | `cpu.max_mhz`, `cpu.governor` | `/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq` and `scaling_governor` (unknown without cpufreq, as in most VMs) |
//! | `cpu.flags_of_note` | the flags of the first processor that are in [`cpu::FLAGS_OF_NOTE`] (SIMD, crypto, TSC, `hypervisor`) |
//! | `caches[]` | `/sys/devices/system/cpu/cpu0/cache/index*/`: `level`, `type`, `size`, `coherency_line_size`, `ways_of_associativity`, `shared_cpu_list` |
//! | `caches[].instances` | logical CPUs / CPUs sharing the cache, rounded up, at least 1 |
//! | `memory.total_bytes`, `available_bytes`, `swap_total_bytes` | `MemTotal`, `MemAvailable` (at collection), `SwapTotal` of `/proc/meminfo` |
//! | `memory.hugepage_bytes` | `Hugepagesize` of `/proc/meminfo` (the default huge page size) |
//! | `memory.transparent_hugepages` | the bracketed choice in `/sys/kernel/mm/transparent_hugepage/enabled` |
//! | `virtualization.hypervisor` | `/sys/hypervisor/type`; DMI `/sys/class/dmi/id/sys_vendor` and `product_name`; when the CPU has the `hypervisor` flag but DMI names nothing, a paravirtual clock in `available_clocksource` (`kvm-clock` ⇒ KVM) or a WSL kernel; else `unknown` |
//! | `virtualization.container` | `KUBERNETES_SERVICE_HOST` or `kubepods` in `/proc/1/cgroup` ⇒ kubernetes; `/run/.containerenv` ⇒ podman; `/.dockerenv` ⇒ docker; the `container` environment variable; names in `/proc/1/cgroup` |
//! | `load_average` | the 1, 5 and 15 minute figures of `/proc/loadavg` at collection |
//! | `clocksource` | `/sys/devices/system/clocksource/clocksource0/current_clocksource` (`tsc` is cheap to read; `hpet`, `acpi_pm`, `xen` make timing slow) |
//!
//! Derived: [`Environment::llc_bytes`] is the size of the highest-level data or unified
//! cache (one instance), [`Environment::llc_total_bytes`] that times its instances.
//!
//! # Map
//!
//! - [`machine`]: [`Environment`], its collection, the last-level-cache helpers.
//! - [`cpu`], [`caches`], [`memory`], [`os`], [`virt`]: one part of the record each, with
//!   its type and the pure parsers (`text -> value`) of its files, tested on sample text.
//! - [`usage`]: [`CpuTimes`] (`/proc/stat`), [`CpuUsage`] and [`process_cpu_time`]
//!   (`/proc/self/stat`, 10 ms ticks; the runner uses `crate::engine::sys`'s nanosecond clock
//!   for its own CPU time, this one reads other processes').
//! - [`kernel`]: the running counters of `/proc/stat`, `/proc/meminfo`, `/proc/vmstat` and
//!   `/proc/net/dev`, parsed into reusable values.
//! - [`sampler`]: the system sampler: those, the disks, perflab's CPU and power, read at every
//!   interval boundary of a measure phase, into the record's resource series and summary.
//! - [`resources`]: those series and summaries, as the record keeps them.
//! - [`power`]: where watts come from (RAPL, hwmon, IPMI, `--power-cmd`) and the meter of joules.
//! - [`disk`]: the block device and mount under a path, and its `/proc/diskstats` counters.
//! - [`hazard`]: whether writing to a device or file would destroy data (mounts, partitions,
//!   holders, filesystem and other signatures).
//!
//! The human rendering is `crate::view::disclosure` (its lines), laid out by
//! `crate::ui::sysinfo::render_sysinfo` (`perflab sysinfo`) and in reports.

pub mod caches;
pub mod cpu;
pub mod disk;
pub mod hazard;
pub mod kernel;
pub mod launcher;
pub mod machine;
pub mod memory;
pub mod os;
pub mod ports;
pub mod power;
pub mod resources;
pub mod sampler;
pub mod usage;
pub mod virt;

pub use self::{
    caches::CacheLevel,
    cpu::CpuInfo,
    machine::Environment,
    memory::MemoryInfo,
    os::OsInfo,
    usage::{CpuTimes, CpuUsage, process_cpu_time},
    virt::Virtualization,
};
