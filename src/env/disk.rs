//! Block devices: which disk a path's I/O lands on, what that disk is, and its I/O counters.
//!
//! A storage benchmark must say what it measured ("ext4 on vda, virtio, mq-deadline") and
//! must be able to tell whether the disk was busy with anything else while it ran. This
//! module answers three questions, reading only files (no programs, no privileges):
//!
//! 1. **Which mount holds a path?** [`mount_of`] takes the longest mount point that is a
//!    prefix of the canonical path in `/proc/self/mountinfo` ([`parse_mountinfo`]).
//! 2. **Which block device is under a path?** [`device_of`]: a block device node names
//!    itself (`st_rdev`); any other file names its filesystem's device (`st_dev`). Some
//!    filesystems (btrfs, overlay, tmpfs, NFS) report an anonymous device of major 0; then
//!    the mount's source is used when it is a `/dev` node (btrfs: `/dev/sdb1`), and there is
//!    no device otherwise (tmpfs, overlay, NFS). [`block_device`] describes a device from
//!    its `major:minor`.
//! 3. **What did the device do?** [`read_counters`] samples a device's line of
//!    `/proc/diskstats` ([`parse_diskstats`]); [`DiskCounters::activity_since`] turns two
//!    samples into rates, queue depth, utilisation and latency, as `iostat -x` does.
//!
//! # Sources
//!
//! | What | Source |
//! |---|---|
//! | mounts | `/proc/self/mountinfo` (proc(5): `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS`; space, tab, newline and backslash in paths are written `\040`, `\011`, `\012`, `\134`) |
//! | `BlockDevice::name` | the last component of the `/sys/dev/block/MAJ:MIN` symlink (else the `/proc/diskstats` line with that `MAJ:MIN`) |
//! | `whole_disk` | when `/sys/class/block/NAME/partition` exists, the parent directory of that symlink's target (`.../block/sda/sda1` ⇒ `sda`) |
//! | `model` | `/sys/class/block/DISK/device/model` (the same directory as `/sys/block/DISK/device/model`) |
//! | `rotational`, `logical_block_size`, `physical_block_size` | `/sys/class/block/DISK/queue/{rotational,logical_block_size,physical_block_size}` |
//! | `scheduler` | the `[bracketed]` word of `/sys/class/block/DISK/queue/scheduler` (a single word such as `none` when there is no choice) |
//! | `size_bytes` | `/sys/class/block/NAME/size` × 512 (always 512-byte units, whatever the block size) |
//! | partitions, holders | `/sys/class/block/NAME/NAME*/partition`, `/sys/class/block/NAME/holders/` (used by `hazard`) |
//! | counters | `/proc/diskstats`, fields as in the kernel's `Documentation/admin-guide/iostats.rst` |
//!
//! DISK is the whole disk of a partition, else NAME itself: partitions have no `queue/` or
//! `device/` of their own.
//!
//! # `/proc/diskstats` across kernels
//!
//! Each line is `MAJOR MINOR NAME` and then the counters. Kernels before 4.18 print 11
//! counters (14 fields), 4.18 adds 4 discard counters (18 fields), 5.5 adds 2 flush counters
//! (20 fields). Counters a kernel lacks are 0 in [`DiskCounters`]. Kernels before 2.6.25
//! printed only 4 counters for partitions (reads, sectors read, writes, sectors written);
//! those are read too. Sectors are always 512 bytes. The millisecond counters are 32-bit on
//! every kernel (printed `%u`: they wrap after 49.7 days of accumulated time) and the
//! others are `unsigned long` (32-bit on 32-bit kernels), so a counter that went backwards
//! between two samples counts as no activity.
//!
//! # Map
//!
//! - [`MountInfo`], [`parse_mountinfo`], [`mount_for`] (pure), [`mount_of`]: mounts.
//! - [`BlockDevice`], [`block_device`], [`device_of`], [`parse_scheduler`], [`dev_major`],
//!   [`dev_minor`]: devices.
//! - [`DiskCounters`], [`parse_diskstats`], [`read_counters`], [`DiskActivity`],
//!   [`SECTOR_BYTES`]: counters.
//! - `partitions_in`, `holders_in`, `parse_swaps`, `unescape_octal`: sysfs and /proc
//!   helpers shared with `super::hazard`.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The root of sysfs; the `*_in` helpers take it as a parameter so tests can point them at
/// a fake tree.
pub(crate) const SYS: &str = "/sys";
const MOUNTINFO: &str = "/proc/self/mountinfo";
const DISKSTATS: &str = "/proc/diskstats";

/// Bytes per sector in `/proc/diskstats` and sysfs `size`, whatever the device's block size.
pub const SECTOR_BYTES: u64 = 512;

// ---------------------------------------------------------------------------------------
// dev_t

/// The major number of a Linux `dev_t` (glibc's encoding: 12 bits low, 20 bits high).
pub fn dev_major(dev: u64) -> u32 {
    // Both masks keep the value within 32 bits, so the cast loses nothing.
    (((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)) as u32
}

/// The minor number of a Linux `dev_t` (glibc's encoding: 8 bits low, 24 bits high).
pub fn dev_minor(dev: u64) -> u32 {
    (((dev >> 12) & 0xffff_ff00) | (dev & 0xff)) as u32
}

/// `"8:17"` (a sysfs `dev` file or a mountinfo field) as `(8, 17)`.
fn parse_major_minor(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

// ---------------------------------------------------------------------------------------
// Mounts

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Where it is mounted, escapes resolved, as seen from this process's root.
    pub mount_point: PathBuf,
    /// `ext4`, `xfs`, `btrfs`, `tmpfs`, `overlay`, ...
    pub fs_type: String,
    /// What was mounted: `/dev/vda`, `tmpfs`, `overlay`, `server:/export`.
    pub source: String,
    /// The device of the superblock (`st_dev` of files in it); major 0 for anonymous devices.
    pub major: u32,
    pub minor: u32,
    /// The options as `/proc/mounts` shows them: `ro` or `rw` (read-only when either the
    /// mount or the superblock is), then the mount's own options, then the superblock's.
    pub options: String,
}

/// Decodes the octal escapes the kernel writes in mountinfo and /proc/swaps paths (`\040`
/// for space, `\011` tab, `\012` newline, `\134` backslash). A backslash that does not
/// start three octal digits of a byte value is kept as it is.
pub(crate) fn unescape_octal(field: &str) -> Vec<u8> {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let value = bytes.get(i + 1..i + 4).and_then(|digits| {
                digits.iter().try_fold(0u32, |acc, &d| {
                    (b'0'..=b'7')
                        .contains(&d)
                        .then(|| acc * 8 + u32::from(d - b'0'))
                })
            });
            if let Some(byte) = value.and_then(|v| u8::try_from(v).ok()) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// A path field of a /proc file: escapes resolved, bytes kept as they are (paths need not
/// be UTF-8).
pub(crate) fn unescape_path(field: &str) -> PathBuf {
    PathBuf::from(OsString::from_vec(unescape_octal(field)))
}

/// A text field of a /proc file: escapes resolved, invalid UTF-8 replaced.
fn unescape_text(field: &str) -> String {
    String::from_utf8_lossy(&unescape_octal(field)).into_owned()
}

/// The mount options as `/proc/mounts` shows them (see [`MountInfo::options`]).
fn merge_options(mount_options: &str, super_options: &str) -> String {
    let read_only = mount_options
        .split(',')
        .chain(super_options.split(','))
        .any(|o| o == "ro");
    let mut merged: Vec<&str> = vec![if read_only { "ro" } else { "rw" }];
    for option in mount_options.split(',').chain(super_options.split(',')) {
        if !option.is_empty() && option != "ro" && option != "rw" && !merged.contains(&option) {
            merged.push(option);
        }
    }
    merged.join(",")
}

/// One mountinfo line, or `None` when it does not have the documented shape.
fn parse_mountinfo_line(line: &str) -> Option<MountInfo> {
    // Paths have their spaces escaped, so " - " can only be the separator before the
    // filesystem fields; the optional fields (shared:N, master:N, ...) are before it.
    let (left, right) = line.split_once(" - ")?;
    let mut left = left.split_whitespace();
    let _mount_id = left.next()?;
    let _parent_id = left.next()?;
    let (major, minor) = parse_major_minor(left.next()?)?;
    let _root = left.next()?;
    let mount_point = left.next()?;
    let mount_options = left.next()?;
    // Split on single spaces: a mount with an empty source name prints an empty field,
    // which whitespace splitting would lose, shifting the super options into `source`.
    let mut right = right.trim_end().split(' ');
    let fs_type = right.next().filter(|t| !t.is_empty())?;
    let source = right.next().unwrap_or("");
    let super_options = right.next().unwrap_or("");
    Some(MountInfo {
        mount_point: unescape_path(mount_point),
        fs_type: unescape_text(fs_type),
        source: unescape_text(source),
        major,
        minor,
        options: merge_options(mount_options, super_options),
    })
}

/// The mounts of a `/proc/self/mountinfo` text, in its order (a later mount on the same
/// mount point hides the earlier). Lines without the documented shape are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountInfo> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// The mount holding the absolute, canonical `path`: the longest mount point that is a
/// (component-wise) prefix of it; of equal ones the last, which is on top of the others.
pub fn mount_for<'a>(mounts: &'a [MountInfo], path: &Path) -> Option<&'a MountInfo> {
    mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        // max_by_key keeps the last of equal keys: the topmost of stacked mounts.
        .max_by_key(|m| m.mount_point.components().count())
}

/// `path` made absolute and canonical. A path that does not exist yet (a benchmark's file
/// before it is created) resolves through its nearest existing ancestor, the missing
/// components appended as they are.
pub(crate) fn resolve(path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut existing = absolute.as_path();
    let mut missing: Vec<Component> = Vec::new();
    loop {
        if let Ok(canonical) = fs::canonicalize(existing) {
            let mut resolved = canonical;
            for c in missing.iter().rev() {
                resolved.push(c);
            }
            return Some(resolved);
        }
        let name = existing.components().next_back()?;
        missing.push(name);
        existing = existing.parent()?;
    }
}

/// The mount holding `path` (longest mount-point prefix of the canonicalized path, last
/// match wins for stacked mounts), from /proc/self/mountinfo.
pub fn mount_of(path: &Path) -> Option<MountInfo> {
    let resolved = resolve(path)?;
    let mounts = parse_mountinfo(&fs::read_to_string(MOUNTINFO).ok()?);
    mount_for(&mounts, &resolved).cloned()
}

// ---------------------------------------------------------------------------------------
// Devices

/// A block device as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name as in /proc/diskstats: `vda`, `nvme0n1p2`, `dm-0`.
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The disk holding `name` when `name` is a partition.
    pub whole_disk: Option<String>,
    /// `device/model` of the disk, trimmed (virtio and device-mapper disks have none).
    pub model: Option<String>,
    /// `queue/rotational` of the disk: spinning media (or a device that does not say).
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    /// The selected I/O scheduler of the disk: `none`, `mq-deadline`, `bfq`, `kyber`.
    pub scheduler: Option<String>,
    /// Size of `name` itself (the partition, for a partition).
    pub size_bytes: Option<u64>,
}

/// The selected word of a sysfs choice file: `none [mq-deadline] kyber` gives
/// `mq-deadline`; a file with one unbracketed word (`none`, device-mapper) gives that word.
pub fn parse_scheduler(text: &str) -> Option<String> {
    if let Some(selected) = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
    {
        return (!selected.is_empty()).then(|| selected.to_string());
    }
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(only), None) => Some(only.to_string()),
        _ => None,
    }
}

/// A sysfs file's trimmed text; `None` when unreadable or blank.
fn read_trimmed(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trimmed(path)?.parse().ok()
}

/// The kernel name of the device `major:minor` under the sysfs root `sys`.
fn sysfs_name(sys: &Path, major: u32, minor: u32) -> Option<String> {
    let link = fs::read_link(sys.join(format!("dev/block/{major}:{minor}"))).ok()?;
    Some(link.file_name()?.to_str()?.to_string())
}

/// The name of the device `major:minor` on its `/proc/diskstats` line.
fn diskstats_name(text: &str, major: u32, minor: u32) -> Option<String> {
    text.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        let id = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
        (id == (major, minor)).then(|| f.next().map(str::to_string))?
    })
}

/// The disk holding the partition `name`: the directory above the partition's directory
/// (sysfs nests partitions inside their disk). `None` when `name` is not a partition.
fn whole_disk_in(sys: &Path, name: &str, major: u32, minor: u32) -> Option<String> {
    if !sys
        .join("class/block")
        .join(name)
        .join("partition")
        .exists()
    {
        return None;
    }
    let link = fs::read_link(sys.join(format!("dev/block/{major}:{minor}")))
        .or_else(|_| fs::read_link(sys.join("class/block").join(name)))
        .ok()?;
    Some(link.parent()?.file_name()?.to_str()?.to_string())
}

/// The device `major:minor` described from the sysfs tree at `sys`; `diskstats` (the text
/// of /proc/diskstats, read only when needed) names it when sysfs cannot.
pub(crate) fn block_device_in(
    sys: &Path,
    major: u32,
    minor: u32,
    diskstats: impl FnOnce() -> Option<String>,
) -> Option<BlockDevice> {
    let name =
        sysfs_name(sys, major, minor).or_else(|| diskstats_name(&diskstats()?, major, minor))?;
    let whole_disk = whole_disk_in(sys, &name, major, minor);
    let class = sys.join("class/block");
    let disk = class.join(whole_disk.as_deref().unwrap_or(&name));
    let queue = disk.join("queue");
    Some(BlockDevice {
        model: read_trimmed(&disk.join("device/model")),
        rotational: read_number::<u8>(&queue.join("rotational")).map(|r| r != 0),
        logical_block_size: read_number(&queue.join("logical_block_size")),
        physical_block_size: read_number(&queue.join("physical_block_size")),
        scheduler: fs::read_to_string(queue.join("scheduler"))
            .ok()
            .and_then(|t| parse_scheduler(&t)),
        size_bytes: read_number::<u64>(&class.join(&name).join("size"))
            .and_then(|s| s.checked_mul(SECTOR_BYTES)),
        name,
        major,
        minor,
        whole_disk,
    })
}

/// The block device `major:minor`, described from /sys (named from /proc/diskstats when
/// /sys is not mounted); `None` when neither knows it.
pub fn block_device(major: u32, minor: u32) -> Option<BlockDevice> {
    block_device_in(Path::new(SYS), major, minor, || {
        fs::read_to_string(DISKSTATS).ok()
    })
}

/// The block device node `path` as `(major, minor)`; `None` when it is not one.
pub(crate) fn node_id(path: &Path) -> Option<(u32, u32)> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| (dev_major(meta.rdev()), dev_minor(meta.rdev())))
}

/// The block device whose counters describe I/O to `path`: a block device node itself
/// (rdev), else the filesystem's st_dev; when st_dev's major is 0 (btrfs, overlay, tmpfs),
/// fall back to the mount's source if it is a /dev node. None for tmpfs and other
/// device-less filesystems.
///
/// A path that does not exist yet is looked up through its nearest existing ancestor.
pub fn device_of(path: &Path) -> Option<BlockDevice> {
    let resolved = resolve(path)?;
    let meta = resolved.ancestors().find_map(|a| fs::metadata(a).ok())?;
    if meta.file_type().is_block_device() {
        return block_device(dev_major(meta.rdev()), dev_minor(meta.rdev()));
    }
    let (major, minor) = (dev_major(meta.dev()), dev_minor(meta.dev()));
    if major != 0
        && let Some(device) = block_device(major, minor)
    {
        return Some(device);
    }
    // Anonymous device (or one sysfs does not list): the mount's source may still be a
    // device node, as for btrfs. tmpfs, overlay, proc, NFS have sources that are not.
    let mount = mount_of(&resolved)?;
    if !mount.source.starts_with("/dev/") {
        return None;
    }
    let (major, minor) = node_id(Path::new(&mount.source))?;
    block_device(major, minor)
}

/// A partition of a disk, as sysfs lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Partition {
    /// Kernel name: `sdb1`, `nvme0n1p2`.
    pub name: String,
    /// Its `major:minor`, from its `dev` file (`None` when unreadable).
    pub id: Option<(u32, u32)>,
}

/// The partitions of the disk `name`, in partition-number order: the entries `NAME*` of
/// `/sys/class/block/NAME/` that have a `partition` file.
pub(crate) fn partitions_in(sys: &Path, name: &str) -> Vec<Partition> {
    let Ok(entries) = fs::read_dir(sys.join("class/block").join(name)) else {
        return Vec::new();
    };
    let mut numbered: Vec<(u32, Partition)> = entries
        .filter_map(|e| {
            let entry = e.ok()?;
            let part = entry.file_name().into_string().ok()?;
            if !part.starts_with(name) || part == name {
                return None;
            }
            let dir = entry.path();
            let number: u32 = read_number(&dir.join("partition"))?;
            let id = fs::read_to_string(dir.join("dev"))
                .ok()
                .and_then(|t| parse_major_minor(&t));
            Some((number, Partition { name: part, id }))
        })
        .collect();
    // By number, so sdb10 comes after sdb2.
    numbered.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
    numbered.into_iter().map(|(_, p)| p).collect()
}

/// What holds the device `name` open as a component (LVM, md, dm-crypt, bcache): the
/// entries of `/sys/class/block/NAME/holders/`, sorted.
pub(crate) fn holders_in(sys: &Path, name: &str) -> Vec<String> {
    let Ok(entries) = fs::read_dir(sys.join("class/block").join(name).join("holders")) else {
        return Vec::new();
    };
    let mut holders: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    holders.sort();
    holders
}

/// The swap areas of a `/proc/swaps` text (`Filename Type Size Used Priority`), escapes
/// resolved; the header and lines without enough fields are skipped.
pub(crate) fn parse_swaps(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [name, kind, ..] if *name != "Filename" && !kind.is_empty() => {
                    Some(unescape_path(name))
                }
                _ => None,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Counters

/// One device's cumulative counters from `/proc/diskstats` (since boot or since the device
/// appeared). Times are milliseconds; sectors are 512 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskCounters {
    /// Field 1: reads completed.
    pub reads: u64,
    /// Field 3: sectors read.
    pub read_sectors: u64,
    /// Field 4: milliseconds spent by all reads (from issue to completion).
    pub read_ms: u64,
    /// Field 5: writes completed.
    pub writes: u64,
    /// Field 7: sectors written.
    pub write_sectors: u64,
    /// Field 8: milliseconds spent by all writes.
    pub write_ms: u64,
    /// Field 9: I/Os in flight at the sample (a gauge, not a counter).
    pub in_flight: u64,
    /// Field 10: milliseconds with at least one I/O in flight.
    pub io_ms: u64,
    /// Field 11: milliseconds × I/Os in flight, summed (the queue's area).
    pub weighted_ms: u64,
    /// Field 12: discards completed (kernel 4.18+).
    pub discards: u64,
    /// Field 16: flush requests completed (kernel 5.5+).
    pub flushes: u64,
    /// Field 17: milliseconds spent by flushes (kernel 5.5+).
    pub flush_ms: u64,
}

/// The counters after `MAJOR MINOR NAME`; `None` when a field is not a number or the
/// count matches no kernel's format.
fn counters_from_fields<'a>(fields: impl Iterator<Item = &'a str>) -> Option<DiskCounters> {
    let v: Vec<u64> = fields.map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let f = |i: usize| v.get(i).copied().unwrap_or(0);
    match v.len() {
        // Partitions before 2.6.25: reads, sectors read, writes, sectors written.
        4 => Some(DiskCounters {
            reads: f(0),
            read_sectors: f(1),
            writes: f(2),
            write_sectors: f(3),
            ..DiskCounters::default()
        }),
        n if n >= 11 => Some(DiskCounters {
            reads: f(0),
            read_sectors: f(2),
            read_ms: f(3),
            writes: f(4),
            write_sectors: f(6),
            write_ms: f(7),
            in_flight: f(8),
            io_ms: f(9),
            weighted_ms: f(10),
            discards: f(11),
            flushes: f(15),
            flush_ms: f(16),
        }),
        _ => None,
    }
}

/// The counters of the device `name` (kernel name: `vda`, `nvme0n1p2`, `dm-0`) in a
/// `/proc/diskstats` text; `None` when it has no well-formed line for it.
pub fn parse_diskstats(text: &str, name: &str) -> Option<DiskCounters> {
    text.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let _major: u32 = fields.next()?.parse().ok()?;
        let _minor: u32 = fields.next()?.parse().ok()?;
        if fields.next()? != name {
            return None;
        }
        counters_from_fields(fields)
    })
}

/// Every well-formed line of a `/proc/diskstats` text: the device's name and counters.
pub fn parse_diskstats_all(text: &str) -> impl Iterator<Item = (&str, DiskCounters)> {
    text.lines().filter_map(|line| {
        let mut fields = line.split_whitespace();
        let _major: u32 = fields.next()?.parse().ok()?;
        let _minor: u32 = fields.next()?.parse().ok()?;
        let name = fields.next()?;
        Some((name, counters_from_fields(fields)?))
    })
}

/// The counters of the device `name` now, from /proc/diskstats.
pub fn read_counters(name: &str) -> Option<DiskCounters> {
    parse_diskstats(&fs::read_to_string(DISKSTATS).ok()?, name)
}

/// A block device's own account of a measure phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct DeviceReading {
    /// The kernel's name (`vda`, `nvme0n1p2`).
    pub name: String,
    pub activity: DiskActivity,
}

/// What the device did between two samples `elapsed` apart (counter wrap-around treated as
/// 0, not a huge number).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskActivity {
    pub reads_per_sec: f64,
    pub writes_per_sec: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    pub flushes_per_sec: f64,
    /// mean requests in the queue (weighted_ms / elapsed ms), iostat's aqu-sz
    pub avg_queue: f64,
    /// fraction of time with I/O in flight (io_ms / elapsed ms), iostat's %util / 100
    pub utilisation: f64,
    /// Mean time of a read from issue to completion (iostat's r_await); 0 without reads.
    pub read_await_ms: f64,
    /// Mean time of a write (iostat's w_await); 0 without writes.
    pub write_await_ms: f64,
}

impl DiskCounters {
    /// The activity between `earlier` and `self`, taken `elapsed` apart. A counter that went
    /// backwards (wrapped, or the device was re-created) counts as zero; an empty interval
    /// gives all zeros rather than infinities.
    pub fn activity_since(&self, earlier: &DiskCounters, elapsed: Duration) -> DiskActivity {
        let secs = elapsed.as_secs_f64();
        if secs <= 0.0 {
            return DiskActivity::default();
        }
        let ms = secs * 1000.0;
        let d = |now: u64, then: u64| now.saturating_sub(then) as f64;
        let reads = d(self.reads, earlier.reads);
        let writes = d(self.writes, earlier.writes);
        let per = |total: f64, count: f64| if count > 0.0 { total / count } else { 0.0 };
        DiskActivity {
            reads_per_sec: reads / secs,
            writes_per_sec: writes / secs,
            read_bytes_per_sec: d(self.read_sectors, earlier.read_sectors) * SECTOR_BYTES as f64
                / secs,
            write_bytes_per_sec: d(self.write_sectors, earlier.write_sectors) * SECTOR_BYTES as f64
                / secs,
            flushes_per_sec: d(self.flushes, earlier.flushes) / secs,
            avg_queue: d(self.weighted_ms, earlier.weighted_ms) / ms,
            // io_ms advances in jiffies and the samples are not taken at the kernel's
            // accounting instants, so the ratio can overshoot 1 slightly: a fraction of
            // time cannot exceed 1.
            utilisation: (d(self.io_ms, earlier.io_ms) / ms).min(1.0),
            read_await_ms: per(d(self.read_ms, earlier.read_ms), reads),
            write_await_ms: per(d(self.write_ms, earlier.write_ms), writes),
        }
    }
}

/// Helpers shared by the tests of this module and of `super::hazard`.
#[cfg(test)]
pub(crate) mod test_support {
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A directory under the system temp dir, removed when dropped.
    pub struct TempDir(pub PathBuf);

    impl TempDir {
        pub fn new(tag: &str) -> TempDir {
            static SEQ: AtomicU32 = AtomicU32::new(0);
            let path = std::env::temp_dir().join(format!(
                "perflab-{tag}-{}-{}",
                std::process::id(),
                SEQ.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(&path).expect("create temp dir");
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A fake sysfs tree laid out as the kernel's: device directories under `devices/`,
    /// partitions nested in their disk's directory, `class/block/NAME` and
    /// `dev/block/MAJ:MIN` symlinks to them.
    pub struct FakeSys {
        pub dir: TempDir,
    }

    impl FakeSys {
        pub fn new() -> FakeSys {
            let dir = TempDir::new("sysfs");
            for d in ["class/block", "dev/block", "devices/pci0000:00/block"] {
                fs::create_dir_all(dir.0.join(d)).expect("mkdir");
            }
            FakeSys { dir }
        }

        pub fn root(&self) -> &Path {
            &self.dir.0
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        }

        fn add(&self, name: &str, rel_dir: &str, major: u32, minor: u32, sectors: u64) {
            self.write(&format!("{rel_dir}/dev"), &format!("{major}:{minor}\n"));
            self.write(&format!("{rel_dir}/size"), &format!("{sectors}\n"));
            fs::create_dir_all(self.root().join(rel_dir).join("holders")).expect("mkdir");
            let target = Path::new("../..").join(rel_dir);
            symlink(&target, self.root().join("class/block").join(name)).expect("symlink");
            symlink(
                &target,
                self.root().join(format!("dev/block/{major}:{minor}")),
            )
            .expect("symlink");
        }

        /// A whole disk with a queue and, when given, a model.
        pub fn disk(&self, name: &str, major: u32, minor: u32, model: Option<&str>) {
            let rel = format!("devices/pci0000:00/block/{name}");
            self.add(name, &rel, major, minor, 2_000_409_264);
            if let Some(model) = model {
                self.write(&format!("{rel}/device/model"), &format!("{model}    \n"));
            }
            self.write(&format!("{rel}/queue/rotational"), "1\n");
            self.write(&format!("{rel}/queue/logical_block_size"), "512\n");
            self.write(&format!("{rel}/queue/physical_block_size"), "4096\n");
            self.write(
                &format!("{rel}/queue/scheduler"),
                "none [mq-deadline] bfq\n",
            );
        }

        pub fn partition(&self, disk: &str, name: &str, major: u32, minor: u32, number: u32) {
            let rel = format!("devices/pci0000:00/block/{disk}/{name}");
            self.add(name, &rel, major, minor, 2048 * u64::from(number));
            self.write(&format!("{rel}/partition"), &format!("{number}\n"));
        }

        pub fn holder(&self, name: &str, holder: &str) {
            let dir = self.root().join("class/block").join(name).join("holders");
            fs::create_dir_all(&dir).expect("mkdir");
            fs::write(dir.join(holder), "").expect("write");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{FakeSys, TempDir};
    use super::*;

    const DISKSTATS_4_15: &str = include_str!("testdata/diskstats_4_15_14fields.txt");
    const DISKSTATS_5_4: &str = include_str!("testdata/diskstats_5_4_18fields.txt");
    const DISKSTATS_6_8: &str = include_str!("testdata/diskstats_6_8_20fields.txt");
    const MOUNTINFO_HOST: &str = include_str!("testdata/mountinfo_host_mixed.txt");
    const MOUNTINFO_VM: &str = include_str!("testdata/mountinfo_vm_ext4_root.txt");

    /// glibc's makedev, to check the decoding against.
    fn makedev(major: u32, minor: u32) -> u64 {
        let (major, minor) = (u64::from(major), u64::from(minor));
        ((major & 0xffff_f000) << 32)
            | ((major & 0xfff) << 8)
            | ((minor & 0xffff_ff00) << 12)
            | (minor & 0xff)
    }

    #[test]
    fn dev_t_decoding_matches_glibc() {
        assert_eq!((dev_major(0xfe00), dev_minor(0xfe00)), (254, 0));
        assert_eq!((dev_major(0x811), dev_minor(0x811)), (8, 17));
        for (major, minor) in [
            (0, 0),
            (259, 3),
            (4095, 255),
            (4096, 256),
            (u32::MAX, 1 << 20),
        ] {
            let dev = makedev(major, minor);
            assert_eq!((dev_major(dev), dev_minor(dev)), (major, minor), "{dev:#x}");
        }
        assert_eq!(dev_major(u64::MAX), u32::MAX);
        assert_eq!(dev_minor(u64::MAX), u32::MAX);
    }

    #[test]
    fn diskstats_14_fields_have_no_discards_or_flushes() {
        let sda = parse_diskstats(DISKSTATS_4_15, "sda").expect("sda");
        assert_eq!(
            sda,
            DiskCounters {
                reads: 1_841_563,
                read_sectors: 101_458_642,
                read_ms: 1_259_380,
                writes: 3_381_072,
                write_sectors: 218_347_720,
                write_ms: 27_640_724,
                in_flight: 0,
                io_ms: 3_137_876,
                weighted_ms: 28_912_460,
                discards: 0,
                flushes: 0,
                flush_ms: 0,
            }
        );
        assert_eq!(
            parse_diskstats(DISKSTATS_4_15, "dm-0").map(|c| c.in_flight),
            Some(3)
        );
        // "sda" must not match "sda1", nor the reverse.
        assert_eq!(
            parse_diskstats(DISKSTATS_4_15, "sda1").map(|c| c.reads),
            Some(1_841_254)
        );
        assert_eq!(parse_diskstats(DISKSTATS_4_15, "sdc"), None);
    }

    #[test]
    fn diskstats_18_fields_have_discards() {
        let nvme = parse_diskstats(DISKSTATS_5_4, "nvme0n1").expect("nvme0n1");
        assert_eq!(nvme.reads, 8_453_221);
        assert_eq!(nvme.write_sectors, 948_112_984);
        assert_eq!(nvme.weighted_ms, 6_810_284);
        assert_eq!(nvme.discards, 58_211);
        assert_eq!((nvme.flushes, nvme.flush_ms), (0, 0));
        assert_eq!(
            parse_diskstats(DISKSTATS_5_4, "nvme0n1p2").map(|c| c.io_ms),
            Some(5_432_956)
        );
    }

    #[test]
    fn diskstats_20_fields_have_flushes() {
        let vda = parse_diskstats(DISKSTATS_6_8, "vda").expect("vda");
        assert_eq!(vda.reads, 36_880);
        assert_eq!(vda.read_sectors, 2_606_194);
        assert_eq!(vda.write_ms, 12_350);
        assert_eq!(vda.discards, 9_468);
        assert_eq!((vda.flushes, vda.flush_ms), (5_299, 53));
        let sdb = parse_diskstats(DISKSTATS_6_8, "sdb").expect("sdb");
        assert_eq!((sdb.in_flight, sdb.flushes), (31, 55));
        assert_eq!(
            parse_diskstats(DISKSTATS_6_8, "md127").map(|c| c.writes),
            Some(4_450_218)
        );
    }

    #[test]
    fn diskstats_tolerates_odd_lines() {
        let text = "\n garbage\n8 0\n8 0 sda\n8 0 sda 1 2 3\nx 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\
                    8 0 sda 1 2 3 4 5 6 7 8 9 10 -11\n8 0 sda 1 2 3 4 5 6 7 8 9 10 99999999999999999999999\n\
                    8 1 sda1 10 20 30 40\n8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n";
        // Every malformed sda line is skipped; the last, with more fields than any kernel
        // prints so far, is read for the fields known.
        let sda = parse_diskstats(text, "sda").expect("sda");
        assert_eq!((sda.reads, sda.weighted_ms, sda.flush_ms), (1, 11, 17));
        // The 4-counter partition format of kernels before 2.6.25.
        let sda1 = parse_diskstats(text, "sda1").expect("sda1");
        assert_eq!(
            (
                sda1.reads,
                sda1.read_sectors,
                sda1.writes,
                sda1.write_sectors
            ),
            (10, 20, 30, 40)
        );
        assert_eq!(sda1.read_ms, 0);
        assert_eq!(parse_diskstats("", "sda"), None);
        assert_eq!(parse_diskstats(text, ""), None);
    }

    #[test]
    fn diskstats_names_by_major_minor() {
        assert_eq!(
            diskstats_name(DISKSTATS_6_8, 254, 0).as_deref(),
            Some("vda")
        );
        assert_eq!(
            diskstats_name(DISKSTATS_5_4, 259, 2).as_deref(),
            Some("nvme0n1p2")
        );
        assert_eq!(diskstats_name(DISKSTATS_5_4, 259, 9), None);
        assert_eq!(diskstats_name("8 0\nx y z\n", 8, 0), None);
    }

    #[test]
    fn activity_is_rates_over_the_interval() {
        let earlier = DiskCounters {
            reads: 1_000,
            read_sectors: 80_000,
            read_ms: 500,
            writes: 2_000,
            write_sectors: 160_000,
            write_ms: 4_000,
            in_flight: 7,
            io_ms: 10_000,
            weighted_ms: 50_000,
            discards: 3,
            flushes: 10,
            flush_ms: 20,
        };
        let later = DiskCounters {
            reads: 1_200,                 // +200
            read_sectors: 80_000 + 3_200, // +1.6 MiB
            read_ms: 500 + 100,           // 0.5 ms per read
            writes: 2_400,                // +400
            write_sectors: 160_000 + 12_800,
            write_ms: 4_000 + 1_200, // 3 ms per write
            in_flight: 0,
            io_ms: 10_000 + 1_500,       // busy 1.5 s of 2 s
            weighted_ms: 50_000 + 3_000, // 1.5 requests queued on average
            discards: 3,
            flushes: 30, // +20
            flush_ms: 40,
        };
        let a = later.activity_since(&earlier, Duration::from_secs(2));
        assert_eq!(a.reads_per_sec, 100.0);
        assert_eq!(a.writes_per_sec, 200.0);
        assert_eq!(a.read_bytes_per_sec, 3_200.0 * 512.0 / 2.0);
        assert_eq!(a.write_bytes_per_sec, 12_800.0 * 512.0 / 2.0);
        assert_eq!(a.flushes_per_sec, 10.0);
        assert_eq!(a.avg_queue, 1.5);
        assert_eq!(a.utilisation, 0.75);
        assert_eq!(a.read_await_ms, 0.5);
        assert_eq!(a.write_await_ms, 3.0);
    }

    #[test]
    fn activity_treats_wraps_and_empty_intervals_as_nothing() {
        let big = DiskCounters {
            reads: u64::from(u32::MAX) - 5,
            read_ms: 900,
            io_ms: 1_000,
            ..DiskCounters::default()
        };
        let wrapped = DiskCounters {
            reads: 10,
            read_ms: 100,
            io_ms: 1_000 + 5_000, // more busy time than the interval: clamped to 1
            ..DiskCounters::default()
        };
        let a = wrapped.activity_since(&big, Duration::from_secs(1));
        assert_eq!(a.reads_per_sec, 0.0);
        assert_eq!(a.read_await_ms, 0.0);
        assert_eq!(a.utilisation, 1.0);
        assert!(a.avg_queue == 0.0 && a.writes_per_sec == 0.0 && a.write_await_ms == 0.0);
        assert_eq!(
            wrapped.activity_since(&big, Duration::ZERO),
            DiskActivity::default()
        );
        let same = big.activity_since(&big, Duration::from_millis(100));
        assert_eq!(same, DiskActivity::default());
    }

    #[test]
    fn counters_and_devices_round_trip_through_json() {
        let c = parse_diskstats(DISKSTATS_6_8, "vda").expect("vda");
        let json = serde_json::to_string(&c).expect("serialize");
        assert_eq!(
            serde_json::from_str::<DiskCounters>(&json).expect("load"),
            c
        );
        // A record written before the flush fields existed still loads.
        let old: DiskCounters = serde_json::from_str(r#"{"reads": 5}"#).expect("load old");
        assert_eq!((old.reads, old.flushes), (5, 0));
        let d: BlockDevice =
            serde_json::from_str(r#"{"name": "vda", "major": 254, "minor": 0}"#).expect("load");
        assert_eq!((d.name.as_str(), d.size_bytes), ("vda", None));
    }

    #[test]
    fn octal_escapes_are_decoded() {
        assert_eq!(unescape_octal(r"/mnt/My\040Disk"), b"/mnt/My Disk");
        assert_eq!(unescape_octal(r"a\011b\012c\134d"), b"a\tb\nc\\d");
        // Not an escape: kept as written.
        assert_eq!(unescape_octal(r"\"), b"\\");
        assert_eq!(unescape_octal(r"x\04"), b"x\\04");
        assert_eq!(unescape_octal(r"\400\08a"), b"\\400\\08a");
        // Non-UTF-8 bytes survive in paths.
        assert_eq!(unescape_octal(r"\377"), [0xff]);
        assert_eq!(unescape_path(r"/a\040b").as_os_str().len(), 4);
        assert_eq!(unescape_text(r"\377"), "\u{fffd}");
    }

    #[test]
    fn mountinfo_fields_and_escapes() {
        let mounts = parse_mountinfo(MOUNTINFO_HOST);
        assert_eq!(mounts.len(), 17);
        let root = &mounts[4];
        assert_eq!(root.mount_point, Path::new("/"));
        assert_eq!(
            (root.fs_type.as_str(), root.source.as_str()),
            ("ext4", "/dev/nvme0n1p2")
        );
        assert_eq!((root.major, root.minor), (259, 2));
        assert_eq!(root.options, "rw,relatime,errors=remount-ro");

        let spaced = mounts
            .iter()
            .find(|m| m.mount_point == Path::new("/mnt/My Disk"))
            .expect("escaped space");
        assert_eq!((spaced.major, spaced.minor), (8, 33));
        // Read-only mount of a read-write superblock: read-only, as /proc/mounts says.
        assert_eq!(
            spaced.options,
            "ro,nosuid,nodev,relatime,attr2,inode64,logbufs=8,logbsize=32k,noquota"
        );
        // A bind mount of a subdirectory: the same device at another place.
        let bind = mounts
            .iter()
            .find(|m| m.mount_point == Path::new("/srv/bind mount"))
            .expect("bind mount");
        assert_eq!(
            (bind.major, bind.minor, bind.source.as_str()),
            (8, 33, "/dev/sdc1")
        );

        let btrfs: Vec<_> = mounts.iter().filter(|m| m.fs_type == "btrfs").collect();
        assert_eq!(btrfs.len(), 2);
        assert!(btrfs.iter().all(|m| m.major == 0 && m.source == "/dev/sdb"));
        let overlay = mounts
            .iter()
            .find(|m| m.fs_type == "overlay")
            .expect("overlay");
        assert_eq!(overlay.source, "overlay");
        assert!(
            overlay
                .options
                .contains("upperdir=/var/lib/docker/overlay2/8c1f/diff")
        );
        let nfs = mounts.iter().find(|m| m.fs_type == "nfs4").expect("nfs");
        assert_eq!(nfs.source, "fileserver:/export/home");

        let vm = parse_mountinfo(MOUNTINFO_VM);
        let root = vm
            .iter()
            .find(|m| m.mount_point == Path::new("/"))
            .expect("root");
        assert_eq!(
            (root.fs_type.as_str(), root.major, root.minor),
            ("ext4", 254, 0)
        );
    }

    #[test]
    fn mountinfo_skips_odd_lines() {
        let text = "\nnonsense\n1 2 3 4 5 6 - x\n24 27 0:6 / /dev rw - devtmpfs\n\
                    25 24 x:y / /bad rw - tmpfs tmpfs rw\n26 24 0:7 / /empty rw - tmpfs  rw,size=4k\n\
                    27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard";
        let mounts = parse_mountinfo(text);
        let points: Vec<_> = mounts.iter().map(|m| m.mount_point.clone()).collect();
        assert_eq!(
            points,
            [
                PathBuf::from("/dev"),
                PathBuf::from("/empty"),
                PathBuf::from("/")
            ]
        );
        // Missing source and super options are empty, not taken from elsewhere.
        assert_eq!(
            (mounts[0].source.as_str(), mounts[0].options.as_str()),
            ("", "rw")
        );
        assert_eq!(
            (mounts[1].fs_type.as_str(), mounts[1].source.as_str()),
            ("tmpfs", "")
        );
        assert_eq!(mounts[1].options, "rw,size=4k");
        assert_eq!(mounts[2].options, "rw,relatime,discard");
    }

    #[test]
    fn the_longest_and_topmost_mount_holds_a_path() {
        let mounts = parse_mountinfo(MOUNTINFO_HOST);
        let fs_of = |p: &str| {
            mount_for(&mounts, Path::new(p)).map(|m| (m.fs_type.as_str(), m.source.as_str()))
        };
        assert_eq!(fs_of("/mnt/My Disk/file"), Some(("xfs", "/dev/sdc1")));
        assert_eq!(fs_of("/mnt/My"), Some(("ext4", "/dev/nvme0n1p2")));
        assert_eq!(fs_of("/home/me/.cache"), Some(("btrfs", "/dev/sdb")));
        // Component-wise: /bootx is not under /boot/efi, nor /boot/efix.
        assert_eq!(
            fs_of("/boot/efi/EFI/boot.efi"),
            Some(("vfat", "/dev/nvme0n1p1"))
        );
        assert_eq!(fs_of("/boot/efix"), Some(("ext4", "/dev/nvme0n1p2")));
        // Two tmpfs stacked on /tmp: the later is on top.
        assert_eq!(fs_of("/tmp/x"), Some(("tmpfs", "scratch")));
        assert_eq!(
            fs_of("/net/home/me"),
            Some(("nfs4", "fileserver:/export/home"))
        );
        assert_eq!(fs_of("/"), Some(("ext4", "/dev/nvme0n1p2")));
        assert_eq!(mount_for(&[], Path::new("/")), None);
    }

    #[test]
    fn scheduler_choice() {
        assert_eq!(
            parse_scheduler("none [mq-deadline] kyber bfq \n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            parse_scheduler("[none] mq-deadline").as_deref(),
            Some("none")
        );
        assert_eq!(parse_scheduler("none\n").as_deref(), Some("none"));
        assert_eq!(parse_scheduler("none mq-deadline"), None);
        assert_eq!(parse_scheduler("[] x"), None);
        assert_eq!(parse_scheduler(""), None);
    }

    #[test]
    fn swaps_are_listed_without_the_header() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/sda3                               partition\t8388604\t\t0\t\t-2\n\
                    /swap\\040file                           file\t\t1048572\t\t0\t\t-3\n\
                    odd\n";
        assert_eq!(
            parse_swaps(text),
            [PathBuf::from("/dev/sda3"), PathBuf::from("/swap file")]
        );
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn sysfs_describes_a_partition_through_its_disk() {
        let sys = FakeSys::new();
        sys.disk("sdb", 8, 16, Some("WDC WD10EZEX-00B"));
        sys.partition("sdb", "sdb1", 8, 17, 1);
        sys.partition("sdb", "sdb2", 8, 18, 2);
        sys.partition("sdb", "sdb10", 259, 0, 10);
        sys.holder("sdb1", "dm-0");
        sys.holder("sdb1", "dm-1");

        let part = block_device_in(sys.root(), 8, 17, || None).expect("sdb1");
        assert_eq!(
            part,
            BlockDevice {
                name: "sdb1".to_string(),
                major: 8,
                minor: 17,
                whole_disk: Some("sdb".to_string()),
                model: Some("WDC WD10EZEX-00B".to_string()),
                rotational: Some(true),
                logical_block_size: Some(512),
                physical_block_size: Some(4096),
                scheduler: Some("mq-deadline".to_string()),
                size_bytes: Some(2048 * 512),
            }
        );
        let disk = block_device_in(sys.root(), 8, 16, || None).expect("sdb");
        assert_eq!(
            (disk.whole_disk, disk.size_bytes),
            (None, Some(2_000_409_264 * 512))
        );

        let parts: Vec<_> = partitions_in(sys.root(), "sdb")
            .into_iter()
            .map(|p| (p.name, p.id))
            .collect();
        assert_eq!(
            parts,
            [
                ("sdb1".to_string(), Some((8, 17))),
                ("sdb2".to_string(), Some((8, 18))),
                ("sdb10".to_string(), Some((259, 0)))
            ]
        );
        assert!(partitions_in(sys.root(), "sdb1").is_empty());
        assert!(partitions_in(sys.root(), "nope").is_empty());
        assert_eq!(holders_in(sys.root(), "sdb1"), ["dm-0", "dm-1"]);
        assert!(holders_in(sys.root(), "sdb").is_empty());
    }

    #[test]
    fn without_sysfs_the_name_comes_from_diskstats() {
        let empty = TempDir::new("nosys");
        let d = block_device_in(&empty.0, 254, 0, || Some(DISKSTATS_6_8.to_string()))
            .expect("named from diskstats");
        assert_eq!(
            (d.name.as_str(), d.whole_disk, d.scheduler),
            ("vda", None, None)
        );
        assert_eq!(
            block_device_in(&empty.0, 254, 7, || Some(DISKSTATS_6_8.to_string())),
            None
        );
        assert_eq!(block_device_in(&empty.0, 254, 0, || None), None);
    }

    #[test]
    fn missing_paths_resolve_through_their_existing_ancestor() {
        let dir = TempDir::new("resolve");
        let canonical = fs::canonicalize(&dir.0).expect("canonical");
        let missing = dir.0.join("not/yet/created.dat");
        assert_eq!(
            resolve(&missing),
            Some(canonical.join("not/yet/created.dat"))
        );
        assert_eq!(resolve(Path::new("/")), Some(PathBuf::from("/")));
    }

    /// The root mount as a plain reading of mountinfo sees it: the last line whose mount
    /// point is "/" (what `findmnt /` shows).
    fn root_line_fields() -> Option<(String, String, String)> {
        let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
        text.lines()
            .rfind(|l| l.split(' ').nth(4) == Some("/"))
            .and_then(|l| {
                let majmin = l.split(' ').nth(2)?.to_string();
                let mut right = l.split(" - ").nth(1)?.split(' ');
                Some((majmin, right.next()?.to_string(), right.next()?.to_string()))
            })
    }

    #[test]
    fn this_machines_root_mount() {
        let root = mount_of(Path::new("/")).expect("/ is mounted");
        assert_eq!(root.mount_point, Path::new("/"));
        let (majmin, fs_type, source) = root_line_fields().expect("root line");
        assert_eq!(root.fs_type, fs_type);
        assert_eq!(root.source, source);
        assert_eq!(format!("{}:{}", root.major, root.minor), majmin);
        // A file that does not exist yet is on the mount of its directory.
        let later = mount_of(Path::new("/perflab-no-such-dir/file")).expect("mount");
        assert_eq!(later.mount_point, Path::new("/"));
    }

    #[test]
    fn this_machines_root_device() {
        let meta = fs::metadata("/").expect("stat /");
        let (major, minor) = (dev_major(meta.dev()), dev_minor(meta.dev()));
        let root = mount_of(Path::new("/")).expect("root mount");
        if major == 0 && !root.source.starts_with("/dev/") {
            eprintln!(
                "skipped: / is {} from {}, not on a block device",
                root.fs_type, root.source
            );
            assert_eq!(device_of(Path::new("/")), None);
            return;
        }
        let device = device_of(Path::new("/")).expect("/ is on a block device");
        eprintln!("/ is on {device:?}");
        if major != 0 {
            assert_eq!((device.major, device.minor), (major, minor));
        }
        assert!(!device.name.is_empty());
        assert!(device.size_bytes.is_some_and(|s| s > 0));
        assert!(
            read_counters(&device.name).is_some(),
            "{} in /proc/diskstats",
            device.name
        );
        // On the perflab VM: ext4 directly on /dev/vda, 254:0.
        if root.source == "/dev/vda" {
            assert_eq!(
                (device.name.as_str(), device.major, device.minor),
                ("vda", 254, 0)
            );
            assert_eq!(device.whole_disk, None);
            assert_eq!(
                device_of(Path::new("/dev/vda")).map(|d| d.name),
                Some("vda".to_string())
            );
        }
        // Not yet created: the device of the nearest existing directory.
        assert_eq!(
            device_of(Path::new("/perflab-no-such-dir/file")).map(|d| d.name),
            Some(device.name)
        );
    }

    #[test]
    fn tmpfs_has_no_device() {
        match mount_of(Path::new("/dev/shm")) {
            Some(m) if m.fs_type == "tmpfs" => assert_eq!(device_of(Path::new("/dev/shm")), None),
            other => eprintln!("skipped: /dev/shm is not tmpfs here ({other:?})"),
        }
        // proc and sysfs have no device either.
        assert_eq!(device_of(Path::new("/proc/self")), None);
    }
}
