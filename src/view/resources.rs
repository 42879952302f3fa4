//! The resources table of a record: what the machine did over each step's measure phase
//! (the sampler's summary, a row per repeat when steps repeat), and one line per step saying
//! what limited it (its first repeat).

use crate::env::resources::ResourceSummary;
use crate::present::table::Table;
use crate::record::{RunRecord, step_number};
use crate::vocab::numbers::{bytes_per_sec, count, rate, sig3};

/// The table's title.
pub const TITLE: &str = "resources over each measure phase (busy, user, sys, iowait, steal, perflab's own CPU: % of all CPUs)";

/// One row per step and repeat, and one line per step saying what limited it (its first
/// repeat).
pub fn table(r: &RunRecord) -> Option<(Table, Vec<String>)> {
    let every: Vec<(usize, usize, &ResourceSummary)> = r
        .steps
        .iter()
        .flat_map(|s| {
            s.trials
                .iter()
                .enumerate()
                .filter_map(move |(k, t)| Some((s.index, k, t.resources.summary.as_ref()?)))
        })
        .collect();
    if every.is_empty() {
        return None;
    }
    let repeats = every.iter().any(|(_, k, _)| *k > 0);
    // The limit lines speak of each step's first repeat.
    let rows: Vec<(usize, &ResourceSummary)> = every
        .iter()
        .filter(|(_, k, _)| *k == 0)
        .map(|(i, _, s)| (*i, *s))
        .collect();
    // perflab's own CPU on the base of every other column: all CPUs.
    let cpus = r.env.cpu.logical_cpus.unwrap_or(1).max(1) as f64;
    let watts = rows.iter().any(|(_, s)| s.watts.is_some());
    let mut head: Vec<String> = [
        "step",
        "repeat",
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
    if !repeats {
        head.remove(1);
    }
    if watts {
        head.push("watts".into());
    }
    let mut t = Table::new(head);
    let pct = |v: f64| format!("{v:.1}%");
    for (index, repeat, s) in &every {
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
        let mut row = vec![step_number(*index).to_string()];
        if repeats {
            // Counted from 1 for people, as steps are (the record's trials keep 0-based
            // `repeat` fields).
            row.push((repeat + 1).to_string());
        }
        row.extend([
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
            pct(s.process_cpu_pct / cpus),
        ]);
        if watts {
            row.push(s.watts.map_or("-".into(), |w| format!("{w:.1}")));
        }
        t.row(row);
    }
    // Steps too short to judge say so once, together, rather than one line each (an
    // IOzone surface has dozens of millisecond steps).
    let short = |s: &ResourceSummary| s.limit.starts_with("too short");
    let mut limits: Vec<String> = rows
        .iter()
        .filter(|(_, s)| !short(s))
        .map(|(index, s)| format!("step {}: {}", step_number(*index), s.limit))
        .collect();
    let too_short: Vec<usize> = rows
        .iter()
        .filter(|(_, s)| short(s))
        .map(|(index, _)| *index)
        .collect();
    match too_short.as_slice() {
        [] => {}
        [one] => limits.push(format!(
            "step {}: {}",
            step_number(*one),
            rows.iter().find(|(i, _)| i == one).map_or("", |(_, s)| s.limit.as_str())
        )),
        many => limits.push(format!(
            "steps {}: too short to tell what limited them (under {} ms each; the kernel counts CPU time in 10 ms ticks)",
            ranges(&many.iter().map(|i| step_number(*i)).collect::<Vec<_>>()),
            crate::env::resources::SHORTEST_JUDGED.as_millis()
        )),
    }
    Some((t, limits))
}

/// `1-7, 10, 12-13`: step numbers (as people read them) as ranges.
fn ranges(steps: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let mut j = i;
        while j + 1 < steps.len() && steps[j + 1] == steps[j] + 1 {
            j += 1;
        }
        out.push(match j > i {
            true => format!("{}-{}", steps[i], steps[j]),
            false => steps[i].to_string(),
        });
        i = j + 1;
    }
    out.join(", ")
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
    format!("{} {}", sig3(v), units[i])
}

#[cfg(test)]
mod tests {
    use crate::env::resources::ResourceSummary;
    use crate::record::{Resources, RunRecord, StepResult, Trial};

    #[test]
    fn repeats_count_from_one_as_steps_do() {
        let trial = |repeat: u32| Trial {
            repeat,
            resources: Resources {
                summary: Some(ResourceSummary::default()),
                ..Default::default()
            },
            ..Default::default()
        };
        let record = RunRecord {
            steps: vec![StepResult {
                index: 0,
                trials: vec![trial(0), trial(1)],
                ..Default::default()
            }],
            ..Default::default()
        };
        let (t, _) = super::table(&record).expect("a table");
        let text = t.render();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().take(2).collect())
            .collect();
        assert_eq!(rows, [["1", "1"], ["1", "2"]], "{text}");
    }

    #[test]
    fn step_numbers_read_as_ranges() {
        assert_eq!(super::ranges(&[0, 1, 2, 3, 5, 7, 8]), "0-3, 5, 7-8");
        assert_eq!(super::ranges(&[4]), "4");
    }
}
