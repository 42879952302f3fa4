//! [`FioJob`]: one job section with fio's defaults applied, its enums, and
//! [`FioJob::files_of`], the files a numjobs clone uses.
//!
//! Every field's default is fio's (options.c `.def`, HOWTO); the doc of each field says
//! which option sets it. Fields hold what perflab can act on; options fio has that only
//! change fio's own reporting are kept where a caller may want them (percentile_list) and
//! otherwise accepted and dropped (see [`super::options`]).

use super::Origin;
use std::path::PathBuf;
use std::time::Duration;

/// `rw` / `readwrite`. Trims run on the falloc engine only (punched holes); the planning
/// refuses them on any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioRw {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw` or `readwrite`: sequential mixed reads and writes.
    ReadWrite,
    RandRw,
    TrimWrite,
}

impl FioRw {
    pub fn random(self) -> bool {
        matches!(
            self,
            FioRw::RandRead | FioRw::RandWrite | FioRw::RandTrim | FioRw::RandRw
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            FioRw::Read | FioRw::RandRead | FioRw::ReadWrite | FioRw::RandRw
        )
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            FioRw::Write | FioRw::RandWrite | FioRw::ReadWrite | FioRw::RandRw | FioRw::TrimWrite
        )
    }
}

/// The `:N` of `rw=X:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwModifier {
    /// Random patterns: a new random offset only every N I/Os (sequential in between).
    NewOffsetEvery(u64),
    /// Sequential patterns: N bytes skipped after each I/O (negative goes backwards:
    /// `read:-8k` with bs=4k reads backwards from the end).
    Skip(i64),
}

/// `rw_sequencer`: what the N of a random `rw=X:N` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sequencer {
    /// A new offset every N I/Os, sequential in between (the default).
    #[default]
    Sequential,
    /// The same offset N times.
    Identical,
}

/// A size that may be a share of the file or device (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSpec {
    Bytes(u64),
    /// 1..=100 percent of the file or device.
    Percent(u32),
}

/// `random_distribution`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FioDistribution {
    /// Uniform (the default).
    #[default]
    Random,
    /// `zipf[:theta[:center]]`: theta default 1.1, never 1; center 0..=1, None when not
    /// given (fio's -1).
    Zipf { theta: f64, center: Option<f64> },
    /// `pareto[:h[:center]]`: 0 < h < 1, default 0.2.
    Pareto { h: f64, center: Option<f64> },
    /// `normal[:dev[:center]]`: 0 <= dev < 100, default 0 (fio's).
    Normal { dev: f64, center: Option<f64> },
    /// `zoned:A/S:...`: A percent of the I/O in the next S percent of the file.
    Zoned(Vec<(f64, f64)>),
    /// `zoned_abs:A/SIZE:...`: A percent of the I/O in the next SIZE bytes.
    ZonedAbs(Vec<(f64, u64)>),
}

/// `ioengine`: the ones perflab has an equivalent for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FioEngine {
    /// pread/pwrite, one at a time (fio's default on Linux).
    #[default]
    Psync,
    /// read/write after lseek.
    Sync,
    /// preadv/pwritev.
    Pvsync,
    /// preadv2/pwritev2.
    Pvsync2,
    Libaio,
    IoUring,
    /// No I/O at all: measures the harness.
    Null,
    /// fallocate in place of reads and writes, punched holes for trims.
    Falloc,
    /// Each write truncates the file to its offset.
    Ftruncate,
    /// A stat of each file, which is never opened.
    FileStat,
    /// An unlink of each file.
    FileDelete,
}

impl FioEngine {
    pub fn name(self) -> &'static str {
        match self {
            FioEngine::Psync => "psync",
            FioEngine::Sync => "sync",
            FioEngine::Pvsync => "pvsync",
            FioEngine::Pvsync2 => "pvsync2",
            FioEngine::Libaio => "libaio",
            FioEngine::IoUring => "io_uring",
            FioEngine::Null => "null",
            FioEngine::Falloc => "falloc",
            FioEngine::Ftruncate => "ftruncate",
            FioEngine::FileStat => "filestat",
            FioEngine::FileDelete => "filedelete",
        }
    }
}

/// `rate_process`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateProcess {
    #[default]
    Linear,
    Poisson,
}

/// What the write buffers hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Buffers {
    /// Random bytes (fio's default).
    #[default]
    Random,
    /// `zero_buffers`.
    Zero,
    /// `buffer_compress_percentage=N`: N percent of each chunk compressible.
    Compressible(u32),
}

/// `sync`: how each write through the job's files completes (open(2)'s flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncIo {
    /// `none` or `0` (the default): writes complete into the page cache.
    #[default]
    None,
    /// `sync` or `1`: O_SYNC, each write returns once data and metadata are stable.
    Sync,
    /// `dsync`: O_DSYNC, each write returns once its data (and the metadata needed to read
    /// it back) are stable.
    Dsync,
}

/// `dedupe_mode`: where a duplicate write buffer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupeMode {
    /// `repeat` (the default): the buffer the job's unique stream is at.
    #[default]
    Repeat,
    /// `working_set`: one of the job's first unique buffers, a
    /// `dedupe_working_set_percentage` of its size.
    WorkingSet,
}

/// `exit_what`: which jobs a finishing job ends when `exitall` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's groupid), started or not (the default).
    #[default]
    Group,
    /// Every job running now, in any group; the next stonewalled group then starts.
    Stonewall,
    /// Every job, the ones not started yet included: the run ends.
    All,
}

/// `steadystate` criteria.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsCriterion {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
    Lat,
    LatSlope,
}

/// `steadystate=CRIT:LIMIT`, `ss_dur`, `ss_ramp`: only present when `ss_dur` > 0 (fio
/// ignores the criterion until then).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyState {
    pub criterion: SsCriterion,
    /// IOPS, bytes/s, or (lat) microseconds as fio parses them; a percent when `percent`.
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    pub dur: Duration,
    pub ramp: Duration,
    /// `ss_interval` (default 1 s).
    pub interval: Duration,
}

/// One job section, with fio's defaults applied (numjobs clones not expanded).
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    /// The section name (`name=` overrides it, as fio).
    pub name: String,
    /// The section header.
    pub at: Origin,
    /// `description`.
    pub description: Option<String>,
    /// fio's groupid: 0-based, see [`super::groups`].
    pub group: u32,
    /// `stonewall` / `wait_for_previous` (or the implicit one of a later job file).
    pub stonewall: bool,
    /// `new_group`.
    pub new_group: bool,
    /// `wait_for=NAME`: an earlier, unique job.
    pub wait_for: Option<String>,
    /// `group_reporting`.
    pub group_reporting: bool,
    /// The section's own options as written (key, value; a bare flag has ""), for fio's
    /// JSON "job options".
    pub options: Vec<(String, String)>,

    /// `rw` / `readwrite` (default read).
    pub rw: FioRw,
    /// `rw=X:N`.
    pub rw_modifier: Option<RwModifier>,
    /// `rw_sequencer` (default sequential).
    pub rw_sequencer: Sequencer,
    /// `bs` / `blocksize`: [read, write] (default 4096).
    pub bs: [u64; 2],
    /// `bs`'s third value, trims' block size (default 4096; `bs=8k,32k` gives trims 32k).
    pub bs_trim: u64,
    /// `bsrange`: [read, write] (lo, hi).
    pub bsrange: Option<[(u64, u64); 2]>,
    /// `bssplit`: [read, write] (block size, percent), percents summing to 100.
    pub bssplit: Option<[Vec<(u64, u32)>; 2]>,
    /// `ba` / `blockalign`: [read, write].
    pub blockalign: Option<[u64; 2]>,
    /// `rwmixread` (default 50); `rwmixwrite=N` sets it to 100-N.
    pub rwmixread: u32,
    /// `percentage_random` for reads and writes (default 100).
    pub percentage_random: [u32; 2],

    /// `random_distribution` (default random).
    pub distribution: FioDistribution,
    /// `norandommap`.
    pub norandommap: bool,
    /// `randrepeat` (default true).
    pub randrepeat: bool,
    /// `randseed`: None is fio's default seed (0x89) with randrepeat.
    pub randseed: Option<u64>,
    /// `random_generator`: tausworthe (default), lfsr or tausworthe64. perflab draws from
    /// its own generator; the name is kept for the record.
    pub random_generator: String,

    /// `filename` (`:`-separated, `\:` for a colon), joined to a `directory` when relative.
    pub filenames: Vec<PathBuf>,
    /// `directory` (`:`-separated; clone N uses entry N mod len).
    pub directory: Vec<PathBuf>,
    /// `filename_format` (default `$jobname.$jobnum.$filenum`), used without `filename`.
    pub filename_format: String,
    /// `nrfiles` / `nr_files` (default 1).
    pub nrfiles: u32,
    /// `unique_filename` (default true): fio prefixes `directory` files with the client
    /// name in client/server runs; kept for the record.
    pub unique_filename: bool,

    /// `size`: bytes or a percent of the file/device. Required when no file size is known.
    pub size: Option<SizeSpec>,
    /// `filesize`: a size or a range (lo, hi) of file sizes.
    pub filesize: Option<(u64, u64)>,
    /// `io_size` / `io_limit`.
    pub io_size: Option<u64>,
    /// `offset` (default 0 bytes).
    pub offset: Option<SizeSpec>,
    /// `offset_increment`: clone N starts at offset + N * this.
    pub offset_increment: u64,
    /// `offset_increment=N%`: the increment is N percent of the file's size (0: bytes).
    pub offset_increment_percent: u32,
    /// `fill_device` / `fill_fs`.
    pub fill_device: bool,

    /// `runtime` / `timeout` (bare is seconds); None: until the I/O is done.
    pub runtime: Option<Duration>,
    /// `time_based`.
    pub time_based: bool,
    /// `ramp_time` (bare is seconds).
    pub ramp_time: Duration,
    /// `startdelay` (bare is seconds); a range `a-b` gives (a, b), else (a, a).
    pub startdelay: (Duration, Duration),
    /// `loops` (default 1).
    pub loops: u32,
    /// `number_ios`: stop after this many I/Os (0 in fio is "no limit": None).
    pub number_ios: Option<u64>,
    /// `exitall` (any value: fio's callback turns it on whatever it says): when any job
    /// ends, it ends others, as its `exit_what` says. fio makes it the whole run's as soon
    /// as one section sets it.
    pub exitall: bool,
    /// `exit_what` (default group).
    pub exit_what: ExitWhat,

    /// `rate` in bytes/s: [read, write].
    pub rate: [Option<u64>; 2],
    /// `rate_iops`: [read, write].
    pub rate_iops: [Option<u64>; 2],
    /// `rate_min` / `ratemin` in bytes/s: below it over a `ratecycle` the job ends in
    /// error (`super::super::jobminrate`).
    pub rate_min: [Option<u64>; 2],
    /// `rate_iops_min`: the same floor in I/Os a second.
    pub rate_iops_min: [Option<u64>; 2],
    /// `ratecycle` / `rate_cycle`: the window of the floors, in ms (default 1000).
    pub ratecycle: u64,
    /// `rate_process` (default linear).
    pub rate_process: RateProcess,
    /// `thinktime` (bare is microseconds).
    pub thinktime: Duration,
    /// `thinktime_blocks` (default 1).
    pub thinktime_blocks: u32,
    /// `thinktime_spin` (bare is microseconds).
    pub thinktime_spin: Duration,

    /// `ioengine` (default psync).
    pub ioengine: FioEngine,
    /// `iodepth` (default 1).
    pub iodepth: u32,
    /// `iodepth_batch` / `iodepth_batch_submit` (default 1).
    pub iodepth_batch_submit: u32,
    /// `iodepth_batch_complete_min` / `iodepth_batch_complete` (default 1).
    pub iodepth_batch_complete_min: u32,
    /// `iodepth_batch_complete_max` (default: iodepth, as fio).
    pub iodepth_batch_complete_max: u32,
    /// `iodepth_low` (default: iodepth, as fio), stored.
    pub iodepth_low: u32,

    /// `direct` (default false); `buffered=0` is `direct=1`.
    pub direct: bool,
    /// `invalidate` (default true): drop the file's cached pages before the job.
    pub invalidate: bool,
    /// `sync`: none (default), `sync`/`1` (O_SYNC) or `dsync` (O_DSYNC).
    pub sync: SyncIo,
    /// `fsync`: an fsync every N writes (0 never).
    pub fsync: u32,
    /// `fdatasync`: likewise.
    pub fdatasync: u32,
    /// `fsync_on_close`.
    pub fsync_on_close: bool,
    /// `end_fsync`.
    pub end_fsync: bool,

    /// `numjobs` (default 1): clones of this job.
    pub numjobs: u32,
    /// `unlink`: remove the files afterwards.
    pub unlink: bool,

    /// `verify`: the method (md5, crc32c, ...); None for `verify=0` (`none`, and `null`,
    /// with which fio only pretends).
    pub verify: Option<String>,
    /// `do_verify` (default true).
    pub do_verify: bool,
    /// `verify_fatal` (default false): end the job at its first bad block.
    pub verify_fatal: bool,
    /// `verify_dump` (default false): fio dumps good and bad blocks to files.
    pub verify_dump: bool,

    /// What the write buffers hold.
    pub buffers: Buffers,
    /// `refill_buffers`.
    pub refill_buffers: bool,
    /// `scramble_buffers` (default true).
    pub scramble_buffers: bool,
    /// `buffer_compress_percentage`.
    pub buffer_compress_percentage: Option<u32>,
    /// `buffer_compress_chunk` (default 512).
    pub buffer_compress_chunk: u64,
    /// `zero_buffers`.
    pub zero_buffers: bool,
    /// `buffer_pattern`: the bytes (at most 512) repeated through write buffers.
    pub buffer_pattern: Option<Vec<u8>>,
    /// `dedupe_percentage` (0 to 100, default 0): writes whose buffer repeats another.
    pub dedupe_percentage: u32,
    /// `dedupe_mode` (default repeat).
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage` (default 5): the working set, in percent of `size`.
    pub dedupe_working_set_percentage: u32,
    /// `dedupe_global`: the working set is shared by every job that sets it.
    pub dedupe_global: bool,

    /// `flow_id` (default 0): the jobs whose `flow` weights are kept in proportion.
    pub flow_id: u32,
    /// `flow` (0 to 1000, default 0: no flow control): this job's weight.
    pub flow: u32,
    /// `flow_sleep` in microseconds (default 0): how long a job held back waits, once its
    /// I/O in flight has completed, before it tries again (0: it tries again at once).
    pub flow_sleep_us: u64,

    /// `steadystate` (`ss`), inert (None) until `ss_dur` > 0.
    pub steadystate: Option<SteadyState>,

    /// `write_bw_log`: the prefix (a bare flag: the job name).
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_hist_log: Option<String>,
    /// `log_avg_msec` (default 0: every I/O).
    pub log_avg_msec: u32,
    /// `log_offset`.
    pub log_offset: bool,
    /// `per_job_logs` (default true).
    pub per_job_logs: bool,
    /// `bwavgtime` / `iopsavgtime` as written (fio: the bandwidth and IOPS logs' window is
    /// the smaller of it and `log_avg_msec`).
    pub bw_avg_time: Option<u32>,
    pub iops_avg_time: Option<u32>,
    /// `log_unix_epoch` or `log_alternate_epoch` (on CLOCK_REALTIME, fio's default): the
    /// logs' times are Unix milliseconds.
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,

    /// `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`: fio keeps no
    /// total, completion or submission latency, no per-I/O bandwidth (`gtod_reduce=1` sets
    /// all four).
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    /// `gtod_reduce`.
    pub gtod_reduce: bool,
    /// `stats` (default true): fio keeps statistics for the job.
    pub stats: bool,

    /// `thread` (fio: threads instead of processes; perflab always uses threads).
    pub thread: bool,
    /// `clat_percentiles` (default true).
    pub clat_percentiles: bool,
    /// `lat_percentiles` (default false).
    pub lat_percentiles: bool,
    /// `slat_percentiles` (default false).
    pub slat_percentiles: bool,
    /// `percentile_list` (default fio's 17 points; at most 20).
    pub percentile_list: Vec<f64>,
    /// `unified_rw_reporting`: none (default), mixed or both (0, 1, 2 are the same).
    pub unified_rw_reporting: String,
    /// `kb_base` (1024 default, or 1000).
    pub kb_base: u64,

    // Set while reading: which of a pair of options came last, for fio's rules.
    pub(crate) ss_criterion: (SsCriterion, f64, bool),
    pub(crate) ss_dur: Duration,
    pub(crate) ss_ramp: Duration,
    pub(crate) ss_interval: Duration,
    pub(crate) iodepth_batch_complete_max_set: bool,
    pub(crate) iodepth_low_set: bool,
    /// Whether `refill_buffers`, `scramble_buffers`, `zero_buffers` were written (fio's
    /// `fio_option_is_set`): fio's rules for the defaults they imply need it.
    pub(crate) refill_buffers_set: bool,
    pub(crate) scramble_buffers_set: bool,
    pub(crate) zero_buffers_set: bool,
    /// fio's `TD_F_COMPRESS`: `buffer_compress_percentage` or `dedupe_percentage` was
    /// written (even as 0), which turns `scramble_buffers` off.
    pub(crate) compress_written: bool,
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl Default for FioJob {
    fn default() -> Self {
        FioJob {
            name: String::new(),
            at: Origin {
                file: PathBuf::new(),
                line: 0,
            },
            description: None,
            group: 0,
            stonewall: false,
            new_group: false,
            wait_for: None,
            group_reporting: false,
            options: Vec::new(),
            rw: FioRw::Read,
            rw_modifier: None,
            rw_sequencer: Sequencer::Sequential,
            bs: [4096, 4096],
            bs_trim: 4096,
            bsrange: None,
            bssplit: None,
            blockalign: None,
            rwmixread: 50,
            percentage_random: [100, 100],
            distribution: FioDistribution::Random,
            norandommap: false,
            randrepeat: true,
            randseed: None,
            random_generator: "tausworthe".into(),
            filenames: Vec::new(),
            directory: Vec::new(),
            filename_format: "$jobname.$jobnum.$filenum".into(),
            nrfiles: 1,
            unique_filename: true,
            size: None,
            filesize: None,
            io_size: None,
            offset: None,
            offset_increment: 0,
            offset_increment_percent: 0,
            fill_device: false,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: (Duration::ZERO, Duration::ZERO),
            loops: 1,
            number_ios: None,
            exitall: false,
            exit_what: ExitWhat::Group,
            rate: [None; 2],
            rate_iops: [None; 2],
            rate_min: [None; 2],
            rate_iops_min: [None; 2],
            ratecycle: 1000,
            rate_process: RateProcess::Linear,
            thinktime: Duration::ZERO,
            thinktime_blocks: 1,
            thinktime_spin: Duration::ZERO,
            ioengine: FioEngine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 1,
            direct: false,
            invalidate: true,
            sync: SyncIo::None,
            fsync: 0,
            fdatasync: 0,
            fsync_on_close: false,
            end_fsync: false,
            numjobs: 1,
            unlink: false,
            verify: None,
            do_verify: true,
            verify_fatal: false,
            verify_dump: false,
            buffers: Buffers::Random,
            refill_buffers: false,
            scramble_buffers: true,
            buffer_compress_percentage: None,
            buffer_compress_chunk: 512,
            zero_buffers: false,
            buffer_pattern: None,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
            flow_id: 0,
            flow: 0,
            flow_sleep_us: 0,
            steadystate: None,
            write_bw_log: None,
            write_lat_log: None,
            write_iops_log: None,
            write_hist_log: None,
            log_avg_msec: 0,
            log_offset: false,
            per_job_logs: true,
            bw_avg_time: None,
            iops_avg_time: None,
            log_unix_epoch: false,
            log_alternate_epoch: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            gtod_reduce: false,
            stats: true,
            thread: false,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            unified_rw_reporting: "none".into(),
            kb_base: 1024,
            ss_criterion: (SsCriterion::IopsSlope, 0.01, true),
            ss_dur: Duration::ZERO,
            ss_ramp: Duration::ZERO,
            ss_interval: Duration::from_secs(1),
            iodepth_batch_complete_max_set: false,
            iodepth_low_set: false,
            refill_buffers_set: false,
            scramble_buffers_set: false,
            zero_buffers_set: false,
            compress_written: false,
        }
    }
}

impl FioJob {
    /// The files clone `clone` (0-based, < numjobs) uses. With `filename`, every clone
    /// shares the named files (each after its `directory`, absolute or not: fio's `add_file`
    /// writes the directory and a `/` before every name, so `directory=/a` with
    /// `filename=/b` is `/a//b`); without,
    /// `nrfiles` names from `filename_format` with `$jobname`, `$jobnum` (the clone),
    /// `$filenum` (0-based) and `$clientuid` (0: perflab runs no fio clients) expanded,
    /// in directory entry `clone mod len` as fio's `set_name_idx`.
    pub fn files_of(&self, clone: u32) -> Vec<PathBuf> {
        let dir = (!self.directory.is_empty())
            .then(|| &self.directory[clone as usize % self.directory.len()]);
        let place = |p: PathBuf| match dir {
            Some(d) => PathBuf::from(format!("{}/{}", d.display(), p.display())),
            None => p,
        };
        if !self.filenames.is_empty() {
            return self.filenames.iter().cloned().map(place).collect();
        }
        (0..self.nrfiles)
            .map(|n| {
                let name = self
                    .filename_format
                    .replace("$jobname", &self.name)
                    .replace("$jobnum", &clone.to_string())
                    .replace("$filenum", &n.to_string())
                    .replace("$clientuid", "0");
                place(PathBuf::from(name))
            })
            .collect()
    }

    /// Rules that need the whole section (fio's `fixup_options` and friends): returns the
    /// option to blame and why.
    pub(crate) fn check(&mut self) -> Result<(), (Option<String>, String)> {
        if !self.iodepth_batch_complete_max_set {
            self.iodepth_batch_complete_max = self.iodepth;
        }
        if !self.iodepth_low_set {
            self.iodepth_low = self.iodepth;
        }
        if self.iodepth_batch_complete_max < self.iodepth_batch_complete_min {
            return Err((
                Some("iodepth_batch_complete_max".into()),
                format!(
                    "{} is below iodepth_batch_complete_min {}",
                    self.iodepth_batch_complete_max, self.iodepth_batch_complete_min
                ),
            ));
        }
        // A bare log flag means the job's own name (its `name=` included), as fio's
        // make_log_name.
        for log in [
            &mut self.write_bw_log,
            &mut self.write_lat_log,
            &mut self.write_iops_log,
            &mut self.write_hist_log,
        ] {
            if log.as_deref() == Some("") {
                *log = Some(self.name.clone());
            }
        }
        if self.ss_dur > Duration::ZERO {
            // fio (init.c fixup_options) rejects these jobs.
            if self.ss_interval < Duration::from_secs(1) {
                return Err((
                    Some("ss_interval".into()),
                    "must be at least 1s, as fio requires".into(),
                ));
            }
            let (dur, every) = (self.ss_dur.as_micros(), self.ss_interval.as_micros());
            if dur % every != 0 || dur <= every {
                return Err((
                    Some("ss_dur".into()),
                    format!(
                        "{:?} is not a multiple of ss_interval {:?} above it, as fio requires; give a whole number (2 or more) of intervals",
                        self.ss_dur, self.ss_interval
                    ),
                ));
            }
            let (criterion, limit, percent) = self.ss_criterion;
            self.steadystate = Some(SteadyState {
                criterion,
                limit,
                percent,
                dur: self.ss_dur,
                ramp: self.ss_ramp,
                interval: self.ss_interval,
            });
        } else {
            self.steadystate = None;
        }
        // fio (init.c fixup_options): "time_based requires a runtime" is logged and
        // time_based dropped; the job then runs until its I/O is done.
        if self.time_based && self.runtime.is_none() {
            self.time_based = false;
        }
        if self.filenames.is_empty()
            && self.size.is_none()
            && self.filesize.is_none()
            && self.io_size.is_none()
            && !self.fill_device
        {
            return Err((
                Some("size".into()),
                "no size and no filename: fio needs a size for the files it creates; add size="
                    .into(),
            ));
        }
        Ok(())
    }
}
