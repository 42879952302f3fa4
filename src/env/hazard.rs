//! Whether writing to a block device would destroy someone's data.
//!
//! A raw-device benchmark overwrites whatever is on the device. Before it writes,
//! [`device_hazards`] lists every reason not to; an empty list means no sign of data was
//! found (not a proof that there is none: see "Not detected" below). The reasons
//! ([`Hazard`]) and where they come from:
//!
//! | Hazard | Source |
//! |---|---|
//! | [`Hazard::Mounted`] | `/proc/self/mountinfo`: a mount whose `MAJ:MIN` is the device's or one of its partitions' (for major 0, as btrfs reports, the mount source's device node) |
//! | [`Hazard::Partitioned`] | `/sys/class/block/NAME/NAME*/partition` |
//! | [`Hazard::InUse`] | `/sys/class/block/NAME/holders/` (and its partitions'): LVM, md, dm-crypt, bcache; `/proc/swaps`; else an exclusive open (`O_EXCL`, read-only) refused with `EBUSY`, which catches users invisible from here (a mount in another mount namespace) |
//! | [`Hazard::Signature`] | the first 256 KiB of the device, by [`detect_signature`] |
//!
//! Nothing is ever written. A device that cannot be read (no permission) is not checked
//! for signatures nor by the exclusive open; the sysfs and /proc checks need no privileges.
//!
//! # Map
//!
//! - [`Hazard`] and its `Display`: the reasons, worded to follow "refusing to write to
//!   /dev/sdb: ".
//! - [`detect_signature`] (pure, on bytes) and [`signature_of`] (reads a file or device).
//! - [`device_hazards`]: gathers the facts of a device (sysfs, mountinfo, /proc/swaps) and
//!   hands them to `block_hazards`, which is pure over a sysfs root and is tested on a
//!   fake tree; then adds the exclusive-open and signature checks.
//!
//! # Signatures
//!
//! [`detect_signature`] names what the start of a device or image holds, by the short
//! names of the first column, fit to print on their own ("it holds an ext4 signature");
//! `blkid`'s and `wipefs`'s names, where they differ, are in brackets. Offsets are bytes
//! from the start; "LE"/"BE" is the byte order of a number. A magic alone that is short is
//! confirmed by a sanity check on a nearby field, so random data is not taken for a
//! filesystem.
//!
//! | Kind | Holds | Magic at offset |
//! |---|---|---|
//! | `LUKS` | LUKS1/LUKS2 encrypted volume (blkid: `crypto_LUKS`) | `LUKS\xba\xbe` at 0; LUKS2's second header `SKUL\xba\xbe` at 16, 32, 64 or 128 KiB |
//! | `LVM2` | LVM2 physical volume (`LVM2_member`) | `LABELONE` at the start of sector 0, 1, 2 or 3 (512-byte sectors) |
//! | `MD RAID` | MD RAID member, superblock v1.1 or v1.2 (`linux_raid_member`) | `0xa92b4efc` LE at 0 (v1.1) or 4096 (v1.2), followed by major version 1 (LE u32) |
//! | `bcache` | bcache backing or cache device | 16 bytes `c6 85 73 f6 4e 1a 45 ca 82 65 f5 7f 48 ba 6d 81` at 4096 + 24 |
//! | `ZFS` | ZFS pool member (`zfs_member`) | uberblock magic `0x00bab10c` (u64, either order) at the start of a 1 KiB slot in 128–256 KiB (label 0's uberblock ring; seen only when the head is longer than 128 KiB) |
//! | `xfs` | XFS | `XFSB` at 0, block size (BE u32 at 4) a power of two in 512..=65536 |
//! | `btrfs` | btrfs | `_BHRfS_M` at 65600 (superblock at 64 KiB, magic at +64) |
//! | `ext2`, `ext3`, `ext4`, `ext journal` | ext2/3/4 filesystem, or an ext3/4 external journal (`jbd`) | `0xEF53` LE at 1080 (superblock at 1024, `s_magic` at +56), `s_log_block_size` (+24) ≤ 6; told apart by the feature flags at +92 (compat), +96 (incompat), +100 (ro_compat) as below |
//! | `f2fs` | F2FS | `0xF2F52010` LE at 1024 |
//! | `squashfs` | SquashFS | `hsqs` (little-endian image) or `sqsh` (big-endian) at 0 |
//! | `swap` | Linux swap area | `SWAPSPACE2` or `SWAP-SPACE` at page size − 10, for 4, 8, 16 and 64 KiB pages (4086, 8182, 16374, 65526) |
//! | `iso9660` | ISO 9660 (CD/DVD image) | `CD001` at 32769 (volume descriptor at sector 16 of 2048 bytes, +1) |
//! | `ntfs` | NTFS | `NTFS    ` (four spaces) at 3 |
//! | `exfat` | exFAT | `EXFAT   ` at 3 |
//! | `vfat` | FAT12/16/32 | `FAT` at 54 (FAT12/16) or 82 (FAT32), `55 AA` at 510, bytes per sector (LE u16 at 11) a power of two in 512..=4096 |
//! | `GPT` | GPT partition table (blkid PTTYPE `gpt`) | `EFI PART` at 512 (512-byte sectors) or 4096 (4 KiB sectors) |
//! | `MBR` | MBR (DOS) partition table (`dos`) | `55 AA` at 510; of the four 16-byte entries at 446, every boot flag is `00` or `80` and at least one has a non-zero type, start and length |
//!
//! ext kinds: the `JOURNAL_DEV` incompat flag (0x8) makes it `ext journal`; any incompat flag
//! beyond ext3's (`FILETYPE` 0x2, `RECOVER` 0x4, `META_BG` 0x10) or ro_compat flag beyond
//! (`SPARSE_SUPER` 0x1, `LARGE_FILE` 0x2, `BTREE_DIR` 0x4) makes it `ext4` (extents, 64bit,
//! flex_bg, metadata_csum, ...); else the `HAS_JOURNAL` compat flag (0x4) makes it `ext3`,
//! and its absence `ext2`. When several signatures are present (an ISO image with a hybrid
//! MBR, a filesystem on a disk with a stale partition table), the first of the table wins.
//!
//! Not detected: signatures stored only at the end of a device (MD superblocks v0.90 and
//! v1.0, DRBD metadata, ZFS labels 2 and 3, GPT's backup header), filesystems not in the
//! table, and data without any signature (a raw database file written to the device).

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::disk::{self, MountInfo};

/// How much of a device or file [`signature_of`] reads: 256 KiB, enough for every
/// signature of the table including ZFS's uberblocks at 128 KiB.
pub const HEAD_BYTES: usize = 256 * 1024;

/// A reason writing to a device would destroy data.
#[derive(Debug, Clone, PartialEq)]
pub enum Hazard {
    /// The device, or one of its partitions, is mounted (one hazard per mounted device,
    /// naming its shortest mount point).
    Mounted { mount_point: PathBuf },
    /// The device holds partitions (kernel names, in partition-number order).
    Partitioned { partitions: Vec<String> },
    /// Something uses the device: a holder (`dm-0`, `md127`; `dm-0 (through sdb1)` for a
    /// partition's holder), `swap`, or a user found only by a refused exclusive open.
    InUse { by: String },
    /// A filesystem, partition-table, RAID, LVM, LUKS or swap signature is in its first
    /// bytes; `kind` is a name of the table in the module docs.
    Signature { kind: &'static str },
}

/// The phrase for each signature kind, article included, for [`Hazard`]'s `Display`.
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("LUKS", "a LUKS encrypted volume signature"),
    ("LVM2", "an LVM2 physical volume signature"),
    ("MD RAID", "an MD RAID member signature"),
    ("bcache", "a bcache device signature"),
    ("ZFS", "a ZFS pool member signature"),
    ("xfs", "an XFS filesystem signature"),
    ("btrfs", "a btrfs filesystem signature"),
    ("ext2", "an ext2 filesystem signature"),
    ("ext3", "an ext3 filesystem signature"),
    ("ext4", "an ext4 filesystem signature"),
    ("ext journal", "an ext3/4 external journal signature"),
    ("f2fs", "an F2FS filesystem signature"),
    ("squashfs", "a SquashFS filesystem signature"),
    ("swap", "a swap area signature"),
    ("iso9660", "an ISO 9660 filesystem signature"),
    ("ntfs", "an NTFS filesystem signature"),
    ("exfat", "an exFAT filesystem signature"),
    ("vfat", "a FAT filesystem signature"),
    ("GPT", "a GPT partition table signature"),
    ("MBR", "an MBR (DOS) partition table signature"),
];

impl fmt::Display for Hazard {
    /// A lower-case phrase that completes "refusing to write to /dev/sdb: ".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hazard::Mounted { mount_point } => {
                write!(f, "it is mounted at {}", mount_point.display())
            }
            Hazard::Partitioned { partitions } => {
                write!(f, "it holds a partition table ({})", partitions.join(", "))
            }
            Hazard::InUse { by } => write!(f, "it is in use by {by}"),
            Hazard::Signature { kind } => match DESCRIPTIONS.iter().find(|(k, _)| k == kind) {
                Some((_, phrase)) => write!(f, "it holds {phrase}"),
                None => write!(f, "it holds a {kind} signature"),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------
// Signatures

/// Whether `head` has `magic` at `offset` (false when the head is too short).
fn has(head: &[u8], offset: usize, magic: &[u8]) -> bool {
    offset
        .checked_add(magic.len())
        .and_then(|end| head.get(offset..end))
        == Some(magic)
}

fn bytes<const N: usize>(head: &[u8], offset: usize) -> Option<[u8; N]> {
    head.get(offset..offset.checked_add(N)?)?.try_into().ok()
}

fn le16(head: &[u8], offset: usize) -> Option<u16> {
    bytes(head, offset).map(u16::from_le_bytes)
}

fn le32(head: &[u8], offset: usize) -> Option<u32> {
    bytes(head, offset).map(u32::from_le_bytes)
}

fn be32(head: &[u8], offset: usize) -> Option<u32> {
    bytes(head, offset).map(u32::from_be_bytes)
}

const LUKS_MAGIC: &[u8] = b"LUKS\xba\xbe";
const LUKS2_SECONDARY_MAGIC: &[u8] = b"SKUL\xba\xbe";
/// Where LUKS2 may keep its second header (it follows the first, whose size is one of
/// these), within [`HEAD_BYTES`].
const LUKS2_SECONDARY_OFFSETS: [usize; 4] = [0x4000, 0x8000, 0x1_0000, 0x2_0000];

fn is_luks(head: &[u8]) -> bool {
    has(head, 0, LUKS_MAGIC)
        || LUKS2_SECONDARY_OFFSETS
            .iter()
            .any(|&o| has(head, o, LUKS2_SECONDARY_MAGIC))
}

fn is_lvm2(head: &[u8]) -> bool {
    (0..4).any(|sector| has(head, sector * 512, b"LABELONE"))
}

const MD_MAGIC: u32 = 0xa92b_4efc;

fn is_md_v1(head: &[u8]) -> bool {
    // v1.1 at the start, v1.2 at 4 KiB (v0.90 and v1.0 live at the end of the device).
    [0, 4096]
        .iter()
        .any(|&o| le32(head, o) == Some(MD_MAGIC) && le32(head, o + 4) == Some(1))
}

const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];

fn is_bcache(head: &[u8]) -> bool {
    has(head, 4096 + 24, &BCACHE_MAGIC)
}

const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

fn is_zfs(head: &[u8]) -> bool {
    // Label 0's uberblock ring fills 128..256 KiB in slots of at least 1 KiB; each slot
    // starts with the magic in the byte order of the machine that wrote it.
    (128..256).any(|k| {
        bytes::<8>(head, k * 1024).is_some_and(|b| {
            u64::from_le_bytes(b) == ZFS_UBERBLOCK_MAGIC
                || u64::from_be_bytes(b) == ZFS_UBERBLOCK_MAGIC
        })
    })
}

fn is_xfs(head: &[u8]) -> bool {
    has(head, 0, b"XFSB")
        && be32(head, 4).is_some_and(|bs| bs.is_power_of_two() && (512..=65536).contains(&bs))
}

fn is_btrfs(head: &[u8]) -> bool {
    has(head, 65536 + 64, b"_BHRfS_M")
}

/// The ext kind of the superblock at 1024, if there is one.
fn ext_kind(head: &[u8]) -> Option<&'static str> {
    const SB: usize = 1024;
    const INCOMPAT_JOURNAL_DEV: u32 = 0x8;
    const EXT3_INCOMPAT: u32 = 0x2 | 0x4 | 0x10;
    const EXT3_RO_COMPAT: u32 = 0x1 | 0x2 | 0x4;
    const COMPAT_HAS_JOURNAL: u32 = 0x4;
    if le16(head, SB + 56)? != 0xEF53 || le32(head, SB + 24)? > 6 {
        return None;
    }
    let compat = le32(head, SB + 92)?;
    let incompat = le32(head, SB + 96)?;
    let ro_compat = le32(head, SB + 100)?;
    Some(if incompat & INCOMPAT_JOURNAL_DEV != 0 {
        "ext journal"
    } else if incompat & !EXT3_INCOMPAT != 0 || ro_compat & !EXT3_RO_COMPAT != 0 {
        "ext4"
    } else if compat & COMPAT_HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    })
}

fn is_f2fs(head: &[u8]) -> bool {
    le32(head, 1024) == Some(0xF2F5_2010)
}

fn is_squashfs(head: &[u8]) -> bool {
    has(head, 0, b"hsqs") || has(head, 0, b"sqsh")
}

fn is_swap(head: &[u8]) -> bool {
    [4096, 8192, 16384, 65536]
        .iter()
        .any(|&page| has(head, page - 10, b"SWAPSPACE2") || has(head, page - 10, b"SWAP-SPACE"))
}

const BOOT_SIGNATURE: &[u8] = &[0x55, 0xAA];

fn is_fat(head: &[u8]) -> bool {
    (has(head, 54, b"FAT") || has(head, 82, b"FAT"))
        && has(head, 510, BOOT_SIGNATURE)
        && le16(head, 11).is_some_and(|bps| bps.is_power_of_two() && (512..=4096).contains(&bps))
}

fn is_gpt(head: &[u8]) -> bool {
    has(head, 512, b"EFI PART") || has(head, 4096, b"EFI PART")
}

fn is_mbr(head: &[u8]) -> bool {
    if !has(head, 510, BOOT_SIGNATURE) {
        return false;
    }
    let Some(table) = head.get(446..510) else {
        return false;
    };
    // Boot code and random data may end in 55 AA too; a real table has only 00/80 boot
    // flags and at least one entry that describes an actual extent.
    let entries = || table.chunks_exact(16);
    entries().all(|e| e[0] == 0x00 || e[0] == 0x80)
        && entries().any(|e| {
            let start = u32::from_le_bytes([e[8], e[9], e[10], e[11]]);
            let sectors = u32::from_le_bytes([e[12], e[13], e[14], e[15]]);
            e[4] != 0 && start != 0 && sectors != 0
        })
}

/// The detectors in the order of the module docs' table: volume managers and filesystems
/// with long magics first, partition tables last, so that when an image carries several
/// signatures (an ISO with a hybrid MBR) the more specific one names it.
type Detector = fn(&[u8]) -> Option<&'static str>;

const DETECTORS: &[Detector] = &[
    |h| is_luks(h).then_some("LUKS"),
    |h| is_lvm2(h).then_some("LVM2"),
    |h| is_md_v1(h).then_some("MD RAID"),
    |h| is_bcache(h).then_some("bcache"),
    |h| is_zfs(h).then_some("ZFS"),
    |h| is_xfs(h).then_some("xfs"),
    |h| is_btrfs(h).then_some("btrfs"),
    ext_kind,
    |h| is_f2fs(h).then_some("f2fs"),
    |h| is_squashfs(h).then_some("squashfs"),
    |h| is_swap(h).then_some("swap"),
    |h| has(h, 32769, b"CD001").then_some("iso9660"),
    |h| has(h, 3, b"NTFS    ").then_some("ntfs"),
    |h| has(h, 3, b"EXFAT   ").then_some("exfat"),
    |h| is_fat(h).then_some("vfat"),
    |h| is_gpt(h).then_some("GPT"),
    |h| is_mbr(h).then_some("MBR"),
];

/// Signatures to look for, given the first 128 KiB (or fewer, if the file is shorter) of
/// a device or file. The kinds and offsets are in the module docs' table; a head longer
/// than 128 KiB also lets ZFS be seen. All-zero and random data give `None`.
pub fn detect_signature(head: &[u8]) -> Option<&'static str> {
    DETECTORS.iter().find_map(|detect| detect(head))
}

/// Reads up to 256 KiB ([`HEAD_BYTES`]) from the start of `path` (read-only open) and
/// calls [`detect_signature`].
pub fn signature_of(path: &Path) -> std::io::Result<Option<&'static str>> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(detect_signature(&head))
}

// ---------------------------------------------------------------------------------------
// Devices

/// The sysfs and /proc facts of one device, as [`block_hazards`] needs them.
struct DeviceFacts<'a> {
    /// Root of sysfs (a fake tree in tests).
    sys: &'a Path,
    /// The device's `major:minor`.
    id: (u32, u32),
    /// Its kernel name, when sysfs or /proc/diskstats know it.
    name: Option<&'a str>,
    mounts: &'a [MountInfo],
    swaps: &'a [PathBuf],
    /// The `major:minor` of a block device node (`stat`), for mount and swap sources.
    node_id: &'a dyn Fn(&Path) -> Option<(u32, u32)>,
}

/// The device, or one of its partitions, as [`block_hazards`] examines it.
struct Member<'a> {
    name: Option<&'a str>,
    id: Option<(u32, u32)>,
    /// A partition (hazards name it) rather than the device itself.
    partition: bool,
}

/// The hazards sysfs, mountinfo and /proc/swaps show for a device: mounted, in use,
/// partitioned (in that order).
fn block_hazards(facts: &DeviceFacts) -> Vec<Hazard> {
    let partitions = facts
        .name
        .map(|name| disk::partitions_in(facts.sys, name))
        .unwrap_or_default();
    let members: Vec<Member> = std::iter::once(Member {
        name: facts.name,
        id: Some(facts.id),
        partition: false,
    })
    .chain(partitions.iter().map(|p| Member {
        name: Some(&p.name),
        id: p.id,
        partition: true,
    }))
    .collect();
    let mut hazards = Vec::new();

    // Mounted: compare the mount's device, or for an anonymous device (btrfs) its
    // source's device node, with each member.
    let mount_ids: Vec<Option<(u32, u32)>> = facts
        .mounts
        .iter()
        .map(|m| {
            if m.major != 0 {
                Some((m.major, m.minor))
            } else if m.source.starts_with("/dev/") {
                (facts.node_id)(Path::new(&m.source))
            } else {
                None
            }
        })
        .collect();
    for member in members.iter().filter(|m| m.id.is_some()) {
        // Bind mounts show the same device many times; its shortest mount point is the
        // one a person knows it by.
        let shortest = facts
            .mounts
            .iter()
            .zip(&mount_ids)
            .filter(|(_, id)| **id == member.id)
            .map(|(m, _)| m)
            .min_by_key(|m| m.mount_point.components().count());
        if let Some(m) = shortest {
            hazards.push(Hazard::Mounted {
                mount_point: m.mount_point.clone(),
            });
        }
    }

    // In use: holders of the device and of each partition.
    for member in &members {
        let Some(name) = member.name else { continue };
        for holder in disk::holders_in(facts.sys, name) {
            let by = if member.partition {
                format!("{holder} (through {name})")
            } else {
                holder
            };
            hazards.push(Hazard::InUse { by });
        }
    }

    // In use as swap: the swap area is the device or a partition, by device number, or by
    // name for a /dev/NAME node that cannot be examined.
    for swap in facts.swaps {
        let swap_id = (facts.node_id)(swap);
        let swap_name = (swap.parent() == Some(Path::new("/dev")))
            .then(|| swap.file_name().and_then(|n| n.to_str()))
            .flatten();
        let hit = members.iter().find(|m| {
            (swap_id.is_some() && swap_id == m.id) || (swap_name.is_some() && swap_name == m.name)
        });
        if let Some(member) = hit {
            let by = match member.name {
                Some(part) if member.partition => format!("swap on {part}"),
                _ => "swap".to_string(),
            };
            hazards.push(Hazard::InUse { by });
        }
    }

    if !partitions.is_empty() {
        hazards.push(Hazard::Partitioned {
            partitions: partitions.into_iter().map(|p| p.name).collect(),
        });
    }
    hazards
}

/// Whether the kernel refuses an exclusive open of the block device `dev` as busy (it is
/// mounted or claimed by someone, possibly outside this mount namespace). The open is
/// read-only and released at once.
fn exclusive_open_refused(dev: &Path) -> bool {
    let result = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev);
    matches!(result, Err(e) if e.raw_os_error() == Some(libc::EBUSY))
}

/// Every reason writing to the block device `dev` (a /dev node) would destroy data; empty
/// means safe. Uses device_of/mountinfo/sysfs/proc swaps and signature_of.
///
/// A path that is not a block device (an image file) is checked for a signature only; a
/// path that does not exist has nothing to destroy and gives an empty list.
pub fn device_hazards(dev: &Path) -> Vec<Hazard> {
    let mut hazards = Vec::new();
    if let Some(id) = disk::node_id(dev) {
        let device = disk::block_device(id.0, id.1);
        let mounts = fs::read_to_string("/proc/self/mountinfo")
            .map(|t| disk::parse_mountinfo(&t))
            .unwrap_or_default();
        let swaps = fs::read_to_string("/proc/swaps")
            .map(|t| disk::parse_swaps(&t))
            .unwrap_or_default();
        hazards = block_hazards(&DeviceFacts {
            sys: Path::new(disk::SYS),
            id,
            name: device.as_ref().map(|d| d.name.as_str()),
            mounts: &mounts,
            swaps: &swaps,
            node_id: &disk::node_id,
        });
        let already_in_use = hazards
            .iter()
            .any(|h| matches!(h, Hazard::Mounted { .. } | Hazard::InUse { .. }));
        if !already_in_use && exclusive_open_refused(dev) {
            hazards.push(Hazard::InUse {
                by: "another program or the kernel (an exclusive open was refused)".to_string(),
            });
        }
    }
    // Unreadable (no permission): nothing can be said about the contents.
    if let Ok(Some(kind)) = signature_of(dev) {
        hazards.push(Hazard::Signature { kind });
    }
    hazards
}

#[cfg(test)]
mod tests {
    use super::super::disk::test_support::{FakeSys, TempDir};
    use super::*;
    use std::process::Command;

    const MIB: usize = 1 << 20;

    fn zeros() -> Vec<u8> {
        vec![0; 2 * MIB]
    }

    fn poke(buf: &mut [u8], offset: usize, bytes: &[u8]) {
        buf[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    /// Deterministic noise (xorshift64*), so a failure can be replayed.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
            })
            .collect()
    }

    /// An ext superblock at 1024 with the given feature flags.
    fn ext(compat: u32, incompat: u32, ro_compat: u32) -> Vec<u8> {
        let mut img = zeros();
        poke(&mut img, 1024, &4096u32.to_le_bytes()); // s_inodes_count
        poke(&mut img, 1024 + 24, &2u32.to_le_bytes()); // 4 KiB blocks
        poke(&mut img, 1080, &0xEF53u16.to_le_bytes());
        poke(&mut img, 1024 + 92, &compat.to_le_bytes());
        poke(&mut img, 1024 + 96, &incompat.to_le_bytes());
        poke(&mut img, 1024 + 100, &ro_compat.to_le_bytes());
        img
    }

    /// A boot sector with 55 AA and one partition entry.
    fn mbr(boot_flag: u8, kind: u8) -> Vec<u8> {
        let mut img = zeros();
        let mut entry = [0u8; 16];
        entry[0] = boot_flag;
        entry[4] = kind;
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
        entry[12..16].copy_from_slice(&1_000_000u32.to_le_bytes());
        poke(&mut img, 446, &entry);
        poke(&mut img, 510, &[0x55, 0xAA]);
        img
    }

    /// One image per kind of the table, built from the published offsets.
    fn images() -> Vec<(&'static str, Vec<u8>)> {
        let mut out = Vec::new();
        let mut with = |kind, pokes: &[(usize, &[u8])]| {
            let mut img = zeros();
            for (offset, bytes) in pokes {
                poke(&mut img, *offset, bytes);
            }
            out.push((kind, img));
        };
        with("LUKS", &[(0, b"LUKS\xba\xbe\x00\x01")]);
        with("LUKS", &[(0x4000, b"SKUL\xba\xbe\x00\x02")]);
        with("LVM2", &[(512, b"LABELONE"), (512 + 24, b"LVM2 001")]);
        with("LVM2", &[(1536, b"LABELONE")]);
        with("MD RAID", &[(4096, &[0xfc, 0x4e, 0x2b, 0xa9, 1, 0, 0, 0])]);
        with("MD RAID", &[(0, &[0xfc, 0x4e, 0x2b, 0xa9, 1, 0, 0, 0])]);
        with("bcache", &[(4096 + 24, &BCACHE_MAGIC)]);
        with(
            "ZFS",
            &[(128 * 1024 + 3 * 1024, &0x00ba_b10cu64.to_le_bytes())],
        );
        with("ZFS", &[(200 * 1024, &0x00ba_b10cu64.to_be_bytes())]);
        with("xfs", &[(0, b"XFSB"), (4, &4096u32.to_be_bytes())]);
        with("btrfs", &[(65600, b"_BHRfS_M")]);
        with("f2fs", &[(1024, &0xF2F5_2010u32.to_le_bytes())]);
        with("squashfs", &[(0, b"hsqs")]);
        with("squashfs", &[(0, b"sqsh")]);
        with("swap", &[(4086, b"SWAPSPACE2")]);
        with("swap", &[(4086, b"SWAP-SPACE")]);
        with("swap", &[(65526, b"SWAPSPACE2")]);
        with("iso9660", &[(32768, &[1]), (32769, b"CD001")]);
        with(
            "ntfs",
            &[
                (0, &[0xeb, 0x52, 0x90]),
                (3, b"NTFS    "),
                (510, &[0x55, 0xAA]),
            ],
        );
        with("exfat", &[(3, b"EXFAT   "), (510, &[0x55, 0xAA])]);
        with(
            "vfat",
            &[
                (3, b"mkfs.fat"),
                (11, &512u16.to_le_bytes()),
                (82, b"FAT32   "),
                (510, &[0x55, 0xAA]),
            ],
        );
        with(
            "vfat",
            &[
                (11, &2048u16.to_le_bytes()),
                (54, b"FAT16   "),
                (510, &[0x55, 0xAA]),
            ],
        );
        // A GPT disk carries a protective MBR too; GPT names it.
        let mut gpt = mbr(0, 0xEE);
        poke(&mut gpt, 512, b"EFI PART");
        out.push(("GPT", gpt));
        let mut gpt4k = zeros();
        poke(&mut gpt4k, 4096, b"EFI PART");
        out.push(("GPT", gpt4k));
        out.push(("MBR", mbr(0x80, 0x83)));
        out.push(("MBR", mbr(0x00, 0x07)));
        out.push(("ext4", ext(0x3c, 0x2c2, 0x46b)));
        out.push(("ext3", ext(0x3c, 0x2, 0x3)));
        out.push(("ext2", ext(0x38, 0x2, 0x3)));
        out.push(("ext journal", ext(0x0, 0x8, 0x0)));
        out
    }

    #[test]
    fn every_signature_is_named() {
        for (kind, img) in images() {
            assert_eq!(detect_signature(&img), Some(kind), "{kind}");
            // Every kind has words for the refusal message.
            assert!(DESCRIPTIONS.iter().any(|(k, _)| *k == kind), "{kind}");
        }
    }

    #[test]
    fn truncated_heads_never_panic() {
        let lengths = [
            0, 1, 3, 11, 54, 82, 446, 510, 511, 512, 513, 519, 520, 1024, 1027, 1028, 1048, 1080,
            1081, 1082, 1123, 1124, 1125, 1536, 1543, 1544, 4086, 4095, 4096, 4100, 4103, 4104,
            4119, 4120, 4135, 4136, 16384, 32769, 32773, 32774, 65526, 65535, 65600, 65607, 65608,
            131_072, 131_079, 131_080, 262_144,
        ];
        for (kind, img) in images() {
            for len in lengths {
                let found = detect_signature(&img[..len]);
                // Cut before its header, a GPT disk still shows its protective MBR.
                let partial = kind == "GPT" && found == Some("MBR");
                assert!(
                    found.is_none() || found == Some(kind) || partial,
                    "{kind} at {len}: {found:?}"
                );
            }
            // The usual 128 KiB head names everything but ZFS, whose ring starts there.
            let head = detect_signature(&img[..128 * 1024]);
            assert_eq!(head, (kind != "ZFS").then_some(kind), "{kind} in 128 KiB");
        }
    }

    #[test]
    fn zeros_and_noise_are_not_signatures() {
        assert_eq!(detect_signature(&zeros()), None);
        assert_eq!(detect_signature(&[]), None);
        for seed in 0..32 {
            let mut img = noise(seed, HEAD_BYTES);
            assert_eq!(detect_signature(&img), None, "seed {seed}");
            // Random data that happens to end its first sector in 55 AA is not an MBR.
            poke(&mut img, 510, &[0x55, 0xAA]);
            assert_eq!(detect_signature(&img), None, "seed {seed} with 55AA");
        }
    }

    #[test]
    fn near_misses_are_not_signatures() {
        // 55 AA with an empty table, or a boot flag that is neither 00 nor 80.
        let mut empty_table = zeros();
        poke(&mut empty_table, 510, &[0x55, 0xAA]);
        assert_eq!(detect_signature(&empty_table), None);
        assert_eq!(detect_signature(&mbr(0x12, 0x83)), None);
        assert_eq!(detect_signature(&mbr(0x80, 0x00)), None);
        // An ext magic with an impossible block size.
        let mut bad_ext = ext(0, 0x2, 0);
        poke(&mut bad_ext, 1024 + 24, &99u32.to_le_bytes());
        assert_eq!(detect_signature(&bad_ext), None);
        // XFSB with a block size of 0; MD magic of an unknown major version.
        let mut bad_xfs = zeros();
        poke(&mut bad_xfs, 0, b"XFSB");
        assert_eq!(detect_signature(&bad_xfs), None);
        let mut bad_md = zeros();
        poke(&mut bad_md, 4096, &[0xfc, 0x4e, 0x2b, 0xa9, 9, 0, 0, 0]);
        assert_eq!(detect_signature(&bad_md), None);
        // "FAT" without a boot signature; the swap magic at an offset no page size gives.
        let mut bad_fat = zeros();
        poke(&mut bad_fat, 11, &512u16.to_le_bytes());
        poke(&mut bad_fat, 54, b"FAT16   ");
        assert_eq!(detect_signature(&bad_fat), None);
        let mut bad_swap = zeros();
        poke(&mut bad_swap, 4090, b"SWAPSPACE2");
        assert_eq!(detect_signature(&bad_swap), None);
    }

    #[test]
    fn hazards_read_as_refusal_reasons() {
        let cases = [
            (
                Hazard::Mounted {
                    mount_point: PathBuf::from("/data"),
                },
                "it is mounted at /data",
            ),
            (
                Hazard::Partitioned {
                    partitions: vec!["sdb1".to_string(), "sdb2".to_string()],
                },
                "it holds a partition table (sdb1, sdb2)",
            ),
            (
                Hazard::Signature { kind: "ext4" },
                "it holds an ext4 filesystem signature",
            ),
            (
                Hazard::Signature { kind: "MBR" },
                "it holds an MBR (DOS) partition table signature",
            ),
            (
                Hazard::Signature { kind: "hfsplus" },
                "it holds a hfsplus signature",
            ),
            (
                Hazard::InUse {
                    by: "dm-0".to_string(),
                },
                "it is in use by dm-0",
            ),
        ];
        for (hazard, text) in cases {
            assert_eq!(hazard.to_string(), text);
        }
    }

    #[test]
    fn signature_of_reads_the_head_of_a_file() {
        let dir = TempDir::new("sig");
        let path = dir.0.join("image");
        fs::write(&path, &ext(0x3c, 0x2c2, 0x46b)[..8192]).expect("write");
        assert_eq!(signature_of(&path).expect("read"), Some("ext4"));
        fs::write(&path, b"").expect("write");
        assert_eq!(signature_of(&path).expect("read"), None);
        assert!(signature_of(&dir.0.join("missing")).is_err());
        // Longer than the head: only the head is read, ZFS's ring included.
        fs::write(
            &path,
            &images().iter().find(|(k, _)| *k == "ZFS").expect("zfs").1,
        )
        .expect("write");
        assert_eq!(signature_of(&path).expect("read"), Some("ZFS"));
    }

    #[test]
    fn files_are_checked_for_signatures_only() {
        let dir = TempDir::new("filehaz");
        let path = dir.0.join("image");
        fs::write(&path, &ext(0x3c, 0x2c2, 0x46b)[..8192]).expect("write");
        assert_eq!(device_hazards(&path), [Hazard::Signature { kind: "ext4" }]);
        fs::write(&path, vec![0u8; 8192]).expect("write");
        assert_eq!(device_hazards(&path), []);
        assert_eq!(device_hazards(&dir.0.join("missing")), []);
    }

    /// sdb with four partitions: sdb1 under dm-0, sdb2 mounted twice, sdb3 swap, sdb4 btrfs
    /// (an anonymous device whose mount source is the partition's node).
    #[test]
    fn partitions_in_use_make_their_disk_unsafe() {
        let sys = FakeSys::new();
        sys.disk("sdb", 8, 16, None);
        for (n, minor) in [(1, 17), (2, 18), (3, 19), (4, 20)] {
            sys.partition("sdb", &format!("sdb{n}"), 8, minor, n);
        }
        sys.holder("sdb1", "dm-0");
        let mounts = disk::parse_mountinfo(
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
             40 27 8:18 /sub /data/bind rw - ext4 /dev/sdb2 rw\n\
             41 27 8:18 / /data rw - ext4 /dev/sdb2 rw\n\
             42 27 0:50 / /srv/pool rw - btrfs /dev/sdb4 rw\n\
             43 27 0:51 / /tmp rw - tmpfs tmpfs rw\n",
        );
        let swaps = [PathBuf::from("/dev/sdb3")];
        let node_id = |p: &Path| (p == Path::new("/dev/sdb4")).then_some((8, 20));
        let facts = DeviceFacts {
            sys: sys.root(),
            id: (8, 16),
            name: Some("sdb"),
            mounts: &mounts,
            swaps: &swaps,
            node_id: &node_id,
        };
        assert_eq!(
            block_hazards(&facts),
            [
                Hazard::Mounted {
                    mount_point: PathBuf::from("/data")
                },
                Hazard::Mounted {
                    mount_point: PathBuf::from("/srv/pool")
                },
                Hazard::InUse {
                    by: "dm-0 (through sdb1)".to_string()
                },
                Hazard::InUse {
                    by: "swap on sdb3".to_string()
                },
                Hazard::Partitioned {
                    partitions: ["sdb1", "sdb2", "sdb3", "sdb4"].map(String::from).to_vec()
                },
            ]
        );
        // A partition on its own: only what concerns it.
        let part = DeviceFacts {
            id: (8, 17),
            name: Some("sdb1"),
            ..facts
        };
        assert_eq!(
            block_hazards(&part),
            [Hazard::InUse {
                by: "dm-0".to_string()
            }]
        );
    }

    #[test]
    fn a_whole_disk_in_use_and_an_idle_one() {
        let sys = FakeSys::new();
        sys.disk("vdb", 254, 16, None);
        sys.disk("vdc", 254, 32, None);
        sys.holder("vdb", "md127");
        let mounts = disk::parse_mountinfo("27 1 254:0 / / rw - ext4 /dev/vda rw\n");
        // A swap area matched by device number alone (its node path says nothing).
        let swaps = [PathBuf::from("/dev/disk/by-id/virtio-swap")];
        let node_id =
            |p: &Path| (p == Path::new("/dev/disk/by-id/virtio-swap")).then_some((254, 16));
        let vdb = DeviceFacts {
            sys: sys.root(),
            id: (254, 16),
            name: Some("vdb"),
            mounts: &mounts,
            swaps: &swaps,
            node_id: &node_id,
        };
        assert_eq!(
            block_hazards(&vdb),
            [
                Hazard::InUse {
                    by: "md127".to_string()
                },
                Hazard::InUse {
                    by: "swap".to_string()
                }
            ]
        );
        let vdc = DeviceFacts {
            id: (254, 32),
            name: Some("vdc"),
            ..vdb
        };
        assert_eq!(block_hazards(&vdc), []);
        // Unknown to sysfs: the mount table still speaks.
        let vda = DeviceFacts {
            id: (254, 0),
            name: None,
            ..vdb
        };
        assert_eq!(
            block_hazards(&vda),
            [Hazard::Mounted {
                mount_point: PathBuf::from("/")
            }]
        );
    }

    #[test]
    fn this_machines_root_device_is_mounted() {
        let Some(root) = disk::mount_of(Path::new("/")) else {
            panic!("/ is not mounted");
        };
        let source = Path::new(&root.source);
        match disk::node_id(source) {
            Some(id) if root.major == 0 || id == (root.major, root.minor) => {
                let hazards = device_hazards(source);
                eprintln!("{}: {hazards:?}", source.display());
                assert!(
                    hazards.contains(&Hazard::Mounted {
                        mount_point: PathBuf::from("/")
                    }),
                    "{hazards:?}"
                );
            }
            _ => eprintln!(
                "skipped: / is mounted from {}, not a device node here",
                root.source
            ),
        }
    }

    /// A program by name on PATH or in the sbin directories (not on a user's PATH).
    fn tool(name: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    }

    /// Runs `program args... file` on a fresh sparse image file of `bytes`; the image when
    /// the program succeeded.
    fn made_by(dir: &TempDir, program: &Path, args: &[&str], bytes: u64) -> Option<PathBuf> {
        let name = program.file_name()?.to_string_lossy().into_owned();
        let image = dir.0.join(format!("{name}.img"));
        File::create(&image).ok()?.set_len(bytes).ok()?;
        let out = Command::new(program).args(args).arg(&image).output().ok()?;
        if !out.status.success() {
            eprintln!("{name} failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(image)
    }

    #[test]
    fn mkfs_ext4_image_is_named() {
        let Some(mkfs) = tool("mkfs.ext4") else {
            eprintln!("skipped: mkfs.ext4 not found (apt-get install e2fsprogs)");
            return;
        };
        let dir = TempDir::new("mkfs");
        // -F: the target is a regular file, not a device.
        let image = made_by(&dir, &mkfs, &["-F", "-q"], 4 << 20).expect("mkfs.ext4");
        assert_eq!(signature_of(&image).expect("read image"), Some("ext4"));
        assert_eq!(device_hazards(&image), [Hazard::Signature { kind: "ext4" }]);
    }

    /// Images made by the real tools, for each tool installed here (e2fsprogs' other
    /// mkfs, util-linux, xfsprogs, btrfs-progs, dosfstools, f2fs-tools, ntfs-3g, fdisk);
    /// a missing tool is skipped.
    #[test]
    fn real_tool_images_are_named() {
        let dir = TempDir::new("tools");
        let cases: [(&str, &[&str], u64, &str); 9] = [
            ("mkfs.ext2", &["-F", "-q"], 4 << 20, "ext2"),
            ("mkfs.ext3", &["-F", "-q"], 4 << 20, "ext3"),
            ("mkswap", &["-q"], 4 << 20, "swap"),
            ("mkfs.xfs", &["-q", "-f"], 320 << 20, "xfs"),
            ("mkfs.btrfs", &["-q", "-f"], 128 << 20, "btrfs"),
            ("mkfs.vfat", &[], 64 << 20, "vfat"),
            ("mkfs.f2fs", &["-q", "-f"], 64 << 20, "f2fs"),
            ("mkntfs", &["-q", "-F", "-f"], 16 << 20, "ntfs"),
            ("mkfs.exfat", &[], 16 << 20, "exfat"),
        ];
        for (name, args, bytes, kind) in cases {
            let Some(program) = tool(name) else {
                eprintln!("skipped {name}: not installed");
                continue;
            };
            let image = made_by(&dir, &program, args, bytes).expect(name);
            assert_eq!(signature_of(&image).expect("read"), Some(kind), "{name}");
        }
        // SquashFS is made from a directory rather than on an image.
        if let Some(mksquashfs) = tool("mksquashfs") {
            let image = dir.0.join("squash.img");
            let source = dir.0.join("squash-source");
            fs::create_dir_all(&source).expect("mkdir");
            fs::write(source.join("file"), "data").expect("write");
            let out = Command::new(mksquashfs)
                .arg(&source)
                .arg(&image)
                .args(["-noappend", "-quiet", "-no-progress"])
                .output()
                .expect("mksquashfs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(signature_of(&image).expect("read"), Some("squashfs"));
        } else {
            eprintln!("skipped mksquashfs: not installed");
        }
        // Partition tables, written by sfdisk into image files.
        if let Some(sfdisk) = tool("sfdisk") {
            for (label, kind) in [("gpt", "GPT"), ("dos", "MBR")] {
                let image = dir.0.join(format!("{label}.img"));
                File::create(&image)
                    .and_then(|f| f.set_len(8 << 20))
                    .expect("image");
                let mut child = Command::new(&sfdisk)
                    .args(["-q", "--no-reread", "--no-tell-kernel"])
                    .arg(&image)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("sfdisk");
                use std::io::Write;
                let script = format!("label: {label}\n,4M\n,\n");
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(script.as_bytes())
                    .expect("script");
                assert!(child.wait().expect("sfdisk").success(), "sfdisk {label}");
                assert_eq!(signature_of(&image).expect("read"), Some(kind), "{label}");
            }
        } else {
            eprintln!("skipped sfdisk: not installed");
        }
    }
}
