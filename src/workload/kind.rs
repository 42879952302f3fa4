//! The registry of workload kinds: what the layers above need to know about a kind of
//! workload without naming it.
//!
//! Each kind lives in its folder and describes itself with a [`Kind`]; [`KINDS`] lists them,
//! one line each. The command line takes each kind's subcommand from it ([`Kind::command`]),
//! and the commands hand a kind's arguments back to it: for the run they stand for
//! ([`Kind::spec`], which `perflab run` uses to check a suite before running it) or to carry
//! out ([`Kind::execute`], which may prepare, clean up or run several specs through a
//! [`Host`]). The terminal and the reports look a record's kind up by its `workload` name
//! ([`by_name`], [`of`]) and ask it: which targets it measures (`perflab targets`), what its
//! workers are called (`copies`, `analysts`), what makes a finished run fail, and how its
//! records look (tables, findings, charts, its balance-sheet line), made of the shared parts
//! in `crate::present`.

use crate::analysis::curve::Axes;
use crate::env::Environment;
use crate::error::AppError;
use crate::present::breakdown::{self, TRANSACTIONS, Words};
use crate::present::{Figure, table::Table};
use crate::record::RunRecord;
use crate::stop::Stop;
use crate::target::TargetEntry;
use crate::workload::RunSpec;
use crate::workload::peer::Peer;
use clap::ArgMatches;

/// What a kind's command asks of the commands above it: a run, archived and shown as every
/// run is, and the user's global options.
pub trait Host {
    /// Runs `spec`, saves its record, prints it unless `print` is false (under `--json`,
    /// stdout holds one record), and applies the kind's exit rule ([`Kind::failure`]).
    fn run(&self, spec: &RunSpec, env: Environment, print: bool) -> Result<RunRecord, AppError>;
    /// `--json`: records on stdout as JSON.
    fn json(&self) -> bool;
    /// `--quiet`: no progress on stderr.
    fn quiet(&self) -> bool;
    /// The process's Ctrl-C token, watching from now on: for the work a command does outside
    /// a run (loading, dropping).
    fn stop(&self) -> Stop;
}

/// A way to write a kind's records, by name (`fio-json`).
pub struct RecordFormat {
    pub name: &'static str,
    pub about: &'static str,
    pub write: fn(&RunRecord, &mut dyn std::io::Write) -> std::io::Result<()>,
}

/// What a kind of workload tells the layers above it.
pub trait Kind: Sync {
    /// As in the command and the record's `workload` (`oltp`).
    fn name(&self) -> &'static str;
    /// Other `workload` names its records carry (IOzone's surface is `io_surface`).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// The systems it measures, for `perflab targets`.
    fn targets(&self) -> &'static [TargetEntry];
    /// The tools whose flags its command also reads, as their users type them
    /// ([`crate::workload::peer`]): fio's for io, pgbench's for oltp.
    fn peers(&self) -> &'static [&'static Peer] {
        &[]
    }
    /// What one worker is, as the user counts them: the runner's axis is `threads` for every
    /// kind, shown as `copies` for jobs and `analysts` for OLAP's queries.
    fn workers(&self) -> &'static str {
        "threads"
    }
    /// Which of its options raise the offered load, and which of those are concurrencies
    /// (`crate::analysis::curve::Axes`): by default its workers and an open loop's rate.
    fn axes(&self) -> Axes {
        Axes::WORKERS
    }
    /// The figures its records carry that the steps table leaves out, each because another
    /// table shows it (a jobs run's per-copy figures) or it says something only when it is
    /// not zero (trouble counted per client): [`Hidden`].
    fn hidden(&self) -> &'static [Hidden] {
        &[]
    }
    /// Why a finished run fails (exit 1), in one line naming the run, if it does: books that
    /// do not balance, mail lost, blocks that do not verify. A warning alone (a missed quality
    /// of service, a slow step) is a finding, not a failure.
    fn failure(&self, _record: &RunRecord) -> Option<String> {
        None
    }
    /// Its subcommand: what it does in one line and its arguments, the shared ones
    /// ([`crate::workload::run_args::RunArgs`]) flattened in.
    fn command(&self) -> clap::Command;
    /// The run the arguments stand for, read and checked as [`Kind::execute`] would, without
    /// running anything (it may read files and look at a server's tables); `None` when they
    /// ask for something other than a run (`prepare`, `cleanup`).
    fn spec(&self, args: &ArgMatches, env: &Environment) -> Result<Option<RunSpec>, AppError>;
    /// What must be done once rather than by every MPI rank, if the arguments ask for it (the
    /// prepare and cleanup of a shared database), named for the refusal.
    fn once_only(&self, _args: &ArgMatches) -> Option<&'static str> {
        None
    }
    /// Carries out the command: by default the run [`Kind::spec`] gives.
    fn execute(&self, args: &ArgMatches, host: &dyn Host) -> Result<(), AppError> {
        run_spec(self, args, host)
    }

    // How its records look: `perflab show` and the reports lay these out.

    /// What it calls its groups of ops and their rates in the breakdown tables.
    fn words(&self) -> Words {
        TRANSACTIONS
    }
    /// Its tables after the steps table, each with its title: by default the breakdowns by
    /// group, shard, rank, direction and device that have rows.
    fn tables(&self, record: &RunRecord) -> Vec<(String, Table)> {
        breakdowns(record, self.words())
    }
    /// Its own findings, before the shared ones (peak, sweet spot, scaling).
    fn findings(&self, _record: &RunRecord) -> Vec<String> {
        Vec::new()
    }
    /// The scaling finding in its own words, instead of the shared `scaling:` line.
    fn scaling(&self, _record: &RunRecord) -> Option<Vec<String>> {
        None
    }
    /// How much work a step is when neither a time nor a count of ops says it (jobs: one job
    /// per copy, or a batch), for the record's header line.
    fn describe_work(&self, _spec: &serde_json::Value) -> Option<String> {
        None
    }
    /// Its own charts in a report, after the shared ones.
    fn figures(&self, _record: &RunRecord) -> Vec<Figure> {
        Vec::new()
    }
    /// Its line in the balance sheet `perflab run` ends with, given the suite's other
    /// records; `None`: the shared line (its best headline figure).
    /// Formats of its records beside every record's (json, csv): `perflab export --format
    /// NAME` finds them here (fio's JSON for io runs).
    fn formats(&self) -> &'static [RecordFormat] {
        &[]
    }

    fn balance_line(&self, _record: &RunRecord, _suite: &[RunRecord]) -> Option<String> {
        None
    }
}

/// A figure the steps table leaves out, by the start or end of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// Always: another table shows it (`copy_`: a jobs run's table of copies).
    Prefix(&'static str),
    /// Unless some trial of the run has it above zero (`_per_client`: retries, reconnects).
    UnlessNonZero(&'static str),
}

impl Hidden {
    /// Whether figure `name` of `record` stays out of the steps table.
    pub fn hides(&self, name: &str, record: &RunRecord) -> bool {
        match self {
            Hidden::Prefix(p) => name.starts_with(p),
            Hidden::UnlessNonZero(suffix) => {
                name.ends_with(suffix)
                    && !record
                        .steps
                        .iter()
                        .flat_map(|s| &s.trials)
                        .any(|t| t.figures.get(name).is_some_and(|v| *v != 0.0))
            }
        }
    }
}

/// The load axes of a record's kind ([`Kind::axes`]); a kind this perflab does not know has
/// the default ones.
pub fn axes_of(record: &RunRecord) -> Axes {
    of(record).map_or(Axes::WORKERS, |k| k.axes())
}

/// Whether the steps table leaves figure `name` of `record` out ([`Kind::hidden`]).
pub fn hidden_in_steps(record: &RunRecord, name: &str) -> bool {
    of(record).is_some_and(|k| k.hidden().iter().any(|h| h.hides(name, record)))
}

/// The breakdown tables of a record that have rows, titled, in a kind's words.
pub fn breakdowns(record: &RunRecord, words: Words) -> Vec<(String, Table)> {
    breakdown::tables(record, words)
        .into_iter()
        .map(|(title, t)| (title.to_string(), t))
        .collect()
}

/// A record's kind, if this perflab knows it (a record from a newer one may name another).
pub fn of(record: &RunRecord) -> Option<&'static dyn Kind> {
    by_name(&record.workload)
}

/// A record's own tables: its kind's, or the breakdowns for a kind this perflab does not know.
pub fn tables_of(record: &RunRecord) -> Vec<(String, Table)> {
    match of(record) {
        Some(kind) => kind.tables(record),
        None => breakdowns(record, TRANSACTIONS),
    }
}

/// Why a saved run counts as failed, if it does: a run stopped by an error (its status, with
/// the step or the prepare it stopped in), or a finished run its kind's rule fails
/// ([`Kind::failure`]). The one rule a kind's command, a suite's entry and a study's leg
/// are all judged by, whether the run has just ended or is read back from the archive.
pub fn failure_of(record: &RunRecord) -> Option<String> {
    if record.status == crate::record::Status::Failed {
        let (at, why) = match &record.cut_short {
            Some(c) if c.phase == "prepare" => ("prepare".to_string(), c.reason.as_str()),
            Some(c) => (
                format!("step {}", crate::record::step_number(c.step)),
                c.reason.as_str(),
            ),
            None => ("a step".to_string(), "see its warnings"),
        };
        return Some(format!("{at} failed: {why} (run {})", record.id));
    }
    of(record).and_then(|k| k.failure(record))
}

/// The default of [`Kind::execute`]: the run `kind.spec` gives, if any.
pub fn run_spec<K: Kind + ?Sized>(
    kind: &K,
    args: &ArgMatches,
    host: &dyn Host,
) -> Result<(), AppError> {
    let env = Environment::collect();
    match kind.spec(args, &env)? {
        Some(spec) => host.run(&spec, env, true).map(|_| ()),
        None => Ok(()),
    }
}

/// A kind's arguments, read from the matches of its subcommand.
pub fn args<T: clap::FromArgMatches>(matches: &ArgMatches) -> Result<T, AppError> {
    T::from_arg_matches(matches).map_err(|e| AppError::Usage(e.to_string()))
}

/// A kind's arguments from a command line that follows its name (`["--kernel", "triad"]`),
/// parsed as its subcommand parses them.
pub fn parse<T: clap::FromArgMatches>(kind: &dyn Kind, argv: &[&str]) -> Result<T, AppError> {
    let matches = kind
        .command()
        .try_get_matches_from(std::iter::once(kind.name()).chain(argv.iter().copied()))
        .map_err(|e| AppError::Usage(e.to_string()))?;
    args(&matches)
}

/// `clap::Command::new(name).about(about)` with the arguments `T` declares.
pub fn subcommand<T: clap::Args>(name: &'static str, about: &'static str) -> clap::Command {
    // After the arguments: their structs' doc comments would otherwise be the about line.
    T::augment_args(clap::Command::new(name))
        .about(about)
        .long_about(None)
}

/// Every kind, in the order `perflab --help` lists their commands and `perflab targets`
/// their targets.
pub static KINDS: &[&dyn Kind] = &[
    &super::memory::KIND,
    &super::cpu::KIND,
    &super::io::KIND,
    &super::oltp::KIND,
    &super::kv::KIND,
    &super::mail::KIND,
    &super::scan::KIND,
    &super::olap::KIND,
    &super::jobs::KIND,
    &super::null::KIND,
];

/// The kind whose subcommand is `name`.
pub fn by_command(name: &str) -> Option<&'static dyn Kind> {
    KINDS.iter().copied().find(|k| k.name() == name)
}

/// The kind a record's `workload` names.
pub fn by_name(name: &str) -> Option<&'static dyn Kind> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name() == name || k.aliases().contains(&name))
}

/// What a record's workers are called: `threads` unless its kind says otherwise.
pub fn workers_of(record: &RunRecord) -> &'static str {
    by_name(&record.workload).map_or("threads", |k| k.workers())
}

/// A run's `threads=` label in the words of its kind (`copies=4`).
pub fn label_in_kind(record: &RunRecord, label: &str) -> String {
    match workers_of(record) {
        "threads" => label.to_string(),
        workers => label.replace("threads=", &format!("{workers}=")),
    }
}

/// Each target with the kinds that measure it, in [`KINDS`] order.
pub fn targets() -> Vec<(&'static TargetEntry, Vec<&'static str>)> {
    let mut out: Vec<(&'static TargetEntry, Vec<&'static str>)> = Vec::new();
    for kind in KINDS {
        for t in kind.targets() {
            match out.iter_mut().find(|(seen, _)| seen.name == t.name) {
                Some((_, kinds)) => kinds.push(kind.name()),
                None => out.push((t, vec![kind.name()])),
            }
        }
    }
    out
}

/// Ops where the engine gave a wrong answer (a scan's or a query's check): counted by kind
/// since schema 2; in older records, the errors of trials whose samples say so.
pub fn wrong_answers(record: &RunRecord) -> u64 {
    record
        .steps
        .iter()
        .flat_map(|s| &s.trials)
        .map(|t| match t.errors_by_kind.is_empty() {
            false => t
                .errors_by_kind
                .get(crate::record::ErrorKind::WrongAnswer.as_str())
                .copied()
                .unwrap_or(0),
            true if t.error_samples.iter().any(|e| e.contains("wrong answer")) => t.errors,
            true => 0,
        })
        .sum()
}

/// The count of the steps' warnings with `code`, for failure rules.
pub fn warnings_with(record: &RunRecord, code: &str) -> usize {
    record.warnings.iter().filter(|w| w.code == code).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_its_names_and_lists_targets() {
        for k in KINDS {
            assert!(by_name(k.name()).is_some_and(|f| f.name() == k.name()));
            assert!(!k.targets().is_empty(), "{} lists no target", k.name());
        }
        assert_eq!(by_name("io_surface").map(|k| k.name()), Some("io"));
        assert!(by_name("nothing").is_none());
        let names: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn shared_targets_are_listed_once_with_every_kind() {
        let all = targets();
        let sqlite = all
            .iter()
            .find(|(t, _)| t.name.starts_with("sqlite://"))
            .expect("sqlite is a target");
        assert_eq!(sqlite.1, ["oltp", "scan", "olap"]);
        assert_eq!(all.first().map(|(t, _)| t.name), Some("memory"));
        assert_eq!(all.last().map(|(t, _)| t.name), Some("null"));
    }

    #[test]
    fn labels_speak_the_kinds_words() {
        let r = RunRecord {
            workload: "jobs".into(),
            ..Default::default()
        };
        assert_eq!(label_in_kind(&r, "threads=4"), "copies=4");
        let r = RunRecord {
            workload: "oltp".into(),
            ..Default::default()
        };
        assert_eq!(label_in_kind(&r, "threads=4 scale=2"), "clients=4 scale=2");
        let r = RunRecord {
            workload: "memory".into(),
            ..Default::default()
        };
        assert_eq!(label_in_kind(&r, "threads=4"), "threads=4");
    }

    #[test]
    fn kinds_declare_their_load_axes_and_the_figures_the_steps_table_leaves_out() {
        let io = RunRecord {
            workload: "io".into(),
            ..Default::default()
        };
        assert!(axes_of(&io).is_load("iodepth") && axes_of(&io).is_concurrency("files"));
        let memory = RunRecord {
            workload: "memory".into(),
            ..Default::default()
        };
        assert!(!axes_of(&memory).is_load("iodepth"));
        assert!(axes_of(&memory).is_load("rate") && !axes_of(&memory).is_concurrency("rate"));

        let jobs = RunRecord {
            workload: "jobs".into(),
            ..Default::default()
        };
        assert!(hidden_in_steps(&jobs, "copy_1_cpu_ns"));
        assert!(!hidden_in_steps(&jobs, "jobs_per_hour"));

        let trial = |retries: f64| crate::record::Trial {
            figures: [("retries_per_client".to_string(), retries)].into(),
            ..Default::default()
        };
        let oltp = |retries: f64| RunRecord {
            workload: "oltp".into(),
            steps: vec![crate::record::StepResult {
                trials: vec![trial(retries)],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(hidden_in_steps(&oltp(0.0), "retries_per_client"));
        assert!(!hidden_in_steps(&oltp(2.0), "retries_per_client"));
        // Another kind's figure of that name is its own business.
        assert!(!hidden_in_steps(&memory, "retries_per_client"));
    }
}
