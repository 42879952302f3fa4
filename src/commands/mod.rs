//! The generic commands, one file each; a workload kind's command goes to the kind
//! (`crate::workload::kind`) through the one path every run takes (`crate::launch`). Each file
//! reads its command's arguments, calls one function below, and prints; none imports
//! another's (what several share is in [`shared`]). [`main_with_args`] parses, dispatches, and turns any error into one
//! line on stderr and an exit code: 0 done, 1 the run failed, 2 bad usage or refused,
//! 3 a comparison found a regression (`--fail-on regression`), 130 interrupted. A panic (a
//! bug) is one line too, with its details in a file ([`crash`]).

mod archive_cmds;
mod compare_cmd;
pub mod crash;
mod info;
mod report_cmd;
mod serve_cmd;
mod shared;
mod shared_cmd;
mod study_cmd;
mod suite_cmd;
mod trend_cmd;

use crate::cli::{Command, Invocation, What};
use crate::cluster::Ending;
use crate::env::Environment;
pub use crate::error::{AppError, EXIT_REGRESSION};
use crate::run::RunError;
use std::ffi::OsString;
use std::process::ExitCode;

/// The whole program, from arguments to exit code.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    crash::install();
    // For tests only: PERFLAB_TEST_PANIC=main panics here, through the hook just installed.
    crash::test_panic();
    let cli = match crate::cli::parse(args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    // How peers' flags were read, before anything runs; every rank read the same line.
    if crate::env::launcher::launcher_rank() == 0 {
        for note in &cli.notes {
            eprintln!("perflab: note: {note}");
        }
    }
    // Before any thread starts: MPI's threads and ours must not race its initialization.
    if let Err(e) = crate::cluster::init(crate::run::interrupt::token()) {
        // Every rank would say the same: the first speaks.
        if crate::env::launcher::launcher_rank() == 0 {
            eprintln!("perflab: {e}");
        }
        return ExitCode::from(2);
    }
    let (code, ending) = match dispatch(cli) {
        Ok(()) => (0, Ending::Together),
        Err(AppError::Output(m)) if m.contains("Broken pipe") => (0, Ending::Together),
        Err(e) => {
            let ending = ending(&e);
            // Rank 0 speaks for an MPI run; another rank speaks only of its own failures
            // (the ones all ranks agreed on carry its number in rank 0's message).
            if crate::cluster::is_root() || ending == Ending::Alone {
                eprintln!("perflab: {}{e}", rank_prefix());
            }
            (e.exit_code(), ending)
        }
    };
    // The cancels a Ctrl-C set off go out before the process ends with their threads.
    crate::sql::cancel::settle(std::time::Duration::from_secs(1));
    crate::cluster::finish(code, ending);
    ExitCode::from(code)
}

/// `rank N (host): ` on ranks other than 0 of an MPI run.
fn rank_prefix() -> String {
    match crate::cluster::is_root() {
        true => String::new(),
        false => format!(
            "rank {} ({}): ",
            crate::cluster::rank(),
            crate::cluster::host()
        ),
    }
}

/// How an error ends this rank's part of an MPI job: a failed step is one every rank
/// agreed on, and a refused workload one every rank refused alike; the rest may have
/// happened here alone (a path missing on this host only), while the others wait.
fn ending(e: &AppError) -> Ending {
    match e {
        AppError::Run(RunError::Interrupted { .. }) | AppError::Interrupted(_) => {
            Ending::Interrupted
        }
        AppError::Run(RunError::Failed { .. } | RunError::Refused(_)) => Ending::Together,
        _ => Ending::Alone,
    }
}

fn dispatch(cli: Invocation) -> Result<(), AppError> {
    let g = &cli.global;
    if crate::cluster::size() > 1
        && let Some(what) = once_only(&cli.what)
    {
        return Err(AppError::Run(RunError::Refused(format!(
            "{what} is done once, not by every MPI rank: run it without mpirun"
        ))));
    }
    let command = match &cli.what {
        What::Kind(kind, args) => return crate::launch::Launcher::command(g).execute(*kind, args),
        What::Generic(command) => command,
    };
    match command {
        // A study file is told apart by its form (a path, or a name ending in .toml), never
        // by looking for a file of that name.
        Command::Run(args) if args.suite.ends_with(".toml") || args.suite.contains('/') => {
            study_cmd::run_file(g, &args.suite, args.quick, args.io_path.clone())
        }
        Command::Run(args) => suite_cmd::run(g, args),
        Command::Study(args) => study_cmd::study(g, args),
        Command::Runs(args) => archive_cmds::runs(g, args),
        Command::Show(args) => archive_cmds::show(g, args),
        Command::Export(args) => archive_cmds::export(g, args),
        Command::Report(args) => report_cmd::report(g, args),
        Command::Compare(args) => compare_cmd::compare(g, args),
        Command::Tag(args) => archive_cmds::tag(g, args),
        Command::Import(args) => archive_cmds::import(g, args),
        Command::Sysinfo => info::sysinfo(g),
        Command::Targets => info::targets(g),
        Command::Completions(a) => info::completions(a.shell),
        Command::Man => info::man(),
        Command::Serve(args) => serve_cmd::serve(g, args),
        Command::Shared(args) => shared_cmd::shared(g, args),
        Command::Trend(args) => trend_cmd::trend(g, args),
    }
}

/// What a launcher must not start once per rank: the archive's commands, suites, and what a
/// kind says must be done once (the prepare and cleanup of a shared database or cache, which
/// every rank would load or drop).
fn once_only(what: &What) -> Option<&'static str> {
    match what {
        What::Kind(kind, args) => kind.once_only(args),
        What::Generic(Command::Run(_)) => Some("a suite"),
        What::Generic(Command::Study(_)) => Some("a study"),
        What::Generic(_) => Some("this command"),
    }
}

/// The run specification a workload command stands for, read and checked as the command
/// would before running, but without running anything; `None` for the other commands (and
/// for a kind's setup actions). It writes nothing, but it reads the filesystem (io paths,
/// SQLite files) and, for a server `--target`, connects to the server to look at its tables.
pub fn workload_spec(
    what: &What,
    env: &Environment,
) -> Result<Option<crate::workload::RunSpec>, AppError> {
    match what {
        What::Kind(kind, args) => kind.spec(args, env),
        What::Generic(_) => Ok(None),
    }
}

/// clap's errors span several lines; a usage error here is one line (with clap's tip, if any).
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut first = lines
                .next()
                .unwrap_or("bad usage")
                .trim_start_matches("error: ")
                .to_string();
            // "the following required arguments were not provided:" lists them on the next
            // lines; without them the line would not say what to add.
            if first.ends_with(':') {
                let items: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .skip_while(|l| l.is_empty())
                    .skip(1)
                    .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                    .collect();
                if !items.is_empty() {
                    first = format!("{first} {}", items.join(", "));
                }
            }
            let tip = lines
                .find(|l| l.starts_with("tip:"))
                .map(|t| format!("; {}", t.trim_start_matches("tip: ")));
            // Under a launcher every rank parsed the same arguments: the first one speaks.
            if crate::env::launcher::launcher_rank() != 0 {
                return ExitCode::from(2);
            }
            eprintln!(
                "perflab: {first}{} (see 'perflab --help')",
                tip.unwrap_or_default()
            );
            ExitCode::from(2)
        }
    }
}
