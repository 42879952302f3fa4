//! The options: one table from option name(s) to a handler that sets [`FioJob`] fields, so
//! adding an option is one line. Then the names fio knows that perflab refuses, with the
//! reason and what to do instead; any other name is unknown to fio and refused as such.
//!
//! Within a section fio applies `kb_base` before the rest (its `prio`), so `kb_base=1000`
//! changes the units of the lines above it too; everything else applies in the order
//! written, the later of two settings winning (fio sorts by prio only).
//!
//! Value kinds follow options.c's types: `flag` options (fio's STR_SET) may be bare and
//! mean 1; `boolean` ones (BOOL) need a value (`direct` alone is an error in fio too);
//! integers go through the size parser (`numjobs=1k` is 1024, as fio).

use super::JobFileError;
use super::buffer_pattern;
use super::dist;
use super::job::*;
use super::syntax::Entry;
use super::units::{Num, parse_bytes, parse_int, parse_num, parse_time_us, split_rwt};
use std::path::PathBuf;
use std::time::Duration;

/// What a handler sees.
pub struct Ctx<'a> {
    pub key: &'a str,
    pub value: Option<&'a str>,
    /// The section is a `[global]` one.
    pub global: bool,
    pub kb_base: u64,
}

impl Ctx<'_> {
    /// The value, required.
    fn val(&self) -> Result<&str, String> {
        match self.value {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(format!("needs a value ({}=...)", self.key)),
        }
    }
    /// fio's STR_SET: bare is 1, else an integer.
    fn flag(&self) -> Result<bool, String> {
        match self.value {
            None => Ok(true),
            Some(_) => self.boolean(),
        }
    }
    /// fio's BOOL: an integer, nonzero is on (`check_int`).
    fn boolean(&self) -> Result<bool, String> {
        let v = self.val()?;
        let n = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            i64::from_str_radix(h, 16).ok()
        } else {
            v.parse::<i64>().ok()
        };
        n.map(|n| n != 0)
            .ok_or_else(|| format!("`{v}` is not 0 or 1"))
    }
    fn int(&self, min: u64, max: u64) -> Result<u64, String> {
        parse_int(self.val()?, self.kb_base, min, max)
    }
    fn u32(&self, min: u32) -> Result<u32, String> {
        Ok(self.int(min as u64, u32::MAX as u64)? as u32)
    }
    fn bytes(&self) -> Result<u64, String> {
        parse_bytes(self.val()?, self.kb_base)
    }
    /// A time; `secs`: a bare number is seconds.
    fn time(&self, secs: bool) -> Result<Duration, String> {
        Ok(Duration::from_micros(parse_time_us(self.val()?, secs)?))
    }
    /// One of `words` (fio matches whole words).
    fn word<'w>(&self, words: &[&'w str]) -> Result<&'w str, String> {
        let v = self.val()?;
        words
            .iter()
            .find(|w| **w == v)
            .copied()
            .ok_or_else(|| format!("`{v}` is not one of {}", words.join(", ")))
    }
    /// `R,W[,T]` numbers, read and write kept: fio's splitter for plain numbers.
    fn per_dir<T: Copy>(
        &self,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<[Option<T>; 2], String> {
        let parts = split_rwt(self.val()?, true)?;
        let mut out = [None, None];
        for (i, p) in parts.iter().enumerate() {
            if let Some(p) = p {
                let v = parse(p)?;
                if i < 2 {
                    out[i] = Some(v);
                }
            }
        }
        Ok(out)
    }
    /// The trims' part of a per-direction value (`bs=4k,8k,16k`'s 16k, `bs=4k`'s 4k), when
    /// the value gives one.
    fn trim_part<T>(&self, parse: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
        let [_, _, t] = split_rwt(self.val()?, true)?;
        t.as_deref().map(parse).transpose()
    }
}

type Handler = fn(&mut FioJob, &Ctx) -> Result<(), String>;

/// One row of the table.
pub struct Opt {
    pub names: &'static [&'static str],
    pub handle: Handler,
}

/// A size in `SizeSpec` form (`N` or `N%`, 1..=100 percent).
fn size_spec(s: &str, kb_base: u64) -> Result<SizeSpec, String> {
    if s.ends_with(['z', 'Z']) {
        return Err(format!(
            "`{s}`: zone units need a zoned device (zonemode), which perflab does not drive"
        ));
    }
    match parse_num(s, kb_base)? {
        Num::Bytes(b) if b >= 0 => Ok(SizeSpec::Bytes(b as u64)),
        Num::Bytes(_) => Err(format!("`{s}` is negative")),
        Num::Percent(0) => Err(format!("`{s}`: a percentage is 1 to 100")),
        Num::Percent(p) => Ok(SizeSpec::Percent(p as u32)),
    }
}

/// `filename=a:b\:c` / `directory=...`: fio's `get_next_str`: split at `:`, `\:` is a
/// colon, a leading `:` is skipped, an empty name ends the list.
fn colon_list(s: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    let push = |cur: &mut String, out: &mut Vec<PathBuf>| -> bool {
        if cur.is_empty() {
            return out.is_empty(); // leading `:` skipped; a later empty one ends the list
        }
        out.push(PathBuf::from(std::mem::take(cur)));
        true
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !push(&mut cur, &mut out) {
                    return out;
                }
            }
            c => cur.push(c),
        }
    }
    push(&mut cur, &mut out);
    out
}

/// A log's prefix: a bare flag (or an empty value) keeps the prefix the job has, else means
/// the job's name, resolved once the section is read (`FioJob::check`, where `name=` is
/// known): fio's callback sets the prefix only when given one.
fn log_prefix(had: &Option<String>, c: &Ctx) -> Option<String> {
    match c.value {
        None => Some(had.clone().unwrap_or_default()),
        Some(v) => Some(v.to_string()),
    }
}

/// The engines perflab has an equivalent for; the rest of fio's are refused by name.
fn engine(v: &str) -> Result<FioEngine, String> {
    Ok(match v {
        "psync" => FioEngine::Psync,
        "sync" => FioEngine::Sync,
        "pvsync" => FioEngine::Pvsync,
        "pvsync2" => FioEngine::Pvsync2,
        "libaio" => FioEngine::Libaio,
        "io_uring" => FioEngine::IoUring,
        "null" => FioEngine::Null,
        "falloc" => FioEngine::Falloc,
        "ftruncate" => FioEngine::Ftruncate,
        "filestat" => FioEngine::FileStat,
        "filedelete" => FioEngine::FileDelete,
        other => {
            return Err(format!(
                "engine `{other}` has no perflab equivalent; use psync, sync, pvsync, pvsync2, libaio, io_uring, null, falloc, ftruncate, filestat or filedelete"
            ));
        }
    })
}

const VERIFY_METHODS: &[&str] = &[
    "md5",
    "crc64",
    "crc32",
    "crc32c-intel",
    "crc32c",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
    "null",
];

/// The table. Names are fio's (aliases after the name).
#[rustfmt::skip]
pub static TABLE: &[Opt] = &[
    // Identity and grouping.
    Opt { names: &["name"], handle: |j, c| { j.name = c.val()?.to_string(); Ok(()) } },
    Opt { names: &["description"], handle: |j, c| { j.description = Some(c.val()?.to_string()); Ok(()) } },
    Opt { names: &["stonewall", "wait_for_previous"], handle: |j, c| { j.stonewall = c.flag()?; Ok(()) } },
    Opt { names: &["new_group"], handle: |j, c| { j.new_group = c.flag()?; Ok(()) } },
    Opt { names: &["wait_for"], handle: |j, c| { j.wait_for = Some(c.val()?.to_string()); Ok(()) } },
    Opt { names: &["group_reporting"], handle: |j, c| { j.group_reporting = c.flag()?; Ok(()) } },
    Opt { names: &["numjobs"], handle: |j, c| { j.numjobs = c.u32(1)?; Ok(()) } },
    Opt { names: &["thread"], handle: |j, c| { j.thread = c.flag()?; Ok(()) } },
    // The pattern.
    Opt { names: &["rw", "readwrite"], handle: rw },
    Opt { names: &["rw_sequencer"], handle: |j, c| {
        j.rw_sequencer = match c.word(&["sequential", "identical"])? {
            "identical" => Sequencer::Identical,
            _ => Sequencer::Sequential,
        };
        Ok(())
    } },
    Opt { names: &["bs", "blocksize"], handle: |j, c| {
        let [r, w] = c.per_dir(|s| parse_int(s, c.kb_base, 1, u32::MAX as u64))?;
        if let Some(r) = r { j.bs[0] = r; }
        if let Some(w) = w { j.bs[1] = w; }
        if let Some(t) = c.trim_part(|s| parse_int(s, c.kb_base, 1, u32::MAX as u64))? { j.bs_trim = t; }
        Ok(())
    } },
    Opt { names: &["ba", "blockalign"], handle: |j, c| {
        let [r, w] = c.per_dir(|s| parse_int(s, c.kb_base, 1, u32::MAX as u64))?;
        let mut ba = j.blockalign.unwrap_or(j.bs);
        if let Some(r) = r { ba[0] = r; }
        if let Some(w) = w { ba[1] = w; }
        j.blockalign = Some(ba);
        Ok(())
    } },
    Opt { names: &["bsrange", "blocksize_range"], handle: |j, c| {
        let parts = split_rwt(c.val()?, false)?;
        let mut br = j.bsrange.unwrap_or([(j.bs[0], j.bs[0]), (j.bs[1], j.bs[1])]);
        for (i, p) in parts.iter().enumerate() {
            let Some(p) = p else { continue };
            let (a, b) = p.split_once('-').or_else(|| p.split_once(':'))
                .ok_or_else(|| format!("`{p}` is not a range (LO-HI)"))?;
            let (a, b) = (parse_int(a, c.kb_base, 1, u32::MAX as u64)?, parse_int(b, c.kb_base, 1, u32::MAX as u64)?);
            if i < 2 { br[i] = (a.min(b), a.max(b)); }
        }
        j.bsrange = Some(br);
        Ok(())
    } },
    Opt { names: &["bssplit"], handle: |j, c| { j.bssplit = Some(dist::bssplit(c.val()?, c.kb_base)?); Ok(()) } },
    Opt { names: &["rwmixread"], handle: |j, c| { j.rwmixread = c.int(0, 100)? as u32; Ok(()) } },
    // fio: rwmixwrite=N sets reads to 100-N; the later of the two wins.
    Opt { names: &["rwmixwrite"], handle: |j, c| { j.rwmixread = 100 - c.int(0, 100)? as u32; Ok(()) } },
    Opt { names: &["percentage_random"], handle: |j, c| {
        let [r, w] = c.per_dir(|s| parse_int(s, c.kb_base, 0, 100))?;
        if let Some(r) = r { j.percentage_random[0] = r as u32; }
        if let Some(w) = w { j.percentage_random[1] = w as u32; }
        Ok(())
    } },
    Opt { names: &["percentage_sequential"], handle: |j, c| {
        let [r, w] = c.per_dir(|s| parse_int(s, c.kb_base, 0, 100))?;
        if let Some(r) = r { j.percentage_random[0] = 100 - r as u32; }
        if let Some(w) = w { j.percentage_random[1] = 100 - w as u32; }
        Ok(())
    } },
    Opt { names: &["random_distribution"], handle: |j, c| { j.distribution = dist::distribution(c.val()?, c.kb_base)?; Ok(()) } },
    Opt { names: &["norandommap"], handle: |j, c| { j.norandommap = c.flag()?; Ok(()) } },
    Opt { names: &["randrepeat", "allrandrepeat"], handle: |j, c| { j.randrepeat = c.boolean()?; Ok(()) } },
    Opt { names: &["randseed"], handle: |j, c| { j.randseed = Some(c.bytes()?); Ok(()) } },
    Opt { names: &["random_generator"], handle: |j, c| {
        j.random_generator = c.word(&["tausworthe", "lfsr", "tausworthe64"])?.to_string();
        Ok(())
    } },
    // Files.
    Opt { names: &["filename"], handle: |j, c| {
        // fio adds to the files a job inherited (global filename=a, job filename=b: both).
        j.filenames.extend(colon_list(c.val()?));
        Ok(())
    } },
    Opt { names: &["directory"], handle: |j, c| { j.directory = colon_list(c.val()?); Ok(()) } },
    Opt { names: &["filename_format"], handle: |j, c| { j.filename_format = c.val()?.to_string(); Ok(()) } },
    Opt { names: &["nrfiles", "nr_files"], handle: |j, c| { j.nrfiles = c.u32(1)?; Ok(()) } },
    Opt { names: &["unique_filename"], handle: |j, c| { j.unique_filename = c.boolean()?; Ok(()) } },
    Opt { names: &["unlink"], handle: |j, c| { j.unlink = c.boolean()?; Ok(()) } },
    // Sizes.
    Opt { names: &["size"], handle: |j, c| { j.size = Some(size_spec(c.val()?, c.kb_base)?); Ok(()) } },
    Opt { names: &["filesize"], handle: |j, c| {
        let [lo, hi] = c.per_dir(|s| parse_int(s, c.kb_base, 1, i64::MAX as u64))?;
        let lo = lo.ok_or("needs a size")?;
        let hi = hi.unwrap_or(lo);
        j.filesize = Some((lo.min(hi), lo.max(hi)));
        Ok(())
    } },
    Opt { names: &["io_size", "io_limit"], handle: |j, c| { j.io_size = Some(c.bytes()?); Ok(()) } },
    Opt { names: &["offset", "fileoffset"], handle: |j, c| { j.offset = Some(size_spec(c.val()?, c.kb_base)?); Ok(()) } },
    // fio keeps a percentage apart (offset_increment_percent), the other reset.
    Opt { names: &["offset_increment"], handle: |j, c| {
        (j.offset_increment, j.offset_increment_percent) = match size_spec(c.val()?, c.kb_base)? {
            SizeSpec::Bytes(b) => (b, 0),
            SizeSpec::Percent(p) => (0, p),
        };
        Ok(())
    } },
    Opt { names: &["fill_device", "fill_fs"], handle: |j, c| { j.fill_device = c.boolean()?; Ok(()) } },
    // Time.
    Opt { names: &["runtime", "timeout"], handle: |j, c| {
        let t = c.time(true)?;
        j.runtime = (!t.is_zero()).then_some(t);
        Ok(())
    } },
    Opt { names: &["time_based"], handle: |j, c| { j.time_based = c.flag()?; Ok(()) } },
    Opt { names: &["ramp_time"], handle: |j, c| { j.ramp_time = c.time(true)?; Ok(()) } },
    Opt { names: &["startdelay"], handle: |j, c| {
        let [lo, hi] = c.per_dir(|s| parse_time_us(s, true))?;
        let lo = lo.ok_or("needs a time")?;
        let hi = hi.unwrap_or(lo);
        j.startdelay = (Duration::from_micros(lo.min(hi)), Duration::from_micros(lo.max(hi)));
        Ok(())
    } },
    Opt { names: &["loops"], handle: |j, c| { j.loops = c.u32(1)?; Ok(()) } },
    Opt { names: &["exitall"], handle: |j, c| {
        // fio's callback turns exitall on whatever the value says, so `exitall=0` would
        // mean the opposite of what it reads as.
        if !c.flag()? {
            return Err("fio turns exitall on whatever its value; remove the line to leave it off".into());
        }
        j.exitall = true;
        Ok(())
    } },
    Opt { names: &["exit_what"], handle: |j, c| {
        j.exit_what = match c.word(&["group", "stonewall", "all"])? {
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => ExitWhat::Group,
        };
        Ok(())
    } },
    Opt { names: &["number_ios"], handle: |j, c| {
        let n = c.bytes()?;
        j.number_ios = (n > 0).then_some(n);
        Ok(())
    } },
    // Rate.
    Opt { names: &["rate"], handle: |j, c| { j.rate = nonzero(c.per_dir(|s| parse_bytes(s, c.kb_base))?); Ok(()) } },
    Opt { names: &["rate_iops"], handle: |j, c| { j.rate_iops = nonzero(c.per_dir(|s| parse_bytes(s, c.kb_base))?); Ok(()) } },
    Opt { names: &["rate_min", "ratemin"], handle: |j, c| { j.rate_min = nonzero(c.per_dir(|s| parse_bytes(s, c.kb_base))?); Ok(()) } },
    Opt { names: &["rate_iops_min"], handle: |j, c| { j.rate_iops_min = nonzero(c.per_dir(|s| parse_bytes(s, c.kb_base))?); Ok(()) } },
    Opt { names: &["ratecycle", "rate_cycle"], handle: |j, c| { j.ratecycle = c.int(1, u64::from(u32::MAX))?; Ok(()) } },
    Opt { names: &["rate_process"], handle: |j, c| {
        j.rate_process = match c.word(&["linear", "poisson"])? {
            "poisson" => RateProcess::Poisson,
            _ => RateProcess::Linear,
        };
        Ok(())
    } },
    Opt { names: &["thinktime"], handle: |j, c| { j.thinktime = c.time(false)?; Ok(()) } },
    Opt { names: &["thinktime_spin"], handle: |j, c| { j.thinktime_spin = c.time(false)?; Ok(()) } },
    Opt { names: &["thinktime_blocks"], handle: |j, c| { j.thinktime_blocks = c.u32(1)?; Ok(()) } },
    // Engine and queue.
    Opt { names: &["ioengine"], handle: |j, c| { j.ioengine = engine(c.val()?)?; Ok(()) } },
    // filestat's own option: perflab's filestat calls stat(2), fio's default.
    Opt { names: &["stat_type"], handle: |_, c| match c.word(&["stat", "lstat", "statx"])? {
        "stat" => Ok(()),
        other => Err(format!("`{other}` is not supported yet (filestat runs stat, fio's default)")),
    } },
    Opt { names: &["iodepth"], handle: |j, c| { j.iodepth = c.int(1, 65536)? as u32; Ok(()) } },
    Opt { names: &["iodepth_batch", "iodepth_batch_submit"], handle: |j, c| { j.iodepth_batch_submit = c.u32(0)?; Ok(()) } },
    Opt { names: &["iodepth_batch_complete_min", "iodepth_batch_complete"], handle: |j, c| { j.iodepth_batch_complete_min = c.u32(0)?; Ok(()) } },
    Opt { names: &["iodepth_batch_complete_max"], handle: |j, c| {
        j.iodepth_batch_complete_max = c.u32(0)?;
        j.iodepth_batch_complete_max_set = true;
        Ok(())
    } },
    Opt { names: &["iodepth_low"], handle: |j, c| { j.iodepth_low = c.u32(0)?; j.iodepth_low_set = true; Ok(()) } },
    Opt { names: &["io_submit_mode"], handle: |_, c| {
        match c.word(&["inline", "offload"])? {
            "offload" => Err("offload (a separate submitting thread) has no perflab equivalent; use inline".into()),
            _ => Ok(()),
        }
    } },
    // Caching and syncing.
    Opt { names: &["direct"], handle: |j, c| { j.direct = c.boolean()?; Ok(()) } },
    Opt { names: &["buffered"], handle: |j, c| { j.direct = !c.boolean()?; Ok(()) } },
    Opt { names: &["invalidate"], handle: |j, c| { j.invalidate = c.boolean()?; Ok(()) } },
    Opt { names: &["sync"], handle: |j, c| {
        j.sync = match c.word(&["none", "0", "sync", "1", "dsync"])? {
            "sync" | "1" => SyncIo::Sync,
            "dsync" => SyncIo::Dsync,
            _ => SyncIo::None,
        };
        Ok(())
    } },
    Opt { names: &["fsync"], handle: |j, c| { j.fsync = c.u32(0)?; Ok(()) } },
    Opt { names: &["fdatasync"], handle: |j, c| { j.fdatasync = c.u32(0)?; Ok(()) } },
    Opt { names: &["fsync_on_close"], handle: |j, c| { j.fsync_on_close = c.boolean()?; Ok(()) } },
    Opt { names: &["end_fsync"], handle: |j, c| { j.end_fsync = c.boolean()?; Ok(()) } },
    // Verification.
    Opt { names: &["verify"], handle: |j, c| {
        let v = c.val()?;
        j.verify = match v {
            // fio's null method pretends: nothing is checked.
            "0" | "none" | "null" => None,
            m if VERIFY_METHODS.contains(&m) => Some(m.to_string()),
            m => return Err(format!("unknown verify method `{m}` ({})", VERIFY_METHODS.join(", "))),
        };
        Ok(())
    } },
    Opt { names: &["do_verify"], handle: |j, c| { j.do_verify = c.boolean()?; Ok(()) } },
    Opt { names: &["verify_fatal"], handle: |j, c| { j.verify_fatal = c.boolean()?; Ok(()) } },
    Opt { names: &["verify_dump"], handle: |j, c| { j.verify_dump = c.boolean()?; Ok(()) } },
    // fio 3.33 accepts and ignores them (soft-deprecated): so does perflab.
    Opt { names: &["verifysort", "verifysort_nr"], handle: |_, c| { check_any(c) } },
    // Buffers.
    Opt { names: &["refill_buffers"], handle: |j, c| { j.refill_buffers = c.flag()?; j.refill_buffers_set = true; Ok(()) } },
    Opt { names: &["scramble_buffers"], handle: |j, c| { j.scramble_buffers = c.boolean()?; j.scramble_buffers_set = true; Ok(()) } },
    Opt { names: &["zero_buffers"], handle: |j, c| {
        j.zero_buffers = c.flag()?;
        j.zero_buffers_set = true;
        j.buffers = if j.zero_buffers { Buffers::Zero } else { Buffers::Random };
        Ok(())
    } },
    Opt { names: &["buffer_compress_percentage"], handle: |j, c| {
        let p = c.int(0, 100)? as u32;
        j.buffer_compress_percentage = Some(p);
        j.compress_written = true;
        j.buffers = Buffers::Compressible(p);
        Ok(())
    } },
    Opt { names: &["buffer_pattern"], handle: |j, c| {
        j.buffer_pattern = Some(buffer_pattern::parse(c.val()?)?);
        // fio (str_buffer_pattern_cb): refilled when the job reads (a read would overwrite
        // the pattern) or compresses, never scrambled or zeroed; rw as it stands at this line.
        j.refill_buffers = j.buffer_compress_percentage.is_some_and(|p| p > 0) || j.rw.reads();
        j.scramble_buffers = false;
        j.zero_buffers = false;
        Ok(())
    } },
    Opt { names: &["dedupe_percentage"], handle: |j, c| {
        j.dedupe_percentage = c.int(0, 100)? as u32;
        // fio (str_dedupe_cb): a dedupe percentage refills every write buffer.
        j.refill_buffers = true;
        j.compress_written = true;
        Ok(())
    } },
    Opt { names: &["dedupe_mode"], handle: |j, c| {
        j.dedupe_mode = match c.word(&["repeat", "working_set"])? {
            "working_set" => DedupeMode::WorkingSet,
            _ => DedupeMode::Repeat,
        };
        Ok(())
    } },
    Opt { names: &["dedupe_working_set_percentage"], handle: |j, c| { j.dedupe_working_set_percentage = c.int(0, 100)? as u32; Ok(()) } },
    Opt { names: &["dedupe_global"], handle: |j, c| { j.dedupe_global = c.boolean()?; Ok(()) } },
    // Flow control between jobs (fio's flow.c).
    Opt { names: &["flow_id"], handle: |j, c| { j.flow_id = c.int(0, u32::MAX as u64)? as u32; Ok(()) } },
    Opt { names: &["flow"], handle: |j, c| { j.flow = c.int(0, 1000)? as u32; Ok(()) } },
    Opt { names: &["flow_sleep"], handle: |j, c| { j.flow_sleep_us = c.int(0, u32::MAX as u64)?; Ok(()) } },
    // fio 3.x accepts flow_watermark and ignores it (soft-deprecated): so does perflab.
    Opt { names: &["flow_watermark"], handle: |_, c| { check_any(c) } },
    Opt { names: &["buffer_compress_chunk"], handle: |j, c| { j.buffer_compress_chunk = c.bytes()?; Ok(()) } },
    // Steady state.
    Opt { names: &["steadystate", "ss"], handle: |j, c| { j.ss_criterion = dist::steadystate(c.val()?, c.kb_base)?; Ok(()) } },
    Opt { names: &["steadystate_duration", "ss_dur"], handle: |j, c| { j.ss_dur = c.time(true)?; Ok(()) } },
    Opt { names: &["steadystate_ramp_time", "ss_ramp"], handle: |j, c| { j.ss_ramp = c.time(true)?; Ok(()) } },
    Opt { names: &["steadystate_check_interval", "ss_interval"], handle: |j, c| {
        let t = c.time(true)?;
        if t.is_zero() { return Err("must be above 0".into()); }
        j.ss_interval = t;
        Ok(())
    } },
    // Logs.
    Opt { names: &["write_bw_log"], handle: |j, c| { j.write_bw_log = log_prefix(&j.write_bw_log, c); Ok(()) } },
    Opt { names: &["write_lat_log"], handle: |j, c| { j.write_lat_log = log_prefix(&j.write_lat_log, c); Ok(()) } },
    Opt { names: &["write_iops_log"], handle: |j, c| { j.write_iops_log = log_prefix(&j.write_iops_log, c); Ok(()) } },
    Opt { names: &["write_hist_log"], handle: |j, c| { j.write_hist_log = log_prefix(&j.write_hist_log, c); Ok(()) } },
    Opt { names: &["log_avg_msec"], handle: |j, c| { j.log_avg_msec = c.u32(0)?; Ok(()) } },
    Opt { names: &["log_offset"], handle: |j, c| { j.log_offset = c.boolean()?; Ok(()) } },
    Opt { names: &["per_job_logs"], handle: |j, c| { j.per_job_logs = c.boolean()?; Ok(()) } },
    Opt { names: &["bwavgtime"], handle: |j, c| { j.bw_avg_time = Some(c.u32(0)?); Ok(()) } },
    Opt { names: &["iopsavgtime"], handle: |j, c| { j.iops_avg_time = Some(c.u32(0)?); Ok(()) } },
    Opt { names: &["log_unix_epoch"], handle: |j, c| { j.log_unix_epoch = c.boolean()?; Ok(()) } },
    Opt { names: &["log_alternate_epoch"], handle: |j, c| { j.log_alternate_epoch = c.boolean()?; Ok(()) } },
    // What fio measures: gtod_reduce=1 turns the four off (and the percentiles), =0 leaves
    // them as they are (options.c str_gtod_reduce_cb); each may be set again after it.
    Opt { names: &["gtod_reduce"], handle: |j, c| {
        j.gtod_reduce = c.boolean()?;
        if j.gtod_reduce {
            (j.disable_lat, j.disable_clat, j.disable_slat, j.disable_bw) = (true, true, true, true);
            (j.clat_percentiles, j.lat_percentiles, j.slat_percentiles) = (false, false, false);
        }
        Ok(())
    } },
    Opt { names: &["disable_lat"], handle: |j, c| { j.disable_lat = c.boolean()?; Ok(()) } },
    Opt { names: &["disable_clat"], handle: |j, c| { j.disable_clat = c.boolean()?; Ok(()) } },
    Opt { names: &["disable_slat"], handle: |j, c| { j.disable_slat = c.boolean()?; Ok(()) } },
    Opt { names: &["disable_bw_measurement", "disable_bw"], handle: |j, c| { j.disable_bw = c.boolean()?; Ok(()) } },
    Opt { names: &["stats"], handle: |j, c| { j.stats = c.boolean()?; Ok(()) } },
    // Reporting.
    Opt { names: &["clat_percentiles"], handle: |j, c| { j.clat_percentiles = c.boolean()?; Ok(()) } },
    Opt { names: &["lat_percentiles"], handle: |j, c| { j.lat_percentiles = c.boolean()?; Ok(()) } },
    Opt { names: &["slat_percentiles"], handle: |j, c| { j.slat_percentiles = c.boolean()?; Ok(()) } },
    Opt { names: &["percentile_list"], handle: |j, c| { j.percentile_list = percentiles(c.val()?)?; Ok(()) } },
    Opt { names: &["unified_rw_reporting"], handle: |j, c| {
        j.unified_rw_reporting = match c.word(&["none", "mixed", "both", "0", "1", "2"])? {
            "mixed" | "1" => "mixed",
            "both" | "2" => "both",
            _ => "none",
        }.to_string();
        Ok(())
    } },
    Opt { names: &["kb_base"], handle: |j, c| { j.kb_base = c.word(&["1024", "1000"])?.parse().unwrap_or(1024); Ok(()) } },
    // Accepted and ignored: they change only fio's own output or bookkeeping, which
    // perflab does its own way, or act only with what perflab refuses (write_hist_log).
    Opt {
        names: &[
            "unit_base", "significant_figures", "log_hist_msec", "log_hist_coarseness",
        ],
        handle: |_, c| { check_any(c) },
    },
    // fio registers the tiobench profile's options with everyone's, so a job file may set
    // them (fio's own examples/waitfor.fio says threads=1); they act only under
    // profile=tiobench, which perflab refuses, and are ignored here as there.
    Opt {
        names: &["threads", "numruns", "dir", "block"],
        handle: |_, c| { check_any(c) },
    },
];

/// An ignored option's value is still checked to be a plausible one.
fn check_any(c: &Ctx) -> Result<(), String> {
    match c.value {
        None => Ok(()),
        Some("") => Err(format!("needs a value ({}=...)", c.key)),
        Some(_) => Ok(()),
    }
}

fn nonzero(v: [Option<u64>; 2]) -> [Option<u64>; 2] {
    v.map(|x| x.filter(|&n| n > 0))
}

fn percentiles(v: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for p in v.split(':') {
        let x: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("`{p}` is not a number"))?;
        if !(0.0..=100.0).contains(&x) {
            return Err(format!("{x} is not a percentile (0 to 100)"));
        }
        out.push(x);
    }
    if out.len() > 20 {
        return Err(format!("{} percentiles; fio takes at most 20", out.len()));
    }
    Ok(out)
}

fn rw(j: &mut FioJob, c: &Ctx) -> Result<(), String> {
    let v = c.val()?;
    let (mode, post) = match v.split_once(':') {
        Some((m, p)) => (m, Some(p)),
        None => (v, None),
    };
    j.rw = match mode {
        "read" => FioRw::Read,
        "write" => FioRw::Write,
        "randread" => FioRw::RandRead,
        "randwrite" => FioRw::RandWrite,
        "rw" | "readwrite" => FioRw::ReadWrite,
        "randrw" => FioRw::RandRw,
        // Trims run only on the falloc engine, which the job may name later: the planning
        // refuses them elsewhere.
        "trim" => FioRw::Trim,
        "randtrim" => FioRw::RandTrim,
        "trimwrite" => FioRw::TrimWrite,
        "randtrimwrite" => {
            return Err(
                "`randtrimwrite` is not supported (perflab trims only on ioengine=falloc, as trim or randtrim)".into(),
            );
        }
        other => {
            return Err(format!(
                "`{other}` is not one of read, write, randread, randwrite, rw, readwrite, randrw"
            ));
        }
    };
    // fio resets the modifier with every rw=.
    j.rw_modifier = None;
    if let Some(p) = post.filter(|p| !p.is_empty()) {
        j.rw_modifier = Some(if j.rw.random() {
            let n = parse_bytes(p, c.kb_base)?;
            if n == 0 || n > u32::MAX as u64 {
                return Err(format!("`{p}`: a new offset every 1 to 2^32-1 I/Os"));
            }
            RwModifier::NewOffsetEvery(n)
        } else {
            match parse_num(p, c.kb_base)? {
                Num::Bytes(b) => RwModifier::Skip(b),
                Num::Percent(_) => return Err(format!("`{p}`: the skip is in bytes")),
            }
        });
    }
    Ok(())
}

/// fio options perflab refuses, with why and what to do instead.
#[rustfmt::skip]
pub static REFUSED: &[(&[&str], &str)] = &[
    (&["cpus_allowed", "cpumask", "cpus_allowed_policy", "numa_cpu_nodes", "numa_mem_policy", "gtod_cpu"],
     "perflab does not pin jobs to CPUs or NUMA nodes; pin the whole run with taskset or numactl"),
    (&["verify_backlog", "verify_backlog_batch"],
     "perflab reads back what a job wrote once its I/O is done, not every N blocks (and checks every read of a known block as it completes); remove it"),
    (&["verify_async", "verify_async_cpus"],
     "perflab checks each block in the thread that reads it; remove it"),
    (&["verify_only"],
     "perflab checks reads as a job reads: give the job rw=read (or randread) with verify, in place of the writing job with verify_only"),
    (&["verify_offset", "verify_interval"],
     "perflab's verify header is at the start of each whole block of bs; remove it"),
    (&["verify_pattern", "verify_pattern_interval"],
     "perflab verifies its own checksummed blocks, not a pattern; give verify=crc32c (or another checksum) and remove it"),
    (&["verify_state_save", "verify_state_load", "verify_header_seed", "verify_write_sequence", "experimental_verify"],
     "perflab's verify blocks always carry the run's seed and each block's write generation, and it keeps no verify state between runs; remove it"),
    (&["trim_verify_zero"],
     "perflab does not trim what a job wrote; it trims only on ioengine=falloc, as rw=trim or randtrim"),
    (&["trim_percentage", "trim_backlog", "trim_backlog_batch", "block_error_percentiles"],
     "perflab does not trim what a job wrote; it trims only on ioengine=falloc, as rw=trim or randtrim"),
    (&["nice", "prio", "prioclass", "priohint", "cmdprio_percentage"],
     "perflab does not set job priorities; run it under nice or ionice"),
    (&["read_iolog", "read_iolog_chunked", "write_iolog", "replay_no_stall", "replay_redirect",
       "replay_align", "replay_scale", "replay_time_scale", "replay_skip", "merge_blktrace_file",
       "merge_blktrace_scalars", "merge_blktrace_iters"],
     "perflab does not record or replay I/O logs"),
    (&["exec_prerun", "exec_postrun"], "perflab runs no commands for a job; run them before or after perflab"),
    (&["uid", "gid"], "perflab does not change user; run it as that user"),
    (&["cgroup", "cgroup_weight", "cgroup_nodelete"], "perflab does not make cgroups; run it inside the cgroup"),
    (&["mem", "iomem", "mem_align", "iomem_align", "hugepage-size", "lockmem"],
     "perflab allocates its own aligned I/O buffers"),
    (&["zonemode", "zonerange", "zonesize", "zonecapacity", "zoneskip", "max_open_zones",
       "job_max_open_zones", "ignore_zone_limits", "zone_reset_threshold", "zone_reset_frequency",
       "read_beyond_wp", "recover_zbd_write_error", "write_zone_remainder"],
     "perflab does not drive zoned block devices; remove it (zonemode=none is accepted)"),
    (&["latency_target", "latency_window", "latency_percentile", "latency_run", "max_latency"],
     "perflab does not search for a latency target inside a job; sweep --iodepth and read the curve (or set an SLO)"),
    (&["profile"], "fio's built-in profiles are not supported; write the job out"),
    (&["continue_on_error", "ignore_error", "error_dump", "exitall_on_error"],
     "perflab stops a step on the first I/O error and reports it; remove this"),
    (&["softrandommap", "random_sequence_stride", "num_range", "sprandom", "spr_num_regions", "spr_op", "spr_cs"],
     "perflab has no equivalent; remove it"),
];

/// fio names not in [`TABLE`] or [`REFUSED`]: known to fio, refused generically. Engine
/// options of the accepted engines are here too (fio knows them once the engine loads).
#[rustfmt::skip]
pub static OTHER_FIO: &[&str] = &[
    "allow_file_create", "allow_mounted_write", "atomic", "bs_is_seq_rand", "bs_unaligned",
    "blocksize_unaligned", "clocksource", "comm", "create_fsync",
    "create_on_open", "create_only", "create_serialize", "data_placement", "dataplacement",
    "disk_util", "dp_scheme", "end_syncfs", "fadvise_hint", "fallocate", "fdp", "fdp_pli",
    "fdp_pli_select", "file_append", "file_service_type", "filetype", "gpu_dev_id",
    "ioscheduler", "job_start_clock_id", "lockfile", "log_alternate_epoch_clock_id",
    "log_compression", "log_compression_cpus", "log_entries", "log_issue_time",
    "log_max_value", "log_prio", "log_store_compressed", "log_window_value", "offset_align",
    "opendir", "openfiles", "overwrite", "plid_select", "plids", "pre_read", "ramp_size",
    "rate_ignore_thinktime", "rwmixcycle", "serialize_overlap",
    "sync_file_range", "thinkcycles", "thinktime_blocks_type", "thinktime_iotime",
    "unlink_each_loop", "verify_policy", "write_barrier", "write_hint", "random_sequence",
    // engine options (io_uring, libaio, pvsync2, ...)
    "hipri", "readfua", "writefua", "fixedbufs", "registerfiles", "sqthread_poll",
    "sqthread_poll_cpu", "nonvectored", "uncached", "nowait", "force_async", "cmd_type",
    "userspace_reap", "libaio_vectored", "hipri_percentage",
];

/// The name fio prints for an option written as `key` (its JSON "job options" use the
/// canonical name: `readwrite` is printed as `rw`, `ss_dur` as `steadystate_duration`).
pub fn canonical_name(key: &str) -> Option<&'static str> {
    find(key).map(|o| o.names[0])
}

fn find(key: &str) -> Option<&'static Opt> {
    TABLE.iter().find(|o| o.names.contains(&key))
}

/// Applies a section's entries to `job` (kb_base first, as fio).
pub fn apply_section(
    job: &mut FioJob,
    entries: &[Entry],
    global: bool,
) -> Result<(), JobFileError> {
    let (first, rest): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| e.key == "kb_base");
    for e in first.into_iter().chain(rest) {
        apply(job, e, global)?;
    }
    Ok(())
}

fn apply(job: &mut FioJob, e: &Entry, global: bool) -> Result<(), JobFileError> {
    let fail = |m: String| JobFileError::new(Some(e.at.clone()), Some(&e.key), m);
    if let Some(o) = find(&e.key) {
        let c = Ctx {
            key: &e.key,
            value: e.value.as_deref(),
            global,
            kb_base: job.kb_base,
        };
        return (o.handle)(job, &c).map_err(fail);
    }
    if e.key == "zonemode" && e.value.as_deref() == Some("none") {
        return Ok(());
    }
    if let Some((_, why)) = REFUSED
        .iter()
        .find(|(names, _)| names.contains(&e.key.as_str()))
    {
        return Err(fail((*why).to_string()));
    }
    if OTHER_FIO.contains(&e.key.as_str()) {
        return Err(fail(
            "a fio option perflab cannot honour; remove it (or run fio itself for this job)".into(),
        ));
    }
    let hint = closest(&e.key)
        .map(|n| format!("; did you mean {n}?"))
        .unwrap_or_default();
    Err(fail(format!(
        "unknown option: fio has no such option{hint}"
    )))
}

/// The nearest known name, when close enough to be a typo.
fn closest(key: &str) -> Option<&'static str> {
    if key.len() > 64 {
        return None;
    }
    let names = TABLE.iter().flat_map(|o| o.names.iter().copied());
    names
        .map(|n| (distance(key, n), n))
        .filter(|&(d, n)| d <= 2.max(n.len() / 5))
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Checks the table has no name twice (a test calls it).
pub fn duplicate_names() -> Vec<&'static str> {
    let mut seen = std::collections::HashSet::new();
    TABLE
        .iter()
        .flat_map(|o| o.names.iter().copied())
        .chain(REFUSED.iter().flat_map(|(n, _)| n.iter().copied()))
        .chain(OTHER_FIO.iter().copied())
        .filter(|n| !seen.insert(*n))
        .collect()
}
