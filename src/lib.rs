//! perflab: a performance workbench that draws curves of throughput and response time
//! against concurrency, finds the peak and the sweet spot, and archives every run.
//!
//! # Map
//!
//! ```text
//! cli ──► commands ──► spec::RunSpec ──► run::run ──► for each step: run::trial
//!  (clap)   (validate,                     (sweep,        workers { pacer ► Session::execute
//!            defaults                       record,                  ► record::Recorder }
//!            from env)                      archive)      merge ► record::Trial
//!                                               │
//!                                               ▼
//!                              archive (run.json + SQLite index) ──► ui / export
//! ```
//!
//! - [`cli`]: clap definitions only.
//! - [`commands`]: one file per command; turns arguments into a validated [`spec::RunSpec`].
//! - [`spec`]: the run specification, units and sweep syntax.
//! - [`workload`]: what ops are issued (null, memory, cpu, io); one [`workload::Session`] per
//!   worker, or a [`workload::QueuedSession`] keeping several I/Os in flight.
//! - [`engine`]: storage engines (io_uring, sync) and the few system calls std lacks.
//! - [`target`]: the registry of systems under test, for `perflab targets`.
//! - [`run`]: the sweep, trials, worker threads, load models, Ctrl-C.
//! - [`record`]: the record type, HDR histograms, per-worker recorders, time series.
//! - [`stats`]: estimates with confidence intervals; peak, sweet spot, scaling; curves, USL
//!   fits and knees; comparison statistics; steady state.
//! - [`cluster`]: scale-out over MPI: ranks meeting at every phase, their trials merged
//!   exactly on rank 0.
//! - [`env`]: the machine's disclosure, CPU-time sampling, block devices and write hazards.
//! - [`archive`]: saving, listing and loading records.
//! - [`export`]: one file per output format.
//! - [`report`]: records as self-contained HTML (or Markdown + SVG): curves, hockey sticks,
//!   time series, latency spectra, heatmaps, the landscape of several runs.
//! - [`compare`]: runs set side by side, step by step: ratios, verdicts, what else differed.
//! - [`ui`]: progress, tables, the balance sheet, warnings.
//! - [`suite`]: named lists of runs (`perflab run`).
//!
//! Only [`engine`] (storage I/O: io_uring, aligned buffers, a few system calls) may use
//! `unsafe`; each block there says why it is sound.

#![deny(unsafe_code)]

pub mod analysis;
pub mod archive;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod compare;
pub mod engine;
pub mod env;
pub mod export;
pub mod record;
pub mod report;
pub mod run;
pub mod spec;
pub mod sql;
pub mod stats;
pub mod stop;
pub mod suite;
pub mod target;
pub mod ui;
pub mod workload;

pub use commands::{AppError, main_with_args};
