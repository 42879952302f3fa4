//! One path for every run. A kind's own command (`perflab oltp ...`), an entry of a suite
//! (`perflab run`) and a leg of a study (`perflab study`) are carried out the same way: the
//! command line is read by the command line's parser, its kind carries it out
//! ([`Kind::execute`]: a prepare, a cleanup, one run or several), and every run the kind asks
//! for goes through a [`Launcher`], the kind's [`Host`]:
//!
//! ```text
//! notes on how the options were read ─► run::run (the record saved after every step)
//!   ─► the record shown (a kind's own command) or kept for the summary (a suite, a study)
//!   ─► the one exit rule: workload::kind::failure_of (a step that failed, the kind's checks)
//! ```
//!
//! A suite or a study runs its entries one after the other through [`Launcher::entry`]; a
//! [`Tally`] keeps what they came to: an entry that fails is named and the rest still run,
//! an interruption stops them, and the command exits 1 at the end naming every entry that
//! failed. An entry that cannot run here is the caller's to list: it never reaches a launcher.
//!
//! - [`watch`]: the progress display and the live outputs a command's runs report to.

pub mod watch;

use crate::archive::Archive;
use crate::cli::{GlobalArgs, What};
use crate::env::Environment;
use crate::error::AppError;
use crate::record::{RunRecord, StudyRef};
use crate::run::{self, RunError, RunOptions, interrupt};
use crate::ui::output::print;
use crate::workload::RunSpec;
use crate::workload::kind::{Host, Kind, failure_of};
use clap::ArgMatches;
use std::cell::{OnceCell, RefCell};
pub use watch::Watch;

/// Carries out a kind's work and every run it asks for; see the module's documentation.
pub struct Launcher<'a> {
    global: &'a GlobalArgs,
    /// Opened at the first run, so that a command that only prepares creates no results folder.
    archive: OnceCell<Archive>,
    /// The one watch of a suite's or a study's runs. A kind's own command opens one per run
    /// instead, since its records are printed between its runs (a scan's ceiling, then its
    /// engine) and the progress bar must be gone by then.
    shared: Option<Watch>,
    options: RunOptions,
    /// Print each record as its run ends (a kind's own command); a suite or a study prints
    /// its summary at the end instead.
    show: bool,
    /// Every run this launcher made, failed ones too, in order.
    runs: RefCell<Vec<RunRecord>>,
}

/// What one entry of a suite or a study came to.
pub struct Entry {
    /// The runs it made (a scan's native ceiling and its engine; none when it was refused).
    pub records: Vec<RunRecord>,
    pub result: Result<(), AppError>,
}

impl<'a> Launcher<'a> {
    /// For a kind's own command: its records printed as they end, the command line as typed.
    pub fn command(global: &'a GlobalArgs) -> Launcher<'a> {
        Launcher {
            global,
            archive: OnceCell::new(),
            shared: None,
            options: RunOptions {
                command: command_line(),
                labels: global.labels.iter().cloned().collect(),
                ..Default::default()
            },
            show: true,
            runs: RefCell::new(Vec::new()),
        }
    }

    /// For the entries of a suite or a study: one archive and one watch for all of them,
    /// `options` stamped on each run (the suite's name and invocation, or the study's).
    /// Fails in one line when an output cannot be had (a `--live` file that exists, a port
    /// in use), before anything runs.
    pub fn batch(
        global: &'a GlobalArgs,
        archive: Archive,
        mut options: RunOptions,
    ) -> Result<Launcher<'a>, AppError> {
        options.labels = global.labels.iter().cloned().collect();
        interrupt::install();
        let watch = Watch::open(global, &archive)?;
        Ok(Launcher {
            global,
            archive: OnceCell::from(archive),
            shared: Some(watch),
            options,
            show: false,
            runs: RefCell::new(Vec::new()),
        })
    }

    /// The archive the runs are saved in, opened on first use.
    pub fn archive(&self) -> Result<&Archive, AppError> {
        if let Some(a) = self.archive.get() {
            return Ok(a);
        }
        let opened = Archive::open(self.global.results.as_deref())?;
        Ok(self.archive.get_or_init(|| opened))
    }

    /// Tags `record` `name` in the shared store too, when one is set (a study's `STUDY.LEG`):
    /// `NAME.HOST` where another host's run holds the name. `None` without a shared store;
    /// else the tag set, or why not.
    pub fn shared_tag(&self, record: &RunRecord, name: &str) -> Option<Result<String, AppError>> {
        let address = self.global.shared_address()?;
        Some((|| {
            let address = crate::shared_store::Address::parse(&address)?;
            let store = crate::shared_store::SharedStore::open(
                &address,
                crate::shared_store::Access::Write,
            )?;
            Ok(store.tag_as_host(record, name)?)
        })())
    }

    /// A line above the progress display (on stderr; nothing under `--quiet`).
    pub fn line(&self, text: &str) {
        match &self.shared {
            Some(w) => w.line(text),
            None if !self.global.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    /// The runs are over: the progress display goes, the metrics endpoint gets its last
    /// scrape.
    pub fn finish(&self) {
        if let Some(w) = &self.shared {
            w.finish();
        }
    }

    /// Every run made so far, in order.
    pub fn runs(&self) -> Vec<RunRecord> {
        self.runs.borrow().clone()
    }

    /// Carries out a kind's command. Whatever a Ctrl-C cut short (a statement cancelled, a
    /// load abandoned) ends as an interruption, exit 130, not as the failure it caused.
    pub fn execute(&self, kind: &dyn Kind, args: &ArgMatches) -> Result<(), AppError> {
        kind.execute(args, self).map_err(|e| match e {
            AppError::Run(RunError::Interrupted { .. }) | AppError::Interrupted(_) => e,
            e if interrupt::token().is_set() => AppError::Interrupted(e.to_string()),
            e => e,
        })
    }

    /// Carries out one entry of a suite or a study: `argv` (after `perflab`) read as the
    /// user's command line would be, and run by its kind, stamped with `study` when it is a
    /// study's leg.
    pub fn entry(&mut self, argv: &[String], study: Option<StudyRef>) -> Entry {
        self.options.command = std::iter::once("perflab".to_string())
            .chain(argv.iter().cloned())
            .collect();
        self.options.study = study;
        let before = self.runs.borrow().len();
        let result = match parse(argv) {
            Ok((kind, args, notes)) => {
                say_notes(&notes);
                self.execute(kind, &args)
            }
            Err(e) => Err(e),
        };
        let records = self.runs.borrow()[before..].to_vec();
        Entry { records, result }
    }
}

impl Host for Launcher<'_> {
    fn run(&self, spec: &RunSpec, env: Environment, print: bool) -> Result<RunRecord, AppError> {
        let archive = self.archive()?;
        // A bad address is the user's to fix before anything runs; the store itself is
        // reached only after the run, so a run never waits on the network.
        let shared = self
            .global
            .shared_address()
            .map(|a| crate::shared_store::Address::parse(&a))
            .transpose()?;
        // How the options were read, where that may surprise (`64MB` is 64 MiB), before the run.
        say_notes(&crate::vocab::notes::take());
        interrupt::install();
        let own;
        let watch = match &self.shared {
            Some(w) => w,
            None => {
                own = Watch::open(self.global, archive)?;
                &own
            }
        };
        let result = run::run(spec, &env, archive, &self.options, &watch.observer());
        if self.shared.is_none() {
            watch.finish();
        }
        let saved = match &result {
            Ok(record) => Some(record.clone()),
            Err(RunError::Interrupted { id, .. } | RunError::Failed { id, .. }) => {
                archive.load(id).ok()
            }
            Err(RunError::Archive(_) | RunError::Power(_) | RunError::Refused(_)) => None,
        };
        if let Some(record) = saved {
            // The local copy is saved: now the shared store (rank 0 alone saves).
            if let Some(address) = &shared
                && crate::cluster::is_root()
            {
                crate::shared_store::queue::after_run(
                    archive,
                    address,
                    &record.id,
                    self.global.quiet,
                );
            }
            if print && self.show {
                show(self.global, &record)?;
            }
            self.runs.borrow_mut().push(record);
        }
        let record = result?;
        match failure_of(&record) {
            Some(why) => Err(AppError::Failed(why)),
            None => Ok(record),
        }
    }

    fn json(&self) -> bool {
        self.global.json
    }

    fn quiet(&self) -> bool {
        self.global.quiet
    }

    fn stop(&self) -> crate::stop::Stop {
        interrupt::install();
        interrupt::token()
    }
}

/// A kind's command line (after `perflab`), parsed as the user's would be: its kind, its
/// arguments, and the notes on how a peer's flags were read.
pub fn parse(argv: &[String]) -> Result<(&'static dyn Kind, ArgMatches, Vec<String>), AppError> {
    let cli = crate::cli::parse(std::iter::once("perflab".to_string()).chain(argv.iter().cloned()))
        .map_err(|e| AppError::Usage(clap_line(&e)))?;
    match cli.what {
        What::Kind(kind, args) => Ok((kind, args, cli.notes)),
        What::Generic(_) => Err(AppError::Usage(format!(
            "'{}' is not a workload command",
            argv.join(" ")
        ))),
    }
}

/// The first line of clap's error, without its `error: ` (clap's errors span several lines).
pub fn clap_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("bad usage")
        .trim_start_matches("error: ")
        .to_string()
}

fn say_notes(notes: &[String]) {
    // Under a launcher every rank read the same options: the first one speaks.
    if crate::env::launcher::launcher_rank() == 0 {
        for note in notes {
            eprintln!("perflab: note: {note}");
        }
    }
}

/// The record on stdout: tables, or JSON with `--json`.
pub fn show(g: &GlobalArgs, record: &RunRecord) -> Result<(), AppError> {
    // `--live -` gave stdout to the JSON lines: the tables are 'perflab show last' away.
    if g.live.live.as_deref() == Some("-") && !g.json {
        return Ok(());
    }
    if g.json {
        let text =
            serde_json::to_string_pretty(record).map_err(|e| AppError::Output(e.to_string()))?;
        print(&(text + "\n"))
    } else {
        print(&crate::ui::show::render(record))
    }
}

/// The command line as given, for the record, with any password in a URL replaced by `***`.
pub fn command_line() -> Vec<String> {
    crate::target::url::redact_command_line(&std::env::args().collect::<Vec<_>>())
}

/// What the entries of a suite or a study came to: each one that failed, named with why,
/// and whether something stopped them all.
#[derive(Debug, Default)]
pub struct Tally {
    /// What an entry is called in the messages: `leg`, `entry`.
    noun: &'static str,
    entries: usize,
    failed: Vec<(String, String)>,
    /// What stopped the entries: a Ctrl-C, or an archive (or power meter) that every later
    /// entry would fail on too.
    stopped: Option<AppError>,
}

/// Whether the next entry runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Stop,
}

impl Tally {
    pub fn new(noun: &'static str) -> Tally {
        Tally {
            noun,
            ..Tally::default()
        }
    }

    /// Notes how entry `name` ended, and whether the next one runs.
    pub fn add(&mut self, name: &str, result: Result<(), AppError>) -> Flow {
        self.entries += 1;
        let Err(e) = result else {
            return Flow::Next;
        };
        match e {
            AppError::Run(RunError::Interrupted { .. }) | AppError::Interrupted(_) => {
                self.stopped = Some(e);
                Flow::Stop
            }
            AppError::Archive(_)
            | AppError::Output(_)
            | AppError::Run(RunError::Archive(_) | RunError::Power(_)) => {
                self.stopped = Some(e);
                Flow::Stop
            }
            e => {
                self.failed.push((name.to_string(), e.to_string()));
                Flow::Next
            }
        }
    }

    /// The entries that failed, each with why.
    pub fn failed(&self) -> &[(String, String)] {
        &self.failed
    }

    /// The command's end: what stopped the entries, else exit 1 naming every entry that
    /// failed, else done.
    pub fn result(self) -> Result<(), AppError> {
        if let Some(e) = self.stopped {
            return Err(e);
        }
        match self.failed.as_slice() {
            [] => Ok(()),
            failed => Err(AppError::Failed(format!(
                "{} of {} {}s failed{}: {}",
                failed.len(),
                self.entries,
                self.noun,
                if failed.len() < self.entries {
                    " (the others ran)"
                } else {
                    ""
                },
                failed
                    .iter()
                    .map(|(name, why)| format!("{name}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_names_every_failed_entry_and_exits_1() {
        let mut t = Tally::new("leg");
        assert_eq!(t.add("force", Ok(())), Flow::Next);
        assert_eq!(
            t.add(
                "group",
                Err(AppError::Failed("books do not balance".into()))
            ),
            Flow::Next
        );
        assert_eq!(
            t.add(
                "ramp",
                Err(AppError::Usage("--path: no such folder".into()))
            ),
            Flow::Next
        );
        assert_eq!(t.failed().len(), 2);
        let e = t.result().unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.to_string(),
            "2 of 3 legs failed (the others ran): group: books do not balance; ramp: --path: no such folder"
        );
    }

    #[test]
    fn an_interruption_stops_the_entries_and_exits_130() {
        let mut t = Tally::new("entry");
        t.add("a", Err(AppError::Failed("x".into())));
        assert_eq!(
            t.add("b", Err(AppError::Interrupted("loading".into()))),
            Flow::Stop
        );
        assert_eq!(t.result().unwrap_err().exit_code(), 130);
        assert!(Tally::new("entry").result().is_ok());
    }

    #[test]
    fn a_line_that_is_not_a_workload_is_refused_in_one_line() {
        let e = parse(&["runs".to_string()]).err().expect("refused");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("not a workload command"), "{e}");
        let e = parse(&["null".to_string(), "--nonsense".to_string()])
            .err()
            .expect("refused");
        assert_eq!(e.exit_code(), 2);
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}
