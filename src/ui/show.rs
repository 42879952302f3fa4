//! A record as text for people (`perflab show`): a header, one row per step, the kind's own
//! tables, resources, load levels, the sweep's analysis, checks, warnings; the run list; the
//! target list. The tables and lines are `crate::view`'s, which reports show too; this lays
//! them out for a terminal.

use crate::archive::RunSummary;
use crate::present::table::Table;
use crate::record::RunRecord;
use crate::view::about::{cluster_line, cut_short_line, describe_spec};
use crate::view::checks::check_lines;
use crate::view::findings::findings;
use crate::view::steps::steps_table;
use crate::view::{levels, resources};
use crate::vocab::numbers::metric;
use crate::workload::kind;

/// The whole record.
pub fn render(r: &RunRecord) -> String {
    render_tagged(r, &[])
}

/// The whole record, with the tags that name it: what ran (the command as given, the
/// settings that define it), then its figures.
pub fn render_tagged(r: &RunRecord, tags: &[&str]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "run {}  {}  {}  started {}{}\n",
        r.id,
        r.workload,
        r.status.as_str(),
        r.started_at,
        match tags {
            [] => String::new(),
            t => format!("  tags {}", t.join(", ")),
        }
    ));
    if !r.command.is_empty() {
        out.push_str(&format!("command {}\n", r.command.join(" ")));
    }
    out.push_str(&format!(
        "target {}  ·  {}\n",
        r.target,
        describe_spec(&r.spec)
    ));
    if !r.settings.is_empty() {
        out.push_str(&format!(
            "settings {}\n",
            crate::record::settings_line(&r.settings)
        ));
    }
    if let Some(line) = cluster_line(r) {
        out.push_str(&format!("{line}\n"));
    }
    if r.steps.is_empty() {
        out.push_str("\nno step finished\n");
    } else {
        out.push('\n');
        out.push_str(&steps_table(r).render());
        // The kind's own tables (breakdowns, copies, quality of service) and findings.
        for (title, t) in kind::tables_of(r) {
            out.push_str(&format!("\n{title}:\n"));
            out.push_str(&t.render());
        }
        let own = kind::of(r).map(|k| k.findings(r)).unwrap_or_default();
        if !own.is_empty() {
            out.push('\n');
        }
        for line in own {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&resources_text(r));
        out.push_str(&levels_text(r));
        out.push_str(&analysis_lines(r));
        let checks = check_lines(r);
        if !checks.is_empty() {
            out.push('\n');
            for l in checks {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    if let Some(c) = &r.cut_short {
        out.push_str(&format!("{}\n", cut_short_line(c)));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {}\n", w.message));
    }
    out
}

/// The resources table and the limit lines, or nothing for a record without the sampler's
/// figures.
fn resources_text(r: &RunRecord) -> String {
    let Some((t, limits)) = resources::table(r) else {
        return String::new();
    };
    let mut out = format!("\n{}:\n", resources::TITLE);
    out.push_str(&t.render());
    for l in limits {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The load-level table and its overall line, or nothing for a run without load levels.
fn levels_text(r: &RunRecord) -> String {
    let Some((title, t, overall)) = levels::table(r) else {
        return String::new();
    };
    format!("\n{title}:\n{}{overall}\n", t.render())
}

/// What the sweep shows, in words, below the table.
fn analysis_lines(r: &RunRecord) -> String {
    let Some(a) = &r.analysis else {
        return String::new();
    };
    let lines = findings(r, a);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n");
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// `perflab runs`, with each run's tags.
pub fn render_runs(runs: &[RunSummary], tags: &crate::archive::tags::Tags) -> String {
    // A host column once the archive holds runs of more than one machine (imported ones);
    // a host name two machines share gets the machine's digest beside it.
    let machines: std::collections::BTreeSet<(&str, Option<&str>)> = runs
        .iter()
        .map(|r| (r.host.as_str(), r.machine.as_deref()))
        .collect();
    let shared = |host: &str| machines.iter().filter(|(h, _)| *h == host).count() > 1;
    let hosts = machines.len() > 1;
    let mut head = vec![
        "id", "started", "workload", "status", "steps", "peak", "suite", "tags",
    ];
    if hosts {
        head.push("host");
    }
    // Last, as it is the widest: what each run ran, so that runs of one kind tell apart.
    head.push("settings");
    let mut t = Table::new(head.into_iter().map(String::from).collect());
    for r in runs {
        let host = match (&r.machine, shared(&r.host)) {
            (Some(m), true) => format!("{} ({})", r.host, m.get(..6).unwrap_or(m)),
            _ => r.host.clone(),
        };
        let mut row = vec![
            r.id.clone(),
            r.started_at
                .get(..19)
                .unwrap_or(&r.started_at)
                .replace('T', " "),
            r.workload.clone(),
            r.status.clone(),
            r.steps.to_string(),
            r.peak_value
                .map(|v| metric(&r.peak_metric, v))
                .unwrap_or_else(|| "-".into()),
            r.suite.clone().unwrap_or_default(),
            tags.iter()
                .filter(|(_, id)| **id == r.id)
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ];
        if hosts {
            row.push(host);
        }
        row.push(r.settings.clone());
        t.row(row);
    }
    t.render()
}

/// One line of `perflab targets`: a target and the commands that measure it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TargetRow {
    /// How it is named on the command line (`memory`, `postgres://...`).
    pub name: &'static str,
    /// The commands that measure it.
    pub workloads: Vec<&'static str>,
    pub description: &'static str,
    /// Whether this build can use it now.
    pub available: bool,
}

/// `perflab targets`.
pub fn render_targets(targets: &[TargetRow]) -> String {
    let mut t = Table::new(
        ["target", "commands", "available", "what"]
            .map(String::from)
            .to_vec(),
    );
    for x in targets {
        t.row(vec![
            x.name.to_string(),
            x.workloads.join(", "),
            if x.available { "yes" } else { "no" }.to_string(),
            x.description.to_string(),
        ]);
    }
    t.render()
}
