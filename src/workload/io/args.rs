//! `perflab io`: its command-line arguments (clap), beside the shared ones.

use crate::workload::run_args::RunArgs;
use clap::{Args, ValueEnum};

/// Storage options, named as fio names them (docs/options.md maps each to its fio flag).
#[derive(Debug, Args)]
pub struct IoArgs {
    /// fio job files, run as `fio JOB.fio ...` runs them: each group of jobs one step, the
    /// jobs of a group at once, each with its own figures (docs/options.md says what is read)
    #[arg(value_name = "JOB.fio")]
    pub job_files: Vec<String>,
    /// A fio command line's jobs as job-file text (made by the fio dialect's reading, not
    /// typed)
    #[arg(long, hide = true, value_name = "TEXT")]
    pub fio_job: Option<String>,
    /// With job files: print the plan (groups, jobs, files, how each ends) and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// fio's: `json` or `json+` prints fio's JSON of the run on stdout (fio-plot and fio's
    /// own scripts read it); `normal` is perflab's tables. perflab's record is --json
    #[arg(long, value_name = "FORMAT", value_parser = ["normal", "json", "json+"])]
    pub output_format: Option<String>,
    /// Where the I/O goes: a directory (perflab creates its files in it), an existing file, or
    /// a block device; repeat for several volumes (fio --filename, --directory)
    #[arg(long, short = 'p', value_name = "PATH", default_value = ".")]
    pub path: Vec<String>,
    /// `test` (fio-style) or `surface` (IOzone's file size x record size, buffered)
    #[arg(long, value_enum, default_value = "test")]
    pub mode: IoMode,
    /// Pattern: read, write, randread, randwrite, rw, randrw; a list sweeps (fio --rw)
    #[arg(long, value_name = "LIST", default_value = "randread")]
    pub rw: String,
    /// Block size; sweeps. In surface mode: the record sizes (default 4k..16m:x2) (fio --bs)
    #[arg(long, short = 'b', value_name = "SIZE|SWEEP")]
    pub bs: Option<String>,
    /// Weighted block sizes, e.g. 4k/60:64k/40 (fio --bssplit)
    #[arg(long, value_name = "SPLIT", conflicts_with = "bs")]
    pub bssplit: Option<String>,
    /// Percent of reads in rw and randrw; sweeps (fio --rwmixread)
    #[arg(
        long,
        visible_alias = "rwmixread",
        value_name = "PCT|SWEEP",
        default_value = "50"
    )]
    pub rwmix: String,
    /// I/Os in flight per file; sweeps (fio --iodepth)
    #[arg(long, value_name = "N|SWEEP", default_value = "1")]
    pub iodepth: String,
    /// Files (volumes), each with its own queue, spread over the paths; sweeps (fio --nrfiles)
    #[arg(long, value_name = "N|SWEEP", default_value = "1")]
    pub files: String,
    /// Bytes of each file (or device region) the test touches (default 1g, or the whole
    /// device). In surface mode: the file sizes (default 64k up to 2x RAM) (fio --size)
    #[arg(long, short = 's', value_name = "SIZE")]
    pub size: Option<String>,
    /// Where the region starts in each file or device (fio --offset)
    #[arg(long, value_name = "SIZE", default_value = "0")]
    pub offset: String,
    /// 1: O_DIRECT, bypassing the page cache (the default for characterizing storage);
    /// 0: buffered. A bare --direct means 1, as in fio (fio --direct)
    #[arg(
        long,
        value_name = "0|1",
        default_value = "1",
        num_args = 0..=1,
        default_missing_value = "1"
    )]
    pub direct: String,
    /// fsync after every N writes per file (fio --fsync)
    #[arg(long, value_name = "N", default_value = "0")]
    pub fsync: String,
    /// fdatasync after every N writes per file (fio --fdatasync)
    #[arg(long, value_name = "N", default_value = "0", conflicts_with = "fsync")]
    pub fdatasync: String,
    /// Random offsets: uniform, zipf:THETA, pareto:H or hot:ACCESS%/DATA% (fio
    /// --random_distribution)
    #[arg(
        long,
        visible_alias = "random-distribution",
        value_name = "DIST",
        default_value = "uniform"
    )]
    pub distribution: String,
    /// io_uring, libaio (Linux native AIO) or sync (pread/pwrite); default io_uring where the
    /// kernel allows (fio --ioengine)
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Write the files in full before the test (always done for reads of new files)
    #[arg(long)]
    pub prefill: bool,
    /// Write self-checking blocks and check every read, then read back all written blocks
    /// (fio --verify)
    #[arg(long)]
    pub verify: bool,
    /// Keep the test files after the run (to reuse them: pass their directory as --path)
    #[arg(long)]
    pub keep: bool,
    /// Before the --files ramp, each volume (--path) alone with one file on it; then the ramp
    /// (default 1 to as many files as paths): Gray's "each disk alone, then the array"
    #[arg(long)]
    pub each_volume: bool,
    /// Surface mode: every record size for every file size (IOzone -z); by default records
    /// under 64 KiB are skipped for files over 32 MiB, as IOzone's automatic mode does
    #[arg(long)]
    pub all_records: bool,
    /// Reads come from the device though buffered: in surface mode the file is flushed and
    /// its cached pages dropped before each test, untimed (IOzone -U, which remounts the
    /// filesystem); in test mode each file's pages are dropped as a worker opens it and after
    /// each pass over it (fio's invalidate), so small files read like files larger than memory
    #[arg(long)]
    pub cold: bool,
    /// Allow writing to this device or foreign file, destroying what it holds
    #[arg(long, value_name = "PATH")]
    pub destroy_data: Option<String>,
    /// Find when each step's rate becomes steady: report the rate at the start and once steady
    /// (fio --steadystate)
    #[arg(long)]
    pub steady_state: bool,
    /// Steady state: length of the rolling window (fio --ss_dur)
    #[arg(
        long,
        value_name = "TIME",
        default_value = "10s",
        requires = "steady_state"
    )]
    pub ss_window: String,
    /// Steady state: most the rate may trend across the window, percent of its mean
    #[arg(
        long,
        value_name = "PCT",
        default_value = "10",
        requires = "steady_state"
    )]
    pub ss_slope: String,
    /// Steady state: widest the window's range may be, percent of its mean
    #[arg(
        long,
        value_name = "PCT",
        default_value = "20",
        requires = "steady_state"
    )]
    pub ss_spread: String,
    /// A file slower than this percent of the median file is flagged as a straggler
    #[arg(long, value_name = "PCT", default_value = "50")]
    pub straggler: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoMode {
    Test,
    Surface,
}
