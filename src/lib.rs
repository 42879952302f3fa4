//! perflab: a performance workbench that draws curves of throughput and response time
//! against concurrency, finds the peak and the sweet spot, and archives every run.
//!
//! # Map
//!
//! ```text
//! commands ──► launch ──► Kind ──► RunSpec ──► run::run ──► for each step: run::trial
//!  (cli::parse:  (a kind's    (its args,          (sweep,       workers { pacer ► Session::execute
//!   generic +     command, a   validated,          record,                 ► run::recorder }
//!   the kinds')   suite's or   defaults from env)  archive)     merge ► record::Trial
//!                 a study's entry: one path, one exit rule)
//!                                      │
//!                                      ▼
//!                     archive (run.json + SQLite index) ──► ui / export / report / compare
//! ```
//!
//! The modules, from the top layer down (a module imports only from those below it;
//! `docs/architecture.md` declares the order and `tests/layers.rs` keeps it):
//!
//! - [`commands`]: the generic commands, one file each; a kind's command goes to its kind.
//! - [`serve`]: the archive in a browser (`perflab serve`), read-only.
//! - [`suite`]: named lists of runs (`perflab run`).
//! - [`report`]: records as self-contained HTML (or Markdown + SVG): curves, hockey sticks,
//!   time series, latency spectra, heatmaps, the landscape of several runs.
//! - [`study`]: a seed report's experiments as one command, the paper beside this machine.
//! - [`launch`]: the one path every run takes (a kind's command, a suite's entry, a study's
//!   leg): the kind carries it out, each run saved, shown or kept, and judged by one rule.
//! - [`cli`]: the command line: the generic commands and the kinds' subcommands.
//! - [`ui`]: the terminal: progress, `show`, `compare`, the balance sheet, warnings.
//! - [`live`]: a run as it goes: its interval file, `--live` JSON lines, the Prometheus
//!   endpoint, HDR interval logs.
//! - [`view`]: what a saved record's tables and lines say (the steps table, findings,
//!   resources, load levels, a comparison's rows), built once for the terminal and the reports.
//! - [`compare`]: runs set side by side, step by step: ratios, verdicts, what else differed.
//! - [`export`]: one file per output format.
//! - [`run`]: the sweep, trials, worker threads, load models, Ctrl-C.
//! - [`cluster`]: scale-out over MPI: ranks meeting at every phase, their trials merged
//!   exactly on rank 0.
//! - [`workload`]: the registry of kinds and one folder per kind (arguments, spec, setup,
//!   sessions, tables, findings, charts), and [`workload::RunSpec`]: what ops are issued; one
//!   [`workload::Session`] per worker, or a [`workload::QueuedSession`] keeping several ops
//!   in flight.
//! - [`error`]: what a command fails with, and its exit code.
//! - [`present`]: text tables, SVG charts and breakdowns, which the kinds and the renderers
//!   share.
//! - [`shared_store`]: a team's shared results store on PostgreSQL: uploads with their
//!   queue, schema migrations, and the store read as the archive is.
//! - [`sql`]: the SQL clients every SQL workload shares (SQLite, PostgreSQL, MySQL).
//! - [`target`]: URLs, passwords and TLS: what every client of a system under test shares.
//! - [`analysis`]: peak, sweet spot, scaling, curves: statistics applied to a record's steps.
//! - [`archive`]: saving, listing and loading records.
//! - [`vocab`]: the vocabulary of options: sweeps, axes, units, numbers for people, SLOs.
//! - [`record`]: the record's shape: the record type, HDR histograms.
//! - [`stats`]: estimates with confidence intervals, USL fits, knees, comparison statistics,
//!   steady state: pure functions over numbers.
//! - [`http`]: the little HTTP/1.1 the metrics endpoint and `serve` speak.
//! - [`env`]: the machine's disclosure, the sampler, power, block devices, write hazards.
//! - [`engine`]: storage engines (io_uring, sync), epoll, processes and the few system calls
//!   std lacks.
//! - [`stop`]: the stop token every wait watches.
//!
//! Only [`engine`] may use `unsafe`; each block there says why it is sound.

#![deny(unsafe_code)]
#![warn(clippy::too_many_lines)]

pub mod analysis;
pub mod archive;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod compare;
pub mod engine;
pub mod env;
pub mod error;
pub mod export;
pub mod http;
pub mod launch;
pub mod live;
pub mod present;
pub mod record;
pub mod report;
pub mod run;
pub mod serve;
pub mod shared_store;
pub mod sql;
pub mod stats;
pub mod stop;
pub mod study;
pub mod suite;
pub mod target;
pub mod ui;
pub mod view;
pub mod vocab;
pub mod workload;

pub use commands::{AppError, main_with_args};
