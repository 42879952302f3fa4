//! The resources table of a record: what the machine did over each step's measure phase
//! (the sampler's summary, first repeat), and one line per step saying what limited it.

use super::format::{bytes_per_sec, count, rate};
use crate::env::resources::ResourceSummary;
use crate::present::table::Table;
use crate::record::RunRecord;

/// The table's title.
pub const TITLE: &str = "resources over each measure phase (busy, user, sys, iowait, steal: % of all CPUs; perflab: % of one CPU)";

/// The table and the limit lines, or nothing for a record without the sampler's figures.
pub fn render(r: &RunRecord) -> String {
    let Some((t, limits)) = table(r) else {
        return String::new();
    };
    let mut out = format!("\n{TITLE}:\n");
    out.push_str(&t.render());
    for l in limits {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// One row per step (its first repeat) and one line per step saying what limited it.
pub fn table(r: &RunRecord) -> Option<(Table, Vec<String>)> {
    let rows: Vec<(usize, &ResourceSummary)> = r
        .steps
        .iter()
        .filter_map(|s| Some((s.index, s.trials.first()?.resources.summary.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let watts = rows.iter().any(|(_, s)| s.watts.is_some());
    let mut head: Vec<String> = [
        "step",
        "busy",
        "user",
        "sys",
        "iowait",
        "steal",
        "busiest",
        "ctx/s",
        "runq",
        "mem used",
        "faults/s",
        "major/s",
        "net in",
        "net out",
        "disk IO/s",
        "util",
        "perflab",
    ]
    .map(String::from)
    .to_vec();
    if watts {
        head.push("watts".into());
    }
    let mut t = Table::new(head);
    let pct = |v: f64| format!("{v:.1}%");
    for (index, s) in &rows {
        let (rx, tx) = s.net.iter().fold((0.0, 0.0), |(a, b), n| {
            (a + n.rx_bytes_per_sec, b + n.tx_bytes_per_sec)
        });
        let io = s.disks.iter().fold(0.0, |a, d| {
            a + d.activity.reads_per_sec + d.activity.writes_per_sec
        });
        let util = s
            .disks
            .iter()
            .map(|d| d.activity.utilisation)
            .fold(None, |a: Option<f64>, u| Some(a.map_or(u, |a| a.max(u))));
        let mut row = vec![
            index.to_string(),
            pct(s.cpu.busy()),
            pct(s.cpu.user),
            pct(s.cpu.system + s.cpu.irq + s.cpu.softirq),
            pct(s.cpu.iowait),
            pct(s.cpu.steal),
            format!("cpu{} {:.0}%", s.busiest_cpu, s.busiest_cpu_pct),
            rate(s.context_switches_per_sec),
            format!("{:.1}", s.procs_running),
            memory(s.mem_used_bytes),
            count(s.page_faults_per_sec),
            count(s.major_faults_per_sec),
            bytes_per_sec(rx),
            bytes_per_sec(tx),
            count(io),
            util.map_or("-".into(), |u| format!("{:.0}%", u * 100.0)),
            format!("{:.0}%", s.process_cpu_pct),
        ];
        if watts {
            row.push(s.watts.map_or("-".into(), |w| format!("{w:.1}")));
        }
        t.row(row);
    }
    let limits = rows
        .iter()
        .map(|(index, s)| format!("step {index}: {}", s.limit))
        .collect();
    Some((t, limits))
}

/// `1.23 GiB`: memory in binary units, as `free -h`.
fn memory(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{} {}", super::format::sig3(v), units[i])
}
