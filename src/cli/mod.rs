//! The command line: the generic commands' clap definitions, and the whole command line put
//! together with each workload kind's subcommand from the registry
//! (`crate::workload::kind::KINDS`). Values stay text here (sweeps and units are read by
//! `crate::vocab`), so that every check and every error message lives in one place.

use crate::workload::kind::{KINDS, Kind, by_command};
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// A command line, parsed.
pub struct Invocation {
    pub global: GlobalArgs,
    pub what: What,
    /// How peers' flags on the line were read, where that may surprise (`--size 64MB`
    /// is 64 MiB; memtier's `-c` is per thread): for stderr before the run.
    pub notes: Vec<String>,
}

/// What a command line asks for: a generic command, or a kind's (its arguments still as
/// clap's matches, which the kind reads).
pub enum What {
    Generic(Command),
    Kind(&'static dyn Kind, ArgMatches),
}

/// The whole command line: the generic commands, with `run` first and each kind's subcommand
/// after it in the registry's order.
pub fn command() -> clap::Command {
    // `--version` says how the binary was built; `-V` stays the one-line version.
    let mut cmd = Cli::command().long_version(crate::record::ToolInfo::this_build().describe());
    let generic: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for kind in KINDS {
        let mut sub = with_live(kind.command());
        if !kind.peers().is_empty() {
            sub = sub.after_help(crate::workload::peer::help(kind.peers()));
        }
        cmd = cmd.subcommand(sub);
    }
    let order = std::iter::once("run".to_string())
        .chain(KINDS.iter().map(|k| k.name().to_string()))
        .chain(generic.into_iter().filter(|n| n != "run"));
    for (i, name) in order.enumerate() {
        cmd = cmd.mut_subcommand(name, |c| c.display_order(i));
    }
    for name in RUNNING_GENERIC {
        cmd = cmd.mut_subcommand(name, with_live);
    }
    cmd
}

/// The generic commands that run something, and so take the live outputs' options (every
/// kind's command takes them too).
const RUNNING_GENERIC: [&str; 2] = ["run", "study"];

/// A command that runs something, with the live outputs' options (`--live`,
/// `--metrics-listen`, `--hlog`, `--progress`).
fn with_live(c: clap::Command) -> clap::Command {
    <crate::live::LiveArgs as clap::Args>::augment_args(c)
}

/// The manual page in roff: clap_mangen's page of the top command (name, synopsis,
/// description, global options, the list of commands), then a section per command with
/// its options, so one page holds the whole command line.
pub fn man_page() -> String {
    let cmd = command();
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    // The package's version only: the page stays the same from commit to commit.
    let _ = clap_mangen::Man::new(cmd.clone().long_version(None)).render(&mut out);
    let mut page = String::from_utf8_lossy(&out).into_owned();
    let mut subs: Vec<&clap::Command> = cmd.get_subcommands().collect();
    subs.sort_by_key(|c| c.get_display_order());
    for sub in subs {
        page.push_str(&format!(
            ".SH \"PERFLAB {}\"\n",
            sub.get_name().to_uppercase()
        ));
        page.push_str(&format!(".B perflab {}\n", sub.get_name()));
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            page.push_str(&format!(".PP\n{}\n", roff_text(&about.to_string())));
        }
        for arg in sub
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_global_set())
        {
            page.push_str(".TP\n");
            let mut names = Vec::new();
            if let Some(l) = arg.get_long() {
                names.push(format!("\\fB\\-\\-{}\\fR", l.replace('-', "\\-")));
            }
            if let Some(s) = arg.get_short() {
                names.push(format!("\\fB\\-{s}\\fR"));
            }
            let value = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| format!(" \\fI{}\\fR", roff_text(v)))
                .filter(|_| arg.get_action().takes_values());
            if names.is_empty() {
                names.push(format!("\\fI{}\\fR", roff_text(arg.get_id().as_str())));
            }
            page.push_str(&format!(
                "{}{}\n",
                names.join(", "),
                value.unwrap_or_default()
            ));
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string());
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let mut text = help.unwrap_or_default();
            if !defaults.is_empty() && arg.get_action().takes_values() {
                text.push_str(&format!(" [default: {}]", defaults.join(",")));
            }
            page.push_str(&roff_text(&text));
            page.push('\n');
        }
    }
    page
}

/// Text for a roff page: backslashes escaped, no line starting with a control character.
fn roff_text(text: &str) -> String {
    text.replace('\\', "\\e")
        .lines()
        .map(|l| match l.starts_with(['.', '\'']) {
            true => format!("\\&{l}"),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses a command line (the program's name first).
pub fn parse(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
) -> Result<Invocation, clap::Error> {
    let (args, notes) = in_own_words(args.into_iter().map(Into::into).collect())?;
    let matches = command().try_get_matches_from(args)?;
    let mut global = GlobalArgs::from_arg_matches(&matches)?;
    if let Some((name, sub)) = matches.subcommand()
        && (by_command(name).is_some() || RUNNING_GENERIC.contains(&name))
    {
        global.live = crate::live::LiveArgs::from_arg_matches(sub)?;
    }
    if let Some((name, sub)) = matches.subcommand()
        && let Some(kind) = by_command(name)
    {
        return Ok(Invocation {
            global,
            what: What::Kind(kind, sub.clone()),
            notes,
        });
    }
    Ok(Invocation {
        global,
        what: What::Generic(Command::from_arg_matches(&matches)?),
        notes,
    })
}

/// The command line with a kind's peers' flags (fio's, pgbench's, ...) read into perflab's
/// own (`crate::workload::peer`), and the notes on that reading.
fn in_own_words(args: Vec<OsString>) -> Result<(Vec<OsString>, Vec<String>), clap::Error> {
    let top = Cli::command();
    // The kind's name: the first word after the program's that is neither a global option
    // nor its value.
    let mut i = 1;
    while let Some(word) = args.get(i).and_then(|w| w.to_str()) {
        if !word.starts_with('-') {
            break;
        }
        let takes_value = top.get_arguments().any(|a| {
            a.get_long().is_some_and(|l| word == format!("--{l}")) && a.get_action().takes_values()
        });
        i += if takes_value { 2 } else { 1 };
    }
    let kind = args
        .get(i)
        .and_then(|w| w.to_str())
        .and_then(by_command)
        .filter(|k| !k.peers().is_empty());
    let (Some(kind), Some(rest)) = (kind, args.get(i + 1..)) else {
        return Ok((args, Vec::new()));
    };
    // Words that are not text are left to clap, which says so.
    let Some(words) = rest
        .iter()
        .map(|w| w.to_str().map(String::from))
        .collect::<Option<Vec<String>>>()
    else {
        return Ok((args, Vec::new()));
    };
    let mut own = crate::workload::peer::OwnFlags::of(&with_live(kind.command()));
    own.add(&top);
    let read = crate::workload::peer::translate(kind.peers(), &own, &words)
        .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
    let mut out = args[..=i].to_vec();
    out.extend(read.args.into_iter().map(OsString::from));
    Ok((out, read.notes))
}

/// perflab: curves of throughput and response time for a machine's memory, CPU and storage
/// (and, coming, databases and caches), archived and comparable.
#[derive(Debug, Parser)]
#[command(name = "perflab", version, about, max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Results folder (default: $PERFLAB_RESULTS, else $XDG_DATA_HOME/perflab, else ~/.local/share/perflab)
    #[arg(long, global = true, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Print the record (or listing) as JSON on stdout instead of tables
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress display on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// A team's shared results store on PostgreSQL (default: $PERFLAB_SHARED): every run is
    /// sent there after it is saved here, and the commands that read runs read it
    #[arg(long, global = true, value_name = "URL")]
    pub shared: Option<String>,
    /// Read this machine's results folder only, even with a shared store set
    #[arg(long, global = true)]
    pub local: bool,
    /// A label for the runs, e.g. --label commit=abc123 --label branch=main (repeatable):
    /// in the record and the shared store, for 'perflab trend --where'
    #[arg(long = "label", global = true, value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// The live outputs: options of the commands that run (`with_live`), carried here so
    /// every layer finds them with the other options of the invocation.
    #[arg(skip)]
    pub live: crate::live::LiveArgs,
}

impl GlobalArgs {
    /// The shared store's address: `--shared`, else `$PERFLAB_SHARED`.
    pub fn shared_address(&self) -> Option<String> {
        crate::shared_store::address_given(self.shared.as_deref())
    }

    /// The address the commands that read runs use: none under `--local`.
    pub fn shared_to_read(&self) -> Option<String> {
        self.shared_address().filter(|_| !self.local)
    }
}

/// `KEY=VALUE`: a key as a tag is named (a letter first; letters, digits, '-', '_', '.'),
/// a value of at most 200 characters.
fn parse_label(text: &str) -> Result<(String, String), String> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(format!(
            "{text:?}: give a label as KEY=VALUE, e.g. commit=abc123"
        ));
    };
    if let Some(why) = crate::archive::tags::invalid_name(key) {
        return Err(format!(
            "{key:?} cannot be a label's name: {}",
            why.replace("a tag", "a name")
        ));
    }
    if value.is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control) {
        return Err(format!(
            "label {key}: give a value of 1 to 200 printable characters"
        ));
    }
    Ok((key.to_string(), value.to_string()))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite: by default the machine balance sheet (memory, CPU and storage); or a
    /// study file (FILE.toml, as 'perflab study FILE.toml')
    Run(SuiteArgs),
    /// List the built-in studies, or run one (or a study file): a seed report's experiments
    /// as one command, with the paper's figures beside this machine's
    Study(StudyArgs),
    /// List the archived runs (or the shared store's)
    Runs(RunsArgs),
    /// Show an archived run as tables
    Show(ShowArgs),
    /// Export an archived run
    Export(ExportArgs),
    /// Write a report of archived runs: one self-contained HTML file (or Markdown with SVG
    /// files) with curves, response-time hockey sticks, time series, latency spectra, tables
    /// and the disclosure
    Report(ReportArgs),
    /// Compare runs step by step: ratios with 95% intervals and verdicts (faster, slower,
    /// equivalent, inconclusive), and every difference in their disclosure
    Compare(CompareArgs),
    /// Name a run, e.g. as a baseline ('perflab compare baseline last')
    Tag(TagArgs),
    /// Bring records made on other machines into the archive (run.json files, or folders
    /// holding them, such as another results folder), for compare, report and landscapes
    Import(ImportArgs),
    /// Print the disclosure of this machine
    Sysinfo,
    /// List the targets perflab can measure
    Targets,
    /// Print a shell's completion script, e.g. 'perflab completions bash >
    /// /etc/bash_completion.d/perflab' (zsh: a _perflab file on $fpath; fish:
    /// ~/.config/fish/completions/perflab.fish)
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. 'perflab man > /usr/local/share/man/man1/perflab.1'
    Man,
    /// The archive in a browser, read-only: the runs to sort, filter and pick, each run's
    /// report, comparisons, the landscape, and runs in progress with their charts filling in
    Serve(ServeArgs),
    /// The shared results store: 'init' makes or migrates its tables, 'sync' sends the
    /// runs waiting in this machine's queue
    Shared(SharedArgs),
    /// One figure across runs: each run's value with its interval, and the verdict between
    /// neighbours (where a build changed it)
    Trend(TrendArgs),
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Only the newest N runs (default: all of a results folder, the newest 50 of a shared
    /// store)
    #[arg(long, short = 'n', value_name = "N")]
    pub newest: Option<usize>,
    /// Only the runs of this host
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
}

#[derive(Debug, Args)]
pub struct SharedArgs {
    #[command(subcommand)]
    pub action: SharedAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum SharedAction {
    /// Make the store's tables and roles, or bring them to this perflab's schema (as the
    /// store's owner)
    Init,
    /// Send the runs queued on this machine (those the store could not take when they ended)
    Sync,
}

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The figure: a headline figure's name, e.g. ops_per_sec or bytes_per_sec
    #[arg(value_name = "FIGURE")]
    pub figure: String,
    /// Only runs of this workload kind (null, io, oltp ...)
    #[arg(long, value_name = "KIND")]
    pub workload: Option<String>,
    /// Only runs with this label (repeatable), e.g. --where branch=main
    #[arg(long = "where", value_name = "LABEL=VALUE", value_parser = parse_label)]
    pub filters: Vec<(String, String)>,
    /// One point per value of a label (e.g. commit) or per day, the runs in it pooled
    #[arg(long, value_name = "LABEL|day")]
    pub by: Option<String>,
    /// The newest N runs at most
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10_000)]
    pub newest: usize,
    /// Ratios within this band are "equivalent" (default 2%)
    #[arg(long, value_name = "PCT", default_value = "2%")]
    pub noise: String,
    /// Also write the trend as an HTML chart to FILE (a new file)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen: HOST:PORT (port 0 picks a free one), or :PORT for every interface
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells `perflab completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// run.json files, or folders searched for them (another machine's results folder)
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// The study invocation (a run of it, e.g. last) whose leg the imported record is: a leg
    /// run elsewhere ('perflab study' names its command) takes its place in the study's report
    #[arg(long, value_name = "RUN", requires = "leg")]
    pub study: Option<String>,
    /// The leg of --study the record is
    #[arg(long, value_name = "NAME", requires = "study")]
    pub leg: Option<String>,
}

#[derive(Debug, Args)]
pub struct StudyArgs {
    /// A built-in study (see 'perflab study') or a study file (a path ending in .toml);
    /// without it, the list of built-in studies
    #[arg(value_name = "STUDY")]
    pub study: Option<String>,
    /// Short legs (each study's own quick settings): a study within about five minutes
    #[arg(long)]
    pub quick: bool,
    /// Run only this leg (repeatable)
    #[arg(long, value_name = "NAME")]
    pub leg: Vec<String>,
    /// Print each leg as the perflab command line it runs, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the study as a file to edit ('perflab study NAME --print > mine.toml')
    #[arg(long)]
    pub print: bool,
    /// Skip the legs whose runs completed in the last run of this study with the same file
    /// and flags
    #[arg(long)]
    pub resume: bool,
    /// Exit with code 1 when a shape check fails (for CI)
    #[arg(long)]
    pub check_shapes: bool,
    /// Directory for the storage legs' files ({io_path}; default: the results folder)
    #[arg(long, value_name = "DIR")]
    pub io_path: Option<PathBuf>,
    /// Flags for the legs, as their commands take them (--duration 10s, --target URL): each
    /// applies to the legs whose command has it, over the study's own
    #[arg(
        value_name = "FLAGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..
    )]
    pub flags: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Suite name, or a study file (a path ending in .toml)
    #[arg(default_value = "default", value_name = "SUITE")]
    pub suite: String,
    /// Short steps: the whole suite within about a minute
    #[arg(long)]
    pub quick: bool,
    /// Directory for the storage tests' temporary files (default: the results folder)
    #[arg(long, value_name = "DIR")]
    pub io_path: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id, a unique prefix of one, a tag, `last`, or `last@HOST` (a shared store: that
    /// host's newest; `last` is this machine's)
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id, a unique prefix of one, a tag, `last`, or `last@HOST` (a shared store: that
    /// host's newest; `last` is this machine's)
    #[arg(value_name = "RUN", default_value = "last")]
    pub run: String,
    /// json (the record), csv (a row per trial), csv-intervals (a row per interval), or
    /// one of the run's kind: fio-json and fio-jsonplus for io runs
    #[arg(long, short = 'f', value_name = "FORMAT", default_value = "json")]
    pub format: String,
    /// Write to FILE instead of stdout (refuses to replace a file that exists)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Runs: ids, unique prefixes, tags or `last`
    #[arg(value_name = "RUN", default_value = "last")]
    pub runs: Vec<String>,
    /// Every run of the suite invocation that RUN belongs to (e.g. the balance sheet of
    /// 'perflab run'), in order
    #[arg(long)]
    pub suite: bool,
    /// The study that RUN belongs to ('perflab report --study last'): the paper's tables
    /// and figures beside this machine's, the shape checks, then every leg's run
    #[arg(long, conflicts_with = "suite")]
    pub study: bool,
    /// Write to FILE (default: <results>/reports/<run>.html; refuses to replace a file)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html (one self-contained file) or md (Markdown; its SVG charts go in FILE's folder,
    /// in <name>-files/); default from the extension of --output, else html
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<ReportFormat>,
    /// Start with the landscape: the runs ranked by their best headline figure, with the
    /// settings that differ between them
    #[arg(long)]
    pub landscape: bool,
    /// Mark the highest throughput that meets a response-time objective, e.g. p99<10ms
    #[arg(long, value_name = "FIGURE<TIME")]
    pub slo: Option<String>,
    /// The report's title
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Md,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline, then one or more candidates: ids, unique prefixes, tags, `last`, or
    /// paths to run.json files (records from another machine)
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<String>,
    /// Ratios within this band are "equivalent" (default 2%)
    #[arg(long, value_name = "PCT", default_value = "2%")]
    pub noise: String,
    /// Set the headline ratio against a naive expectation: `clock` (the CPUs' clock ratio)
    /// or a factor such as 2x
    #[arg(long, value_name = "clock|FACTOR")]
    pub expect: Option<String>,
    /// Exit with code 3 when any figure of a candidate is slower beyond the noise
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOn>,
    /// Also write the comparison as a report (HTML, or Markdown by extension)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Regression,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    /// The run: an id, a unique prefix, `last` or another tag
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The name: starts with a letter; letters, digits, '-', '_', '.'
    #[arg(value_name = "NAME")]
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
