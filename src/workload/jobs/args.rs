//! `perflab jobs`: its command-line arguments (clap), beside the shared ones.

use clap::Args;

/// `perflab jobs`: only the shared options that mean something for steps of fixed work.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// The job: a program and its arguments, split as a shell splits words ('...', "...",
    /// backslashes) but run without a shell; repeat for a mixed batch (alias --job, which a
    /// study file writes `job = ...`, its `command` being the perflab command)
    #[arg(long, visible_alias = "job", value_name = "CMD ARGS")]
    pub command: Vec<String>,
    /// Run each --command through `sh -c` (pipes, redirections, loops)
    #[arg(long)]
    pub shell: bool,
    /// Each command's share of a mixed batch, in --command order, e.g. 3,1 (default: equal)
    #[arg(long, value_name = "W,..")]
    pub weights: Option<String>,
    /// Each command's short name (its op kind), in --command order (default: the program's
    /// name, or with --shell the script's first word); alias --job-name (a study leg's
    /// `name` is its own)
    #[arg(long, visible_alias = "job-name", value_name = "NAME,..")]
    pub name: Option<String>,
    /// Copies running at once (the batch's slots); sweeps, e.g. 1,2,4,8 (default: 1 and one
    /// per CPU)
    #[arg(long, value_name = "N|SWEEP")]
    pub copies: Option<String>,
    /// A batch of N jobs through the copies, each copy taking the next job when its last one
    /// ends; the step's time is the time to finish the batch (default: one job per copy)
    #[arg(long, value_name = "N")]
    pub jobs: Option<String>,
    /// Pin each copy to one CPU: compact (fill a NUMA node and its cores' SMT siblings first)
    /// or spread (round-robin over nodes, physical cores before siblings); none: not pinned.
    /// Sweeps: compact,spread runs each copy count both ways (ECLIPSE's study)
    #[arg(long, value_name = "none|compact|spread,..", default_value = "none")]
    pub placement: String,
    /// Run each step N times; steps report mean and 95% confidence interval
    #[arg(long, value_name = "N", default_value = "1")]
    pub repeat: String,
    /// Seed of the order of a mixed batch
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,
    /// Length of one point of the per-step time series
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Read the machine's counters every interval (and perflab's own CPU); off only to
    /// measure the sampler's own cost
    #[arg(long, value_enum, default_value = "on", value_name = "on|off")]
    pub resources: crate::vocab::Switch,
}
