//! The breakdowns of a step: its figures by group of ops (transaction type, cache command,
//! mail session kind), by command, by a script's command, by shard, by MPI rank, by direction, block size and file
//! (storage), and what the block devices themselves counted over the same time. Every kind
//! with groups uses them, in its own words ([`Words`]).

use super::table::Table;
use crate::record::{GroupResult, RunRecord, step_number};
use crate::vocab::numbers::{bytes_per_sec, ns, rate, sig3};

/// What a kind calls its groups of ops and their rates.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// The title of the groups' table.
    pub title: &'static str,
    /// What a group of ops is (`type`, `command`, `session`).
    pub group: &'static str,
    /// The unit of a group's rate (`tx/s`, `req/s`, `sessions/s`).
    pub group_rate: &'static str,
    /// The unit of a shard's rate.
    pub shard_rate: &'static str,
}

/// Transactions by type: OLTP's words, and the default.
pub const TRANSACTIONS: Words = Words {
    title: "by transaction type (response times)",
    group: "type",
    group_rate: "tx/s",
    shard_rate: "tx/s",
};

/// The breakdown tables that have rows, each with its title.
pub fn tables(r: &RunRecord, words: Words) -> Vec<(&'static str, Table)> {
    let mut groups = Table::new(
        [
            "step", "group", "IO/s", "bytes/s", "mean", "p50", "p99", "max", "errors", "",
        ]
        .map(String::from)
        .to_vec(),
    );
    // Response times by group (transaction type, cache command, mail session) and by shard,
    // where a step had several; mail's commands are groups of their own.
    let mut kinds = breakdown_table(words.group, words.group_rate);
    let mut commands = breakdown_table("command", "cmd/s");
    let mut statements = breakdown_table("statement", "stmt/s");
    let mut shards = breakdown_table("shard", words.shard_rate);
    let mut ranks = breakdown_table("rank", "ops/s");
    let mut devices = Table::new(
        [
            "step",
            "device",
            "reads/s",
            "writes/s",
            "read/s",
            "written/s",
            "queue",
            "util",
            "flushes/s",
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &r.steps {
        // The first trial stands for the step; repeats have the same groups.
        let Some(t) = s.trials.first() else { continue };
        breakdown_rows(&mut kinds, s.index, &t.groups, "kind");
        breakdown_rows(&mut shards, s.index, &t.groups, "shard");
        breakdown_rows(&mut ranks, s.index, &t.groups, "rank");
        breakdown_rows(&mut commands, s.index, &t.groups, "command");
        breakdown_rows(&mut statements, s.index, &t.groups, "statement");
        let mut shown: Vec<&GroupResult> = Vec::new();
        for g in t.groups.iter().filter(|g| {
            !matches!(
                g.by.as_str(),
                "kind" | "shard" | "rank" | "command" | "statement"
            )
        }) {
            // A group with the very figures of one above says nothing new.
            if shown.iter().any(|s| s.same_figures(g)) {
                continue;
            }
            shown.push(g);
            groups.row(vec![
                step_number(s.index).to_string(),
                match g.by.as_str() {
                    "file" => format!("file {}", g.label),
                    "block_size" => format!("bs {}", g.label),
                    _ => g.label.clone(),
                },
                rate(g.ops_per_sec),
                bytes_per_sec(g.bytes_per_sec),
                timed(&g.latency, g.latency.mean_ns),
                timed(&g.latency, g.latency.p50_ns as f64),
                timed(&g.latency, g.latency.p99_ns as f64),
                timed(&g.latency, g.latency.max_ns as f64),
                g.errors.to_string(),
                if g.straggler { "STRAGGLER" } else { "" }.into(),
            ]);
        }
        for d in &t.devices {
            let a = &d.activity;
            devices.row(vec![
                step_number(s.index).to_string(),
                d.name.clone(),
                rate(a.reads_per_sec),
                rate(a.writes_per_sec),
                bytes_per_sec(a.read_bytes_per_sec),
                bytes_per_sec(a.write_bytes_per_sec),
                sig3(a.avg_queue),
                format!("{:.0}%", a.utilisation * 100.0),
                rate(a.flushes_per_sec),
            ]);
        }
    }
    [
        (words.title, kinds),
        ("by command (response times)", commands),
        ("by script command (each one's own latency)", statements),
        ("by shard (response times)", shards),
        ("by MPI rank (response times)", ranks),
        ("by direction, block size and file", groups),
        (
            "the devices' own counters (/proc/diskstats) over each measure phase",
            devices,
        ),
    ]
    .into_iter()
    .filter(|(_, t)| !t.is_empty())
    .collect()
}

fn breakdown_table(what: &str, rate: &str) -> Table {
    Table::new(
        [
            "step", what, rate, "share", "mean", "p50", "p90", "p99", "p99.9", "max", "errors",
        ]
        .map(String::from)
        .to_vec(),
    )
}

/// One row per group of `by` in a step (by its index), when the step has more than one such
/// group.
fn breakdown_rows(table: &mut Table, step: usize, groups: &[GroupResult], by: &str) {
    let mut ours: Vec<&GroupResult> = groups.iter().filter(|g| g.by == by).collect();
    // The order a worker first saw them in is chance: by name, so steps read alike.
    ours.sort_by_key(|g| (g.key.parse::<u64>().ok(), g.key.clone()));
    if ours.len() < 2 {
        return;
    }
    let all = ours.iter().fold(0u64, |a, g| a.saturating_add(g.ops));
    for g in ours {
        let l = &g.latency;
        let row = vec![
            step_number(step).to_string(),
            g.label.clone(),
            rate(g.ops_per_sec),
            format!("{:.1}%", 100.0 * g.ops as f64 / all.max(1) as f64),
            timed(l, l.mean_ns),
            timed(l, l.p50_ns as f64),
            timed(l, l.p90_ns as f64),
            timed(l, l.p99_ns as f64),
            timed(l, l.p999_ns as f64),
            timed(l, l.max_ns as f64),
            g.errors.to_string(),
        ];
        table.row(row);
    }
}

/// A latency cell: `-` for a group whose ops were not timed one by one (no samples: fio's
/// `gtod_reduce`), never a zero it did not measure.
fn timed(l: &crate::record::LatencySummary, v: f64) -> String {
    if l.count == 0 { "-".into() } else { ns(v) }
}
