//! What a saved record says to people, built once for every renderer: the terminal (`perflab
//! show`, `compare`, the balance sheet, `sysinfo`: `crate::ui`) and the reports
//! (`crate::report`) lay these tables and lines out, each in its own way, and never build them
//! themselves, so a column or a finding reads the same in both.
//!
//! - [`names`]: a step by its swept values (`threads=4`), a figure by its column header.
//! - [`about`]: what ran and how it ended: the spec in words, the ranks under MPI, a run cut
//!   short.
//! - [`steps`]: the steps table, one row per step.
//! - [`findings`]: what the sweep shows: peak, sweet spot, scaling, knees, the USL fit.
//! - [`checks`]: the consistency checks after the steps.
//! - [`resources`]: the machine over each step (the sampler's summary) and what limited it.
//! - [`levels`]: the load-level table of a `--load-levels` run and its findings.
//! - [`compare`]: a comparison: ratios, intervals, verdicts, its rows and tally.
//! - [`balance`]: the balance sheet's line per run.
//! - [`disclosure`]: the machine as headings of `key: value` lines.
//! - [`trend`]: one figure across runs (`perflab trend`): values, intervals, verdicts.
//!
//! It sits above `workload` and `compare`, not in `crate::present`: the steps table and the
//! findings ask the registry (`crate::workload::kind`) for a kind's words and hidden figures,
//! and the comparison's rows are `crate::compare`'s, while `present` sits below the kinds so
//! that they can build their own tables from it. Text tables themselves are
//! `crate::present::table`'s; numbers with units are `crate::vocab::numbers`.

pub mod about;
pub mod balance;
pub mod checks;
pub mod compare;
pub mod disclosure;
pub mod findings;
pub mod levels;
pub mod names;
pub mod resources;
pub mod steps;
pub mod trend;
