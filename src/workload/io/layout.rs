//! Where the I/O goes, and the rules that keep perflab from destroying anyone's data.
//!
//! Each `--path` is a volume:
//! - an existing directory: perflab makes its own work directory in it, `perflab-io-<pid>`,
//!   marked by a `.perflab-io` file that lists the files perflab created there. A path that
//!   already is such a marked directory (left by `--keep`) is used as is. A path that does not
//!   exist is refused, never created: a typo would measure the wrong filesystem.
//! - a block device: its region `--offset .. --offset + --size` per file. Writing to a device
//!   needs `--destroy-data=<the device>`, and is refused outright while it is mounted or in
//!   use (swap, LVM, md, dm-crypt); from the start of the run perflab holds it open
//!   exclusively (`O_EXCL`), so nothing can mount it meanwhile.
//! - an existing regular file: read freely; written only if perflab created it (its directory's
//!   marker lists it) or with `--destroy-data=<the file>`.
//!
//! File `i` lives on volume `i % volumes`. [`Layout::plan`] checks all of this when the command
//! is read, before anything is written; [`prepare`] creates, reserves and fills the files when
//! the run starts and hands back a [`Cleanup`] that removes them when the run ends, unless
//! `--keep`.

use super::IoSpec;
use super::verify::{self, BlockId};
use crate::engine::sys;
use crate::env::disk::{BlockDevice, MountInfo, device_of, mount_of};
use crate::env::hazard::{Hazard, device_hazards, signature_of};
use crate::stop::Stop;
use crate::vocab::units::format_bytes;
use crate::workload::rng::Rng;
use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The marker file of a work directory perflab created.
pub const MARKER: &str = ".perflab-io";
/// Leave at least this share of a filesystem free, or warn.
const FREE_MARGIN: f64 = 0.10;
/// Prefill writes in pieces of this size.
const FILL_CHUNK: usize = 1 << 20;

/// Why a layout cannot be used. Shown as one line; exit code 2 when found before the run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutError(pub String);

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VolumeKind {
    Directory,
    Device,
    File,
    /// `/dev/null` or `/dev/zero` named by a job file: a character device with no size, which
    /// fio reads and writes anywhere; perflab neither makes, fills nor removes it.
    Endless,
}

/// Whether `path` is Linux's `/dev/null` or `/dev/zero` (the memory character devices 1:3
/// and 1:5, by any name): `Some("null")` or `Some("zero")`.
pub fn endless_device(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if !m.file_type().is_char_device() {
        return None;
    }
    let rdev = m.rdev();
    match (libc::major(rdev), libc::minor(rdev)) {
        (1, 3) => Some("null"),
        (1, 5) => Some("zero"),
        _ => None,
    }
}

/// One `--path`.
#[derive(Debug, Clone, Serialize)]
pub struct Volume {
    /// As given.
    pub path: PathBuf,
    pub kind: VolumeKind,
    /// Directory volumes: where the files go.
    pub workdir: Option<PathBuf>,
    /// Whether perflab creates `workdir` (and so removes it).
    pub creates_workdir: bool,
    pub device: Option<BlockDevice>,
    pub mount: Option<MountInfo>,
}

/// One file (or device region) of the test.
#[derive(Debug, Clone, Serialize)]
pub struct FileSpec {
    pub index: usize,
    pub volume: usize,
    pub path: PathBuf,
    /// Where its I/O region starts.
    pub start: u64,
    /// Whether perflab creates it at the start of the run (and so removes it).
    pub creates: bool,
}

/// Every volume and file of a run.
#[derive(Debug, Serialize)]
pub struct Layout {
    pub volumes: Vec<Volume>,
    pub files: Vec<FileSpec>,
    /// Bytes each file's region spans.
    pub size: u64,
    /// Space the run will take on each filesystem, for the record.
    pub creates_bytes: u64,
    /// Found while planning: what the user should know before the numbers, as (warning
    /// code, message).
    pub notes: Vec<(&'static str, String)>,
    /// `--verify`: the generation each block was last written with, per file (0: unknown).
    #[serde(skip)]
    pub generations: OnceLock<Vec<Arc<[AtomicU32]>>>,
}

/// What [`Layout::plan`] needs to know.
pub struct PlanRequest<'a> {
    pub paths: &'a [String],
    pub files: u64,
    pub size: Option<u64>,
    pub offset: u64,
    pub writes: bool,
    pub destroy: Option<&'a str>,
    /// A size every region must be a multiple of (the largest block size).
    pub block: u64,
}

impl Layout {
    /// Resolves the paths into volumes and files, checking that every write is allowed and
    /// fits. Reads the filesystem, writes nothing.
    pub fn plan(req: &PlanRequest) -> Result<Layout, LayoutError> {
        if req.paths.is_empty() {
            return Err(LayoutError(
                "give --path: a directory for test files or a block device".into(),
            ));
        }
        let mut volumes = Vec::new();
        let mut notes = Vec::new();
        for p in req.paths {
            volumes.push(volume(Path::new(p), req)?);
        }
        let nvol = volumes.len();
        let files_on = |v: usize| (0..req.files as usize).filter(|i| i % nvol == v).count() as u64;
        // Region size: asked for, else what the device or file holds, else 1 GiB.
        let size = match req.size {
            Some(s) => s,
            None => {
                let mut fitting = u64::MAX;
                let mut any = false;
                for (v, vol) in volumes.iter().enumerate() {
                    if let Some(len) = existing_len(vol) {
                        any = true;
                        let per = len.saturating_sub(req.offset) / files_on(v).max(1);
                        fitting = fitting.min(per);
                    }
                }
                if any { fitting } else { 1 << 30 }
            }
        };
        let size = size / req.block.max(1) * req.block.max(1);
        if size == 0 {
            return Err(LayoutError(format!(
                "--size gives no room for one block of {}; raise --size",
                format_bytes(req.block)
            )));
        }
        let mut files = Vec::new();
        let mut creates_bytes: u64 = 0;
        for i in 0..req.files as usize {
            let v = i % nvol;
            let k = (i / nvol) as u64;
            let vol = &volumes[v];
            let (path, start, creates) = match vol.kind {
                VolumeKind::Directory => {
                    let dir = vol.workdir.clone().unwrap_or_default();
                    let path = dir.join(format!("data{i}"));
                    let creates = !path.exists();
                    if !creates && !vol.creates_workdir && !listed_in_marker(&dir, &path) {
                        return Err(LayoutError(format!(
                            "{} exists and perflab's marker does not list it; remove it or use another --path",
                            path.display()
                        )));
                    }
                    (path, req.offset, creates)
                }
                VolumeKind::Device | VolumeKind::File | VolumeKind::Endless => {
                    let start = k
                        .checked_mul(size)
                        .and_then(|x| x.checked_add(req.offset))
                        .ok_or_else(|| {
                            LayoutError(
                                "--offset plus --size is beyond any device; lower them".into(),
                            )
                        })?;
                    (vol.path.clone(), start, false)
                }
            };
            let end = start.checked_add(size).ok_or_else(|| {
                LayoutError("--offset plus --size is beyond any device; lower them".into())
            })?;
            if creates {
                creates_bytes = creates_bytes.saturating_add(end);
            }
            files.push(FileSpec {
                index: i,
                volume: v,
                path,
                start,
                creates,
            });
        }
        // Regions must fit what exists.
        for (v, vol) in volumes.iter().enumerate() {
            if let Some(len) = existing_len(vol) {
                let need = files_on(v).saturating_mul(size).saturating_add(req.offset);
                if need > len {
                    return Err(LayoutError(format!(
                        "{} holds {} but {} file(s) of --size {} from --offset {} need {}; lower --size or --files",
                        vol.path.display(),
                        format_bytes(len),
                        files_on(v),
                        format_bytes(size),
                        format_bytes(req.offset),
                        format_bytes(need)
                    )));
                }
            }
        }
        // Free space on each directory volume's filesystem.
        for (v, vol) in volumes.iter().enumerate() {
            let Some(dir) = &vol.workdir else { continue };
            let need: u64 = files
                .iter()
                .filter(|f| f.volume == v && f.creates)
                .map(|f| f.start.saturating_add(size))
                .fold(0u64, u64::saturating_add);
            let probe = existing_ancestor(dir);
            if let Ok(space) = sys::space(&probe) {
                if need > space.free_bytes {
                    return Err(LayoutError(format!(
                        "{} has {} free but the test files need {}; lower --size or --files, or use another --path",
                        probe.display(),
                        format_bytes(space.free_bytes),
                        format_bytes(need)
                    )));
                }
                let left = space.free_bytes - need;
                if need > 0 && (left as f64) < FREE_MARGIN * space.total_bytes as f64 {
                    let message = format!(
                        "the test files leave only {} free on {}; a filesystem this full may be slower than usual",
                        format_bytes(left),
                        probe.display()
                    );
                    notes.push(("disk_nearly_full", message));
                }
            }
        }
        Ok(Layout {
            volumes,
            files,
            size,
            creates_bytes,
            notes,
            generations: OnceLock::new(),
        })
    }

    /// A job file's files, each named: an existing file or device, taken as `--path` takes
    /// one (written only if perflab made it or with `--destroy-data`), or a file that does
    /// not exist yet, which perflab makes in its (existing) folder at the start of the run and
    /// removes at the end, as fio makes it. Every file's region is `offset .. offset + size`.
    /// `writes[i]`: whether a job writes `paths[i]` (only those need permission to).
    pub fn named(
        paths: &[PathBuf],
        size: u64,
        offset: u64,
        writes: &[bool],
        destroy: Option<&str>,
    ) -> Result<Layout, LayoutError> {
        let mut volumes = Vec::new();
        let mut files = Vec::new();
        let mut creates_bytes = 0u64;
        for (i, p) in paths.iter().enumerate() {
            let req = PlanRequest {
                paths: &[],
                files: paths.len() as u64,
                size: Some(size),
                offset,
                writes: writes.get(i).copied().unwrap_or(true),
                destroy,
                block: 1,
            };
            let vol = if endless_device(p).is_some() {
                // Nothing to make, fill, hold or remove, and no size to keep to.
                Volume {
                    path: p.clone(),
                    kind: VolumeKind::Endless,
                    workdir: None,
                    creates_workdir: false,
                    device: None,
                    mount: None,
                }
            } else if p.exists() {
                let vol = volume(p, &req).map_err(|e| {
                    let m = e.0.replace(
                        "give --path a directory for test files, or pass",
                        "name a file that does not exist yet (perflab makes it), or pass",
                    );
                    // A job file names its files; it has no --path.
                    LayoutError(match m.strip_prefix("--path ") {
                        Some(rest) if rest.contains("is neither") => format!(
                            "{rest} (of character devices, only /dev/null and /dev/zero are taken)"
                        ),
                        _ => m,
                    })
                })?;
                if vol.kind == VolumeKind::Directory {
                    return Err(LayoutError(format!(
                        "{} is a directory; name a file in it (or give directory={})",
                        p.display(),
                        p.display()
                    )));
                }
                if let Some(len) = existing_len(&vol)
                    && offset.saturating_add(size) > len
                {
                    return Err(LayoutError(format!(
                        "{} holds {} but the job's size and offset need {}; lower size",
                        p.display(),
                        format_bytes(len),
                        format_bytes(offset.saturating_add(size))
                    )));
                }
                vol
            } else {
                let parent = p
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                if !parent.is_dir() {
                    return Err(LayoutError(format!(
                        "{}: its folder {} does not exist; create it first (perflab makes files, never folders, outside its own)",
                        p.display(),
                        parent.display()
                    )));
                }
                creates_bytes = creates_bytes.saturating_add(offset.saturating_add(size));
                Volume {
                    path: p.clone(),
                    kind: VolumeKind::File,
                    workdir: None,
                    creates_workdir: false,
                    device: device_of(parent),
                    mount: mount_of(parent),
                }
            };
            files.push(FileSpec {
                index: i,
                volume: i,
                path: p.clone(),
                start: offset,
                creates: !p.exists(),
            });
            volumes.push(vol);
        }
        Ok(Layout {
            volumes,
            files,
            size,
            creates_bytes,
            notes: Vec::new(),
            generations: OnceLock::new(),
        })
    }

    /// The target for the record: the paths, joined.
    pub fn describe(&self) -> String {
        self.volumes
            .iter()
            .map(|v| v.path.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Kernel names of the block devices under the volumes, once each.
    pub fn devices(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for v in &self.volumes {
            if let Some(d) = &v.device
                && !names.contains(&d.name)
            {
                names.push(d.name.clone());
            }
        }
        names
    }

    /// Whether every volume sits on memory (tmpfs) rather than a device.
    pub fn in_memory(&self) -> bool {
        self.volumes
            .iter()
            .all(|v| v.mount.as_ref().is_some_and(|m| m.fs_type == "tmpfs"))
    }

    /// The generation table of file `i`, when `--verify` set one up.
    pub fn generations(&self, i: usize) -> Option<&Arc<[AtomicU32]>> {
        self.generations.get().and_then(|g| g.get(i))
    }

    /// Files that are names only, for an engine that never reaches a file (fio's null,
    /// which makes none): never made, opened or removed, on no volume, each `size` bytes
    /// whatever the disk holds. Such a layout is never prepared.
    pub fn diskless(paths: &[PathBuf], size: u64) -> Layout {
        Layout {
            volumes: Vec::new(),
            files: paths
                .iter()
                .enumerate()
                .map(|(index, p)| FileSpec {
                    index,
                    volume: 0,
                    path: p.clone(),
                    start: 0,
                    creates: false,
                })
                .collect(),
            size,
            creates_bytes: 0,
            notes: Vec::new(),
            generations: OnceLock::new(),
        }
    }
}

/// Classifies one `--path` and checks that the test may write to it.
fn volume(path: &Path, req: &PlanRequest) -> Result<Volume, LayoutError> {
    let shown = path.display();
    let meta = std::fs::metadata(path);
    let destroy_ok = req.destroy.is_some_and(|d| same_path(Path::new(d), path));
    let (kind, workdir, creates_workdir) = match &meta {
        // A path that does not exist is refused, never created: a typo (or a disk that is
        // not mounted) would otherwise measure whatever filesystem holds its parent.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LayoutError(format!(
                "--path {shown} does not exist; give an existing directory, file or device (create the directory first if it is new)"
            )));
        }
        Err(e) => return Err(LayoutError(format!("--path {shown}: {e}"))),
        Ok(m) if m.is_dir() => {
            if path.join(MARKER).is_file() {
                (VolumeKind::Directory, Some(path.to_path_buf()), false)
            } else {
                let mut dir = path.join(format!("perflab-io-{}", std::process::id()));
                let mut n = 1;
                while dir.exists() {
                    dir = path.join(format!("perflab-io-{}-{n}", std::process::id()));
                    n += 1;
                }
                (VolumeKind::Directory, Some(dir), true)
            }
        }
        Ok(m) if m.file_type().is_block_device() => {
            if req.writes {
                let hazards = device_hazards(path);
                // Live use is refused outright: --destroy-data cannot make writing under a
                // mounted filesystem, an active swap or a holder (LVM, md, dm-crypt) safe.
                if let Some(h) = hazards
                    .iter()
                    .find(|h| matches!(h, Hazard::Mounted { .. } | Hazard::InUse { .. }))
                {
                    return Err(LayoutError(format!(
                        "refusing to write to {shown}: {h}; stop using it (unmount, swapoff, deactivate) first"
                    )));
                }
                if !destroy_ok {
                    let why = if hazards.is_empty() {
                        "perflab did not create what is on it".to_string()
                    } else {
                        hazards
                            .iter()
                            .map(|h| h.to_string())
                            .collect::<Vec<_>>()
                            .join(", and ")
                    };
                    return Err(LayoutError(format!(
                        "refusing to write to {shown}: {why}; to destroy its contents, pass --destroy-data={shown}"
                    )));
                }
            }
            (VolumeKind::Device, None, false)
        }
        Ok(m) if m.is_file() => {
            let ours = path.parent().is_some_and(|dir| listed_in_marker(dir, path));
            if req.writes && !ours && !destroy_ok {
                let signature = signature_of(path)
                    .ok()
                    .flatten()
                    .map(|kind| format!(" and {}", Hazard::Signature { kind }))
                    .unwrap_or_default();
                return Err(LayoutError(format!(
                    "refusing to write to {shown}: perflab did not create it{signature}; give --path a directory for test files, or pass --destroy-data={shown}"
                )));
            }
            (VolumeKind::File, None, false)
        }
        Ok(_) => {
            return Err(LayoutError(format!(
                "--path {shown} is neither a directory, a regular file nor a block device"
            )));
        }
    };
    let probe = match &workdir {
        Some(d) => existing_ancestor(d),
        None => path.to_path_buf(),
    };
    Ok(Volume {
        path: path.to_path_buf(),
        kind,
        workdir,
        creates_workdir,
        device: device_of(&probe),
        mount: mount_of(&probe),
    })
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn existing_ancestor(p: &Path) -> PathBuf {
    p.ancestors()
        .find(|a| a.exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Size of a device or existing file volume.
fn existing_len(vol: &Volume) -> Option<u64> {
    match vol.kind {
        VolumeKind::Directory | VolumeKind::Endless => None,
        VolumeKind::File => std::fs::metadata(&vol.path).ok().map(|m| m.len()),
        VolumeKind::Device => {
            use std::io::{Seek, SeekFrom};
            File::open(&vol.path)
                .ok()
                .and_then(|mut f| f.seek(SeekFrom::End(0)).ok())
        }
    }
}

/// Whether `dir`'s marker lists `file` as created by perflab.
fn listed_in_marker(dir: &Path, file: &Path) -> bool {
    let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    std::fs::read_to_string(dir.join(MARKER))
        .map(|t| t.lines().any(|l| l.trim() == name))
        .unwrap_or(false)
}

/// Removes what perflab created for a run when dropped, unless told to keep it.
#[derive(Debug)]
pub struct Cleanup {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    keep: bool,
    /// Block devices held open exclusively for the run, so nothing can mount them.
    held: Vec<File>,
}

impl Cleanup {
    /// Removes `files`, then the marker and (if empty) each of `dirs`, unless `keep`.
    pub fn new(files: Vec<PathBuf>, dirs: Vec<PathBuf>, keep: bool) -> Self {
        Cleanup {
            files,
            dirs,
            keep,
            held: Vec::new(),
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.held.clear();
        if self.keep {
            return;
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        for d in &self.dirs {
            // Files an earlier run kept stay marked; the directory goes only when its
            // marker lists nothing that still exists, and only if then empty.
            let marker = d.join(MARKER);
            let left: Vec<String> = std::fs::read_to_string(&marker)
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .filter(|l| d.join(l.trim()).exists())
                .map(str::to_string)
                .collect();
            if left.is_empty() {
                let _ = std::fs::remove_file(&marker);
                let _ = std::fs::remove_dir(d);
            } else {
                let _ = std::fs::write(&marker, marker_text(&left));
            }
        }
    }
}

/// The marker's content: a comment, then one file name per line.
fn marker_text(names: &[String]) -> String {
    format!(
        "# created by perflab {} for an io test; removed after the run unless --keep\n{}\n",
        env!("CARGO_PKG_VERSION"),
        names.join("\n")
    )
}

/// Creates the work directories and files, reserves their space and fills them where the
/// test needs content. On any failure what was created is removed again.
pub fn prepare(spec: &IoSpec, stop: &Stop, note: &dyn Fn(&str)) -> Result<Cleanup, LayoutError> {
    let layout = &spec.layout;
    // `--keep` applies once everything is in place: a failed preparation removes its files.
    let mut cleanup = Cleanup::new(Vec::new(), Vec::new(), false);
    if spec.writes() {
        for vol in layout
            .volumes
            .iter()
            .filter(|v| v.kind == VolumeKind::Device)
        {
            cleanup.held.push(hold(&vol.path)?);
        }
    }
    // Marked work directories first, so even a crash leaves only marked files behind.
    for (v, vol) in layout.volumes.iter().enumerate() {
        let Some(dir) = &vol.workdir else { continue };
        if vol.creates_workdir {
            std::fs::create_dir(dir)
                .map_err(|e| LayoutError(format!("cannot create {}: {e}", dir.display())))?;
            cleanup.dirs.push(dir.clone());
        } else if !spec.keep {
            cleanup.dirs.push(dir.clone());
        }
        // A reused directory keeps listing what earlier runs left in it.
        let mut names: Vec<String> = std::fs::read_to_string(dir.join(MARKER))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.trim().to_string())
            .collect();
        for f in layout.files.iter().filter(|f| f.volume == v) {
            if let Some(name) = f.path.file_name().and_then(|n| n.to_str())
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
        std::fs::write(dir.join(MARKER), marker_text(&names)).map_err(|e| {
            LayoutError(format!("cannot write {}: {e}", dir.join(MARKER).display()))
        })?;
    }
    let end = layout.size;
    let mut to_fill = Vec::new();
    for f in &layout.files {
        let need = f.start + end;
        if f.creates {
            let file = File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&f.path)
                .map_err(|e| LayoutError(format!("cannot create {}: {e}", f.path.display())))?;
            cleanup.files.push(f.path.clone());
            reserve(&file, need, &f.path)?;
            if spec.reads() || spec.prefill || spec.verify {
                to_fill.push(f);
            }
        } else {
            let is_dir_volume = layout.volumes[f.volume].kind == VolumeKind::Directory;
            if is_dir_volume {
                // A kept file: it is ours; grow it if this run needs more.
                cleanup.files.push(f.path.clone());
                let file = File::options()
                    .write(true)
                    .open(&f.path)
                    .map_err(|e| LayoutError(format!("cannot open {}: {e}", f.path.display())))?;
                let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                if len < need {
                    reserve(&file, need, &f.path)?;
                    to_fill.push(f);
                } else if spec.prefill {
                    to_fill.push(f);
                }
            } else if spec.prefill {
                to_fill.push(f);
            }
        }
    }
    if spec.verify {
        let block = spec.bs_bytes.first().max(512);
        let tables = layout
            .files
            .iter()
            .map(|_| {
                (0..layout.size / block)
                    .map(|_| AtomicU32::new(0))
                    .collect::<Arc<[AtomicU32]>>()
            })
            .collect();
        let _ = layout.generations.set(tables);
    }
    if !to_fill.is_empty() {
        let started = Instant::now();
        note(&format!(
            "prefill: writing {} file(s) of {}",
            to_fill.len(),
            format_bytes(layout.size)
        ));
        for f in &to_fill {
            fill(spec, f, stop)?;
        }
        let secs = started.elapsed().as_secs_f64();
        note(&format!(
            "prefill: done in {secs:.1} s ({}/s)",
            format_bytes((to_fill.len() as f64 * layout.size as f64 / secs.max(1e-9)) as u64)
        ));
    }
    cleanup.keep = spec.keep;
    if spec.keep {
        for v in &layout.volumes {
            if let Some(d) = &v.workdir {
                note(&format!(
                    "keeping the test files in {} (--keep); pass it as --path to reuse them",
                    d.display()
                ));
            }
        }
    }
    Ok(cleanup)
}

/// Opens a block device exclusively for the run (after checking again that it is not in
/// use): while perflab holds it, the kernel refuses to mount it.
fn hold(dev: &Path) -> Result<File, LayoutError> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(h) = device_hazards(dev)
        .into_iter()
        .find(|h| matches!(h, Hazard::Mounted { .. } | Hazard::InUse { .. }))
    {
        return Err(LayoutError(format!(
            "refusing to write to {}: {h}",
            dev.display()
        )));
    }
    File::options()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
        .map_err(|e| {
            LayoutError(format!(
                "cannot hold {} exclusively ({e}): something else is using it",
                dev.display()
            ))
        })
}

/// Reserves a file's space up front, so a full disk shows now and not halfway through a step.
fn reserve(file: &File, len: u64, path: &Path) -> Result<(), LayoutError> {
    match sys::allocate(file, len) {
        Ok(true) => Ok(()),
        Ok(false) => file
            .set_len(len)
            .map_err(|e| LayoutError(format!("cannot size {}: {e}", path.display()))),
        Err(e) if sys::is_no_space(&e) => Err(LayoutError(format!(
            "no space left for {} ({} needed); lower --size or --files",
            path.display(),
            format_bytes(len)
        ))),
        Err(e) => Err(LayoutError(format!(
            "cannot reserve space for {}: {e}",
            path.display()
        ))),
    }
}

/// Writes a file's whole region: random bytes, or verify blocks of generation 0. Buffered,
/// then synced and dropped from the page cache, so the test starts from the device.
fn fill(spec: &IoSpec, f: &FileSpec, stop: &Stop) -> Result<(), LayoutError> {
    let layout = &spec.layout;
    let err = |e: std::io::Error| {
        if sys::is_no_space(&e) {
            LayoutError(format!(
                "the disk filled up while writing {}; lower --size or --files",
                f.path.display()
            ))
        } else {
            LayoutError(format!("prefill of {} failed: {e}", f.path.display()))
        }
    };
    let file = File::options().write(true).open(&f.path).map_err(err)?;
    let mut rng = Rng::new(spec.verify_seed ^ f.index as u64);
    let mut buf = vec![0u8; FILL_CHUNK];
    let block = spec.bs_bytes.first().max(512) as usize;
    let mut pos = 0u64;
    // Whole blocks per write, so verify headers land on block boundaries.
    let chunk_len = block * (FILL_CHUNK / block).max(1);
    if buf.len() < chunk_len {
        buf.resize(chunk_len, 0);
    }
    while pos < layout.size {
        if stop.is_set() {
            return Err(LayoutError(format!(
                "interrupted while writing {}",
                f.path.display()
            )));
        }
        let n = ((layout.size - pos) as usize).min(chunk_len);
        let chunk = &mut buf[..n];
        if spec.verify {
            for (i, b) in chunk.chunks_exact_mut(block).enumerate() {
                verify::fill(
                    b,
                    BlockId {
                        file_id: f.index as u32,
                        offset: f.start + pos + (i * block) as u64,
                        generation: 0,
                        seed: spec.verify_seed,
                    },
                );
            }
        } else {
            for w in chunk.chunks_exact_mut(8) {
                w.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
        }
        file.write_all_at(chunk, f.start + pos).map_err(err)?;
        pos += n as u64;
    }
    file.sync_data().map_err(err)?;
    let _ = sys::drop_cache(&file);
    if let Some(g) = layout.generations(f.index) {
        for slot in g.iter() {
            slot.store(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(paths: &'a [String], writes: bool, destroy: Option<&'a str>) -> PlanRequest<'a> {
        PlanRequest {
            paths,
            files: 1,
            size: Some(1 << 20),
            offset: 0,
            writes,
            destroy,
            block: 4096,
        }
    }

    /// Planning only reads: it is safe to point it at the disk holding `/`.
    #[test]
    fn a_mounted_device_is_refused_even_with_destroy_data() {
        let Some(dev) = device_of(Path::new("/")) else {
            eprintln!("/ is not on a block device here; skipped");
            return;
        };
        let node = format!("/dev/{}", dev.name);
        if !Path::new(&node).exists() {
            eprintln!("{node} does not exist here; skipped");
            return;
        }
        let paths = [node.clone()];
        for destroy in [None, Some(node.as_str())] {
            let e = Layout::plan(&request(&paths, true, destroy)).unwrap_err();
            assert!(e.0.contains("refusing to write"), "{e}");
            assert!(e.0.contains("mounted"), "{e}");
        }
    }

    #[test]
    fn directories_get_a_marked_work_directory_and_files_spread_over_volumes() {
        let base = std::env::temp_dir().join(format!("perflab-layout-{}", std::process::id()));
        let a = base.join("a");
        let b = base.join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let paths = [a.display().to_string(), b.display().to_string()];
        let mut req = request(&paths, true, None);
        req.files = 3;
        let layout = Layout::plan(&req).unwrap();
        // perflab makes its own directory in each.
        for (v, dir) in [&a, &b].into_iter().enumerate() {
            let w = layout.volumes[v].workdir.clone().unwrap();
            assert!(w.starts_with(dir) && &w != dir);
            assert!(!w.exists(), "planning writes nothing");
        }
        let vols: Vec<usize> = layout.files.iter().map(|f| f.volume).collect();
        assert_eq!(vols, vec![0, 1, 0]);
        assert!(layout.files.iter().all(|f| f.creates));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn dev_null_and_dev_zero_are_taken_as_they_are_and_other_character_devices_are_not() {
        assert_eq!(endless_device(Path::new("/dev/null")), Some("null"));
        assert_eq!(endless_device(Path::new("/dev/zero")), Some("zero"));
        assert_eq!(endless_device(Path::new("/dev/full")), None);
        assert_eq!(endless_device(Path::new("/tmp")), None);
        let paths = [PathBuf::from("/dev/null"), PathBuf::from("/dev/zero")];
        // A size far beyond any file: neither has one to keep to.
        let layout = Layout::named(&paths, 1 << 40, 0, &[true, false], None).unwrap();
        assert!(layout.volumes.iter().all(|v| v.kind == VolumeKind::Endless));
        assert!(
            layout.files.iter().all(|f| !f.creates),
            "never made, so never removed"
        );
        assert_eq!(layout.creates_bytes, 0);
        assert!(layout.devices().is_empty());
        // Any other character device is refused, written or read.
        if Path::new("/dev/full").exists() {
            for writes in [true, false] {
                let e = Layout::named(&[PathBuf::from("/dev/full")], 1 << 20, 0, &[writes], None)
                    .unwrap_err();
                assert!(e.0.contains("neither a directory"), "{e}");
            }
        }
    }

    #[test]
    fn a_path_that_does_not_exist_is_refused_not_created() {
        let base = std::env::temp_dir().join(format!("perflab-layout-no-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        for missing in [base.join("typo"), base.join("no/such/dir")] {
            let paths = [missing.display().to_string()];
            for writes in [false, true] {
                let e = Layout::plan(&request(&paths, writes, None)).unwrap_err();
                assert!(e.0.contains("does not exist"), "{e}");
            }
            assert!(!missing.exists());
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
